// Boxed CUDA kernels for the pointwise ops (runtime/ops/pointwise.def). The checks, result types
// and readings of Python numbers are the CPU kernels' own (kernels/pointwise_meta.h); the structure
// mirrors kernels/cpu/binary_ops.cpp, unary_ops.cpp and compare_ops.cpp; only the loop runs on the
// device (launch.h's UnaryOp/BinaryOp/TernaryOp families). In-place and out= forms derive from the
// functional kernels (Note [Derived op variants] in runtime/op_table.h), except clamp_, whose
// messages name it from inside the kernel.
#include <cmath>
#include <limits>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "kernels/operands.h"
#include "kernels/pointwise_meta.h"
#include "runtime/type_promotion.h"

namespace ampjit::cuda {
namespace {

using kernels::wrap_scalar;
using kernels::write_result;
using OptScalar = std::optional<Scalar>;
using OptTensor = std::optional<Tensor>;
using meta::check_alpha;
using meta::check_sub;
using meta::float_result;
using meta::is_unrounded_scalar;
using meta::negated;
using meta::Rounding;

// ---- Launch helpers ----------------------------------------------------------------------------

bool is_predicate(BinaryOp op) {
  return op >= BinaryOp::eq;  // eq ... logical_xor are declared last
}

// f(self) in the computing dtype rt; the result has dtype `out_type`.
Tensor unary(UnaryOp op, const Tensor& self, ScalarType rt, double p0 = 0, double p1 = 0,
             ScalarType out_type = ScalarType::Undefined) {
  DeviceGuard g(self.device());
  const Tensor x = cast(self, rt);
  Tensor out =
      Tensor::empty(x.sizes(), out_type == ScalarType::Undefined ? rt : out_type, x.device());
  launch_unary(op, dt(rt), make_iter(out, {x}), p0, p1);
  return out;
}

// f(a, b) broadcast, in the computing dtype rt (bool results for predicates).
Tensor binary(BinaryOp op, const char* name, const Tensor& a, const Tensor& b, ScalarType rt,
              double p0 = 0) {
  const Device d = device_of({a, b});
  DeviceGuard g(d);
  const std::array ins{cast(on_device(a, d), rt), cast(on_device(b, d), rt)};
  Tensor out =
      Tensor::empty(kernels::broadcast_all(ins, name), is_predicate(op) ? ScalarType::Bool : rt, d);
  launch_binary(op, dt(rt), make_iter(out, {ins[0], ins[1]}), p0);
  return out;
}

Tensor ternary(TernaryOp op, const char* name, const Tensor& a, const Tensor& b, const Tensor& c,
               ScalarType rt, double p0 = 0) {
  const Device d = device_of({a, b, c});
  DeviceGuard g(d);
  const std::array ins{cast(on_device(a, d), rt), cast(on_device(b, d), rt),
                       cast(on_device(c, d), rt)};
  Tensor out = Tensor::empty(kernels::broadcast_all(ins, name), rt, d);
  launch_ternary(op, dt(rt), make_iter(out, {ins[0], ins[1], ins[2]}), p0);
  return out;
}

// A Scalar as the CPU kernels read it in the op-math type of T: rounded to T first when
// `rounded` (Scalar::to<T>), else converted straight to the op-math type (Scalar::to<M>).
double scalar_value(const Scalar& s, ScalarType rt, bool rounded) {
  return dispatch_numeric(rt, "scalar", [&]<typename T>() -> double {
    using M = opmath_t<T>;
    return rounded ? static_cast<double>(static_cast<M>(s.to<T>()))
                   : static_cast<double>(s.to<M>());
  });
}

// ---- add, sub, rsub, mul, div (kernels/cpu/binary_ops.cpp) -------------------------------------

Tensor add_impl(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  check_alpha(rt, alpha);
  if (rt == ScalarType::Bool) return binary(BinaryOp::add, op, a, b, rt, alpha.to_bool());
  return binary(BinaryOp::add, op, a, b, rt, scalar_value(alpha, rt, true));
}
Tensor add_scalar_impl(const char* op, const Tensor& a, const Scalar& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool) return add_impl(op, a, wrap_scalar(b), alpha);
  check_alpha(rt, alpha);
  // b * alpha in the op-math type, each rounded to the dtype first (the CPU's add_scalar_impl).
  const double v = dispatch_numeric(rt, op, [&]<typename T>() -> double {
    using M = opmath_t<T>;
    return static_cast<double>(static_cast<M>(b.to<T>()) * static_cast<M>(alpha.to<T>()));
  });
  return unary(UnaryOp::add_scalar, a, rt, v);
}
Tensor add_k(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return add_impl("add", a, b, alpha);
}
Tensor add_scalar_k(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return add_scalar_impl("add", a, b, alpha);
}
Tensor sub_impl(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  check_sub(a.dtype(), b.dtype());
  check_alpha(result_type(a, b), alpha);
  return add_impl(op, a, b, negated(alpha));
}
Tensor sub_k(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return sub_impl("sub", a, b, alpha);
}
Tensor sub_scalar_k(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  check_sub(a.dtype(), b.type());
  check_alpha(result_type(a, b), alpha);
  return add_scalar_impl("sub", a, b, negated(alpha));
}
Tensor rsub_k(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  broadcast_shapes(a.sizes(), b.sizes(), "rsub");
  return sub_impl("rsub", b, a, alpha);
}
Tensor rsub_scalar_k(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return sub_impl("rsub", wrap_scalar(b), a, alpha);
}

Tensor mul_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  if (rt != ScalarType::Bool) {
    if (is_unrounded_scalar(b, rt))
      return unary(UnaryOp::mul_scalar, a, rt, scalar_value(b.item(), rt, false));
    if (is_unrounded_scalar(a, rt))
      return unary(UnaryOp::mul_scalar, b, rt, scalar_value(a.item(), rt, false));
  }
  return binary(BinaryOp::mul, "mul", a, b, rt);
}
Tensor mul_scalar_k(const Tensor& a, const Scalar& b) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool) return mul_k(a, wrap_scalar(b));
  return unary(UnaryOp::mul_scalar, a, rt, scalar_value(b, rt, false));
}

