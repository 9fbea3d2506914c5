// The interface between the CUDA backend's boxed kernels (.cpp, plain C++20) and its device code
// (.cu, nvcc): plain structs of pointers, sizes and dtype codes, and one launcher per kernel
// family. Keeping tensors, IValues and the op table out of nvcc's view keeps the .cu files small
// and their compile time low; the .cpp side does shapes, type promotion and error checks.
#pragma once
#include <cstdint>

namespace ampjit::cuda {

// ScalarType codes in runtime/dtypes.def order (checked by static_asserts in tensor_iter.cpp).
enum Dt : int {
  kUInt8 = 0,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBool,
  kBFloat16,
};

constexpr int kMaxDims = 16;
constexpr int kMaxOperands = 4;

// An elementwise iteration: operand 0 is the output, the others are inputs, all viewed with the
// iteration shape (byte strides, 0 along broadcast dimensions). Dimensions are coalesced where
// every operand allows it and ordered innermost last. `contiguous` means every operand is dense
// in iteration order (stride == itemsize at the innermost level after coalescing to one dim).
struct ElementwiseIter {
  int ndim = 0;
  int nops = 0;
  int64_t numel = 0;
  bool contiguous = false;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  char* data[kMaxOperands] = {};
  int dtype[kMaxOperands] = {};
};

// dst = src converted (any dtype pair): operand 0 the destination, operand 1 the source.
void launch_copy(const ElementwiseIter& it);
// Fills operand 0 with `value` given as a double and, for 64-bit integers, exactly as `ivalue`.
void launch_fill(const ElementwiseIter& it, double value, int64_t ivalue, bool is_integral);

// Pointwise ops (kernels/cuda/pointwise.cu). All inputs have the computing dtype (the .cpp side
// casts them first, as the CPU kernels do); the output has that dtype, or bool for predicates.
// Parameters (alpha, clamp bounds, ...) are passed as doubles and read in the op-math type.
enum class UnaryOp : int {
  neg,
  abs,
  sign,
#define AMPJIT_CUDA_MATH(OP, INT_TO_FLOAT, FORMULA) OP,
#include "kernels/cuda/math_ops.def"
#undef AMPJIT_CUDA_MATH
  gelu,
  gelu_tanh,
  floor,
  ceil,
  round,
  round_decimals,
  relu,
  clamp,
  clamp_min,
  clamp_max,
  add_scalar,   // x + p0
  mul_scalar,   // x * p0
  pow_scalar,   // x ** p0
  logical_not,  // -> bool
};
enum class BinaryOp : int {
  add,  // x + p0 * y
  mul,
  div,
  div_trunc,
  div_floor,
  pow,
  fmod,
  remainder,
  atan2,
  maximum,
  minimum,
  eq,
  ne,
  lt,
  le,
  gt,
  ge,  // -> bool
  logical_and,
  logical_or,
  logical_xor,  // -> bool (inputs any dtype; see pointwise.cu)
};
enum class TernaryOp : int {
  where,    // in0 (bool) ? in1 : in2
  addcmul,  // in0 + p0 * in1 * in2
  addcdiv,  // in0 + p0 * in1 / in2
  clamp,    // min(max(in0, in1), in2), NaN-propagating
};
constexpr int kNumUnaryOps = static_cast<int>(UnaryOp::logical_not) + 1;
constexpr int kNumBinaryOps = static_cast<int>(BinaryOp::logical_xor) + 1;
constexpr int kNumTernaryOps = static_cast<int>(TernaryOp::clamp) + 1;
// `dtype` is the computing dtype; the output operand's dtype is `dtype` or bool.
void launch_unary(UnaryOp op, int dtype, const ElementwiseIter& it, double p0, double p1);
void launch_binary(BinaryOp op, int dtype, const ElementwiseIter& it, double p0);
void launch_ternary(TernaryOp op, int dtype, const ElementwiseIter& it, double p0);

// Random numbers (kernels/cuda/random.cu): Philox4x32-10 keyed by (seed, offset); `offset` is the
// generator's counter, advanced by the caller by the number of 32-bit draws used.
void launch_uniform(void* out, int dtype, int64_t n, uint64_t seed, uint64_t offset);
void launch_normal(void* out, int dtype, int64_t n, uint64_t seed, uint64_t offset);

}  // namespace ampjit::cuda
