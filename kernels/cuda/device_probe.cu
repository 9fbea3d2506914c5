// The CUDA backend's entry point: device discovery. Kernels arrive with the CUDA backend issue.
#include <cuda_runtime.h>

#include "kernels/cuda/device_probe.h"

namespace ampjit::cuda {

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no driver" error
    return 0;
  }
  return n;
}

const char* unavailable_reason() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  cudaGetLastError();
  if (e != cudaSuccess) return cudaGetErrorString(e);
  return n == 0 ? "no CUDA device found" : "";
}

}  // namespace ampjit::cuda
