#!/usr/bin/env bash
# Call 1, one H200: norm_sweep of the working tree (the tiled plan for short rows lying back to
# back), built on the workstation (/tmp/bc, cuda preset) and carried; normalize_test built here
# meanwhile (the tree's cuda preset). Every plan weighed at short dense rows (--dense --validate),
# the chosen plans again and the matrix's rows at the same widths; normalize_test on the GPU and
# the tiled test under the four sanitizers.
set -u
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
R=$OUT/r && mkdir -p "$R"
(cmake --preset cuda -B /tmp/b > "$R/build.log" 2>&1 && cmake --build /tmp/b --target normalize_test >> "$R/build.log" 2>&1; echo "build rc $?" >> "$R/build.log") &
build=$!
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpu.txt"
H=1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,20,24,28,31,32
timeout 150 /tmp/ab/norm_sweep --dense --validate --hidden $H --out "$R/dense-1.json" > "$R/dense-1.md" 2>&1; echo "dense sweep rc $? at $SECONDS s"
save
timeout 100 /tmp/ab/norm_sweep --dense --hidden $H --out "$R/dense-2.json" > "$R/dense-2.md" 2>&1; echo "dense sweep 2 rc $? at $SECONDS s"
timeout 100 /tmp/ab/norm_sweep --hidden $H --out "$R/matrix-1.json" > "$R/matrix-1.md" 2>&1; echo "matrix sweep rc $? at $SECONDS s"
save
cut -c1-230 "$R/dense-1.md" | grep -v "^| ---"
wait $build; tail -2 "$R/build.log"; echo "built at $SECONDS s"
T=/tmp/b/tests/normalize_test
timeout 150 $T > "$R/normalize_test.txt" 2>&1; echo "normalize_test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/normalize_test.txt | tr '\n' ' ')"
grep -E "Failure|FAILED" "$R/normalize_test.txt" | head -5
save
for tool in memcheck racecheck initcheck synccheck; do
  [ $SECONDS -gt 540 ] && break
  STRATA_TEST_SANITIZER=1 timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $T --gtest_filter='*Tiles*:*Prefetch*' > "$R/san-$tool.txt" 2>&1
  echo "$tool rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/san-$tool.txt | tr '\n' ' ')"
done
save
