#!/usr/bin/env bash
# Call 5: cluster_plan taking blocks of 256 threads first: the normalization tests (also under the
# four sanitizers), the PyTorch comparison (checks on torch tensors, long rows among them), the
# full sweep twice, every plan weighed at long rows. Outputs in one archive.
cd .carry && tar -xJf bins.tar.xz && cd ..
export LD_LIBRARY_PATH=$PWD/.carry/lib:/usr/local/cuda/lib64
B=.carry/bin
R=$OUT/call5 && mkdir -p $R
# libstrata_norm.so (the PyTorch comparison's) is built here while the tests run: the binaries
# carried with it pass the device tool's 64 MiB limit.
(cmake --preset cuda -B /tmp/b -DSTRATA_BUILD_TESTS=OFF > $R/build.log 2>&1 && cmake --build /tmp/b --target strata_norm >> $R/build.log 2>&1) &
BUILD=$!
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
$B/normalize_test --gtest_brief=1 > $R/tests.log 2>&1; echo "tests rc $?" >> $R/tests.log
for tool in memcheck racecheck synccheck initcheck; do
  STRATA_TEST_SANITIZER=1 timeout 420 compute-sanitizer --tool $tool --error-exitcode 99 $B/normalize_test --gtest_brief=1 \
    > $R/san-$tool.log 2>&1 &
done
wait
wait $BUILD
PYTHONUNBUFFERED=1 timeout 300 python3 bench/layer_norm_torch.py --library /tmp/b/examples/libstrata_norm.so --out $R/torch.json > $R/torch.log 2>&1
echo "torch rc $?" >> $R/torch.log
$B/norm_sweep --out $R/sweep1.json > $R/sweep1.md 2>&1
$B/norm_sweep --out $R/sweep2.json > $R/sweep2.md 2>&1
$B/norm_sweep --validate --hidden 32768,49152,65536,100000,131072,196608,262144 --out $R/validate.json > $R/validate.md 2>&1
tar -czf $OUT/call5.tar.gz -C $OUT call5 && rm -rf $R
tar -xzf $OUT/call5.tar.gz -C /tmp
for tool in memcheck racecheck synccheck initcheck; do echo "$tool: $(tail -2 /tmp/call5/san-$tool.log | tr '\n' ' ')"; done
tail -3 /tmp/call5/tests.log; grep -c '^ok' /tmp/call5/torch.log; tail -2 /tmp/call5/torch.log
cut -c1-200 /tmp/call5/validate.md
