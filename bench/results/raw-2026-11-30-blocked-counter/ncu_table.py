# Pairs each launch in call1/blocked-ncu.txt (every variant ran twice in `once` mode: the checked
# run and the timed one) with its row of call1/blocked.txt; prints the second launch's figures.
import re
rows = [l for l in open('call1/blocked.txt') if l.startswith('| identity') or l.startswith('| resort')]
txt = open('call1/blocked-ncu.txt').read()
blocks = re.split(r'\n  void gqc?<4>', txt)[1:]
def metric(b, name):
    m = re.search(name + r'\s+(\S+)\s+([\d.,]+)', b)
    return float(m.group(2).replace(',', '')) if m else float('nan')
print('| indices | blocks take tiles | order | x memcpy (timed) | DRAM read GB | DRAM write GB | kernel ms | L2 read sectors (M) | of them hits (M) |')
print('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |')
assert len(blocks) == 2 * len(rows), (len(blocks), len(rows))
for i, r in enumerate(rows):
    c = [x.strip() for x in r.strip().strip('|').split('|')]
    b = blocks[2 * i + 1]
    print(f'| {c[0]} | {c[1]} | {c[2]} | {c[4]} | {metric(b, "dram__bytes_read.sum"):.2f} | {metric(b, "dram__bytes_write.sum"):.2f} | '
          f'{metric(b, "gpu__time_duration.sum"):.2f} | {metric(b, "lts__t_sectors_srcunit_tex_op_read.sum")/1e6:.1f} | '
          f'{metric(b, "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum")/1e6:.1f} |')
