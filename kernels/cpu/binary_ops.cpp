// Binary arithmetic kernels (runtime/ops/pointwise.def): add, sub, rsub, mul, div, pow, fmod,
// remainder, atan2, addcmul and addcdiv, with broadcasting, type promotion
// (runtime/type_promotion.h) and Python-scalar overloads. Their in-place and out= variants are
// derived from them (Note [Derived op variants] in runtime/op_table.h).
//
// Note [Scalar overloads]
// add, sub, mul, div and pow.Tensor_Scalar run a one-input loop for a Python-number operand, so
// `x * 2` takes the flat vectorized path. The rare Scalar overloads (rsub, fmod, remainder,
// pow.Scalar) wrap the number into a 0-dim wrapped-number tensor and run the Tensor kernel, as
// torch does: the promotion is identical and the op keeps one loop per dtype (Note [One dispatch
// per op] in kernels/cpu/elementwise.h).
// Which precision the number has follows torch's kernels, for float16/bfloat16 results: add and
// sub round the number and alpha to the result dtype first; mul and div use it unrounded, and so
// treat a 0-dim tensor of another dtype (torch's CPU-scalar fast path: `half_x * 0.1` multiplies by
// 0.1f, not by half(0.1)). Either way the arithmetic is in float, rounded once.
//
// Note [Integer division by zero]
// Integer div (trunc/floor), fmod and remainder by zero raise torch's "ZeroDivisionError". The loop
// may run on OpenMP threads, where an exception cannot escape, so it records the event in an atomic
// flag and the kernel throws after the loop. x / -1 is computed as -x, so INT_MIN / -1 wraps like
// the rest of integer arithmetic instead of trapping (SIGFPE) as torch's CPU kernel does.
#include <atomic>
#include <cmath>

#include "kernels/cpu/elementwise.h"
#include "kernels/pointwise_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// A Python number as a 0-dim wrapped-number tensor: it promotes like the Scalar it came from.

using meta::check_alpha;
using meta::check_sub;
using meta::float_result;
using meta::is_unrounded_scalar;
using meta::negated;
using meta::Rounding;

// ---- add, sub, rsub ----------------------------------------------------------------------------

// a + alpha * b; `op` names the user's op (add, sub, rsub) in errors.
Tensor add_impl(const char* op, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  check_alpha(rt, alpha);
  if (rt == ScalarType::Bool) {
    const bool al = alpha.to_bool();
    return map<bool>(op, std::array{a, b}, rt, [al](bool x, bool y) { return x || (al && y); });
  }
  return dispatch_numeric(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    const M al = static_cast<M>(alpha.to<T>());
    return map<T>(op, std::array{a, b}, rt, [al](M x, M y) { return x + al * y; });
  });
}
Tensor add_scalar_impl(const char* op, const Tensor& a, const Scalar& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool) return add_impl(op, a, wrap_scalar(b), alpha);
  check_alpha(rt, alpha);
  return dispatch_numeric(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    const M v = static_cast<M>(b.to<T>()) * static_cast<M>(alpha.to<T>());
    return map<T>(op, std::array{a}, rt, [v](M x) { return x + v; });
  });
}
Tensor add_k(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return add_impl("add", a, b, alpha);
}
Tensor add_scalar_k(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return add_scalar_impl("add", a, b, alpha);
}

// a - alpha * b is a + (-alpha) * b, as in torch: sub shares add's loops.
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
// rsub(self, other, alpha) = other - alpha * self.
Tensor rsub_k(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  broadcast_shapes(a.sizes(), b.sizes(), "rsub");  // a mismatch names the shapes in call order
  return sub_impl("rsub", b, a, alpha);
}
Tensor rsub_scalar_k(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return sub_impl("rsub", wrap_scalar(b), a, alpha);
}

// ---- mul ---------------------------------------------------------------------------------------

// a * b in the result dtype rt, b unrounded.
Tensor mul_by_scalar(const Tensor& a, const Scalar& b, ScalarType rt) {
  return dispatch_numeric(rt, "mul", [&]<typename T>() {
    using M = opmath_t<T>;
    const M v = b.to<M>();
    return map<T>("mul", std::array{a}, rt, [v](M x) { return x * v; });
  });
}
Tensor mul_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool)
    return map<bool>("mul", std::array{a, b}, rt, [](bool x, bool y) { return x && y; });
  if (is_unrounded_scalar(b, rt)) return mul_by_scalar(a, b.item(), rt);
  if (is_unrounded_scalar(a, rt)) return mul_by_scalar(b, a.item(), rt);
  return dispatch_numeric(rt, "mul", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("mul", std::array{a, b}, rt, [](M x, M y) { return x * y; });
  });
}
Tensor mul_scalar_k(const Tensor& a, const Scalar& b) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool) return mul_k(a, wrap_scalar(b));
  return mul_by_scalar(a, b, rt);
}

// ---- div ---------------------------------------------------------------------------------------

