#!/bin/bash
export OUT
t0=$(date +%s)
R=/tmp/res4; mkdir -p $R
cmake --preset cuda -B /tmp/b -DSTRATA_BUILD_TESTS=OFF > $R/cfg-new.log 2>&1 && cmake --build /tmp/b --target norm_sweep -j 16 > $R/build-new.log 2>&1; echo new-build $? $(( $(date +%s) - t0 )) s
for i in 0 1; do
  timeout 200 /tmp/b/bench/norm_sweep --validate --out $R/validate-all-$i.json > $R/validate-all-$i.txt 2>&1; echo validate rc $? $(( $(date +%s) - t0 )) s
done
tar -czf $OUT/res4.tar.gz -C /tmp res4