// a / b with b unrounded, as the CPU's div_by_scalar: a division (a multiply by 1 / b would round
// differently) by a 0-dim device tensor holding b in the op-math precision of rt.
Tensor div_by_scalar(const Tensor& a, const Scalar& b, ScalarType rt) {
  const ScalarType mt = rt == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
  Tensor v = Tensor::empty(IntArrayRef{}, mt, a.device());
  v.fill_(Scalar(scalar_value(b, rt, false)));
  if (mt == rt) return binary(BinaryOp::div, "div", a, v, rt);
  // float16/bfloat16: divide in float by the float value, round once.
  return binary(BinaryOp::div, "div", cast(a, mt), v, mt).to(rt);
}
Tensor div_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = float_result(result_type(a, b));
  if (is_unrounded_scalar(b, rt)) return div_by_scalar(a, b.item(), rt);
  return binary(BinaryOp::div, "div", a, b, rt);
}
Tensor div_scalar_k(const Tensor& a, const Scalar& b) {
  return div_by_scalar(a, b, float_result(result_type(a, b)));
}
// The CPU kernels' message, so a program fails the same way on either device.
void check_not_bool(const char* op, ScalarType rt) {
  if (rt == ScalarType::Bool) throw_unsupported_dtype(op, rt);
}
Tensor div_rounding(const Tensor& a, const Tensor& b, Rounding mode) {
  const ScalarType rt = result_type(a, b);
  check_not_bool("div", rt);
  return binary(mode == Rounding::Floor ? BinaryOp::div_floor : BinaryOp::div_trunc, "div", a, b,
                rt);
}
Tensor div_mode_k(const Tensor& a, const Tensor& b, std::optional<std::string> mode) {
  const Rounding r = meta::parse_rounding(mode);
  return r == Rounding::True ? div_k(a, b) : div_rounding(a, b, r);
}
Tensor div_scalar_mode_k(const Tensor& a, const Scalar& b, std::optional<std::string> mode) {
  const Rounding r = meta::parse_rounding(mode);
  return r == Rounding::True ? div_scalar_k(a, b) : div_rounding(a, wrap_scalar(b), r);
}

// ---- pow, fmod, remainder, atan2, addcmul, addcdiv ----------------------------------------------

