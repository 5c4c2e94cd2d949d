#!/usr/bin/env bash
# Kernel-level evidence on the GPU machine, for questions a benchmark rate cannot answer
# (how much of a call is the kernel, what limits it, which instructions the loop issues).
# Builds nothing; expects build/cuda from the repository root. Writes into OUTDIR:
#   sass-<tag>.txt     SASS of every kernel of hayate_bench whose name matches the tag's regex,
#                      and sass-<tag>.hist: opcode counts of those kernels
#   ncu-<tag>.txt      Nsight Compute: duration, speed of light, memory, warp stalls and occupancy
#                      of the first COUNT launches of kernels matching the tag's regex, run by
#                      the benchmark filter given (clocks left as the card runs them)
# usage: benchmarks/device/kernels.sh OUTDIR sass TAG KERNEL_REGEX
#        benchmarks/device/kernels.sh OUTDIR ncu TAG KERNEL_REGEX BENCH_FILTER [COUNT]
set -euo pipefail
out=${1:?usage: see the header}
mode=${2:?mode: sass or ncu}
tag=${3:?tag}
regex=${4:?kernel regex}
build=${BUILD:-build/cuda}
mkdir -p "$out"
[ -d "$build/devlibs" ] && export LD_LIBRARY_PATH="$build/devlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
bench=$build/benchmarks/hayate_bench
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
  *)
    echo "unknown mode $mode (sass or ncu)" >&2
    exit 2
    ;;
esac
