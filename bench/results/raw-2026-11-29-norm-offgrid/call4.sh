#!/usr/bin/env bash
# Call 4: the choice as committed (stacked plans with 2 or more units of a row a thread; plans that
# serve rows poorly ranked last), B, against 5e4b6f4, A: the issue's sweep and short rows, A B A B,
# and every plan weighed at the short rows (B).
mkdir -p /tmp/ab && tar -xJf .carry/ab.tar.xz -C /tmp/ab
export LD_LIBRARY_PATH=/tmp/ab:/usr/local/cuda/lib64
mkdir -p /tmp/o
S=4,8,12,16,24,32,40,48,56,64,80,96,100,112,128,129,160,192,200,224,255,256,320,384,448,512,1024
for i in 1 2; do
  /tmp/ab/norm_sweep_A --out /tmp/o/issue-A$i.json > /tmp/o/issue-A$i.md 2>&1
  /tmp/ab/norm_sweep_B --out /tmp/o/issue-B$i.json > /tmp/o/issue-B$i.md 2>&1
  /tmp/ab/norm_sweep_A --hidden $S --out /tmp/o/short-A$i.json > /tmp/o/short-A$i.md 2>&1
  /tmp/ab/norm_sweep_B --hidden $S --out /tmp/o/short-B$i.json > /tmp/o/short-B$i.md 2>&1
done
/tmp/ab/norm_sweep_B --validate --hidden $S --out /tmp/o/validate-B.json > /tmp/o/validate-B.md 2>&1
tar -czf $OUT/call4.tar.gz -C /tmp/o .
