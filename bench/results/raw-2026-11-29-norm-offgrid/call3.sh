#!/usr/bin/env bash
# Call 3: rows stacked in groups (stacked_rows_kernel), B, against the code before, A (5e4b6f4):
# normalize_test (B) on the GPU, every plan weighed at short rows (B), and both at short and
# issue-sweep widths that the change can reach, A B A B.
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
mkdir -p /tmp/o
# normalize_test and memcheck: call 4 (the carry limit keeps them apart)
S=4,8,12,16,24,32,48,64,80,96,100,128,129,160,192,200,224,255,256,512,1024
/tmp/ab/norm_sweep_B --validate --hidden $S --out /tmp/o/validate-B.json > /tmp/o/validate-B.md 2>&1
for i in 1 2; do
  /tmp/ab/norm_sweep_A --hidden $S --out /tmp/o/sweep-A$i.json > /tmp/o/sweep-A$i.md 2>&1
  /tmp/ab/norm_sweep_B --hidden $S --out /tmp/o/sweep-B$i.json > /tmp/o/sweep-B$i.md 2>&1
done

tar -czf $OUT/call3.tar.gz -C /tmp/o .
