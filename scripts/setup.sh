#!/usr/bin/env bash
# Installs the Debian packages ampjit needs, and only those that are missing: when everything is
# present it makes no apt call at all. Pass --with-torch to also install the PyTorch 1.13 oracle
# (Debian's python3-torch, and python3-torchvision whose model files tests/models/ loads; used only by
# the differential tests, the product never imports them), and what scripts/fetch-pytorch-tests.sh
# needs to fetch and unpack PyTorch's own tests (xz-utils, Debian's archive keyring).
set -euo pipefail
PKGS=(cmake g++ ninja-build ccache clang-format clang libclang-rt-dev libomp-dev libgtest-dev libbenchmark-dev python3-dev libfmt-dev libdnnl-dev
      ocl-icd-opencl-dev libboost-python-dev libboost-numpy-dev python3-pytest python3-numpy libzip-dev libkissfft-dev
      liblapacke-dev libopenblas-dev)
if [[ "${1:-}" == "--with-torch" ]]; then PKGS+=(python3-torch python3-torchvision libopenblas0-pthread xz-utils debian-archive-keyring); fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q '^ii' || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
