#!/usr/bin/env python3
"""Performance comparison of two builds run alternately (benchmarks/regress.sh).

Each round of each build is one Google Benchmark JSON file with repetitions; a round's value of a
benchmark is the median of its repetitions. Over the rounds a build has a median and a range
(smallest to largest round value). A benchmark is

  slower  when the new median is more than the threshold (2%) above the base median AND the two
          ranges do not overlap (every new round slower than every base round),
  faster  likewise the other way,
  same    otherwise,
  new / missing when only one build has it.

Times are compared; a rate counter would only invert the sign. Exit status: 0 nothing slower,
1 something slower, 2 bad usage or unreadable input.

  bench_compare.py --base B1.json B2.json ... --new N1.json N2.json ... [--threshold 0.02]
  bench_compare.py --reference REF.json --new N1.json ...   (a stored reference, see write_reference)
"""
import argparse
import json
import statistics
import sys


# Fields of a benchmark entry that are not counters.
NOT_COUNTERS = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
                "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
                "family_index", "per_family_instance_index", "aggregate_unit", "label",
                "error_occurred", "error_message"}


def round_values(data):
    """name -> (the round's time: the median of its repetitions' real_time in seconds, and the
    median of each counter)."""
    scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    reps, counters = {}, {}
    for b in data.get("benchmarks", []):
        if b.get("run_type") == "aggregate" or b.get("aggregate_name"):
            continue
        if b.get("error_occurred"):
            continue
        name = b.get("run_name", b["name"])
        reps.setdefault(name, []).append(float(b["real_time"]) * scale[b.get("time_unit", "ns")])
        for k, v in b.items():
            if k not in NOT_COUNTERS and isinstance(v, (int, float)):
                counters.setdefault(name, {}).setdefault(k, []).append(float(v))
    return {name: (statistics.median(v),
                   {k: statistics.median(c) for k, c in counters.get(name, {}).items()})
            for name, v in reps.items()}


def summarize(rounds):
    """rounds: list of {name: (time, counters)} -> {name: {median, min, max, rounds, counters}}
    (times in seconds; counters: the median over the rounds)."""
    out = {}
    names = set().union(*rounds) if rounds else set()
    for name in names:
        values = [r[name][0] for r in rounds if name in r]
        keys = set().union(*(r[name][1] for r in rounds if name in r))
        counters = {k: statistics.median([r[name][1][k] for r in rounds
                                          if name in r and k in r[name][1]]) for k in keys}
        out[name] = {"median": statistics.median(values), "min": min(values),
                     "max": max(values), "rounds": len(values), "counters": counters}
    return out


def verdict(base, new, threshold):
    if base is None:
        return "new", None
    if new is None:
        return "missing", None
    change = (new["median"] - base["median"]) / base["median"] if base["median"] > 0 else 0.0
    if change > threshold and new["min"] > base["max"]:
        return "slower", change
    if change < -threshold and new["max"] < base["min"]:
        return "faster", change
    return "same", change


def compare(base, new, threshold=0.02):
    """base, new: summaries -> [(name, verdict, change)] sorted by name."""
    return [(name, *verdict(base.get(name), new.get(name), threshold))
            for name in sorted(set(base) | set(new))]


def load(paths):
    rounds, devices = [], set()
    for p in paths:
        with open(p) as f:
            data = json.load(f)
        devices.add(data.get("context", {}).get("device", "?"))
        rounds.append(round_values(data))
    return rounds, devices


def format_table(rows, base, new):
    out = ["| benchmark | base median | new median | change | base range | new range | verdict |",
           "|---|---|---|---|---|---|---|"]

    def t(x):
        return "" if x is None else f"{x:.4g}"

    for name, v, change in rows:
        b, n = base.get(name), new.get(name)
        out.append(f"| {name} | {t(b and b['median'])} | {t(n and n['median'])} | "
                   f"{'' if change is None else f'{change * 100:+.1f}%'} | "
                   f"{'' if not b else t(b['min']) + '..' + t(b['max'])} | "
                   f"{'' if not n else t(n['min']) + '..' + t(n['max'])} | {v} |")
    return "\n".join(out) + "\n"


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--base", nargs="+", help="JSON files of the base build, one per round")
    p.add_argument("--reference", help="a stored reference summary instead of --base")
    p.add_argument("--new", nargs="+", required=True, help="JSON files of the new build")
    p.add_argument("--threshold", type=float, default=0.02)
    p.add_argument("--summary", help="also write the new build's summary here (JSON): the form "
                   "benchmarks/reference/<device>.json keeps")
    p.add_argument("--describe", action="append", default=[], metavar="KEY=VALUE",
                   help="a field of the summary (commit, command, date, rounds, repetitions)")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    if bool(a.base) == bool(a.reference):
        print("give exactly one of --base and --reference", file=sys.stderr)
        return 2
    try:
        new_rounds, new_dev = load(a.new)
        if a.base:
            base_rounds, base_dev = load(a.base)
            base = summarize(base_rounds)
        else:
            with open(a.reference) as f:
                ref = json.load(f)
            base, base_dev = ref["benchmarks"], {ref.get("device", "?")}
    except (OSError, ValueError, KeyError) as e:
        print(f"cannot read the results: {e}", file=sys.stderr)
        return 2
    if base_dev != new_dev:
        print(f"warning: devices differ ({sorted(base_dev)} vs {sorted(new_dev)}): compare only "
              f"numbers from the same device kind", file=sys.stderr)
    new = summarize(new_rounds)
    rows = compare(base, new, a.threshold)
    sys.stdout.write(format_table(rows, base, new))
    slower = [name for name, v, _ in rows if v == "slower"]
    counts = {k: sum(1 for _, v, _ in rows if v == k)
              for k in ("faster", "slower", "same", "new", "missing")}
    print("\n" + ", ".join(f"{k}: {c}" for k, c in counts.items()))
    if a.summary:
        summary = {"device": sorted(new_dev)[0] if new_dev else "?", "benchmarks": new}
        for item in a.describe:
            key, _, value = item.partition("=")
            summary[key] = value
        with open(a.summary, "w") as f:
            json.dump(summary, f, indent=1, sort_keys=True)
            f.write("\n")
    return 1 if slower else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
