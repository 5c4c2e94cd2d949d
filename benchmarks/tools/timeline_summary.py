#!/usr/bin/env python3
"""Summarise a kernel_timeline.cpp CSV per repeating unit (e.g. a block step).

Usage: timeline_summary.py TIMELINE.csv MARKER [--skip K] [--last L] [--top T]

A unit starts at each dispatch of the kernel named MARKER (e.g. hayate::gravity::block_levels,
the first kernel of a block step) and ends at the next. For the units kept (all but the first
K; of those the last L), prints per unit: wall time, time inside kernel / copy / fence spans,
the host time between spans, the spans by name, and the largest host gaps by the spans around
them, with the allocations and deallocations that fell inside. Times in microseconds."""
import argparse
import collections
import csv
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("timeline")
    ap.add_argument("marker")
    ap.add_argument("--skip", type=int, default=0)
    ap.add_argument("--last", type=int, default=0)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()
    events = []
    with open(args.timeline) as f:
        for row in csv.DictReader(f):
            events.append((row["kind"], float(row["begin_us"]), float(row["end_us"]),
                           int(row["bytes"]), row["name"]))
    events.sort(key=lambda e: e[1])
    starts = [i for i, e in enumerate(events) if e[0] == "k" and e[4] == args.marker]
    if len(starts) < 2:
        sys.exit(f"fewer than two '{args.marker}' kernels in {args.timeline}")
    units = list(zip(starts[:-1], starts[1:]))[args.skip:]
    if args.last > 0:
        units = units[-args.last:]
    if not units:
        sys.exit("no units left after --skip/--last")
    wall = busy = 0.0
    by_kind = collections.Counter()
    spans = collections.defaultdict(lambda: [0.0, 0])
    gaps = collections.defaultdict(lambda: [0.0, 0, collections.Counter()])
    for a, b in units:
        t0, t1 = events[a][1], events[b][1]
        wall += t1 - t0
        cursor, prev = t0, "(unit start)"
        pending = collections.Counter()
        for kind, beg, end, nbytes, name in events[a:b]:
            if kind in "ad":
                pending[f"{'alloc' if kind == 'a' else 'free'} {name} ({nbytes >> 10} KiB)"] += 1
                continue
            if beg > cursor:
                g = gaps[(prev, name)]
                g[0] += beg - cursor
                g[1] += 1
                g[2].update(pending)
            pending.clear()
            if end > cursor:
                d = end - max(beg, cursor)
                busy += d
                by_kind[kind] += d
                cursor = end
            spans[(kind, name)][0] += end - beg
            spans[(kind, name)][1] += 1
            prev = name
        if t1 > cursor:
            g = gaps[(prev, "(unit end)")]
            g[0] += t1 - cursor
            g[1] += 1
            g[2].update(pending)
    n = len(units)
    print(f"{n} units of '{args.marker}'")
    print(f"wall {wall / n:.1f} us per unit; in spans {busy / n:.1f} "
          f"(kernels {by_kind['k'] / n:.1f}, copies {by_kind['c'] / n:.1f}, "
          f"fences {by_kind['f'] / n:.1f}); between spans {(wall - busy) / n:.1f}")
    print("\nspans per unit (us, count):")
    for (kind, name), (t, c) in sorted(spans.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"  {t / n:10.1f} {c / n:6.2f}  {kind} {name}")
    print("\nhost time between spans per unit (us, count): after -> before")
    for (prev, nxt), (t, c, allocs) in sorted(gaps.items(), key=lambda kv: -kv[1][0])[:args.top]:
        print(f"  {t / n:10.1f} {c / n:6.2f}  {prev} -> {nxt}")
        for what, k in allocs.most_common(4):
            print(f"{'':22}{k / n:.2f}x {what}")


if __name__ == "__main__":
    main()
