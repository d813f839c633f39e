#!/bin/bash
# gpu-check of 0533804 (the tree of 27228cd, whose code is 0533804 and 43ebbc9's tests), part A (one H200): build the CUDA preset with the Python module, run every
# GPU test binary, the demos and the PyTorch comparison's checks, pytest against the module, the
# normalization sweep twice.
set -u
start=$SECONDS
O=$OUT/a && mkdir -p $O
cmake --preset cuda -B /tmp/b -DSTRATA_PYTHON=ON > /tmp/build.log 2>&1 && cmake --build /tmp/b -j 16 >> /tmp/build.log 2>&1
echo "build rc $? in $((SECONDS - start)) s"; tail -2 /tmp/build.log
STRATA_COMMIT=27228cd STRATA_PREBUILT=/tmp/b STRATA_SKIP=build,sanitize,bench OUT=/tmp/ga bash scripts/gpu-check.sh > $O/summary-a.txt 2>&1
cp -r /tmp/ga/logs.tar.gz $O/logs-a.tar.gz 2>/dev/null
echo "gpu-check A done $((SECONDS - start)) s"
mkdir -p /tmp/py/strata && cp python/strata/*.py /tmp/b/python/_strata*.so /tmp/py/strata/ && (cd python/tests && PYTHONPATH=/tmp/py timeout 120 python3 -m pytest -q . > $O/pytest-gpu.txt 2>&1)
echo "pytest: $(tail -1 $O/pytest-gpu.txt) $((SECONDS - start)) s"
for i in 0 1; do timeout 60 /tmp/b/bench/norm_sweep --out $O/sweep-$i.json > $O/sweep-$i.txt 2>&1; echo "sweep $i rc $?"; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
tail -22 $O/summary-a.txt
tar -czf $OUT/a.tar.gz -C $OUT a && rm -rf $O
