#!/usr/bin/env bash
# Device call (h200/call1): erase_if's writing pass keeps narrow columns in shared memory from
# their loads to their last use. phase_probe against this compact.hpp; erase_sweep of
# raw-2026-11-25-erase_if-pass against compact.hpp before (old, 1f8e56e) and after (new),
# alternated twice; lifecycle_test on the GPU and under memcheck / racecheck / synccheck /
# initcheck (compaction tests).
set -uo pipefail
cd "$(dirname "$0")/../../.."
tar -xJf .carryz/ab.tar.xz
export LD_LIBRARY_PATH=$PWD/.ab/lib:${LD_LIBRARY_PATH:-}
R=$OUT/resident; mkdir -p "$R"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
timeout 150 .ab/probe_new > "$R/probe.txt" 2>&1; echo "probe rc $?"; cat "$R/probe.txt"
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
for tool in memcheck racecheck synccheck initcheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 .ab/lifecycle_test --gtest_filter='*Erase*:*Compaction*:*Predicate*' > "$R/lifecycle-$tool.txt" 2>&1
  echo "$tool rc $?"; tail -2 "$R/lifecycle-$tool.txt"
done
tar -C "$OUT" -czf "$OUT/resident.tar.gz" resident && rm -rf "$R"
