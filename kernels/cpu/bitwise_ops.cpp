// Bitwise, integer and classifying kernels (runtime/ops/math.def): bitwise_not/and/or/xor and the
// shifts, gcd and lcm, trunc, frac and sgn, and the predicates isnan, isinf, isposinf, isneginf,
// isfinite and signbit. Bool tensors are integers of one bit for the bitwise ops, as in torch;
// floating tensors are refused by them with torch's message.
#include <bit>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "kernels/cpu/elementwise.h"
#include "kernels/pointwise_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// ---- bitwise_not, and, or, xor, shifts ---------------------------------------------------------

enum class Bit { And, Or, Xor };

// The operation is a template argument, so each op's loop holds only its own instruction and
// vectorizes (a runtime switch inside the lambda kept the loops scalar).
template <Bit b>
Tensor bitwise_k(const Tensor& x, const Tensor& y) {
  constexpr const char* kName[] = {"bitwise_and", "bitwise_or", "bitwise_xor"};
  const char* op = kName[static_cast<int>(b)];
  const ScalarType rt = result_type(x, y);
  if (rt == ScalarType::Bool) {
    return map<bool>(op, std::array{x, y}, rt, [](bool p, bool q) {
      return b == Bit::And ? p && q : b == Bit::Or ? p || q : p != q;
    });
  }
  return dispatch_integral(rt, op, [&]<typename T>() {
    return map<T>(op, std::array{x, y}, rt, [](T p, T q) -> T {
      if constexpr (b == Bit::And)
        return p & q;
      else if constexpr (b == Bit::Or)
        return p | q;
      else
        return p ^ q;
    });
  });
}
template <Bit b>
Tensor bitwise_scalar_k(const Tensor& x, const Scalar& y) {
  return bitwise_k<b>(x, wrap_scalar(y));
}
template <Bit b>
Tensor bitwise_scalar_tensor_k(const Scalar& x, const Tensor& y) {
  return bitwise_k<b>(wrap_scalar(x), y);
}

Tensor bitwise_not_k(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool)
    return map<bool>("bitwise_not", std::array{self}, self.dtype(), [](bool p) { return !p; });
  return dispatch_integral(self.dtype(), "bitwise_not", [&]<typename T>() {
    return map<T>("bitwise_not", std::array{self}, self.dtype(),
                  [](T p) { return static_cast<T>(~p); });
  });
}

// Shifts by more than the width give 0 (or -1 for a negative value shifted right), and a negative
// amount gives 0, as torch's kernels do; floating operands shift as multiplication and division by
// powers of two (torch's `__lshift__` on floats).
template <typename T>
T shift_left(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a * std::pow(T(2), b);
  } else {
    using U = std::make_unsigned_t<T>;
    constexpr int64_t bits = sizeof(T) * 8;
    if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= bits) return 0;
    return static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
  }
}
template <typename T>
T shift_right(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a / std::pow(T(2), b);
  } else {
    constexpr int64_t bits = sizeof(T) * 8;
    if (static_cast<int64_t>(b) < 0 || static_cast<int64_t>(b) >= bits)
      return a < T(0) ? T(-1) : T(0);
    return static_cast<T>(a >> b);
  }
}
Tensor shift(const char* op, bool left, const Tensor& x, const Tensor& y) {
  const ScalarType rt = result_type(x, y);
  AMPJIT_CHECK(rt != ScalarType::Bool && !is_floating(rt), "\"{}_cpu\" not implemented for '{}'",
               left ? "lshift" : "rshift", dtype_name(rt));
  return dispatch_integral(rt, op, [&]<typename T>() {
    return map<T>(op, std::array{x, y}, rt,
                  [left](T a, T b) { return left ? shift_left(a, b) : shift_right(a, b); });
  });
}
Tensor left_shift_k(const Tensor& x, const Tensor& y) {
  return shift("bitwise_left_shift", true, x, y);
}
Tensor left_shift_scalar_k(const Tensor& x, const Scalar& y) {
  return left_shift_k(x, wrap_scalar(y));
}
Tensor left_shift_scalar_tensor_k(const Scalar& x, const Tensor& y) {
  return left_shift_k(wrap_scalar(x), y);
}
Tensor right_shift_k(const Tensor& x, const Tensor& y) {
  return shift("bitwise_right_shift", false, x, y);
}
Tensor right_shift_scalar_k(const Tensor& x, const Scalar& y) {
  return right_shift_k(x, wrap_scalar(y));
}
Tensor right_shift_scalar_tensor_k(const Scalar& x, const Tensor& y) {
  return right_shift_k(wrap_scalar(x), y);
}

// ---- gcd, lcm ----------------------------------------------------------------------------------

Tensor gcd_lcm(const char* op, bool lcm, const Tensor& x, const Tensor& y) {
  const ScalarType rt = result_type(x, y);
  return dispatch_integral(rt, op, [&]<typename T>() {
    return map<T>(op, std::array{x, y}, rt, [lcm](T a, T b) -> T {
      using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
      const W g = std::gcd(static_cast<W>(a), static_cast<W>(b));
      if (!lcm) return static_cast<T>(g);
      if (g == 0) return 0;
      const W l = static_cast<W>(a) / g * static_cast<W>(b);
      return static_cast<T>(l < 0 ? -l : l);
    });
  });
}
Tensor gcd_k(const Tensor& x, const Tensor& y) {
  return gcd_lcm("gcd", false, x, y);
}
Tensor lcm_k(const Tensor& x, const Tensor& y) {
  return gcd_lcm("lcm", true, x, y);
}

