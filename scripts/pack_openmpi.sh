#!/usr/bin/env bash
# Packs this machine's Open MPI runtime (Debian's openmpi-bin: the launcher, its components,
# PMIx plugins, help texts and the shared libraries they load) into one compressed file, so that
# `mpirun` runs on a GPU machine whose image has no MPI. Unpack from the repository root with
# `tar -xJf FILE` (it lands in .deps/ompi); scripts/device_run.sh's `mpirun` action uses it
# (OPAL_PREFIX relocates the installation). The Open MPI packed is the one whose ompi_info is
# first in PATH: put a CUDA-aware build's bin first to carry that one (docs/user/building.md).
# usage: scripts/pack_openmpi.sh OUTPUT.tar.xz
set -euo pipefail
output=${1:?usage: pack_openmpi.sh OUTPUT.tar.xz}
root=.deps/ompi
path_of() { ompi_info --path "$1" --parsable | sed "s/.*:$1://"; }
prefix=$(path_of prefix)
libdir=$(path_of libdir)
pkglibdir=$(path_of pkglibdir)
pkgdatadir=$(path_of pkgdatadir)
bindir=$(path_of bindir)
pmix=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libpmix.so.2 / {print $NF; exit}')")")
rm -rf "$root"
mkdir -p "$root/bin" "$root/libs" "$root/pmix" "$root${pkgdatadir#"$prefix"}" \
  "$root${pkglibdir#"$prefix"}"
cp -L "$bindir/orterun" "$bindir/orted" "$root/bin/"
cp -rL "$pkglibdir/." "$root${pkglibdir#"$prefix"}/"
cp -r "$pkgdatadir/." "$root${pkgdatadir#"$prefix"}/"
[ -d "$pmix/pmix" ] && cp "$pmix"/pmix/*.so "$root/pmix/"
for f in "$root"/bin/* "$root${pkglibdir#"$prefix"}"/*.so "$libdir"/libmpi.so; do
  ldd "$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  case "$name" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|libgcc_s.so*|libstdc++.so*|\
    libcuda*.so*|ld-linux*) ;;
    *) cp -L "$path" "$root/libs/$name" ;;
  esac
done
mkdir -p "$(dirname "$output")"
tar -cJf "$output" "$root"
ls -l "$output"
