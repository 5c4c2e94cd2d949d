#!/usr/bin/env bash
# FHP on the GPU machine, from the repository root with build/cuda already built (builds
# nothing). Writes into OUTDIR:
#   fhp-tests.txt   the FHP, PNG and collision-table unit tests (cuda, openmp, serial typed tests)
#   fhp.json        benchmark suite fhp/* on cuda: kernels bytes (8 sites per thread, table
#                   lookup), bytes_wide (64 sites per thread, table lookup), bytes_sliced (64
#                   sites per thread, bit-sliced logic) and bits, FHP-I and FHP-III,
#                   416 x 256 (256 x 416 for bits) and 1024^2 ... 32768^2, plus stream/copy
#                   (the bandwidth ceiling); medians of 5 repetitions
#   fhp-openmp.json FHP-III on the host backend up to 4096^2
#   fhp.md          site updates/s, GB/s and % of the bandwidth bound per benchmark
#   fhp-plate/      only with FHP_PLATE=1: the flat-plate input at 4096 x 2048 (about 40 s)
# usage: benchmarks/device/fhp.sh OUTDIR        (under 4 minutes on an H100)
set -euo pipefail
out=${1:?usage: benchmarks/device/fhp.sh OUTDIR}
build=${BUILD:-build/cuda}
mkdir -p "$out"
out=$(cd "$out" && pwd)
root=$(pwd)
build=$(cd "$build" && pwd)
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv \
  >"$out/nvidia-smi.txt" 2>&1 || echo "no nvidia-smi" >"$out/nvidia-smi.txt"
device=$(sed -n 2p "$out/nvidia-smi.txt" | cut -d, -f1)

# 1. Unit tests: tables, kernels vs the serial reference on cuda/openmp/serial, bitwise restart,
#    backends agree through the driver, physics (viscosity, Poiseuille).
(cd "$build/unit_tests" && HAYATE_TEST_BINARY="$build/hayate" HAYATE_TEST_SOURCE_DIR="$root" \
   OMP_PROC_BIND=false timeout 300 ./hayate_tests \
   --gtest_filter='Fhp*:Png.*') >"$out/fhp-tests.txt" 2>&1 ||
  echo "fhp unit tests FAILED (see $out/fhp-tests.txt)" >&2
tail -n 3 "$out/fhp-tests.txt"

# 2. Benchmarks. Lattices up to 2^30 sites (32768^2: 2 GiB per buffer pair) on the GPU; the
#    host backend runs FHP-III up to 2^24 sites so it stays within the time budget.
bench() {
  HAYATE_FHP_BENCH_MAX_SITES=$1 "$build/benchmarks/hayate_bench" --benchmark_filter="$2" \
    --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
    --benchmark_min_time="${BENCH_MIN_TIME:-0.2}" --benchmark_context=device="$device" \
    --benchmark_out="$3" --benchmark_out_format=json >"$3.txt" 2>&1
}
bench $((1 << 30)) '^(fhp/.*/cuda/|stream/copy/cuda/)' "$out/fhp.json"
bench $((1 << 24)) '^(fhp/[a-z_]*/fhp3/openmp/|stream/copy/openmp/)' "$out/fhp-openmp.json"

# 3. Table: % of the bandwidth bound = bytes_per_update x site_updates/s / copy bytes/s
#    (the largest stream/copy of the same backend). Goal on the H100: the byte kernel at 70% or
#    more at large lattices.
python3 - "$out/fhp.json" "$out/fhp-openmp.json" >"$out/fhp.md" <<'PY'
import json, sys
print("| benchmark | site updates/s | GB/s | % of bound |")
print("|---|---|---|---|")
for path in sys.argv[1:]:
    try:
        rows = [b for b in json.load(open(path))["benchmarks"] if b.get("aggregate_name") == "median"]
    except (OSError, ValueError, KeyError):
        print(f"| ({path.split('/')[-1]}: no results) | | | |")
        continue
    copy = max((b["bytes_per_second"] for b in rows if b["name"].startswith("stream/copy")), default=0)
    fhp = sorted((b for b in rows if b["name"].startswith("fhp/")),
                 key=lambda b: (b["run_name"].split("/")[2], b["sites"], b["run_name"]))
    for b in fhp:
        bw = b["bytes_per_second"]
        pct = f"{100 * bw / copy:.0f}%" if copy else "-"
        print(f"| {b['run_name']} | {b['site_updates_per_second']:.3g} | {bw / 1e9:.3g} | {pct} |")
    if copy:
        print(f"| (stream/copy, {path.split('/')[-1]}) | | {copy / 1e9:.3g} | 100% |")
PY
cat "$out/fhp.md"

# 4. Optional (FHP_PLATE=1): a large flow picture on the GPU, the flat plate at 4096 x 2048.
[ "${FHP_PLATE:-0}" = 1 ] || exit 0
"$build/hayate" run "$root/inputs/fhp/plate.yaml" --backend cuda --quiet --output "$out/fhp-plate" \
  --set system.nx=4096 --set system.ny=2048 --set run.steps=40000 --set output.block=16 \
  --set output.pixels=2 --set output.fields_every=10000 --set output.average=1000 \
  --set output.arrows=8 \
  --set 'obstacles=[{type: plate, x: 800, y: 1024, length: 384, thickness: 4}]' ||
  echo "plate run FAILED" >&2
cp "$out/fhp-plate/timers.csv" "$out/fhp-plate-timers.csv" 2>/dev/null || true