Tensor pow_k(const Tensor& a, const Tensor& e) {
  const ScalarType rt = result_type(a, e);
  check_not_bool("pow", rt);
  return binary(BinaryOp::pow, "pow", a, e, rt);
}
Tensor pow_tensor_scalar_k(const Tensor& a, const Scalar& e) {
  meta::check_pow_exponent(a, e);
  const ScalarType rt = result_type(a, e);
  check_not_bool("pow", rt);
  // The exponent as the CPU kernel holds it: the integer itself, double for float32/float64,
  // rounded to the dtype for float16/bfloat16.
  const double ex = is_integral(rt)           ? static_cast<double>(e.to_int())
                    : is_reduced_floating(rt) ? scalar_value(e, rt, true)
                                              : e.to_double();
  return unary(UnaryOp::pow_scalar, a, rt, ex);
}
Tensor pow_scalar_k(const Scalar& base, const Tensor& e) {
  return pow_k(wrap_scalar(base), e);
}
Tensor modulo(const char* op, BinaryOp bop, const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  check_not_bool(op, rt);
  return binary(bop, op, a, b, rt);
}
Tensor fmod_k(const Tensor& a, const Tensor& b) {
  return modulo("fmod", BinaryOp::fmod, a, b);
}
Tensor fmod_scalar_k(const Tensor& a, const Scalar& b) {
  return fmod_k(a, wrap_scalar(b));
}
Tensor remainder_k(const Tensor& a, const Tensor& b) {
  return modulo("remainder", BinaryOp::remainder, a, b);
}
Tensor remainder_scalar_k(const Tensor& a, const Scalar& b) {
  return remainder_k(a, wrap_scalar(b));
}
Tensor remainder_scalar_tensor_k(const Scalar& a, const Tensor& b) {
  return remainder_k(wrap_scalar(a), b);
}
Tensor atan2_k(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::atan2, "atan2", a, b, float_result(result_type(a, b)));
}
Tensor addcmul_k(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  const ScalarType rt = result_type(std::array{self, t1, t2});
  check_not_bool("addcmul", rt);
  return ternary(TernaryOp::addcmul, "addcmul", self, t1, t2, rt, scalar_value(value, rt, false));
}
Tensor addcdiv_k(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  meta::check_addcdiv(t1, t2);
  const ScalarType rt = result_type(std::array{self, t1, t2});
  if (!is_floating(rt)) throw_unsupported_dtype("addcdiv", rt);
  return ternary(TernaryOp::addcdiv, "addcdiv", self, t1, t2, rt, scalar_value(value, rt, false));
}

// ---- Unary (kernels/cpu/unary_ops.cpp) ---------------------------------------------------------

// The transcendental ops of math_ops.def: integer and bool inputs compute in float32
// ("int-to-float") or are refused, as the line says.
constexpr const char* math_op_name(UnaryOp op) {
  switch (op) {
#define AMPJIT_CUDA_MATH(OP, INT_TO_FLOAT, FORMULA) \
  case UnaryOp::OP:                                 \
    return #OP;
#include "kernels/cuda/math_ops.def"
#undef AMPJIT_CUDA_MATH
    default:
      return "?";
  }
}
template <UnaryOp Op, bool IntToFloat>
Tensor math_k(const Tensor& self) {
  ScalarType rt = self.dtype();
  if (!is_floating(rt)) {
    if (!IntToFloat) throw_unsupported_dtype(math_op_name(Op), rt);
    rt = ScalarType::Float32;
  }
  return unary(Op, self, rt);
}
Tensor gelu_k(const Tensor& self, std::string approximate) {
  const UnaryOp op = meta::gelu_is_tanh(approximate) ? UnaryOp::gelu_tanh : UnaryOp::gelu;
  if (!is_floating(self.dtype())) throw_unsupported_dtype("gelu", self.dtype());
  return unary(op, self, self.dtype());
}
Tensor numeric_unary(UnaryOp op, const char* name, const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) throw_unsupported_dtype(name, self.dtype());
  return unary(op, self, self.dtype());
}
Tensor neg_k(const Tensor& self) {
  meta::check_neg(self.dtype());
  return numeric_unary(UnaryOp::neg, "neg", self);
}
Tensor abs_k(const Tensor& self) {
  return numeric_unary(UnaryOp::abs, "abs", self);
}
Tensor sign_k(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) return self.clone();
  return numeric_unary(UnaryOp::sign, "sign", self);
}

