#!/usr/bin/env bash
# Gravity on the GPU machine, part 3: the tree with block time steps, timed per block step
# ("tick"), the unit in which GOTHIC reports its elapsed time per step: one tick evaluates the
# particles whose power-of-two step ends there and drifts everyone. Runs the composite galaxy
# and Plummer at N = 2^22 and 2^23 (FP32, dacc = 2^-9, quadrupoles; and at 2^23 also
# monopoles only, as GOTHIC uses), each for one and for three dt_max cycles (HAYATE_CYCLES): the
# difference of the two runs is two cycles with set-up, first step and output cancelled. Force errors of 1024
# sampled particles against double direct summation after every cycle. Builds nothing: expects
# build/cuda from the repo root (or the executable named by HAYATE_BIN, to compare builds).
# Usage: benchmarks/device/gravity_block.sh OUTPUT_DIR [CASE ...], CASE one of the tags below
# (default all; at most ~6 minutes; parts 1 and 2 are gravity.sh and gravity_tree.sh).
# HAYATE_SET="key=value ..." adds --set options to every run (variants of one binary).
# HAYATE_CYCLES=K (default 3): the longer run's cycles; more cycles weigh the first tree's
# start-up (its rebuild rule has no growth estimate yet) less.
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: $0 OUTPUT_DIR [CASE ...]" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/cuda
hayate=${HAYATE_BIN:-$build/hayate}
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
only=" $* "
if [ ! -x "$hayate" ]; then
  echo "missing $hayate: build the cuda preset first" >&2
  exit 2
fi
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_PROC_BIND=spread OMP_PLACES=threads
extra=()
long=${HAYATE_CYCLES:-3}
for kv in ${HAYATE_SET:-}; do extra+=(--set "$kv"); done
status=0
log() { echo "[gravity_block.sh $(date +%H:%M:%S)] $*"; }
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv || true; } > "$out/device.txt"
git -C "$root" rev-parse HEAD > "$out/commit.txt" 2>/dev/null || true

run() {  # name input n cycles extra...
  local name=$1 input=$2 n=$3 cycles=$4
  shift 4
  log "run $name"
  timeout 120 "$hayate" run "$root/inputs/gravity/$input.yaml" --backend cuda --quiet \
    --output "$out/runs/$name" --set precision=float --set system.n="$n" \
    --set time.integrator=block --set run.steps="$cycles" --set output.every="$cycles" \
    --set output.snapshot_every=0 --set output.force_error_every=1 \
    --set output.force_error_sample=1024 ${extra[@]+"${extra[@]}"} "$@" > "$out/runs/$name.log" 2>&1 ||
    { status=1; log "run $name FAILED"; }
  rm -f "$out/runs/$name/snapshots.xyz"  # the final frame: large and not needed here
}
mkdir -p "$out/runs"
cases=()
add() {  # tag input logn extra...
  local tag=$1 input=$2 logn=$3
  shift 3
  [ "$only" = "  " ] || [[ "$only" == *" $tag "* ]] || return 0
  for cycles in 1 $long; do run "${tag}_$cycles" "$input" $((1 << logn)) "$cycles" "$@"; done
  cases+=("$tag:$((1 << logn))")
}
add galaxy_2e23 galaxy_tree 23
add plummer_2e23 plummer_tree 23
add galaxy_2e23_monopole galaxy_tree 23 --set tree.quadrupole=false
add plummer_2e23_monopole plummer_tree 23 --set tree.quadrupole=false
add galaxy_2e22 galaxy_tree 22
add plummer_2e22 plummer_tree 22

log "summary"
python3 - "$out" "$long" "${cases[@]}" > "$out/summary.md" <<'PY' || status=1
import csv, os, sys
out, long, cases = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
# What a tick costs: everything but set-up, diagnostics and output (those are timed apart).
left_out = {"setup", "initial_conditions", "output", "diagnostics", "force_error",
            "tree_walk_diagnostic", "tree_moments_diagnostic"}
print(f"Per block step (tick) and per dt_max cycle: (T({long} cycles) - T(1 cycle)) / ticks, over "
      "keys, sort, build, moments, walk and integrate. Active = targets evaluated per tick / N. "
      f"p99 / max: |da|/|a| of 1024 sampled particles after each of the {long} cycles.\n")
print("| run | ticks / cycle | active / tick | s / tick | s / cycle | walk | moments | rebuilds "
      "(keys + sort + build + reorder) | integrate | p99 after each cycle | max |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for case in cases:
    tag, n = case.split(":")
    n = int(n)
    try:
        runs = []
        for cycles in (1, long):
            d = os.path.join(out, "runs", f"{tag}_{cycles}")
            t = {r["phase"]: float(r["total_s"]) for r in csv.DictReader(open(os.path.join(d, "timers.csv")))}
            calls = {r["phase"]: int(r["calls"]) for r in csv.DictReader(open(os.path.join(d, "timers.csv")))}
            th = list(csv.DictReader(open(os.path.join(d, "thermo.csv"))))
            fe = list(csv.DictReader(open(os.path.join(d, "force_error.csv"))))
            runs.append((t, calls, th, fe))
    except (OSError, IndexError, KeyError, ValueError):
        print(f"| {tag} | failed |")
        continue
    (t1, c1, th1, _), (t3, c3, th3, fe3) = runs
    ticks = c3["tree_walk"] - c1["tree_walk"]
    evals = int(th3[-1]["force_evaluations"]) - int(th1[-1]["force_evaluations"])
    d = lambda k: t3.get(k, 0.0) - t1.get(k, 0.0)
    # setup_*: the first evaluation's phases (one-off build costs), timed apart.
    total = sum(d(k) for k in set(t1) | set(t3) if k not in left_out and not k.startswith("setup"))
    rebuild = d("tree_keys") + d("tree_sort") + d("tree_build") + d("tree_reorder")
    p99 = ", ".join(f"{float(r['p99']):.2e}" for r in fe3[1:])
    print(f"| {tag} | {ticks / (long - 1):g} | {evals / ticks / n:.2f} | {total / ticks:.4f} | "
          f"{total / (long - 1):.4f} | {d('tree_walk') / ticks:.4f} | {d('tree_moments') / ticks:.4f} | "
          f"{rebuild / ticks:.4f} | {d('integrate') / ticks:.4f} | {p99} | "
          f"{float(fe3[-1]['max']):.2e} |")
PY
cat "$out/summary.md"
log "done (status $status); results in $out"
exit $status
