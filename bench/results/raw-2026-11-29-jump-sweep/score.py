# Sets choice_model.txt's picks against the faster way measured in call1/sweep.txt: how many
# right, and the summed and worst slowdown of the picked way against the faster one.
import sys
meas={}
rec=None
for l in open('call1/sweep.txt'):
    if l.startswith('### '): rec=l.split()[1]
    elif l.startswith('| ') and rec and not l.startswith('| family') and not l.startswith('| ---'):
        c=[x.strip() for x in l.strip().strip('|').split('|')]
        meas[(c[0],rec)]=(c[8], float(c[3]), float(c[4]))
ok={'far count':0,'window count':0}; tot=0; loss=dict(ok); worst=dict(ok)
rows=[]
for l in open(sys.argv[1]):
    c=[x.strip() for x in l.strip().strip('|').split('|')]
    if len(c)<6 or c[0] in('family','---'): continue
    m=meas.get((c[0],c[1]))
    if not m: continue
    tot+=1
    best=min(m[1],m[2])
    for k,v in (('far count',c[4]),('window count',c[5])):
        t = m[1] if v=='columns' else m[2]
        ok[k]+= v==m[0]; loss[k]+= t/best-1; worst[k]=max(worst[k],t/best)
        if k=='window count' and v!=m[0]: rows.append((c[0],c[1],c[2],c[3],v,m))
print(tot, 'right', ok, 'summed slowdown', {k:round(v,2) for k,v in loss.items()}, 'worst', {k:round(v,2) for k,v in worst.items()})
for r in rows: print(r)
