// Normalization, dropout and cdist (runtime/ops/nn.def) against float64 references written as
// naive loops over the (already rounded) input values, in every floating dtype, with contiguous
// and strided inputs; plus the running-statistics update, dropout's statistics and determinism,
// and the error messages.
#include <gmock/gmock.h>

#include <limits>

#include "runtime/random.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::close;
using testing::float_types;
using ::testing::HasSubstr;
using testing::random_tensor;
using ::testing::ThrowsMessage;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
using Vd = std::vector<double>;

constexpr ScalarType f32 = ScalarType::Float32, f64 = ScalarType::Float64,
                     bf16 = ScalarType::BFloat16;

V shape_of(const Tensor& t) {
  return V(t.sizes().begin(), t.sizes().end());
}

// y[r, j] = (x[r, j] - mean_r) / sqrt(var_r + eps) * w[c(r, j)] + b[c(r, j)] over rows of `len`
// values, with the biased variance; `channel(r, j)` picks the affine parameter.
template <typename Channel>
Vd normalize_rows_ref(const Vd& x, int64_t len, const Vd& w, const Vd& b, double eps,
                      Channel channel) {
  Vd y(x.size());
  for (size_t r = 0; len > 0 && r < x.size() / len; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < len; ++j) mean += x[r * len + j];
    mean /= len;
    for (int64_t j = 0; j < len; ++j) var += (x[r * len + j] - mean) * (x[r * len + j] - mean);
    var /= len;
    for (int64_t j = 0; j < len; ++j) {
      const int64_t c = channel(static_cast<int64_t>(r), j);
      y[r * len + j] = (x[r * len + j] - mean) / std::sqrt(var + eps) * (w.empty() ? 1.0 : w[c]) +
                       (b.empty() ? 0.0 : b[c]);
    }
  }
  return y;
}

// ---- layer_norm --------------------------------------------------------------------------------

TEST(LayerNorm, MatchesReferenceInEveryDtype) {
  struct Case {
    V shape, normalized;
  };
  const std::vector<Case> cases = {
      {{4, 6, 8}, {8}}, {{3, 5, 4}, {5, 4}}, {{7}, {7}}, {{2, 1}, {1}}};
  uint64_t seed = 1;
  for (ScalarType dt : float_types()) {
    for (const Case& c : cases) {
      for (bool noncontig : {false, true}) {
        for (bool affine : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} normalized {} noncontig={} affine={}", dtype_name(dt),
                                   shape_str(c.shape), shape_str(c.normalized), noncontig, affine));
          Tensor x = random_tensor(c.shape, dt, seed++, -3, 3, noncontig);
          Tensor w = affine ? random_tensor(c.normalized, dt, seed++, 0.5, 2) : Tensor();
          Tensor b = affine ? random_tensor(c.normalized, dt, seed++) : Tensor();
          Tensor y = ops::layer_norm(x, c.normalized, w, b, 1e-5);
          EXPECT_EQ(y.dtype(), dt);
          const int64_t len = numel_of(c.normalized);
          Vd want = normalize_rows_ref(values(x), len, affine ? values(w) : Vd{},
                                       affine ? values(b) : Vd{}, 1e-5,
                                       [](int64_t, int64_t j) { return j; });
          EXPECT_TRUE(close(y, want, c.shape, tol_for(dt)));
        }
      }
    }
  }
}

TEST(LayerNorm, LargeMeanKeepsTheVarianceDigits) {
  // float32 values 1e4 + U(-1, 1): a one-pass E[x^2] - E[x]^2 in float would lose every digit.
  Tensor x = ops::add_Scalar(random_tensor({4, 256}, f32, 7, -1, 1), 1e4);
  Tensor y = ops::layer_norm(x, V{256});
  Vd want = normalize_rows_ref(values(x), 256, {}, {}, 1e-5, [](int64_t, int64_t j) { return j; });
  EXPECT_TRUE(close(y, want, {4, 256}, tol_for(f32)));
}

