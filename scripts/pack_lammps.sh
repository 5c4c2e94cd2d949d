#!/usr/bin/env bash
# Packs the installed LAMMPS (`lmp`, Debian's package) with every shared library it loads and the
# Open MPI components it opens, so a machine without the package (the GPU machine) can run the
# comparison inputs under benchmarks/lammps/. Unpack from the repository root with `tar -xJf`;
# run as  DIR/run-lmp -in INPUT ...  (the packed loader and libraries, not the machine's).
# usage: scripts/pack_lammps.sh OUTPUT.tar.xz [DIR]     (DIR inside the archive, default .deps/lammps)
set -euo pipefail
output=${1:?usage: pack_lammps.sh OUTPUT.tar.xz [DIR]}
dir=${2:-.deps/lammps}
lmp=$(command -v lmp) || { echo "pack_lammps.sh: no lmp installed" >&2; exit 2; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$dir/lib"
cp "$lmp" "$stage/$dir/lmp"
ldd "$lmp" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
  cp -L "$path" "$stage/$dir/lib/$name"
done
loader=$(ldd "$lmp" | awk '/ld-linux/ {print $1}')
cp -L "$loader" "$stage/$dir/lib/ld-linux.so"
# Open MPI opens its components at run time from its own prefix.
mca=$(dirname "$(readlink -f "$(ldd "$lmp" | awk '/libmpi.so/ {print $3}')")")/openmpi/lib/openmpi3
[ -d "$mca" ] && cp -rL "$mca" "$stage/$dir/mca"
cat >"$stage/$dir/run-lmp" <<'RUN'
#!/usr/bin/env bash
here=$(cd "$(dirname "$0")" && pwd)
# One process, no daemon, components from the pack; components whose own libraries are absent
# (network fabrics) are skipped quietly.
export OMPI_MCA_mca_base_component_path="$here/mca" OMPI_MCA_ess_singleton_isolated=1 \
  OMPI_MCA_btl=self OMPI_MCA_mca_base_component_show_load_errors=0
exec "$here/lib/ld-linux.so" --library-path "$here/lib" "$here/lmp" "$@"
RUN
chmod +x "$stage/$dir/run-lmp"
mkdir -p "$(dirname "$output")"
tar -C "$stage" -cJf "$output" "$dir"
ls -l "$output"
