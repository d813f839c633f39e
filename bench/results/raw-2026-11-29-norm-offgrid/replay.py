#!/usr/bin/env python3
"""Replays choice rules on the plans timed by norm_sweep --validate (calls 3-5 here): for each rule,
how close the plan it picks comes to the fastest plan weighed (mean, lowest, points below 0.95).
Scores are the GPU model's as the sweep printed them; stacks of one unit a thread are left out as
in the library. Run from this folder: python3 replay.py"""
import json, re, statistics

FILES = ['call3/validate-B.json', 'call4/validate-B.json', 'call5/validate-B.json']


def parse(s):
    g = dict(re.findall(r'(\w+)=(\d+)', s))
    return int(g['group']), int(g['vpt']), int(g.get('stack', 1))


def choose(r, poor):
    share = 0.85 if r['dtype'] == 'fp32' else 0.95
    plans = [(parse(p['plan']), p['score'], p['ms']) for p in r['considered'] if p['plan'].startswith('rows')]
    plans = [c for c in plans if not (c[0][2] > 1 and c[0][1] < 2)]
    if not plans:
        return None
    good = [c for c in plans if not poor(*c[0])]
    pool = good or plans
    best = max(c[1] for c in pool)
    for c in sorted(pool, key=lambda c: (c[0][1] * c[0][2], c[0][2], c[0][1])):
        if c[1] >= share * best - 1e-9:
            return c


RULES = {
    'nothing poorly coalesced': lambda G, v, s: False,
    'library (G=1 v>=3, G*16<64 v>=4)': lambda G, v, s: (G == 1 and v >= 3) or (G * 16 < 64 and v >= 4),
    'also G=4 v>=6': lambda G, v, s: (G == 1 and v >= 3) or (G * 16 < 64 and v >= 4) or (G == 4 and v >= 6),
}
for name, poor in RULES.items():
    res = []
    for f in FILES:
        for r in json.load(open(f))['results']:
            c = choose(r, poor)
            if c:
                res.append((min(p['ms'] for p in r['considered']) / c[2], r['workload'], r['dtype'], r['hidden'], c[0]))
    res.sort()
    print(f"{name:34s} n={len(res)} mean {statistics.mean(x[0] for x in res):.4f} lowest {res[0][0]:.3f} "
          f"below 0.95: {sum(x[0] < 0.95 for x in res)}; lowest at {res[0][1]} {res[0][2]} {res[0][3]} {res[0][4]}")
