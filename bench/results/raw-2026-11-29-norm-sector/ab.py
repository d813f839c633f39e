import json,sys,statistics as st
def load(f):
    return {(r['workload'],r['dtype'],r['hidden']):r for r in json.load(open(f))['results'] if r.get('variant')=='strata'}
d=sys.argv[1]
A=[load(f'{d}/sweep-A{i}.json') for i in (1,2)]; B=[load(f'{d}/sweep-B{i}.json') for i in (1,2)]
ratios=[]
rows=[]
for k in A[0]:
    a=min(x[k]['ms'] for x in A); b=min(x[k]['ms'] for x in B)
    ratios.append(b/a); rows.append((b/a,k,a,b,A[0][k]['plan']))
print('median B/A',st.median(ratios),'min',min(ratios),'max',max(ratios), 'n',len(ratios))
rows.sort()
for r in rows[:8]+rows[-8:]: print('%.3f'%r[0], r[1], '%.4f %.4f'%(r[2],r[3]), r[4])
