// Convolutions (conv1d/2d/3d, conv_transpose2d) and 2-D pooling (max_pool2d, avg_pool2d,
// adaptive_avg_pool2d) against independent float64 references written as naive loops here, over
// float32/float64/float16/bfloat16 with stride, padding, dilation, groups, bias, unbatched and
// non-contiguous inputs, ceil_mode and count_include_pad, and the errors of bad inputs.
#include <gmock/gmock.h>

#include "runtime/cpu_features.h"
#include "runtime/layout.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using testing::random_tensor;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
constexpr ScalarType f32 = ScalarType::Float32, f64 = ScalarType::Float64,
                     bf16 = ScalarType::BFloat16, i64 = ScalarType::Int64;

Tensor rnd(V shape, ScalarType dt, uint64_t seed, bool noncontig = false) {
  return random_tensor(std::move(shape), dt, seed, -2.0, 2.0, noncontig);
}

// --- convolution reference ---------------------------------------------------------------------

struct Conv {
  V stride, padding, dilation, output_padding;
  int64_t groups = 1;
};

struct Ref {
  std::vector<double> v;
  V shape;
  int64_t k = 0;           // terms per output element
  double max_abs_sum = 0;  // largest sum of |terms| over the output elements
};

// Direct convolution over 1-3 spatial dims of a batched input, written as the textbook loops
// (batch, out channel, out position, in channel of the group, kernel position).
Ref ref_conv(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv& c) {
  const int nsp = static_cast<int>(x.dim()) - 2;
  const std::vector<double> xv = values(x), wv = values(w);
  const std::vector<double> bv = bias ? values(*bias) : std::vector<double>();
  const int64_t n = x.size(0), ic = x.size(1), oc = w.size(0), g = c.groups, icg = ic / g,
                ocg = oc / g;
  V in(x.sizes().begin() + 2, x.sizes().end()), k(w.sizes().begin() + 2, w.sizes().end()), out(nsp);
  for (int i = 0; i < nsp; ++i) {
    out[i] = (in[i] + 2 * c.padding[i] - c.dilation[i] * (k[i] - 1) - 1) / c.stride[i] + 1;
  }
  Ref r;
  r.shape = {n, oc};
  r.shape.insert(r.shape.end(), out.begin(), out.end());
  r.k = icg * numel_of(k);
  const int64_t in_sz = numel_of(in), k_sz = numel_of(k);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < oc; ++o)
      testing::for_each_index(out, [&](const V& op, int64_t) {
        double acc = bias ? bv[o] : 0.0, abs_sum = std::fabs(acc);
        for (int64_t il = 0; il < icg; ++il) {
          const int64_t ci = (o / ocg) * icg + il;
          testing::for_each_index(k, [&](const V& kp, int64_t klin) {
            int64_t lin = 0;
            for (int i = 0; i < nsp; ++i) {
              const int64_t pos = op[i] * c.stride[i] - c.padding[i] + kp[i] * c.dilation[i];
              if (pos < 0 || pos >= in[i]) return;
              lin = lin * in[i] + pos;
            }
            const double t = xv[(b * ic + ci) * in_sz + lin] * wv[(o * icg + il) * k_sz + klin];
            acc += t;
            abs_sum += std::fabs(t);
          });
        }
        r.v.push_back(acc);
        r.max_abs_sum = std::max(r.max_abs_sum, abs_sum);
      });
  return r;
}

