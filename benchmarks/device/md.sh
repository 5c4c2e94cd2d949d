#!/usr/bin/env bash
# Lennard-Jones MD on the GPU machine: unit tests (cuda + openmp typed tests), the force-variant
# and MD-step benchmarks, and one end-to-end run of the in.lj input. Builds nothing: run from
# the repository root with build/cuda built. Usage: benchmarks/device/md.sh OUTPUT_DIR
# About 5 minutes in total on an H100 (tests ~1 min, CUDA benchmarks ~3 min, OpenMP <1 min).
set -uo pipefail
out=${1:?usage: benchmarks/device/md.sh OUTPUT_DIR}
mkdir -p "$out"
build=build/cuda
bench=$build/benchmarks/hayate_bench
tests=$build/unit_tests/hayate_tests
hayate=$build/hayate
status=0

{
  date -u +%Y-%m-%dT%H:%M:%SZ
  git rev-parse HEAD 2>/dev/null || true
  nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv 2>/dev/null || true
  nproc
} > "$out/md_device.txt"

echo "== md unit tests (cuda, openmp, backend-independent)"
OMP_PROC_BIND=false timeout 300 "$tests" \
  --gtest_filter='MdForces/cuda.*:MdDynamics/cuda.*:MdForces/openmp.*:MdDynamics/openmp.*:MdInput.*' \
  --gtest_output="xml:$out/md_tests.xml" > "$out/md_tests.log" 2>&1 || status=1
tail -n 3 "$out/md_tests.log"

export OMP_PROC_BIND=spread OMP_PLACES=threads

echo "== CUDA: 100 force calls x every variant x float/double, both cases; layouts; MD steps"
# md/steps: the in.lj set-up at 32k, 256k, 2.048M and 4M atoms (auto variant, double and
# float) and the full/half-atomic x thread/warp variants at 4M atoms in double.
timeout 300 "$bench" \
  --benchmark_filter='^md/(force/.*|steps/(32000|256000|2048000|4000000)/auto/.*|steps/4000000/(full|half_atomic)_.*/double)/cuda/' \
  --benchmark_out="$out/md.json" --benchmark_out_format=json --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > "$out/md_cuda.txt" 2>&1 || status=1
grep -E '_median' "$out/md_cuda.txt" | head -80

echo "== OpenMP on all host cores: auto and full_thread forces, MD steps at 32k, 256k (one repetition)"
timeout 90 "$bench" \
  --benchmark_filter='^md/(force/.*/(auto|full_thread)/auto_layout/double|steps/(32000|256000)/auto/double)/openmp/' \
  --benchmark_out="$out/md_openmp.json" --benchmark_out_format=json --benchmark_repetitions=1 \
  > "$out/md_openmp.txt" 2>&1 || status=1
grep -E '^md/' "$out/md_openmp.txt" | head -40

echo "== end to end: inputs/md/lj_melt.yaml on cuda at 32k and 4M atoms"
timeout 120 "$hayate" run inputs/md/lj_melt.yaml --backend cuda --quiet --output "$out/lj_melt_32k" \
  > "$out/lj_melt_32k.log" 2>&1 || status=1
timeout 120 "$hayate" run inputs/md/lj_melt.yaml --backend cuda --quiet --output "$out/lj_melt_4M" \
  --set 'system.lattice.cells=[100,100,100]' > "$out/lj_melt_4M.log" 2>&1 || status=1
for d in lj_melt_32k lj_melt_4M; do
  echo "-- $d"; cat "$out/$d/thermo.csv" "$out/$d/timers.csv" 2>/dev/null
done

exit $status
