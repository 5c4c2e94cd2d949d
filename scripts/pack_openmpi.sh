#!/usr/bin/env bash
# Packs this machine's Open MPI runtime (Debian's openmpi-bin: the launcher, its components,
# PMIx plugins, help texts and the shared libraries they load) into one compressed file, so that
# `mpirun` runs on a GPU machine whose image has no MPI. Unpack from the repository root with
# `tar -xJf FILE` (it lands in .deps/ompi); scripts/device_run.sh's `mpirun` action uses it
# (OPAL_PREFIX relocates the installation).
# usage: scripts/pack_openmpi.sh OUTPUT.tar.xz
set -euo pipefail
output=${1:?usage: pack_openmpi.sh OUTPUT.tar.xz}
root=.deps/ompi
libdir=$(ompi_info --path libdir --parsable | sed 's/.*:libdir://')
pkglibdir=$(ompi_info --path pkglibdir --parsable | sed 's/.*:pkglibdir://')
pmix=$(dirname "$(readlink -f "$(ldconfig -p | awk '/libpmix.so.2 / {print $NF; exit}')")")
rm -rf "$root"
mkdir -p "$root/bin" "$root/libs" "$root/pmix" "$root/share" "$root${pkglibdir#/usr}"
cp -L "$(command -v orterun)" "$(command -v orted)" "$root/bin/"
cp -rL "$pkglibdir/." "$root${pkglibdir#/usr}/"
cp -r /usr/share/openmpi "$root/share/"
[ -d "$pmix/pmix" ] && cp "$pmix"/pmix/*.so "$root/pmix/"
for f in "$root"/bin/* "$root${pkglibdir#/usr}"/*.so "$libdir"/libmpi.so; do
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
