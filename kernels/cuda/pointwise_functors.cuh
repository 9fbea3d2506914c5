// The pointwise ops' functors, one per UnaryOp / BinaryOp / TernaryOp (launch.h), with the CPU
// kernels' formulas (kernels/cpu/unary_ops.cpp, binary_ops.cpp, compare_ops.cpp). Each takes the
// stored values of its operands, computes in the op-math type and returns what the elementwise
// kernel converts to the output type. Host and device code: pointwise_unary.cu and
// pointwise_binary.cu launch them on the GPU, tests/cuda/test_cuda_functors.cu runs them on the
// host against the CPU kernels.
//
// Note [Integer division by zero on CUDA]
// The CPU kernels raise ZeroDivisionError for an integer div (trunc/floor), fmod or remainder by
// zero. A kernel cannot throw, and torch's CUDA kernels do not check either; here the quotient
// and the remainder of an integer division by zero are 0, deterministically, and no error is
// raised. tests/cuda pins this.
#pragma once
#include "kernels/cuda/math.cuh"

namespace ampjit::cuda {
namespace functors {

using namespace dmath;

template <typename T, UnaryOp Op>
struct UnaryFn {
  using M = opmath_t<T>;
  M p0, p1;
  bool flag;  // round_decimals: the decimals are negative

  AMPJIT_HOST_DEVICE auto operator()(T raw) const {
    const M x = convert<M>(raw);
    if constexpr (Op == UnaryOp::neg) {
      if constexpr (std::is_integral_v<M>)
        return wrapping_neg(x);
      else
        return -x;
    } else if constexpr (Op == UnaryOp::abs) {
      if constexpr (std::is_unsigned_v<M>)
        return x;
      else if constexpr (std::is_integral_v<M>)
        return x < 0 ? wrapping_neg(x) : x;
      else
        return fabs(x);
    } else if constexpr (Op == UnaryOp::sign) {
      if constexpr (std::is_unsigned_v<M>)
        return static_cast<M>(x != 0);
      else
        return static_cast<M>((M(0) < x) - (x < M(0)));
    }
#define AMPJIT_CUDA_MATH(OP, INT_TO_FLOAT, FORMULA) \
  else if constexpr (Op == UnaryOp::OP) {           \
    return FORMULA;                                 \
  }
#include "kernels/cuda/math_ops.def"
#undef AMPJIT_CUDA_MATH
    else if constexpr (Op == UnaryOp::gelu) {
      return x * M(0.5) * (M(1) + erf(x * M(0.70710678118654752440)));
    } else if constexpr (Op == UnaryOp::gelu_tanh) {
      // beta = sqrt(2) * (2 / sqrt(pi)) * 0.5, as the CPU kernel.
      const M beta = M(1.41421356237309504880 * 1.12837916709551257390 * 0.5), kappa = M(0.044715);
      const M inner = beta * (x + kappa * x * x * x);
      return M(0.5) * x * (M(1) + tanh(inner));
    } else if constexpr (Op == UnaryOp::floor) {
      return floor(x);
    } else if constexpr (Op == UnaryOp::ceil) {
      return ceil(x);
    } else if constexpr (Op == UnaryOp::round) {
      return rint(x);
    } else if constexpr (Op == UnaryOp::round_decimals) {
      return flag ? rint(x / p0) * p0 : rint(x * p0) / p0;
    } else if constexpr (Op == UnaryOp::relu || Op == UnaryOp::clamp_min) {
      return max_keep_first_nan(x, p0);
    } else if constexpr (Op == UnaryOp::clamp_max) {
      return min_keep_first_nan(x, p0);
    } else if constexpr (Op == UnaryOp::clamp) {
      return min_keep_first_nan(max_keep_first_nan(x, p0), p1);
    } else if constexpr (Op == UnaryOp::add_scalar) {
      return x + p0;
    } else if constexpr (Op == UnaryOp::mul_scalar) {
      return x * p0;
    } else if constexpr (Op == UnaryOp::pow_scalar) {
      // torch's pow_tensor_scalar_kernel: small exponents are multiplies and roots; otherwise
      // float32/float64 call pow in double, the reduced types in float.
      if constexpr (std::is_integral_v<M>) {
        return pow_integer(x, p0);
      } else {
        if (p0 == M(2)) return x * x;
        if (p0 == M(3)) return x * x * x;
        if (p0 == M(-2)) return M(1) / (x * x);
        if (p0 == M(0.5)) return sqrt(x);
        if (p0 == M(-0.5)) return M(1) / sqrt(x);
        if (p0 == M(-1)) return M(1) / x;
        if constexpr (is_reduced_v<T>)
          return pow(x, p0);
        else
          return static_cast<M>(pow(static_cast<double>(x), static_cast<double>(p0)));
      }
    } else {
      static_assert(Op == UnaryOp::logical_not);
      return !(x != M(0));
    }
  }
};

template <BinaryOp Op>
inline constexpr bool is_predicate =
    Op == BinaryOp::eq || Op == BinaryOp::ne || Op == BinaryOp::lt || Op == BinaryOp::le ||
    Op == BinaryOp::gt || Op == BinaryOp::ge || Op == BinaryOp::logical_and ||
    Op == BinaryOp::logical_or || Op == BinaryOp::logical_xor;

template <typename T, BinaryOp Op>
struct BinaryFn {
  using M = opmath_t<T>;
  M alpha;

