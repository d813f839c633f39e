#!/bin/bash
export OUT
t0=$(date +%s)
R=/tmp/call6; mkdir -p $R
rm -rf /tmp/base_src && mkdir /tmp/base_src && for f in *; do [ "$f" != include ] && [ "$f" != build ] && cp -r "$f" /tmp/base_src/; done; cp -r .carry/base/include /tmp/base_src/include
(cmake --preset cuda -B /tmp/b -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_EXAMPLES=OFF > $R/cfg-new.log 2>&1 && cmake --build /tmp/b --target strata_bench -j 8 > $R/build-new.log 2>&1; echo new-build $?) &
(cd /tmp/base_src && cmake --preset cuda -B /tmp/bb -DSTRATA_BUILD_TESTS=OFF -DSTRATA_BUILD_EXAMPLES=OFF > $R/cfg-base.log 2>&1 && cmake --build /tmp/bb --target strata_bench -j 8 > $R/build-base.log 2>&1; echo base-build $?) &
wait
echo built $(( $(date +%s) - t0 )) s
for v in new base new base; do
  b=/tmp/b; [ $v = base ] && b=/tmp/bb
  i=$(ls $R | grep -c "bench-$v")
  timeout 60 $b/bench/strata_bench --benchmark_filter='memcpy/d2d|layer_norm' --benchmark_out=$R/bench-$v-$i.json --benchmark_out_format=json > $R/bench-$v-$i.txt 2>&1; echo bench $v rc $? $(( $(date +%s) - t0 )) s; tar -czf $OUT/call6.tar.gz -C /tmp call6
done
tar -czf $OUT/call6.tar.gz -C /tmp call6
