# The H200 and H100 gather results side by side: run from bench/results/ (writes nvidia-h200-2026-11-24-gather.png).
import json, matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt
fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
for ax, (g, title) in zip(axes, [('h200', 'NVIDIA H200'), ('h100', 'NVIDIA H100 80GB HBM3')]):
    d = json.load(open(f'raw-2026-11-24-gather/{g}/gather.json'))
    rows = [b for b in d['benchmarks'] if b.get('aggregate_name') == 'median']
    mem = [b for b in rows if b['name'].startswith('memcpy')][0]['bytes_per_second']
    kinds = ['resort', 'random', 'identity']
    series = ['permute/strata', 'permute/column_gather', 'gather/strata', 'gather/strata_columns', 'gather/strata_records']
    w = 0.16
    for si, s in enumerate(series):
        xs, ys = [], []
        for ki, k in enumerate(kinds):
            m = [b for b in rows if b['name'].startswith(s + '/') and f'/{k}/' in b['name']]
            if m: xs.append(ki + (si - 2) * w); ys.append(m[0]['bytes_per_second'] / mem)
        ax.bar(xs, ys, w, label=s)
    ax.axhline(0.80, color='k', ls='--', lw=1, label='target 0.80')
    ax.set_xticks(range(3)); ax.set_xticklabels(kinds); ax.set_title(f'{title}, 2^26 particles (7 fp32 columns)')
    ax.set_ylabel('x cudaMemcpy (records read + written)')
axes[0].legend(fontsize=8)
fig.tight_layout(); fig.savefig('nvidia-h200-2026-11-24-gather.png', dpi=110)