TEST(LayerNorm, DefaultsEmptyInputAndMixedParameterDtype) {
  Tensor x = random_tensor({2, 3}, bf16, 3);
  // float32 weight with a bfloat16 input: the result keeps the input dtype.
  Tensor w = random_tensor({3}, f32, 4);
  Tensor y = ops::layer_norm(x, V{3}, w);
  EXPECT_EQ(y.dtype(), bf16);
  Vd want =
      normalize_rows_ref(values(x), 3, values(w), {}, 1e-5, [](int64_t, int64_t j) { return j; });
  EXPECT_TRUE(close(y, want, {2, 3}, tol_for(bf16)));
  Tensor e = ops::layer_norm(Tensor::empty(V{0, 5}), V{5});
  EXPECT_EQ(shape_of(e), (V{0, 5}));
}

TEST(LayerNorm, ShapeErrors) {
  Tensor x = ops::ones(V{2, 4});
  EXPECT_THAT([&] { ops::layer_norm(x, V{5}); },
              ThrowsMessage<Error>(HasSubstr(
                  "Given normalized_shape=[5], expected input with shape [*, 5], but got input of "
                  "size[2, 4]")));
  EXPECT_THAT(
      [&] {
        ops::layer_norm(x, V{2, 5});
      },
      ThrowsMessage<Error>(HasSubstr("expected input with shape [*, 2, 5]")));
  EXPECT_THAT(
      [&] { ops::layer_norm(x, V{4}, ops::ones(V{3}).tensor()); },
      ThrowsMessage<Error>(HasSubstr(
          "Expected weight to be of same shape as normalized_shape, but got weight of shape "
          "[3] and normalized_shape = [4]")));
  EXPECT_THAT(
      [&] { ops::layer_norm(x, V{}); },
      ThrowsMessage<Error>(HasSubstr("Expected normalized_shape to be at least 1-dimensional")));
  EXPECT_THAT(
      [&] {
        ops::layer_norm(ops::ones(V{2, 4}, ScalarType::Int64), V{4});
      },
      ThrowsMessage<Error>(HasSubstr("layer_norm: not implemented for dtype int64")));
}

// ---- group_norm --------------------------------------------------------------------------------

TEST(GroupNorm, MatchesReferenceInEveryDtype) {
  struct Case {
    V shape;
    int64_t groups;
  };
  // Includes one-channel groups (groups == C), one group, no spatial dims, and one-element groups.
  const std::vector<Case> cases = {
      {{2, 6, 3, 4}, 3}, {{2, 6, 5}, 6}, {{3, 4, 5}, 1}, {{4, 6}, 2}, {{2, 4}, 4}};
  uint64_t seed = 100;
  for (ScalarType dt : float_types()) {
    for (const Case& c : cases) {
      for (bool noncontig : {false, true}) {
        SCOPED_TRACE(fmt::format("{} {} groups={} noncontig={}", dtype_name(dt), shape_str(c.shape),
                                 c.groups, noncontig));
        const int64_t C = c.shape[1];
        const int64_t S = numel_of(c.shape) / (c.shape[0] * C);
        Tensor x = random_tensor(c.shape, dt, seed++, -3, 3, noncontig);
        Tensor w = random_tensor({C}, dt, seed++, 0.5, 2);
        Tensor b = random_tensor({C}, dt, seed++);
        Tensor y = ops::group_norm(x, c.groups, w, b, 1e-5);
        const int64_t Cg = C / c.groups;
        Vd want =
            normalize_rows_ref(values(x), Cg * S, values(w), values(b), 1e-5,
                               [&](int64_t r, int64_t j) { return (r % c.groups) * Cg + j / S; });
        EXPECT_TRUE(close(y, want, c.shape, tol_for(dt)));
      }
    }
  }
}

TEST(GroupNorm, SingleElementGroupsGiveTheBias) {
  // Each group holds one value: x - mean is 0, so y = b exactly.
  Tensor x = random_tensor({3, 4}, f32, 9);
  Tensor b = random_tensor({4}, f32, 10);
  Tensor y = ops::group_norm(x, 4, ops::ones(V{4}).tensor(), b);
  Vd want;
  for (int i = 0; i < 3; ++i)
    for (double v : values(b)) want.push_back(v);
  EXPECT_EQ(values(y), want);
}

