#!/usr/bin/env bash
# Call 1: normalize_test on the GPU (its new partial-unit test never ran there), memcheck and
# initcheck of that test, then norm_sweep at widths the sweep does not hold, twice, and
# every weighed plan timed at ten of them (the code of 5e4b6f4, built on the workstation).
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
/tmp/ab/normalize_test > $OUT/normalize_test.txt 2>&1; echo "rc $?" >> $OUT/normalize_test.txt
for t in memcheck initcheck; do
  compute-sanitizer --tool $t --error-exitcode 1 /tmp/ab/normalize_test --gtest_filter='*PartialUnit*' > $OUT/san-$t.txt 2>&1; echo "rc $?" >> $OUT/san-$t.txt
done
W=1,2,3,5,8,15,16,31,64,100,127,129,200,255,384,640,700,1100,1544,1800,2000,2500,3200,3585,4000,4800,6000,6144,7000,7168,8000,9000,10000,10240,11008,12800,13824,14336,18432,20000,24576,28672,40000,50000,100000,131072,500000,1048576,4194304
for i in 1 2; do /tmp/ab/norm_sweep --hidden $W --out $OUT/offgrid-$i.json > $OUT/offgrid-$i.md 2>&1; done
/tmp/ab/norm_sweep --validate --hidden 100,700,1544,2500,6000,7000,11008,13824,20000,28672 --out $OUT/validate.json > $OUT/validate.md 2>&1
