// Losses against float64 references computed here with naive loops, in every floating dtype,
// for each reduction (0 none, 1 mean, 2 sum), with weights, ignore_index, label smoothing,
// (C), (N, C) and (N, C, d1, d2) inputs; plus torch's error messages.
//
// Tolerances: tol_for(dtype). The references use the unrounded elementwise losses; the kernels
// round each element once (as torch's loss tensor is) and reduce in double, and since these
// losses are non-negative, rounding the elements moves a mean or sum by at most the per-element
// relative error, which tol_for already allows.
#include <gmock/gmock.h>

#include <limits>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::close;
using testing::float_types;
using ::testing::HasSubstr;
using testing::random_tensor;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
using D = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor from(const D& v, const V& shape, ScalarType dt = ScalarType::Float32) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.view(shape).to(dt);
}

template <typename Exc = Error, typename F>
void expect_error(F f, const std::string& msg) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing: " << msg;
  } catch (const Exc& e) {
    EXPECT_THAT(e.what(), HasSubstr(msg));
  }
}

// The reduced reference of elementwise losses `l` (shape `shape`): none, mean or sum.
D reduce_ref(const D& l, int64_t reduction, V& shape) {
  if (reduction == 0) return l;
  long double s = 0;
  for (double v : l) s += v;
  shape = {};
  return {static_cast<double>(reduction == 1 ? s / static_cast<long double>(l.size()) : s)};
}

// --- pointwise losses ---------------------------------------------------------------------------

TEST(Loss, MseAndL1) {
  for (ScalarType dt : float_types()) {
    for (int64_t red : {0, 1, 2}) {
      for (bool nc : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(dt) << " reduction=" << red << " nc=" << nc);
        Tensor x = random_tensor({5, 6}, dt, 1, -2, 2, nc);
        Tensor y = random_tensor({5, 6}, dt, 2, -2, 2, nc);
        const D xv = values(x), yv = values(y);
        D se, ae;
        for (size_t i = 0; i < xv.size(); ++i) {
          se.push_back((xv[i] - yv[i]) * (xv[i] - yv[i]));
          ae.push_back(std::fabs(xv[i] - yv[i]));
        }
        V s1 = {5, 6}, s2 = {5, 6};
        const D want_se = reduce_ref(se, red, s1), want_ae = reduce_ref(ae, red, s2);
        Tensor m = ops::mse_loss(x, y, red);
        EXPECT_EQ(m.dtype(), dt);
        EXPECT_TRUE(close(m, want_se, s1, tol_for(dt)));
        EXPECT_TRUE(close(ops::l1_loss(x, y, red), want_ae, s2, tol_for(dt)));
      }
    }
  }
  // Broadcasting and promotion: float16 [4, 3] against float32 [3] computes in float32.
  Tensor x = random_tensor({4, 3}, ScalarType::Float16, 3);
  Tensor y = random_tensor({3}, ScalarType::Float32, 4);
  Tensor m = ops::mse_loss(x, y, 0);
  EXPECT_EQ(m.dtype(), ScalarType::Float32);
  D want;
  for (int i = 0; i < 12; ++i) want.push_back(std::pow(values(x)[i] - values(y)[i % 3], 2));
  EXPECT_TRUE(close(m, want, {4, 3}, tol_for(ScalarType::Float32)));
  // l1_loss of integers: fine unreduced and summed (int64), an error in mean (as torch).
  Tensor xi = from({1, -4, 7}, {3}, ScalarType::Int32),
         yi = from({3, 2, 1}, {3}, ScalarType::Int32);
  Tensor li = ops::l1_loss(xi, yi, 0);
  EXPECT_EQ(li.dtype(), ScalarType::Int32);
  EXPECT_TRUE(close(li, {2, 6, 6}, {3}, {0, 0}));
  Tensor ls = ops::l1_loss(xi, yi, 2);
  EXPECT_EQ(ls.dtype(), ScalarType::Int64);
  EXPECT_TRUE(close(ls, {14}, {}, {0, 0}));
  expect_error([&] { ops::l1_loss(xi, yi); }, "mean(): could not infer output dtype");
}

