// Building ElementwiseIters (launch.h) from tensors, and the small tensor helpers every CUDA boxed
// kernel uses: operands moved to the device, outputs allocated beside the inputs.
#pragma once
#include <initializer_list>

#include "kernels/cuda/launch.h"
#include "runtime/tensor.h"

namespace ampjit::cuda {

// The iteration of `out` (operand 0) and `ins` broadcast to out's shape. Every operand must be on
// out's device (see on_device).
ElementwiseIter make_iter(const Tensor& out, std::initializer_list<Tensor> ins);

// `t` on `device`: itself when it is there; a 0-dim CPU tensor (a wrapped Python number or a CPU
// scalar joining device tensors, as torch allows) is filled in on the device (exactly: item()
// carries the value at full precision, int64 included).
Tensor on_device(const Tensor& t, Device device);

// `t` converted to `dtype` on its device (no copy when it already has it).
inline Tensor cast(const Tensor& t, ScalarType dtype) {
  return t.dtype() == dtype ? t : t.to(dtype);
}

// The int code of a dtype that launch.h's interface takes.
inline int dt(ScalarType t) {
  return static_cast<int>(t);
}

// The first CUDA device among the tensors (the device a CUDA kernel runs on).
Device device_of(std::initializer_list<Tensor> ts);

}  // namespace ampjit::cuda