// Transposed convolution as the adjoint scatter: every input element adds input * weight into
// out[pos * stride - pad + k * dilation] (a different loop shape from the kernel's gather).
Ref ref_conv_transpose(const Tensor& x, const Tensor& w, const Tensor* bias, const Conv& c) {
  const int nsp = static_cast<int>(x.dim()) - 2;
  const std::vector<double> xv = values(x), wv = values(w);
  const int64_t n = x.size(0), ic = x.size(1), g = c.groups, icg = ic / g, ocg = w.size(1),
                oc = ocg * g;
  V in(x.sizes().begin() + 2, x.sizes().end()), k(w.sizes().begin() + 2, w.sizes().end()), out(nsp);
  for (int i = 0; i < nsp; ++i) {
    out[i] = (in[i] - 1) * c.stride[i] - 2 * c.padding[i] + c.dilation[i] * (k[i] - 1) +
             c.output_padding[i] + 1;
  }
  const int64_t in_sz = numel_of(in), out_sz = numel_of(out), k_sz = numel_of(k);
  Ref r;
  r.shape = {n, oc};
  r.shape.insert(r.shape.end(), out.begin(), out.end());
  r.v.assign(static_cast<size_t>(n * oc * out_sz), 0.0);
  std::vector<double> abs_sum(r.v.size(), 0.0);
  if (bias) {
    const std::vector<double> bv = values(*bias);
    for (int64_t i = 0; i < static_cast<int64_t>(r.v.size()); ++i) {
      r.v[i] = bv[(i / out_sz) % oc];
      abs_sum[i] = std::fabs(r.v[i]);
    }
  }
  r.k = icg * k_sz;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ci = 0; ci < ic; ++ci)
      testing::for_each_index(in, [&](const V& ip, int64_t ilin) {
        const double xval = xv[(b * ic + ci) * in_sz + ilin];
        for (int64_t ol = 0; ol < ocg; ++ol) {
          const int64_t o = (ci / icg) * ocg + ol;
          testing::for_each_index(k, [&](const V& kp, int64_t klin) {
            int64_t lin = 0;
            for (int i = 0; i < nsp; ++i) {
              const int64_t pos = ip[i] * c.stride[i] - c.padding[i] + kp[i] * c.dilation[i];
              if (pos < 0 || pos >= out[i]) return;
              lin = lin * out[i] + pos;
            }
            const double t = xval * wv[(ci * ocg + ol) * k_sz + klin];
            const int64_t at = (b * oc + o) * out_sz + lin;
            r.v[at] += t;
            abs_sum[at] += std::fabs(t);
          });
        }
      });
  for (double a : abs_sum) r.max_abs_sum = std::max(r.max_abs_sum, a);
  return r;
}

// Note [Convolution tolerances]
// As for matmul (test_linalg.cpp): inputs are exact in their dtype, products exact in the
// float32 (float64) accumulator, and k terms summed in any order err by at most about
// k * u * sum|terms|; tol_for() covers the final rounding to the result dtype.
::testing::AssertionResult matches(const Tensor& got, const Ref& r, ScalarType dt) {
  if (got.dtype() != dt)
    return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype());
  testing::Tol t = tol_for(dt);
  const double u = dt == f64 ? 0x1p-53 : 0x1p-24;
  t.atol += static_cast<double>(std::max<int64_t>(r.k, 1)) * u * r.max_abs_sum * 2;
  return testing::close(got, r.v, r.shape, t);
}

Ref unbatch(Ref r) {
  r.shape.erase(r.shape.begin());
  return r;
}

// One conv call through the op matching the input's spatial rank.
Tensor run_conv(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, const Conv& c) {
  const int64_t nsp = w.dim() - 2;
  if (nsp == 1) return ops::conv1d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  if (nsp == 2) return ops::conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  return ops::conv3d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
}

TEST(Conv2d, StridePaddingDilationGroupsBias) {
  struct Case {
    int64_t ic, oc, h, w, kh, kw;
    Conv c;
  };
  const std::vector<Case> cases = {
      {3, 4, 9, 8, 3, 3, {{1, 1}, {0, 0}, {1, 1}, {}, 1}},
      {3, 5, 9, 8, 3, 2, {{2, 1}, {1, 2}, {1, 1}, {}, 1}},
      {4, 6, 10, 9, 3, 3, {{1, 2}, {2, 1}, {2, 3}, {}, 1}},
      {6, 9, 7, 7, 3, 3, {{1, 1}, {1, 1}, {1, 1}, {}, 3}},  // groups
      {4, 4, 8, 8, 3, 3, {{2, 2}, {1, 1}, {1, 1}, {}, 4}},  // depthwise
      {2, 3, 5, 6, 1, 1, {{1, 1}, {0, 0}, {1, 1}, {}, 1}},  // 1x1
      {3, 2, 4, 4, 4, 4, {{1, 1}, {0, 0}, {1, 1}, {}, 1}},  // kernel == input
  };
  uint64_t seed = 1;
  for (ScalarType dt : testing::float_types()) {
    for (const Case& k : cases) {
      Tensor x = rnd({2, k.ic, k.h, k.w}, dt, seed++),
             w = rnd({k.oc, k.ic / k.c.groups, k.kh, k.kw}, dt, seed++);
      Tensor b = rnd({k.oc}, dt, seed++);
      EXPECT_TRUE(matches(run_conv(x, w, std::nullopt, k.c), ref_conv(x, w, nullptr, k.c), dt))
          << dtype_name(dt) << " ic " << k.ic << " groups " << k.c.groups;
      EXPECT_TRUE(matches(run_conv(x, w, b, k.c), ref_conv(x, w, &b, k.c), dt))
          << dtype_name(dt) << " ic " << k.ic << " groups " << k.c.groups << " (bias)";
    }
  }
}