TEST(Loss, BinaryCrossEntropy) {
  for (ScalarType dt : float_types()) {
    for (int64_t red : {0, 1, 2}) {
      for (bool weighted : {false, true}) {
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(dt) << " reduction=" << red << " w=" << weighted);
        Tensor x = random_tensor({4, 5}, dt, 11, 0.01, 0.99, true);
        Tensor t = random_tensor({4, 5}, dt, 12, 0, 1);
        Tensor w = random_tensor({5}, dt, 13, 0.5, 2);
        const D xv = values(x), tv = values(t), wv = values(w);
        D l;
        for (size_t i = 0; i < xv.size(); ++i) {
          const double wi = weighted ? wv[i % 5] : 1.0;
          l.push_back(-wi * (tv[i] * std::log(xv[i]) + (1 - tv[i]) * std::log(1 - xv[i])));
        }
        V shape = {4, 5};
        const D want = reduce_ref(l, red, shape);
        Tensor got = weighted ? ops::binary_cross_entropy(x, t, w, red)
                              : ops::binary_cross_entropy(x, t, std::nullopt, red);
        EXPECT_TRUE(close(got, want, shape, tol_for(dt)));
      }
    }
  }
  // Both logs clamp at -100: confident wrong answers cost 100, confident right ones 0.
  Tensor x = from({0, 1, 0, 1}, {4});
  Tensor t = from({1, 0, 0, 1}, {4});
  EXPECT_TRUE(
      close(ops::binary_cross_entropy(x, t, std::nullopt, 0), {100, 100, 0, 0}, {4}, {0, 0}));
  expect_error(
      [&] {
        ops::binary_cross_entropy(from({0.5, 1.5}, {2}), from({0, 1}, {2}));
      },
      "all elements of input should be between 0 and 1");
  expect_error([&] { ops::binary_cross_entropy(from({kNaN}, {1}), from({0}, {1})); },
               "all elements of input should be between 0 and 1");
}

TEST(Loss, BinaryCrossEntropyWithLogits) {
  for (ScalarType dt : float_types()) {
    for (int64_t red : {0, 1, 2}) {
      for (int weights : {0, 1, 2, 3}) {  // bit 0: weight, bit 1: pos_weight
        SCOPED_TRACE(::testing::Message()
                     << dtype_name(dt) << " reduction=" << red << " weights=" << weights);
        Tensor x = random_tensor({4, 5}, dt, 21, -5, 5, true);
        Tensor t = random_tensor({4, 5}, dt, 22, 0, 1);
        Tensor w = random_tensor({5}, dt, 23, 0.5, 2);
        Tensor pw = random_tensor({5}, dt, 24, 0.5, 3);
        const D xv = values(x), tv = values(t), wv = values(w), pv = values(pw);
        D l;
        for (size_t i = 0; i < xv.size(); ++i) {
          const long double sig = 1 / (1 + std::exp(-static_cast<long double>(xv[i])));
          const double wi = weights & 1 ? wv[i % 5] : 1.0, pi = weights & 2 ? pv[i % 5] : 1.0;
          l.push_back(static_cast<double>(
              -wi * (pi * tv[i] * std::log(sig) + (1 - tv[i]) * std::log(1 - sig))));
        }
        V shape = {4, 5};
        const D want = reduce_ref(l, red, shape);
        Tensor got = ops::binary_cross_entropy_with_logits(
            x, t, weights & 1 ? IValue(w) : IValue(), weights & 2 ? IValue(pw) : IValue(), red);
        EXPECT_TRUE(close(got, want, shape, tol_for(dt)));
      }
    }
  }
  // Stable for large logits (no exp overflow, no log(0)).
  Tensor got = ops::binary_cross_entropy_with_logits(
      from({100, -100, 100}, {3}), from({0, 1, 1}, {3}), std::nullopt, std::nullopt, 0);
  EXPECT_TRUE(close(got, {100, 100, 0}, {3}, tol_for(ScalarType::Float32)));
}

// --- nll_loss, cross_entropy_loss ---------------------------------------------------------------

// Input (N, C, K) values row-major, target per sample (n * K + k), weight per class (empty: none).
struct ClassCase {
  int64_t n, c, k;
  D x, w;
  V target;
};

// torch's nll_loss: -w[t] x[n, t, k]; ignored samples give 0 and no weight; mean divides by the
// summed weights.
D nll_ref(const ClassCase& cc, int64_t reduction, int64_t ignore_index) {
  D l;
  long double total = 0, tw = 0;
  for (int64_t s = 0; s < cc.n * cc.k; ++s) {
    const int64_t t = cc.target[s];
    if (t == ignore_index) {
      l.push_back(0);
      continue;
    }
    const double w = cc.w.empty() ? 1.0 : cc.w[t];
    const double v = -w * cc.x[((s / cc.k) * cc.c + t) * cc.k + s % cc.k];
    l.push_back(v);
    total += v;
    tw += w;
  }
  if (reduction == 0) return l;
  return {static_cast<double>(reduction == 1 ? total / tw : total)};
}