// torch's div_floor_floating: floor(a / b) computed from fmod so it is exact where a / b rounds.
template <typename M>
M div_floor_floating(M a, M b) {
  if (b == 0) return a / b;
  const M mod = std::fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= M(1);
  if (div == 0) return std::copysign(M(0), a / b);
  M floordiv = std::floor(div);
  if (div - floordiv > M(0.5)) floordiv += M(1);
  return floordiv;
}

// Integer a / b rounded toward zero, or toward -inf when `floor` (b != 0).
template <typename I>
I div_integer(I a, I b, bool floor) {
  if constexpr (std::is_signed_v<I>) {
    if (b == -1) return wrapping_neg(a);
    const I q = static_cast<I>(a / b);
    return floor && (a % b != 0) && ((a < 0) != (b < 0)) ? static_cast<I>(q - 1) : q;
  } else {
    (void)floor;
    return static_cast<I>(a / b);
  }
}

// a / b in the floating result dtype rt, b unrounded.
Tensor div_by_scalar(const Tensor& a, const Scalar& b, ScalarType rt) {
  return dispatch_floating(rt, "div", [&]<typename T>() {
    using M = opmath_t<T>;
    const M v = b.to<M>();
    return map<T>("div", std::array{a}, rt, [v](M x) { return x / v; });
  });
}
Tensor div_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = float_result(result_type(a, b));
  if (is_unrounded_scalar(b, rt)) return div_by_scalar(a, b.item(), rt);
  return dispatch_floating(rt, "div", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("div", std::array{a, b}, rt, [](M x, M y) { return x / y; });
  });
}
Tensor div_scalar_k(const Tensor& a, const Scalar& b) {
  return div_by_scalar(a, b, float_result(result_type(a, b)));
}
// Rounding division keeps the promoted type (integers stay integers); trunc and floor share one
// loop per dtype (integer division does not vectorize, so the branch costs nothing).
Tensor div_rounding(const Tensor& a, const Tensor& b, Rounding mode) {
  const ScalarType rt = result_type(a, b);
  const bool floor = mode == Rounding::Floor;
  std::atomic<bool> by_zero{false};
  Tensor out = dispatch_numeric(rt, "div", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("div", std::array{a, b}, rt, [&, floor](M x, M y) -> M {
      if constexpr (std::is_integral_v<M>) {
        if (y == 0) {
          by_zero.store(true, std::memory_order_relaxed);
          return 0;
        }
        return div_integer(x, y, floor);
      } else {
        return floor ? div_floor_floating(x, y) : std::trunc(x / y);
      }
    });
  });
  AMPJIT_CHECK(!by_zero.load(), "ZeroDivisionError");
  return out;
}
Tensor div_mode_k(const Tensor& a, const Tensor& b, std::optional<std::string> mode) {
  const Rounding r = meta::parse_rounding(mode);
  return r == Rounding::True ? div_k(a, b) : div_rounding(a, b, r);
}
Tensor div_scalar_mode_k(const Tensor& a, const Scalar& b, std::optional<std::string> mode) {
  const Rounding r = meta::parse_rounding(mode);
  return r == Rounding::True ? div_scalar_k(a, b) : div_rounding(a, wrap_scalar(b), r);
}

// ---- pow ---------------------------------------------------------------------------------------

using integer_math::pow_integer;

Tensor pow_k(const Tensor& a, const Tensor& e) {
  const ScalarType rt = result_type(a, e);
  return dispatch_numeric(rt, "pow", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("pow", std::array{a, e}, rt, [](M x, M y) -> M {
      if constexpr (std::is_integral_v<M>)
        return pow_integer(x, y);
      else
        return std::pow(x, y);
    });
  });
}
// torch's pow_tensor_scalar_kernel: exponents 2, 3, -2, 0.5, -0.5 and -1 become multiplies,
// sqrt and reciprocals; float32 and float64 call pow in double, the reduced types in float with
// the exponent rounded to the tensor's dtype.
Tensor pow_tensor_scalar_k(const Tensor& a, const Scalar& e) {
  meta::check_pow_exponent(a, e);
  const ScalarType rt = result_type(a, e);
  return dispatch_numeric(rt, "pow", [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_integral_v<T>) {
      const T ex = e.to<T>();
      return map<T>("pow", std::array{a}, rt, [ex](M x) { return pow_integer(x, ex); });
    } else {
      using E = std::conditional_t<std::is_same_v<M, T>, double, float>;
      E ex;
      if constexpr (std::is_same_v<M, T>)
        ex = e.to_double();
      else
        ex = static_cast<float>(e.to<T>());
      return map<T>("pow", std::array{a}, rt, [ex](M x) -> M {
        if (ex == 2) return x * x;
        if (ex == 3) return x * x * x;
        if (ex == -2) return M(1) / (x * x);
        if (ex == E(0.5)) return std::sqrt(x);
        if (ex == E(-0.5)) return M(1) / std::sqrt(x);
        if (ex == -1) return M(1) / x;
        return static_cast<M>(std::pow(static_cast<E>(x), ex));
      });
    }
  });
}
Tensor pow_scalar_k(const Scalar& base, const Tensor& e) {
  return pow_k(wrap_scalar(base), e);
}