template <UnaryOp Op>
Tensor rounding_k(const Tensor& self) {
  if (is_integral(self.dtype())) return self.clone();
  const char* name = Op == UnaryOp::floor ? "floor" : Op == UnaryOp::ceil ? "ceil" : "round";
  if (!is_floating(self.dtype())) throw_unsupported_dtype(name, self.dtype());
  return unary(Op, self, self.dtype());
}
Tensor round_decimals_k(const Tensor& self, int64_t decimals) {
  if (!is_floating(self.dtype())) throw_unsupported_dtype("round", self.dtype());
  if (decimals == 0) return rounding_k<UnaryOp::round>(self);
  const bool neg = decimals < 0;
  const double scale = std::pow(10.0, static_cast<double>(neg ? -decimals : decimals));
  return unary(UnaryOp::round_decimals, self, self.dtype(), scale, neg ? -1.0 : 1.0);
}

// Clamp with Scalar bounds (Note [Clamp and NaN] in kernels/cpu/unary_ops.cpp).
using meta::LoneNaNBound;
Tensor clamp_scalar(const char* op, const Tensor& self, const OptScalar& lo, const OptScalar& hi,
                    LoneNaNBound lone_nan = LoneNaNBound::Ignored) {
  const ScalarType rt = meta::clamp_result_type(self, lo, hi);
  if (rt == ScalarType::Bool) throw_unsupported_dtype(op, rt);
  if (meta::clamp_gives_nan(lo, hi, lone_nan)) {
    Tensor out = Tensor::empty(self.sizes(), rt, self.device());
    out.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    return out;
  }
  // A NaN lone bound of clamp is ignored: the identity, as the CPU's -inf/+inf default bound.
  const bool use_lo = lo && !std::isnan(lo->to_double()),
             use_hi = hi && !std::isnan(hi->to_double());
  if (!use_lo && !use_hi) return cast(self, rt).clone();
  const double l = use_lo ? scalar_value(*lo, rt, true) : 0,
               h = use_hi ? scalar_value(*hi, rt, true) : 0;
  if (use_lo && use_hi) return unary(UnaryOp::clamp, self, rt, l, h);
  if (use_lo) return unary(UnaryOp::clamp_min, self, rt, l);
  return unary(UnaryOp::clamp_max, self, rt, h);
}
// Tensor bounds promote with self and broadcast; a missing bound is the dtype's extreme.
Tensor clamp_tensor(const char* op, const Tensor& self, const OptTensor& lo, const OptTensor& hi) {
  const ScalarType rt = meta::clamp_tensor_result_type(self, lo, hi);
  if (rt == ScalarType::Bool) throw_unsupported_dtype(op, rt);
  auto extreme = [&](bool low) {
    Tensor t = Tensor::empty(IntArrayRef{}, rt, self.device());
    if (is_floating(rt)) {
      t.fill_(Scalar(low ? -std::numeric_limits<double>::infinity()
                         : std::numeric_limits<double>::infinity()));
    } else {
      dispatch_numeric(rt, op, [&]<typename T>() {
        t.fill_(Scalar(static_cast<int64_t>(low ? std::numeric_limits<T>::lowest()
                                                : std::numeric_limits<T>::max())));
      });
    }
    return t;
  };
  return ternary(TernaryOp::clamp, op, self, lo ? *lo : extreme(true), hi ? *hi : extreme(false),
                 rt);
}
Tensor clamp_k(const Tensor& self, OptScalar lo, OptScalar hi) {
  return clamp_scalar("clamp", self, lo, hi);
}
Tensor clamp_tensor_k(const Tensor& self, OptTensor lo, OptTensor hi) {
  return clamp_tensor("clamp", self, lo, hi);
}
Tensor clamp_inplace_k(Tensor self, OptScalar lo, OptScalar hi) {
  return write_result(self, clamp_scalar("clamp_", self, lo, hi), "clamp_", true);
}
Tensor clamp_tensor_inplace_k(Tensor self, OptTensor lo, OptTensor hi) {
  return write_result(self, clamp_tensor("clamp_", self, lo, hi), "clamp_", true);
}
Tensor clamp_min_k(const Tensor& self, const Scalar& lo) {
  return clamp_scalar("clamp_min", self, lo, std::nullopt, LoneNaNBound::PropagatesNaN);
}
Tensor clamp_min_tensor_k(const Tensor& self, const Tensor& lo) {
  return clamp_tensor("clamp_min", self, lo, std::nullopt);
}
Tensor clamp_max_k(const Tensor& self, const Scalar& hi) {
  return clamp_scalar("clamp_max", self, std::nullopt, hi, LoneNaNBound::PropagatesNaN);
}
Tensor clamp_max_tensor_k(const Tensor& self, const Tensor& hi) {
  return clamp_tensor("clamp_max", self, std::nullopt, hi);
}
Tensor relu_k(const Tensor& self) {
  meta::check_relu(self.dtype());
  return clamp_scalar("relu", self, Scalar(int64_t{0}), std::nullopt);
}

