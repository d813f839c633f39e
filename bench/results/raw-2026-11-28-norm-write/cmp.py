import json,sys,collections,statistics as st
def load(f):
    d=json.load(open(f)); m=d['memcpy_gbps']
    return {(x['workload'],x['dtype'],x['hidden']):x['gbps']/m for x in d['results']}
import glob
base=[load(f) for f in sorted(glob.glob(sys.argv[1]))]
new=[load(f) for f in sorted(glob.glob(sys.argv[2]))]
keys=base[0].keys()
def tgt(k): return 0.9 if k[1]=='fp32' else 0.88
for name,runs in (('base',base),('new',new)):
    print(name,[sum(r[k]>=tgt(k) for k in keys) for r in runs])
by=collections.defaultdict(list)
for k in keys:
    b=max(r[k] for r in base); n=max(r[k] for r in new)
    bm=st.median([r[k] for r in base]); nm=st.median([r[k] for r in new])
    by[(k[0],k[1])].append(nm/bm)
for g,v in sorted(by.items()): print(g, 'median new/base %.3f min %.3f max %.3f'%(st.median(v),min(v),max(v)))
if len(sys.argv)>3:
  for k in sorted(keys,key=lambda k:(k[0],k[1],k[2])):
    bm=st.median([r[k] for r in base]); nm=st.median([r[k] for r in new])
    if (bm<tgt(k))!=(nm<tgt(k)) or abs(nm/bm-1)>0.03: print(k, '%.3f -> %.3f'%(bm,nm))
