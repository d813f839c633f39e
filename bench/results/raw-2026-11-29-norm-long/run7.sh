#!/bin/bash
# Device call 7 (one H200): the whole-unit looped kernel launched directly (long_probe looped):
# blocks of 512 / 1024 threads, 1-8 units a chunk, launch bounds for 1 or 2 blocks an SM.
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p /tmp/o
.carry/long_probe looped > /tmp/o/lean-1.md 2>&1
tar -czf $OUT/call7.tgz -C /tmp/o .
python3 - <<"PY"
import collections
b=collections.OrderedDict()
for l in open("/tmp/o/lean-1.md"):
    f=[x.strip() for x in l.strip().strip("|").split("|")]
    if len(f)<9 or f[0] in ("kind","---"): continue
    d=b.setdefault((f[0],f[1],f[2]),{})
    if f[3]=="chosen": d["c"]=(float(f[5]),f[7],f[4])
    elif "b" not in d or float(f[5])<d["b"][0]: d["b"]=(float(f[5]),f[7],f[4],f[8])
for k,d in b.items(): print(k,d["c"][1],d["c"][2][:30],"|",d["b"][1],d["b"][2],d["b"][3],round(d["c"][0]/d["b"][0],3))
PY
tail -3 /tmp/o/lean-1.md
