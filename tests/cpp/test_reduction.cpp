// Reductions, scans and softmax against float64 references computed here with naive loops, over
// float32/float64/float16/bfloat16 (and integers where torch allows them), dim lists, keepdim,
// negative dims, non-contiguous, 0-dim and empty inputs; plus torch's error messages.
//
// Tolerances: tol_for(result dtype) throughout. Long sums need no loosening in reduced precision:
// the kernels accumulate in double and round once (Note [Reduction accumulators] in
// kernels/cpu/reduce.h), so even a 2^17-element float16 sum is correctly rounded; the LongRows
// test pins that.
#include <gmock/gmock.h>

#include <algorithm>
#include <limits>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::close;
using testing::float_types;
using ::testing::HasSubstr;
using testing::random_tensor;
using testing::Tol;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
using D = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

V shape_of(const Tensor& t) {
  return V(t.sizes().begin(), t.sizes().end());
}

Tensor from(const D& v, const V& shape, ScalarType dt = ScalarType::Float32) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.view(shape).to(dt);
}

// The elements of x grouped by the output position they reduce into when `dims` (empty: all) are
// reduced, each group in row-major order; and the output shape.
struct Groups {
  std::vector<D> rows;
  V shape;
};
Groups group_rows(const Tensor& x, const V& dims, bool keepdim) {
  const V shape = shape_of(x);
  const int64_t nd = static_cast<int64_t>(shape.size());
  std::vector<bool> red(shape.size(), dims.empty());
  for (int64_t d : dims) {
    if (nd) red[static_cast<size_t>((d + nd) % nd)] = true;
  }
  Groups g;
  V kept_sizes, kept_dims;
  for (int64_t d = 0; d < nd; ++d) {
    if (!red[d]) {
      g.shape.push_back(shape[d]);
      kept_sizes.push_back(shape[d]);
      kept_dims.push_back(d);
    } else if (keepdim) {
      g.shape.push_back(1);
    }
  }
  g.rows.resize(static_cast<size_t>(numel_of(kept_sizes)));
  const D vals = values(x);
  testing::for_each_index(shape, [&](const V& idx, int64_t lin) {
    int64_t o = 0;
    for (size_t i = 0; i < kept_dims.size(); ++i) o = o * kept_sizes[i] + idx[kept_dims[i]];
    g.rows[static_cast<size_t>(o)].push_back(vals[static_cast<size_t>(lin)]);
  });
  return g;
}

template <typename F>
D map_rows(const Groups& g, F f) {
  D out;
  for (const D& r : g.rows) out.push_back(f(r));
  return out;
}

double ref_sum(const D& r) {
  long double s = 0;
  for (double v : r) s += v;
  return static_cast<double>(s);
}
double ref_prod(const D& r) {
  long double s = 1;
  for (double v : r) s *= v;
  return static_cast<double>(s);
}
double ref_max(const D& r) {
  return *std::max_element(r.begin(), r.end());
}
double ref_min(const D& r) {
  return *std::min_element(r.begin(), r.end());
}
// The first position of the extreme (the references never see NaN).
double ref_argmax(const D& r) {
  return double(std::max_element(r.begin(), r.end()) - r.begin());
}
double ref_argmin(const D& r) {
  return double(std::min_element(r.begin(), r.end()) - r.begin());
}
double ref_logsumexp(const D& r) {
  long double s = 0;
  for (double v : r) s += std::exp(static_cast<long double>(v));
  return static_cast<double>(std::log(s));
}
double ref_l2(const D& r) {
  long double s = 0;
  for (double v : r) s += static_cast<long double>(v) * v;
  return static_cast<double>(std::sqrt(s));
}
double ref_var(const D& r, double correction) {
  const double mean = ref_sum(r) / static_cast<double>(r.size());
  long double m2 = 0;
  for (double v : r) m2 += (v - mean) * (v - mean);
  return static_cast<double>(m2) / std::max(0.0, static_cast<double>(r.size()) - correction);
}

// The (dims, keepdim) cases every reduction sweeps over a [3, 4, 5] input.
struct DimCase {
  V dims;
  bool keepdim;
};
const std::vector<DimCase>& dim_cases() {
  static const std::vector<DimCase> v = {{{}, false},      {{0}, false},      {{1}, true},
                                         {{-1}, false},    {{0, 2}, true},    {{2, 0}, false},
                                         {{-3, 1}, false}, {{0, 1, 2}, true}, {{1, 2}, false}};
  return v;
}

D ref_scan(const Tensor& x, int64_t dim, bool prod);
D ref_softmax(const Tensor& x, int64_t dim, bool log);

template <typename Exc = Error, typename F>
void expect_error(F f, const std::string& msg) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << msg;
  } catch (const Exc& e) {
    EXPECT_THAT(e.what(), HasSubstr(msg));
  }
}

