#!/bin/bash
# Device call 9 (one H200): spill_probe of c23732b (base), e2df246 (e2d) and the change after it
# (fix: a row's partial units' elements read before the shared-memory copies' wait), alternated
# twice; normalize_test of the change, and under memcheck and initcheck (sanitizer sizes).
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
tar -xJf .carry/bins.tar.xz -C .carry
mkdir -p /tmp/o
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > /tmp/o/gpu.txt
for i in 0 1; do for b in base e2d fix; do .carry/spill_$b > /tmp/o/spill-$b-$i.md 2>&1; done; done
.carry/normalize_test > /tmp/o/normalize_test.log 2>&1; echo "rc $?" >> /tmp/o/normalize_test.log
for tool in memcheck initcheck; do
  STRATA_TEST_SANITIZER=1 compute-sanitizer --tool $tool .carry/normalize_test > /tmp/o/normalize_test-$tool.log 2>&1
  echo "rc $?" >> /tmp/o/normalize_test-$tool.log
done
tar -czf $OUT/call9.tgz -C /tmp/o .
tail -2 /tmp/o/normalize_test.log /tmp/o/normalize_test-memcheck.log /tmp/o/normalize_test-initcheck.log
