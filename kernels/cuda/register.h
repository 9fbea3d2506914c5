// Registering a boxed CUDA kernel in the op table's CUDA column:
//   Tensor mm_k(const Tensor& a, const Tensor& b) { ... }
//   void register_blas_kernels() { AMPJIT_CUDA_KERNEL(mm, mm_k); ... }
// The typed function is boxed exactly as the CPU kernels are (runtime/boxing.h).
#pragma once
#include "runtime/boxing.h"
#include "runtime/op_table.h"

#define AMPJIT_CUDA_KERNEL(ID, FN)                                          \
  ::ampjit::register_kernel(::ampjit::OpId::ID, ::ampjit::DeviceType::CUDA, \
                            &::ampjit::call_boxed<&FN>)