// --- sum, mean, prod -----------------------------------------------------------------------------

TEST(Reduction, SumAndMeanOverDimListsKeepdimAndLayouts) {
  for (ScalarType dt : float_types()) {
    for (bool nc : {false, true}) {
      uint64_t seed = 1;
      for (const DimCase& c : dim_cases()) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " noncontig=" << nc << " dims="
                                          << shape_str(c.dims) << " keepdim=" << c.keepdim);
        Tensor x = random_tensor({3, 4, 5}, dt, seed++, -2, 2, nc);
        const Groups g = group_rows(x, c.dims, c.keepdim);
        Tensor s = ops::sum_dim_IntList(x, c.dims, c.keepdim);
        EXPECT_EQ(s.dtype(), dt);
        EXPECT_TRUE(close(s, map_rows(g, ref_sum), g.shape, tol_for(dt)));
        Tensor m = ops::mean_dim(x, c.dims, c.keepdim);
        EXPECT_TRUE(close(m, map_rows(g, [](const D& r) { return ref_sum(r) / r.size(); }), g.shape,
                          tol_for(dt)));
      }
    }
    Tensor x = random_tensor({6, 7}, dt, 99, -2, 2, true);
    EXPECT_TRUE(close(ops::sum(x), {ref_sum(values(x))}, {}, tol_for(dt)));
    EXPECT_TRUE(close(ops::mean(x), {ref_sum(values(x)) / 42}, {}, tol_for(dt)));
  }
}

TEST(Reduction, SumOfIntegersAndBoolWidensToInt64) {
  for (ScalarType dt : {ScalarType::UInt8, ScalarType::Int8, ScalarType::Int16, ScalarType::Int32,
                        ScalarType::Int64, ScalarType::Bool}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = random_tensor({4, 6}, dt, 3, dt == ScalarType::UInt8 ? 0 : -50, 100, true);
    Tensor s = ops::sum_dim_IntList(x, V{-1});
    EXPECT_EQ(s.dtype(), ScalarType::Int64);
    EXPECT_TRUE(close(s, map_rows(group_rows(x, {-1}, false), ref_sum), {4}, {0, 0}));
    Tensor p = ops::prod_dim_int(x, 0, true);
    EXPECT_EQ(p.dtype(), ScalarType::Int64);
    EXPECT_TRUE(close(p, map_rows(group_rows(x, {0}, true), ref_prod), {1, 6}, {0, 0}));
  }
  // An explicit dtype is honored (the input is cast first).
  Tensor x = random_tensor({5}, ScalarType::Int32, 4, -9, 9);
  EXPECT_EQ(Tensor(ops::sum(x, ScalarType::Int32)).dtype(), ScalarType::Int32);
  Tensor sf = ops::sum(x, ScalarType::Float64);
  EXPECT_EQ(sf.dtype(), ScalarType::Float64);
  EXPECT_TRUE(close(sf, {ref_sum(values(x))}, {}, tol_for(ScalarType::Float64)));
  // int64 sums wrap like torch (two's complement), without UB.
  Tensor big = from({9.0e18, 9.0e18}, {2}, ScalarType::Int64);
  EXPECT_EQ(Tensor(ops::sum(big)).item<int64_t>(),
            static_cast<int64_t>(static_cast<uint64_t>(9000000000000000000ll) * 2));
}

TEST(Reduction, SumMeanDtypeArgument) {
  Tensor x = random_tensor({4, 5}, ScalarType::Float16, 5);
  Tensor s = ops::sum_dim_IntList(x, V{1}, false, ScalarType::Float32);
  EXPECT_EQ(s.dtype(), ScalarType::Float32);
  EXPECT_TRUE(
      close(s, map_rows(group_rows(x, {1}, false), ref_sum), {4}, tol_for(ScalarType::Float32)));
  Tensor xi = random_tensor({4, 5}, ScalarType::Int32, 6, -9, 9);
  Tensor m = ops::mean_dim(xi, V{0}, false, ScalarType::Float64);
  EXPECT_EQ(m.dtype(), ScalarType::Float64);
  EXPECT_TRUE(close(m,
                    map_rows(group_rows(xi, {0}, false), [](const D& r) { return ref_sum(r) / 4; }),
                    {5}, tol_for(ScalarType::Float64)));
}

TEST(Reduction, ProdFloats) {
  for (ScalarType dt : float_types()) {
    for (const DimCase& c : dim_cases()) {
      if (c.dims.size() != 1) continue;  // prod.dim_int takes one dim
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " dim=" << c.dims[0]);
      Tensor x = random_tensor({3, 4, 5}, dt, 7, 0.5, 1.5, true);
      const Groups g = group_rows(x, c.dims, c.keepdim);
      EXPECT_TRUE(close(ops::prod_dim_int(x, c.dims[0], c.keepdim), map_rows(g, ref_prod), g.shape,
                        tol_for(dt)));
    }
    Tensor x = random_tensor({2, 6}, dt, 8, 0.5, 1.5);
    EXPECT_TRUE(close(ops::prod(x), {ref_prod(values(x))}, {}, tol_for(dt)));
  }
}

