#!/usr/bin/env bash
# Gravity on the GPU machine, part 1: unit tests of the CUDA build, the direct-summation
# benchmarks (interactions/s per precision and backend, j-split on/off, launch-shape sweep, FP32
# peak probe), the key-sort benchmark and end-to-end runs of the shipped inputs. The tree at
# scale is part 2, benchmarks/device/gravity_tree.sh. Builds nothing: expects build/cuda from the
# repo root. Usage: benchmarks/device/gravity.sh OUTPUT_DIR     (at most ~9 minutes: the
# benchmarks and the sweep are cut at 240 and 200 s; 100 s cut both on the H100)
set -uo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTPUT_DIR" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/cuda
mkdir -p "$1"
out=$(cd "$1" && pwd)
for bin in hayate unit_tests/hayate_tests benchmarks/hayate_bench; do
  if [ ! -x "$build/$bin" ]; then
    echo "missing $build/$bin: build the cuda preset first" >&2
    exit 2
  fi
done
# Libraries copied by scripts/device_libs.sh for machines whose image lacks them.
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
log() { echo "[gravity.sh $(date +%H:%M:%S)] $*"; }

log "device"
{ nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv || true; } > "$out/device.txt"
"$build/hayate" info > "$out/info.txt" 2>&1 || status=1
git -C "$root" rev-parse HEAD > "$out/commit.txt" 2>/dev/null || true

log "unit tests (cuda, openmp, common)"
mkdir -p "$out/tests"
(cd "$out/tests" && HAYATE_TEST_BINARY="$build/hayate" HAYATE_TEST_SOURCE_DIR="$root" \
  OMP_PROC_BIND=false timeout 80 "$build/unit_tests/hayate_tests" \
  --gtest_filter='Gravity*-*/serial.*' --gtest_output=xml:"$out/gravity_tests.xml") > "$out/gravity_tests.log" 2>&1 \
  || { status=1; log "unit tests FAILED (see gravity_tests.log)"; }
tail -3 "$out/gravity_tests.log"

export OMP_PROC_BIND=spread OMP_PLACES=threads
log "direct and sort benchmarks (5 repetitions)"
timeout 240 "$build/benchmarks/hayate_bench" \
  --benchmark_filter='^gravity/((direct|direct_nosplit|fp32_peak|sort)/.*cuda|(direct/float|fp32_peak|sort)/.*openmp)' \
  --benchmark_out="$out/gravity.json" --benchmark_out_format=json \
  --benchmark_repetitions=5 --benchmark_report_aggregates_only=true > "$out/gravity_bench.log" 2>&1 \
  || { status=1; log "benchmarks FAILED (see gravity_bench.log)"; }

log "launch-shape sweep (1 repetition)"
timeout 200 "$build/benchmarks/hayate_bench" \
  --benchmark_filter='^gravity/direct_sweep/.*(cuda|openmp)' \
  --benchmark_out="$out/gravity_sweep.json" --benchmark_out_format=json \
  > "$out/gravity_sweep.log" 2>&1 || { status=1; log "sweep FAILED (see gravity_sweep.log)"; }

log "end-to-end inputs"
run_input() {  # name, input, extra arguments
  local name=$1 input=$2
  shift 2
  timeout 30 "$build/hayate" run "$root/inputs/gravity/$input.yaml" --backend cuda --quiet \
    --output "$out/runs/$name" "$@" > "$out/runs_$name.log" 2>&1 \
    || { status=1; log "run $name FAILED"; }
}
mkdir -p "$out/runs"
run_input plummer_direct plummer_direct
run_input plummer_direct_262k_float plummer_direct --set system.n=262144 --set precision=float \
  --set run.steps=5 --set output.every=5 --set output.snapshot_every=0
run_input kepler kepler
run_input plummer_tree plummer_tree
run_input galaxy_tree galaxy_tree

log "summary"
python3 - "$out" > "$out/summary.md" <<'PY' || status=1
import json, sys, os
out = sys.argv[1]
def load(name):  # a benchmark run cut by its timeout leaves unfinished JSON
    try:
        return json.load(open(os.path.join(out, name)))["benchmarks"]
    except (OSError, ValueError, KeyError):
        return []
def space_of(name):
    return next((p for p in name.split("/") if p in ("cuda", "openmp", "serial")), "?")
rows = [b for b in load("gravity.json") if b.get("aggregate_name", "median") == "median"]
peak = {space_of(b["name"]): b["flops_per_second"] for b in rows if b["name"].startswith("gravity/fp32_peak/")}
print("| benchmark | backend | N | splits | interactions/s | % FP32 peak (20 flops) | % (38 flops) |")
print("|---|---|---|---|---|---|---|")
for b in rows:
    if "interactions_per_second" not in b: continue
    space = space_of(b["name"])
    p = peak.get(space, 0)
    f20 = 100 * b["flops_20_per_second"] / p if p else float("nan")
    f38 = 100 * b["flops_38_per_second"] / p if p else float("nan")
    print(f"| {'/'.join(b['name'].split('/')[:3])} | {space} | {int(b['n'])} | {int(b['splits'])} | "
          f"{b['interactions_per_second']:.3e} | {f20:.1f} | {f38:.1f} |")
for space, p in peak.items():
    print(f"\nmeasured FP32 FMA peak on {space}: {p:.3e} flop/s")
sweep = [b for b in load("gravity_sweep.json") if "interactions_per_second" in b]
for n in sorted({int(b["n"]) for b in sweep}):
    for space in ("cuda", "openmp"):
        best = sorted((b for b in sweep if int(b["n"]) == n and space_of(b["name"]) == space),
                      key=lambda b: -b["interactions_per_second"])[:5]
        if best:
            print(f"\nbest launch shapes, N = {n}, {space}:")
            for b in best:
                print(f"- ipt {int(b['i_per_thread'])} team {int(b['team_size'])} tile {int(b['tile'])}"
                      f" splits {int(b['splits'])}: {b['interactions_per_second']:.3e} interactions/s")
sort = [b for b in rows if b["name"].startswith("gravity/sort/")]
if sort:
    print("\n| key sort (63-bit keys + index) | backend | N | ms | pairs/s |")
    print("|---|---|---|---|---|")
    for b in sort:
        print(f"| {b['name'].split('/')[2]} | {space_of(b['name'])} | {int(b['n'])} | "
              f"{b['real_time']:.3f} | {b['pairs_per_second']:.3e} |")
PY
cat "$out/summary.md"
log "done (status $status); results in $out"
exit $status
