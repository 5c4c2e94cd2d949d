#!/usr/bin/env bash
# Device call: one build, runtime variants (HAYATE_SET strings separated by ';'), alternated.
set -uo pipefail
root=$(pwd)
O=${OUT:-/tmp/out}; W=/tmp/w; mkdir -p "$W" "$O"
mkdir -p /tmp/b/x; tar -C /tmp/b/x -xJf "${TAR:-.deps/grav-full2.tar.xz}"
B=/tmp/b/x/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$W/device.txt" 2>&1
IFS=';' read -ra VARS <<< "${VARIANTS:-tree.leaf_size=32}"
cases=${CASES:-"plummer_2e23_monopole"}
for round in $(seq 1 ${ROUNDS:-1}); do
  i=0
  for v in "${VARS[@]}"; do
    i=$((i+1))
    HAYATE_SET="$v" HAYATE_BIN=$B/hayate bash benchmarks/device/gravity_block.sh "$W/r$round-v$i" $cases > "$W/r$round-v$i.log" 2>&1
    echo "== round $round v$i [$v]"; grep "^| plummer\\|^| galaxy" "$W/r$round-v$i/summary.md" | sort -u
    tar -C /tmp -cJf "$O/w.tar.xz" w
  done
done
