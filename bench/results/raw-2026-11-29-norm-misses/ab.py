import json,sys,statistics as st,collections
d=sys.argv[1]; pre=sys.argv[2] if len(sys.argv)>2 else 'sweep'
def load(b):
    out=[]
    for i in (0,1):
        j=json.load(open(f'{d}/{pre}-{b}-{i}.json')); out.append(j)
    return out
H,N=load('head'),load('new')
def table(runs):
    t=collections.defaultdict(list); m=[]
    for j in runs:
        m.append(j['memcpy_gbps'])
        for p in j['results']:
            if p['variant']=='strata': t[(p['workload'],p['dtype'],p['hidden'])].append(p)
    return t,m
th,mh=table(H); tn,mn=table(N)
def met(runs):
    c=[]
    for j in runs:
        n=0
        for p in j['results']:
            if p['variant']!='strata': continue
            tgt=0.90 if p['dtype']=='fp32' else 0.88
            n+= p['gbps']/j['memcpy_gbps']>=tgt
        c.append(n)
    return c
print('met head',met(H),'new',met(N), 'memcpy',[round(x) for x in mh],[round(x) for x in mn])
rat=[];ch=[]
for k in th:
    a=st.median(p['ms'] for p in th[k]); b=st.median(p['ms'] for p in tn[k])
    rat.append(b/a)
    if th[k][0]['plan']!=tn[k][0]['plan'] or abs(b/a-1)>0.02: ch.append((k,round(b/a,3),th[k][0]['plan'][:26],tn[k][0]['plan'][:26]))
print('new/head time median %.4f min %.3f max %.3f n=%d'%(st.median(rat),min(rat),max(rat),len(rat)))
for c in sorted(ch): print(c)