TEST(Conv2d, UnbatchedNonContiguousAndScalarParameters) {
  uint64_t seed = 50;
  for (ScalarType dt : testing::float_types()) {
    const Conv c{{2, 2}, {1, 1}, {1, 1}, {}, 1};
    Tensor x = rnd({3, 7, 6}, dt, seed++, true), w = rnd({4, 3, 3, 3}, dt, seed++, true),
           b = rnd({4}, dt, seed++);
    EXPECT_FALSE(x.is_contiguous());
    Tensor y = ops::conv2d(x, w, b, V{2}, V{1});  // one int for both dims, as torch allows
    EXPECT_TRUE(matches(y, unbatch(ref_conv(x.unsqueeze(0), w, &b, c)), dt)) << dtype_name(dt);
    // A channels-last-like (permuted) batched input.
    Tensor xp = rnd({2, 7, 6, 3}, dt, seed++).permute(V{0, 3, 1, 2});
    EXPECT_TRUE(matches(ops::conv2d(xp, w, b, V{2, 2}, V{1, 1}), ref_conv(xp, w, &b, c), dt))
        << dtype_name(dt);
  }
  // Empty batch.
  Tensor y = ops::conv2d(rnd({0, 3, 5, 5}, f32, 1), rnd({2, 3, 3, 3}, f32, 2));
  EXPECT_EQ(y.shape_str(), "[0, 2, 3, 3]");
}

