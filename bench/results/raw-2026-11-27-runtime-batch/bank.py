# Bank-conflict model of the staged-columns to-AoS assembly (staged-columns.diff): wavefronts per
# warp-wide shared read, averaged, for the probe's shapes and a few slice skews. python3 bank.py
import itertools
def tile_records(stride):
    fit=min(24576//stride,1024)
    return fit//256*256 if fit>=256 else max(fit//32*32,32)
def model(stride, fields, skew):
    tile=tile_records(stride)
    # byte map
    code={}
    for k,(off,sz) in enumerate(fields):
        for j in range(sz): code[off+j]=(k,j)
    at=0; staged=[]
    for k,(off,sz) in enumerate(fields):
        at += 16*skew(k)
        staged.append(at); at += (tile*sz+15)//16*16
    words=tile*stride//16
    total=0; ideal=0
    for base in range(0, min(words, 2048), 32):
        for g in range(4):
            for b in range(4):
                addrs=[]
                for lane in range(32):
                    i=base+lane
                    if i>=words: continue
                    p=16*i+4*g+b
                    r,o=divmod(p,stride)
                    if o not in code: continue
                    k,j=code[o]; sz=fields[k][1]
                    a=staged[k]+r*sz+j
                    addrs.append(a//4)
                banks={}
                for a in set(addrs): banks.setdefault(a%32,set()).add(a)
                total+= max((len(v) for v in banks.values()), default=0)
                ideal+=1 if addrs else 0
    return total/ideal
shapes={'particle':(28,[(4*k,4) for k in range(7)]),'mixed':(16,[(0,8),(8,4),(12,2),(14,1)]),'three':(4,[(0,1),(1,1),(2,1)]),
'two':(8,[(0,4),(4,4)]),'f24':(96,[(4*k,4) for k in range(24)]),'p20':(20,[(0,8),(8,2),(10,2),(12,2),(14,2),(16,4)]),'f4f':(32,[(0,16),(16,4)])}
for name,(s,f) in shapes.items():
    print(name, 'none %.2f'%model(s,f,lambda k:0), ' k %.2f'%model(s,f,lambda k:1 if k else 0))
print('---')
for name,(s,f) in shapes.items():
    print(name, ' k%%4==0: %.2f'%model(s,f,lambda k:1 if (k and k%4==0) else 0), ' 2: %.2f'%model(s,f,lambda k:2 if k else 0), ' 3: %.2f'%model(s,f,lambda k:3 if k else 0),' 5: %.2f'%model(s,f,lambda k:5 if k else 0))
