#!/usr/bin/env bash
# Fetches Kokkos 3.4.01 from Debian's trilinos source package into DEST.
# The deb-src list is derived from this machine's own apt sources (same URIs, suites, keyrings),
# written to a private file with private state dirs, so the system's apt setup is never touched
# and no mirror host is named by the project.
set -euo pipefail
dest=${1:?usage: fetch_kokkos_source.sh DEST}
want_version=${HAYATE_TRILINOS_VERSION:-13.2.0}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
if [ -f "$dest/source.stamp" ] && [ -d "$dest/kokkos" ]; then
  exit 0
fi
work="$dest/apt"
mkdir -p "$work/lists/partial" "$work/archives/partial" "$work/dl"
list="$work/sources.list"
: >"$list"

# One-line format: "deb [opts] URI SUITE COMPONENTS..." -> deb-src with the same options.
emit_oneline() {
  sed -n -E 's/^[[:space:]]*deb[[:space:]]+/deb-src /p' "$1" >>"$list"
}
# deb822 format: stanzas with Types/URIs/Suites/Components/Signed-By/Enabled.
emit_deb822() {
  awk -v out="$list" '
    function flush() {
      if (types ~ /(^|[[:space:]])deb([[:space:]]|$)/ && enabled != "no" && uris != "") {
        opts = (signed != "") ? " [signed-by=" signed "]" : ""
        n = split(uris, u, /[[:space:]]+/); m = split(suites, s, /[[:space:]]+/)
        for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
          if (u[i] != "" && s[j] != "") print "deb-src" opts " " u[i] " " s[j] " " comps >> out
      }
      types = uris = suites = comps = signed = ""; enabled = "yes"
    }
    BEGIN { enabled = "yes" }
    /^[[:space:]]*#/ { next }
    /^[[:space:]]*$/ { flush(); next }
    { key = $1; sub(/:$/, "", key); val = $0; sub(/^[^:]*:[[:space:]]*/, "", val)
      if (key == "Types") types = val; else if (key == "URIs") uris = val
      else if (key == "Suites") suites = val; else if (key == "Components") comps = val
      else if (key == "Signed-By") signed = val; else if (key == "Enabled") enabled = tolower(val) }
    END { flush() }' "$1"
}
[ -f /etc/apt/sources.list ] && emit_oneline /etc/apt/sources.list
for f in /etc/apt/sources.list.d/*.list; do [ -f "$f" ] && emit_oneline "$f"; done
for f in /etc/apt/sources.list.d/*.sources; do [ -f "$f" ] && emit_deb822 "$f"; done
if ! [ -s "$list" ]; then
  echo "hayate: no apt sources found in /etc/apt to derive a deb-src list from" >&2
  exit 1
fi

apt_opts=(-o "Dir::Etc::SourceList=$list" -o Dir::Etc::SourceParts=/dev/null
          -o "Dir::State::Lists=$work/lists" -o "Dir::Cache::Archives=$work/archives"
          -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
echo "hayate: fetching Debian's trilinos source package (Kokkos 3.4.01)"
apt-get "${apt_opts[@]}" -qq update
( cd "$work/dl" && apt-get "${apt_opts[@]}" -qq source --download-only trilinos )
orig=$(ls "$work/dl"/trilinos_"${want_version}"*.orig.tar.* 2>/dev/null | head -n 1)
if [ -z "$orig" ]; then
  echo "hayate: trilinos ${want_version} source tarball not found after download" >&2
  exit 1
fi
rm -rf "$dest/kokkos" "$dest/extract"
mkdir -p "$dest/extract"
tar -xf "$orig" -C "$dest/extract" --wildcards '*/packages/kokkos/*'
mv "$dest"/extract/*/packages/kokkos "$dest/kokkos"
rm -rf "$dest/extract"
# The tarball is kept (cache); the unpacked Debian metadata and lists are not needed.
mv "$orig" "$dest/"
rm -rf "$work"
echo "$(basename "$orig")" >"$dest/source.stamp"
