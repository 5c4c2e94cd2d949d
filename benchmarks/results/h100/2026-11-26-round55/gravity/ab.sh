#!/usr/bin/env bash
# Short A/B: CUDA gravity tests of new, then base/new alternated on Plummer 2^23 monopoles.
set -uo pipefail
root=$(pwd); O=${OUT:-/tmp/out}; mkdir -p "$O" /tmp/w5
pkill -f build/cuda/hayate 2>/dev/null
for n in base new; do rm -rf /tmp/b/$n; mkdir -p /tmp/b/$n; tar -C /tmp/b/$n -xJf .deps/grav-$n.tar.xz; done
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv > "$O/device.txt" 2>&1
B=/tmp/b/new/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
(cd $B/unit_tests && HAYATE_TEST_BINARY=$B/hayate HAYATE_TEST_SOURCE_DIR=$root OMP_PROC_BIND=false \
   timeout 120 ./hayate_tests --gtest_filter='Gravity*') > "$O/tests-cuda-gravity-new.txt" 2>&1
tail -3 "$O/tests-cuda-gravity-new.txt"
for round in ${ROUNDS:-1 2}; do
  for b in ${BUILDS:-base new}; do
    B=/tmp/b/$b/build/cuda; export LD_LIBRARY_PATH=$B/devlibs
    HAYATE_BIN=$B/hayate timeout 150 bash benchmarks/device/gravity_block.sh "/tmp/w5/r$round-$b" ${CASES:-plummer_2e23_monopole} > "/tmp/w5/r$round-$b.log" 2>&1
    cp "/tmp/w5/r$round-$b/summary.md" "$O/summary-r$round-$b.md" 2>/dev/null
    echo "== round $round $b"; grep "^| plummer\|^| galaxy" "/tmp/w5/r$round-$b/summary.md"
  done
done
