#!/usr/bin/env bash
# Lennard-Jones MD on the GPU machine: unit tests (cuda + openmp typed tests), the force-variant
# and MD-step benchmarks, and one end-to-end run of the in.lj input. Builds nothing: run from
# the repository root with build/cuda built. Usage: benchmarks/device/md.sh OUTPUT_DIR
# About 5 minutes in total on an H100 (tests ~1 min, CUDA benchmarks ~3.5 min, OpenMP and the
# two end-to-end runs <1 min); every step has a timeout so the whole stays under 6 minutes.
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
OMP_PROC_BIND=false timeout 100 "$tests" \
  --gtest_filter='MdForces/cuda.*:MdDynamics/cuda.*:MdForces/openmp.*:MdDynamics/openmp.*:MdInput.*:MdData.*' \
  --gtest_output="xml:$out/md_tests.xml" > "$out/md_tests.log" 2>&1 || status=1
tail -n 3 "$out/md_tests.log"

export OMP_PROC_BIND=spread OMP_PLACES=threads

echo "== CUDA: 100 force calls (split vs packed positions, thread/warp, full/half-atomic); MD steps"
# md/force: both cases, float and double: auto and full_thread (split positions, the measured
# winner) against full_thread, full_warp and half_atomic_thread with packed positions.
# md/steps: the in.lj set-up at 32k, 256k, 2.048M and 4M atoms (auto, double); at 4M also float,
# full_thread_packed (double), and a randomly ordered start that is never sorted.
# 27 benchmarks, about 3 minutes.
timeout 190 "$bench" \
  --benchmark_filter='^md/(force/[^/]*/(auto|full_thread|(full_thread|full_warp|half_atomic_thread)_packed)/auto_layout/.*|steps/(32000|256000|2048000|4000000)/auto/double|steps/4000000/(auto/float|full_thread_packed/double|auto_shuffled_unsorted/double))/cuda/' \
  --benchmark_out="$out/md.json" --benchmark_out_format=json --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true > "$out/md_cuda.txt" 2>&1 || status=1
grep -E '_median' "$out/md_cuda.txt" | head -80

echo "== OpenMP on all host cores: auto and full_thread forces, split and packed; 256k steps (one repetition)"
timeout 45 "$bench" \
  --benchmark_filter='^md/(force/rho1.0_100000/(auto|full_thread|full_thread_packed|half_duplicated_thread|half_duplicated_thread_packed)/auto_layout/double|steps/256000/auto/double)/openmp/' \
  --benchmark_out="$out/md_openmp.json" --benchmark_out_format=json --benchmark_repetitions=1 \
  > "$out/md_openmp.txt" 2>&1 || status=1
grep -E '^md/' "$out/md_openmp.txt" | head -40

echo "== end to end: inputs/md/lj_melt.yaml on cuda at 4M atoms, split and packed (timers)"
for p in split packed; do
  timeout 30 "$hayate" run inputs/md/lj_melt.yaml --backend cuda --quiet --output "$out/lj_melt_4M_$p" \
    --set 'system.lattice.cells=[100,100,100]' --set force.positions=$p > "$out/lj_melt_4M_$p.log" 2>&1 || status=1
  echo "-- $p"; cat "$out/lj_melt_4M_$p/thermo.csv" "$out/lj_melt_4M_$p/timers.csv" 2>/dev/null
done

exit $status
