// What the pointwise ops decide before any loop runs, shared by the CPU kernels (kernels/cpu/) and
// the CUDA kernels (kernels/cuda/pointwise_ops.cpp): torch's argument checks with its messages,
// result types, and how Python numbers and bounds are read. A backend supplies only the loops, so
// the two cannot drift apart in what they accept or return.
#pragma once
#include <cmath>
#include <optional>
#include <string>

#include "runtime/error.h"
#include "runtime/tensor.h"
#include "runtime/type_promotion.h"

namespace ampjit::meta {

// True division and the float-only ops compute integer and bool inputs in float32 (torch's
// "int-to-float" promotion to the default dtype).
inline ScalarType float_result(ScalarType t) {
  return is_floating(t) ? t : ScalarType::Float32;
}

// torch's alpha_check.
inline void check_alpha(ScalarType rt, const Scalar& alpha) {
  AMPJIT_CHECK(!alpha.is_bool() || rt == ScalarType::Bool,
               "Boolean alpha only supported for Boolean results.");
  AMPJIT_CHECK(is_floating(rt) || !alpha.is_floating(),
               "For integral input tensors, argument alpha must not be a floating point number.");
}

// torch's sub_check: bool subtraction is an error, with a hint at what was probably meant.
inline void check_sub(ScalarType a, ScalarType b) {
  AMPJIT_CHECK(a != ScalarType::Bool || b != ScalarType::Bool,
               "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
               "or `logical_xor()` operator instead.");
  AMPJIT_CHECK(a != ScalarType::Bool && b != ScalarType::Bool,
               "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
               "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

inline Scalar negated(const Scalar& s) {
  return s.is_floating() ? Scalar(-s.to_double()) : Scalar(-s.to_int());
}

// A 0-dim CPU operand that mul and div read at its own precision (Note [Scalar overloads] in
// kernels/cpu/binary_ops.cpp).
inline bool is_unrounded_scalar(const Tensor& t, ScalarType rt) {
  return t.dim() == 0 && t.dtype() != rt && is_reduced_floating(rt) && t.device().is_cpu();
}

enum class Rounding { True, Trunc, Floor };
inline Rounding parse_rounding(const std::optional<std::string>& mode) {
  if (!mode) return Rounding::True;
  if (*mode == "trunc") return Rounding::Trunc;
  if (*mode == "floor") return Rounding::Floor;
  throw Error(fmt::format(
      "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '{}'", *mode));
}

inline void check_pow_exponent(const Tensor& self, const Scalar& e) {
  AMPJIT_CHECK(!(is_integral(self.dtype(), true) && !e.is_floating() && e.to_int() < 0),
               "Integers to negative integer powers are not allowed.");
}

inline void check_addcdiv(const Tensor& t1, const Tensor& t2) {
  AMPJIT_CHECK(!(is_integral(t1.dtype(), true) && is_integral(t2.dtype(), true)),
               "Integer division with addcdiv is no longer supported, and in a future release "
               "addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv "
               "behavior can be implemented as (input + value * torch.trunc(tensor1 / "
               "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
               "tensor2) for float inputs. The future addcdiv behavior is just the latter "
               "implementation: (input + value * tensor1 / tensor2), for all dtypes.");
}

inline void check_neg(ScalarType t) {
  AMPJIT_CHECK(t != ScalarType::Bool,
               "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
               "to invert a mask, use the `~` or `logical_not()` operator instead.");
}

inline void check_relu(ScalarType t) {
  AMPJIT_CHECK(t != ScalarType::Bool, "Boolean inputs not supported for relu");
}

inline void check_where_condition(const Tensor& cond) {
  AMPJIT_CHECK(cond.dtype() == ScalarType::Bool || cond.dtype() == ScalarType::UInt8,
               "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
               dtype_name(cond.dtype()));
}

// gelu's `approximate`: true for "tanh", false for "none".
inline bool gelu_is_tanh(const std::string& approximate) {
  if (approximate == "none") return false;
  if (approximate == "tanh") return true;
  throw Error(
      fmt::format("gelu: approximate argument must be either none or tanh, got '{}'", approximate));
}

// ---- clamp (Note [Clamp and NaN] in kernels/cpu/unary_ops.cpp) ---------------------------------

inline constexpr const char* kClampNeedsBound =
    "torch.clamp: At least one of 'min' or 'max' must not be None";

// clamp ignores a NaN Scalar bound that is its only bound; clamp_min and clamp_max do not.
enum class LoneNaNBound { Ignored, PropagatesNaN };

// Python-number bounds take part in type promotion unless self is already floating (torch's
// clamp meta function): clamp(int_tensor, 0.5) is float32.
inline ScalarType clamp_result_type(const Tensor& self, const std::optional<Scalar>& lo,
                                    const std::optional<Scalar>& hi) {
  AMPJIT_CHECK(lo || hi, "{}", kClampNeedsBound);
  if (is_floating(self.dtype())) return self.dtype();
  ResultTypeState s;
  s.add(self);
  if (lo) s.add(*lo);
  if (hi) s.add(*hi);
  return s.result();
}
// Whether the Scalar bounds make the whole result NaN.
inline bool clamp_gives_nan(const std::optional<Scalar>& lo, const std::optional<Scalar>& hi,
                            LoneNaNBound lone_nan) {
  const bool nan_lo = lo && std::isnan(lo->to_double()), nan_hi = hi && std::isnan(hi->to_double());
  return (nan_lo || nan_hi) && ((lo && hi) || lone_nan == LoneNaNBound::PropagatesNaN);
}
// Tensor bounds promote with self.
inline ScalarType clamp_tensor_result_type(const Tensor& self, const std::optional<Tensor>& lo,
                                           const std::optional<Tensor>& hi) {
  AMPJIT_CHECK(lo || hi, "{}", kClampNeedsBound);
  ResultTypeState s;
  s.add(self);
  if (lo) s.add(*lo);
  if (hi) s.add(*hi);
  return s.result();
}

}  // namespace ampjit::meta
