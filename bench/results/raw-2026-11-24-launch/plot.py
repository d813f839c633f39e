# Plots strata::transform's per-call time over the hand float4 kernel's (median of the per-run
# ratios), before / after, for the H200 and H100 runs in h200/ and h100/.
import glob, json, re, statistics as st, sys
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt

def ratios(folder):
    r = {}
    for f in sorted(glob.glob(folder + '/latency-*-*.json')):
        side = re.search(r'latency-\d+-(\w+)\.json', f).group(1)
        t = {}
        for b in json.load(open(f))['benchmarks']:
            if b.get('aggregate_name') == 'median':
                p = b['name'].split('/')
                t[(p[1], int(p[2]), p[3])] = b['real_time']
        for (v, n, w), x in t.items():
            if v == 'strata': r.setdefault((side, w), {}).setdefault(n, []).append(x / t[('hand_float4', n, w)])
            if v == 'strata_stream': r.setdefault((side, 'particle, caller\'s stream'), {}).setdefault(n, []).append(x / t[('hand_float4_stream', n, w)])
    return r

fig, axes = plt.subplots(1, 2, figsize=(11, 4), sharey=True)
for ax, (gpu, folder) in zip(axes, [('H200', 'h200'), ('H100 80GB HBM3', 'h100')]):
    r = ratios(folder)
    for (side, w), byn in sorted(r.items()):
        ns = sorted(byn)
        ax.plot(ns, [st.median(byn[n]) for n in ns], marker='o', linestyle='--' if side == 'before' else '-', label=f'{w} ({side})')
    ax.axhline(1.05, color='red', linewidth=0.8)
    ax.axhline(1.0, color='gray', linewidth=0.5)
    ax.set_xscale('log', base=2)
    ax.set_title(f'NVIDIA {gpu}, 2026-11-24')
    ax.set_xlabel('records per call')
axes[0].set_ylabel('strata::transform time / hand float4 kernel')
axes[1].legend(fontsize=7)
fig.suptitle('Back-to-back small transforms: before (runtime launch) and after (driver launch, handle per context); red: target 1.05')
fig.tight_layout()
fig.savefig(sys.argv[1] if len(sys.argv) > 1 else 'launch.png', dpi=110)
