#!/usr/bin/env bash
# Teams mode with and without a halo (compiler.halo) on the network models: microseconds per step,
# medians of 5, the halo and the steps per block the engine laid out (-1: none). Writes the raw
# output and OUTPUT_DIR/halo.md. Builds nothing: expects build/cuda from the repository root.
#   usage: benchmarks/device/ode_halo.sh OUTPUT_DIR [FILTER]
set -uo pipefail
out=${1:?usage: benchmarks/device/ode_halo.sh OUTPUT_DIR [FILTER]}
filter=${2:-'^ode/step/(lr_line|lr_ring|rybak_cpg|wb_net)/(euler|rk4)/(teams|teams_halo[0-9]+)/cuda|^ode/step/lr_line/(euler|rk4)/reference'}
. "$(dirname "$0")/ode_env.sh"
ode_env "$out" halo_device.txt
status=0
"$build/benchmarks/hayate_bench" --benchmark_filter="$filter" --benchmark_repetitions=5 \
  --benchmark_report_aggregates_only=true --benchmark_out_format=json \
  --benchmark_out="$out/halo.json" > "$out/halo.txt" 2>&1 || status=1
python3 - "$out" <<'PY' || status=1
import json, os, re, sys
out = sys.argv[1]
rows = {}
for b in json.load(open(os.path.join(out, "halo.json")))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    m = re.match(r"ode/step/([^/]+)/([^/]+)/([^/]+)/", b["run_name"])
    if not m:
        continue
    model, method, variant = m.groups()
    rows.setdefault((model, method), []).append(
        (variant, b.get("seconds_per_step", 0.0) * 1e6, b.get("halo"), b.get("block_steps")))
lines = ["| model | method | variant | us/step (median of 5) | halo laid out | steps per block |",
         "|---|---|---|---|---|---|"]
cell = lambda v: "" if v is None else str(int(v))
for (model, method), vs in rows.items():
    for variant, us, h, bs in vs:
        lines.append(f"| {model} | {method} | {variant} | {us:.2f} | {cell(h)} | {cell(bs)} |")
open(os.path.join(out, "halo.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
exit $status
