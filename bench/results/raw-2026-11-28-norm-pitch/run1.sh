#!/bin/bash
# Device call 5 (one H200): the pitch probe of HEAD (pitch_base) and of the change (pitch_new),
# alternated, gamma and beta on 16-byte boundaries; the CUDA normalize_test of the change, with
# compute-sanitizer memcheck and initcheck; Nsight Compute's instruction counts of the rows
# kernels for the change (ncu_driver).
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
O=$OUT
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $O/gpu.txt
for i in 0 1; do
  .carry/pitch_base > $O/pitch-base-$i.md 2>&1
  .carry/pitch_new > $O/pitch-new-$i.md 2>&1
done
.carry/normalize_test > $O/normalize_test.log 2>&1; echo "rc $?" >> $O/normalize_test.log
for tool in memcheck initcheck; do
  compute-sanitizer --tool $tool .carry/normalize_test > $O/normalize_test-$tool.log 2>&1; echo "rc $?" >> $O/normalize_test-$tool.log
done
ncu --section SourceCounters --section InstructionStats --section SpeedOfLight -k regex:rows_kernel -o $O/src .carry/ncu_driver > $O/ncu.log 2>&1
ncu --import $O/src.ncu-rep --page details > $O/ncu-details.txt 2>&1
rm -f $O/src.ncu-rep
