#!/usr/bin/env bash
# Device call: host timelines (device awaited after each kernel) of Plummer 2^23 monopoles,
# block steps, for each packed build named in BUILDS (grav-NAME.tar.xz).
set -uo pipefail
root=$(pwd)
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$W" "$O"
for b in ${BUILDS:-new base}; do
  rm -rf /tmp/b/$b; mkdir -p /tmp/b/$b; tar -C /tmp/b/$b -xJf .deps/grav-$b.tar.xz
  B=/tmp/b/$b/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
  KOKKOS_PROFILE_LIBRARY=$B/benchmarks/libhayate_timeline.so HAYATE_TIMELINE_SYNC=1 HAYATE_TIMELINE_FILE=$W/tl-$b.csv \
  timeout 200 $B/hayate run inputs/gravity/plummer_tree.yaml --backend cuda --quiet --output $W/tlrun-$b \
    --set precision=float --set system.n=8388608 --set time.integrator=block --set run.steps=3 --set output.every=3 \
    --set output.snapshot_every=0 --set output.force_error_every=0 --set tree.quadrupole=false > $W/tl-$b.log 2>&1
  python3 benchmarks/tools/timeline_summary.py $W/tl-$b.csv hayate::gravity::block_levels --skip 9 --last 16 > $O/timeline-summary-$b.txt 2>&1
  head -32 $O/timeline-summary-$b.txt
  xz -9 -c $W/tl-$b.csv > $O/timeline-$b.csv.xz
done
