// The nn functional family (runtime/ops/nn_extra.def): 3-D and adaptive pooling, unpooling, the
// padding modes, interpolation, im2col/col2im and grid sampling, against float64 references written
// here as naive loops from torch's definitions, with ceil_mode windows, align_corners, scale
// factors, empty batches, non-contiguous and channels-last inputs, and torch's messages for bad
// inputs.
#include <gmock/gmock.h>

#include <cmath>

#include "runtime/layout.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::error_of;
using testing::random_tensor;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
constexpr ScalarType f32 = ScalarType::Float32, f64 = ScalarType::Float64,
                     bf16 = ScalarType::BFloat16, i64 = ScalarType::Int64, u8 = ScalarType::UInt8;

Tensor rnd(V shape, ScalarType dt, uint64_t seed, bool noncontig = false) {
  return random_tensor(std::move(shape), dt, seed, -2.0, 2.0, noncontig);
}

int64_t ref_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil, bool ceil) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1;
  int64_t out = (ceil ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil && (out - 1) * stride >= in + pad) --out;
  return out;
}

// ---- 3-D pooling --------------------------------------------------------------------------------

struct Pool3 {
  V k, s, p, d;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor = std::nullopt;
};

// max (values and flat indices) or average pooling of a 5-D tensor, spelled out: the first
// maximum in scan order wins, a NaN is the result; averages divide by the window clipped to the
// padded input (count_include_pad), by the taps inside, or by the override.
struct PoolRef {
  std::vector<double> v, idx;
  V shape;
};
PoolRef ref_pool3d(const Tensor& x, const Pool3& c, bool average) {
  const std::vector<double> xv = values(x);
  const int64_t planes = x.size(0) * x.size(1);
  const V in{x.size(2), x.size(3), x.size(4)};
  V out(3);
  for (int i = 0; i < 3; ++i)
    out[i] = ref_out_size(in[i], c.k[i], c.p[i], c.s[i], c.d[i], c.ceil_mode);
  PoolRef r;
  r.shape = {x.size(0), x.size(1), out[0], out[1], out[2]};
  for (int64_t pl = 0; pl < planes; ++pl)
    testing::for_each_index(out, [&](const V& o, int64_t) {
      double best = -INFINITY, sum = 0;
      int64_t where = -1, inside = 0, padded = 1;
      for (int i = 0; i < 3; ++i) {
        const int64_t start = o[i] * c.s[i] - c.p[i];
        padded *= std::min(start + c.k[i], in[i] + c.p[i]) - start;
      }
      testing::for_each_index(c.k, [&](const V& t, int64_t) {
        V pos(3);
        for (int i = 0; i < 3; ++i) {
          pos[i] = o[i] * c.s[i] - c.p[i] + t[i] * c.d[i];
          if (pos[i] < 0 || pos[i] >= in[i]) return;
        }
        const int64_t at = (pos[0] * in[1] + pos[1]) * in[2] + pos[2];
        const double v = xv[pl * in[0] * in[1] * in[2] + at];
        ++inside;
        sum += v;
        if (where < 0 || v > best || std::isnan(v)) {
          if (!std::isnan(best) || std::isnan(v)) {
            best = v;
            where = at;
          }
        }
      });
      if (average) {
        const int64_t div = c.divisor ? *c.divisor : c.count_include_pad ? padded : inside;
        r.v.push_back(inside == 0 ? 0.0 : sum / static_cast<double>(div));
      } else {
        r.v.push_back(best);
        r.idx.push_back(static_cast<double>(where));
      }
    });
  return r;
}

const std::vector<Pool3>& pool3_cases() {
  static const std::vector<Pool3> cases = {
      {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}},
      {{3, 3, 2}, {2, 1, 2}, {1, 1, 0}, {1, 1, 1}},
      {{3, 2, 3}, {2, 2, 2}, {1, 0, 1}, {1, 1, 1}, true},
      {{2, 3, 3}, {3, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, false},
      {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, true, 5},
      {{2, 2, 3}, {1, 2, 1}, {0, 1, 1}, {2, 1, 2}},  // dilation (max only)
  };
  return cases;
}

