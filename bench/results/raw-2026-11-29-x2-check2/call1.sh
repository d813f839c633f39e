#!/usr/bin/env bash
# Call 1, 2 x H200: PyPI's mpich wheel installed offline (for mpi_join_test), the CUDA preset of
# this tree built on the device (/tmp/b), then gpu-check's tests and demos (particles --gpus 2 and
# mpi_join_test under mpiexec included).
set -u
R=$OUT/r && mkdir -p "$R"
save() { tar -czf "$OUT/results.tar.gz" -C "$OUT" r ga 2>/dev/null; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/gpus.txt"
git log -1 --format=%H > "$R/rev.txt" 2>/dev/null
whl=$(ls $PWD/.carry/mpich-*.whl | head -1)
python3 -m pip install -q --no-index "$whl" >"$R/mpi-install.log" 2>&1; echo "mpich install rc $?"
s=$SECONDS
(cmake --preset cuda -B /tmp/b && cmake --build /tmp/b) >"$R/build.log" 2>&1; echo "build rc $? in $((SECONDS - s)) s"
tail -3 "$R/build.log"; grep -i "mpi" "$R/build.log" | head -3
STRATA_MPI_WHEEL=$whl STRATA_PREBUILT=/tmp/b STRATA_SKIP=build,sanitize,torch,bench OUT=$OUT/ga timeout $((590 - SECONDS)) bash scripts/gpu-check.sh 2>&1 | tail -25
echo "done at $SECONDS s"
save
