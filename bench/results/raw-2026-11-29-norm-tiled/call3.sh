#!/usr/bin/env bash
# Call 3, one H200: normalize_test of the committed rule (tiled_fits: tiled up to 64 bytes a row,
# not for rows of 4 whole units), built on the workstation (/tmp/bc) and carried; the whole test
# on the GPU, then the tiled and prefetch tests under the four sanitizers while time is left.
set -u
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
T=/tmp/ab/normalize_test
timeout 100 $T > "$R/normalize_test.txt" 2>&1; echo "normalize_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/normalize_test.txt | tr '\n' ' ') at $SECONDS s"
grep -E "Failure|FAILED" "$R/normalize_test.txt" | head -5
save
for tool in memcheck initcheck racecheck synccheck; do
  [ $SECONDS -gt 170 ] && break
  STRATA_TEST_SANITIZER=1 timeout 40 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='*Tiles*' > "$R/san-$tool.txt" 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/san-$tool.txt | tr '\n' ' ') at $SECONDS s"
done
save
