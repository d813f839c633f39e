import json,sys,statistics as st
runs=[json.load(open(f)) for f in sys.argv[2:]]
wl,dt=sys.argv[1].split(':')
for i,x in enumerate(runs[0]['results']):
    if x['workload']!=wl or x['dtype']!=dt: continue
    plans={}
    for r in runs:
        for p in r['results'][i]['considered']: plans.setdefault(p['plan'],[]).append(p)
    best=min(st.mean(p['ms'] for p in v) for v in plans.values())
    s=[]
    for k,v in plans.items():
        g=k.split('group=')[1].split()[0]; vp=k.split('vpt=')[1].split()[0]
        mark='*' if k==x['plan'] else ''
        s.append(f"{mark}{g}x{vp}:{v[0]['score']:.2f}:{st.mean(p['ms'] for p in v)/best:.3f}")
    print(x['hidden'], ' '.join(s))
