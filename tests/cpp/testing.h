// Shared test utilities: random inputs (contiguous or not), float64 references, and comparison
// with a stated tolerance per dtype.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/ops.h"

namespace ampjit::testing {

// Short names for the dtypes, for tables of test cases (`using namespace testing::dtypes;`).
namespace dtypes {
constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kU8 = ScalarType::UInt8;
constexpr ScalarType kI8 = ScalarType::Int8;
constexpr ScalarType kI16 = ScalarType::Int16;
constexpr ScalarType kI32 = ScalarType::Int32;
constexpr ScalarType kI64 = ScalarType::Int64;
constexpr ScalarType kF16 = ScalarType::Float16;
constexpr ScalarType kBF16 = ScalarType::BFloat16;
constexpr ScalarType kF32 = ScalarType::Float32;
constexpr ScalarType kF64 = ScalarType::Float64;
}  // namespace dtypes

// Tolerances for comparing a kernel's result with a float64 reference computed from the same
// (already rounded) inputs: a few ulps of the result dtype, relative plus absolute.
struct Tol {
  double rtol, atol;
};
inline Tol tol_for(ScalarType t) {
  switch (t) {
    case ScalarType::Float64:
      return {1e-10, 1e-12};
    case ScalarType::Float32:
      return {1e-5, 1e-6};
    case ScalarType::Float16:
      return {2e-3, 1e-4};  // eps = 2^-10
    case ScalarType::BFloat16:
      return {1.6e-2, 1e-3};  // eps = 2^-7
    default:
      return {0, 0};  // integers and bool: exact
  }
}

// A tensor of `shape` and `dtype` with values uniform in [lo, hi) (integers: rounded), made from a
// seeded std::mt19937_64 independent of ampjit's generator. With `noncontig`, the result is a
// strided view (a transposed or sliced parent) holding the same logical values.
inline Tensor random_tensor(std::vector<int64_t> shape, ScalarType dtype, uint64_t seed,
                            double lo = -2.0, double hi = 2.0, bool noncontig = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  const int64_t n = numel_of(shape);
  Tensor t64 = Tensor::empty(std::vector<int64_t>{n}, ScalarType::Float64);
  for (int64_t i = 0; i < n; ++i) {
    double v = dist(rng);
    if (dtype == ScalarType::Bool)
      v = v > (lo + hi) / 2;
    else if (!is_floating(dtype))
      v = std::round(v);
    t64.data<double>()[i] = v;
  }
  Tensor t = t64.view(shape).to(dtype);
  if (!noncontig || shape.empty()) return t;
  // Build a parent with the last two dims swapped (or doubled length), copy, and view back.
  if (shape.size() >= 2) {
    std::vector<int64_t> ps = shape;
    std::swap(ps[ps.size() - 1], ps[ps.size() - 2]);
    Tensor parent = Tensor::empty(ps, dtype);
    Tensor v = parent.transpose(-1, -2);
    v.copy_(t);
    return v;
  }
  Tensor parent = Tensor::empty(std::vector<int64_t>{shape[0] * 2}, dtype);
  Tensor v = parent.slice(0, 0, std::nullopt, 2);
  v.copy_(t);
  return v;
}

// The values of `t` as doubles in row-major order, however it is strided.
inline std::vector<double> values(const Tensor& t) {
  return t.to_double_vector();
}

// Row-major multi-index walk: calls f(index_vector, linear) for every element of `shape`.
inline void for_each_index(const std::vector<int64_t>& shape,
                           const std::function<void(const std::vector<int64_t>&, int64_t)>& f) {
  const int64_t n = numel_of(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t lin = 0; lin < n; ++lin) {
    f(idx, lin);
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
}

// Rounds a float64 reference value to `dtype`, as the kernel's single final rounding does.
inline double round_to(double v, ScalarType dtype) {
  Tensor t = Tensor::empty(std::vector<int64_t>{}, ScalarType::Float64);
  *t.data<double>() = v;
  return t.to(dtype).to(ScalarType::Float64).item<double>();
}

inline ::testing::AssertionResult close(const Tensor& got, const std::vector<double>& want,
                                        const std::vector<int64_t>& want_shape, Tol tol) {
  if (std::vector<int64_t>(got.sizes().begin(), got.sizes().end()) != want_shape) {
    return ::testing::AssertionFailure()
           << "shape " << got.shape_str() << " != expected " << shape_str(want_shape);
  }
  std::vector<double> g = values(got);
  int bad = 0;
  std::ostringstream msg;
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = want[i];
    const bool ok = (std::isnan(w) && std::isnan(g[i])) || (w == g[i]) ||
                    std::fabs(g[i] - w) <= tol.atol + tol.rtol * std::fabs(w);
    if (!ok && bad++ < 5) msg << "\n  [" << i << "] got " << g[i] << " want " << w;
  }
  if (bad)
    return ::testing::AssertionFailure() << bad << " of " << g.size() << " mismatch:" << msg.str();
  return ::testing::AssertionSuccess();
}

// The dtypes most op tests sweep.
inline const std::vector<ScalarType>& float_types() {
  static const std::vector<ScalarType> v = {ScalarType::Float32, ScalarType::Float64,
                                            ScalarType::Float16, ScalarType::BFloat16};
  return v;
}

// The message of the exception `f` throws ("" when it throws none): what error tests compare.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace ampjit::testing