TEST(MaxPool3d, WindowsCeilModeDilationAndIndices) {
  uint64_t seed = 1;
  for (ScalarType dt : {f32, f64, bf16}) {
    for (const Pool3& c : pool3_cases()) {
      const Tensor x = rnd({2, 3, 6, 7, 5}, dt, seed++);
      const PoolRef r = ref_pool3d(x, c, false);
      const OpResult y = ops::max_pool3d_with_indices(x, c.k, c.s, c.p, c.d, c.ceil_mode);
      EXPECT_TRUE(testing::close(y.tensor(0), r.v, r.shape, tol_for(dt))) << dtype_name(dt);
      EXPECT_TRUE(testing::close(y.tensor(1), r.idx, r.shape, {0, 0})) << dtype_name(dt);
      EXPECT_TRUE(testing::close(ops::max_pool3d(x, c.k, c.s, c.p, c.d, c.ceil_mode), r.v, r.shape,
                                 tol_for(dt)));
    }
  }
}

TEST(MaxPool3d, NaNWinsUnbatchedNonContiguousAndEmptyBatch) {
  Tensor x = rnd({1, 1, 2, 2, 2}, f32, 3);
  x.data<float>()[5] = NAN;
  const OpResult y = ops::max_pool3d_with_indices(x, V{2});
  EXPECT_TRUE(std::isnan(values(y.tensor(0))[0]));
  EXPECT_EQ(values(y.tensor(1))[0], 5);
  // An unbatched input is a batch of one; a strided one gives the same values.
  const Tensor u = rnd({3, 4, 6, 5}, f64, 4, /*noncontig=*/true);
  const PoolRef r = ref_pool3d(u.unsqueeze(0), pool3_cases()[1], false);
  const Pool3& c = pool3_cases()[1];
  EXPECT_TRUE(testing::close(ops::max_pool3d(u, c.k, c.s, c.p, c.d), r.v,
                             V{3, r.shape[2], r.shape[3], r.shape[4]}, tol_for(f64)));
  const Tensor e = ops::max_pool3d(Tensor::empty(V{0, 2, 4, 4, 4}, f32), V{2});
  EXPECT_EQ(e.shape_str(), "[0, 2, 2, 2, 2]");
}

