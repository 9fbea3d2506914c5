// Binary and ternary pointwise kernels: one functor per op over the elementwise family
// (elementwise.cuh), with the CPU kernels' formulas (kernels/cpu/binary_ops.cpp, compare_ops.cpp,
// unary_ops.cpp's clamp with Tensor bounds).
//
// Note [Integer division by zero on CUDA]
// The CPU kernels raise ZeroDivisionError for an integer div (trunc/floor), fmod or remainder by
// zero. A kernel cannot throw, and torch's CUDA kernels do not check either; here the quotient
// and the remainder of an integer division by zero are 0, deterministically, and no error is
// raised. tests/cuda pins this.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/math.cuh"

namespace ampjit::cuda {
namespace {

using namespace dmath;

template <BinaryOp Op>
inline constexpr bool is_predicate =
    Op == BinaryOp::eq || Op == BinaryOp::ne || Op == BinaryOp::lt || Op == BinaryOp::le ||
    Op == BinaryOp::gt || Op == BinaryOp::ge || Op == BinaryOp::logical_and ||
    Op == BinaryOp::logical_or || Op == BinaryOp::logical_xor;

template <typename T, BinaryOp Op>
struct BinaryFn {
  using M = opmath_t<T>;
  M alpha;

  __device__ __forceinline__ auto operator()(T a, T b) const {
    const M x = convert<M>(a), y = convert<M>(b);
    if constexpr (Op == BinaryOp::add) {
      if constexpr (std::is_same_v<M, bool>) return x || (alpha && y);
      else return static_cast<M>(x + alpha * y);
    } else if constexpr (Op == BinaryOp::mul) {
      if constexpr (std::is_same_v<M, bool>) return x && y;
      else return static_cast<M>(x * y);
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
      if constexpr (std::is_integral_v<M>) return pow_integer(x, y);
      else return pow(x, y);
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
      if constexpr (Op == BinaryOp::maximum) return x < y ? y : x;
      else return y < x ? y : x;
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

template <BinaryOp Op, typename T>
void run_binary(const ElementwiseIter& it, double p0) {
  const BinaryFn<T, Op> f{static_cast<opmath_t<T>>(p0)};
  if constexpr (is_predicate<Op>) launch_elementwise<bool, T, 2>(it, f);
  else launch_elementwise<T, T, 2>(it, f);
}
template <BinaryOp Op>
void binary_all(int dtype, const ElementwiseIter& it, double p0) {
  dispatch_all(dtype, [&]<typename T>() { run_binary<Op, T>(it, p0); });
}
template <BinaryOp Op>
void binary_numeric(int dtype, const ElementwiseIter& it, double p0) {
  dispatch_numeric(dtype, [&]<typename T>() { run_binary<Op, T>(it, p0); });
}
template <BinaryOp Op>
void binary_floating(int dtype, const ElementwiseIter& it, double p0) {
  dispatch_floating(dtype, [&]<typename T>() { run_binary<Op, T>(it, p0); });
}

template <typename T, TernaryOp Op>
struct TernaryFn {
  using M = opmath_t<T>;
  M value;

  __device__ __forceinline__ M operator()(T a, T b, T c) const {
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

template <TernaryOp Op, typename T>
void run_ternary(const ElementwiseIter& it, double p0) {
  launch_elementwise<T, T, 3>(it, TernaryFn<T, Op>{static_cast<opmath_t<T>>(p0)});
}

}  // namespace

void launch_binary(BinaryOp op, int dtype, const ElementwiseIter& it, double p0) {
  switch (op) {
    case BinaryOp::add: return binary_all<BinaryOp::add>(dtype, it, p0);
    case BinaryOp::mul: return binary_all<BinaryOp::mul>(dtype, it, p0);
    case BinaryOp::div: return binary_floating<BinaryOp::div>(dtype, it, p0);
    case BinaryOp::div_trunc: return binary_numeric<BinaryOp::div_trunc>(dtype, it, p0);
    case BinaryOp::div_floor: return binary_numeric<BinaryOp::div_floor>(dtype, it, p0);
    case BinaryOp::pow: return binary_numeric<BinaryOp::pow>(dtype, it, p0);
    case BinaryOp::fmod: return binary_numeric<BinaryOp::fmod>(dtype, it, p0);
    case BinaryOp::remainder: return binary_numeric<BinaryOp::remainder>(dtype, it, p0);
    case BinaryOp::atan2: return binary_floating<BinaryOp::atan2>(dtype, it, p0);
    case BinaryOp::maximum: return binary_all<BinaryOp::maximum>(dtype, it, p0);
    case BinaryOp::minimum: return binary_all<BinaryOp::minimum>(dtype, it, p0);
    case BinaryOp::eq: return binary_all<BinaryOp::eq>(dtype, it, p0);
    case BinaryOp::ne: return binary_all<BinaryOp::ne>(dtype, it, p0);
    case BinaryOp::lt: return binary_all<BinaryOp::lt>(dtype, it, p0);
    case BinaryOp::le: return binary_all<BinaryOp::le>(dtype, it, p0);
    case BinaryOp::gt: return binary_all<BinaryOp::gt>(dtype, it, p0);
    case BinaryOp::ge: return binary_all<BinaryOp::ge>(dtype, it, p0);
    case BinaryOp::logical_and: return binary_all<BinaryOp::logical_and>(dtype, it, p0);
    case BinaryOp::logical_or: return binary_all<BinaryOp::logical_or>(dtype, it, p0);
    case BinaryOp::logical_xor: return binary_all<BinaryOp::logical_xor>(dtype, it, p0);
  }
}

void launch_ternary(TernaryOp op, int dtype, const ElementwiseIter& it, double p0) {
  switch (op) {
    case TernaryOp::where:
      return dispatch_all(dtype, [&]<typename T>() { run_ternary<TernaryOp::where, T>(it, p0); });
    case TernaryOp::addcmul:
      return dispatch_numeric(dtype, [&]<typename T>() { run_ternary<TernaryOp::addcmul, T>(it, p0); });
    case TernaryOp::addcdiv:
      return dispatch_floating(dtype, [&]<typename T>() { run_ternary<TernaryOp::addcdiv, T>(it, p0); });
    case TernaryOp::clamp:
      return dispatch_numeric(dtype, [&]<typename T>() { run_ternary<TernaryOp::clamp, T>(it, p0); });
  }
}

}  // namespace ampjit::cuda
