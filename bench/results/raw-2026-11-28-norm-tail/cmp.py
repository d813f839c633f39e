import json,sys,statistics as st
def load(fs):
    out={}
    for f in fs:
        for r in json.load(open(f))['results']:
            k=(r['workload'],r['dtype'],r['hidden'])
            out.setdefault(k,[]).append(r)
    return out
old=load(sys.argv[1].split(','))
new=load(sys.argv[2].split(','))
def ratio(rs): return st.median([r['gbps'] for r in rs])/4253.0
met_o=met_n=0; rows=[]
for k in new:
    if k not in old: continue
    ro,rn=ratio(old[k]),ratio(new[k])
    tgt=0.90 if k[1]=='fp32' else 0.88
    met_o+=ro>=tgt; met_n+=rn>=tgt
    rows.append((rn/ro,k,ro,rn,old[k][0].get('plan'),new[k][0].get('plan')))
print('met old',met_o,'new',met_n,'of',len(rows))
rows.sort()
for r in rows[:int(sys.argv[3])]: print('%.3f'%r[0],r[1],'%.3f -> %.3f'%(r[2],r[3]),r[4],'|',r[5])
print('...')
for r in rows[-int(sys.argv[3]):]: print('%.3f'%r[0],r[1],'%.3f -> %.3f'%(r[2],r[3]),r[4],'|',r[5])
