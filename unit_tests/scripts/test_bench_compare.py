#!/usr/bin/env python3
"""The A/B rule of scripts/bench_compare.py on synthetic rounds: the noise rule (median beyond 2%
AND no overlap of the ranges), new and missing benchmarks, the stored-reference form, the table
of scripts/bench_table.py, and the exit codes."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
from bench_compare import compare, round_values, summarize  # noqa: E402
from bench_table import table  # noqa: E402


def round_json(times_us, device="NVIDIA H200", noise=(1.0, 1.01, 0.99, 1.02, 0.98)):
    """One round: 5 repetitions per benchmark (median = the given time) plus an aggregate row
    that must be ignored."""
    bms = []
    for name, t in times_us.items():
        for k, f in enumerate(noise):
            bms.append({"name": name, "run_name": name, "run_type": "iteration",
                        "repetition_index": k, "real_time": t * f, "time_unit": "us",
                        "atom_steps_per_second": 1e6 / (t * f)})
        bms.append({"name": name + "_median", "run_name": name, "run_type": "aggregate",
                    "aggregate_name": "median", "real_time": 1e9, "time_unit": "us"})
    return {"context": {"device": device}, "benchmarks": bms}


def summary(rounds):
    return summarize([round_values(r) for r in rounds])


def check_rule():
    base = summary([round_json({"a": 100, "b": 100, "c": 100, "d": 100, "gone": 5}),
                    round_json({"a": 101, "b": 99, "c": 100, "d": 98, "gone": 5}),
                    round_json({"a": 99, "b": 101, "c": 100, "d": 102, "gone": 5})])
    new = summary([round_json({"a": 90, "b": 103, "c": 110, "d": 99, "fresh": 1}),
                   round_json({"a": 91, "b": 104, "c": 111, "d": 110, "fresh": 1}),
                   round_json({"a": 89, "b": 103.5, "c": 109, "d": 106, "fresh": 1})])
    got = {name: v for name, v, _ in compare(base, new, 0.02)}
    # a: 10% faster, ranges apart; b: 3.5% slower, ranges apart; c: 10% slower;
    # d: median 6% slower but one new round (99) inside the base range: noise, not slower.
    expect = {"a": "faster", "b": "slower", "c": "slower", "d": "same", "gone": "missing",
              "fresh": "new"}
    assert got == expect, got
    # Under the threshold with separate ranges is still the same.
    tight = summary([round_json({"e": 100.0}), round_json({"e": 100.1})])
    moved = summary([round_json({"e": 101.0}), round_json({"e": 101.1})])
    assert compare(tight, moved, 0.02)[0][1] == "same"
    # Times are seconds; counters are medians over the rounds.
    assert abs(base["c"]["median"] - 100e-6) < 1e-12, base["c"]
    assert abs(base["a"]["counters"]["atom_steps_per_second"] - 1e6 / 100) < 1e-6


def run(args):
    return subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench_compare.py"), *args],
                          capture_output=True, text=True)


def check_command_line():
    with tempfile.TemporaryDirectory() as d:
        def write(name, data):
            path = os.path.join(d, name)
            with open(path, "w") as f:
                json.dump(data, f)
            return path

        b = [write(f"b{k}.json", round_json({"x": 100, "y": 50})) for k in range(3)]
        same = [write(f"s{k}.json", round_json({"x": 100.5, "y": 50})) for k in range(3)]
        slow = [write(f"n{k}.json", round_json({"x": 130, "y": 50})) for k in range(3)]
        r = run(["--base", *b, "--new", *same])
        assert r.returncode == 0, r
        summary_path = os.path.join(d, "summary.json")
        r = run(["--base", *b, "--new", *slow, "--summary", summary_path,
                 "--describe", "commit=abc123", "--describe", "command=regress.sh A B OUT"])
        assert r.returncode == 1, r
        assert "| x |" in r.stdout and "+30.0%" in r.stdout and "slower" in r.stdout, r.stdout
        # The summary is a reference: later builds compare against it.
        with open(summary_path) as f:
            ref = json.load(f)
        assert ref["commit"] == "abc123" and ref["device"] == "NVIDIA H200", ref
        assert run(["--reference", summary_path, "--new", *slow]).returncode == 0
        assert run(["--reference", summary_path, "--new", *b]).returncode == 0  # faster
        md = table(ref)
        assert "commit: abc123" in md and "| x | 130 us |" in md, md
        # Bad usage and unreadable input: exit 2.
        assert run(["--new", *b]).returncode == 2
        assert run(["--base", os.path.join(d, "none.json"), "--new", *b]).returncode == 2


def main():
    check_rule()
    check_command_line()
    print("2 passed, 0 failed")


if __name__ == "__main__":
    main()