TEST(Conv1d, AndConv3d) {
  uint64_t seed = 100;
  for (ScalarType dt : testing::float_types()) {
    const Conv c1{{2}, {1}, {2}, {}, 2};
    Tensor x1 = rnd({2, 4, 11}, dt, seed++), w1 = rnd({6, 2, 3}, dt, seed++),
           b1 = rnd({6}, dt, seed++);
    EXPECT_TRUE(matches(run_conv(x1, w1, b1, c1), ref_conv(x1, w1, &b1, c1), dt)) << dtype_name(dt);
    Tensor x1u = rnd({4, 11}, dt, seed++);
    EXPECT_TRUE(
        matches(run_conv(x1u, w1, b1, c1), unbatch(ref_conv(x1u.unsqueeze(0), w1, &b1, c1)), dt));

    const Conv c3{{1, 2, 1}, {1, 0, 1}, {1, 1, 2}, {}, 1};
    Tensor x3 = rnd({2, 3, 5, 6, 5}, dt, seed++), w3 = rnd({4, 3, 2, 3, 2}, dt, seed++),
           b3 = rnd({4}, dt, seed++);
    EXPECT_TRUE(matches(run_conv(x3, w3, b3, c3), ref_conv(x3, w3, &b3, c3), dt)) << dtype_name(dt);
    const Conv c3g{{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {}, 2};
    Tensor x3g = rnd({1, 4, 4, 4, 4}, dt, seed++), w3g = rnd({2, 2, 2, 2, 2}, dt, seed++);
    EXPECT_TRUE(
        matches(run_conv(x3g, w3g, std::nullopt, c3g), ref_conv(x3g, w3g, nullptr, c3g), dt));
  }
}

TEST(ConvTranspose2d, StridePaddingOutputPaddingGroupsDilation) {
  struct Case {
    int64_t ic, ocg, h, w, kh, kw;
    Conv c;
  };
  const std::vector<Case> cases = {
      {3, 4, 5, 6, 3, 3, {{1, 1}, {0, 0}, {1, 1}, {0, 0}, 1}},
      {3, 2, 5, 4, 3, 3, {{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1}},
      {4, 3, 4, 5, 2, 3, {{2, 3}, {0, 1}, {1, 1}, {1, 2}, 2}},
      {4, 2, 4, 4, 3, 2, {{1, 2}, {1, 0}, {2, 2}, {0, 1}, 1}},  // output_padding < dilation
  };
  uint64_t seed = 200;
  for (ScalarType dt : testing::float_types()) {
    for (const Case& k : cases) {
      const int64_t oc = k.ocg * k.c.groups;
      Tensor x = rnd({2, k.ic, k.h, k.w}, dt, seed++),
             w = rnd({k.ic, k.ocg, k.kh, k.kw}, dt, seed++);
      Tensor b = rnd({oc}, dt, seed++);
      Tensor y = ops::conv_transpose2d(x, w, b, k.c.stride, k.c.padding, k.c.output_padding,
                                       k.c.groups, k.c.dilation);
      EXPECT_TRUE(matches(y, ref_conv_transpose(x, w, &b, k.c), dt))
          << dtype_name(dt) << " ic " << k.ic;
      Tensor y0 = ops::conv_transpose2d(x, w, std::nullopt, k.c.stride, k.c.padding,
                                        k.c.output_padding, k.c.groups, k.c.dilation);
      EXPECT_TRUE(matches(y0, ref_conv_transpose(x, w, nullptr, k.c), dt)) << dtype_name(dt);
    }
    // Unbatched.
    const Conv c{{2, 2}, {0, 0}, {1, 1}, {0, 0}, 1};
    Tensor x = rnd({3, 4, 4}, dt, seed++, true), w = rnd({3, 2, 2, 2}, dt, seed++);
    EXPECT_TRUE(matches(ops::conv_transpose2d(x, w, std::nullopt, V{2}),
                        unbatch(ref_conv_transpose(x.unsqueeze(0), w, nullptr, c)), dt));
  }
}

TEST(Conv2d, AFrozenWeightIsPackedOnceAndKeptWithItsStorage) {
  // Note [Pre-packed weights]: a frozen storage's weight is reordered into the primitive's layout
  // on the first call and the packed copy serves every later one. The test breaks the contract on
  // purpose (it writes the frozen weight) to see that the second call uses the packed copy.
  // bfloat16 convolutions run in oneDNN as bfloat16 on AVX512-BF16 only (elsewhere they are
  // widened to float32 on every call, and nothing is packed).
  std::vector<ScalarType> dtypes = {ScalarType::Float32};
  if (cpu_isa() >= CpuIsa::kAvx512Bf16) dtypes.push_back(ScalarType::BFloat16);
  for (ScalarType dt : dtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = random_tensor({2, 16, 12, 12}, dt, 31);
    const Tensor w = random_tensor({32, 16, 3, 3}, dt, 32);
    const Tensor want = ops::conv2d(x, w, std::nullopt, V{1, 1}, V{1, 1});
    Tensor frozen = w.clone();
    frozen.storage()->mark_frozen();
    const Tensor first = ops::conv2d(x, frozen, std::nullopt, V{1, 1}, V{1, 1});
    EXPECT_EQ(values(first), values(want));
    frozen.fill_(Scalar(0.0));
    const Tensor second = ops::conv2d(x, frozen, std::nullopt, V{1, 1}, V{1, 1});
    EXPECT_EQ(values(second), values(want));
    // An unfrozen weight is read on every call.
    Tensor plain = w.clone();
    (void)ops::conv2d(x, plain, std::nullopt, V{1, 1}, V{1, 1});
    plain.fill_(Scalar(0.0));
    EXPECT_EQ(values(ops::conv2d(x, plain, std::nullopt, V{1, 1}, V{1, 1})),
              values(ops::zeros_like(want)));
  }
}

TEST(Conv2d, FusedReluIsReluOfTheConvolution) {
  // Note [Fused convolutions]: ampjit::_conv2d_relu gives relu(conv2d(...)) bit for bit, for
  // every dtype and path: oneDNN's post-op (float32, bfloat16 native or widened), the float64
  // loop, channels-last, unbatched and empty inputs.
  const OpEntry* fused = find_op("ampjit::_conv2d_relu");
  ASSERT_NE(fused, nullptr);
  auto run_fused = [&](const Tensor& x, const Tensor& w, const Tensor& b, V stride, V pad) {
    return call_op(*fused, {IValue(x), IValue(w), IValue(b), IValue(stride), IValue(pad)}).tensor();
  };
  uint64_t seed = 700;
  for (ScalarType dt : testing::float_types()) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor w = rnd({6, 4, 3, 3}, dt, seed++), b = rnd({6}, dt, seed++);
    for (const Tensor& x :
         {rnd({2, 4, 7, 6}, dt, seed++), to_channels_last(rnd({2, 4, 7, 6}, dt, seed++)),
          rnd({4, 7, 6}, dt, seed++), rnd({0, 4, 7, 6}, dt, seed++)}) {
      const Tensor want = ops::relu(ops::conv2d(x, w, b, V{2, 1}, V{1, 1}));
      const Tensor got = run_fused(x, w, b, V{2, 1}, V{1, 1});
      EXPECT_EQ(got.shape_str(), want.shape_str());
      EXPECT_TRUE(std::ranges::equal(got.strides(), want.strides()));
      EXPECT_EQ(values(got), values(want));
    }
  }
}

TEST(Conv, Errors) {
  Tensor x = rnd({2, 3, 10, 10}, f32, 1);
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 4, 3, 3}, f32, 2));
            }),
            "Given groups=1, weight of size [8, 4, 3, 3], expected input[2, 3, 10, 10] to have 4 "
            "channels, "
            "but got 3 channels instead");
  EXPECT_EQ(
      error_of([&] {
        ops::conv2d(rnd({2, 3}, f32, 1), rnd({8, 3, 3, 3}, f32, 2));
      }),
      "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: [2, 3]");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(rnd({1, 3, 2, 2}, f32, 1), rnd({8, 3, 3, 3}, f32, 2));
            }),
            "Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). Kernel size "
            "can't be "
            "greater than actual input size");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 3, 3, 3}, bf16, 2));
            }),
            "Input type (float) and weight type (c10::BFloat16) should be the same");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 3, 3, 3}, f32, 2), rnd({8}, f64, 3));
            }),
            "Input type (float) and bias type (double) should be the same");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 3, 3, 3}, f32, 2), rnd({7}, f32, 3));
            }),
            "Given weight of size [8, 3, 3, 3], expected bias to be 1-dimensional with 8 elements, "
            "but got "
            "bias of size [7] instead");
  EXPECT_EQ(
      error_of([&] {
        ops::conv2d(x, rnd({3, 1, 3, 3}, f32, 2), std::nullopt, V{1}, V{0}, V{1}, 2);
      }),
      "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight of size "
      "[3, 1, 3, 3] instead");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 3, 3}, f32, 2));
            }),
            "Expected 3-dimensional input for 3-dimensional weight [8, 3, 3], but got "
            "4-dimensional input of "
            "size [2, 3, 10, 10] instead");
  EXPECT_EQ(
      error_of([&] {
        ops::conv2d(x, rnd({8, 3, 3, 3}, f32, 2), std::nullopt, V{1, 2, 3});
      }),
      "expected stride to be a single integer value or a list of 2 values to match the convolution "
      "dimensions, but got stride=[1, 2, 3]");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 3, 3, 3}, f32, 2), std::nullopt, V{0});
            }),
            "non-positive stride is not supported");
  EXPECT_EQ(error_of([&] {
              ops::conv2d(x, rnd({8, 3, 3, 3}, f32, 2), std::nullopt, V{1}, V{-1});
            }),
            "negative padding is not supported");
  EXPECT_THAT(error_of([&] {
                ops::conv2d(rnd({1, 3, 5, 5}, i64, 1), rnd({2, 3, 3, 3}, i64, 2));
              }),
              HasSubstr("conv2d: not implemented for dtype int64"));
  EXPECT_EQ(error_of([&] {
              ops::conv_transpose2d(x, rnd({4, 8, 3, 3}, f32, 2));
            }),
            "Given transposed=1, weight of size [4, 8, 3, 3], expected input[2, 3, 10, 10] to have "
            "4 channels, "
            "but got 3 channels instead");
  EXPECT_EQ(
      error_of([&] {
        ops::conv_transpose2d(x, rnd({3, 8, 3, 3}, f32, 2), std::nullopt, V{2, 1}, V{0}, V{2, 0});
      }),
      "output padding must be smaller than either stride or dilation, but got output_padding: (2 x "
      "0), "
      "stride: (2 x 1), dilation: (1 x 1)");
}

