#!/usr/bin/env bash
# Packs what a GPU machine needs of one or more CUDA builds into one compressed file, small enough
# to travel with the repository: per build the executables (stripped of host symbols) and the
# shared libraries of scripts/device_libs.sh. Unpack from the repository root with `tar -xJf FILE`;
# each build lands at its path as it was (two builds travel together for benchmarks/regress.sh).
# usage: scripts/pack_cuda_build.sh OUTPUT.tar.xz [BUILD_DIR ...]   (default build: build/cuda)
set -euo pipefail
output=${1:?usage: pack_cuda_build.sh OUTPUT.tar.xz [BUILD_DIR ...]}
shift
[ $# -gt 0 ] || set -- build/cuda
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for build in "$@"; do
  bash "$(dirname "$0")/device_libs.sh" "$build" >/dev/null
  for f in hayate unit_tests/hayate_tests benchmarks/hayate_bench; do
    [ -e "$build/$f" ] || continue
    mkdir -p "$stage/$build/$(dirname "$f")"
    strip -o "$stage/$build/$f" "$build/$f"
  done
  cp -r "$build/devlibs" "$stage/$build/devlibs"
done
mkdir -p "$(dirname "$output")"
tar -C "$stage" -cJf "$output" "$@"
ls -l "$output"
