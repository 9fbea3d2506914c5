// The dense float32 and bfloat16 path of the unary ops with a vectorized kernel (Note [Kernels per
// ISA] in kernels/cpu/vec/vec.h), shared by unary_ops.cpp and math_ops.cpp.
#pragma once
#include <optional>

#include "kernels/cpu/vec/vec_table.h"
#include "runtime/tensor.h"

namespace ampjit::cpu {

// op over `self` when it is a dense (row-major or channels-last) float32 or bfloat16 tensor of the
// result dtype `rt`, in self's layout; nullopt otherwise (the caller then runs the scalar formula,
// vec::unary_scalar, which gives the same bits).
std::optional<Tensor> vec_unary_dense(vec::Unary op, const Tensor& self, ScalarType rt);

}  // namespace ampjit::cpu
