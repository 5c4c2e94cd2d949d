#!/usr/bin/env bash
# nvcc compiles each __host__ __device__ lambda with helper state private to its translation
# unit, while the linker keeps one copy of the lambda wrapper's functions: the same lambda
# compiled in two units can call through a null pointer (docs/dev/reliability.md). Fails when
# BINARY holds such a lambda more than once, naming the functions that enclose them.
#   scripts/check_cuda_lambdas.sh build/cuda-check/hayate
set -euo pipefail
binary=${1:?usage: check_cuda_lambdas.sh BINARY}
helpers=$(nm -C "$binary" | grep '__nv_hdl_helper<.*::fp_deleter' | cut -d' ' -f3- || true)
if [ -z "$helpers" ]; then
  echo "check_cuda_lambdas: $binary holds no host-device lambda helpers (not a CUDA build?)" >&2
  exit 1
fi
dups=$(echo "$helpers" | sort | uniq -d)
if [ -n "$dups" ]; then
  echo "check_cuda_lambdas: $(echo "$dups" | wc -l) host-device lambdas of $binary are compiled" \
    "in more than one translation unit; their enclosing functions:" >&2
  echo "$dups" | sed -E 's/.*, &\(?(.*)\)?, [0-9]+u>, .*/\1/; s/\(.*//; s/^[^ ]+ //' | cut -c1-160 |
    sort -u | head -n 20 >&2
  exit 1
fi
echo "check_cuda_lambdas: the $(echo "$helpers" | wc -l) host-device lambdas of $binary are each" \
  "compiled in one translation unit"