  AMPJIT_HOST_DEVICE auto operator()(T a, T b) const {
    const M x = convert<M>(a), y = convert<M>(b);
    if constexpr (Op == BinaryOp::add) {
      if constexpr (std::is_same_v<M, bool>)
        return x || (alpha && y);
      else
        return static_cast<M>(x + alpha * y);
    } else if constexpr (Op == BinaryOp::mul) {
      if constexpr (std::is_same_v<M, bool>)
        return x && y;
      else
        return static_cast<M>(x * y);
    } else if constexpr (Op == BinaryOp::div) {
      return x / y;
    } else if constexpr (Op == BinaryOp::div_trunc || Op == BinaryOp::div_floor) {
      if constexpr (std::is_integral_v<M>) {
        if (y == 0) return M(0);  // Note [Integer division by zero on CUDA]
        if constexpr (std::is_signed_v<M>) {
          if (y == -1) return wrapping_neg(x);
          const M q = static_cast<M>(x / y);
          return Op == BinaryOp::div_floor && (x % y != 0) && ((x < 0) != (y < 0))
                     ? static_cast<M>(q - 1)
                     : q;
        } else {
          return static_cast<M>(x / y);
        }
      } else {
        return Op == BinaryOp::div_floor ? div_floor_floating(x, y) : trunc(x / y);
      }
    } else if constexpr (Op == BinaryOp::pow) {
      if constexpr (std::is_integral_v<M>)
        return pow_integer(x, y);
      else
        return pow(x, y);
    } else if constexpr (Op == BinaryOp::fmod || Op == BinaryOp::remainder) {
      M r;
      if constexpr (std::is_integral_v<M>) {
        if (y == 0) return M(0);  // Note [Integer division by zero on CUDA]
        if constexpr (std::is_signed_v<M>) {
          if (y == -1) return M(0);
        }
        r = static_cast<M>(x % y);
      } else {
        r = fmod(x, y);
      }
      if constexpr (std::is_signed_v<M> || std::is_floating_point_v<M>) {
        if (Op == BinaryOp::remainder && r != 0 && (r < 0) != (y < 0)) r = static_cast<M>(r + y);
      }
      return r;
    } else if constexpr (Op == BinaryOp::atan2) {
      return atan2(x, y);
    } else if constexpr (Op == BinaryOp::maximum || Op == BinaryOp::minimum) {
      if constexpr (std::is_floating_point_v<M>) {
        if (x != x || y != y) return ::cuda::std::numeric_limits<M>::quiet_NaN();
      }
      if constexpr (Op == BinaryOp::maximum)
        return x < y ? y : x;
      else
        return y < x ? y : x;
    } else if constexpr (Op == BinaryOp::eq) {
      return x == y;
    } else if constexpr (Op == BinaryOp::ne) {
      return x != y;
    } else if constexpr (Op == BinaryOp::lt) {
      return x < y;
    } else if constexpr (Op == BinaryOp::le) {
      return x <= y;
    } else if constexpr (Op == BinaryOp::gt) {
      return x > y;
    } else if constexpr (Op == BinaryOp::ge) {
      return x >= y;
    } else if constexpr (Op == BinaryOp::logical_and) {
      return x != M(0) && y != M(0);
    } else if constexpr (Op == BinaryOp::logical_or) {
      return x != M(0) || y != M(0);
    } else {
      static_assert(Op == BinaryOp::logical_xor);
      return (x != M(0)) != (y != M(0));
    }
  }
};

template <typename T, TernaryOp Op>
struct TernaryFn {
  using M = opmath_t<T>;
  M value;