// 2^17 elements: a float16 or bfloat16 accumulator would be off by far more than tol_for allows
// (and a float32 one by more than its tolerance); many short rows also take the parallel path.
TEST(Reduction, LongRowsAndManyRows) {
  for (ScalarType dt : float_types()) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = random_tensor({1 << 17}, dt, 11, 0, 1, /*noncontig=*/is_reduced_floating(dt));
    EXPECT_TRUE(close(ops::sum(x), {ref_sum(values(x))}, {}, tol_for(dt)));
    EXPECT_TRUE(close(ops::mean(x), {ref_sum(values(x)) / (1 << 17)}, {}, tol_for(dt)));
    Tensor y = random_tensor({8192, 16}, dt, 12, -1, 1, true);
    const Groups g = group_rows(y, {1}, false);
    EXPECT_TRUE(close(ops::sum_dim_IntList(y, V{1}), map_rows(g, ref_sum), g.shape, tol_for(dt)));
    EXPECT_TRUE(close(ops::amax(y, V{1}), map_rows(g, ref_max), g.shape, {0, 0}));
  }
}

// Reducing a leading dim of a contiguous input walks blocks of up to 64 adjacent rows together
// (Note [Column blocks] in kernels/cpu/reduce.h); 70 and 130 columns give full and partial blocks.
TEST(Reduction, ColumnBlocksOfLeadingDimReductions) {
  for (ScalarType dt : {ScalarType::Float32, ScalarType::BFloat16}) {
    for (const auto& [shape, dim] :
         std::vector<std::pair<V, int64_t>>{{{9, 130}, 0}, {{3, 7, 70}, 1}, {{4, 3, 70}, 0}}) {
      SCOPED_TRACE(::testing::Message()
                   << dtype_name(dt) << " shape=" << shape_str(shape) << " dim=" << dim);
      Tensor x = random_tensor(shape, dt, 13, -2, 2);
      const Groups g = group_rows(x, {dim}, false);
      const Tol tol = tol_for(dt);
      EXPECT_TRUE(close(ops::sum_dim_IntList(x, V{dim}), map_rows(g, ref_sum), g.shape, tol));
      EXPECT_TRUE(close(ops::var_dim(x, V{dim}),
                        map_rows(g, [](const D& r) { return ref_var(r, 1); }), g.shape, tol));
      EXPECT_TRUE(
          close(ops::norm_ScalarOpt_dim(x, 2.0, V{dim}), map_rows(g, ref_l2), g.shape, tol));
      EXPECT_TRUE(close(ops::logsumexp(x, V{dim}), map_rows(g, ref_logsumexp), g.shape, tol));
      auto r = ops::max_dim(x, dim);
      EXPECT_TRUE(close(r.tensor(0), map_rows(g, ref_max), g.shape, {0, 0}));
      EXPECT_TRUE(close(r.tensor(1), map_rows(g, ref_argmax), g.shape, {0, 0}));
      EXPECT_TRUE(close(ops::argmin(x, dim), map_rows(g, ref_argmin), g.shape, {0, 0}));
      EXPECT_TRUE(close(ops::cumsum(x, dim), ref_scan(x, dim, false), shape, tol));
      EXPECT_TRUE(close(ops::softmax_int(x, dim), ref_softmax(x, dim, false), shape, tol));
      EXPECT_TRUE(close(ops::log_softmax_int(x, dim), ref_softmax(x, dim, true), shape, tol));
    }
  }
}

// One long row is reduced in chunks on several threads and combined in order: the first index
// of the extreme must survive the combine, across chunks too.
TEST(Reduction, LongRowArgExtremesKeepFirstIndex) {
  Tensor y = random_tensor({1 << 17}, ScalarType::Int32, 15, 0, 3);
  y.data<int32_t>()[100000] = 5;
  y.data<int32_t>()[40000] = 5;
  y.data<int32_t>()[90000] = -1;
  y.data<int32_t>()[70000] = -1;
  EXPECT_EQ(Tensor(ops::argmax(y)).item<int64_t>(), 40000);
  EXPECT_EQ(Tensor(ops::argmin(y)).item<int64_t>(), 70000);
  EXPECT_EQ(Tensor(ops::max(y)).item<int64_t>(), 5);
  Tensor z = y.to(ScalarType::Float32);
  z.data<float>()[90000] = std::numeric_limits<float>::quiet_NaN();
  z.data<float>()[70000] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(Tensor(ops::argmax(z)).item<int64_t>(), 70000);
  EXPECT_EQ(Tensor(ops::argmin(z)).item<int64_t>(), 70000);
  EXPECT_TRUE(std::isnan(Tensor(ops::min(z)).item<double>()));
}

