#!/usr/bin/env bash
# The performance gate on the GPU machine: the reference suite (benchmarks/reference/suite.txt)
# of two builds, alternated base, new, base, new, ... for ROUNDS rounds of REPS repetitions each,
# in one run. Prints per benchmark faster / slower / same (scripts/bench_compare.py: slower = a
# median beyond 2% and no overlap of the two builds' ranges over the rounds) and exits 1 when
# anything is slower. OUT keeps every round's JSON, compare.md and summary.json (the new build's
# numbers in the form benchmarks/reference/<device>.json keeps).
#
#   benchmarks/regress.sh BASE_BUILD NEW_BUILD OUT        (build folders, e.g. build/cuda)
#   ROUNDS=3 REPS=5 SUITE=benchmarks/reference/suite.txt  (defaults)
#
# Both builds travel to the GPU machine packed together: scripts/pack_cuda_build.sh OUT.tar.xz
# BUILD1 BUILD2. docs/dev/benchmarking.md says how to read the table and refresh a reference.
set -euo pipefail
base=${1:?usage: regress.sh BASE_BUILD NEW_BUILD OUT}
new=${2:?usage: regress.sh BASE_BUILD NEW_BUILD OUT}
out=${3:?usage: regress.sh BASE_BUILD NEW_BUILD OUT}
rounds=${ROUNDS:-3}
reps=${REPS:-5}
here=$(cd "$(dirname "$0")" && pwd)
suite=${SUITE:-$here/reference/suite.txt}
mkdir -p "$out"

# One regular expression for the suite: each name escaped, followed by '/' or the end.
filter=$(grep -v -e '^#' -e '^[[:space:]]*$' "$suite" |
         sed -e 's/[][\.*^$()+?{}|]/\\&/g' | paste -sd'|' -)
filter="^($filter)(/|$)"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1 || true)
device=${device:-$(hostname)}
export OMP_PROC_BIND=${OMP_PROC_BIND:-spread} OMP_PLACES=${OMP_PLACES:-threads}

run_build() {  # BUILD LABEL ROUND
  local build=$1 label=$2 round=$3
  local libs="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  LD_LIBRARY_PATH=$libs "$build/benchmarks/hayate_bench" --benchmark_filter="$filter" \
    --benchmark_repetitions="$reps" --benchmark_context=device="$device" \
    --benchmark_context=build="$label" \
    --benchmark_out="$out/$label-$round.json" --benchmark_out_format=json \
    >"$out/$label-$round.txt" 2>&1 || {
    echo "regress.sh: $label build failed in round $round (see $out/$label-$round.txt)" >&2
    tail -n 20 "$out/$label-$round.txt" >&2
    exit 2
  }
}

for round in $(seq 1 "$rounds"); do
  run_build "$base" base "$round"
  run_build "$new" new "$round"
  echo "round $round of $rounds done"
done

commit=$(LD_LIBRARY_PATH="$new/devlibs" "$new/hayate" --version 2>/dev/null | head -n 1 || true)
set +e
python3 "$here/../scripts/bench_compare.py" \
  --base $(for r in $(seq 1 "$rounds"); do echo "$out/base-$r.json"; done) \
  --new $(for r in $(seq 1 "$rounds"); do echo "$out/new-$r.json"; done) \
  --summary "$out/summary.json" --describe "build=$commit" --describe "date=$(date -u +%F)" \
  --describe "rounds=$rounds" --describe "repetitions=$reps" \
  --describe "command=benchmarks/regress.sh BASE NEW OUT (ROUNDS=$rounds REPS=$reps)" |
  tee "$out/compare.md"
status=${PIPESTATUS[0]}
exit "$status"
