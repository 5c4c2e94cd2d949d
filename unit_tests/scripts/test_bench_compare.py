#!/usr/bin/env python3
"""Checks the regression comparison on synthetic benchmark results."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(__file__), "..", "..", "scripts")
sys.path.insert(0, SCRIPTS)
from bench_compare import compare  # noqa: E402
from bench_table import table  # noqa: E402


def result(times, device="H100"):
    bms = []
    for name, t in times.items():
        for rep in (t * 1.2, t, t * 0.9):  # raw repetitions are ignored in favour of the median
            bms.append({"name": name, "run_name": name, "real_time": rep, "time_unit": "us"})
        bms.append({"name": name + "_median", "run_name": name, "aggregate_name": "median",
                    "real_time": t, "time_unit": "us", "rate": 1.0 / t})
    return {"context": {"device": device}, "benchmarks": bms}


def main():
    base = result({"a": 100.0, "b": 100.0, "c": 100.0, "gone": 5.0})
    new = result({"a": 80.0, "b": 103.0, "c": 120.0, "fresh": 1.0})
    got = {n: v for n, v, _ in compare(base, new, 0.05)}
    expect = {"a": "faster", "b": "same", "c": "slower", "gone": "missing", "fresh": "new"}
    assert got == expect, got
    assert "| a | 80 | us | rate=0.0125 |" in table(new), table(new)
    with tempfile.TemporaryDirectory() as d:
        paths = []
        for i, data in enumerate((base, new)):
            paths.append(os.path.join(d, f"{i}.json"))
            with open(paths[-1], "w") as f:
                json.dump(data, f)
        run = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench_compare.py"), *paths],
                             capture_output=True, text=True)
        assert run.returncode == 1, run  # one benchmark got slower
        assert "slower" in run.stdout and "+20.0%" in run.stdout, run.stdout
        same = subprocess.run([sys.executable, os.path.join(SCRIPTS, "bench_compare.py"),
                               paths[0], paths[0]], capture_output=True, text=True)
        assert same.returncode == 0, same
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
