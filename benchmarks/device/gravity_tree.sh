#!/usr/bin/env bash
# Gravity on the GPU machine, part 2: the Barnes-Hut tree at scale. Runs Plummer and the
# composite galaxy at N = 2^20, 2^22, 2^23 (FP32, dacc = 2^-9, a few steps, no snapshots) with
# the group walk and the particle walk, keeping the per-phase timers and the measured force
# error (1024 sampled particles against double direct summation), plus the tree benchmarks
# (one full evaluation including the rebuild, N = 2^16 ... 2^20). Builds nothing: expects
# build/cuda from the repo root. Usage: benchmarks/device/gravity_tree.sh OUTPUT_DIR
# (at most 5 minutes; part 1 is benchmarks/device/gravity.sh)
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTPUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/cuda
mkdir -p "$1"
out=$(cd "$1" && pwd)
for bin in hayate benchmarks/hayate_bench; do
  if [ ! -x "$build/$bin" ]; then
    echo "missing $build/$bin: build the cuda preset first" >&2
    exit 2
  fi
done
# Libraries copied by scripts/device_libs.sh for machines whose image lacks them.
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
log() { echo "[gravity_tree.sh $(date +%H:%M:%S)] $*"; }
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv || true; } > "$out/device.txt"
git -C "$root" rev-parse HEAD > "$out/commit.txt" 2>/dev/null || true

# Twelve steps: the first uses the theta MAC (no old accelerations yet), the rest dacc = 2^-9.
steps=12
run_tree() {  # name, input, extra arguments
  local name=$1 input=$2
  shift 2
  log "run $name"
  timeout 40 "$build/hayate" run "$root/inputs/gravity/$input.yaml" --backend cuda --quiet \
    --output "$out/runs/$name" --set precision=float --set run.steps=$steps \
    --set output.every=$steps --set output.snapshot_every=0 \
    --set output.force_error_every=$steps --set output.force_error_sample=1024 "$@" \
    > "$out/runs_$name.log" 2>&1 || { status=1; log "run $name FAILED"; }
  rm -f "$out/runs/$name/snapshots.xyz"  # the final frame: up to ~1 GB at 2^23, not needed here
}
mkdir -p "$out/runs"
for logn in 20 22 23; do
  for model in plummer galaxy; do
    for walk in group particle; do
      run_tree "tree_${model}_${walk}_2e${logn}" "${model}_tree" --set system.n=$((1 << logn)) \
        --set tree.walk=$walk
    done
  done
done

log "tree benchmarks (5 repetitions)"
export OMP_PROC_BIND=spread OMP_PLACES=threads
timeout 90 "$build/benchmarks/hayate_bench" --benchmark_filter='^gravity/tree/.*/cuda' \
  --benchmark_out="$out/gravity_tree.json" --benchmark_out_format=json \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  > "$out/gravity_tree_bench.log" 2>&1 || { status=1; log "benchmarks FAILED (see gravity_tree_bench.log)"; }

log "summary"
python3 - "$out" "$steps" > "$out/summary.md" <<'PY' || status=1
import csv, glob, json, os, sys
out, steps = sys.argv[1], int(sys.argv[2])
print("Per step: everything a time step costs (keys, sort, build, moments, walk, integrate; the "
      "first step's theta walk and the rebuilds included) over the steps; then the same without "
      "rebuilds (walk + moments + integrate), and the parts. Diagnostic walks (thermo potential, "
      "force-error samples) are timed apart and left out.\n")
print("| run | s/step | s/step excl. rebuilds | walk | moments | integrate | rebuilds | keys | sort | build | p50 | p99 | max |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in sorted(glob.glob(os.path.join(out, "runs", "tree_*"))):
    try:
        t = {row["phase"]: row for row in csv.DictReader(open(os.path.join(r, "timers.csv")))}
        fe = list(csv.DictReader(open(os.path.join(r, "force_error.csv"))))[-1]
    except (OSError, IndexError):
        print(f"| {os.path.basename(r)} | failed |")
        continue
    mean = lambda k: float(t[k]["mean_s"]) if k in t else 0.0
    total = lambda k: float(t[k]["total_s"]) if k in t else 0.0
    per_step = mean("tree_walk") + mean("tree_moments") + total("integrate") / steps
    all_in = sum(total(k) for k in ("tree_keys", "tree_sort", "tree_build", "tree_moments",
                                    "tree_walk", "integrate")) / steps
    print(f"| {os.path.basename(r)} | {all_in:.3e} | {per_step:.3e} | {mean('tree_walk'):.3e} | "
          f"{mean('tree_moments'):.3e} | {total('integrate') / steps:.3e} | "
          f"{t.get('tree_build', {}).get('calls', '?')} | {mean('tree_keys'):.3e} | "
          f"{mean('tree_sort'):.3e} | {mean('tree_build'):.3e} | {float(fe['p50']):.2e} | "
          f"{float(fe['p99']):.2e} | {float(fe['max']):.2e} |")
try:  # a benchmark run cut by its timeout leaves unfinished JSON
    bench = json.load(open(os.path.join(out, "gravity_tree.json")))["benchmarks"]
except (OSError, ValueError, KeyError):
    bench = []
rows = [b for b in bench
        if b.get("aggregate_name", "median") == "median" and "particles_per_second" in b]
if rows:
    print("\n| tree benchmark (one evaluation incl. rebuild, median) | N | s/evaluation | particles/s |")
    print("|---|---|---|---|")
    for b in rows:
        print(f"| {'/'.join(b['name'].split('/')[:5])} | {int(b['n'])} | "
              f"{b['real_time'] / 1e3:.4f} | {b['particles_per_second']:.3e} |")
PY
cat "$out/summary.md"
log "done (status $status); results in $out"
exit $status