// --- pooling reference -------------------------------------------------------------------------

int64_t ref_out_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dil,
                     bool ceil_mode) {
  const double span =
      static_cast<double>(in + 2 * pad - dil * (k - 1) - 1) / static_cast<double>(stride);
  int64_t out = static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1;
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

struct Pool {
  int64_t kh, kw, sh, sw, ph, pw, dh = 1, dw = 1;
  bool ceil_mode = false;
  bool count_include_pad = true;
  std::optional<int64_t> divisor = std::nullopt;
};

// max (mode 0) or average (mode 1) pooling of a 4-D tensor, torch's definitions spelled out.
std::vector<double> ref_pool(const Tensor& x, const Pool& p, int mode, V* shape) {
  const std::vector<double> xv = values(x);
  const int64_t n = x.size(0), c = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t oh = ref_out_size(H, p.kh, p.ph, p.sh, p.dh, p.ceil_mode);
  const int64_t ow = ref_out_size(W, p.kw, p.pw, p.sw, p.dw, p.ceil_mode);
  *shape = {n, c, oh, ow};
  std::vector<double> out;
  for (int64_t pl = 0; pl < n * c; ++pl) {
    for (int64_t i = 0; i < oh; ++i) {
      for (int64_t j = 0; j < ow; ++j) {
        double best = -INFINITY, sum = 0;
        int64_t inside = 0, in_padded = 0;
        for (int64_t a = 0; a < p.kh; ++a) {
          for (int64_t b = 0; b < p.kw; ++b) {
            const int64_t r = i * p.sh - p.ph + a * p.dh, cc = j * p.sw - p.pw + b * p.dw;
            // Positions inside the zero-padded input count for count_include_pad.
            if (r < H + p.ph && cc < W + p.pw) ++in_padded;
            if (r < 0 || r >= H || cc < 0 || cc >= W) continue;
            const double v = xv[(pl * H + r) * W + cc];
            ++inside;
            sum += v;
            if (std::isnan(v) || std::isnan(best))
              best = NAN;
            else
              best = std::max(best, v);
          }
        }
        if (mode == 0) {
          out.push_back(best);
        } else {
          // A window wholly in the padding (possible with ceil_mode) averages to 0 in torch.
          const int64_t div = p.divisor ? *p.divisor : p.count_include_pad ? in_padded : inside;
          out.push_back(inside == 0 ? 0.0 : sum / static_cast<double>(div));
        }
      }
    }
  }
  return out;
}

const std::vector<Pool>& pool_cases() {
  static const std::vector<Pool> cases = {
      {2, 2, 2, 2, 0, 0},
      {3, 3, 2, 2, 1, 1},
      {3, 2, 2, 1, 1, 0},
      {3, 3, 2, 2, 1, 1, 1, 1, true},
      {2, 3, 3, 2, 1, 1, 1, 1, true},
      {3, 3, 3, 3, 0, 1, 1, 1, true},
      {3, 3, 1, 1, 1, 1, 2, 2},        // dilation (max only)
      {2, 2, 2, 2, 1, 0, 1, 3, true},  // dilation with ceil_mode (max only)
  };
  return cases;
}

TEST(MaxPool2d, WindowsCeilModeDilationAllDtypes) {
  uint64_t seed = 300;
  std::vector<ScalarType> types = testing::float_types();
  types.push_back(i64);
  for (ScalarType dt : types) {
    for (const Pool& p : pool_cases()) {
      Tensor x = is_floating(dt) ? rnd({2, 3, 9, 8}, dt, seed++)
                                 : random_tensor({2, 3, 9, 8}, dt, seed++, -50, 50);
      V shape;
      const std::vector<double> want = ref_pool(x, p, 0, &shape);
      Tensor y = ops::max_pool2d(x, V{p.kh, p.kw}, V{p.sh, p.sw}, V{p.ph, p.pw}, V{p.dh, p.dw},
                                 p.ceil_mode);
      EXPECT_TRUE(testing::close(y, want, shape, {0, 0}))
          << dtype_name(dt) << " k " << p.kh << "x" << p.kw << " ceil " << p.ceil_mode;
    }
  }
}

TEST(MaxPool2d, ChannelsLastPoolsInItsLayoutWithTheSameValues) {
  // Note [Channels-last tensors]: a channels-last input pools in place of layout, with the
  // row-major loop's values, NaNs included.
  uint64_t seed = 400;
  std::vector<ScalarType> types = testing::float_types();
  types.push_back(i64);
  for (ScalarType dt : types) {
    for (const Pool& p : pool_cases()) {
      Tensor x = is_floating(dt) ? rnd({2, 5, 9, 8}, dt, seed++)
                                 : random_tensor({2, 5, 9, 8}, dt, seed++, -50, 50);
      if (is_floating(dt)) x.select(1, 3).select(1, 4).select(1, 2).fill_(NAN);
      const Tensor cl = to_channels_last(x);
      ASSERT_TRUE(is_channels_last(cl));
      const auto pool = [&](const Tensor& t) {
        return ops::max_pool2d(t, V{p.kh, p.kw}, V{p.sh, p.sw}, V{p.ph, p.pw}, V{p.dh, p.dw},
                               p.ceil_mode);
      };
      const Tensor want = pool(x), got = pool(cl);
      EXPECT_TRUE(is_channels_last(got) || got.size(2) * got.size(3) == 1) << dtype_name(dt);
      const std::vector<double> a = values(got), b = values(want);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))
            << dtype_name(dt) << " k " << p.kh << "x" << p.kw << " at " << i;
    }
  }
}

