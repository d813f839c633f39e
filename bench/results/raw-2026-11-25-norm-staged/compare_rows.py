import json,statistics as st
v=json.load(open('/work/.device/3/c1/validate.json'))
def key(r): return (r['workload'],r['dtype'],r['hidden'])
old={}
for f in ['bench/results/raw-2026-11-24-norm_stats/call3-E/sweep-E-1.json','bench/results/raw-2026-11-24-norm_stats/call3-E/sweep-E-2.json']:
    d=json.load(open(f))
    for r in d['results']: old.setdefault(key(r),[]).append(r['gbps']/d['memcpy_gbps'])
diffs=[]
for r in v['results']:
    rp=[c for c in r['considered'] if c['plan'].startswith('rows')]
    if not rp: continue
    best=-2
    for c in rp:
        if c['score']>best+1e-9: best=c['score']; o=c
    new=r['bytes']/(o['ms']*1e-3)/1e9/v['memcpy_gbps']
    k=key(r)
    if k in old: diffs.append(new/st.mean(old[k])-1)
print(len(diffs), "median %.4f mean %.4f min %.4f max %.4f"%(st.median(diffs),st.mean(diffs),min(diffs),max(diffs)))
