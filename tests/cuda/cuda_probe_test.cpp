// The CUDA backend loads and probes devices; without a GPU it reports "skipped" (exit 77).
// With --write FILE it records the answer for the other CUDA tests instead and exits 0: the first
// line is "gpu N" or "no CUDA device: <reason>" (Note [Probe once, skip in bulk] in
// tests/CMakeLists.txt).
#include <cstdio>
#include <cstring>

#include "kernels/cuda/cuda_backend.h"

int main(int argc, char** argv) {
  ampjit::cuda::init();
  const int n = ampjit::cuda::device_count();
  if (argc == 3 && std::strcmp(argv[1], "--write") == 0) {
    std::FILE* f = std::fopen(argv[2], "w");
    if (f == nullptr) {
      std::perror(argv[2]);
      return 1;
    }
    if (n == 0)
      std::fprintf(f, "no CUDA device: %s\n", ampjit::cuda::unavailable_reason());
    else
      std::fprintf(f, "gpu %d\n", n);
    const bool ok = std::fclose(f) == 0;
    std::printf("%s: %s\n", argv[2], n == 0 ? "no CUDA device" : "CUDA device(s) present");
    return ok ? 0 : 1;
  }
  if (n == 0) {
    std::printf("no CUDA device: %s\n", ampjit::cuda::unavailable_reason());
    return 77;
  }
  std::printf("%d CUDA device(s)\n", n);
  return 0;
}