TEST(Reduction, ZeroDimAndEmptyInputs) {
  Tensor s = from({2.5}, {});
  for (V dims : {V{}, V{0}, V{-1}}) {
    EXPECT_TRUE(close(ops::sum_dim_IntList(s, dims, true), {2.5}, {}, {0, 0}));
    EXPECT_TRUE(close(ops::mean_dim(s, dims), {2.5}, {}, {0, 0}));
    EXPECT_TRUE(close(ops::amax(s, dims), {2.5}, {}, {0, 0}));
  }
  EXPECT_TRUE(close(ops::prod_dim_int(s, -1), {2.5}, {}, {0, 0}));
  EXPECT_TRUE(close(ops::cumsum(s, 0), {2.5}, {}, {0, 0}));
  EXPECT_TRUE(close(ops::logsumexp(s, V{0}), {2.5}, {}, {0, 0}));
  Tensor e = Tensor::empty(V{0, 3});
  EXPECT_TRUE(close(ops::sum_dim_IntList(e, V{0}), {0, 0, 0}, {3}, {0, 0}));
  EXPECT_TRUE(close(ops::sum_dim_IntList(e, V{1}, true), {}, {0, 1}, {0, 0}));
  EXPECT_TRUE(close(ops::sum(e), {0}, {}, {0, 0}));
  EXPECT_TRUE(close(ops::prod_dim_int(e, 0), {1, 1, 1}, {3}, {0, 0}));
  EXPECT_TRUE(close(ops::mean_dim(e, V{0}), {kNaN, kNaN, kNaN}, {3}, {0, 0}));
  EXPECT_TRUE(close(ops::amax(e, V{1}), {}, {0}, {0, 0}));  // the empty dim is not reduced
  EXPECT_TRUE(close(ops::logsumexp(e, V{0}), {-kInf, -kInf, -kInf}, {3}, {0, 0}));
  EXPECT_TRUE(close(ops::var_dim(e, V{0}), {kNaN, kNaN, kNaN}, {3}, {0, 0}));
  EXPECT_TRUE(close(ops::norm_ScalarOpt_dim(e, 2.0, V{0}), {0, 0, 0}, {3}, {0, 0}));
  EXPECT_TRUE(close(ops::cumsum(e, 0), {}, {0, 3}, {0, 0}));
  EXPECT_TRUE(close(ops::softmax_int(e, 1), {}, {0, 3}, {0, 0}));
}

// --- max, min, amax, amin, argmax, argmin ------------------------------------------------------

TEST(Reduction, AmaxAminMatchRowExtremesExactly) {
  std::vector<ScalarType> types = float_types();
  types.insert(types.end(), {ScalarType::Int32, ScalarType::UInt8, ScalarType::Int64});
  for (ScalarType dt : types) {
    for (const DimCase& c : dim_cases()) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " dims=" << shape_str(c.dims));
      Tensor x = random_tensor({3, 4, 5}, dt, 21, dt == ScalarType::UInt8 ? 0 : -50, 50, true);
      const Groups g = group_rows(x, c.dims, c.keepdim);
      Tensor mx = ops::amax(x, c.dims, c.keepdim);
      EXPECT_EQ(mx.dtype(), dt);
      EXPECT_TRUE(close(mx, map_rows(g, ref_max), g.shape, {0, 0}));
      EXPECT_TRUE(close(ops::amin(x, c.dims, c.keepdim), map_rows(g, ref_min), g.shape, {0, 0}));
    }
  }
  Tensor b = from({0, 1, 0, 0}, {2, 2}, ScalarType::Bool);
  EXPECT_TRUE(close(ops::amax(b, V{1}), {1, 0}, {2}, {0, 0}));
  EXPECT_TRUE(close(ops::max(b), {1}, {}, {0, 0}));
}

TEST(Reduction, MaxMinDimReturnFirstIndexOfExtreme) {
  for (ScalarType dt : {ScalarType::Float32, ScalarType::Float64, ScalarType::Float16,
                        ScalarType::BFloat16, ScalarType::Int64}) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(dt) << " dim=" << dim << " keepdim=" << keepdim);
        // Integers in [-3, 3] make ties common, so "first index" is really tested.
        Tensor x = random_tensor({6, 7}, dt, 31 + dim, -3, 3, true);
        const Groups g = group_rows(x, {dim}, keepdim);
        auto r = ops::max_dim(x, dim, keepdim);
        auto q = ops::min_dim(x, dim, keepdim);
        EXPECT_TRUE(close(r.tensor(0), map_rows(g, ref_max), g.shape, {0, 0}));
        EXPECT_TRUE(close(r.tensor(1), map_rows(g, ref_argmax), g.shape, {0, 0}));
        EXPECT_EQ(r.tensor(1).dtype(), ScalarType::Int64);
        EXPECT_TRUE(close(q.tensor(1), map_rows(g, ref_argmin), g.shape, {0, 0}));
        EXPECT_TRUE(close(ops::argmax(x, dim, keepdim), values(r.tensor(1)), g.shape, {0, 0}));
        EXPECT_TRUE(close(ops::argmin(x, dim, keepdim), values(q.tensor(1)), g.shape, {0, 0}));
      }
    }
  }
}

