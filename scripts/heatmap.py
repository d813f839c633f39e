#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws an access heatmap written by strata's access_counter::write_heatmap as a PNG: one row of
pixels per record (AoS-like layouts) or block (AoSoA), one pixel per granule of bytes, colour the
number of accesses (black: untouched), as LLAMA's Heatmap mapping draws its counts.

  heatmap.py HEATMAP.txt OUT.png [--row-bytes B] [--rows N]
      --row-bytes: bytes a row (default: the least multiple of the file's record_bytes, a record
                   or block, that is whole granules; 256 for SoA)
      --rows: at most this many rows drawn from the start (default 256)
Needs matplotlib and numpy (pip install matplotlib).
"""
import argparse
import math
import re
import sys


def read(path):
    with open(path) as f:
        head = f.readline()
        m = re.match(r"# strata heatmap granule=(\d+) span=(\d+) record_bytes=(\d+)", head)
        if not m:
            sys.exit(f"heatmap.py: {path} is not a strata heatmap (first line: {head.strip()!r})")
        counts = [int(line) for line in f if line.strip()]
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), counts


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("heatmap")
    p.add_argument("png")
    p.add_argument("--row-bytes", type=int, default=0)
    p.add_argument("--rows", type=int, default=256)
    a = p.parse_args()
    granule, span, record_bytes, counts = read(a.heatmap)
    # A row: a record or block rounded up to whole granules together (lcm), unless given.
    row_bytes = a.row_bytes or (math.lcm(record_bytes, granule) if record_bytes else 256)
    if row_bytes % granule:
        sys.exit(f"heatmap.py: --row-bytes {row_bytes} is not a multiple of the granule ({granule} bytes)")
    try:
        import matplotlib
        import numpy as np
    except ImportError:
        sys.exit("heatmap.py: needs matplotlib and numpy (pip install matplotlib)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    width = row_bytes // granule
    rows = min(a.rows, (len(counts) + width - 1) // width)
    grid = np.zeros((rows, width))
    flat = np.array(counts[: rows * width], dtype=float)
    grid.flat[: flat.size] = flat
    fig, ax = plt.subplots(figsize=(max(4, width / 8), max(3, rows / 16)))
    im = ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="inferno")
    ax.set_xlabel(f"byte / {granule}")
    ax.set_ylabel(f"row of {row_bytes} bytes")
    fig.colorbar(im, ax=ax, label="accesses")
    fig.savefig(a.png, dpi=100, bbox_inches="tight")
    print(f"heatmap.py: {a.png}: {rows} rows of {width} granules ({span} bytes counted)")


if __name__ == "__main__":
    main()
