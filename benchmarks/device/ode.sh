#!/usr/bin/env bash
# ODE interpreter on the GPU machine: unit tests (CUDA and OpenMP typed tests), the benchmark
# suite (steps per model: per-phase, persistent and teams modes; the compiler passes on CUDA; the
# ensembles: phases, persistent and the fused variants), and three LR-Line runs (2e5 Euler steps, trace every
# 1000 steps) with timers. Builds nothing: expects build/cuda from the repository root. About
# 7 minutes.
#   usage: benchmarks/device/ode.sh OUTPUT_DIR
set -uo pipefail
out=${1:?usage: benchmarks/device/ode.sh OUTPUT_DIR}
root=$(pwd)
build="$root/build/cuda"
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
export HAYATE_ODE_INPUTS="$root/inputs/ode"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
status=0

{ date -u; git rev-parse HEAD 2>/dev/null; nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv 2>/dev/null; } > "$out/ode_device.txt"

# Tests: every Ode* suite (typed ones on cuda, openmp and serial); their scratch files go to
# $out/test_scratch, not into the checkout.
mkdir -p "$out/test_scratch"
(cd "$out/test_scratch" && OMP_PROC_BIND=false "$build/unit_tests/hayate_tests" --gtest_filter='Ode*' \
  --gtest_output="xml:$out/ode_tests.xml") > "$out/ode_tests.log" 2>&1 || status=1
tail -n 3 "$out/ode_tests.log"

# Benchmarks: steps per model (cuda and openmp), the one-core reference interpreter, the passes
# (cuda); then the ensembles (cuda at every size, openmp at 4096 members). The serial backend is
# left out (the one-core reference interpreter is the CPU baseline).
bench=(--benchmark_out_format=json --benchmark_repetitions=5 --benchmark_report_aggregates_only=true)
"$build/benchmarks/hayate_bench" --benchmark_filter='^ode/(step/.*/(cuda|openmp|reference)|passes/.*/cuda)' \
  --benchmark_out="$out/ode.json" "${bench[@]}" > "$out/ode_bench.txt" 2>&1 || status=1
"$build/benchmarks/hayate_bench" --benchmark_filter='^ode/ensemble/(.*/cuda/|.*/openmp/4096/)' \
  --benchmark_out="$out/ode_ensemble.json" "${bench[@]}" > "$out/ode_ensemble.txt" 2>&1 || status=1

# 2e5 Euler steps of LR-Line with output every 1000 steps on CUDA in each single-instance mode.
for mode in phases persistent teams; do
  "$build/hayate" run "$root/inputs/ode/lr_line.yaml" --backend cuda --quiet --output "$out/lr_line_$mode" \
    --set run.t_end=2000 --set output.every=1000 --set run.mode=$mode > "$out/lr_line_$mode.log" 2>&1 || status=1
done

# Short table: median time per step and evaluation rates.
python3 - "$out" <<'PY' || true
import json, sys, os
out = sys.argv[1]
for name in ("ode.json", "ode_ensemble.json"):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        continue
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        sps = b.get("seconds_per_step", 0.0)
        print(f'{b["run_name"]:70s} {sps * 1e6:12.3f} us/step {b.get("expr_evals_per_second", 0):12.4g} evals/s')
PY
for mode in phases persistent teams; do
  echo "lr_line $mode:"; cat "$out/lr_line_$mode/timers.csv" 2>/dev/null
done
exit $status
