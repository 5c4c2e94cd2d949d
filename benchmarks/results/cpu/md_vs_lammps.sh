#!/usr/bin/env bash
# hayate vs LAMMPS (Debian lammps package, `lmp`) on the in.lj melt, 32,000 atoms, 100 steps,
# on 1 and 2 cores. Run from the repository root with build/openmp built. Prints the loop time
# of each run (LAMMPS: "Loop time"; hayate: timers.csv without setup), best of REPEAT runs.
set -euo pipefail
repeat=${REPEAT:-3}
here=benchmarks/results/cpu
hayate=build/openmp/hayate
tmp=$(mktemp -d)
lammps_loop() { grep -o 'Loop time of [0-9.]*' "$1" | awk '{print $4}'; }
hayate_loop() { awk -F, 'NR > 1 && $1 != "setup" { s += $3 } END { printf "%.4f\n", s }' "$1"; }
best() { sort -g | head -1; }
declare -A runs
for r in $(seq "$repeat"); do
  OMP_NUM_THREADS=1 lmp -in $here/in.lj -log none > "$tmp/l1" 2>&1
  runs[lammps_1core]+="$(lammps_loop "$tmp/l1") "
  OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe -np 2 lmp -in $here/in.lj -log none > "$tmp/l2" 2>&1
  runs[lammps_2ranks]+="$(lammps_loop "$tmp/l2") "
  OMP_WAIT_POLICY=passive $hayate run inputs/md/lj_melt.yaml --backend serial --quiet --output "$tmp/hs" > /dev/null 2>&1
  runs[hayate_serial]+="$(hayate_loop "$tmp/hs/timers.csv") "
  OMP_NUM_THREADS=1 OMP_PROC_BIND=false $hayate run inputs/md/lj_melt.yaml --backend openmp --quiet --output "$tmp/h1" > /dev/null 2>&1
  runs[hayate_openmp_1]+="$(hayate_loop "$tmp/h1/timers.csv") "
  OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads $hayate run inputs/md/lj_melt.yaml --backend openmp --quiet --output "$tmp/h2" > /dev/null 2>&1
  runs[hayate_openmp_2]+="$(hayate_loop "$tmp/h2/timers.csv") "
done
for k in lammps_1core lammps_2ranks hayate_serial hayate_openmp_1 hayate_openmp_2; do
  b=$(echo ${runs[$k]} | tr ' ' '\n' | best)
  printf "%-16s best %-8s s/100 steps = %7.1f steps/s   (runs: %s)\n" "$k" "$b" "$(awk -v t="$b" 'BEGIN{print 100/t}')" "${runs[$k]}"
done
rm -rf "$tmp"
