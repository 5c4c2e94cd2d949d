#!/usr/bin/env bash
# Device call: host timeline (device awaited after each kernel) of Plummer 2^23 monopoles, block steps.
set -uo pipefail
root=$(pwd)
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$W" "$O"
mkdir -p /tmp/b/x; tar -C /tmp/b/x -xJf "${TAR:-.deps/grav-full2.tar.xz}"
B=/tmp/b/x/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
for ls in ${LEAVES:-32}; do
  KOKKOS_PROFILE_LIBRARY=$B/benchmarks/libhayate_timeline.so HAYATE_TIMELINE_SYNC=1 HAYATE_TIMELINE_FILE=$W/tl-$ls.csv \
  timeout 200 $B/hayate run inputs/gravity/plummer_tree.yaml --backend cuda --quiet --output $W/tlrun-$ls \
    --set precision=float --set system.n=8388608 --set time.integrator=block --set run.steps=3 --set output.every=3 \
    --set output.snapshot_every=0 --set output.force_error_every=0 --set tree.quadrupole=false --set tree.leaf_size=$ls > $W/tl-$ls.log 2>&1
  python3 benchmarks/tools/timeline_summary.py $W/tl-$ls.csv hayate::gravity::block_levels --skip 9 --last 16 > $W/tl-summary-$ls.txt 2>&1
  head -40 $W/tl-summary-$ls.txt
  xz -9 $W/tl-$ls.csv
done
rm -rf $W/tlrun-*/snapshots.xyz
tar -C /tmp -cJf "$O/w.tar.xz" w