TEST(AvgPool3d, CeilModeCountIncludePadDivisorOverride) {
  uint64_t seed = 10;
  for (ScalarType dt : {f32, f64}) {
    for (const Pool3& c : pool3_cases()) {
      if (c.d[0] != 1 || c.d[1] != 1 || c.d[2] != 1) continue;
      const Tensor x = rnd({2, 2, 6, 5, 7}, dt, seed++);
      const PoolRef r = ref_pool3d(x, c, true);
      const Tensor y =
          ops::avg_pool3d(x, c.k, c.s, c.p, c.ceil_mode, c.count_include_pad, c.divisor);
      EXPECT_TRUE(testing::close(y, r.v, r.shape, tol_for(dt))) << dtype_name(dt);
    }
  }
  // int64 sums and truncates toward zero, as torch's integer division does
  const Tensor xi = random_tensor({1, 1, 3, 3, 3}, i64, 12, -9, 9);
  Pool3 c{{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
  const PoolRef r = ref_pool3d(xi, c, true);
  const Tensor yi = ops::avg_pool3d(xi, c.k, c.s, c.p);
  EXPECT_EQ(yi.dtype(), i64);
  for (size_t i = 0; i < r.v.size(); ++i) EXPECT_EQ(values(yi)[i], std::trunc(r.v[i])) << i;
}

TEST(AvgPool3d, BackwardSpreadsEachGradientOverItsWindow) {
  const Pool3 c{{3, 2, 3}, {2, 2, 2}, {1, 0, 1}, {1, 1, 1}, true, false};
  const Tensor x = rnd({1, 2, 5, 4, 6}, f64, 20);
  const Tensor y = ops::avg_pool3d(x, c.k, c.s, c.p, c.ceil_mode, c.count_include_pad);
  const Tensor g = rnd(V(y.sizes().begin(), y.sizes().end()), f64, 21);
  // <avg_pool3d(x), g> == <x, backward(g)> for every x: check it on one-hot inputs
  const Tensor gx =
      ops::avg_pool3d_backward(g, x, c.k, c.s, c.p, c.ceil_mode, c.count_include_pad, IValue());
  const std::vector<double> gv = values(g), gxv = values(gx);
  for (int64_t i = 0; i < x.numel(); i += 7) {
    Tensor e = ops::zeros_like(x);
    e.data<double>()[i] = 1.0;
    const std::vector<double> ye =
        values(ops::avg_pool3d(e, c.k, c.s, c.p, c.ceil_mode, c.count_include_pad));
    double dot = 0;
    for (size_t j = 0; j < ye.size(); ++j) dot += ye[j] * gv[j];
    EXPECT_NEAR(gxv[i], dot, 1e-12) << i;
  }
}

// ---- adaptive pooling and unpooling
// ---------------------------------------------------------------

// Adaptive windows [floor(i*in/out), ceil((i+1)*in/out)) per dimension, over the last nsp dims.
PoolRef ref_adaptive(const Tensor& x, const V& out, bool average) {
  const int nsp = static_cast<int>(out.size());
  const std::vector<double> xv = values(x);
  V in(x.sizes().end() - nsp, x.sizes().end());
  const int64_t in_numel = numel_of(in), planes = x.numel() / in_numel;
  PoolRef r;
  r.shape.assign(x.sizes().begin(), x.sizes().end() - nsp);
  r.shape.insert(r.shape.end(), out.begin(), out.end());
  for (int64_t pl = 0; pl < planes; ++pl)
    testing::for_each_index(out, [&](const V& o, int64_t) {
      V lo(nsp), len(nsp);
      for (int i = 0; i < nsp; ++i) {
        lo[i] = o[i] * in[i] / out[i];
        len[i] = ((o[i] + 1) * in[i] + out[i] - 1) / out[i] - lo[i];
      }
      double best = -INFINITY, sum = 0;
      int64_t where = -1;
      testing::for_each_index(len, [&](const V& t, int64_t) {
        int64_t at = 0;
        for (int i = 0; i < nsp; ++i) at = at * in[i] + lo[i] + t[i];
        const double v = xv[pl * in_numel + at];
        sum += v;
        if (where < 0 || v > best) {
          best = v;
          where = at;
        }
      });
      r.v.push_back(average ? sum / static_cast<double>(numel_of(len)) : best);
      r.idx.push_back(static_cast<double>(where));
    });
  return r;
}

TEST(AdaptivePool, AvgAndMaxOver2dAnd3dSizes) {
  uint64_t seed = 30;
  for (ScalarType dt : {f32, f64}) {
    for (const V& os : {V{1, 1, 1}, V{2, 3, 4}, V{5, 7, 3}}) {
      const bool noncontig = seed % 2 == 0;
      const Tensor x = rnd({2, 3, 4, 5, 6}, dt, seed++, noncontig);
      const PoolRef a = ref_adaptive(x, os, true), m = ref_adaptive(x, os, false);
      EXPECT_TRUE(testing::close(ops::adaptive_avg_pool3d(x, os), a.v, a.shape, tol_for(dt)));
      const OpResult y = ops::adaptive_max_pool3d(x, os);
      EXPECT_TRUE(testing::close(y.tensor(0), m.v, m.shape, tol_for(dt)));
      EXPECT_TRUE(testing::close(y.tensor(1), m.idx, m.shape, {0, 0}));
    }
    const Tensor x2 = rnd({3, 7, 5}, dt, seed++);
    const PoolRef m2 = ref_adaptive(x2, V{3, 2}, false);
    const OpResult y2 = ops::adaptive_max_pool2d(x2, V{3, 2});
    EXPECT_TRUE(testing::close(y2.tensor(0), m2.v, m2.shape, tol_for(dt)));
    EXPECT_TRUE(testing::close(y2.tensor(1), m2.idx, m2.shape, {0, 0}));
  }
}

TEST(MaxUnpool, WritesTheInputAtItsIndices) {
  const Tensor x = rnd({2, 3, 6, 8}, f32, 40);
  const OpResult p = ops::max_pool2d_with_indices(x, V{2}, V{2});
  const Tensor u = ops::max_unpool2d(p.tensor(0), p.tensor(1), V{6, 8});
  // every pooled maximum back at its place, zeros elsewhere
  const std::vector<double> xv = values(x), uv = values(u), iv = values(p.tensor(1));
  std::vector<double> want(uv.size(), 0.0);
  for (size_t i = 0; i < iv.size(); ++i) {
    const size_t plane = i / 12;
    want[plane * 48 + static_cast<size_t>(iv[i])] = xv[plane * 48 + static_cast<size_t>(iv[i])];
  }
  EXPECT_TRUE(testing::close(u, want, V{2, 3, 6, 8}, {0, 0}));
  const Tensor x3 = rnd({1, 2, 4, 4, 4}, f64, 41);
  const OpResult p3 = ops::max_pool3d_with_indices(x3, V{2});
  const Tensor u3 =
      ops::max_unpool3d(p3.tensor(0), p3.tensor(1), V{4, 4, 4}, V{2, 2, 2}, V{0, 0, 0});
  EXPECT_TRUE(testing::close(ops::max_pool3d(u3, V{2}), values(p3.tensor(0)), V{1, 2, 2, 2, 2},
                             tol_for(f64)));
}

// ---- padding ----------------------------------------------------------------------------------

// The padded tensor by each output position's source: reflect mirrors without repeating the edge,
// replicate clamps, circular wraps (after cropping negative pads).
std::vector<double> ref_pad(const Tensor& x, const V& pad, const std::string& mode, V* shape) {
  const std::vector<double> xv = values(x);
  const int64_t nd = x.dim(), k = static_cast<int64_t>(pad.size()) / 2;
  V in(x.sizes().begin(), x.sizes().end());
  *shape = in;
  for (int64_t i = 0; i < k; ++i) (*shape)[nd - 1 - i] += pad[2 * i] + pad[2 * i + 1];
  std::vector<double> out;
  testing::for_each_index(*shape, [&](const V& o, int64_t) {
    int64_t at = 0;
    for (int64_t d = 0; d < nd; ++d) {
      int64_t i = o[d];
      const int64_t pi = nd - 1 - d;
      if (pi < k) {
        const int64_t l = pad[2 * pi], r = pad[2 * pi + 1], n = in[d];
        if (mode == "reflect") {
          i -= l;
          if (i < 0) i = -i;
          if (i >= n) i = 2 * (n - 1) - i;
        } else if (mode == "replicate") {
          i = std::clamp<int64_t>(i - l, 0, n - 1);
        } else {
          const int64_t lo = std::max<int64_t>(-l, 0), m = n - lo - std::max<int64_t>(-r, 0);
          i = lo + (((i - std::max<int64_t>(l, 0)) % m) + m) % m;
        }
      }
      at = at * in[d] + i;
    }
    out.push_back(xv[at]);
  });
  return out;
}

TEST(Pad, ReflectReplicateCircularIn1d2d3dWithNegativePads) {
  uint64_t seed = 50;
  const std::vector<std::pair<V, V>> cases = {
      {{2, 3, 7}, {2, 3}},
      {{3, 7}, {-1, 4}},
      {{2, 2, 5, 6}, {1, 2, 3, 0}},
      {{2, 5, 6}, {2, -1, 0, 4}},
      {{1, 2, 4, 5, 6}, {1, 2, 3, 0, 2, 1}},
  };
  for (const std::string mode : {"reflect", "replicate", "circular"}) {
    for (const auto& [shape, pad] : cases) {
      if (mode == "circular" && shape.size() == pad.size() / 2 + 1) continue;  // needs a batch
      const bool noncontig = seed % 2 == 0;
      const Tensor x = rnd(shape, f32, seed++, noncontig);
      V want_shape;
      const std::vector<double> want = ref_pad(x, pad, mode, &want_shape);
      EXPECT_TRUE(testing::close(ops::pad(x, pad, mode), want, want_shape, {0, 0}))
          << mode << " " << shape_str(shape);
    }
  }
  // every dtype: a gather
  const Tensor b = ops::gt_Scalar(rnd({1, 2, 5}, f32, 60), 0.0);
  V s;
  EXPECT_TRUE(testing::close(ops::pad(b, V{2, 1}, std::string("circular")),
                             ref_pad(b, V{2, 1}, "circular", &s), V{1, 2, 8}, {0, 0}));
}

TEST(Pad, ConstantPadNdFillsCropsAndKeepsTheDtype) {
  const Tensor x = rnd({2, 3, 4}, i64, 70);
  const Tensor y = ops::constant_pad_nd(x, V{1, -2, 0, 2}, Scalar(int64_t{7}));
  EXPECT_EQ(y.shape_str(), "[2, 5, 3]");
  EXPECT_EQ(y.dtype(), i64);
  const std::vector<double> xv = values(x), yv = values(y);
  EXPECT_EQ(yv[0], 7);          // the left padding
  EXPECT_EQ(yv[1], xv[0]);      // then the input, its last 2 columns cropped
  EXPECT_EQ(yv[3 * 3 + 1], 7);  // the bottom padding
  EXPECT_EQ(yv[2 * 3 + 2], xv[2 * 4 + 1]);
}

// ---- interpolation ----------------------------------------------------------------------------

// torch's source coordinate of output o (UpSample.h): align_corners maps corner to corner,
// otherwise pixel centres, with the given scale (1/scale) or in/out; linear clamps below at 0.
double ref_source(int64_t o, int64_t in, int64_t out, bool ac, std::optional<double> scale,
                  bool cubic) {
  if (ac) return out > 1 ? static_cast<double>(in - 1) / (out - 1) * o : 0.0;
  const double s = scale ? 1.0 / *scale : static_cast<double>(in) / out;
  const double src = s * (o + 0.5) - 0.5;
  return !cubic && src < 0 ? 0.0 : src;
}

double cubic_w(double x) {  // the cubic convolution kernel, A = -0.75
  const double A = -0.75;
  x = std::fabs(x);
  if (x <= 1) return ((A + 2) * x - (A + 3)) * x * x + 1;
  if (x < 2) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
  return 0;
}

// 2-D bilinear or bicubic interpolation of [N, C, H, W], written as the 2-D sums.
std::vector<double> ref_resize2d(const Tensor& x, int64_t oh, int64_t ow, bool ac, bool cubic,
                                 std::optional<double> sh = std::nullopt,
                                 std::optional<double> sw = std::nullopt) {
  const std::vector<double> xv = values(x);
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  std::vector<double> out;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const double ry = ref_source(i, H, oh, ac, sh, cubic),
                     rx = ref_source(j, W, ow, ac, sw, cubic);
        double acc = 0;
        if (!cubic) {
          const int64_t y0 = std::min<int64_t>(static_cast<int64_t>(ry), H - 1),
                        x0 = std::min<int64_t>(static_cast<int64_t>(rx), W - 1);
          const int64_t y1 = std::min(y0 + 1, H - 1), x1 = std::min(x0 + 1, W - 1);
          const double ly = (oh == H) ? 0 : ry - y0, lx = (ow == W) ? 0 : rx - x0;
          auto at = [&](int64_t y, int64_t xx) { return xv[(pl * H + y) * W + xx]; };
          acc = (1 - ly) * ((1 - lx) * at(y0, x0) + lx * at(y0, x1)) +
                ly * ((1 - lx) * at(y1, x0) + lx * at(y1, x1));
        } else {
          const int64_t y0 = static_cast<int64_t>(std::floor(ry)),
                        x0 = static_cast<int64_t>(std::floor(rx));
          for (int a = -1; a <= 2; ++a)
            for (int b = -1; b <= 2; ++b) {
              const int64_t y = std::clamp<int64_t>(y0 + a, 0, H - 1),
                            xx = std::clamp<int64_t>(x0 + b, 0, W - 1);
              acc += cubic_w(ry - (y0 + a)) * cubic_w(rx - (x0 + b)) * xv[(pl * H + y) * W + xx];
            }
        }
        out.push_back(acc);
      }
  return out;
}

TEST(Upsample, BilinearAndBicubicAlignCornersAndScales) {
  uint64_t seed = 80;
  for (ScalarType dt : {f32, f64, bf16}) {
    for (bool ac : {false, true}) {
      for (const V& os : {V{7, 9}, V{3, 2}, V{4, 5}}) {
        const Tensor x = rnd({2, 3, 4, 5}, dt, seed++);
        const std::vector<int64_t> shape{2, 3, os[0], os[1]};
        EXPECT_TRUE(testing::close(ops::upsample_bilinear2d(x, os, ac),
                                   ref_resize2d(x, os[0], os[1], ac, false), shape, tol_for(dt)))
            << dtype_name(dt) << ac << shape_str(os);
        // 16 terms of either sign: an absolute error of a few ulps of the terms
        const testing::Tol t = dt == bf16  ? testing::Tol{3e-2, 3e-2}
                               : dt == f32 ? testing::Tol{1e-5, 2e-5}
                                           : tol_for(dt);
        EXPECT_TRUE(testing::close(ops::upsample_bicubic2d(x, os, ac),
                                   ref_resize2d(x, os[0], os[1], ac, true), shape, t))
            << dtype_name(dt) << ac << shape_str(os);
      }
    }
  }
  // A scale factor is used as given (1/scale), not recomputed from the sizes.
  const Tensor x = rnd({1, 2, 5, 4}, f64, 90);
  const Tensor y = ops::upsample_bilinear2d_vec(x, IValue(), false, std::vector<double>{1.7, 2.3});
  EXPECT_TRUE(testing::close(y, ref_resize2d(x, 8, 9, false, false, 1.7, 2.3), V{1, 2, 8, 9},
                             tol_for(f64)));
}

TEST(Upsample, NearestAndNearestExactIndices) {
  const Tensor x = ops::reshape(ops::arange(Scalar(int64_t{10}), u8), V{1, 1, 10});
  // nearest: floor(o * in / out); nearest-exact: floor((o + 0.5) * in / out)
  EXPECT_EQ(values(ops::upsample_nearest1d(x, V{4})), (std::vector<double>{0, 2, 5, 7}));
  EXPECT_EQ(values(ops::_upsample_nearest_exact1d(x, V{4})), (std::vector<double>{1, 3, 6, 8}));
  EXPECT_EQ(values(ops::upsample_nearest1d_vec(x, IValue(), std::vector<double>{0.5})),
            (std::vector<double>{0, 2, 4, 6, 8}));
  const Tensor img = rnd({2, 3, 4, 5}, f32, 91);
  const Tensor cl = to_channels_last(img);
  const Tensor a = ops::upsample_nearest2d(img, V{8, 7}), b = ops::upsample_nearest2d(cl, V{8, 7});
  EXPECT_EQ(values(a), values(b));
  const Tensor v = ops::upsample_trilinear3d(rnd({1, 1, 2, 3, 4}, f32, 92), V{4, 6, 8}, true);
  EXPECT_EQ(v.shape_str(), "[1, 1, 4, 6, 8]");
  const Tensor e = ops::upsample_bilinear2d(Tensor::empty(V{0, 3, 4, 4}, f32), V{8, 8}, false);
  EXPECT_EQ(e.shape_str(), "[0, 3, 8, 8]");
}

// ---- im2col / col2im
// -----------------------------------------------------------------------------

TEST(Im2Col, ColumnsAreTheSlidingBlocksAndCol2ImSumsThemBack) {
  const Tensor x = rnd({2, 3, 6, 7}, f64, 100, /*noncontig=*/true);
  const V k{2, 3}, d{2, 1}, p{1, 2}, s{2, 3};
  const Tensor cols = ops::im2col(x, k, d, p, s);
  const int64_t oh = ref_out_size(6, 2, 1, 2, 2, false), ow = ref_out_size(7, 3, 2, 3, 1, false);
  ASSERT_EQ(cols.shape_str(), shape_str(V{2, 3 * 6, oh * ow}));
  const std::vector<double> xv = values(x), cv = values(cols);
  std::vector<double> want, back(xv.size(), 0.0);
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t i = 0; i < 2; ++i)
        for (int64_t j = 0; j < 3; ++j)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t z = 0; z < ow; ++z) {
              const int64_t h = y * 2 - 1 + i * 2, w = z * 3 - 2 + j;
              const bool in = h >= 0 && h < 6 && w >= 0 && w < 7;
              const int64_t at = ((n * 3 + c) * 6 + h) * 7 + w;
              want.push_back(in ? xv[at] : 0.0);
              if (in) back[at] += xv[at];
            }
  EXPECT_TRUE(testing::close(cols, want, V{2, 18, oh * ow}, {0, 0}));
  EXPECT_TRUE(
      testing::close(ops::col2im(cols, V{6, 7}, k, d, p, s), back, V{2, 3, 6, 7}, tol_for(f64)));
}

