#!/usr/bin/env bash
# Interleaved A/B of two hayate builds against LAMMPS (Debian `lmp`) on the 32,000-atom in.lj,
# 100 steps: per round LAMMPS on 1 core, both builds on the serial backend, LAMMPS on 2 MPI
# ranks, both builds on 2 OpenMP threads. Interleaving puts the machine's slow phases into every
# column alike; compare medians over rounds. Prints loop seconds (LAMMPS "Loop time"; hayate
# timers.csv without setup). Needs Debian's lammps package (`apt-get install lammps`: lmp, mpirun).
# usage: OLD=path/to/hayate NEW=path/to/hayate [ROUNDS=5] benchmarks/results/cpu/md_ab_vs_lammps.sh
set -uo pipefail
cd "$(git rev-parse --show-toplevel)"
old=${OLD:?set OLD to the baseline binary}
new=${NEW:-build/openmp/hayate}
here=benchmarks/results/cpu
tmp=$(mktemp -d)
hl() { awk -F, 'NR > 1 && $1 != "setup" { s += $3 } END { printf "%.4f", s }' "$1"; }
ll() { grep -o 'Loop time of [0-9.]*' "$1" | awk '{print $4}'; }
for r in $(seq "${ROUNDS:-5}"); do
  line="round $r:"
  OMP_NUM_THREADS=1 lmp -in $here/in.lj -log none >"$tmp/l1" 2>&1
  line+=" lmp1 $(ll "$tmp/l1")"
  for v in old new; do
    OMP_WAIT_POLICY=passive "${!v}" run inputs/md/lj_melt.yaml --backend serial --quiet \
      --output "$tmp/$v" >/dev/null 2>&1
    line+=" ${v}1 $(hl "$tmp/$v/timers.csv")"
  done
  OMP_NUM_THREADS=1 mpirun --allow-run-as-root --oversubscribe -np 2 lmp -in $here/in.lj \
    -log none >"$tmp/l2" 2>&1
  line+=" lmp2 $(ll "$tmp/l2")"
  for v in old new; do
    OMP_NUM_THREADS=2 OMP_PROC_BIND=spread OMP_PLACES=threads "${!v}" run inputs/md/lj_melt.yaml \
      --backend openmp --quiet --output "$tmp/${v}2" >/dev/null 2>&1
    line+=" ${v}2 $(hl "$tmp/${v}2/timers.csv")"
  done
  echo "$line"
done
rm -rf "$tmp"
