#!/usr/bin/env python3
"""Static resources of the CUDA kernels: registers, spill stores and loads, stack frame and static
shared memory, as ptxas reports them (-Xptxas -v) in a build log, per kernel. Compared with
benchmarks/reference/cuda-resources.json: a kernel that starts spilling (or spills more), or whose
register count passes an occupancy step (fewer warps per multiprocessor fit by registers), fails.
Kernels that appear or disappear are listed; they do not fail the check.

  cuda_resources.py check BUILD_LOG [--reference FILE]
  cuda_resources.py update BUILD_LOG --reason "why" [--reference FILE] [--merge]

update records the log's kernels as the reference; with --merge (a log of an incremental build)
only the kernels the log holds are recorded or replaced, the others kept.

Exit status: 0 ok, 1 a kernel got worse, 2 bad usage or no ptxas report in the log.
"""
import argparse
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REFERENCE = os.path.join(HERE, "..", "benchmarks", "reference", "cuda-resources.json")

# Hopper (sm_90): 64K 32-bit registers and at most 64 resident warps per multiprocessor;
# registers are allocated per warp in units of 256 (8 per thread).
REGISTERS_PER_SM = 65536
MAX_WARPS_PER_SM = 64


def warps_by_registers(regs):
    per_thread = max(8, -(-regs // 8) * 8)
    return min(MAX_WARPS_PER_SM, REGISTERS_PER_SM // (per_thread * 32))


def parse(text):
    """mangled kernel name -> resources; a kernel compiled in several units keeps its worst.
    Only entry functions (kernels) count; ptxas also reports the device functions they call."""
    kernels, props = {}, {}
    entry = described = None

    def blank():
        return {"registers": 0, "spill_stores": 0, "spill_loads": 0, "stack": 0, "smem": 0}

    for line in text.splitlines():
        m = re.search(r"ptxas info\s*: Compiling entry function '([A-Za-z0-9_$]+)'", line)
        if m:
            entry = m.group(1)
            kernels.setdefault(entry, blank())
            continue
        m = re.search(r"ptxas info\s*: Function properties for ([A-Za-z0-9_$]+)", line)
        if m:
            described = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads",
                      line)
        if m and described:
            p = props.setdefault(described, blank())
            p["stack"] = max(p["stack"], int(m.group(1)))
            p["spill_stores"] = max(p["spill_stores"], int(m.group(2)))
            p["spill_loads"] = max(p["spill_loads"], int(m.group(3)))
            described = None
            continue
        m = re.search(r"ptxas info\s*: Used (\d+) registers", line)
        if m and entry:
            k = kernels[entry]
            k["registers"] = max(k["registers"], int(m.group(1)))
            s = re.search(r"(\d+) bytes smem", line)
            if s:
                k["smem"] = max(k["smem"], int(s.group(1)))
            entry = None
    for name, k in kernels.items():
        for key in ("stack", "spill_stores", "spill_loads"):
            k[key] = max(k[key], props.get(name, {}).get(key, 0))
    return kernels


def demangle(names):
    try:
        run = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                             check=True)
        out = run.stdout.splitlines()
        if len(out) == len(names):
            return dict(zip(names, out))
    except (OSError, subprocess.CalledProcessError):
        pass
    return {n: n for n in names}


def short(name, width=160):
    return name if len(name) <= width else name[:width - 3] + "..."


def check(args):
    with open(args.log, errors="replace") as f:
        now = parse(f.read())
    if not now:
        print(f"no ptxas resource report in {args.log} (build with HAYATE_CUDA_RESOURCE_REPORT=ON)",
              file=sys.stderr)
        return 2
    with open(args.reference) as f:
        ref = json.load(f)["kernels"]
    worse, rows = [], []
    for name in sorted(set(ref) & set(now)):
        r, n = ref[name], now[name]
        why = []
        if n["spill_stores"] > r["spill_stores"] or n["spill_loads"] > r["spill_loads"]:
            why.append(f"spills {r['spill_stores']}/{r['spill_loads']} -> "
                       f"{n['spill_stores']}/{n['spill_loads']} bytes (stores/loads)")
        if warps_by_registers(n["registers"]) < warps_by_registers(r["registers"]):
            why.append(f"registers {r['registers']} -> {n['registers']} (warps per SM by "
                       f"registers {warps_by_registers(r['registers'])} -> "
                       f"{warps_by_registers(n['registers'])})")
        if why:
            worse.append(name)
            rows.append((name, "; ".join(why)))
    names = demangle([n for n, _ in rows] + sorted(set(now) - set(ref)) + sorted(set(ref) - set(now)))
    print(f"{len(now)} kernels in the build, {len(ref)} in the reference, "
          f"{len(set(ref) & set(now))} in both.")
    if rows:
        print("\n| kernel | what got worse |\n|---|---|")
        for name, why in rows:
            print(f"| `{short(names[name])}` | {why} |")
    for label, group in (("new", sorted(set(now) - set(ref))), ("gone", sorted(set(ref) - set(now)))):
        if group:
            print(f"\n{len(group)} {label} kernel(s) (not a failure; `update` records them):")
            for name in group[:20]:
                print(f"  {short(names[name])}")
            if len(group) > 20:
                print(f"  ... and {len(group) - 20} more")
    if worse:
        print("\nIf the change is meant to cost these resources, run\n"
              "  scripts/cuda_resources.py update BUILD_LOG --reason \"...\"\n"
              "and commit benchmarks/reference/cuda-resources.json with it.")
    return 1 if worse else 0


def update(args):
    with open(args.log, errors="replace") as f:
        now = parse(f.read())
    if not now:
        print(f"no ptxas resource report in {args.log}", file=sys.stderr)
        return 2
    names = demangle(sorted(now))
    kernels = {}
    if args.merge:
        with open(args.reference) as f:
            kernels = json.load(f)["kernels"]
    kernels.update({k: dict(now[k], name=short(names[k], 400)) for k in now})
    ref = {"reason": args.reason, "kernels": dict(sorted(kernels.items()))}
    with open(args.reference, "w") as f:
        json.dump(ref, f, indent=1, sort_keys=True)
        f.write("\n")
    spilling = sum(1 for k in kernels.values() if k["spill_stores"] or k["spill_loads"])
    print(f"{len(now)} kernels recorded, {len(kernels)} in all ({spilling} spill) in "
          f"{args.reference}")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("check", "update"):
        s = sub.add_parser(name)
        s.add_argument("log")
        s.add_argument("--reference", default=DEFAULT_REFERENCE)
        if name == "update":
            s.add_argument("--reason", required=True)
            s.add_argument("--merge", action="store_true")
    try:
        a = p.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        return check(a) if a.command == "check" else update(a)
    except (OSError, ValueError, KeyError) as e:
        print(f"cuda_resources.py: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
