#!/usr/bin/env python3
"""Replays the row-plan choice on plans timed by norm_sweep --validate: offgrid calls 3-5 (short rows,
stacked plans weighed) and this folder's call 1 (rows ending in a partial unit; its stacked plans of
such rows are left out, as the library does not weigh them). For each rule: how close the chosen plan
comes to the fastest plan weighed, over rows of whole units and rows ending in a partial unit
(strata's matrix: the rows kernel's variant holding the partial unit's elements one a thread).
Scores are the GPU model's as the sweep printed them. Run from this folder: python3 replay.py"""
import json, re, statistics

OFFGRID = ['../raw-2026-11-29-norm-offgrid/call3/validate-B.json', '../raw-2026-11-29-norm-offgrid/call4/validate-B.json',
           '../raw-2026-11-29-norm-offgrid/call5/validate-B.json']
FILES = [(f, True) for f in OFFGRID] + [('call1/validate-B.json', False)]


def parse(s):
    g = dict(re.findall(r'(\w+)=(\d+)', s))
    return int(g['group']), int(g['vpt']), int(g.get('stack', 1))


def choose(r, poor, stacks):
    share = 0.85 if r['dtype'] == 'fp32' else 0.95
    plans = [(parse(p['plan']), p['score'], p['ms']) for p in r['considered'] if p['plan'].startswith('rows')]
    plans = [c for c in plans if not (c[0][2] > 1 and c[0][1] < 2) and (stacks or c[0][2] == 1)]
    if not plans:
        return None
    pool = [c for c in plans if not poor(*c[0])] or plans
    best = max(c[1] for c in pool)
    for c in sorted(pool, key=lambda c: (c[0][1] * c[0][2], c[0][2], c[0][1])):
        if c[1] >= share * best - 1e-9:
            return c


def library(G, v, s):
    return (G == 1 and v >= 3) or (G * 16 < 64 and v >= 4)


RULES = {
    'library before': lambda G, v, s, t: library(G, v, s),
    'partial rows: G*16<64, v>=2 (kept)': lambda G, v, s, t: library(G, v, s) or (t and G * 16 < 64 and v >= 2),
    'partial rows: G*16<64, v>=3': lambda G, v, s, t: library(G, v, s) or (t and G * 16 < 64 and v >= 3),
    'every row: G*16<64, v>=2': lambda G, v, s, t: G * 16 < 64 and v >= 2,
}
for name, poor in RULES.items():
    for which in ('whole', 'partial'):
        res = []
        for f, stacks in FILES:
            for r in json.load(open(f))['results']:
                L = 4 if r['dtype'] == 'fp32' else 8
                t = r['hidden'] % L != 0
                if (which == 'partial') != t or r['hidden'] > 1025:
                    continue
                c = choose(r, lambda G, v, s: poor(G, v, s, t), stacks)
                if c:
                    timed = [p['ms'] for p in r['considered'] if p['plan'].startswith('rows') and (stacks or 'stack' not in p['plan'])]
                    res.append((min(timed) / c[2], r['workload'], r['dtype'], r['hidden'], c[0]))
        res.sort()
        print(f"{name:36s} {which:7s} n={len(res)} mean {statistics.mean(x[0] for x in res):.4f} lowest {res[0][0]:.3f} "
              f"below 0.95: {sum(x[0] < 0.95 for x in res)}; lowest at {res[0][1:]}")
