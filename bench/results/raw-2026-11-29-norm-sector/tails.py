import json,sys
def load(f): 
    d=json.load(open(f)); m=d['memcpy_gbps']
    return {(r['workload'],r['dtype'],r['hidden']):(r['ms'],r['gbps']/m) for r in d['results'] if r.get('variant')=='strata'}, m
A=[load(f'sweep-A{i}.json') for i in (1,2)]; B=[load(f'sweep-B{i}.json') for i in (1,2)]
for x in A+B:
    met=sum(1 for k,v in x[0].items() if v[1] >= (0.90 if k[1]=='fp32' else 0.88)); print('memcpy %.1f met %d'%(x[1],met))
for k in A[0][0]:
    if k[2] in (3,1023,1025,4095,4097) :
        print(k, ' A %.3f %.3f'%(A[0][0][k][1],A[1][0][k][1]), ' B %.3f %.3f'%(B[0][0][k][1],B[1][0][k][1]))
