import json,sys,math,collections,statistics as st
runs=[json.load(open(f)) for f in sys.argv[1:]]
m=[r['memcpy_gbps'] for r in runs]
# per point: plans with ms averaged over runs
pts=[]
for i,x in enumerate(runs[0]['results']):
    plans={}
    for r in runs:
        for p in r['results'][i]['considered']:
            plans.setdefault(p['plan'],[]).append(p)
    ps=[]
    for k,v in plans.items():
        q=dict(v[0]); q['ms']=st.mean(p['ms'] for p in v); q['vpt']=int(k.split('vpt=')[1].split()[0]) if 'vpt=' in k else 0
        ps.append(q)
    pts.append((x,ps))
def choose(ps,rule):
    if rule=='current':
        best=None
        for p in ps:  # in considered order = row candidates vpt 1..8
            if best is None or p['score']>best['score']+1e-9: best=p
        return best
    thr=rule
    top=max(p['score'] for p in ps)
    # among plans within thr of top score, fewest units per thread (then higher score)
    c=[p for p in ps if p['score']>=thr*top and p['plan'].startswith('rows') and 'spill' not in p['plan']]
    if not c: return choose(ps,'current')
    return min(c,key=lambda p:(p['vpt'],-p['score']))
for rule in ['current',0.95,0.9,0.85,0.8,0.75]:
    tot=collections.defaultdict(list); worst=[]
    for x,ps in pts:
        if len(ps)<2: continue
        best=min(p['ms'] for p in ps); c=choose(ps,rule)
        tot[x['dtype']].append(c['ms']/best)
        worst.append((c['ms']/best,x['workload'][:3],x['dtype'],x['hidden']))
    worst.sort(reverse=True)
    print(rule, {k:('mean %.4f max %.3f n>1.03 %d'%(st.mean(v),max(v),sum(t>1.03 for t in v))) for k,v in tot.items()}, worst[:3])