// log_softmax over the class dim, in long double.
D log_softmax_ref(const ClassCase& cc) {
  D out(cc.x.size());
  for (int64_t s = 0; s < cc.n * cc.k; ++s) {
    const int64_t base = (s / cc.k) * cc.c * cc.k + s % cc.k;
    long double z = 0;
    for (int64_t c = 0; c < cc.c; ++c)
      z += std::exp(static_cast<long double>(cc.x[base + c * cc.k]));
    for (int64_t c = 0; c < cc.c; ++c)
      out[base + c * cc.k] = static_cast<double>(cc.x[base + c * cc.k] - std::log(z));
  }
  return out;
}

// torch's cross_entropy_loss with class indices, written as its composite: nll_loss_nd of
// log_softmax, plus the label-smoothing term.
D cross_entropy_ref(const ClassCase& cc, int64_t reduction, int64_t ignore_index, double eps) {
  ClassCase lp = cc;
  lp.x = log_softmax_ref(cc);
  D nll = nll_ref(lp, 0, ignore_index);
  D smooth;
  long double tw = 0;
  for (int64_t s = 0; s < cc.n * cc.k; ++s) {
    const int64_t t = cc.target[s];
    if (t == ignore_index) {
      smooth.push_back(0);
      continue;
    }
    tw += cc.w.empty() ? 1.0 : cc.w[t];
    long double sm = 0;
    for (int64_t c = 0; c < cc.c; ++c) {
      sm -= (cc.w.empty() ? 1.0 : cc.w[c]) * lp.x[((s / cc.k) * cc.c + c) * cc.k + s % cc.k];
    }
    smooth.push_back(static_cast<double>(sm));
  }
  D out;
  long double total = 0;
  for (size_t s = 0; s < nll.size(); ++s) {
    const double v = (1 - eps) * nll[s] + eps / static_cast<double>(cc.c) * smooth[s];
    out.push_back(v);
    total += v;
  }
  if (reduction == 0) return out;
  return {static_cast<double>(reduction == 1 ? total / tw : total)};
}

// The tensors of a random case: input shape `shape` (class dim 1, or 0 for 1-D), targets in [0, C)
// with every third sample (from the second) set to `ignore`, optional weights.
struct ClassTensors {
  Tensor x, target, w;
  ClassCase cc;
  V loss_shape;
};
ClassTensors make_case(const V& shape, ScalarType dt, uint64_t seed, bool weighted,
                       int64_t ignore) {
  ClassTensors t;
  t.x = random_tensor(shape, dt, seed, -3, 3, shape.size() >= 2);
  const int64_t c = shape.size() == 1 ? shape[0] : shape[1];
  int64_t n = shape.size() == 1 ? 1 : shape[0], k = 1;
  V tshape;
  if (shape.size() >= 2) tshape.push_back(n);
  for (size_t d = 2; d < shape.size(); ++d) {
    k *= shape[d];
    tshape.push_back(shape[d]);
  }
  t.target = random_tensor(tshape, ScalarType::Int64, seed + 1, 0, static_cast<double>(c - 1));
  for (int64_t s = 1; s < n * k; s += 3) t.target.data<int64_t>()[s] = ignore;
  t.w = random_tensor({c}, dt, seed + 2, 0.5, 2);
  t.cc = {n, c, k, {}, weighted ? values(t.w) : D{}, {}};
  t.cc.x = values(t.x.contiguous());
  for (double v : values(t.target)) t.cc.target.push_back(static_cast<int64_t>(v));
  t.loss_shape = tshape;
  return t;
}

const std::vector<V>& class_shapes() {
  static const std::vector<V> v = {{5}, {6, 4}, {3, 4, 2, 3}};
  return v;
}

