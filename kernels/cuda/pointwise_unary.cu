// Unary pointwise kernels: one functor per UnaryOp over the elementwise family (elementwise.cuh),
// with the CPU kernels' formulas (kernels/cpu/unary_ops.cpp, binary_ops.cpp for the Scalar ops).
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/math.cuh"

namespace ampjit::cuda {
namespace {

using namespace dmath;

template <typename T, UnaryOp Op>
struct UnaryFn {
  using M = opmath_t<T>;
  M p0, p1;
  bool flag;  // round_decimals: negative decimals; pow_scalar: exponent computed in double

  __device__ __forceinline__ auto operator()(T raw) const {
    const M x = convert<M>(raw);
    if constexpr (Op == UnaryOp::neg) {
      if constexpr (std::is_integral_v<M>) return wrapping_neg(x);
      else return -x;
    } else if constexpr (Op == UnaryOp::abs) {
      if constexpr (std::is_unsigned_v<M>) return x;
      else if constexpr (std::is_integral_v<M>) return x < 0 ? wrapping_neg(x) : x;
      else return fabs(x);
    } else if constexpr (Op == UnaryOp::sign) {
      if constexpr (std::is_unsigned_v<M>) return static_cast<M>(x != 0);
      else return static_cast<M>((M(0) < x) - (x < M(0)));
    } else if constexpr (Op == UnaryOp::exp) {
      return exp(x);
    } else if constexpr (Op == UnaryOp::log) {
      return log(x);
    } else if constexpr (Op == UnaryOp::log1p) {
      return log1p(x);
    } else if constexpr (Op == UnaryOp::sqrt) {
      return sqrt(x);
    } else if constexpr (Op == UnaryOp::rsqrt) {
      return M(1) / sqrt(x);
    } else if constexpr (Op == UnaryOp::sin) {
      return sin(x);
    } else if constexpr (Op == UnaryOp::cos) {
      return cos(x);
    } else if constexpr (Op == UnaryOp::tan) {
      return tan(x);
    } else if constexpr (Op == UnaryOp::tanh) {
      return tanh(x);
    } else if constexpr (Op == UnaryOp::sigmoid) {
      return M(1) / (M(1) + exp(-x));
    } else if constexpr (Op == UnaryOp::erf) {
      return erf(x);
    } else if constexpr (Op == UnaryOp::reciprocal) {
      return M(1) / x;
    } else if constexpr (Op == UnaryOp::silu) {
      return x / (M(1) + exp(-x));
    } else if constexpr (Op == UnaryOp::gelu) {
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
        if constexpr (is_reduced_v<T>) return pow(x, p0);
        else return static_cast<M>(pow(static_cast<double>(x), static_cast<double>(p0)));
      }
    } else {
      static_assert(Op == UnaryOp::logical_not);
      return !(x != M(0));
    }
  }
};

template <UnaryOp Op, typename T>
void run(const ElementwiseIter& it, double p0, double p1, bool flag) {
  using M = opmath_t<T>;
  const UnaryFn<T, Op> f{static_cast<M>(p0), static_cast<M>(p1), flag};
  if constexpr (Op == UnaryOp::logical_not) launch_elementwise<bool, T, 1>(it, f);
  else launch_elementwise<T, T, 1>(it, f);
}

template <UnaryOp Op>
void floating(int dtype, const ElementwiseIter& it, double p0, double p1, bool flag = false) {
  dispatch_floating(dtype, [&]<typename T>() { run<Op, T>(it, p0, p1, flag); });
}
template <UnaryOp Op>
void numeric(int dtype, const ElementwiseIter& it, double p0, double p1) {
  dispatch_numeric(dtype, [&]<typename T>() { run<Op, T>(it, p0, p1, false); });
}

}  // namespace

void launch_unary(UnaryOp op, int dtype, const ElementwiseIter& it, double p0, double p1) {
  switch (op) {
    case UnaryOp::neg: return numeric<UnaryOp::neg>(dtype, it, p0, p1);
    case UnaryOp::abs: return numeric<UnaryOp::abs>(dtype, it, p0, p1);
    case UnaryOp::sign: return numeric<UnaryOp::sign>(dtype, it, p0, p1);
    case UnaryOp::exp: return floating<UnaryOp::exp>(dtype, it, p0, p1);
    case UnaryOp::log: return floating<UnaryOp::log>(dtype, it, p0, p1);
    case UnaryOp::log1p: return floating<UnaryOp::log1p>(dtype, it, p0, p1);
    case UnaryOp::sqrt: return floating<UnaryOp::sqrt>(dtype, it, p0, p1);
    case UnaryOp::rsqrt: return floating<UnaryOp::rsqrt>(dtype, it, p0, p1);
    case UnaryOp::sin: return floating<UnaryOp::sin>(dtype, it, p0, p1);
    case UnaryOp::cos: return floating<UnaryOp::cos>(dtype, it, p0, p1);
    case UnaryOp::tan: return floating<UnaryOp::tan>(dtype, it, p0, p1);
    case UnaryOp::tanh: return floating<UnaryOp::tanh>(dtype, it, p0, p1);
    case UnaryOp::sigmoid: return floating<UnaryOp::sigmoid>(dtype, it, p0, p1);
    case UnaryOp::erf: return floating<UnaryOp::erf>(dtype, it, p0, p1);
    case UnaryOp::reciprocal: return floating<UnaryOp::reciprocal>(dtype, it, p0, p1);
    case UnaryOp::silu: return floating<UnaryOp::silu>(dtype, it, p0, p1);
    case UnaryOp::gelu: return floating<UnaryOp::gelu>(dtype, it, p0, p1);
    case UnaryOp::gelu_tanh: return floating<UnaryOp::gelu_tanh>(dtype, it, p0, p1);
    case UnaryOp::floor: return floating<UnaryOp::floor>(dtype, it, p0, p1);
    case UnaryOp::ceil: return floating<UnaryOp::ceil>(dtype, it, p0, p1);
    case UnaryOp::round: return floating<UnaryOp::round>(dtype, it, p0, p1);
    case UnaryOp::round_decimals:
      // p0 = 10^|decimals|, p1 < 0 when decimals is negative.
      return floating<UnaryOp::round_decimals>(dtype, it, p0, p1, p1 < 0);
    case UnaryOp::relu: return numeric<UnaryOp::relu>(dtype, it, p0, p1);
    case UnaryOp::clamp: return numeric<UnaryOp::clamp>(dtype, it, p0, p1);
    case UnaryOp::clamp_min: return numeric<UnaryOp::clamp_min>(dtype, it, p0, p1);
    case UnaryOp::clamp_max: return numeric<UnaryOp::clamp_max>(dtype, it, p0, p1);
    case UnaryOp::add_scalar: return numeric<UnaryOp::add_scalar>(dtype, it, p0, p1);
    case UnaryOp::mul_scalar: return numeric<UnaryOp::mul_scalar>(dtype, it, p0, p1);
    case UnaryOp::pow_scalar: return numeric<UnaryOp::pow_scalar>(dtype, it, p0, p1);
    case UnaryOp::logical_not:
      return dispatch_all(dtype, [&]<typename T>() { run<UnaryOp::logical_not, T>(it, p0, p1, false); });
  }
}

}  // namespace ampjit::cuda