TEST(MaxPool2d, NaNPropagatesUnbatchedAndDefaultStride) {
  Tensor x = rnd({1, 2, 6, 6}, f32, 1);
  x.select(1, 1).select(1, 4).select(1, 1).fill_(NAN);  // [0, 1, 4, 1]
  Tensor y = ops::max_pool2d(x, V{2});                  // stride defaults to the kernel
  V shape;
  const std::vector<double> want = ref_pool(x, {2, 2, 2, 2, 0, 0}, 0, &shape);
  EXPECT_TRUE(testing::close(y, want, shape, {0, 0}));
  EXPECT_TRUE(std::isnan(y.select(1, 1).select(1, 2).select(1, 0).item<double>()));
  // Unbatched, non-contiguous.
  Tensor u = rnd({3, 7, 7}, bf16, 2, true);
  V s2;
  const std::vector<double> w2 = ref_pool(u.unsqueeze(0), {3, 3, 2, 2, 1, 1}, 0, &s2);
  s2.erase(s2.begin());
  EXPECT_TRUE(testing::close(ops::max_pool2d(u, V{3}, V{2}, V{1}), w2, s2, {0, 0}));
}

TEST(AvgPool2d, CeilModeCountIncludePadDivisorAllDtypes) {
  uint64_t seed = 400;
  for (ScalarType dt : testing::float_types()) {
    for (const Pool& base : pool_cases()) {
      if (base.dh != 1 || base.dw != 1) continue;  // avg_pool2d has no dilation
      for (bool include : {true, false}) {
        for (std::optional<int64_t> divisor :
             {std::optional<int64_t>(), std::optional<int64_t>(5)}) {
          Pool p = base;
          p.count_include_pad = include;
          p.divisor = divisor;
          const bool noncontig = seed % 2 == 0;
          Tensor x = rnd({2, 3, 9, 8}, dt, seed++, noncontig);
          V shape;
          const std::vector<double> want = ref_pool(x, p, 1, &shape);
          Tensor y = ops::avg_pool2d(x, V{p.kh, p.kw}, V{p.sh, p.sw}, V{p.ph, p.pw}, p.ceil_mode,
                                     include, divisor);
          // At most kh*kw float additions, then one division: a few float32 ulps on top of the
          // result dtype's own rounding.
          testing::Tol t = tol_for(dt);
          t.atol += 1e-6;
          EXPECT_TRUE(testing::close(y, want, shape, t))
              << dtype_name(dt) << " k " << p.kh << "x" << p.kw << " pad " << p.ph << "," << p.pw
              << " ceil " << p.ceil_mode << " include_pad " << include << " divisor "
              << divisor.value_or(0);
        }
      }
    }
  }
}