// ---- fmod, remainder ---------------------------------------------------------------------------

// fmod keeps the sign of the dividend (C's fmod and %); remainder that of the divisor (Python's
// %). One loop per dtype serves both: the modulo does not vectorize, so the branch costs nothing.
Tensor modulo(const char* op, const Tensor& a, const Tensor& b, bool python_sign) {
  const ScalarType rt = result_type(a, b);
  std::atomic<bool> by_zero{false};
  Tensor out = dispatch_numeric(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>(op, std::array{a, b}, rt, [&](M x, M y) -> M {
      M r;
      if constexpr (std::is_integral_v<M>) {
        if (y == 0) {
          by_zero.store(true, std::memory_order_relaxed);
          return 0;
        }
        if constexpr (std::is_signed_v<M>) {
          if (y == -1) return 0;
        }
        r = static_cast<M>(x % y);
      } else {
        r = std::fmod(x, y);
      }
      if constexpr (std::is_signed_v<M>) {
        if (python_sign && r != 0 && (r < 0) != (y < 0)) r = static_cast<M>(r + y);
      }
      return r;
    });
  });
  AMPJIT_CHECK(!by_zero.load(), "ZeroDivisionError");
  return out;
}
Tensor fmod_k(const Tensor& a, const Tensor& b) {
  return modulo("fmod", a, b, false);
}
Tensor fmod_scalar_k(const Tensor& a, const Scalar& b) {
  return fmod_k(a, wrap_scalar(b));
}
Tensor remainder_k(const Tensor& a, const Tensor& b) {
  return modulo("remainder", a, b, true);
}
Tensor remainder_scalar_k(const Tensor& a, const Scalar& b) {
  return remainder_k(a, wrap_scalar(b));
}
Tensor remainder_scalar_tensor_k(const Scalar& a, const Tensor& b) {
  return remainder_k(wrap_scalar(a), b);
}

// ---- atan2 -------------------------------------------------------------------------------------

Tensor atan2_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = float_result(result_type(a, b));
  return dispatch_floating(rt, "atan2", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("atan2", std::array{a, b}, rt, [](M y, M x) { return std::atan2(y, x); });
  });
}

// ---- addcmul, addcdiv --------------------------------------------------------------------------

// self + value * tensor1 * tensor2, promoted over the three tensors (value does not promote).
Tensor addcmul_k(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  const std::array ins{self, t1, t2};
  const ScalarType rt = result_type(ins);
  return dispatch_numeric(rt, "addcmul", [&]<typename T>() {
    using M = opmath_t<T>;
    const M v = value.to<M>();
    return map<T>("addcmul", ins, rt, [v](M s, M x, M y) { return s + v * x * y; });
  });
}
// self + value * tensor1 / tensor2; integer tensor1 and tensor2 are refused, as in torch.
Tensor addcdiv_k(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value) {
  meta::check_addcdiv(t1, t2);
  const std::array ins{self, t1, t2};
  const ScalarType rt = result_type(ins);
  return dispatch_floating(rt, "addcdiv", [&]<typename T>() {
    using M = opmath_t<T>;
    const M v = value.to<M>();
    return map<T>("addcdiv", ins, rt, [v](M s, M x, M y) { return s + v * x / y; });
  });
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(add, cpu::add_k)
AMPJIT_KERNEL(add_Scalar, cpu::add_scalar_k)
AMPJIT_KERNEL(sub, cpu::sub_k)
AMPJIT_KERNEL(sub_Scalar, cpu::sub_scalar_k)
AMPJIT_KERNEL(rsub, cpu::rsub_k)
AMPJIT_KERNEL(rsub_Scalar, cpu::rsub_scalar_k)
AMPJIT_KERNEL(mul, cpu::mul_k)
AMPJIT_KERNEL(mul_Scalar, cpu::mul_scalar_k)
AMPJIT_KERNEL(div, cpu::div_k)
AMPJIT_KERNEL(div_Scalar, cpu::div_scalar_k)
AMPJIT_KERNEL(div_Tensor_mode, cpu::div_mode_k)
AMPJIT_KERNEL(div_Scalar_mode, cpu::div_scalar_mode_k)
AMPJIT_KERNEL(pow, cpu::pow_k)
AMPJIT_KERNEL(pow_Tensor_Scalar, cpu::pow_tensor_scalar_k)
AMPJIT_KERNEL(pow_Scalar, cpu::pow_scalar_k)
AMPJIT_KERNEL(fmod, cpu::fmod_k)
AMPJIT_KERNEL(fmod_Scalar, cpu::fmod_scalar_k)
AMPJIT_KERNEL(remainder, cpu::remainder_k)
AMPJIT_KERNEL(remainder_Scalar, cpu::remainder_scalar_k)
AMPJIT_KERNEL(remainder_Scalar_Tensor, cpu::remainder_scalar_tensor_k)
AMPJIT_KERNEL(atan2, cpu::atan2_k)
AMPJIT_KERNEL(addcmul, cpu::addcmul_k)
AMPJIT_KERNEL(addcdiv, cpu::addcdiv_k)