TEST(GroupNorm, Errors) {
  EXPECT_THAT(
      [] {
        ops::group_norm(ops::ones(V{2, 6, 4}), 4);
      },
      ThrowsMessage<Error>(
          HasSubstr("Expected number of channels in input to be divisible by num_groups, but got "
                    "input of shape [2, 6, 4] and num_groups=4")));
  EXPECT_THAT(
      [] {
        ops::group_norm(ops::ones(V{2, 6, 4}), 0);
      },
      ThrowsMessage<Error>(HasSubstr("Expected num groups to be greater than 0, got 0")));
  EXPECT_THAT(
      [] {
        ops::group_norm(ops::ones(V{2, 6}), 2, ops::ones(V{5}).tensor());
      },
      ThrowsMessage<Error>(HasSubstr(
          "Expected weight to be a vector of size equal to the number of channels in input, "
          "but got weight of shape [5] and input of shape [2, 6]")));
  EXPECT_THAT([] { ops::group_norm(ops::ones(V{6}), 2); },
              ThrowsMessage<Error>(HasSubstr("Expected at least 2 dimensions for input tensor")));
}

// ---- batch_norm --------------------------------------------------------------------------------

// Per-channel batch mean and biased variance of x with shape [N, C, S...].
void channel_stats(const Vd& x, int64_t N, int64_t C, int64_t S, Vd& mean, Vd& var) {
  mean.assign(C, 0);
  var.assign(C, 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) mean[c] += x[(n * C + c) * S + s];
  for (int64_t c = 0; c < C; ++c) mean[c] /= N * S;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const double d = x[(n * C + c) * S + s] - mean[c];
        var[c] += d * d;
      }
  for (int64_t c = 0; c < C; ++c) var[c] /= N * S;
}

Vd batch_norm_ref(const Vd& x, int64_t N, int64_t C, int64_t S, const Vd& mean, const Vd& var,
                  const Vd& w, const Vd& b, double eps) {
  Vd y(x.size());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t s = 0; s < S; ++s) {
        const int64_t i = (n * C + c) * S + s;
        y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * w[c] + b[c];
      }
  return y;
}

TEST(BatchNorm, InferenceUsesRunningStatistics) {
  uint64_t seed = 200;
  for (ScalarType dt : float_types()) {
    for (V shape : {V{4, 3, 5}, V{6, 2}, V{2, 3, 2, 3}}) {
      for (bool noncontig : {false, true}) {
        SCOPED_TRACE(
            fmt::format("{} {} noncontig={}", dtype_name(dt), shape_str(shape), noncontig));
        const int64_t N = shape[0], C = shape[1], S = numel_of(shape) / (N * C);
        Tensor x = random_tensor(shape, dt, seed++, -3, 3, noncontig);
        Tensor w = random_tensor({C}, dt, seed++, 0.5, 2), b = random_tensor({C}, dt, seed++);
        Tensor rm = random_tensor({C}, f32, seed++), rv = random_tensor({C}, f32, seed++, 0.5, 2);
        const Vd rm0 = values(rm), rv0 = values(rv);
        Tensor y = ops::batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5, true);
        EXPECT_EQ(y.dtype(), dt);
        Vd want = batch_norm_ref(values(x), N, C, S, rm0, rv0, values(w), values(b), 1e-5);
        EXPECT_TRUE(close(y, want, shape, tol_for(dt)));
        EXPECT_EQ(values(rm), rm0);  // untouched in evaluation mode
        EXPECT_EQ(values(rv), rv0);
      }
    }
  }
}

