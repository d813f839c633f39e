#!/usr/bin/env bash
# Call 3 on the 2-GPU machine: the sanitizer stage of gpu-check (memcheck, racecheck, initcheck,
# synccheck over every GPU test binary, side by side) with the packed build of call 2.
set -u
tar -xJf .carryz/carry.tar.xz
STRATA_PREBUILT=.carry STRATA_SKIP=tests,demo,torch,bench OUT="$OUT/check" timeout 540 bash scripts/gpu-check.sh >"$OUT/check.txt" 2>&1
echo "gpu-check rc $?"; tail -12 "$OUT/check.txt"
[ -f "$OUT/check/logs.tar.gz" ] && tar -xzf "$OUT/check/logs.tar.gz" -C "$OUT/check"
for f in "$OUT"/check/logs/sanitize-*.log; do echo "== $f"; grep -c "ERROR SUMMARY: 0 errors" "$f"; grep "ERROR SUMMARY: [1-9]" "$f" | head -3; done
rm -f "$OUT/check/logs.tar.gz"; tar -czf "$OUT/results.tar.gz" -C "$OUT" check check.txt && rm -rf "$OUT/check"