// ---- trunc, frac, sgn --------------------------------------------------------------------------

// Integer inputs are already integral: trunc copies them, as floor and ceil do.
Tensor trunc_k(const Tensor& self) {
  if (is_integral(self.dtype())) return self.clone();
  return dispatch_floating(self.dtype(), "trunc", [&]<typename T>() {
    return map<T>("trunc", std::array{self}, self.dtype(), [](auto x) { return std::trunc(x); });
  });
}
Tensor frac_k(const Tensor& self) {
  return dispatch_floating(self.dtype(), "frac", [&]<typename T>() {
    return map<T>("frac", std::array{self}, self.dtype(), [](auto x) { return x - std::trunc(x); });
  });
}

// ---- isnan, isinf, isposinf, isneginf, isfinite, signbit ----------------------------------------

enum class Is { Nan, Inf, PosInf, NegInf, Finite, SignBit };

// The predicate is a template argument, as in bitwise_k, so each op's loop vectorizes.
template <Is what>
Tensor classify_k(const Tensor& self) {
  constexpr const char* kName[] = {"isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"};
  const char* op = kName[static_cast<int>(what)];
  constexpr ScalarType kBool = ScalarType::Bool;
  if (!is_floating(self.dtype())) {  // integers are finite numbers
    if constexpr (what == Is::SignBit) {
      if (self.dtype() != kBool) {
        return dispatch_integral(self.dtype(), op, [&]<typename T>() {
          return map<T, bool>(op, std::array{self}, kBool, [](T x) { return x < T(0); });
        });
      }
    }
    Tensor out = Tensor::empty(self.sizes(), kBool, self.device());
    out.fill_(Scalar(what == Is::Finite));
    return out;
  }
  return dispatch_floating(self.dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T, bool>(op, std::array{self}, kBool, [](M x) {
      if constexpr (what == Is::Nan)
        return std::isnan(x);
      else if constexpr (what == Is::Inf)
        return std::isinf(x);
      else if constexpr (what == Is::PosInf)
        return x == std::numeric_limits<M>::infinity();
      else if constexpr (what == Is::NegInf)
        return x == -std::numeric_limits<M>::infinity();
      else if constexpr (what == Is::Finite)
        return std::isfinite(x);
      else  // the sign bit itself: GCC 12 stops with an internal error vectorizing std::signbit
        return (std::bit_cast<std::conditional_t<sizeof(M) == 4, uint32_t, uint64_t>>(x) >>
                (sizeof(M) * 8 - 1)) != 0;
    });
  });
}

}  // namespace
}  // namespace ampjit::cpu

using ampjit::cpu::Bit;
using ampjit::cpu::Is;

AMPJIT_KERNEL(bitwise_not, cpu::bitwise_not_k)
AMPJIT_KERNEL(bitwise_and, cpu::bitwise_k<Bit::And>)
AMPJIT_KERNEL(bitwise_and_Scalar, cpu::bitwise_scalar_k<Bit::And>)
AMPJIT_KERNEL(bitwise_and_Scalar_Tensor, cpu::bitwise_scalar_tensor_k<Bit::And>)
AMPJIT_KERNEL(bitwise_or, cpu::bitwise_k<Bit::Or>)
AMPJIT_KERNEL(bitwise_or_Scalar, cpu::bitwise_scalar_k<Bit::Or>)
AMPJIT_KERNEL(bitwise_or_Scalar_Tensor, cpu::bitwise_scalar_tensor_k<Bit::Or>)
AMPJIT_KERNEL(bitwise_xor, cpu::bitwise_k<Bit::Xor>)
AMPJIT_KERNEL(bitwise_xor_Scalar, cpu::bitwise_scalar_k<Bit::Xor>)
AMPJIT_KERNEL(bitwise_xor_Scalar_Tensor, cpu::bitwise_scalar_tensor_k<Bit::Xor>)
AMPJIT_KERNEL(bitwise_left_shift, cpu::left_shift_k)
AMPJIT_KERNEL(bitwise_left_shift_Tensor_Scalar, cpu::left_shift_scalar_k)
AMPJIT_KERNEL(bitwise_left_shift_Scalar_Tensor, cpu::left_shift_scalar_tensor_k)
AMPJIT_KERNEL(bitwise_right_shift, cpu::right_shift_k)
AMPJIT_KERNEL(bitwise_right_shift_Tensor_Scalar, cpu::right_shift_scalar_k)
AMPJIT_KERNEL(bitwise_right_shift_Scalar_Tensor, cpu::right_shift_scalar_tensor_k)
AMPJIT_KERNEL(gcd, cpu::gcd_k)
AMPJIT_KERNEL(lcm, cpu::lcm_k)
AMPJIT_KERNEL(trunc, cpu::trunc_k)
AMPJIT_KERNEL(frac, cpu::frac_k)
AMPJIT_KERNEL(isnan, cpu::classify_k<Is::Nan>)
AMPJIT_KERNEL(isinf, cpu::classify_k<Is::Inf>)
AMPJIT_KERNEL(isposinf, cpu::classify_k<Is::PosInf>)
AMPJIT_KERNEL(isneginf, cpu::classify_k<Is::NegInf>)
AMPJIT_KERNEL(isfinite, cpu::classify_k<Is::Finite>)
AMPJIT_KERNEL(signbit, cpu::classify_k<Is::SignBit>)
