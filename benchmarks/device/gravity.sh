#!/usr/bin/env bash
# Gravity on the GPU machine: unit tests of the CUDA build, the direct-summation benchmarks
# (interactions/s per precision and backend, j-split on/off, launch-shape sweep, FP32 peak probe)
# and end-to-end runs of the shipped inputs. Builds nothing: expects build/cuda from the repo
# root. Usage: benchmarks/device/gravity.sh OUTPUT_DIR     (about 5 minutes)
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTPUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/cuda
mkdir -p "$1"
out=$(cd "$1" && pwd)
for bin in hayate unit_tests/hayate_tests benchmarks/hayate_bench; do
  if [ ! -x "$build/$bin" ]; then
    echo "missing $build/$bin: build the cuda preset first" >&2
    exit 2
  fi
done
status=0
log() { echo "[gravity.sh $(date +%H:%M:%S)] $*"; }

log "device"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv || true; } > "$out/device.txt"
"$build/hayate" info > "$out/info.txt" 2>&1 || status=1
git -C "$root" rev-parse HEAD > "$out/commit.txt" 2>/dev/null || true

log "unit tests (cuda, openmp, serial, common)"
mkdir -p "$out/tests"
(cd "$out/tests" && OMP_PROC_BIND=false timeout 300 "$build/unit_tests/hayate_tests" \
  --gtest_filter='Gravity*' --gtest_output=xml:"$out/gravity_tests.xml") > "$out/gravity_tests.log" 2>&1 \
  || { status=1; log "unit tests FAILED (see gravity_tests.log)"; }
tail -3 "$out/gravity_tests.log"

export OMP_PROC_BIND=spread OMP_PLACES=threads
log "direct and tree benchmarks (5 repetitions)"
timeout 420 "$build/benchmarks/hayate_bench" \
  --benchmark_filter='^gravity/(direct|direct_nosplit|fp32_peak|tree)/.*(cuda|openmp)' \
  --benchmark_out="$out/gravity.json" --benchmark_out_format=json \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > "$out/gravity_bench.log" 2>&1 \
  || { status=1; log "benchmarks FAILED (see gravity_bench.log)"; }

log "launch-shape sweep (1 repetition)"
timeout 150 "$build/benchmarks/hayate_bench" \
  --benchmark_filter='^gravity/direct_sweep/.*(cuda|openmp)' \
  --benchmark_out="$out/gravity_sweep.json" --benchmark_out_format=json \
  > "$out/gravity_sweep.log" 2>&1 || { status=1; log "sweep FAILED (see gravity_sweep.log)"; }

log "end-to-end inputs"
run_input() {  # name, input, extra arguments
  local name=$1 input=$2
  shift 2
  timeout 90 "$build/hayate" run "$root/inputs/gravity/$input.yaml" --backend cuda --quiet \
    --output "$out/runs/$name" "$@" > "$out/runs_$name.log" 2>&1 \
    || { status=1; log "run $name FAILED"; }
}
mkdir -p "$out/runs"
run_input plummer_direct plummer_direct
run_input plummer_direct_262k_float plummer_direct --set system.n=262144 --set precision=float \
  --set run.steps=10 --set output.every=10 --set output.snapshot_every=0
run_input kepler kepler
run_input plummer_tree plummer_tree
run_input galaxy_tree galaxy_tree
# Tree at scale (FP32, dacc = 2^-9): seconds per step with the per-phase timers and the measured
# force error (1024 sampled particles against double direct summation).
for model in plummer galaxy; do
  for logn in 20 22 23; do
    run_input "tree_${model}_2e${logn}" "${model}_tree" --set system.n=$((1 << logn)) \
      --set precision=float --set run.steps=10 --set output.every=10 \
      --set output.snapshot_every=0 --set output.force_error_every=10 \
      --set output.force_error_sample=1024
  done
done

