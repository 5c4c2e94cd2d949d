#!/usr/bin/env bash
# The numbers the open goals are judged by, in one call on the GPU machine (builds nothing;
# expects build/cuda from the repository root): the whole CUDA unit-test binary, then medians of
# 5 repetitions of
#   launch/*            the fenced launch floor (bounds every small problem)
#   stream/copy         the bandwidth ceiling (2^27 doubles, 4 loads per thread)
#   fhp byte kernels    FHP-I and FHP-III at 16384^2 and 32768^2 (goal: 70% of the 2-byte bound)
#   gravity direct      FP32, N = 2^10 ... 2^20 (goals: 2e12 at N >= 2^18; 2^12 at 30% of that),
#                       one fenced call each and 16 back-to-back calls (direct_stream/)
#   md force            100 calls at 100k atoms, rho 1.0, packed full list, thread or warp per
#                       atom, double and float
#   md steps            in.lj at 2.048M and 4M atoms, double
# and the SASS opcode histogram of the FP32 direct kernel. Writes into OUTDIR: tests.log,
# bench-*.json (+ .txt), goals.md (the table), sass-direct.hist.
# usage: benchmarks/device/goals.sh OUTDIR     (about 5 minutes on an H100)
set -uo pipefail
out=${1:?usage: benchmarks/device/goals.sh OUTDIR}
root=$(pwd)
build=$root/${BUILD:-build/cuda}
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
log() { echo "[goals.sh $(date +%H:%M:%S)] $*"; }
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv \
  >"$out/nvidia-smi.txt" 2>&1 || true
device=$(sed -n 2p "$out/nvidia-smi.txt" | cut -d, -f1)
git -C "$root" rev-parse HEAD >"$out/commit.txt" 2>/dev/null || true

log "unit tests (every backend of the CUDA build)"
(cd "$build/unit_tests" && HAYATE_TEST_BINARY="$build/hayate" HAYATE_TEST_SOURCE_DIR="$root" \
  OMP_PROC_BIND=false timeout 240 ./hayate_tests) >"$out/tests.log" 2>&1 ||
  log "unit tests FAILED (see tests.log)"
grep -E '^\[  (PASSED|FAILED)|tests ran' "$out/tests.log" | head -n 20

export OMP_PROC_BIND=spread OMP_PLACES=threads
bench() {  # name, filter, timeout
  HAYATE_FHP_BENCH_MAX_SITES=$((1 << 30)) timeout "$3" "$build/benchmarks/hayate_bench" \
    --benchmark_filter="$2" --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time="${BENCH_MIN_TIME:-0.1}" --benchmark_context=device="$device" \
    --benchmark_out="$out/bench-$1.json" --benchmark_out_format=json >"$out/bench-$1.txt" 2>&1 ||
    log "benchmark $1 FAILED or cut (see bench-$1.txt)"
}
log "launch floor and copy ceiling"
bench base '^(launch/.*/cuda|stream/copy/cuda/n:134217728/unroll:4)/' 60
log "fhp byte kernels"
bench fhp '^fhp/(bytes|bytes_wide|bytes_sliced)/fhp[13]/cuda/nx:(16384|32768)/' 120
log "gravity direct FP32"
bench gravity '^gravity/(direct|direct_stream)/float/cuda/' 120
log "md force calls and steps"
bench md_force '^md/force/rho1.0_100000/full_(thread|warp)_packed/auto_layout/(double|float)/cuda/' 120
bench md_steps '^md/steps/(2048000|4000000)/auto/double/cuda/' 150

log "SASS of the FP32 direct kernel"
BUILD=${BUILD:-build/cuda} bash "$root/benchmarks/device/kernels.sh" "$out" sass direct \
  'DirectTileKernel.*MonopolePolicyIffE.*Lb0ELi4E' || true

log "table"
python3 - "$out" >"$out/goals.md" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
rows = []
for path in sorted(glob.glob(os.path.join(out, "bench-*.json"))):
    try:
        rows += [b for b in json.load(open(path))["benchmarks"] if b.get("aggregate_name") == "median"]
    except (OSError, ValueError, KeyError):
        print(f"({os.path.basename(path)}: no results)")
copy = max((b.get("bytes_per_second", 0) for b in rows if b["name"].startswith("stream/copy")), default=0)
print("| benchmark | median time | rate | note |")
print("|---|---|---|---|")
for b in rows:
    name = b["run_name"]
    t = f"{b['real_time']:.4g} {b['time_unit']}"
    note = ""
    if name.startswith("fhp"):
        rate = f"{b['site_updates_per_second']:.3g} site updates/s"
        if copy:
            note = f"{100 * b['bytes_per_second'] / copy:.1f}% of the copy bound"
    elif name.startswith("gravity/"):
        rate = f"{b['interactions_per_second']:.3g} interactions/s"
    elif name.startswith("md/force"):
        rate = f"{b['atoms_per_second']:.3g} atom-forces/s"
        note = f"{b['neighbors_per_atom']:.1f} neighbors/atom"
    elif name.startswith("md/steps"):
        rate = f"{b['atom_steps_per_second']:.3g} atom-steps/s"
    elif name.startswith("stream/"):
        rate = f"{b['bytes_per_second'] / 1e12:.3g} TB/s"
    else:
        rate = f"{b.get('calls_per_second', 0):.3g} calls/s"
    print(f"| {name} | {t} | {rate} | {note} |")
PY
cat "$out/goals.md"
