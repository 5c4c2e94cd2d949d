#!/usr/bin/env python3
"""Regression check: compares a new Google Benchmark JSON with a stored baseline of the same
device. Uses medians of repetitions; a benchmark is faster/slower when its median time moved by
more than the threshold. Exit 1 if any benchmark is slower (for CI gates), 2 on bad usage."""
import argparse
import json
import sys

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from bench_table import medians  # noqa: E402


def compare(baseline, new, threshold):
    base, cur = medians(baseline), medians(new)
    results = []
    for name in sorted(set(base) | set(cur)):
        if name not in base:
            results.append((name, "new", None))
            continue
        if name not in cur:
            results.append((name, "missing", None))
            continue
        old_t, new_t = float(base[name]["real_time"]), float(cur[name]["real_time"])
        change = (new_t - old_t) / old_t if old_t > 0 else 0.0
        verdict = "same"
        if change > threshold:
            verdict = "slower"
        elif change < -threshold:
            verdict = "faster"
        results.append((name, verdict, change))
    return results


def main(argv):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("baseline")
    p.add_argument("new")
    p.add_argument("--threshold", type=float, default=0.05,
                   help="relative change of the median time that counts (default 0.05)")
    a = p.parse_args(argv)
    with open(a.baseline) as f:
        baseline = json.load(f)
    with open(a.new) as f:
        new = json.load(f)
    bdev = baseline.get("context", {}).get("device"), new.get("context", {}).get("device")
    if bdev[0] != bdev[1]:
        print(f"warning: devices differ ({bdev[0]} vs {bdev[1]}): compare only the same kind",
              file=sys.stderr)
    slower = 0
    for name, verdict, change in compare(baseline, new, a.threshold):
        shown = "" if change is None else f"{change * 100:+.1f}%"
        print(f"{verdict:8s} {shown:>8s}  {name}")
        slower += verdict == "slower"
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
