// The CUDA backend loads and probes devices; without a GPU it reports "skipped" (exit 77).
#include <cstdio>

#include "kernels/cuda/cuda_backend.h"

int main() {
  ampjit::cuda::init();
  const int n = ampjit::cuda::device_count();
  if (n == 0) {
    std::printf("no CUDA device: %s\n", ampjit::cuda::unavailable_reason());
    return 77;
  }
  std::printf("%d CUDA device(s)\n", n);
  return 0;
}
