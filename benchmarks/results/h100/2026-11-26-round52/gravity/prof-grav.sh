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
timeout 240 ncu --clock-control none --kernel-name-base demangled -k "regex:GroupWalkKernel" --launch-skip ${WSKIP:-8} -c 1 $secs \
  --import-source no --export "$O/walk" -f $B/hayate run "$root/inputs/gravity/plummer_tree.yaml" --backend cuda --quiet \
  --output /tmp/run-walk --set precision=float --set system.n=8388608 --set time.integrator=block \
  --set run.steps=1 --set output.every=1 --set output.snapshot_every=0 --set output.force_error_every=0 \
  --set tree.quadrupole=false > "$O/ncu-walk.log" 2>&1
tail -3 "$O/ncu-walk.log"
ncu --import "$O/walk.ncu-rep" --page details > "$O/ncu-walk-details.txt" 2>&1
ncu --import "$O/walk.ncu-rep" --page source --csv --print-source sass > "$O/ncu-walk-source.csv" 2>&1
timeout 200 ncu --clock-control none --kernel-name-base demangled -k "regex:level_moments" --launch-skip ${MSKIP:-88} -c 11 $secs \
  --import-source no --export "$O/moments" -f $B/hayate run "$root/inputs/gravity/plummer_tree.yaml" --backend cuda --quiet \
  --output /tmp/run-mom --set precision=float --set system.n=8388608 --set time.integrator=block \
  --set run.steps=1 --set output.every=1 --set output.snapshot_every=0 --set output.force_error_every=0 \
  --set tree.quadrupole=false > "$O/ncu-moments.log" 2>&1
tail -3 "$O/ncu-moments.log"
ncu --import "$O/moments.ncu-rep" --page details > "$O/ncu-moments-details.txt" 2>&1
ncu --import "$O/moments.ncu-rep" --page source --csv --print-source sass > "$O/ncu-moments-source.csv" 2>&1
cd "$O" && rm -f *.ncu-rep && xz -9 ncu-walk-source.csv ncu-moments-source.csv && ls -la
