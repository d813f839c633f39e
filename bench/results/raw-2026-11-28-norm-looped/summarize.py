"""Best looped variant per shape against strata's plan (looped-1.txt), as in the README's table."""
import sys
from collections import defaultdict

best = defaultdict(lambda: (0.0, None))
lib = {}
for line in open(sys.argv[1] if len(sys.argv) > 1 else "looped-1.txt"):
    if not (line.startswith("| layer") or line.startswith("| rms")):
        continue
    c = [x.strip() for x in line.split("|")[1:-1]]
    key = (c[0], c[1], c[2])
    lib[key] = (c[7], c[3].split(" ahead")[0])
    if float(c[10]) > best[key][0]:
        best[key] = (float(c[10]), c[4], c[9])
print("| op | dtype | rows x hidden | strata plan | strata x memcpy | best looped | looped x memcpy | strata time / looped time |")
print("| --- | --- | --- | --- | ---: | --- | ---: | ---: |")
for k, v in best.items():
    print(f"| {k[0]} | {k[1]} | {k[2]} | {lib[k][1]} | {lib[k][0]} | {v[1]} | {v[2]} | {v[0]:.3f} |")
