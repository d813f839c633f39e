#!/usr/bin/env bash
# Device call: erase_if with byte / 2-byte columns read in 16-byte vectors (counting pass: runs of R
# records per thread; writing pass: narrow columns through shared memory). erase_sweep of
# raw-2026-11-25-erase_if-pass linked against compact.hpp before (old) and after (new), alternated
# twice; strata_bench's memcpy and erase_if rows; lifecycle_test on the GPU and under
# memcheck / racecheck / synccheck / initcheck (compaction tests).
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
export LD_LIBRARY_PATH=$PWD/.ab/lib:${LD_LIBRARY_PATH:-}
R=$OUT/narrow; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
echo "=== lifecycle_test"
timeout 150 .ab/lifecycle_test > "$R/lifecycle.txt" 2>&1; echo "rc $?"; tail -3 "$R/lifecycle.txt"
for round in 1 2; do
  for v in old new; do
    timeout 150 .ab/sweep_$v > "$R/sweep-$v-$round.txt" 2>&1; echo "sweep $v $round rc $?"
  done
done
python3 - "$R" <<'PY'
import re, sys
rows = {}
for f in ["old-1", "new-1", "old-2", "new-2"]:
    for line in open(f"{sys.argv[1]}/sweep-{f}.txt"):
        m = re.match(r"(.+?)\s+\d+ B/record.*removed\s+(\d+)%.*x memcpy ([0-9.]+)\s+(\S+)", line)
        if m: rows.setdefault((m.group(1), m.group(2)), []).append(f"{m.group(3)} {m.group(4)}")
for (name, pct), v in rows.items(): print(f"{name:18s} {pct:>3s}%  old/new/old/new: " + " | ".join(v))
PY
timeout 120 .ab/strata_bench --benchmark_filter='memcpy/d2d|erase_if' --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$R/bench.json" --benchmark_out_format=json > "$R/bench.txt" 2>&1
echo "bench rc $?"; grep -E "median" "$R/bench.txt" | awk '{print "  "$1, $2, $3}'
for tool in memcheck racecheck synccheck initcheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .ab/lifecycle_test --gtest_filter='*Erase*:*Compaction*:*Predicate*' > "$R/lifecycle-$tool.txt" 2>&1
  echo "$tool rc $?"; tail -2 "$R/lifecycle-$tool.txt"
done
tar -C "$OUT" -czf "$OUT/narrow.tar.gz" narrow && rm -rf "$R"
