#!/usr/bin/env bash
# Call 6, 2 x H200: gpu-check's sanitizer stage again for the two binaries call 5 flagged:
# distributed_test of 7d61a33 (the unpacking is unpack_run, which initcheck now leaves out: NCCL's
# peer writes into the wire blocks are invisible to it) and reduce_test of b50b39d (racecheck
# reported an internal error, "failure to track a kernel launch", as one hazard).
set -u
tar -xJf .carryz/lite.tar.xz
STRATA_PREBUILT=.carry STRATA_SKIP=tests,demo,torch,bench OUT="$OUT/check" timeout 500 bash scripts/gpu-check.sh >"$OUT/check.txt" 2>&1
echo "gpu-check rc $?"; tail -7 "$OUT/check.txt"
[ -f "$OUT/check/logs.tar.gz" ] && tar -xzf "$OUT/check/logs.tar.gz" -C "$OUT/check"
for f in "$OUT"/check/logs/sanitize-*.log; do echo "== $(basename $f)"; grep -E "SUMMARY|Internal" "$f"; done
rm -f "$OUT/check/logs.tar.gz"; tar -czf "$OUT/results.tar.gz" -C "$OUT" check check.txt && rm -rf "$OUT/check"
