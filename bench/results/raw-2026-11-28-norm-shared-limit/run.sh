set -x
export LD_LIBRARY_PATH=$PWD/.carry/lib
cd .carry
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 ./normalize_test > $OUT/normalize_test.txt 2>&1; echo "normalize_test rc $?"; tail -3 $OUT/normalize_test.txt
STRATA_TEST_SANITIZER=1 timeout 200 compute-sanitizer --tool memcheck --error-exitcode 99 ./normalize_test > $OUT/memcheck.txt 2>&1; echo "memcheck rc $?"; tail -4 $OUT/memcheck.txt
STRATA_TEST_SANITIZER=1 timeout 60 compute-sanitizer --tool initcheck --error-exitcode 99 ./normalize_test --gtest_filter='NormalizeErrors.*:NormalizePlan.*' > $OUT/initcheck-errors.txt 2>&1; echo "initcheck rc $?"; tail -3 $OUT/initcheck-errors.txt
timeout 120 ./norm_sweep --hidden 4096,16384,16640,20000,24576,32768,36864,65536 --out $OUT/sweep-wide.json > $OUT/sweep-wide.txt 2>&1; echo "sweep rc $?"; grep -E "spill|streamed" $OUT/sweep-wide.txt | head -40