// ---- grid sampling ------------------------------------------------------------------------------

// Bilinear grid sampling of [N, C, H, W], torch's definition: the grid's (x, y) in [-1, 1] mapped
// to pixels (corner centres with align_corners, else corner edges), border clamps, reflection
// mirrors at the edges; out-of-range corners read 0.
std::vector<double> ref_grid_sample(const Tensor& x, const Tensor& grid, const std::string& padding,
                                    bool ac) {
  const std::vector<double> xv = values(x), gv = values(grid);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t oh = grid.size(1), ow = grid.size(2);
  auto coord = [&](double g, int64_t size) {
    double c = ac ? (g + 1) / 2 * (size - 1) : ((g + 1) * size - 1) / 2;
    if (padding == "reflection") {
      const double lo = ac ? 0 : -0.5, hi = ac ? size - 1 : size - 0.5, span = hi - lo;
      if (span <= 0) return 0.0;
      double t = std::fabs(c - lo);
      const double m = std::fmod(t, 2 * span);
      t = m > span ? 2 * span - m : m;
      c = lo + t;
    }
    if (padding != "zeros") c = std::clamp(c, 0.0, static_cast<double>(size - 1));
    return c;
  };
  std::vector<double> out(static_cast<size_t>(N * C * oh * ow));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const double* g = &gv[((n * oh + i) * ow + j) * 2];
        const double cx = coord(g[0], W), cy = coord(g[1], H);
        const double fx = std::floor(cx), fy = std::floor(cy);
        for (int64_t c = 0; c < C; ++c) {
          double acc = 0;
          for (int a = 0; a < 2; ++a)
            for (int b = 0; b < 2; ++b) {
              const int64_t y = static_cast<int64_t>(fy) + a, xx = static_cast<int64_t>(fx) + b;
              if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
              const double w = (a ? cy - fy : 1 - (cy - fy)) * (b ? cx - fx : 1 - (cx - fx));
              acc += w * xv[((n * C + c) * H + y) * W + xx];
            }
          out[((n * C + c) * oh + i) * ow + j] = acc;
        }
      }
  return out;
}

