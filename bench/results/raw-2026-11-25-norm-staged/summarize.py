import json,sys
d=json.load(open(sys.argv[1])); mc=d['memcpy_gbps']
def ratio(r,ms): return r['bytes']/(ms*1e-3)/1e9/mc
tot=0; met_old=0; met_best_staged=0; met_chosen=0; met_any=0
rows=[]
for r in d['results']:
    tgt=0.90 if r['dtype']=='fp32' else 0.88
    cons=r['considered']
    rp=[c for c in cons if c['plan'].startswith('rows')]
    sp=[c for c in cons if c['plan'].startswith('staged')]
    if not rp: continue
    # old choice: first max score among rows
    best=-2; old=None
    for c in rp:
        if c['score']>best+1e-9: best=c['score']; old=c
    bs=min(sp,key=lambda c:c['ms']) if sp else None
    br=min(rp,key=lambda c:c['ms'])
    tot+=1
    ro=ratio(r,old['ms']); rs=ratio(r,bs['ms']) if bs else 0; rc=ratio(r,r['ms']); rbr=ratio(r,br['ms'])
    met_old+=ro>=tgt; met_best_staged+=max(rs,rbr)>=tgt; met_chosen+=rc>=tgt
    rows.append((r['workload'],r['dtype'],r['hidden'],ro,rbr,rs,rc,bs['plan'] if bs else '', r['plan']))
print("points",tot,"met old-choice",met_old,"met best(any)",met_best_staged,"met chosen",met_chosen)
for x in rows: print("%-10s %s %6d old %.3f bestrows %.3f beststaged %.3f chosen %.3f | %s | %s"%x)
# Chooser regret among row plans: the chooser's row plan's time over the fastest row plan's.
reg = []
for r in d['results']:
    rp = [c for c in r['considered'] if c['plan'].startswith('rows')]
    if not rp: continue
    best = -2
    for c in rp:
        if c['score'] > best + 1e-9: best = c['score']; chosen = c
    reg.append(chosen['ms'] / min(c['ms'] for c in rp) - 1)
print("chooser regret among row plans: mean %.2f%%, %d points over 3%%, worst %.1f%%" % (100 * sum(reg) / len(reg), sum(x > 0.03 for x in reg), 100 * max(reg)))
