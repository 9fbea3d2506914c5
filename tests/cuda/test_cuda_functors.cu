// The CUDA pointwise and copy code run on the host, against the CPU kernels, on a machine without
// a GPU: every functor of pointwise_functors.cuh (each op, each dtype it is instantiated for),
// convert<> for all 100 dtype pairs, and the elementwise iteration (make_iter's broadcasting and
// dimension coalescing, OffsetCalculator's offsets) over strided and broadcast operands. The host
// loop below does what elementwise_strided_kernel does per thread; only the launch and the device's
// libm differ on a GPU (tests/cuda/test_cuda_kernels.cpp covers those where one is present).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/pointwise_functors.cuh"
#include "kernels/cuda/tensor_iter.h"
#include "runtime/ops.h"
#include "tests/cpp/testing.h"

namespace ampjit::cuda {
namespace {

using V = std::vector<int64_t>;
using functors::DtypeSet;

constexpr ScalarType kAll[] = {ScalarType::UInt8,   ScalarType::Int8,    ScalarType::Int16,
                               ScalarType::Int32,   ScalarType::Int64,   ScalarType::Float16,
                               ScalarType::Float32, ScalarType::Float64, ScalarType::Bool,
                               ScalarType::BFloat16};

bool in_set(DtypeSet s, ScalarType t) {
  if (s == DtypeSet::All) return true;
  if (s == DtypeSet::Numeric) return t != ScalarType::Bool;
  return is_floating(t);
}

// What elementwise_strided_kernel does for element i, for every i, on the host.
template <typename TOut, typename TIn, int N, typename F>
void run_on_host(const ElementwiseIter& it, const F& f) {
  const OffsetCalculator<N + 1> calc(it);
  for (int64_t i = 0; i < it.numel; ++i) {
    const auto off = calc.get(i);
    auto in = [&](int k) { return *reinterpret_cast<const TIn*>(it.data[k + 1] + off[k + 1]); };
    TOut* o = reinterpret_cast<TOut*>(it.data[0] + off[0]);
    if constexpr (N == 1)
      *o = convert<TOut>(f(in(0)));
    else if constexpr (N == 2)
      *o = convert<TOut>(f(in(0), in(1)));
    else
      *o = convert<TOut>(f(in(0), in(1), in(2)));
  }
}

// A few ulps of the dtype (the two builds may contract multiply-adds differently); exact for
// integers and bool; NaN where the CPU has NaN.
void expect_matches(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(V(got.sizes().begin(), got.sizes().end()), V(want.sizes().begin(), want.sizes().end()))
      << what;
  double rtol = 0;
  switch (got.dtype()) {
    case ScalarType::Float32:
      rtol = 5e-7;
      break;
    case ScalarType::Float64:
      rtol = 1e-15;
      break;
    case ScalarType::Float16:
      rtol = 1e-3;
      break;
    case ScalarType::BFloat16:
      rtol = 8e-3;
      break;
    default:
      break;
  }
  const std::vector<double> g = got.to_double_vector(), w = want.to_double_vector();
  for (size_t i = 0; i < g.size(); ++i) {
    if (std::isnan(w[i])) {
      EXPECT_TRUE(std::isnan(g[i]))
          << what << " [" << i << "]: " << g[i] << " where the CPU has NaN";
    } else if (rtol == 0 || std::isinf(w[i])) {
      EXPECT_EQ(g[i], w[i]) << what << " [" << i << "]";
    } else {
      EXPECT_NEAR(g[i], w[i], rtol * std::abs(w[i]) + 1e-300) << what << " [" << i << "]";
    }
  }
}

// Inputs: non-contiguous views of values in [lo, hi) ([0, hi) for unsigned and bool).
Tensor input(V shape, ScalarType t, uint64_t seed, double lo, double hi, bool noncontig = true) {
  if (t == ScalarType::UInt8 || t == ScalarType::Bool) lo = std::max(lo, 0.0);
  return testing::random_tensor(std::move(shape), t, seed, lo, hi, noncontig);
}

// ---- Unary --------------------------------------------------------------------------------------

struct UnaryCase {
  std::string name;
  UnaryOp op;
  std::function<Tensor(const Tensor&)> cpu;  // the CPU kernel
  double lo = -3, hi = 3;                    // input range
  double p0 = 0, p1 = 0;                     // the functor's parameters (as the CUDA wrapper sets)
};

Tensor host_unary(const UnaryCase& c, const Tensor& x, ScalarType out_type) {
  Tensor out = Tensor::empty(x.sizes(), out_type);
  const ElementwiseIter it = make_iter(out, {x});
  visit_op(c.op, [&]<UnaryOp Op>() {
    dispatch_set<dtypes_of(Op)>(dt(x.dtype()), [&]<typename T>() {
      using M = opmath_t<T>;
      run_on_host<unary_out_t<Op, T>, T, 1>(
          it, UnaryFn<T, Op>{static_cast<M>(c.p0), static_cast<M>(c.p1), c.p1 < 0});
    });
  });
  return out;
}

std::vector<UnaryCase> unary_cases() {
  using S = Scalar;
  return {
      {"neg", UnaryOp::neg, [](const Tensor& x) { return ops::neg(x); }},
      {"abs", UnaryOp::abs, [](const Tensor& x) { return ops::abs(x); }},
      {"sign", UnaryOp::sign, [](const Tensor& x) { return ops::sign(x); }},
      {"exp", UnaryOp::exp, [](const Tensor& x) { return ops::exp(x); }},
      {"log", UnaryOp::log, [](const Tensor& x) { return ops::log(x); }, 0.1, 4},
      {"log1p", UnaryOp::log1p, [](const Tensor& x) { return ops::log1p(x); }, -0.5, 4},
      {"sqrt", UnaryOp::sqrt, [](const Tensor& x) { return ops::sqrt(x); }, 0, 9},
      {"rsqrt", UnaryOp::rsqrt, [](const Tensor& x) { return ops::rsqrt(x); }, 0.1, 9},
      {"sin", UnaryOp::sin, [](const Tensor& x) { return ops::sin(x); }},
      {"cos", UnaryOp::cos, [](const Tensor& x) { return ops::cos(x); }},
      {"tan", UnaryOp::tan, [](const Tensor& x) { return ops::tan(x); }, -1.2, 1.2},
      {"tanh", UnaryOp::tanh, [](const Tensor& x) { return ops::tanh(x); }},
      {"sigmoid", UnaryOp::sigmoid, [](const Tensor& x) { return ops::sigmoid(x); }},
      {"erf", UnaryOp::erf, [](const Tensor& x) { return ops::erf(x); }},
      {"reciprocal", UnaryOp::reciprocal, [](const Tensor& x) { return ops::reciprocal(x); }, 0.25,
       3},
      {"silu", UnaryOp::silu, [](const Tensor& x) { return ops::silu(x); }},
      {"gelu", UnaryOp::gelu, [](const Tensor& x) { return ops::gelu(x, std::string("none")); }},
      {"gelu_tanh", UnaryOp::gelu_tanh,
       [](const Tensor& x) { return ops::gelu(x, std::string("tanh")); }},
      {"floor", UnaryOp::floor, [](const Tensor& x) { return ops::floor(x); }},
      {"ceil", UnaryOp::ceil, [](const Tensor& x) { return ops::ceil(x); }},
      {"round", UnaryOp::round, [](const Tensor& x) { return ops::round(x); }, -4, 4},
      {"round_decimals_2", UnaryOp::round_decimals,
       [](const Tensor& x) { return ops::round_decimals(x, int64_t{2}); }, -3, 3, 100, 1},
      {"round_decimals_-1", UnaryOp::round_decimals,
       [](const Tensor& x) { return ops::round_decimals(x, int64_t{-1}); }, -90, 90, 10, -1},
      {"relu", UnaryOp::relu, [](const Tensor& x) { return ops::relu(x); }},
      {"clamp", UnaryOp::clamp,
       [](const Tensor& x) { return ops::clamp(x, S(int64_t{-1}), S(int64_t{2})); }, -3, 3, -1, 2},
      {"clamp_min", UnaryOp::clamp_min,
       [](const Tensor& x) { return ops::clamp_min(x, S(int64_t{1})); }, -3, 3, 1},
      {"clamp_max", UnaryOp::clamp_max,
       [](const Tensor& x) { return ops::clamp_max(x, S(int64_t{-1})); }, -3, 3, -1},
      {"add_scalar", UnaryOp::add_scalar,
       [](const Tensor& x) { return ops::add_Scalar(x, S(int64_t{3}), S(int64_t{1})); }, -3, 3, 3},
      {"mul_scalar", UnaryOp::mul_scalar,
       [](const Tensor& x) { return ops::mul_Scalar(x, S(int64_t{3})); }, -3, 3, 3},
      {"pow_scalar_2", UnaryOp::pow_scalar,
       [](const Tensor& x) { return ops::pow_Tensor_Scalar(x, S(int64_t{2})); }, -3, 3, 2},
      {"pow_scalar_3", UnaryOp::pow_scalar,
       [](const Tensor& x) { return ops::pow_Tensor_Scalar(x, S(int64_t{3})); }, -3, 3, 3},
      {"logical_not", UnaryOp::logical_not, [](const Tensor& x) { return ops::logical_not(x); }},
  };
}

TEST(CudaFunctorsOnHost, EveryUnaryOpMatchesTheCpuKernelForEveryDtype) {
  int checked = 0;
  for (const UnaryCase& c : unary_cases()) {
    for (ScalarType t : kAll) {
      if (!in_set(dtypes_of(c.op), t)) continue;
      const Tensor x = input({5, 7}, t, 11 + checked, c.lo, c.hi);
      const Tensor want = c.cpu(x);
      expect_matches(host_unary(c, x, want.dtype()), want, c.name + " " + dtype_name(t));
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);  // every op over its dtypes
}

TEST(CudaFunctorsOnHost, NonSpecialFloatPowerComputesLikeTheCpu) {
  // 2.5 is no special case: float32/float64 go through pow in double, float16/bfloat16 in float.
  for (ScalarType t :
       {ScalarType::Float32, ScalarType::Float64, ScalarType::Float16, ScalarType::BFloat16}) {
    const UnaryCase c{"pow_scalar_2.5",
                      UnaryOp::pow_scalar,
                      [](const Tensor& x) { return ops::pow_Tensor_Scalar(x, Scalar(2.5)); },
                      0.1,
                      3,
                      2.5};
    const Tensor x = input({4, 6}, t, 5, c.lo, c.hi);
    expect_matches(host_unary(c, x, t), c.cpu(x), std::string("pow 2.5 ") + dtype_name(t));
  }
}

// ---- Binary -------------------------------------------------------------------------------------

struct BinaryCase {
  std::string name;
  BinaryOp op;
  std::function<Tensor(const Tensor&, const Tensor&)> cpu;
  double b_lo = -3, b_hi = 3;  // the second operand's range (divisors avoid 0)
  double p0 = 0;
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"add", BinaryOp::add,
       [](const Tensor& a, const Tensor& b) { return ops::add(a, b, Scalar(int64_t{2})); }, -3, 3,
       2},
      {"mul", BinaryOp::mul, [](const Tensor& a, const Tensor& b) { return ops::mul(a, b); }},
      {"div", BinaryOp::div, [](const Tensor& a, const Tensor& b) { return ops::div(a, b); }, 0.5,
       3},
      {"div_trunc", BinaryOp::div_trunc,
       [](const Tensor& a, const Tensor& b) {
         return ops::div_Tensor_mode(a, b, std::string("trunc"));
       },
       1, 4},
      {"div_floor", BinaryOp::div_floor,
       [](const Tensor& a, const Tensor& b) {
         return ops::div_Tensor_mode(a, b, std::string("floor"));
       },
       1, 4},
      {"pow", BinaryOp::pow, [](const Tensor& a, const Tensor& b) { return ops::pow(a, b); }, 0, 3},
      {"fmod", BinaryOp::fmod, [](const Tensor& a, const Tensor& b) { return ops::fmod(a, b); }, 1,
       4},
      {"remainder", BinaryOp::remainder,
       [](const Tensor& a, const Tensor& b) { return ops::remainder(a, b); }, 1, 4},
      {"atan2", BinaryOp::atan2, [](const Tensor& a, const Tensor& b) { return ops::atan2(a, b); }},
      {"maximum", BinaryOp::maximum,
       [](const Tensor& a, const Tensor& b) { return ops::maximum(a, b); }},
      {"minimum", BinaryOp::minimum,
       [](const Tensor& a, const Tensor& b) { return ops::minimum(a, b); }},
      {"eq", BinaryOp::eq, [](const Tensor& a, const Tensor& b) { return ops::eq(a, b); }},
      {"ne", BinaryOp::ne, [](const Tensor& a, const Tensor& b) { return ops::ne(a, b); }},
      {"lt", BinaryOp::lt, [](const Tensor& a, const Tensor& b) { return ops::lt(a, b); }},
      {"le", BinaryOp::le, [](const Tensor& a, const Tensor& b) { return ops::le(a, b); }},
      {"gt", BinaryOp::gt, [](const Tensor& a, const Tensor& b) { return ops::gt(a, b); }},
      {"ge", BinaryOp::ge, [](const Tensor& a, const Tensor& b) { return ops::ge(a, b); }},
      {"logical_and", BinaryOp::logical_and,
       [](const Tensor& a, const Tensor& b) { return ops::logical_and(a, b); }},
      {"logical_or", BinaryOp::logical_or,
       [](const Tensor& a, const Tensor& b) { return ops::logical_or(a, b); }},
      {"logical_xor", BinaryOp::logical_xor,
       [](const Tensor& a, const Tensor& b) { return ops::logical_xor(a, b); }},
  };
}

TEST(CudaFunctorsOnHost, EveryBinaryOpMatchesTheCpuKernelOverBroadcastStridedOperands) {
  int checked = 0;
  for (const BinaryCase& c : binary_cases()) {
    for (ScalarType t : kAll) {
      if (!in_set(dtypes_of(c.op), t)) continue;
      // [3, 1, 5] against a transposed [4, 5]: broadcasting and strides on both sides.
      const Tensor a =
          input({3, 1, 5}, t, 100 + checked, c.op == BinaryOp::pow ? 0.5 : -3, 3, false);
      const Tensor b = input({4, 5}, t, 200 + checked, c.b_lo, c.b_hi);
      const Tensor want = c.cpu(a, b);
      Tensor out = Tensor::empty(want.sizes(), want.dtype());
      const ElementwiseIter it = make_iter(out, {a, b});
      visit_op(c.op, [&]<BinaryOp Op>() {
        dispatch_set<dtypes_of(Op)>(dt(t), [&]<typename T>() {
          run_on_host<binary_out_t<Op, T>, T, 2>(it,
                                                 BinaryFn<T, Op>{static_cast<opmath_t<T>>(c.p0)});
        });
      });
      expect_matches(out, want, c.name + " " + dtype_name(t));
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

// ---- Ternary ------------------------------------------------------------------------------------

TEST(CudaFunctorsOnHost, TernaryOpsMatchTheCpuKernels) {
  int checked = 0;
  for (ScalarType t : kAll) {
    const Tensor a = input({2, 3, 4}, t, 300 + checked, -3, 3);
    const Tensor b = input({3, 1}, t, 400 + checked, 1, 3, false);
    const Tensor c = input({4}, t, 500 + checked, 1, 3, false);
    const Tensor cond = input({2, 3, 4}, ScalarType::Bool, 600 + checked, 0, 2);
    auto host = [&](TernaryOp op, const Tensor& x, const Tensor& y, const Tensor& z, double p0,
                    ScalarType out_type) {
      Tensor out = Tensor::empty(V{2, 3, 4}, out_type);
      const ElementwiseIter it = make_iter(out, {x, y, z});
      visit_op(op, [&]<TernaryOp Op>() {
        dispatch_set<dtypes_of(Op)>(dt(t), [&]<typename T>() {
          run_on_host<T, T, 3>(it, TernaryFn<T, Op>{static_cast<opmath_t<T>>(p0)});
        });
      });
      return out;
    };
    // where: the condition joins the loop converted to the value dtype, as the CUDA wrapper does.
    expect_matches(host(TernaryOp::where, cond.to(t), a, b, 0, t), ops::where(cond, a, b),
                   std::string("where ") + dtype_name(t));
    if (t != ScalarType::Bool) {
      const Tensor want = ops::addcmul(a, b, c, Scalar(int64_t{2}));
      expect_matches(host(TernaryOp::addcmul, a, b, c, 2, t), want,
                     std::string("addcmul ") + dtype_name(t));
      const Tensor lo = input({3, 1}, t, 700 + checked, -2, 0, false);
      const Tensor hi = input({4}, t, 800 + checked, 0, 2, false);
      expect_matches(host(TernaryOp::clamp, a, lo, hi, 0, t), ops::clamp_Tensor(a, lo, hi),
                     std::string("clamp ") + dtype_name(t));
    }
    if (is_floating(t)) {
      expect_matches(host(TernaryOp::addcdiv, a, b, c, 0.5, t), ops::addcdiv(a, b, c, Scalar(0.5)),
                     std::string("addcdiv ") + dtype_name(t));
    }
    ++checked;
  }
}

// ---- Conversions and the iteration --------------------------------------------------------------

TEST(CudaFunctorsOnHost, ConvertAgreesWithTheCpuCopyForAllDtypePairs) {
  for (ScalarType from : kAll) {
    for (ScalarType to : kAll) {
      // Values every dtype holds: [0, 100) with fractions (a float -> integer cast truncates).
      const Tensor src = input({6, 5}, from, 900, 0, 100);
      const Tensor want = src.to(to);
      Tensor out = Tensor::empty(src.sizes(), to);
      const ElementwiseIter it = make_iter(out, {src});
      dispatch_all(dt(to), [&]<typename D>() {
        dispatch_all(dt(from),
                     [&]<typename S>() { run_on_host<D, S, 1>(it, [](S v) { return v; }); });
      });
      expect_matches(out, want, std::string(dtype_name(from)) + " -> " + dtype_name(to));
      // Bitwise, not only close: a conversion rounds exactly as the CPU's.
      EXPECT_EQ(out.to_double_vector(), want.to_double_vector())
          << dtype_name(from) << " -> " << dtype_name(to);
    }
  }
}

// Double rounding: float64 and int64 values just above a float16/bfloat16 midpoint round up when
// converted directly, but to even when they pass through float32 first (which drops the excess).
TEST(CudaFunctorsOnHost, ConvertRoundsOnceFromDoubleAndInt64) {
  const std::vector<std::pair<ScalarType, double>> cases = {
      {ScalarType::Float16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)},
      {ScalarType::BFloat16, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)},
  };
  for (auto [to, v] : cases) {
    Tensor src = Tensor::empty(V{2}, ScalarType::Float64);
    src.data<double>()[0] = v;
    src.data<double>()[1] = -v;
    Tensor out = Tensor::empty(V{2}, to);
    dispatch_all(dt(to), [&]<typename D>() {
      run_on_host<D, double, 1>(make_iter(out, {src}), [](double x) { return x; });
    });
    EXPECT_EQ(out.to_double_vector(), src.to(to).to_double_vector()) << dtype_name(to);
    EXPECT_GT(out.to_double_vector()[0], 1.0) << dtype_name(to) << ": rounded twice";
  }
  Tensor big = Tensor::empty(V{1}, ScalarType::Int64);
  big.data<int64_t>()[0] = (int64_t{1} << 24) + (int64_t{1} << 16) + 1;
  Tensor out = Tensor::empty(V{1}, ScalarType::BFloat16);
  run_on_host<__nv_bfloat16, int64_t, 1>(make_iter(out, {big}), [](int64_t x) { return x; });
  EXPECT_EQ(out.to_double_vector(), big.to(ScalarType::BFloat16).to_double_vector());
  EXPECT_EQ(out.to_double_vector()[0], double((int64_t{1} << 24) + (int64_t{1} << 17)));
}

TEST(CudaFunctorsOnHost, IterationCoalescesDenseOperandsAndKeepsStridedOnes) {
  const Tensor x = input({4, 5, 6}, ScalarType::Float32, 1, -1, 1, false);
  Tensor out = Tensor::empty(x.sizes(), ScalarType::Float32);
  ElementwiseIter dense = make_iter(out, {x});
  EXPECT_TRUE(dense.contiguous);
  EXPECT_EQ(dense.ndim, 1);
  EXPECT_EQ(dense.sizes[0], 120);
  const Tensor t = x.transpose(0, 2);  // [6, 5, 4], strided
  Tensor out_t = Tensor::empty(t.sizes(), ScalarType::Float32);
  const ElementwiseIter strided = make_iter(out_t, {t});
  EXPECT_FALSE(strided.contiguous);
  EXPECT_EQ(strided.ndim, 3);
  // A broadcast operand has stride 0 along its broadcast dimension and stops the coalescing there.
  const Tensor row = input({6}, ScalarType::Float32, 2, -1, 1, false);
  const ElementwiseIter bcast = make_iter(out, {x, row});
  EXPECT_FALSE(bcast.contiguous);
  EXPECT_EQ(bcast.ndim, 2);
  EXPECT_EQ(bcast.strides[2][0], 0);
  // Size-1 dimensions vanish.
  const Tensor ones = input({1, 8, 1}, ScalarType::Float32, 3, -1, 1, false);
  Tensor out1 = Tensor::empty(ones.sizes(), ScalarType::Float32);
  EXPECT_EQ(make_iter(out1, {ones}).ndim, 1);
}

TEST(CudaFunctorsOnHost, OffsetsFollowEveryOperandsStrides) {
  // A sliced, transposed, broadcast mix: every element's offsets read back the CPU's values.
  const Tensor base = input({8, 9, 10}, ScalarType::Float64, 4, -1, 1, false);
  const Tensor a = base.slice(0, 1, 7, 2).transpose(1, 2);  // [3, 10, 9]
  const Tensor b = input({10, 1}, ScalarType::Float64, 5, -1, 1, false);
  Tensor out = Tensor::empty(V{3, 10, 9}, ScalarType::Float64);
  const ElementwiseIter it = make_iter(out, {a, b});
  run_on_host<double, double, 2>(it, [](double x, double y) { return x - 2 * y; });
  expect_matches(out, ops::sub(a, b, Scalar(int64_t{2})), "a - 2b over strided operands");
}

}  // namespace
}  // namespace ampjit::cuda
