#!/usr/bin/env bash
# Kernel-level evidence on the GPU machine, for questions a benchmark rate cannot answer
# (how much of a call is the kernel, what limits it, which instructions the loop issues).
# Builds nothing; expects build/cuda from the repository root. Writes into OUTDIR:
#   sass-<tag>.txt     SASS of every kernel of hayate_bench whose name matches the tag's regex,
#                      and sass-<tag>.hist: opcode counts of those kernels
#   ncu-<tag>.txt      Nsight Compute: duration, speed of light, memory, warp stalls and occupancy
#                      of the first COUNT launches of kernels matching the tag's regex, run by
#                      the benchmark filter given (clocks left as the card runs them)
#   times-<tag>.txt    the GPU duration of each of the first COUNT launches matching the regex
#                      (Nsight Compute, one metric), summed per kernel: where a multi-kernel
#                      step spends its device time, launch gaps excluded
# usage: benchmarks/device/kernels.sh OUTDIR sass TAG KERNEL_REGEX
#        benchmarks/device/kernels.sh OUTDIR ncu TAG KERNEL_REGEX BENCH_FILTER [COUNT]
#        benchmarks/device/kernels.sh OUTDIR times TAG KERNEL_REGEX BENCH_FILTER [COUNT]
set -euo pipefail
out=${1:?usage: see the header}
mode=${2:?mode: sass, ncu or times}
tag=${3:?tag}
regex=${4:?kernel regex}
build=${BUILD:-build/cuda}
mkdir -p "$out"
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench=$build/benchmarks/hayate_bench
# The largest FHP lattices are past the benchmark's default size cap.
export HAYATE_FHP_BENCH_MAX_SITES=${HAYATE_FHP_BENCH_MAX_SITES:-$((1 << 30))}
case "$mode" in
  sass)
    # cuobjdump prints "Function : <mangled name>" before each kernel's code.
    cuobjdump -sass "$bench" | awk -v re="$regex" '
      /Function : / { keep = ($0 ~ re) }
      keep { print }' >"$out/sass-$tag.txt"
    grep -oE '^\s+/\*[0-9a-f]+\*/\s+(@!?U?P[0-9T] )?[A-Z][A-Z0-9_.]*' "$out/sass-$tag.txt" |
      awk '{print $NF}' | sed 's/\..*//' | sort | uniq -c | sort -rn >"$out/sass-$tag.hist"
    grep -c 'Function : ' "$out/sass-$tag.txt" | sed 's/^/kernels: /'
    head -n 25 "$out/sass-$tag.hist"
    ;;
  ncu)
    filter=${5:?benchmark filter}
    count=${6:-3}
    ncu --clock-control none --kernel-name-base demangled -k "regex:$regex" -c "$count" \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis \
      "$bench" --benchmark_filter="$filter" --benchmark_min_time=0.01 \
      >"$out/ncu-$tag.txt" 2>&1 || echo "ncu FAILED (see ncu-$tag.txt)" >&2
    grep -E 'Duration|Memory Throughput|Compute \(SM\) Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Issue Slots Busy|L1/TEX Hit|Executed Ipc A' \
      "$out/ncu-$tag.txt" | head -n 40 || true
    ;;
  times)
    filter=${5:?benchmark filter}
    count=${6:-200}
    ncu --clock-control none --kernel-name-base demangled -k "regex:$regex" -c "$count" \
      --metrics gpu__time_duration.sum --csv "$bench" --benchmark_filter="$filter" \
      --benchmark_min_time=0.01 >"$out/ncu-times-$tag.csv" 2>&1 || echo "ncu FAILED" >&2
    python3 - "$out/ncu-times-$tag.csv" >"$out/times-$tag.txt" <<'PY'
import csv, collections, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
head, body = rows[0], rows[1:]
k, u, v = head.index("Kernel Name"), head.index("Metric Unit"), head.index("Metric Value")
scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3,
         "s": 1e6, "second": 1e6}
total, calls = collections.Counter(), collections.Counter()
for r in body:
    name = r[k][:160]
    total[name] += float(r[v].replace(",", "")) * scale.get(r[u], 1.0)
    calls[name] += 1
grand = sum(total.values())
print(f"{len(body)} launches, {grand:.1f} us of kernel time")
for name, t in total.most_common():
    print(f"{t:12.1f} us {100 * t / grand:5.1f}% {calls[name]:5d} calls  {name}")
PY
    head -n 25 "$out/times-$tag.txt"
    ;;
  *)
    echo "unknown mode $mode (sass, ncu or times)" >&2
    exit 2
    ;;
esac
