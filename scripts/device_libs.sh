#!/usr/bin/env bash
# Copies the Debian shared libraries a build links (yaml-cpp, fmt, spdlog, benchmark) into
# BUILD/devlibs, so the build folder runs on a GPU machine whose image lacks them.
# System, compiler and CUDA runtime libraries are left to the target machine.
set -euo pipefail
build=${1:?usage: device_libs.sh BUILD_DIR}
mkdir -p "$build/devlibs"
for exe in "$build/hayate" "$build/unit_tests/hayate_tests" "$build/benchmarks/hayate_bench"; do
  [ -x "$exe" ] || continue
  ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    case "$name" in
      libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libgcc_s.so*|libstdc++.so*|\
      libgomp.so*|libcuda*.so*|ld-linux*) ;;
      *) cp -L "$path" "$build/devlibs/$name" ;;
    esac
  done
done
ls "$build/devlibs"
