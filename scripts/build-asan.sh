#!/usr/bin/env bash
# The sanitizer build: clang with ASan and UBSan, the C++ tests and the libFuzzer harnesses
# (Note [One sanitizer build] in CMakeLists.txt); no benchmarks, no CUDA, no Python module.
# Usage: scripts/build-asan.sh [BUILD_DIR=build-asan]
set -euo pipefail
cd "$(dirname "$0")/.."
# The compilers are named as cache variables, not CC/CXX: a directory configured with gcc (the
# sanitizer build before the fuzzers joined it) is then reconfigured, not refused.
BUILD_TYPE=RelWithDebInfo exec scripts/build.sh "${1:-build-asan}" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DAMPJIT_SANITIZE=ON -DAMPJIT_FUZZ=ON -DAMPJIT_CUDA=OFF -DAMPJIT_PYTHON=OFF -DAMPJIT_BENCH=OFF