TEST(BatchNorm, TrainingUsesBatchStatisticsAndUpdatesRunningStats) {
  uint64_t seed = 300;
  const double momentum = 0.3;
  for (ScalarType dt : float_types()) {
    for (V shape : {V{4, 3, 5}, V{6, 2}, V{2, 3, 2, 3}}) {
      for (bool noncontig : {false, true}) {
        SCOPED_TRACE(
            fmt::format("{} {} noncontig={}", dtype_name(dt), shape_str(shape), noncontig));
        const int64_t N = shape[0], C = shape[1], S = numel_of(shape) / (N * C);
        Tensor x = random_tensor(shape, dt, seed++, -3, 3, noncontig);
        Tensor w = random_tensor({C}, dt, seed++, 0.5, 2), b = random_tensor({C}, dt, seed++);
        // float32 running statistics with any input dtype (torch's mixed-type batch_norm).
        Tensor rm = random_tensor({C}, f32, seed++), rv = random_tensor({C}, f32, seed++, 0.5, 2);
        const Vd rm0 = values(rm), rv0 = values(rv);
        Tensor y = ops::batch_norm(x, w, b, rm, rv, true, momentum, 1e-5, true);
        Vd mean, var;
        channel_stats(values(x), N, C, S, mean, var);
        EXPECT_TRUE(close(y,
                          batch_norm_ref(values(x), N, C, S, mean, var, values(w), values(b), 1e-5),
                          shape, tol_for(dt)));
        Vd want_rm(C), want_rv(C);
        const double n = static_cast<double>(N * S);
        for (int64_t c = 0; c < C; ++c) {
          want_rm[c] = (1 - momentum) * rm0[c] + momentum * mean[c];
          want_rv[c] = (1 - momentum) * rv0[c] + momentum * var[c] * n / (n - 1);  // unbiased
        }
        EXPECT_TRUE(close(rm, want_rm, {C}, tol_for(f32)));
        EXPECT_TRUE(close(rv, want_rv, {C}, tol_for(f32)));
      }
    }
  }
}

TEST(BatchNorm, TrainingWithoutRunningStatsOrAffine) {
  Tensor x = random_tensor({5, 2, 3}, f64, 400, -3, 3, true);
  Tensor y = ops::batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5, false);
  Vd mean, var;
  channel_stats(values(x), 5, 2, 3, mean, var);
  EXPECT_TRUE(close(y, batch_norm_ref(values(x), 5, 2, 3, mean, var, {1, 1}, {0, 0}, 1e-5),
                    {5, 2, 3}, tol_for(f64)));
  // float64 running stats are updated in place, through a strided view too.
  Tensor parent = ops::zeros(V{4}, f64);
  Tensor rm = parent.slice(0, 0, std::nullopt, 2);
  ops::batch_norm(x, Tensor(), Tensor(), rm, Tensor(), true, 1.0, 1e-5, false);
  EXPECT_TRUE(close(parent, {mean[0], 0, mean[1], 0}, {4}, tol_for(f64)));
  // An empty batch is returned as is (a copy) and leaves the statistics alone.
  Tensor e = ops::batch_norm(Tensor::empty(V{0, 2}), Tensor(), Tensor(), rm, Tensor(), true, 1.0,
                             1e-5, false);
  EXPECT_EQ(shape_of(e), (V{0, 2}));
  EXPECT_TRUE(close(parent, {mean[0], 0, mean[1], 0}, {4}, tol_for(f64)));
}

