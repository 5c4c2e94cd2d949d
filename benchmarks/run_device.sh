#!/usr/bin/env bash
# Runs an existing CUDA build on the GPU machine (builds nothing) and writes into OUTDIR:
#   info.txt (hayate info), bench.json (all suites, medians of 5 repetitions), bench.md (table),
#   nvidia-smi.txt, and unit-tests.txt when RUN_TESTS=1.
# usage: benchmarks/run_device.sh OUTDIR [BUILD_DIR]   (BUILD_DIR default: build/cuda)
#   BENCH_FILTER=regex limits the suites; BENCH_MIN_TIME (seconds) trades time for precision.
set -euo pipefail
out=${1:?usage: run_device.sh OUTDIR [BUILD_DIR]}
build=${2:-build/cuda}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
build=$(cd "$build" && pwd)
# Libraries copied by scripts/device_libs.sh for machines whose image lacks them.
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv \
  >"$out/nvidia-smi.txt" 2>&1 || echo "no nvidia-smi" >"$out/nvidia-smi.txt"
device=$(sed -n 2p "$out/nvidia-smi.txt" | cut -d, -f1)
"$build/hayate" info >"$out/info.txt" 2>&1
if [ "${RUN_TESTS:-0}" = 1 ]; then
  (cd "$build/unit_tests" && HAYATE_TEST_BINARY="$build/hayate" HAYATE_TEST_SOURCE_DIR="$here/.." \
     OMP_PROC_BIND=false ./hayate_tests --gtest_filter="${TEST_FILTER:-*}") >"$out/unit-tests.txt" 2>&1 ||
    echo "unit tests FAILED" >&2
  tail -n 3 "$out/unit-tests.txt"
fi
"$build/benchmarks/hayate_bench" --benchmark_filter="${BENCH_FILTER:-.}" \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_min_time="${BENCH_MIN_TIME:-0.1}" --benchmark_context=device="$device" \
  --benchmark_out="$out/bench.json" --benchmark_out_format=json >"$out/bench.txt" 2>&1
python3 "$here/../scripts/bench_table.py" "$out/bench.json" >"$out/bench.md"
cat "$out/bench.md"