TEST(Reduction, FullMaxMinAndFlatArgmax) {
  for (ScalarType dt : float_types()) {
    Tensor x = random_tensor({5, 6}, dt, 41, -3, 3, true);
    const D v = values(x);
    const auto mx = std::max_element(v.begin(), v.end());
    const auto mn = std::min_element(v.begin(), v.end());
    EXPECT_TRUE(close(ops::max(x), {*mx}, {}, {0, 0}));
    EXPECT_TRUE(close(ops::min(x), {*mn}, {}, {0, 0}));
    // dim=None: the index into the row-major flattening, even for a transposed input.
    EXPECT_TRUE(close(ops::argmax(x), {double(mx - v.begin())}, {}, {0, 0}));
    EXPECT_TRUE(
        close(ops::argmin(x, std::nullopt, true), {double(mn - v.begin())}, {1, 1}, {0, 0}));
  }
}

TEST(Reduction, NaNIsTheExtremeAndItsFirstIndexWins) {
  for (ScalarType dt : float_types()) {
    Tensor x = from({1, kNaN, 3, kNaN, 0, 2, 5, 4}, {2, 4}, dt);
    auto r = ops::max_dim(x, 1);
    EXPECT_TRUE(close(r.tensor(0), {kNaN, 5}, {2}, {0, 0}));
    EXPECT_TRUE(close(r.tensor(1), {1, 2}, {2}, {0, 0}));
    auto q = ops::min_dim(x, 1);
    EXPECT_TRUE(close(q.tensor(0), {kNaN, 0}, {2}, {0, 0}));
    EXPECT_TRUE(close(q.tensor(1), {1, 0}, {2}, {0, 0}));
    EXPECT_TRUE(close(ops::argmax(x), {1}, {}, {0, 0}));
    EXPECT_TRUE(close(ops::amin(x, V{0}), {0, kNaN, 3, kNaN}, {4}, {0, 0}));
    EXPECT_TRUE(close(ops::max(x), {kNaN}, {}, {0, 0}));
    EXPECT_TRUE(close(ops::sum_dim_IntList(x, V{1}), {kNaN, 11}, {2}, {0, 0}));
  }
}

// --- cumsum, cumprod ---------------------------------------------------------------------------

D ref_scan(const Tensor& x, int64_t dim, bool prod) {
  const V shape = shape_of(x);
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t d = nd ? (dim + nd) % nd : 0;
  const D v = values(x);
  D out(v.size());
  const V strides = [&] {
    V s(shape.size(), 1);
    for (int64_t i = nd - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
    return s;
  }();
  testing::for_each_index(shape, [&](const V& idx, int64_t lin) {
    long double acc = prod ? 1 : 0;
    for (int64_t j = 0; j <= idx[d]; ++j) {
      const double e = v[static_cast<size_t>(lin + (j - idx[d]) * strides[d])];
      acc = prod ? acc * e : acc + e;
    }
    out[static_cast<size_t>(lin)] = static_cast<double>(acc);
  });
  return out;
}

TEST(Reduction, CumsumCumprod) {
  for (ScalarType dt : float_types()) {
    for (bool nc : {false, true}) {
      for (int64_t dim : {0, 1, 2, -1}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " dim=" << dim << " nc=" << nc);
        Tensor x = random_tensor({3, 4, 5}, dt, 51, -2, 2, nc);
        EXPECT_TRUE(close(ops::cumsum(x, dim), ref_scan(x, dim, false), {3, 4, 5}, tol_for(dt)));
        Tensor y = random_tensor({3, 4, 5}, dt, 52, 0.5, 1.5, nc);
        EXPECT_TRUE(close(ops::cumprod(y, dim), ref_scan(y, dim, true), {3, 4, 5}, tol_for(dt)));
      }
    }
  }
  Tensor xi = random_tensor({4, 5}, ScalarType::Int8, 53, -4, 4, true);
  Tensor ci = ops::cumsum(xi, 1);
  EXPECT_EQ(ci.dtype(), ScalarType::Int64);
  EXPECT_TRUE(close(ci, ref_scan(xi, 1, false), {4, 5}, {0, 0}));
  Tensor pi = ops::cumprod(xi, 0);
  EXPECT_EQ(pi.dtype(), ScalarType::Int64);
  EXPECT_TRUE(close(pi, ref_scan(xi, 0, true), {4, 5}, {0, 0}));
  Tensor cf = ops::cumsum(xi, 0, ScalarType::Float32);
  EXPECT_EQ(cf.dtype(), ScalarType::Float32);
  EXPECT_TRUE(close(cf, ref_scan(xi, 0, false), {4, 5}, {0, 0}));
}