TEST(BatchNorm, Errors) {
  Tensor x = ops::ones(V{4, 3});
  EXPECT_THAT(
      [&] { ops::batch_norm(x, Tensor(), Tensor(), Tensor(), Tensor(), false, 0.1, 1e-5, true); },
      ThrowsMessage<Error>(HasSubstr("running_mean must be defined in evaluation mode")));
  EXPECT_THAT(
      [&] {
        ops::batch_norm(x, Tensor(), Tensor(), ops::zeros(V{4}).tensor(), ops::ones(V{3}).tensor(),
                        false, 0.1, 1e-5, true);
      },
      ThrowsMessage<Error>(HasSubstr("running_mean should contain 3 elements not 4")));
  EXPECT_THAT(
      [&] {
        ops::batch_norm(ops::ones(V{1, 3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5,
                        true);
      },
      ThrowsMessage<ValueError>(HasSubstr(
          "Expected more than 1 value per channel when training, got input size [1, 3]")));
  EXPECT_THAT(
      [&] {
        ops::batch_norm(ops::ones(V{3}), Tensor(), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5,
                        true);
      },
      ThrowsMessage<Error>(HasSubstr("expected an input of at least 2 dimensions")));
}

// ---- dropout -----------------------------------------------------------------------------------

// 1 / (1 - p) computed in the dtype's op-math type and rounded to the dtype, as torch's noise is.
double dropout_scale(double p, ScalarType dt) {
  if (dt == f64) return 1.0 / (1.0 - p);
  return testing::round_to(static_cast<double>(1.0f / static_cast<float>(1.0 - p)), dt);
}

// Each value rounded to `dt` (one conversion for the whole vector).
Vd round_all(const Vd& v, ScalarType dt) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, f64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return values(t.to(dt));
}

TEST(Dropout, IdentityWhenNotTrainingOrPZero) {
  Tensor x = random_tensor({3, 4}, f32, 500, -2, 2, true);
  Tensor a = ops::dropout(x, 0.5, false);
  Tensor b = ops::dropout(x, 0.0, true);
  // torch returns the input itself.
  EXPECT_TRUE(a.is_same(x));
  EXPECT_TRUE(b.is_same(x));
  Tensor c = ops::dropout_(x, 0.5, false);
  EXPECT_TRUE(c.is_same(x));
}

TEST(Dropout, POneGivesZeros) {
  for (ScalarType dt : float_types()) {
    Tensor x = random_tensor({5, 7}, dt, 501, -2, 2, true);
    Tensor y = ops::dropout(x, 1.0, true);
    EXPECT_EQ(values(y), Vd(35, 0.0)) << dtype_name(dt);
    EXPECT_EQ(y.dtype(), dt);
  }
}

TEST(Dropout, MaskStatisticsAndExactScaling) {
  const int64_t n = 30000;  // below kParallelGrain: one thread, fast on a busy machine
  for (ScalarType dt : float_types()) {
    for (double p : {0.1, 0.3, 0.75}) {
      SCOPED_TRACE(fmt::format("{} p={}", dtype_name(dt), p));
      Tensor x = random_tensor({n / 100, 100}, dt, 502, 0.5, 2, true);  // nonzero inputs
      manual_seed(1234);
      Tensor y = ops::dropout(x, p, true);
      const Vd xv = values(x), yv = values(y);
      const double scale = dropout_scale(p, dt);
      Vd scaled(n);
      for (int64_t i = 0; i < n; ++i) scaled[i] = xv[i] * scale;  // exact in double
      scaled = round_all(scaled, dt);
      int64_t zeros = 0, bad = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (yv[i] == 0)
          ++zeros;
        else if (yv[i] != scaled[i])
          ++bad;
      }
      EXPECT_EQ(bad, 0);
      // Binomial(n, p): 6 standard deviations.
      EXPECT_NEAR(static_cast<double>(zeros) / n, p, 6 * std::sqrt(p * (1 - p) / n));
      // Deterministic per seed; another seed gives another mask.
      manual_seed(1234);
      EXPECT_EQ(values(ops::dropout(x, p, true)), yv);
      manual_seed(4321);
      EXPECT_NE(values(ops::dropout(x, p, true)), yv);
    }
  }
}

TEST(Dropout, InPlaceMatchesOutOfPlace) {
  for (bool noncontig : {false, true}) {
    Tensor x = random_tensor({20, 30}, f32, 503, 0.5, 2, noncontig);
    manual_seed(7);
    const Vd want = values(ops::dropout(x, 0.4, true));
    manual_seed(7);
    Tensor r = ops::dropout_(x, 0.4, true);
    EXPECT_TRUE(r.is_same(x));
    EXPECT_EQ(values(x), want) << "noncontig=" << noncontig;
  }
}

TEST(Dropout, Errors) {
  Tensor x = ops::ones(V{4});
  EXPECT_THAT([&] { ops::dropout(x, 1.5, true); },
              ThrowsMessage<Error>(
                  HasSubstr("dropout probability has to be between 0 and 1, but got 1.5")));
  EXPECT_THAT([&] { ops::dropout_(x, -0.1, false); },
              ThrowsMessage<Error>(
                  HasSubstr("dropout probability has to be between 0 and 1, but got -0.1")));
  EXPECT_THAT([&] { ops::dropout(ops::ones(V{4}, ScalarType::Int64), 0.5, true); },
              ThrowsMessage<Error>(HasSubstr("dropout: not implemented for dtype int64")));
}

// ---- cdist -------------------------------------------------------------------------------------

