#!/usr/bin/env bash
# Builds hayate against a given Kokkos install and checks it: the unit tests (ctest) and every
# shipped input run to completion. This is how a Kokkos version is declared supported.
# usage: scripts/check_kokkos.sh KOKKOS_ROOT [BUILD_DIR] [extra cmake arguments...]
#   BUILD_DIR defaults to build/kokkos-check. CXX selects the compiler (it must be the one
#   Kokkos was built with). The log of each input run lands in BUILD_DIR/inputs/.
#   HAYATE_CHECK_BUILD_ONLY=1 stops after the build: a CUDA Kokkos built where there is no GPU
#   (then pack BUILD_DIR with scripts/pack_cuda_build.sh and run its tests on the GPU machine).
set -euo pipefail
root=${1:?usage: check_kokkos.sh KOKKOS_ROOT [BUILD_DIR] [cmake args...]}
build=${2:-build/kokkos-check}
shift $(( $# >= 2 ? 2 : 1 ))
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=${HAYATE_JOBS:-$(nproc)}
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$here" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DKokkos_ROOT="$root" -DHAYATE_ENABLE_BENCHMARKS=OFF "$@"
cmake --build "$build" -j "$jobs"
if [ "${HAYATE_CHECK_BUILD_ONLY:-0}" = 1 ]; then
  echo "check_kokkos.sh: built $build against $root (HAYATE_CHECK_BUILD_ONLY: tests not run)"
  exit 0
fi
(cd "$build" && ctest --output-on-failure)
mkdir -p "$build/inputs"
failed=0
for input in "$here"/inputs/*/*.yaml; do
  case "$input" in *.model.yaml) continue ;; esac
  name=$(basename "$(dirname "$input")")-$(basename "$input" .yaml)
  if OMP_PROC_BIND=false "$build/hayate" run "$input" --output "$build/inputs/$name" --quiet \
       >"$build/inputs/$name.log" 2>&1; then
    echo "input $name: ok"
  else
    echo "input $name: FAILED (exit $?), see $build/inputs/$name.log"
    failed=1
  fi
done
"$build/hayate" info | head -n 1
exit $failed
