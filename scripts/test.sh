#!/usr/bin/env bash
# One command: install what is missing (the PyTorch oracle included), build, run every test:
# the C++ and Python suites in Release, the GPU bundle's rehearsal, then the C++ suites once more
# under ASan+UBSan in the clang sanitizer build, and from that build a bounded libFuzzer run of each
# harness: script parser, script compiler, graph text parser (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --with-torch
scripts/lint.sh
scripts/build.sh build
OMP_NUM_THREADS=2 ctest --test-dir build --output-on-failure -j2
# The GPU bundle, rehearsed without a GPU in a clean environment (docs/gpu.md): whatever the GPU
# machine would lack shows up here, not there. Only where the build has the CUDA backend.
if [[ -e build/kernels/cuda/libampjit_cuda.so ]]; then
  scripts/gpu-bundle.sh --build build --out build/gpu-bundle --rehearse
fi
if [[ "${AMPJIT_SKIP_SANITIZERS:-0}" != 1 ]]; then
  scripts/build-asan.sh build-asan
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    OMP_NUM_THREADS=2 ctest --test-dir build-asan --output-on-failure -j2 -L cpp
fi
# The parsers and the compiler on arbitrary bytes for a bounded time each; a finding fails the run
# (AMPJIT_FUZZ_SECONDS=0 skips it).
if [[ "${AMPJIT_FUZZ_SECONDS:-60}" != 0 ]]; then
  scripts/fuzz.sh "${AMPJIT_FUZZ_SECONDS:-60}" build-asan
fi