// ---- Comparisons, maximum/minimum, where, logical (kernels/cpu/compare_ops.cpp) ---------------

template <BinaryOp Op>
Tensor compare_k(const Tensor& a, const Tensor& b) {
  static constexpr const char* kNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  const char* name = kNames[static_cast<int>(Op) - static_cast<int>(BinaryOp::eq)];
  return binary(Op, name, a, b, result_type(a, b));
}
template <BinaryOp Op>
Tensor compare_scalar_k(const Tensor& a, const Scalar& b) {
  return compare_k<Op>(a, wrap_scalar(b));
}
Tensor maximum_k(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::maximum, "maximum", a, b, result_type(a, b));
}
Tensor minimum_k(const Tensor& a, const Tensor& b) {
  return binary(BinaryOp::minimum, "minimum", a, b, result_type(a, b));
}
// The condition joins the loop converted to the value dtype (one input type per loop).
Tensor where_k(const Tensor& cond, const Tensor& a, const Tensor& b) {
  meta::check_where_condition(cond);
  return ternary(TernaryOp::where, "where", cond, a, b, result_type(a, b));
}
Tensor where_scalar_self_k(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where_k(cond, wrap_scalar(a), b);
}
Tensor where_scalar_other_k(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where_k(cond, a, wrap_scalar(b));
}
Tensor where_scalar_k(const Tensor& cond, const Scalar& a, const Scalar& b) {
  return where_k(cond, wrap_scalar(a), wrap_scalar(b));
}
// Truth values are taken in the promoted type (the CPU's `truth`).
template <BinaryOp Op>
constexpr const char* logical_name() {
  if (Op == BinaryOp::logical_and) return "logical_and";
  if (Op == BinaryOp::logical_or) return "logical_or";
  return "logical_xor";
}
template <BinaryOp Op>
Tensor logical_k(const Tensor& a, const Tensor& b) {
  return binary(Op, logical_name<Op>(), a, b, result_type(a, b));
}
Tensor logical_not_k(const Tensor& a) {
  return unary(UnaryOp::logical_not, a, a.dtype(), 0, 0, ScalarType::Bool);
}

}  // namespace

