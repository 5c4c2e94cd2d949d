#!/usr/bin/env python3
"""The instruction-count gate: runs the cases of hayate_icount (benchmarks/icount/icount.cpp)
under valgrind's callgrind, counting only the measured steps, and compares the counts with
benchmarks/reference/icount.json. A case that grew by more than the reference's tolerance (2%)
fails the gate with a table of what grew. Counts are deterministic for a given build, so this
runs on every change, on any machine, without a GPU.

  icount.py check BUILD [--cases A,B] [--extra-steps N] [--reference FILE]
  icount.py update BUILD --reason "why the counts moved" [--reference FILE]

Exit status: 0 nothing grew, 1 something grew, 2 bad usage or a case that did not run.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REFERENCE = os.path.join(HERE, "..", "benchmarks", "reference", "icount.json")


def count(build, case, extra_steps=0):
    """Instructions of the measured region of one case."""
    exe = os.path.join(build, "benchmarks", "hayate_icount")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "callgrind.out")
        cmd = ["valgrind", "--tool=callgrind", "--collect-atstart=no",
               f"--callgrind-out-file={out}", exe, case]
        if extra_steps:
            cmd += ["--extra-steps", str(extra_steps)]
        env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
        run = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if run.returncode != 0:
            raise RuntimeError(f"{case}: exit {run.returncode}\n{run.stderr[-2000:]}")
        with open(out) as f:
            text = f.read()
    m = re.search(r"^(?:totals|summary):\s+(\d+)", text, re.M)
    if not m:
        raise RuntimeError(f"{case}: no instruction total in callgrind's output")
    return int(m.group(1))


def list_cases(build):
    exe = os.path.join(build, "benchmarks", "hayate_icount")
    run = subprocess.run([exe, "--list"], capture_output=True, text=True, check=True)
    return [line.split()[0] for line in run.stdout.splitlines() if line.strip()]


def load(path):
    with open(path) as f:
        return json.load(f)


def check(args):
    ref = load(args.reference)
    tolerance = float(ref.get("tolerance", 0.02))
    cases = args.cases.split(",") if args.cases else sorted(ref["cases"])
    rows, grew, failed = [], [], []
    for case in cases:
        if case not in ref["cases"]:
            failed.append(f"{case}: not in {args.reference}")
            continue
        try:
            n = count(args.build, case, args.extra_steps)
        except (RuntimeError, OSError, subprocess.CalledProcessError) as e:
            failed.append(str(e))
            continue
        old = int(ref["cases"][case]["instructions"])
        change = (n - old) / old
        verdict = "grew" if change > tolerance else ("shrank" if change < -tolerance else "same")
        rows.append((case, old, n, change, verdict))
        if verdict == "grew":
            grew.append(case)
    print("| case | reference | now | change | verdict |")
    print("|---|---|---|---|---|")
    for case, old, n, change, verdict in rows:
        print(f"| {case} | {old:,} | {n:,} | {change * 100:+.2f}% | {verdict} |")
    for f in failed:
        print(f"error: {f}", file=sys.stderr)
    if grew:
        print(f"\n{len(grew)} case(s) grew by more than {tolerance * 100:.0f}%: "
              f"{', '.join(grew)}. If the change is meant to cost more, run\n"
              f"  scripts/icount.py update BUILD --reason \"...\"\n"
              f"and commit benchmarks/reference/icount.json with it.")
    if failed:
        return 2
    return 1 if grew else 0


def update(args):
    ref = load(args.reference) if os.path.exists(args.reference) else {"tolerance": 0.02,
                                                                      "cases": {}}
    cases = list_cases(args.build)
    for case in cases:
        n = count(args.build, case)
        old = ref["cases"].get(case, {}).get("instructions")
        entry = {"instructions": n}
        entry["reason"] = args.reason if old != n else ref["cases"][case].get("reason", args.reason)
        ref["cases"][case] = entry
        shown = "" if old is None else f" (was {old:,})"
        print(f"{case}: {n:,}{shown}")
    ref["cases"] = {c: ref["cases"][c] for c in sorted(ref["cases"]) if c in cases}
    with open(args.reference, "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)
        f.write("\n")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check")
    c.add_argument("build")
    c.add_argument("--cases")
    c.add_argument("--extra-steps", type=int, default=0)
    c.add_argument("--reference", default=DEFAULT_REFERENCE)
    u = sub.add_parser("update")
    u.add_argument("build")
    u.add_argument("--reason", required=True)
    u.add_argument("--reference", default=DEFAULT_REFERENCE)
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        return check(a) if a.command == "check" else update(a)
    except (OSError, ValueError, KeyError, RuntimeError, subprocess.CalledProcessError) as e:
        print(f"icount.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