// --- logsumexp, var, std, norm ------------------------------------------------------------------

TEST(Reduction, Logsumexp) {
  for (ScalarType dt : float_types()) {
    for (const DimCase& c : dim_cases()) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " dims=" << shape_str(c.dims));
      Tensor x = random_tensor({3, 4, 5}, dt, 61, -3, 3, true);
      const Groups g = group_rows(x, c.dims, c.keepdim);
      EXPECT_TRUE(close(ops::logsumexp(x, c.dims, c.keepdim), map_rows(g, ref_logsumexp), g.shape,
                        tol_for(dt)));
    }
  }
  // Stable for large inputs; all -inf gives -inf, +inf gives inf, NaN propagates.
  Tensor x = from({1000, 1000, -kInf, -kInf, kInf, 1, kNaN, 1}, {4, 2});
  EXPECT_TRUE(close(ops::logsumexp(x, V{1}), {1000 + std::log(2.0), -kInf, kInf, kNaN}, {4},
                    tol_for(ScalarType::Float32)));
  Tensor xi = from({1, 2, 3}, {3}, ScalarType::Int64);
  Tensor li = ops::logsumexp(xi, V{0});
  EXPECT_EQ(li.dtype(), ScalarType::Float32);
  EXPECT_TRUE(close(li, {std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0))}, {},
                    tol_for(ScalarType::Float32)));
}

TEST(Reduction, VarStd) {
  for (ScalarType dt : float_types()) {
    for (const DimCase& c : dim_cases()) {
      for (bool unbiased : {true, false}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " dims=" << shape_str(c.dims)
                                          << " unbiased=" << unbiased);
        Tensor x = random_tensor({3, 4, 5}, dt, 71, -2, 2, true);
        const Groups g = group_rows(x, c.dims, c.keepdim);
        const D var = map_rows(g, [&](const D& r) { return ref_var(r, unbiased); });
        D sd = var;
        for (double& v : sd) v = std::sqrt(v);
        EXPECT_TRUE(close(ops::var_dim(x, c.dims, unbiased, c.keepdim), var, g.shape, tol_for(dt)));
        EXPECT_TRUE(close(ops::std_dim(x, c.dims, unbiased, c.keepdim), sd, g.shape, tol_for(dt)));
      }
    }
    Tensor x = random_tensor({4, 6}, dt, 72);
    EXPECT_TRUE(close(ops::var(x), {ref_var(values(x), 1)}, {}, tol_for(dt)));
    EXPECT_TRUE(close(ops::std(x, false), {std::sqrt(ref_var(values(x), 0))}, {}, tol_for(dt)));
    const Groups g = group_rows(x, {1}, true);
    EXPECT_TRUE(close(ops::var_correction(x, V{1}, Scalar(2.0), true),
                      map_rows(g, [](const D& r) { return ref_var(r, 2); }), g.shape, tol_for(dt)));
    EXPECT_TRUE(close(ops::std_correction(x), {std::sqrt(ref_var(values(x), 1))}, {}, tol_for(dt)));
  }
  // One element with correction 1: 0 / 0 = nan; too large a correction: m2 / 0 = inf (torch).
  EXPECT_TRUE(close(ops::var(from({3}, {1})), {kNaN}, {}, {0, 0}));
  EXPECT_TRUE(close(ops::var_correction(from({1, 2}, {2}), std::nullopt, Scalar(int64_t{3})),
                    {kInf}, {}, {0, 0}));
}

