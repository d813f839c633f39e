#!/usr/bin/env bash
# Call 2, 4 x H200: cand2 = split-stack + small hole selections in one block (pick_serial_kernel):
# lifecycle_test, distributed_test, memcheck of the selection test; the trace build of cand2 with
# mean / p90 / max per phase; distributed_bench cand2 against call 1's cand (split-stack only).
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
C=.carry
timeout 90 $C/lifecycle_test --gtest_brief=1 >"$R/lifecycle_test.log" 2>&1; echo "lifecycle_test rc $?"; tail -1 "$R/lifecycle_test.log"
timeout 90 $C/distributed_test --gtest_brief=1 >"$R/distributed_test.log" 2>&1; echo "distributed_test rc $?"; tail -1 "$R/distributed_test.log"
timeout 120 compute-sanitizer --tool memcheck --error-exitcode 99 $C/lifecycle_test --gtest_filter='*SelectIndices*' --gtest_brief=1 >"$R/memcheck-select.log" 2>&1; echo "memcheck select rc $?"; tail -1 "$R/memcheck-select.log"
save
timeout 150 $C/db-trace --reps 3 --out "$R/trace.json" >"$R/trace.md" 2>"$R/trace.txt"; echo "trace rc $?"; cat "$R/trace.txt"; grep -A7 "step ms" "$R/trace.md"
save
for v in cand2 cand; do
  timeout 150 $C/db-$v --reps 3 --out "$R/bench4-$v-$SECONDS.json" >"$R/bench4-$v-$SECONDS.md" 2>&1; echo "bench4 $v rc $?"
  save
done
for f in "$R"/bench4-*.md; do echo "== $(basename $f)"; grep "(10.0%)\|(2.0%)" "$f"; grep -A7 "step ms" "$f" | tail -4; done