TEST(GridSampler2d, BilinearInEveryPaddingMode) {
  const Tensor x = rnd({2, 3, 5, 6}, f64, 110);
  const Tensor grid = random_tensor({2, 4, 7, 2}, f64, 111, -1.6, 1.6);
  const std::vector<std::string> names = {"zeros", "border", "reflection"};
  for (int64_t padding = 0; padding < 3; ++padding)
    for (bool ac : {false, true}) {
      const Tensor y = ops::grid_sampler_2d(x, grid, int64_t{0}, padding, ac);
      EXPECT_TRUE(testing::close(y, ref_grid_sample(x, grid, names[padding], ac), V{2, 3, 4, 7},
                                 tol_for(f64)))
          << names[padding] << " " << ac;
    }
  // the grid gradient of bilinear zeros-padding sampling against central differences
  const Tensor go = rnd({2, 3, 4, 7}, f64, 112);
  const OpResult g =
      ops::grid_sampler_2d_backward(go, x, grid, int64_t{0}, int64_t{0}, false, true);
  const std::vector<double> ggv = values(g.tensor(1)), gov = values(go);
  for (int64_t k = 0; k < grid.numel(); k += 5) {
    auto f = [&](double delta) {
      Tensor gr = grid.contiguous().to(f64, true);
      gr.data<double>()[k] += delta;
      const std::vector<double> y = ref_grid_sample(x, gr, "zeros", false);
      double dot = 0;
      for (size_t i = 0; i < y.size(); ++i) dot += y[i] * gov[i];
      return dot;
    };
    EXPECT_NEAR(ggv[k], (f(1e-6) - f(-1e-6)) / 2e-6, 1e-5) << k;
  }
}

