#!/usr/bin/env python3
"""Short Markdown table of a Google Benchmark JSON file: median time and rate counters."""
import json
import sys


def medians(data):
    """name -> benchmark entry, taking medians where repetitions were aggregated."""
    rows = {}
    for b in data.get("benchmarks", []):
        agg = b.get("aggregate_name")
        if agg not in (None, "median"):
            continue
        name = b.get("run_name", b["name"])
        if agg is None and name in rows:
            continue
        rows[name] = b
    return rows


def fmt(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v)


SKIP = {"name", "run_name", "run_type", "repetitions", "repetition_index", "threads",
        "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name", "family_index",
        "per_family_instance_index", "aggregate_unit"}


def table(data):
    rows = medians(data)
    ctx = data.get("context", {})
    out = [f"host: {ctx.get('host_name', '?')}, date: {ctx.get('date', '?')}, "
           f"kokkos: {ctx.get('kokkos', '?')}", "",
           "| benchmark | median time | unit | counters |", "|---|---|---|---|"]
    for name, b in rows.items():
        counters = ", ".join(f"{k}={fmt(v)}" for k, v in b.items()
                             if k not in SKIP and isinstance(v, (int, float)))
        out.append(f"| {name} | {fmt(float(b['real_time']))} | {b.get('time_unit', '')} | "
                   f"{counters} |")
    return "\n".join(out) + "\n"


def main(argv):
    if len(argv) != 2:
        print("usage: bench_table.py RESULT.json", file=sys.stderr)
        return 2
    with open(argv[1]) as f:
        sys.stdout.write(table(json.load(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