TEST(Reduction, Norm) {
  const std::vector<double> ords = {2, 1, 0, 3, 0.5, -1, kInf, -kInf};
  for (ScalarType dt : float_types()) {
    for (double p : ords) {
      for (const DimCase& c : dim_cases()) {
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(dt) << " p=" << p << " dims=" << shape_str(c.dims));
        Tensor x = random_tensor({3, 4, 5}, dt, 81, -2, 2, true);
        if (p == 0) x.select(0, 1).fill_(Scalar(0.0));  // some zeros to count
        const Groups g = group_rows(x, c.dims, c.keepdim);
        const D want = map_rows(g, [&](const D& r) {
          long double acc = p == -kInf ? kInf : 0;
          for (double v : r) {
            const long double a = std::fabs(v);
            if (p == kInf)
              acc = std::max(acc, a);
            else if (p == -kInf)
              acc = std::min(acc, a);
            else if (p == 0)
              acc += a != 0;
            else
              acc += std::pow(a, static_cast<long double>(p));
          }
          return std::isinf(p) || p == 0 ? static_cast<double>(acc)
                                         : static_cast<double>(std::pow(acc, 1.0L / p));
        });
        EXPECT_TRUE(
            close(ops::norm_ScalarOpt_dim(x, p, c.dims, c.keepdim), want, g.shape, tol_for(dt)));
      }
    }
    Tensor x = random_tensor({4, 6}, dt, 82);
    long double ss = 0;
    for (double v : values(x)) ss += v * v;
    const double l2 = static_cast<double>(std::sqrt(ss));
    EXPECT_TRUE(close(ops::norm_Scalar(x), {l2}, {}, tol_for(dt)));
    EXPECT_TRUE(close(ops::norm_ScalarOpt_dim(x, std::nullopt, V{0, 1}), {l2}, {}, tol_for(dt)));
    // The *_dtype overloads (autocast's fp32_append_dtype target) compute in and return dtype.
    Tensor nf = ops::norm_ScalarOpt_dtype(x, 2.0, ScalarType::Float32);
    EXPECT_EQ(nf.dtype(), ScalarType::Float32);
    EXPECT_TRUE(close(nf, {l2}, {}, tol_for(ScalarType::Float32)));
    Tensor nd = ops::norm_ScalarOpt_dim_dtype(x, 2.0, V{1}, true, ScalarType::Float64);
    EXPECT_EQ(shape_of(nd), (V{4, 1}));
    EXPECT_EQ(nd.dtype(), ScalarType::Float64);
  }
  EXPECT_TRUE(close(ops::norm_ScalarOpt_dim(from({kNaN, 1}, {2}), kInf, V{0}), {kNaN}, {}, {0, 0}));
}

// --- softmax, log_softmax -----------------------------------------------------------------------

// Reference softmax / log_softmax along `dim`: exp(x) / sum(exp(x)) in long double (the test
// inputs are small, so no shift is needed).
D ref_softmax(const Tensor& x, int64_t dim, bool log) {
  const V shape = shape_of(x);
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t d = (dim + nd) % nd;
  const D v = values(x);
  V strides(shape.size(), 1);
  for (int64_t i = nd - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
  D out(v.size());
  testing::for_each_index(shape, [&](const V& idx, int64_t lin) {
    const int64_t base = lin - idx[d] * strides[d];
    long double s = 0;
    for (int64_t j = 0; j < shape[d]; ++j)
      s += std::exp(static_cast<long double>(v[base + j * strides[d]]));
    out[lin] = log ? static_cast<double>(v[lin] - std::log(s))
                   : static_cast<double>(std::exp(static_cast<long double>(v[lin])) / s);
  });
  return out;
}

TEST(Softmax, SoftmaxAndLogSoftmaxAlongEachDim) {
  for (ScalarType dt : float_types()) {
    for (bool nc : {false, true}) {
      for (int64_t dim : {0, 1, 2, -1, -3}) {
        SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " dim=" << dim << " nc=" << nc);
        Tensor x = random_tensor({3, 4, 5}, dt, 91, -4, 4, nc);
        EXPECT_TRUE(
            close(ops::softmax_int(x, dim), ref_softmax(x, dim, false), {3, 4, 5}, tol_for(dt)));
        EXPECT_TRUE(
            close(ops::log_softmax_int(x, dim), ref_softmax(x, dim, true), {3, 4, 5}, tol_for(dt)));
      }
    }
  }
}

TEST(Softmax, DtypeZeroDimAndSpecialValues) {
  Tensor h = random_tensor({2, 3}, ScalarType::Float16, 92);
  Tensor s = ops::softmax_int(h, 1, ScalarType::Float32);
  EXPECT_EQ(s.dtype(), ScalarType::Float32);
  const D hv = values(h);
  D want;
  for (int r = 0; r < 2; ++r) {
    double z = 0;
    for (int c = 0; c < 3; ++c) z += std::exp(hv[r * 3 + c]);
    for (int c = 0; c < 3; ++c) want.push_back(std::exp(hv[r * 3 + c]) / z);
  }
  EXPECT_TRUE(close(s, want, {2, 3}, tol_for(ScalarType::Float32)));
  EXPECT_EQ(Tensor(ops::log_softmax_int(h, 0, ScalarType::Float64)).dtype(), ScalarType::Float64);
  // Integer input with a floating dtype is cast first.
  Tensor si = ops::softmax_int(from({0, 0}, {2}, ScalarType::Int64), 0, ScalarType::Float32);
  EXPECT_TRUE(close(si, {0.5, 0.5}, {2}, {0, 0}));
  // 0-dim: softmax 1, log_softmax 0.
  EXPECT_TRUE(close(ops::softmax_int(from({3}, {}), 0), {1}, {}, {0, 0}));
  EXPECT_TRUE(close(ops::log_softmax_int(from({3}, {}), -1), {0}, {}, {0, 0}));
  // Stable for large inputs; a row of -inf is nan (torch); -inf entries get probability 0.
  Tensor x = from({1000, 1000, -kInf, -kInf, -kInf, 0}, {3, 2});
  EXPECT_TRUE(close(ops::softmax_int(x, 1), {0.5, 0.5, kNaN, kNaN, 0, 1}, {3, 2}, {0, 0}));
  EXPECT_TRUE(close(ops::log_softmax_int(x, 1),
                    {-std::log(2.0), -std::log(2.0), kNaN, kNaN, -kInf, 0}, {3, 2},
                    tol_for(ScalarType::Float32)));
}

