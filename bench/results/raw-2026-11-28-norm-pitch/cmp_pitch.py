# Compares pitch_probe runs of two builds (call7/): per case, the speed of the new build against
# the base (sum of the two runs' times), and the new build's ratio to a cudaMemcpy of the same bytes.
import sys


def load(f):
    d = {}
    for line in open(f):
        c = [x.strip() for x in line.split('|')[1:-1]]
        if len(c) < 11 or not c[1].isdigit():
            continue
        d[(c[0], int(c[1]), int(c[2]), c[5])] = (float(c[7]), float(c[9]), float(c[6]))
    return d


d = sys.argv[1] if len(sys.argv) > 1 else 'call7'
B = [load(f'{d}/pitch-base-{i}.md') for i in (0, 1)]
N = [load(f'{d}/pitch-new-{i}.md') for i in (0, 1)]
print('| dtype | hidden | pitch align B (0: dense) | MB moved | layer: base / new speed | rms: base / new speed | layer x same-bytes copy (new) | rms x same-bytes copy (new) |')
print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for k in sorted(B[0]):
    lb, ln = sum(b[k][0] for b in B), sum(n[k][0] for n in N)
    rb, rn = sum(b[k][1] for b in B), sum(n[k][1] for n in N)
    cp = sum(n[k][2] for n in N)
    print(f'| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {lb / ln:.3f} | {rb / rn:.3f} | {cp / ln:.3f} | {cp / rn:.3f} |')
