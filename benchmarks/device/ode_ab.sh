#!/usr/bin/env bash
# A/B of two benchmark binaries on the ODE step benchmarks, alternated (old, new, old, new) in
# one run so that both see the same machine state; medians of 5 repetitions each. Writes the raw
# lines and a table of microseconds per step per benchmark and round to OUTPUT_DIR/ab.md.
# Builds nothing: expects build/cuda from the repository root (the "new" binary).
#   usage: benchmarks/device/ode_ab.sh OUTPUT_DIR OLD_HAYATE_BENCH [FILTER]
#   default FILTER: the teams-mode steps of every network model and the one-core reference
#   of LR-Line.
set -uo pipefail
out=${1:?usage: benchmarks/device/ode_ab.sh OUTPUT_DIR OLD_HAYATE_BENCH [FILTER]}
old=${2:?usage: benchmarks/device/ode_ab.sh OUTPUT_DIR OLD_HAYATE_BENCH [FILTER]}
filter=${3:-'^ode/step/(lr_line|lr_ring|rybak_cpg|wb_net)/(euler|rk4)/(teams|teams_unmerged|reference)/(cuda|one_core)'}
. "$(dirname "$0")/ode_env.sh"
ode_env "$out" ab_device.txt
status=0
for round in 1 2; do
  for which in old new; do
    bin=$old
    [ "$which" = new ] && bin="$build/benchmarks/hayate_bench"
    "$bin" --benchmark_filter="$filter" --benchmark_repetitions=5 \
      --benchmark_report_aggregates_only=true --benchmark_out_format=json \
      --benchmark_out="$out/ab_${which}${round}.json" > "$out/ab_${which}${round}.txt" 2>&1 || status=1
  done
done
python3 - "$out" <<'PY' || status=1
import json, os, sys
out = sys.argv[1]
runs = ["old1", "new1", "old2", "new2"]
table = {}
for r in runs:
    path = os.path.join(out, f"ab_{r}.json")
    if not os.path.exists(path):
        continue
    for b in json.load(open(path))["benchmarks"]:
        if b.get("aggregate_name") == "median":
            table.setdefault(b["run_name"], {})[r] = b.get("seconds_per_step", 0.0) * 1e6
lines = ["| benchmark (us/step, median of 5) | " + " | ".join(runs) + " |",
         "|---|" + "---|" * len(runs)]
for name, row in table.items():
    lines.append(f"| {name} | " + " | ".join(f"{row[r]:.2f}" if r in row else "" for r in runs) + " |")
open(os.path.join(out, "ab.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
exit $status
