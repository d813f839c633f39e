import json,collections,sys
base=sys.argv[1]
ratios=collections.defaultdict(list)
for i in (1,2,3):
    d=json.load(open(f'{base}/latency-{i}.json'))
    m={}
    for b in d['benchmarks']:
        if b.get('aggregate_name')=='median':
            p=b['run_name'].split('/')
            m[(p[1],p[2],p[3])]=(b['real_time']*1000, b.get('enqueue_us'))
    for (impl,n,w),(t,e) in m.items():
        if impl=='strata': ratios[(int(n),w,'default')].append(t/m[('hand_float4',n,w)][0])
        if impl=='strata_stream': ratios[(int(n),w,'stream')].append(t/m[('hand_float4_stream',n,w)][0])
        if impl=='strata' : ratios[(int(n),w,'thrust')].append(t/m[('thrust_zip',n,w)][0]) if ('thrust_zip',n,w) in m else None
for k in sorted(ratios):
    r=sorted(ratios[k]); print(k, ' '.join(f'{x:.3f}' for x in ratios[k]), 'median', f'{r[len(r)//2]:.3f}')
