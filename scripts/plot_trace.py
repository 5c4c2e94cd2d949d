#!/usr/bin/env python3
"""Plots columns of a trace.csv as an SVG line chart (no plotting library needed).

usage: plot_trace.py TRACE.csv OUT.svg COLUMN [COLUMN ...] [--title TEXT] [--tmax T]
"""
import csv
import sys

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def main(argv):
    title, tmax, args = "", None, []
    i = 0
    while i < len(argv):
        if argv[i] == "--title":
            title, i = argv[i + 1], i + 2
        elif argv[i] == "--tmax":
            tmax, i = float(argv[i + 1]), i + 2
        else:
            args.append(argv[i])
            i += 1
    trace, out, columns = args[0], args[1], args[2:]
    rows = list(csv.DictReader(open(trace)))
    if tmax is not None:
        rows = [r for r in rows if float(r["t"]) <= tmax]
    t = [float(r["t"]) for r in rows]
    series = {c: [float(r[c]) for r in rows] for c in columns}
    lo = min(min(v) for v in series.values())
    hi = max(max(v) for v in series.values())
    if hi == lo:
        hi = lo + 1
    W, H, L, R, T, B = 720, 300, 60, 150, 30, 40
    sx = lambda x: L + (x - t[0]) / (t[-1] - t[0]) * (W - L - R)
    sy = lambda y: T + (hi - y) / (hi - lo) * (H - T - B)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="18" text-anchor="middle" font-size="13">{title}</text>',
           f'<line x1="{L}" y1="{H - B}" x2="{W - R}" y2="{H - B}" stroke="black"/>',
           f'<line x1="{L}" y1="{T}" x2="{L}" y2="{H - B}" stroke="black"/>']
    for k in range(5):
        y = lo + (hi - lo) * k / 4
        svg.append(f'<text x="{L - 5}" y="{sy(y) + 4}" text-anchor="end">{y:.4g}</text>')
        x = t[0] + (t[-1] - t[0]) * k / 4
        svg.append(f'<text x="{sx(x)}" y="{H - B + 15}" text-anchor="middle">{x:.4g}</text>')
    svg.append(f'<text x="{(L + W - R) / 2}" y="{H - 5}" text-anchor="middle">t (ms)</text>')
    step = max(1, len(t) // 2000)
    for n, (c, v) in enumerate(series.items()):
        pts = " ".join(f"{sx(t[i]):.1f},{sy(v[i]):.1f}" for i in range(0, len(t), step))
        colour = COLOURS[n % len(COLOURS)]
        svg.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1" points="{pts}"/>')
        svg.append(f'<text x="{W - R + 8}" y="{T + 14 * n + 10}" fill="{colour}">{c}</text>')
    svg.append("</svg>")
    open(out, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
