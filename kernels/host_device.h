// AMPJIT_HOST_DEVICE: a function that both the host compiler and nvcc (for device code) compile,
// for the few pieces of arithmetic the CPU and CUDA kernels share as one source.
#pragma once

#ifdef __CUDACC__
#define AMPJIT_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define AMPJIT_HOST_DEVICE inline
#endif