  AMPJIT_HOST_DEVICE M operator()(T a, T b, T c) const {
    const M x = convert<M>(a), y = convert<M>(b), z = convert<M>(c);
    if constexpr (Op == TernaryOp::where) {
      return x != M(0) ? y : z;
    } else if constexpr (Op == TernaryOp::addcmul) {
      return static_cast<M>(x + value * y * z);
    } else if constexpr (Op == TernaryOp::addcdiv) {
      return static_cast<M>(x + value * y / z);
    } else {
      static_assert(Op == TernaryOp::clamp);
      if constexpr (std::is_floating_point_v<M>) {
        if (y != y || z != z) return ::cuda::std::numeric_limits<M>::quiet_NaN();
      }
      return min_keep_first_nan(max_keep_first_nan(x, y), z);
    }
  }
};

// ---- Which dtypes each op is instantiated for, its output type, and a visitor over the ops ----

enum class DtypeSet { Floating, Numeric, All };
constexpr DtypeSet dtypes_of(UnaryOp op) {
  switch (op) {
    case UnaryOp::neg:
    case UnaryOp::abs:
    case UnaryOp::sign:
    case UnaryOp::relu:
    case UnaryOp::clamp:
    case UnaryOp::clamp_min:
    case UnaryOp::clamp_max:
    case UnaryOp::add_scalar:
    case UnaryOp::mul_scalar:
    case UnaryOp::pow_scalar:
      return DtypeSet::Numeric;
    case UnaryOp::logical_not:
      return DtypeSet::All;
    default:
      return DtypeSet::Floating;
  }
}
constexpr DtypeSet dtypes_of(BinaryOp op) {
  switch (op) {
    case BinaryOp::div:
    case BinaryOp::atan2:
      return DtypeSet::Floating;
    case BinaryOp::div_trunc:
    case BinaryOp::div_floor:
    case BinaryOp::pow:
    case BinaryOp::fmod:
    case BinaryOp::remainder:
      return DtypeSet::Numeric;
    default:
      return DtypeSet::All;
  }
}
constexpr DtypeSet dtypes_of(TernaryOp op) {
  switch (op) {
    case TernaryOp::where:
      return DtypeSet::All;
    case TernaryOp::addcdiv:
      return DtypeSet::Floating;
    default:
      return DtypeSet::Numeric;
  }
}

template <UnaryOp Op, typename T>
using unary_out_t = std::conditional_t<Op == UnaryOp::logical_not, bool, T>;
template <BinaryOp Op, typename T>
using binary_out_t = std::conditional_t<is_predicate<Op>, bool, T>;

}  // namespace functors

// Calls f.template operator()<T>() for the CUDA type T of `dt`, instantiating only the set S.
template <functors::DtypeSet S, typename F>
void dispatch_set(int dt, F&& f) {
  if constexpr (S == functors::DtypeSet::Floating)
    dispatch_floating(dt, static_cast<F&&>(f));
  else if constexpr (S == functors::DtypeSet::Numeric)
    dispatch_numeric(dt, static_cast<F&&>(f));
  else
    dispatch_all(dt, static_cast<F&&>(f));
}

template <typename Op>
inline constexpr int kNumOps = 0;
template <>
inline constexpr int kNumOps<UnaryOp> = kNumUnaryOps;
template <>
inline constexpr int kNumOps<BinaryOp> = kNumBinaryOps;
template <>
inline constexpr int kNumOps<TernaryOp> = kNumTernaryOps;

// Calls f.template operator()<op>() with the runtime op as a template argument.
template <typename Op, int I = 0, typename F>
void visit_op(Op op, F&& f) {
  if constexpr (I < kNumOps<Op>) {
    if (static_cast<int>(op) == I) return f.template operator()<static_cast<Op>(I)>();
    return visit_op<Op, I + 1>(op, static_cast<F&&>(f));
  }
}

using functors::binary_out_t;
using functors::BinaryFn;
using functors::dtypes_of;
using functors::TernaryFn;
using functors::unary_out_t;
using functors::UnaryFn;

}  // namespace ampjit::cuda
