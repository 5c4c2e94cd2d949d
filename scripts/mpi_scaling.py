#!/usr/bin/env python3
"""Strong and weak scaling of the distributed problems on this machine's cores: each case runs
with 1..R ranks of one OpenMP thread (plain start for 1), REPS times, and prints the median
wall time of the time steps (timers.csv, the problem's step phases) and the efficiency.
usage: scripts/mpi_scaling.py BUILD/hayate [--ranks 2] [--reps 3] [--mpirun mpirun] [--only md]"""
import argparse
import csv
import os
import statistics
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# name, input, step phases of timers.csv, sets for R ranks (weak: the work grows with R).
CASES = [
    ("fhp strong 2048x1024", "inputs/fhp/cylinder.yaml", ["step", "halo"],
     lambda r: ["run.steps=400", "output.fields_every=0", "output.png=false", "output.vtk=false",
                "output.profile=false", "output.average=1", "output.every=400"]),
    ("fhp weak 2048x512/rank", "inputs/fhp/cylinder.yaml", ["step", "halo"],
     lambda r: ["run.steps=400", f"system.ny={512 * r}", "obstacles=[]", "output.fields_every=0",
                "output.png=false", "output.vtk=false", "output.profile=false",
                "output.average=1", "output.every=400"]),
    ("gravity strong n=8192", "inputs/gravity/plummer_direct.yaml", ["direct", "direct_gather",
                                                                      "integrate"],
     lambda r: ["system.n=8192", "run.steps=20", "output.every=20", "output.snapshot_every=0"]),
    ("gravity weak n=8192*sqrt(R)", "inputs/gravity/plummer_direct.yaml",
     ["direct", "direct_gather", "integrate"],
     lambda r: [f"system.n={int(8192 * r ** 0.5)}", "run.steps=20", "output.every=20",
                "output.snapshot_every=0"]),
    # md with each neighbor list on every rank count: the half list (the CPU default; several
    # ranks send the ghosts' force shares back) and the full list (no reverse step).
    *[(f"md strong in.lj 32000 atoms, {kind} list", "inputs/md/lj_melt.yaml",
       ["integrate", "neighbor", "comm", "force"],
       lambda r, kind=kind: [f"tuning.list={kind}", "run.steps=100", "output.thermo_every=100"])
      for kind in ("half", "full")],
    *[(f"md weak in.lj 32000 atoms/rank, {kind} list", "inputs/md/lj_melt.yaml",
       ["integrate", "neighbor", "comm", "force"],
       lambda r, kind=kind: [f"tuning.list={kind}", "run.steps=100", "output.thermo_every=100",
                             f"system.lattice.cells=[20,20,{20 * r}]"])
      for kind in ("half", "full")],
    ("ode strong lr91 x 256", "inputs/ode/lr91.yaml", ["integrate"],
     lambda r: ["ensemble.members=256", "run.t_end=100", "output.every=1000",
                "output.members=[0]"]),
    ("ode weak lr91 x 128/rank", "inputs/ode/lr91.yaml", ["integrate"],
     lambda r: [f"ensemble.members={128 * r}", "run.t_end=100", "output.every=1000",
                "output.members=[0]"]),
]


def step_seconds(folder, phases):
    with open(os.path.join(folder, "timers.csv")) as f:
        return sum(float(row["total_s"]) for row in csv.DictReader(f) if row["phase"] in phases)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--only", default="", help="run the cases whose name contains this")
    a = ap.parse_args()
    launcher = [a.mpirun, "--oversubscribe", "--bind-to", "core"]
    if os.geteuid() == 0:
        launcher.append("--allow-run-as-root")
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_PROC_BIND="false")
    print("| case | ranks | step time (s) | speed-up | efficiency |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as work:
        for name, inp, phases, sets in CASES:
            if a.only not in name:
                continue
            base = None
            for r in range(1, a.ranks + 1):
                times = []
                for rep in range(a.reps):
                    out = os.path.join(work, f"{len(times)}_{r}")
                    cmd = ([] if r == 1 else launcher + ["-np", str(r)]) + [
                        os.path.abspath(a.binary), "run", os.path.join(ROOT, inp), "--threads",
                        "1", "--quiet", "--output", out]
                    for s in sets(r):
                        cmd += ["--set", s]
                    subprocess.run(cmd, check=True, env=env, capture_output=True)
                    times.append(step_seconds(out, phases))
                    subprocess.run(["rm", "-rf", out], check=True)
                t = statistics.median(times)
                base = base or t
                weak = "weak" in name
                speedup = base / t * (r if weak else 1)
                print(f"| {name} | {r} | {t:.3f} | {speedup:.2f} | {speedup / r:.0%} |",
                      flush=True)


if __name__ == "__main__":
    main()
