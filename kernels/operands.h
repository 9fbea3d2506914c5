// What every backend's kernels do with their operands before and after the loop: broadcasting
// shapes and strides, casting, wrapping Python numbers, and writing results into in-place and
// out= tensors with torch's checks. Device-agnostic (kernels/cpu and kernels/cuda both use it).
#pragma once
#include <span>

#include "runtime/scalar.h"
#include "runtime/tensor.h"

namespace ampjit::kernels {

inline bool same_sizes(const Tensor& a, const Tensor& b) {
  const auto sa = a.sizes(), sb = b.sizes();
  if (sa.size() != sb.size()) return false;
  for (size_t i = 0; i < sa.size(); ++i)  // a loop, not memcmp: shapes are a few ints
    if (sa[i] != sb[i]) return false;
  return true;
}

// Byte strides of `t` viewed with `shape` (broadcast dims get stride 0).
DimVector broadcast_byte_strides(const Tensor& t, IntArrayRef shape);

// The shape every tensor of `ts` broadcasts to; `op` names the op in the error when they do not.
DimVector broadcast_all(std::span<const Tensor> ts, const char* op);

// Returns `t` converted to `dtype` (no copy when it already is).
inline Tensor cast_to(const Tensor& t, ScalarType dtype) {
  return t.dtype() == dtype ? t : t.to(dtype);
}

// Writes `result` into `out` for in-place and out= variants, with torch's checks: the result
// dtype must be castable to out's dtype; an out= tensor of the wrong shape is resized.
// `inplace` selects the in-place message ("output with shape [..] doesn't match the broadcast
// shape [..]") when self cannot hold the broadcast result.
Tensor& write_result(Tensor& out, const Tensor& result, const char* op, bool inplace);

// A Python number as a 0-dim wrapped-number tensor: it promotes like the Scalar it came from.
inline Tensor wrap_scalar(const Scalar& s) {
  Tensor t = Tensor::empty(IntArrayRef{}, s.type());
  t.fill_(s);
  t.impl()->is_wrapped_number = true;
  return t;
}

// Resizes an out= tensor to `sizes` (reallocating when the element count changes).
void resize_out(Tensor& out, IntArrayRef sizes);

}  // namespace ampjit::kernels