TEST(AvgPool2d, Int64TruncatesLikeTorch) {
  Tensor x = Tensor(ops::arange(16, i64)).view(V{1, 1, 4, 4});
  Tensor y = ops::avg_pool2d(x, V{3}, V{1}, V{1});
  V shape;
  std::vector<double> want = ref_pool(x, {3, 3, 1, 1, 1, 1}, 1, &shape);
  for (double& v : want) v = std::trunc(v);
  EXPECT_TRUE(testing::close(y, want, shape, {0, 0}));
}

// adaptive_avg_pool2d: cell (i, j) averages rows [floor(i*H/oh), ceil((i+1)*H/oh)) and the
// matching columns.
std::vector<double> ref_adaptive(const Tensor& x, int64_t oh, int64_t ow) {
  const std::vector<double> xv = values(x);
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  std::vector<double> out;
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        const int64_t r0 = static_cast<int64_t>(std::floor(static_cast<double>(i * H) / oh));
        const int64_t r1 = static_cast<int64_t>(std::ceil(static_cast<double>((i + 1) * H) / oh));
        const int64_t c0 = static_cast<int64_t>(std::floor(static_cast<double>(j * W) / ow));
        const int64_t c1 = static_cast<int64_t>(std::ceil(static_cast<double>((j + 1) * W) / ow));
        double s = 0;
        for (int64_t r = r0; r < r1; ++r)
          for (int64_t c = c0; c < c1; ++c) s += xv[(pl * H + r) * W + c];
        out.push_back(s / static_cast<double>((r1 - r0) * (c1 - c0)));
      }
  return out;
}

