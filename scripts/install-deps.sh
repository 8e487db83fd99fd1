#!/usr/bin/env bash
# Installs every Debian 12 package the build and the tests need. Idempotent.
set -euo pipefail
pkgs=(cmake ninja-build g++ python3 libgtest-dev
      llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools lld-22 liblld-22-dev libzstd-dev
      zlib1g-dev binutils xz-utils git pkgconf
      clang-22 libclang-rt-22-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