// ---- errors, pinned word for word -------------------------------------------------------------

TEST(NnOps, Errors) {
  const Tensor x5 = rnd({1, 2, 4, 4, 4}, f32, 120);
  EXPECT_EQ(error_of([&] {
              ops::max_pool3d(x5, V{2, 2});
            }),
            "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  EXPECT_EQ(error_of([&] { ops::max_pool3d(x5, V{3}, V{1}, V{2}); }),
            "pad should be at most half of kernel size, but got pad=2 and kernel_size=3");
  EXPECT_EQ(error_of([&] { ops::max_pool3d(x5, V{5}); }),
            "Given input size: (2x4x4x4). Calculated output size: (2x0x0x0). Output size is too "
            "small");
  EXPECT_EQ(error_of([&] { ops::avg_pool3d(x5, V{2}, V{}, V{0}, false, true, int64_t{0}); }),
            "divisor must be not zero");
  EXPECT_EQ(error_of([&] {
              ops::avg_pool3d(rnd({2, 4, 4}, f32, 1), V{2});
            }),
            "non-empty 4D or 5D (batch mode) tensor expected for input");
  EXPECT_EQ(error_of([&] {
              ops::adaptive_max_pool2d(rnd({2, 0, 4}, f32, 1), V{2, 2});
            }),
            "adaptive_max_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
            "but input has sizes [2, 0, 4] with dimension 1 being empty");
  EXPECT_EQ(error_of([&] {
              ops::max_unpool2d(rnd({1, 1, 2, 2}, f32, 1),
                                ops::full(V{1, 1, 2, 2}, Scalar(9.0), i64), V{2, 2});
            }),
            "Found an invalid max index: 9 (output volumes are of size 2x2");
  const Tensor x3 = rnd({2, 3, 4}, f32, 121);
  EXPECT_EQ(error_of([&] {
              ops::pad(x3, V{4, 1}, std::string("reflect"));
            }),
            "Argument #4: Padding size should be less than the corresponding input dimension, but "
            "got: padding (4, 1) at dimension 2 of input [2, 3, 4]");
  EXPECT_EQ(error_of([&] {
              ops::pad(x3, V{1, 1}, std::string("reflect"), 1.0);
            }),
            "Padding mode \"reflect\" doesn't take in value argument");
  EXPECT_EQ(error_of([&] {
              ops::pad(x3, V{5, 2}, std::string("circular"));
            }),
            "Padding value causes wrapping around more than once.");
  EXPECT_EQ(error_of([&] {
              ops::pad(rnd({3, 4}, f32, 1), V{1, 2}, std::string("circular"));
            }),
            "Invalid padding size, expected 0 but got 2");
  EXPECT_EQ(error_of([&] {
              ops::pad(rnd({2, 0, 4}, f32, 1), V{1, 1}, std::string("replicate"));
            }),
            "Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and other non-zero "
            "dimensions for input, but got: [2, 0, 4]");
  EXPECT_EQ(error_of([&] {
              ops::pad(x3, V{1, 1}, std::string("foo"));
            }),
            "Unrecognised padding mode foo");
  EXPECT_EQ(error_of([&] {
              ops::constant_pad_nd(x3, V{1, 1, 1});
            }),
            "Length of pad must be even but instead it equals 3");
  EXPECT_EQ(error_of([&] {
              ops::upsample_bilinear2d(x3, V{4, 4}, false);
            }),
            "It is expected input_size equals to 4, but got size 3");
  EXPECT_EQ(error_of([&] {
              ops::upsample_nearest2d(rnd({1, 1, 2, 2}, f32, 1), V{0, 4});
            }),
            "Input and output sizes should be greater than 0, but got input (H: 2, W: 2) output "
            "(H: 0, W: 4)");
  EXPECT_EQ(error_of([&] { ops::upsample_linear1d(x3.to(i64), V{8}, false); }),
            "\"compute_indices_weights_linear\" not implemented for 'Long'");
  EXPECT_EQ(error_of([&] {
              ops::im2col(rnd({1, 1, 2, 2}, f32, 1), V{3, 3}, V{1, 1}, V{0, 0}, V{1, 1});
            }),
            "Given input with spatial size (2, 2), kernel_size=(3, 3), dilation=(1, 1), "
            "padding=(0, 0), calculated shape of the array of sliding blocks as (0, 0), but its "
            "components must be at least one.");
  EXPECT_EQ(error_of([&] {
              ops::col2im(rnd({1, 5, 4}, f32, 1), V{3, 3}, V{2, 2}, V{1, 1}, V{0, 0}, V{1, 1});
            }),
            "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
            "but got input.size(1)=5 and kernel_size=(2, 2).");
  EXPECT_EQ(error_of([&] {
              ops::grid_sampler_2d(rnd({1, 1, 2, 2}, f32, 1), rnd({1, 2, 2, 3}, f32, 2), int64_t{0},
                                   int64_t{0}, false);
            }),
            "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with "
            "sizes [1, 2, 2, 3]");
}

}  // namespace
}  // namespace ampjit
