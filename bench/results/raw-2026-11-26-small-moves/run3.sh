#!/usr/bin/env bash
# Call 3, 4 x H200: c988f05 (new: split-stack + one-block hole selection) with the steady-state
# weak-scaling benchmark, against c7d6fa1's library with the same benchmark (base), alternated;
# tests, demo on 2 and 4 GPUs, sanitizers over the changed kernels.
set -u
tar -xJf .carryz/carry.tar.xz
nccl_lib=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(nvidia.nccl.__path__[0], "lib"))')
export LD_LIBRARY_PATH="$PWD/.carry/lib:$nccl_lib:${LD_LIBRARY_PATH:-}" NCCL_NVLS_ENABLE=0
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
C=.carry
nvidia-smi --query-gpu=name,driver_version --format=csv > "$R/gpus.txt"
for t in split_by_key_test lifecycle_test distributed_test; do
  timeout 90 $C/$t --gtest_brief=1 >"$R/$t.log" 2>&1; echo "$t rc $? $(tail -1 $R/$t.log)"
done
for g in 2 4; do timeout 40 $C/particles --gpus $g >"$R/demo$g.log" 2>&1; echo "demo $g rc $? $(grep 'bit for bit\|DIFFER' $R/demo$g.log)"; done
save
san() { tool=$1; shift; name=$1; shift; timeout 150 compute-sanitizer --tool $tool --error-exitcode 99 "$@" >"$R/san-$tool-$name.log" 2>&1; echo "$tool $name rc $? $(tail -1 $R/san-$tool-$name.log)"; }
san memcheck distributed $C/distributed_test --gtest_brief=1
for tool in memcheck racecheck synccheck initcheck; do san $tool split $C/split_by_key_test --gtest_brief=1; done
for tool in racecheck synccheck initcheck; do san $tool select $C/lifecycle_test --gtest_filter='*SelectIndices*' --gtest_brief=1; done
save
for v in new base new base; do
  timeout 150 $C/db-$v --reps 3 --out "$R/bench-$v-$SECONDS.json" >"$R/bench-$v-$SECONDS.md" 2>&1; echo "bench $v rc $?"
  save
done
for f in "$R"/bench-*.md; do echo "== $(basename $f)"; grep "(10.0%)\|(2.0%)" "$f"; grep -A7 "step ms" "$f" | tail -4; grep -A4 "split / copy" "$f" | tail -2; done