log "summary"
python3 - "$out" > "$out/summary.md" <<'PY' || status=1
import json, sys, os
out = sys.argv[1]
def load(name):
    p = os.path.join(out, name)
    return json.load(open(p))["benchmarks"] if os.path.exists(p) else []
def space_of(name):
    return next((p for p in name.split("/") if p in ("cuda", "openmp", "serial")), "?")
rows = [b for b in load("gravity.json") if b.get("aggregate_name", "median") == "median"]
peak = {space_of(b["name"]): b["flops_per_second"] for b in rows if b["name"].startswith("gravity/fp32_peak/")}
print("| benchmark | backend | N | splits | interactions/s | % FP32 peak (20 flops) | % (38 flops) |")
print("|---|---|---|---|---|---|---|")
for b in rows:
    if "interactions_per_second" not in b: continue
    space = space_of(b["name"])
    p = peak.get(space, 0)
    f20 = 100 * b["flops_20_per_second"] / p if p else float("nan")
    f38 = 100 * b["flops_38_per_second"] / p if p else float("nan")
    print(f"| {'/'.join(b['name'].split('/')[:3])} | {space} | {int(b['n'])} | {int(b['splits'])} | "
          f"{b['interactions_per_second']:.3e} | {f20:.1f} | {f38:.1f} |")
for space, p in peak.items():
    print(f"\nmeasured FP32 FMA peak on {space}: {p:.3e} flop/s")
sweep = [b for b in load("gravity_sweep.json") if "interactions_per_second" in b]
for n in sorted({int(b["n"]) for b in sweep}):
    for space in ("cuda", "openmp"):
        best = sorted((b for b in sweep if int(b["n"]) == n and space_of(b["name"]) == space),
                      key=lambda b: -b["interactions_per_second"])[:5]
        if best:
            print(f"\nbest launch shapes, N = {n}, {space}:")
            for b in best:
                print(f"- ipt {int(b['i_per_thread'])} team {int(b['team_size'])} tile {int(b['tile'])}"
                      f" splits {int(b['splits'])}: {b['interactions_per_second']:.3e} interactions/s")
tree = [b for b in rows if b["name"].startswith("gravity/tree/")]
if tree:
    print("\n| tree benchmark (one evaluation incl. rebuild) | N | s/evaluation | particles/s |")
    print("|---|---|---|---|")
    for b in tree:
        print(f"| {'/'.join(b['name'].split('/')[:4])} | {int(b['n'])} | {b['real_time'] / 1e3:.4f} | "
              f"{b['particles_per_second']:.3e} |")
import csv, glob
runs = sorted(glob.glob(os.path.join(out, "runs", "tree_*")))
if runs:
    print("\n| tree run | s/step | walk | moments | build+keys+sort per step | integrate | rebuilds | p50 | p99 | max |")
    print("|---|---|---|---|---|---|---|---|---|---|")
for r in runs:
    try:
        t = {row["phase"]: row for row in csv.DictReader(open(os.path.join(r, "timers.csv")))}
        fe = list(csv.DictReader(open(os.path.join(r, "force_error.csv"))))[-1]
    except (OSError, IndexError):
        print(f"| {os.path.basename(r)} | failed |")
        continue
    steps = 10
    mean = lambda k: float(t[k]["mean_s"]) if k in t else 0.0
    total = lambda k: float(t[k]["total_s"]) if k in t else 0.0
    build = (total("tree_build") + total("tree_keys") + total("tree_sort")) / steps
    per_step = mean("tree_walk") + mean("tree_moments") + build + total("integrate") / steps
    print(f"| {os.path.basename(r)} | {per_step:.3e} | {mean('tree_walk'):.3e} | {mean('tree_moments'):.3e} | "
          f"{build:.3e} | {total('integrate') / steps:.3e} | {t.get('tree_build', {}).get('calls', '?')} | "
          f"{float(fe['p50']):.2e} | {float(fe['p99']):.2e} | {float(fe['max']):.2e} |")
PY
cat "$out/summary.md"
log "done (status $status); results in $out"
exit $status
