#!/usr/bin/env bash
# Device call: Nsight Compute of a group-walk launch (WSKIP, default the ninth: a tick with 73%
# of the particles due) and of one evaluation's 11 moments launches (MSKIP), Plummer 2^23 monopoles,
# FP32, block steps, one cycle. BUILD_TARBALL: a build packed by scripts/pack_cuda_build.sh.
set -uo pipefail
root=$(pwd)
O=${OUT:-/tmp/out}; mkdir -p "$O"
mkdir -p /tmp/b/base; tar -C /tmp/b/base -xJf "$BUILD_TARBALL"
B=/tmp/b/base/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
export OMP_PROC_BIND=spread OMP_PLACES=threads
secs="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section InstructionStats --section SchedulerStats --section SourceCounters --section MemoryWorkloadAnalysis"
# profile NAME KERNEL_REGEX SKIP COUNT: one one-cycle Plummer run under Nsight Compute, its report
# as details and per-SASS-line source counters.
profile() {
  local name=$1 kernel=$2 skip=$3 count=$4
  timeout 240 ncu --clock-control none --kernel-name-base demangled -k "regex:$kernel" \
    --launch-skip "$skip" -c "$count" $secs --import-source no --export "$O/$name" -f \
    "$B/hayate" run "$root/inputs/gravity/plummer_tree.yaml" --backend cuda --quiet \
    --output "/tmp/run-$name" --set precision=float --set system.n=8388608 \
    --set time.integrator=block --set run.steps=1 --set output.every=1 \
    --set output.snapshot_every=0 --set output.force_error_every=0 \
    --set tree.quadrupole=false > "$O/ncu-$name.log" 2>&1
  tail -3 "$O/ncu-$name.log"
  ncu --import "$O/$name.ncu-rep" --page details > "$O/ncu-$name-details.txt" 2>&1
  ncu --import "$O/$name.ncu-rep" --page source --csv --print-source sass > "$O/ncu-$name-source.csv" 2>&1
}
profile walk GroupWalkKernel "${WSKIP:-8}" 1
profile moments level_moments "${MSKIP:-88}" 11
cd "$O" && rm -f ./*.ncu-rep && xz -9 ncu-walk-source.csv ncu-moments-source.csv && ls -la