double pdist_ref(const Vd& a, int64_t ia, const Vd& b, int64_t ib, int64_t m, double p) {
  double r = 0;
  for (int64_t k = 0; k < m; ++k) {
    const double d = std::fabs(a[ia * m + k] - b[ib * m + k]);
    if (p == 0)
      r += d != 0;
    else if (std::isinf(p))
      r = std::max(r, d);
    else
      r += std::pow(d, p);
  }
  return p == 0 || std::isinf(p) ? r : std::pow(r, 1 / p);
}

TEST(Cdist, MatchesReferenceForEveryP) {
  const double inf = std::numeric_limits<double>::infinity();
  uint64_t seed = 600;
  for (ScalarType dt : float_types()) {
    for (double p : {0.0, 1.0, 2.0, inf, 0.5, 3.0}) {
      for (bool noncontig : {false, true}) {
        SCOPED_TRACE(fmt::format("{} p={} noncontig={}", dtype_name(dt), p, noncontig));
        // Batched, with x2's batch dim broadcast.
        Tensor x1 = random_tensor({2, 5, 3}, dt, seed++, -2, 2, noncontig);
        Tensor x2 = random_tensor({1, 4, 3}, dt, seed++, -2, 2, noncontig);
        if (p == 0) x2.select(1, 0).copy_(x1.select(0, 0).select(0, 1));  // some zero distances
        Tensor y = ops::cdist(x1, x2, p);
        const Vd a = values(x1), b = values(x2);
        Vd want;
        for (int64_t bi = 0; bi < 2; ++bi)
          for (int64_t i = 0; i < 5; ++i)
            for (int64_t j = 0; j < 4; ++j) want.push_back(pdist_ref(a, bi * 5 + i, b, j, 3, p));
        EXPECT_TRUE(close(y, want, {2, 5, 4}, tol_for(dt)));
      }
    }
  }
}

TEST(Cdist, UnbatchedComputeModesAndEmpty) {
  Tensor x1 = random_tensor({30, 8}, f64, 700), x2 = random_tensor({27, 8}, f64, 701);
  Vd want;
  for (int64_t i = 0; i < 30; ++i)
    for (int64_t j = 0; j < 27; ++j) want.push_back(pdist_ref(values(x1), i, values(x2), j, 8, 2));
  for (int64_t mode : {0, 1, 2})
    EXPECT_TRUE(close(ops::cdist(x1, x2, 2.0, mode), want, {30, 27}, tol_for(f64)));
  EXPECT_TRUE(close(ops::cdist(x1, x2), want, {30, 27}, tol_for(f64)));
  EXPECT_EQ(shape_of(ops::cdist(Tensor::empty(V{0, 3}), Tensor::empty(V{4, 3}))), (V{0, 4}));
  // No columns: every distance is 0.
  EXPECT_EQ(values(ops::cdist(Tensor::empty(V{2, 0}), Tensor::empty(V{3, 0}))), Vd(6, 0.0));
}

TEST(Cdist, Errors) {
  EXPECT_THAT(
      [] {
        ops::cdist(ops::ones(V{3, 2}), ops::ones(V{3, 4}));
      },
      ThrowsMessage<Error>(
          HasSubstr("X1 and X2 must have the same number of columns. X1: 2 X2: 4")));
  EXPECT_THAT(
      [] {
        ops::cdist(ops::ones(V{3}), ops::ones(V{3, 4}));
      },
      ThrowsMessage<Error>(HasSubstr("cdist only supports at least 2D tensors, X1 got: 1D")));
  EXPECT_THAT(
      [] {
        ops::cdist(ops::ones(V{3, 2}, ScalarType::Int64), ops::ones(V{3, 2}));
      },
      ThrowsMessage<Error>(HasSubstr("cdist only supports floating-point dtypes, X1 got: int64")));
  EXPECT_THAT(
      [] {
        ops::cdist(ops::ones(V{3, 2}), ops::ones(V{3, 2}), -1.0);
      },
      ThrowsMessage<Error>(HasSubstr("cdist only supports non-negative p values")));
  EXPECT_THAT(
      [] {
        ops::cdist(ops::ones(V{3, 2}), ops::ones(V{3, 2}), 2.0, 3);
      },
      ThrowsMessage<Error>(HasSubstr("possible modes: None, 1, 2, but was: 3")));
}

}  // namespace
}  // namespace ampjit
