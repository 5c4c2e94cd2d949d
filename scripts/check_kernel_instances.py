#!/usr/bin/env python3
"""Fails when a Kokkos kernel lambda is compiled in more than one of the object files given.

nvcc gives every translation unit its own state for a __host__ __device__ lambda, while the
linker keeps one copy of the lambda wrapper's functions: the same lambda compiled in two units
of one binary can call through a null pointer (docs/dev/reliability.md). A kernel template that
several units use is therefore compiled in one (core/exec/instantiate.hpp). This check reads
the host build's objects, where the same duplicates show as one lambda's parallel_for,
parallel_reduce or parallel_scan defined in two objects, so CI catches them without a CUDA
build; scripts/check_cuda_lambdas.sh checks a CUDA binary itself.

  scripts/check_kernel_instances.py OBJECT...   (the objects linked into one binary)
"""
import collections
import os
import re
import subprocess
import sys

KERNEL = re.compile(r"Kokkos::Impl::Parallel\w*<(hayate::.*?)::\{lambda\(")


def kernel_lambdas(obj):
    out = subprocess.run(["nm", "-C", "--defined-only", obj], capture_output=True, text=True,
                         check=True).stdout
    found = set()
    for line in out.splitlines():
        m = KERNEL.search(line)
        if m:
            found.add(m.group(1))
    return found


def main(objects):
    if not objects:
        print(__doc__, file=sys.stderr)
        return 2
    where = collections.defaultdict(list)
    for obj in objects:
        for fn in kernel_lambdas(obj):
            where[fn].append(os.path.basename(obj))
    if not where:
        print("check_kernel_instances: no kernel lambdas found in the objects given",
              file=sys.stderr)
        return 1
    dups = {fn: objs for fn, objs in where.items() if len(objs) > 1}
    if dups:
        print(f"check_kernel_instances: {len(dups)} kernel lambdas are compiled in more than one "
              "object; declare their templates extern and compile them once "
              "(core/exec/instantiate.hpp):", file=sys.stderr)
        for fn in sorted(dups)[:30]:
            print(f"  {fn[:160]}\n      in {', '.join(sorted(dups[fn]))}", file=sys.stderr)
        return 1
    print(f"check_kernel_instances: the {len(where)} kernel lambdas of {len(objects)} objects are "
          "each compiled in one")
    return 0


if __name__ == "__main__":
    # CTest hands $<TARGET_OBJECTS:...> over as one ';'-separated argument.
    sys.exit(main([o for arg in sys.argv[1:] for o in arg.split(";") if o]))