TEST(Loss, NllLoss) {
  for (ScalarType dt : float_types()) {
    for (const V& shape : class_shapes()) {
      for (int64_t red : {0, 1, 2}) {
        for (bool weighted : {false, true}) {
          for (int64_t ignore : {int64_t{-100}, int64_t{1}}) {
            SCOPED_TRACE(::testing::Message()
                         << dtype_name(dt) << " shape=" << shape_str(shape) << " reduction=" << red
                         << " w=" << weighted << " ignore=" << ignore);
            ClassTensors t = make_case(shape, dt, 31, weighted, ignore);
            const D want = nll_ref(t.cc, red, ignore);
            const IValue w = weighted ? IValue(t.w) : IValue();
            const V want_shape = red == 0 ? t.loss_shape : V{};
            EXPECT_TRUE(
                close(ops::nll_loss(t.x, t.target, w, red, ignore), want, want_shape, tol_for(dt)));
            if (shape.size() == 4) {
              EXPECT_TRUE(close(ops::nll_loss2d(t.x, t.target, w, red, ignore), want, want_shape,
                                tol_for(dt)));
              EXPECT_TRUE(close(ops::nll_loss_nd(t.x, t.target, w, red, ignore), want, want_shape,
                                tol_for(dt)));
            }
          }
        }
      }
    }
  }
  // Every sample ignored: the mean is 0 / 0 = nan, as in torch.
  EXPECT_TRUE(close(ops::nll_loss(from({1, 2}, {1, 2}), from({-100}, {1}, ScalarType::Int64)),
                    {kNaN}, {}, {0, 0}));
  // uint8 targets are accepted (torch's CPU kernel takes them).
  EXPECT_TRUE(close(ops::nll_loss(from({1, 2}, {1, 2}), from({1}, {1}, ScalarType::UInt8)), {-2},
                    {}, {0, 0}));
}

TEST(Loss, CrossEntropyClassIndices) {
  for (ScalarType dt : float_types()) {
    for (const V& shape : class_shapes()) {
      for (int64_t red : {0, 1, 2}) {
        for (bool weighted : {false, true}) {
          for (double eps : {0.0, 0.1}) {
            SCOPED_TRACE(::testing::Message()
                         << dtype_name(dt) << " shape=" << shape_str(shape) << " reduction=" << red
                         << " w=" << weighted << " smoothing=" << eps);
            const int64_t ignore = 2;
            ClassTensors t = make_case(shape, dt, 41, weighted, ignore);
            const D want = cross_entropy_ref(t.cc, red, ignore, eps);
            Tensor got = ops::cross_entropy_loss(t.x, t.target, weighted ? IValue(t.w) : IValue(),
                                                 red, ignore, eps);
            EXPECT_EQ(got.dtype(), dt);
            EXPECT_TRUE(close(got, want, red == 0 ? t.loss_shape : V{}, tol_for(dt)));
          }
        }
      }
    }
  }
  // Large logits stay finite (log-sum-exp is shifted by the max).
  Tensor got = ops::cross_entropy_loss(from({1000, 0, 1000, 1000}, {2, 2}),
                                       from({0, 1}, {2}, ScalarType::Int64), std::nullopt, 0);
  EXPECT_TRUE(close(got, {0, std::log(2.0)}, {2}, tol_for(ScalarType::Float32)));
}

TEST(Loss, CrossEntropyProbabilityTargets) {
  for (ScalarType dt : float_types()) {
    for (const V& shape : {V{5}, V{4, 3}, V{2, 3, 4}}) {
      for (int64_t red : {0, 1, 2}) {
        for (bool weighted : {false, true}) {
          for (double eps : {0.0, 0.2}) {
            SCOPED_TRACE(::testing::Message()
                         << dtype_name(dt) << " shape=" << shape_str(shape) << " reduction=" << red
                         << " w=" << weighted << " smoothing=" << eps);
            ClassTensors t = make_case(shape, dt, 51, weighted, 0);
            Tensor p = ops::softmax_int(random_tensor(shape, dt, 52), shape.size() == 1 ? 0 : 1);
            const D pv = values(p), lp = log_softmax_ref(t.cc);
            const int64_t C = t.cc.c, K = t.cc.k, S = t.cc.n * K;
            D l;
            long double total = 0;
            for (int64_t s = 0; s < S; ++s) {
              long double v = 0;
              for (int64_t c = 0; c < C; ++c) {
                const int64_t i = ((s / K) * C + c) * K + s % K;
                const double tc = pv[i] * (1 - eps) + eps / static_cast<double>(C);
                v -= (weighted ? t.cc.w[c] : 1.0) * tc * lp[i];
              }
              l.push_back(static_cast<double>(v));
              total += v;
            }
            D want = red == 0 ? l : D{static_cast<double>(red == 1 ? total / S : total)};
            Tensor got =
                ops::cross_entropy_loss(t.x, p, weighted ? IValue(t.w) : IValue(), red, -100, eps);
            EXPECT_TRUE(close(got, want, red == 0 ? t.loss_shape : V{}, tol_for(dt)));
          }
        }
      }
    }
  }
}