TEST(AdaptiveAvgPool2d, OutputSizesAndDtypes) {
  uint64_t seed = 500;
  for (ScalarType dt : testing::float_types()) {
    for (const V& os : {V{3, 2}, V{1, 1}, V{7, 5}, V{10, 8}, V{4, 3}}) {
      const bool noncontig = seed % 2 == 0;
      Tensor x = rnd({2, 3, 7, 5}, dt, seed++, noncontig);
      testing::Tol t = tol_for(dt);
      t.atol += 1e-6;
      EXPECT_TRUE(testing::close(ops::adaptive_avg_pool2d(x, os), ref_adaptive(x, os[0], os[1]),
                                 V{2, 3, os[0], os[1]}, t))
          << dtype_name(dt) << " " << shape_str(os);
    }
  }
  Tensor u = rnd({3, 6, 6}, f64, 1);
  EXPECT_TRUE(testing::close(ops::adaptive_avg_pool2d(u, V{4}), ref_adaptive(u.unsqueeze(0), 4, 4),
                             V{3, 4, 4}, tol_for(f64)));
}

TEST(Pool, Errors) {
  Tensor x = rnd({1, 3, 6, 6}, f32, 1);
  EXPECT_EQ(error_of([&] { ops::max_pool2d(x, V{3}, V{1}, V{2}); }),
            "pad should be at most half of kernel size, but got pad=2 and kernel_size=3");
  EXPECT_EQ(error_of([&] { ops::max_pool2d(x, V{0}); }), "stride should not be zero");
  EXPECT_EQ(error_of([&] { ops::max_pool2d(x, V{0}, V{1}); }),
            "kernel size should be greater than zero, but got kH: 0 kW: 0");
  EXPECT_EQ(error_of([&] { ops::max_pool2d(x, V{2}, V{0}); }), "stride should not be zero");
  EXPECT_EQ(error_of([&] {
              ops::max_pool2d(x, V{2, 2, 2});
            }),
            "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  EXPECT_EQ(error_of([&] {
              ops::max_pool2d(rnd({1, 3, 2, 2}, f32, 2), V{3}, V{1}, V{0});
            }),
            "Given input size: (3x2x2). Calculated output size: (3x0x0). Output size is too small");
  EXPECT_EQ(error_of([&] {
              ops::max_pool2d(rnd({6, 6}, f32, 2), V{2});
            }),
            "max_pool2d: Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
            "input, but "
            "got: [6, 6]");
  EXPECT_EQ(error_of([&] { ops::avg_pool2d(x, V{2}, V{}, V{0}, false, true, int64_t{0}); }),
            "divisor must be not zero");
  EXPECT_EQ(error_of([&] {
              ops::adaptive_avg_pool2d(x, V{-1, 2});
            }),
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
            "received {-1, 2}");
  EXPECT_EQ(error_of([&] {
              ops::adaptive_avg_pool2d(rnd({1, 0, 4}, f32, 2), V{2, 2});
            }),
            "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
            "but input has "
            "sizes [1, 0, 4] with dimension 1 being empty");
  EXPECT_THAT(error_of([&] {
                ops::max_pool2d(rnd({1, 1, 4, 4}, ScalarType::Int32, 1), V{2});
              }),
              HasSubstr("max_pool2d: not implemented for dtype int32"));
}

}  // namespace
}  // namespace ampjit