void register_pointwise_kernels() {
  AMPJIT_CUDA_KERNEL(add, add_k);
  AMPJIT_CUDA_KERNEL(add_Scalar, add_scalar_k);
  AMPJIT_CUDA_KERNEL(sub, sub_k);
  AMPJIT_CUDA_KERNEL(sub_Scalar, sub_scalar_k);
  AMPJIT_CUDA_KERNEL(rsub, rsub_k);
  AMPJIT_CUDA_KERNEL(rsub_Scalar, rsub_scalar_k);
  AMPJIT_CUDA_KERNEL(mul, mul_k);
  AMPJIT_CUDA_KERNEL(mul_Scalar, mul_scalar_k);
  AMPJIT_CUDA_KERNEL(div, div_k);
  AMPJIT_CUDA_KERNEL(div_Scalar, div_scalar_k);
  AMPJIT_CUDA_KERNEL(div_Tensor_mode, div_mode_k);
  AMPJIT_CUDA_KERNEL(div_Scalar_mode, div_scalar_mode_k);
  AMPJIT_CUDA_KERNEL(pow, pow_k);
  AMPJIT_CUDA_KERNEL(pow_Tensor_Scalar, pow_tensor_scalar_k);
  AMPJIT_CUDA_KERNEL(pow_Scalar, pow_scalar_k);
  AMPJIT_CUDA_KERNEL(fmod, fmod_k);
  AMPJIT_CUDA_KERNEL(fmod_Scalar, fmod_scalar_k);
  AMPJIT_CUDA_KERNEL(remainder, remainder_k);
  AMPJIT_CUDA_KERNEL(remainder_Scalar, remainder_scalar_k);
  AMPJIT_CUDA_KERNEL(remainder_Scalar_Tensor, remainder_scalar_tensor_k);
  AMPJIT_CUDA_KERNEL(atan2, atan2_k);
  AMPJIT_CUDA_KERNEL(addcmul, addcmul_k);
  AMPJIT_CUDA_KERNEL(addcdiv, addcdiv_k);
  AMPJIT_CUDA_KERNEL(neg, neg_k);
  AMPJIT_CUDA_KERNEL(abs, abs_k);
  AMPJIT_CUDA_KERNEL(sign, sign_k);
#define AMPJIT_CUDA_MATH(OP, INT_TO_FLOAT, FORMULA) \
  AMPJIT_CUDA_KERNEL(OP, (math_k<UnaryOp::OP, INT_TO_FLOAT>));
#include "kernels/cuda/math_ops.def"
#undef AMPJIT_CUDA_MATH
  AMPJIT_CUDA_KERNEL(gelu, gelu_k);
  AMPJIT_CUDA_KERNEL(floor, rounding_k<UnaryOp::floor>);
  AMPJIT_CUDA_KERNEL(ceil, rounding_k<UnaryOp::ceil>);
  AMPJIT_CUDA_KERNEL(round, rounding_k<UnaryOp::round>);
  AMPJIT_CUDA_KERNEL(round_decimals, round_decimals_k);
  AMPJIT_CUDA_KERNEL(relu, relu_k);
  AMPJIT_CUDA_KERNEL(clamp, clamp_k);
  AMPJIT_CUDA_KERNEL(clamp_Tensor, clamp_tensor_k);
  AMPJIT_CUDA_KERNEL(clamp_, clamp_inplace_k);
  AMPJIT_CUDA_KERNEL(clamp__Tensor, clamp_tensor_inplace_k);
  AMPJIT_CUDA_KERNEL(clamp_min, clamp_min_k);
  AMPJIT_CUDA_KERNEL(clamp_min_Tensor, clamp_min_tensor_k);
  AMPJIT_CUDA_KERNEL(clamp_max, clamp_max_k);
  AMPJIT_CUDA_KERNEL(clamp_max_Tensor, clamp_max_tensor_k);
  AMPJIT_CUDA_KERNEL(eq, compare_k<BinaryOp::eq>);
  AMPJIT_CUDA_KERNEL(eq_Scalar, compare_scalar_k<BinaryOp::eq>);
  AMPJIT_CUDA_KERNEL(ne, compare_k<BinaryOp::ne>);
  AMPJIT_CUDA_KERNEL(ne_Scalar, compare_scalar_k<BinaryOp::ne>);
  AMPJIT_CUDA_KERNEL(lt, compare_k<BinaryOp::lt>);
  AMPJIT_CUDA_KERNEL(lt_Scalar, compare_scalar_k<BinaryOp::lt>);
  AMPJIT_CUDA_KERNEL(le, compare_k<BinaryOp::le>);
  AMPJIT_CUDA_KERNEL(le_Scalar, compare_scalar_k<BinaryOp::le>);
  AMPJIT_CUDA_KERNEL(gt, compare_k<BinaryOp::gt>);
  AMPJIT_CUDA_KERNEL(gt_Scalar, compare_scalar_k<BinaryOp::gt>);
  AMPJIT_CUDA_KERNEL(ge, compare_k<BinaryOp::ge>);
  AMPJIT_CUDA_KERNEL(ge_Scalar, compare_scalar_k<BinaryOp::ge>);
  AMPJIT_CUDA_KERNEL(maximum, maximum_k);
  AMPJIT_CUDA_KERNEL(minimum, minimum_k);
  AMPJIT_CUDA_KERNEL(where, where_k);
  AMPJIT_CUDA_KERNEL(where_ScalarSelf, where_scalar_self_k);
  AMPJIT_CUDA_KERNEL(where_ScalarOther, where_scalar_other_k);
  AMPJIT_CUDA_KERNEL(where_Scalar, where_scalar_k);
  AMPJIT_CUDA_KERNEL(logical_and, logical_k<BinaryOp::logical_and>);
  AMPJIT_CUDA_KERNEL(logical_or, logical_k<BinaryOp::logical_or>);
  AMPJIT_CUDA_KERNEL(logical_xor, logical_k<BinaryOp::logical_xor>);
  AMPJIT_CUDA_KERNEL(logical_not, logical_not_k);
}

}  // namespace ampjit::cuda
