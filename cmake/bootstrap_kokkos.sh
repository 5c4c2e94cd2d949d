#!/usr/bin/env bash
# Builds and installs Kokkos 3.4.01 (from Debian's trilinos source) for one
# variant into DEPS/install-VARIANT. Skipped when the stamp matches the recipe.
#   bootstrap_kokkos.sh DEPS openmp|cuda
set -euo pipefail
deps=${1:?usage: bootstrap_kokkos.sh DEPS openmp|cuda}
variant=${2:?usage: bootstrap_kokkos.sh DEPS openmp|cuda}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$deps"
deps=$(cd "$deps" && pwd)
prefix="$deps/install-$variant"
jobs=${HAYATE_JOBS:-$(nproc)}
cuda_arch_flag=${HAYATE_CUDA_ARCH_FLAG:--arch=sm_90}

case "$variant" in
  openmp)
    kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON)
    cxx=${CXX:-g++}
    cxx_flags="" ;;
  cuda)
    kokkos_opts=(-DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_CUDA=ON
                 -DKokkos_ENABLE_CUDA_LAMBDA=ON -DKokkos_ARCH_HOPPER90=ON)
    cxx="$deps/src/kokkos/bin/nvcc_wrapper"
    cxx_flags="$cuda_arch_flag" ;;
  *) echo "hayate: unknown Kokkos variant '$variant' (expected openmp or cuda)" >&2; exit 2 ;;
esac

# The stamp covers everything that changes the install: recipe, patches, options, compiler.
recipe_hash=$(cat "$0" "$here"/patches/*.patch "$here/fetch_kokkos_source.sh" |
              { cat; echo "${kokkos_opts[*]} $cxx_flags $("${CXX:-g++}" --version | head -n 1)"; } |
              sha256sum | cut -c1-16)
stamp="$prefix/.hayate-stamp"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$recipe_hash" ]; then
  exit 0
fi

bash "$here/fetch_kokkos_source.sh" "$deps/src"

# Patches apply to a pristine copy so that re-running never double-patches.
srcdir="$deps/src-$variant"
rm -rf "$srcdir"
mkdir -p "$srcdir"
cp -a "$deps/src/kokkos" "$srcdir/"
for p in "$here"/patches/*.patch; do
  [ -f "$p" ] || continue
  patch -d "$srcdir" -p1 --quiet --forward <"$p"
done
[ "$variant" = cuda ] && cxx="$srcdir/kokkos/bin/nvcc_wrapper"

echo "hayate: building Kokkos 3.4.01 ($variant) into $prefix with $jobs jobs"
build="$deps/build-$variant"
rm -rf "$build" "$prefix"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$srcdir/kokkos" -B "$build/kokkos" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_CXX_STANDARD=17 \
  -DCMAKE_CXX_EXTENSIONS=OFF -DKokkos_ENABLE_TESTS=OFF "${kokkos_opts[@]}" >"$build.kokkos.log" 2>&1 ||
  { tail -n 40 "$build.kokkos.log" >&2; exit 1; }
cmake --build "$build/kokkos" -j "$jobs" >>"$build.kokkos.log" 2>&1 ||
  { tail -n 40 "$build.kokkos.log" >&2; exit 1; }
cmake --install "$build/kokkos" >>"$build.kokkos.log" 2>&1

rm -rf "$build"
echo "$recipe_hash" >"$stamp"
echo "hayate: Kokkos ($variant) installed"
