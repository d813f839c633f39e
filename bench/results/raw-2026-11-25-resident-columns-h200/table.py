# The four sweeps of run.sh side by side: x cudaMemcpy and correctness per record and removed fraction.
import re, sys
rows = {}
for f in ["old-1", "new-1", "old-2", "new-2"]:
    for line in open(f"{sys.argv[1]}/sweep-{f}.txt"):
        m = re.match(r"(.+?)\s+\d+ B/record.*removed\s+(\d+)%.*x memcpy ([0-9.]+)\s+(\S+)", line)
        if m: rows.setdefault((m.group(1), m.group(2)), []).append(f"{m.group(3)} {m.group(4)}")
for (name, pct), v in rows.items(): print(f"{name:18s} {pct:>3s}%  old/new/old/new: " + " | ".join(v))