TEST(Loss, ErrorsMatchTorch) {
  Tensor x = random_tensor({3, 4}, ScalarType::Float32, 61);
  Tensor tg = from({0, 5, 1}, {3}, ScalarType::Int64);
  expect_error<IndexError>([&] { ops::nll_loss(x, tg); }, "Target 5 is out of bounds.");
  expect_error<IndexError>([&] { ops::cross_entropy_loss(x, tg); }, "Target 5 is out of bounds.");
  expect_error<IndexError>(
      [&] {
        ops::nll_loss(x, from({0, -1, 1}, {3}, ScalarType::Int64));
      },
      "Target -1 is out of bounds.");
  expect_error(
      [&] {
        ops::nll_loss(x, from({0, 1, 1}, {3}, ScalarType::Int32));
      },
      "expected scalar type Long but found Int");
  expect_error(
      [&] {
        ops::nll_loss(x, from({0, 1}, {2}, ScalarType::Int64));
      },
      "size mismatch (got input: [3, 4], target: [2])");
  expect_error(
      [&] {
        ops::nll_loss(x, from({0, 1, 1, 1, 1, 1}, {3, 2}, ScalarType::Int64));
      },
      "0D or 1D target tensor expected, multi-target not supported");
  expect_error(
      [&] {
        ops::nll_loss(x, from({0, 1, 1}, {3}, ScalarType::Int64), from({1, 1}, {2}));
      },
      "weight tensor should be defined either for all 4 classes or no classes but got "
      "weight tensor of shape: [2]");
  expect_error([&] { ops::nll_loss(from({1}, {}), from({0}, {}, ScalarType::Int64)); },
               "input tensor should be 1D or 2D");
  expect_error<ValueError>(
      [&] { ops::nll_loss_nd(from({1}, {}), from({0}, {}, ScalarType::Int64)); },
      "Expected 1 or more dimensions (got 0)");
  expect_error<ValueError>(
      [&] {
        ops::nll_loss_nd(x, from({0, 1}, {2}, ScalarType::Int64));
      },
      "Expected input batch_size (3) to match target batch_size (2).");
  expect_error(
      [&] {
        ops::nll_loss(Tensor::empty(V{2, 3, 4}), Tensor(ops::zeros(V{2, 5}, ScalarType::Int64)));
      },
      "Expected target size [2, 4], got [2, 5]");
  expect_error(
      [&] {
        ops::nll_loss2d(Tensor::empty(V{2, 3, 4}), from({0, 1}, {2}, ScalarType::Int64));
      },
      "only batches of spatial targets supported (3D tensors) but got targets of dimension: 1");
  expect_error(
      [&] {
        ops::nll_loss2d(Tensor::empty(V{2, 3, 4}),
                        Tensor(ops::zeros(V{2, 3, 4}, ScalarType::Int64)));
      },
      "only batches of spatial inputs supported (4D tensors), but got input of dimension: 3");
  expect_error(
      [&] {
        ops::cross_entropy_loss(x, from({0, 1, 1}, {3}, ScalarType::Int64), std::nullopt, 1, -100,
                                1.5);
      },
      "label_smoothing must be between 0.0 and 1.0. Got: 1.5");
  expect_error(
      [&] {
        ops::cross_entropy_loss(x, Tensor(ops::zeros(V{3, 4}, ScalarType::Int64)));
      },
      "Expected floating point type for target with class probabilities, got Long");
  expect_error(
      [&] {
        ops::cross_entropy_loss(x, Tensor(ops::zeros(V{3, 4})), std::nullopt, 1, 0);
      },
      "ignore_index is not supported for floating point target");
  expect_error(
      [&] {
        ops::cross_entropy_loss(x, Tensor(ops::zeros(V{3, 4})), from({1}, {1}));
      },
      "cross_entropy: weight tensor should be defined either for all 4 classes");
  // A 0-dim input and target have equal shapes, so torch takes them for probabilities first.
  expect_error([&] { ops::cross_entropy_loss(from({1}, {}), from({0}, {}, ScalarType::Int64)); },
               "Expected floating point type for target with class probabilities, got Long");
  expect_error<IndexError>(
      [&] { ops::cross_entropy_loss(from({1}, {}), from({0}, {})); },
      "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
  expect_error(
      [&] { ops::mse_loss(from({1}, {1}, ScalarType::Int64), from({1}, {1}, ScalarType::Int64)); },
      "mse_loss: not implemented for dtype int64");
}

}  // namespace
}  // namespace ampjit
