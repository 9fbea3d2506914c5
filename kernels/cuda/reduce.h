// Launchers of the CUDA reduction family (kernels/cuda/reduce.cu), called by the boxed kernels of
// kernels/cuda/reduce_ops.cpp: reductions, scans and softmax along the middle dim of a dense
// row-major [outer, len, inner] array (Note [Reduction layout] in reduce_ops.cpp). Plain C++:
// pointers, sizes and dtype codes (launch.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace ampjit::cuda {

// A dense row-major [outer, len, inner] array. Reductions produce the [outer, inner] array of
// results over len; scans and softmax write an array of the same shape.
struct ReduceShape {
  int64_t outer = 1;
  int64_t len = 1;
  int64_t inner = 1;
};

enum class ReduceOp : int {
  sum,   // dtype int64 (wrapping, as torch) or floating
  mean,  // floating: sum / len
  prod,  // dtype int64 or floating
  max,   // values and/or the first position of the extreme; NaN is the extreme (any dtype)
  min,
  logsumexp,  // floating: log(sum(exp(x - m))) + m with m the max (0 when infinite)
  var,        // floating: sum((x - mean)^2) / max(0, len - param), param the correction
  std,        // floating: sqrt of var
  norm,       // floating: the vector p-norm of |x| with p = param (0, +-inf included)
};

struct ReduceArgs {
  ReduceOp op = ReduceOp::sum;
  int dtype = 0;  // of the input, of `out` and of the computation
  ReduceShape shape;
  const void* in = nullptr;
  void* out = nullptr;         // [outer, inner] values of dtype; may be null for max/min
  int64_t* indices = nullptr;  // max/min: [outer, inner] positions along len, or null
  double param = 0;            // var/std: the correction; norm: p
};

// Bytes of device scratch launch_reduce needs for `a` on the current device (often 0).
size_t reduce_workspace_bytes(const ReduceArgs& a);
// Runs the reduction; `workspace` holds reduce_workspace_bytes(a) bytes (8-byte aligned).
void launch_reduce(const ReduceArgs& a, void* workspace);

// cumsum (is_prod false) or cumprod along len; dtype int64 (wrapping) or floating; `out` has the
// shape of `in`.
void launch_scan(bool is_prod, int dtype, ReduceShape shape, const void* in, void* out);

// softmax or log_softmax along len; floating dtype; `out` has the shape of `in`.
void launch_softmax(bool log, int dtype, ReduceShape shape, const void* in, void* out);

}  // namespace ampjit::cuda