// --- boxed calls and errors ---------------------------------------------------------------------

TEST(Reduction, BoxedCallsBindIntListsAndKeywords) {
  Tensor x = random_tensor({3, 4}, ScalarType::Float32, 101);
  // int[1] accepts a single int, as in torch.
  Tensor s = call_op("aten::sum.dim_IntList", {x, IValue(int64_t{1})}, {{"keepdim", IValue(true)}});
  EXPECT_EQ(shape_of(s), (V{3, 1}));
  Tensor m = call_op("aten::mean.dim", {x, IValue(V{0})}, {{"dtype", IValue(ScalarType::Float64)}});
  EXPECT_EQ(m.dtype(), ScalarType::Float64);
  OpResult r = call_op("aten::max.dim", {x, IValue(int64_t{0})});
  EXPECT_EQ(r.size(), 2u);
  EXPECT_EQ(op_entry(OpId::max_dim).schema.returns[1].name, "indices");
}

TEST(Reduction, ErrorsMatchTorch) {
  Tensor x = random_tensor({2, 3, 4}, ScalarType::Float32, 111);
  expect_error<IndexError>(
      [&] { ops::sum_dim_IntList(x, V{3}); },
      "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  expect_error<IndexError>(
      [&] { ops::softmax_int(x, -4); },
      "Dimension out of range (expected to be in range of [-3, 2], but got -4)");
  expect_error<IndexError>(
      [&] { ops::max_dim(from({1}, {}), 1); },
      "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  expect_error([&] { ops::amax(x, V{0, -3}); }, "dim 0 appears multiple times in the list of dims");
  expect_error([&] { ops::mean(random_tensor({3}, ScalarType::Int64, 1)); },
               "mean(): could not infer output dtype. Input dtype must be either a floating point "
               "or complex dtype. Got: Long");
  expect_error([&] { ops::mean(x, ScalarType::Int32); },
               "mean(): could not infer output dtype. Optional dtype must be either a floating "
               "point or complex dtype. Got: Int");
  Tensor e = Tensor::empty(V{0, 3});
  expect_error([&] { ops::max(e); },
               "max(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
               "reduction dim with the 'dim' argument.");
  expect_error([&] { ops::min(e); }, "min(): Expected reduction dim to be specified");
  expect_error([&] { ops::amax(e); }, "amax(): Expected reduction dim to be specified");
  expect_error<IndexError>([&] { ops::max_dim(e, 0); },
                           "max(): Expected reduction dim 0 to have non-zero size.");
  expect_error<IndexError>([&] { ops::amin(e, V{-2}); },
                           "amin(): Expected reduction dim -2 to have non-zero size.");
  expect_error<IndexError>(
      [&] { ops::argmax(e); },
      "argmax(): Expected reduction dim to be specified for input.numel() == 0.");
  expect_error<IndexError>([&] { ops::argmin(e, 0); },
                           "argmin(): Expected reduction dim 0 to have non-zero size.");
  expect_error(
      [&] {
        ops::argmax(from({1, 0}, {2}, ScalarType::Bool));
      },
      "\"argmax_cpu\" not implemented for 'Bool'");
  expect_error([&] { ops::var(random_tensor({3}, ScalarType::Int32, 1)); },
               "std and var only support floating point and complex dtypes");
  expect_error([&] { ops::norm_Scalar(random_tensor({3}, ScalarType::Int64, 1)); },
               "norm(): input dtype should be either floating point or complex. Got Long instead.");
  expect_error([&] { ops::norm_Scalar(e, kInf); },
               "linalg.vector_norm cannot compute the inf norm on an empty tensor because the "
               "operation does not have an identity");
  expect_error([&] { ops::softmax_int(random_tensor({3}, ScalarType::Int64, 1), 0); },
               "softmax: not implemented for dtype int64");
}

}  // namespace
}  // namespace ampjit
