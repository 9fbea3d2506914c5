#!/usr/bin/env bash
# Configures and builds ampjit (Release, Ninja, all cores). Usage: scripts/build.sh [BUILD_DIR] [cmake args...]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build}"; shift || true
launcher=()
# Hash paths relative to the checkout, so a fresh clone elsewhere still hits the cache.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
  -DPython3_EXECUTABLE=/usr/bin/python3 "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir" -j"$(nproc)"
