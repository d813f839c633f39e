# The count's overhead in jump_sweep's `few` families: count ms minus the forced way it picked, at
# 1/16 with the whole sample counted (../raw-2026-11-29-spare/call2/sweep-few.txt: the library of 48b7853, 2026-11-29)
# and at 1/64 with the early stop (call3/sweep-few.txt).
import re
def rows(path):
    out, rec = {}, None
    for l in open(path):
        m = re.match(r'### (\w+)', l)
        if m: rec = m.group(1)
        c = [x.strip() for x in l.strip().strip('|').split('|')]
        if rec and len(c) >= 10 and c[0] not in ('family',) and not c[0].startswith('---'):
            # columns: family, far share, [sampled share], count ms, columns ms, records ms, ..., count took, faster, outputs
            off = 1 if len(c) == 11 else 0
            count, cols, recs = float(c[2 + off]), float(c[3 + off]), float(c[4 + off])
            took, faster = c[-3], c[-2]
            out[(rec, c[0])] = (count, cols if took == 'columns' else recs, took, faster)
    return out
old = rows('../raw-2026-11-29-spare/call2/sweep-few.txt')
new = rows('call3/sweep-few.txt')
print('| record | family | before: count - its way (ms) | after | picks faster (before / after) |')
print('| --- | --- | ---: | ---: | --- |')
so = sn = 0.0
for k in new:
    if k not in old: continue
    o, n = old[k], new[k]
    so += o[0] - o[1]; sn += n[0] - n[1]
    print(f'| {k[0]} | {k[1]} | {o[0] - o[1]:+.3f} | {n[0] - n[1]:+.3f} | {"yes" if o[2] == o[3] else "NO"} / {"yes" if n[2] == n[3] else "NO"} |')
print(f'\nsum over the {sum(1 for k in new if k in old)} shared rows: before {so:+.3f} ms, after {sn:+.3f} ms')
