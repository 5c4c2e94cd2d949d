#!/usr/bin/env bash
# Device call: Nsight Compute of HEAD's group walk (a full tick) and one evaluation's moments,
# Plummer 2^23 monopoles, FP32, block steps, one cycle.
set -uo pipefail
root=$(pwd)
O=${OUT:-/tmp/out}; mkdir -p "$O"
PB=${PB:-base}; mkdir -p /tmp/b/$PB; tar -C /tmp/b/$PB -xJf .deps/grav-$PB.tar.xz
B=/tmp/b/$PB/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
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
cd "$O" && rm -f *.ncu-rep && xz -9 ncu-walk-source.csv && ls -la
