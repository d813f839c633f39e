import json,sys,collections,statistics as st
runs=[json.load(open(f)) for f in sys.argv[1:]]
pts=[]
for i,x in enumerate(runs[0]['results']):
    plans={}
    for r in runs:
        for p in r['results'][i]['considered']:
            plans.setdefault(p['plan'],[]).append(p)
    ps=[]
    for order,(k,v) in enumerate(plans.items()):
        q=dict(v[0]); q['ms']=st.mean(p['ms'] for p in v); q['order']=order
        q['vpt']=int(k.split('vpt=')[1].split()[0]); q['group']=int(k.split('group=')[1].split()[0])
        q['rows']=k.startswith('rows') and 'spill' not in k
        ps.append(q)
    pts.append((x,ps))
def good(ps,share):
    top=max(p['score'] for p in ps)
    return [p for p in ps if p['rows'] and p['score']>=share*top]
def choose(x,ps,rule,share=0.85):
    c=good(ps,share)
    if not c:
        return max(ps,key=lambda p:(p['score'],-p['order']))
    if rule=='current': return min(c,key=lambda p:p['vpt'])
    two = x['workload']=='layer_norm' and x['dtype']!='fp32'
    if rule=='fewest-warps-16bit-layer':
        if two and any(p['group']>32 for p in c):
            return min(c,key=lambda p:((p['group']+31)//32,p['vpt']))
        return min(c,key=lambda p:p['vpt'])
    if rule=='fewest-warps-layer':
        if x['workload']=='layer_norm' and any(p['group']>32 for p in c):
            return min(c,key=lambda p:((p['group']+31)//32,p['vpt']))
        return min(c,key=lambda p:p['vpt'])
    if rule=='fewest-warps-all':
        if any(p['group']>32 for p in c):
            return min(c,key=lambda p:((p['group']+31)//32,p['vpt']))
        return min(c,key=lambda p:p['vpt'])
for rule in ['current','fewest-warps-16bit-layer','fewest-warps-layer','fewest-warps-all']:
  for share in [0.85,0.75,0.6]:
    tot=collections.defaultdict(list); worst=[]
    for x,ps in pts:
        best=min(p['ms'] for p in ps); c=choose(x,ps,rule,share)
        key=x['workload'][:3]+'-'+x['dtype']
        tot[key].append(c['ms']/best)
        worst.append((round(c['ms']/best,3),key,x['hidden'],c['plan'][:24]))
    worst.sort(reverse=True)
    print(rule,share, {k:('%.4f/%.3f/%d'%(st.mean(v),max(v),sum(t>1.02 for t in v))) for k,v in tot.items()})
    print('   ',worst[:4])
