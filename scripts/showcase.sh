#!/usr/bin/env bash
# A short tour of the four solvers (about a minute on two cores): the in.lj melt, a Plummer
# sphere with the Barnes-Hut tree, flow past a cylinder in an FHP lattice gas, and a Luo-Rudy
# action potential. Prints what ran and where to look.
# usage: scripts/showcase.sh [HAYATE] [OUTPUT_DIR]   (defaults: build/openmp/hayate, out/showcase)
set -euo pipefail
hayate=${1:-build/openmp/hayate}
out=${2:-out/showcase}
here=$(cd "$(dirname "$0")/.." && pwd)
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}
mkdir -p "$out"

run() {  # NAME INPUT [--set ...]
  local name=$1 input=$2
  shift 2
  printf '  %-9s %s ' "$name" "$input"
  local start=$SECONDS
  "$hayate" run "$here/$input" --output "$out/$name" --quiet "$@" || {
    echo "FAILED"
    exit 1
  }
  echo "($((SECONDS - start)) s)"
}

echo "hayate showcase: outputs in $out/"
run md inputs/md/lj_melt.yaml
run gravity inputs/gravity/plummer_tree.yaml
run fhp inputs/fhp/cylinder.yaml --set run.steps=8000 --set output.fields_every=8000
run ode inputs/ode/lr91.yaml --set run.t_end=1000
python3 "$here/scripts/plot_trace.py" "$out/ode/trace.csv" "$out/ode/trace.svg" lr91.V \
  --title "Luo-Rudy 1991: membrane potential (mV), one beat"

last() { tail -n 1 "$1"; }
png=$(ls "$out"/fhp/fields_*.png | grep -v profile | tail -n 1)
cat <<EOF

What ran, and where to look:
  md       LAMMPS' in.lj: 32,000 Lennard-Jones atoms melting from fcc, 100 NVE steps.
           $out/md/thermo.csv (step,temp,pe,ke,etotal,press); last row: $(last "$out/md/thermo.csv")
  gravity  8,192-body Plummer sphere, Barnes-Hut tree (acceleration MAC, quadrupoles), 64 steps.
           $out/gravity/thermo.csv (energy error in de); force_error.csv: tree vs direct sum.
  fhp      FHP-III flow past a cylinder between walls, 2048 x 1024 sites, 8000 steps.
           $png  (speed colour map with velocity arrows: open it in any image viewer)
  ode      Luo-Rudy 1991 ventricular cell paced at 1 Hz, one beat.
           $out/ode/trace.csv; plot: $out/ode/trace.svg (open in a browser)
Every run also writes run.yaml (the resolved input) and timers.csv. Next: docs/user/getting-started.md
EOF
