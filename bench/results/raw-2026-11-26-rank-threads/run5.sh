#!/usr/bin/env bash
# Call 5, 2 x H200: gpu-check's sanitizer stage (memcheck, racecheck, initcheck, synccheck over
# every GPU test binary, side by side) with the binaries of call 4: the test binaries of b50b39d
# plus distributed_test and split_by_key_test of a7c1641 (the only tests this change rebuilds).
set -u
tar -xJf .carryz/carry.tar.xz
STRATA_PREBUILT=.carry STRATA_SKIP=tests,demo,torch,bench OUT="$OUT/check" timeout 560 bash scripts/gpu-check.sh >"$OUT/check.txt" 2>&1
echo "gpu-check rc $?"; tail -8 "$OUT/check.txt"
[ -f "$OUT/check/logs.tar.gz" ] && tar -xzf "$OUT/check/logs.tar.gz" -C "$OUT/check"
for f in "$OUT"/check/logs/sanitize-*.log; do echo "== $(basename $f): $(grep -c 'ERROR SUMMARY: 0 errors' "$f") clean"; grep "ERROR SUMMARY: [1-9]" "$f" | head -3; done
rm -f "$OUT/check/logs.tar.gz"; tar -czf "$OUT/results.tar.gz" -C "$OUT" check check.txt && rm -rf "$OUT/check"
