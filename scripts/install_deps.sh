#!/usr/bin/env bash
# Installs the Debian packages hayate builds against. Idempotent: skips apt when all are present.
set -euo pipefail
pkgs=(build-essential cmake ninja-build git patch xz-utils ca-certificates
      libyaml-cpp-dev libgtest-dev libgmock-dev libbenchmark-dev libbenchmark-tools
      libcli11-dev libspdlog-dev libfmt-dev zlib1g-dev valgrind python3
      libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
echo "hayate: installing Debian packages: ${missing[*]}"
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
"${sudo_cmd[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
