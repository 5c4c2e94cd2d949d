#!/usr/bin/env bash
# Packs what a GPU machine needs of a CUDA build into one compressed file, small enough to copy
# there with the repository: the three executables and the timeline connector (stripped of
# host symbols) and the shared libraries of scripts/device_libs.sh. Unpack from the repository root with `tar -xJf FILE`;
# the files land in BUILD as they were.
# usage: scripts/pack_cuda_build.sh [BUILD_DIR] [OUTPUT]   (defaults: build/cuda, .deps/cuda-binaries.tar.xz)
set -euo pipefail
build=${1:-build/cuda}
output=${2:-.deps/cuda-binaries.tar.xz}
bash "$(dirname "$0")/device_libs.sh" "$build" >/dev/null
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for f in hayate unit_tests/hayate_tests benchmarks/hayate_bench benchmarks/libhayate_timeline.so; do
  [ -e "$build/$f" ] || continue
  mkdir -p "$stage/$build/$(dirname "$f")"
  strip -o "$stage/$build/$f" "$build/$f"
done
cp -r "$build/devlibs" "$stage/$build/devlibs"
mkdir -p "$(dirname "$output")"
tar -C "$stage" -cJf "$output" "$build"
ls -l "$output"
