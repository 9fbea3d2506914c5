// Matrix products (mm, bmm, mv, dot, matmul, addmm, addmv, addbmm, baddbmm, linear and their
// in-place / out= forms) against an independent float64 reference written as naive loops here,
// over float32/float64/float16/bfloat16 (and the integer types where torch has them), contiguous,
// transposed, strided and broadcast operands, and the error messages of bad inputs.
#include <gmock/gmock.h>

#include <thread>

#include "runtime/cpu_features.h"
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
                     f16 = ScalarType::Float16, bf16 = ScalarType::BFloat16,
                     i64 = ScalarType::Int64;

// --- the reference -------------------------------------------------------------------------

// A float64 result plus what its error bound needs: the contraction length and the largest
// sum of |products| feeding any one element.
struct Ref {
  std::vector<double> v;
  V shape;
  int64_t k = 0;
  double max_abs_sum = 0;
};

// numpy/torch matmul semantics on row-major float64 data, written out independently: a 1-D left
// operand is a row, a 1-D right operand a column (their dims are dropped from the result), batch
// dims broadcast from the right.
Ref ref_matmul(const Tensor& a, const Tensor& b) {
  const std::vector<double> av = values(a), bv = values(b);
  V as(a.sizes().begin(), a.sizes().end()), bs(b.sizes().begin(), b.sizes().end());
  const bool a1 = as.size() == 1, b1 = bs.size() == 1;
  if (a1) as.insert(as.begin(), 1);
  if (b1) bs.push_back(1);
  const int64_t n = as[as.size() - 2], k = as.back(), p = bs.back();
  EXPECT_EQ(bs[bs.size() - 2], k);
  const V abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  const size_t nb = std::max(abatch.size(), bbatch.size());
  V batch(nb, 1);
  for (size_t i = 0; i < nb; ++i) {
    const int64_t x = i + abatch.size() >= nb ? abatch[i + abatch.size() - nb] : 1;
    const int64_t y = i + bbatch.size() >= nb ? bbatch[i + bbatch.size() - nb] : 1;
    batch[i] = std::max(x, y);
  }
  // Offset of a batch index into an operand's batch dims (size-1 dims broadcast).
  auto batch_offset = [&](const V& idx, const V& own) {
    int64_t off = 0;
    for (size_t i = 0; i < own.size(); ++i) {
      const int64_t d = own[i];
      off = off * d + (d == 1 ? 0 : idx[i + nb - own.size()]);
    }
    return off;
  };
  Ref r;
  r.k = k;
  r.shape = batch;
  if (!a1) r.shape.push_back(n);
  if (!b1) r.shape.push_back(p);
  testing::for_each_index(batch, [&](const V& idx, int64_t) {
    const int64_t ao = batch_offset(idx, abatch) * n * k, bo = batch_offset(idx, bbatch) * k * p;
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < p; ++j) {
        double s = 0, sa = 0;
        for (int64_t q = 0; q < k; ++q) {
          const double t = av[ao + i * k + q] * bv[bo + q * p + j];
          s += t;
          sa += std::fabs(t);
        }
        r.v.push_back(s);
        r.max_abs_sum = std::max(r.max_abs_sum, sa);
      }
    }
  });
  return r;
}

// ref = beta * addend (broadcast to ref's shape) + alpha * ref.
Ref ref_add(Ref r, const Tensor& addend, double beta, double alpha) {
  const std::vector<double> cv = values(addend);
  const V cs(addend.sizes().begin(), addend.sizes().end());
  testing::for_each_index(r.shape, [&](const V& idx, int64_t lin) {
    int64_t off = 0;
    for (size_t i = 0; i < cs.size(); ++i) {
      off = off * cs[i] + (cs[i] == 1 ? 0 : idx[i + r.shape.size() - cs.size()]);
    }
    r.v[lin] = (beta == 0 ? 0 : beta * cv[off]) + alpha * r.v[lin];
  });
  r.max_abs_sum *= std::fabs(alpha);
  return r;
}

// Note [Matmul tolerances]
// Inputs are already rounded to their dtype, so every product a*b is exact in the accumulation
// type (float for float32/float16/bfloat16, double for float64) and the only errors are
//  (1) the accumulation: any summation order of k terms errs by at most about k * u * sum|a*b|
//      (u = unit roundoff of the accumulator, 2^-24 or 2^-53), so the absolute tolerance grows
//      with the contraction length k and the largest sum of |products|;
//  (2) the single rounding of the result to its dtype, which tol_for()'s relative tolerance
//      (a few ulps of the result dtype) covers.
// Integer products are exact.
testing::Tol gemm_tol(ScalarType dt, const Ref& r) {
  testing::Tol t = tol_for(dt);
  if (!is_floating(dt)) return t;
  const double u = dt == f64 ? 0x1p-53 : 0x1p-24;
  t.atol += static_cast<double>(std::max<int64_t>(r.k, 1)) * u * r.max_abs_sum * 2;
  return t;
}

::testing::AssertionResult matches(const Tensor& got, const Ref& r, ScalarType dt) {
  if (got.dtype() != dt)
    return ::testing::AssertionFailure() << "dtype " << dtype_name(got.dtype());
  return testing::close(got, r.v, r.shape, gemm_tol(dt, r));
}

double lo_of(ScalarType dt) {
  return is_floating(dt) ? -2.0 : -5.0;
}
double hi_of(ScalarType dt) {
  return is_floating(dt) ? 2.0 : 5.0;
}
Tensor rnd(V shape, ScalarType dt, uint64_t seed, bool noncontig = false) {
  return random_tensor(std::move(shape), dt, seed, lo_of(dt), hi_of(dt), noncontig);
}

std::vector<ScalarType> all_types() {
  std::vector<ScalarType> v = testing::float_types();
  v.push_back(i64);
  v.push_back(ScalarType::Int32);
  return v;
}

// --- mm, bmm, mv, dot -----------------------------------------------------------------------

TEST(Mm, AllDtypesAndShapes) {
  const std::vector<V> shapes = {{5, 7, 3}, {33, 64, 17}, {1, 8, 1},
                                 {1, 1, 1}, {16, 1, 9},   {3, 200, 2}};
  uint64_t seed = 1;
  for (ScalarType dt : all_types()) {
    for (const V& s : shapes) {
      Tensor a = rnd({s[0], s[1]}, dt, seed++), b = rnd({s[1], s[2]}, dt, seed++);
      Tensor c = ops::mm(a, b);
      EXPECT_TRUE(matches(c, ref_matmul(a, b), dt)) << dtype_name(dt) << " " << shape_str(s);
      EXPECT_TRUE(c.is_contiguous());
    }
  }
}

TEST(Mm, NonContiguousTransposedAndStridedOperands) {
  uint64_t seed = 100;
  for (ScalarType dt : all_types()) {
    // Transposed parents (column-major matrices), as random_tensor(noncontig) builds them.
    Tensor a = rnd({9, 13}, dt, seed++, true), b = rnd({13, 6}, dt, seed++, true);
    EXPECT_FALSE(a.is_contiguous());
    EXPECT_TRUE(matches(ops::mm(a, b), ref_matmul(a, b), dt)) << dtype_name(dt);
    // Explicit .t() of both.
    Tensor at = rnd({13, 9}, dt, seed++).t(), bt = rnd({6, 13}, dt, seed++).t();
    EXPECT_TRUE(matches(ops::mm(at, bt), ref_matmul(at, bt), dt)) << dtype_name(dt);
    // Both strides non-unit (a column slice with step 2): copied before the gemm.
    Tensor as = rnd({9, 26}, dt, seed++).slice(1, 0, std::nullopt, 2);
    Tensor bs = rnd({26, 12}, dt, seed++).slice(0, 0, std::nullopt, 2).slice(1, 1, std::nullopt, 2);
    EXPECT_TRUE(matches(ops::mm(as, bs), ref_matmul(as, bs), dt)) << dtype_name(dt);
    // A row-major matrix with a padded leading dimension (a narrow of a wider matrix).
    Tensor an = rnd({9, 20}, dt, seed++).narrow(1, 3, 13);
    EXPECT_TRUE(matches(ops::mm(an, b), ref_matmul(an, b), dt)) << dtype_name(dt);
    // Broadcast (stride-0) operands.
    Tensor ae = rnd({1, 13}, dt, seed++).expand(V{9, 13});
    Tensor be = rnd({13, 1}, dt, seed++).expand(V{13, 6});
    EXPECT_TRUE(matches(ops::mm(ae, be), ref_matmul(ae, be), dt)) << dtype_name(dt);
  }
}

TEST(Mm, EmptyDimensions) {
  for (ScalarType dt : {f32, bf16, f64, i64}) {
    Tensor c = ops::mm(rnd({0, 3}, dt, 1), rnd({3, 4}, dt, 2));
    EXPECT_EQ(c.shape_str(), "[0, 4]");
    Tensor z = ops::mm(rnd({2, 0}, dt, 1), rnd({0, 3}, dt, 2));
    EXPECT_TRUE(testing::close(z, std::vector<double>(6, 0.0), V{2, 3}, tol_for(dt)))
        << dtype_name(dt);
  }
}

TEST(Mm, IntegerProductsAreExactAndWrapLikeTorch) {
  // int8 accumulates in int8 in torch, i.e. modulo 2^8.
  Tensor a = Tensor(ops::full(V{2, 3}, 100, ScalarType::Int8));
  Tensor b = Tensor(ops::full(V{3, 2}, 3, ScalarType::Int8));
  Tensor c = ops::mm(a, b);  // 900 = 3*256 + 132 -> 132 - 256 = -124
  EXPECT_EQ(values(c), std::vector<double>(4, -124.0));
  Tensor big = Tensor(ops::full(V{1, 2}, int64_t{1} << 40, i64));
  Tensor one = Tensor(ops::full(V{2, 1}, int64_t{1} << 20, i64));
  EXPECT_EQ(Tensor(ops::mm(big, one)).item<int64_t>(), int64_t{1} << 61);
}

TEST(Mm, RepeatedCallsReuseCachedPrimitivesAndThreadsAgree) {
  Tensor a = rnd({31, 40}, f32, 7), b = rnd({40, 29}, f32, 8);
  const std::vector<double> first = values(ops::mm(a, b));
  for (int i = 0; i < 3; ++i) EXPECT_EQ(values(ops::mm(a, b)), first);
  // Several threads running the same cached primitives at once.
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int t = 0; t < 3; ++t) {
    ts.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        if (values(ops::mm(a, b)) != first) ++bad;
        Tensor x = rnd({8, 40}, bf16, 9);
        (void)ops::mm(x, b.to(bf16));
      }
    });
  }
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(Mm, LargerFloat32ProductStaysWithinTheAccumulationBound) {
  Tensor a = rnd({70, 600}, f32, 11), b = rnd({600, 50}, f32, 12, true);
  EXPECT_TRUE(matches(ops::mm(a, b), ref_matmul(a, b), f32));
  Tensor ab = rnd({70, 600}, bf16, 13), bb = rnd({600, 50}, bf16, 14);
  EXPECT_TRUE(matches(ops::mm(ab, bb), ref_matmul(ab, bb), bf16));
  Tensor ah = rnd({70, 600}, f16, 15, true), bh = rnd({600, 50}, f16, 16);
  EXPECT_TRUE(matches(ops::mm(ah, bh), ref_matmul(ah, bh), f16));
}

// float16/bfloat16 products with enough rows are split into per-thread row panels (Note [Row
// panels for reduced-precision gemm]); cover them with every operand orientation, an addend, a
// bias, uneven row counts, and B both small (a private copy per thread) and large (shared).
TEST(Mm, ReducedPrecisionRowPanels) {
  uint64_t seed = 150;
  for (ScalarType dt : {bf16, f16}) {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        Tensor a = rnd({131, 45}, dt, seed++, ta), b = rnd({45, 23}, dt, seed++, tb);
        EXPECT_TRUE(matches(ops::mm(a, b), ref_matmul(a, b), dt))
            << dtype_name(dt) << " " << ta << tb;
        Tensor self = rnd({131, 23}, dt, seed++);
        EXPECT_TRUE(matches(ops::addmm(self, a, b, 0.5, -2.0),
                            ref_add(ref_matmul(a, b), self, 0.5, -2), dt));
      }
    }
    // A B too large for a private copy per thread (one shared copy, widened in shares).
    Tensor ab = rnd({130, 520}, dt, seed++), bb = rnd({520, 520}, dt, seed++, true);
    EXPECT_TRUE(matches(ops::mm(ab, bb), ref_matmul(ab, bb), dt)) << dtype_name(dt) << " shared B";
    Tensor x = rnd({2, 67, 19}, dt, seed++), w = rnd({7, 19}, dt, seed++),
           bias = rnd({7}, dt, seed++);
    EXPECT_TRUE(matches(ops::linear(x, w, bias), ref_add(ref_matmul(x, w.t()), bias, 1, 1), dt));
    Tensor e = ops::mm(rnd({128, 0}, dt, 1), rnd({0, 5}, dt, 2));
    EXPECT_TRUE(testing::close(e, std::vector<double>(640, 0.0), V{128, 5}, tol_for(dt)));
  }
}

TEST(Mm, OutVariant) {
  Tensor a = rnd({4, 5}, f32, 1), b = rnd({5, 3}, f32, 2);
  Tensor out = Tensor::empty(V{7}, f32);  // wrong shape: resized, as torch does
  Tensor r = ops::mm_out(a, b, out);
  EXPECT_EQ(r.storage().get(), out.storage().get());
  EXPECT_TRUE(matches(out, ref_matmul(a, b), f32));
  // A strided out tensor of the right shape keeps its strides.
  Tensor parent = Tensor::empty(V{3, 4}, f32);
  Tensor ot = parent.t();
  ops::mm_out(a, b, ot);
  EXPECT_TRUE(matches(ot, ref_matmul(a, b), f32));
  EXPECT_THAT(error_of([&] {
                ops::mm_out(a, b, Tensor::empty(V{4, 3}, f64));
              }),
              HasSubstr("Expected out tensor to have dtype float, but got double instead"));
}

TEST(Mm, Errors) {
  Tensor a = rnd({2, 3}, f32, 1), b = rnd({4, 5}, f32, 2);
  EXPECT_EQ(error_of([&] { ops::mm(a, b); }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(error_of([&] {
              ops::mm(a, rnd({3, 5}, bf16, 3));
            }),
            "expected m1 and m2 to have the same dtype, but got: float != c10::BFloat16");
  EXPECT_EQ(error_of([&] { ops::mm(rnd({2, 3, 4}, f32, 1), b); }), "self must be a matrix");
  EXPECT_EQ(error_of([&] { ops::mm(a, rnd({3}, f32, 1)); }), "mat2 must be a matrix");
  EXPECT_THAT(error_of([&] {
                ops::mm(rnd({2, 2}, ScalarType::Bool, 1), rnd({2, 2}, ScalarType::Bool, 2));
              }),
              HasSubstr("not implemented for dtype bool"));
}

TEST(Bmm, AllDtypesLayoutsAndOut) {
  uint64_t seed = 200;
  for (ScalarType dt : all_types()) {
    Tensor a = rnd({4, 5, 6}, dt, seed++), b = rnd({4, 6, 3}, dt, seed++, true);
    EXPECT_TRUE(matches(ops::bmm(a, b), ref_matmul(a, b), dt)) << dtype_name(dt);
    // Batch dim not outermost in memory (a permuted parent) and a broadcast batch.
    Tensor ap = rnd({5, 4, 6}, dt, seed++).permute(V{1, 0, 2});
    Tensor be = rnd({1, 6, 3}, dt, seed++).expand(V{4, 6, 3});
    EXPECT_TRUE(matches(ops::bmm(ap, be), ref_matmul(ap, be), dt)) << dtype_name(dt);
  }
  Tensor a = rnd({2, 3, 4}, f32, 1), b = rnd({2, 4, 5}, f32, 2);
  Tensor out = Tensor::empty(V{0}, f32);
  ops::bmm_out(a, b, out);
  EXPECT_TRUE(matches(out, ref_matmul(a, b), f32));
  EXPECT_EQ(Tensor(ops::bmm(rnd({0, 3, 4}, f32, 1), rnd({0, 4, 5}, f32, 2))).shape_str(),
            "[0, 3, 5]");
}

TEST(Bmm, Errors) {
  Tensor a = rnd({2, 3, 4}, f32, 1);
  EXPECT_EQ(
      error_of([&] {
        ops::bmm(a, rnd({2, 5, 6}, f32, 2));
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].");
  EXPECT_EQ(
      error_of([&] {
        ops::bmm(a, rnd({3, 4, 6}, f32, 2));
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [3, 4].");
  EXPECT_EQ(error_of([&] { ops::bmm(rnd({3, 4}, f32, 1), a); }), "batch1 must be a 3D tensor");
  EXPECT_EQ(error_of([&] {
              ops::bmm(a, rnd({2, 4, 6}, bf16, 2));
            }),
            "expected scalar type Float but found BFloat16");
}

TEST(Mv, AllDtypesAndLayouts) {
  uint64_t seed = 300;
  for (ScalarType dt : all_types()) {
    Tensor m = rnd({7, 9}, dt, seed++, true), v = rnd({9}, dt, seed++, true);
    EXPECT_TRUE(matches(ops::mv(m, v), ref_matmul(m, v), dt)) << dtype_name(dt);
  }
  EXPECT_EQ(error_of([&] {
              ops::mv(rnd({2, 3}, f32, 1), rnd({4}, f32, 2));
            }),
            "size mismatch, got input (2), mat (2x3), vec (4)");
  EXPECT_EQ(error_of([&] {
              ops::mv(rnd({2, 3}, f32, 1), rnd({3, 1}, f32, 2));
            }),
            "vector + matrix @ vector expected, got 1, 2, 2");
}

TEST(Dot, AllDtypesAndStrides) {
  uint64_t seed = 400;
  for (ScalarType dt : all_types()) {
    for (int64_t n : {1, 7, 8, 100}) {
      Tensor x = rnd({n}, dt, seed++), y = rnd({n}, dt, seed++, true);
      Tensor d = ops::dot(x, y);
      EXPECT_EQ(d.dim(), 0);
      EXPECT_TRUE(matches(d, ref_matmul(x, y), dt)) << dtype_name(dt) << " n=" << n;
    }
  }
  Tensor e = ops::dot(rnd({0}, f32, 1), rnd({0}, f32, 2));
  EXPECT_EQ(e.item<double>(), 0.0);
}

TEST(Dot, Errors) {
  EXPECT_EQ(error_of([&] { ops::dot(rnd({3}, f32, 1), rnd({4}, f32, 2)); }),
            "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
            "elements, but got 3 and 4 elements respectively");
  EXPECT_EQ(error_of([&] { ops::dot(rnd({3}, f32, 1), rnd({3}, bf16, 2)); }),
            "dot : expected both vectors to have same dtype, but found Float and BFloat16");
  EXPECT_EQ(error_of([&] {
              ops::dot(rnd({2, 2}, f32, 1), rnd({2, 2}, f32, 2));
            }),
            "1D tensors expected, but got 2D and 2D tensors");
}

// --- matmul -----------------------------------------------------------------------------------

TEST(Matmul, EveryRankCombination) {
  // (left shape, right shape): dot, mv, vector-matrix, mm, folded N-D x 1-D / 2-D, 1-D / 2-D x
  // N-D, batched with and without batch broadcasting.
  const std::vector<std::pair<V, V>> cases = {
      {{5}, {5}},
      {{3, 5}, {5}},
      {{5}, {5, 4}},
      {{3, 5}, {5, 4}},
      {{2, 3, 5}, {5}},
      {{2, 3, 5}, {5, 4}},
      {{2, 2, 3, 5}, {5, 4}},
      {{5}, {2, 5, 4}},
      {{3, 5}, {2, 5, 4}},
      {{2, 3, 5}, {2, 5, 4}},
      {{2, 1, 3, 5}, {4, 5, 2}},
      {{1, 3, 5}, {6, 5, 2}},
      {{6, 3, 5}, {1, 5, 2}},
      {{2, 3, 3, 5}, {5}},
      {{5}, {3, 2, 5, 4}},
      {{2, 1, 3, 5}, {1, 2, 5, 4}},
  };
  uint64_t seed = 500;
  for (ScalarType dt : all_types()) {
    for (const auto& [sa, sb] : cases) {
      for (bool nc : {false, true}) {
        Tensor a = rnd(sa, dt, seed++, nc), b = rnd(sb, dt, seed++, nc);
        EXPECT_TRUE(matches(ops::matmul(a, b), ref_matmul(a, b), dt))
            << dtype_name(dt) << " " << shape_str(sa) << " @ " << shape_str(sb)
            << (nc ? " noncontig" : "");
      }
    }
  }
}

TEST(Matmul, OutVariantAndErrors) {
  Tensor a = rnd({2, 3, 4}, f32, 1), b = rnd({4, 5}, f32, 2);
  Tensor out = Tensor::empty(V{1}, f32);
  ops::matmul_out(a, b, out);
  EXPECT_TRUE(matches(out, ref_matmul(a, b), f32));
  EXPECT_EQ(error_of([&] { ops::matmul(Tensor::empty(V{}, f32), b); }),
            "both arguments to matmul need to be at least 1D, but they are 0D and 2D");
  EXPECT_EQ(error_of([&] {
              ops::matmul(rnd({2, 3}, f32, 1), b);
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)");
  EXPECT_EQ(
      error_of([&] {
        ops::matmul(a, rnd({2, 5, 6}, f32, 3));
      }),
      "Expected size for first two dimensions of batch2 tensor to be: [2, 4] but got: [2, 5].");
  EXPECT_THAT(error_of([&] {
                ops::matmul(rnd({2, 3, 4}, f32, 1), rnd({3, 4, 6}, f32, 3));
              }),
              HasSubstr("must match the size of tensor b (3) at non-singleton dimension 0"));
  EXPECT_EQ(error_of([&] {
              ops::matmul(a, rnd({4, 5}, bf16, 3));
            }),
            "expected m1 and m2 to have the same dtype, but got: float != c10::BFloat16");
}

// --- addmm, addmv, addbmm, baddbmm ----------------------------------------------------------

TEST(Addmm, BetaAlphaAndAddendShapes) {
  uint64_t seed = 600;
  const std::vector<V> addend_shapes = {{6}, {4, 6}, {1, 6}, {4, 1}, {}};
  const std::vector<std::pair<double, double>> coefs = {{1, 1}, {0.5, 2}, {0, 1}, {-1, 0.25}};
  for (ScalarType dt : all_types()) {
    for (const V& cs : addend_shapes) {
      for (auto [beta, alpha] : coefs) {
        if (!is_floating(dt) && (beta != std::floor(beta) || alpha != std::floor(alpha))) continue;
        Tensor self = rnd(cs, dt, seed++), m1 = rnd({4, 5}, dt, seed++),
               m2 = rnd({5, 6}, dt, seed++, true);
        const Scalar b = is_floating(dt) ? Scalar(beta) : Scalar(static_cast<int64_t>(beta));
        const Scalar a = is_floating(dt) ? Scalar(alpha) : Scalar(static_cast<int64_t>(alpha));
        Tensor got = ops::addmm(self, m1, m2, b, a);
        EXPECT_TRUE(matches(got, ref_add(ref_matmul(m1, m2), self, beta, alpha), dt))
            << dtype_name(dt) << " self " << shape_str(cs) << " beta " << beta << " alpha "
            << alpha;
      }
    }
  }
}

TEST(Addmm, BetaZeroIgnoresNaNInSelf) {
  for (ScalarType dt : {f32, bf16, f64}) {
    Tensor self = Tensor(ops::full(V{3, 2}, std::nan(""), dt));
    Tensor m1 = rnd({3, 4}, dt, 1), m2 = rnd({4, 2}, dt, 2);
    Tensor got = ops::addmm(self, m1, m2, 0.0, 1.0);
    EXPECT_TRUE(matches(got, ref_matmul(m1, m2), dt)) << dtype_name(dt);
  }
}

TEST(Addmm, InPlaceAndOut) {
  for (ScalarType dt : testing::float_types()) {
    Tensor self = rnd({4, 6}, dt, 1), m1 = rnd({4, 5}, dt, 2), m2 = rnd({5, 6}, dt, 3);
    const Ref want = ref_add(ref_matmul(m1, m2), self, 0.5, 2);
    Tensor r = ops::addmm_(self, m1, m2, 0.5, 2.0);
    EXPECT_TRUE(r.is_same(self));
    EXPECT_TRUE(matches(self, want, dt)) << dtype_name(dt);
    Tensor s2 = rnd({6}, dt, 4), out = Tensor::empty(V{4, 6}, dt);
    ops::addmm_out(s2, m1, m2, 1.0, 1.0, out);
    EXPECT_TRUE(matches(out, ref_add(ref_matmul(m1, m2), s2, 1, 1), dt)) << dtype_name(dt);
  }
  Tensor small = rnd({4}, f32, 1);
  EXPECT_THAT(error_of([&] {
                ops::addmm_(small, rnd({4, 5}, f32, 2), rnd({5, 4}, f32, 3));
              }),
              HasSubstr("doesn't match the broadcast shape"));
}

TEST(Addmm, Errors) {
  Tensor m1 = rnd({2, 3}, f32, 1), m2 = rnd({3, 4}, f32, 2);
  EXPECT_EQ(error_of([&] { ops::addmm(rnd({4}, bf16, 3), m1, m2); }),
            "self and mat2 must have the same dtype, but got BFloat16 and Float");
  EXPECT_EQ(error_of([&] {
              ops::addmm(rnd({4}, f32, 3), m1, rnd({3, 4}, f16, 4));
            }),
            "expected m1 and m2 to have the same dtype, but got: float != c10::Half");
  EXPECT_EQ(error_of([&] {
              ops::addmm(rnd({4}, f32, 3), m1, rnd({5, 4}, f32, 4));
            }),
            "mat1 and mat2 shapes cannot be multiplied (2x3 and 5x4)");
  EXPECT_EQ(error_of([&] { ops::addmm(rnd({3}, f32, 3), m1, m2); }),
            "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
            "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]");
  EXPECT_EQ(error_of([&] {
              ops::addmm(rnd({4}, f32, 3), rnd({2, 3, 1}, f32, 4), m2);
            }),
            "mat1 must be a matrix, got 3-D tensor");
}

TEST(Addmv, AllDtypes) {
  uint64_t seed = 700;
  for (ScalarType dt : all_types()) {
    for (const V& cs : {V{7}, V{1}, V{}}) {
      Tensor self = rnd(cs, dt, seed++), m = rnd({7, 9}, dt, seed++, true),
             v = rnd({9}, dt, seed++);
      const double beta = is_floating(dt) ? 0.5 : 2, alpha = is_floating(dt) ? 1.5 : 3;
      const Scalar b = is_floating(dt) ? Scalar(beta) : Scalar(static_cast<int64_t>(beta));
      const Scalar a = is_floating(dt) ? Scalar(alpha) : Scalar(static_cast<int64_t>(alpha));
      EXPECT_TRUE(
          matches(ops::addmv(self, m, v, b, a), ref_add(ref_matmul(m, v), self, beta, alpha), dt))
          << dtype_name(dt) << " self " << shape_str(cs);
    }
  }
  EXPECT_EQ(error_of([&] {
              ops::addmv(rnd({3}, f32, 1), rnd({2, 3}, f32, 2), rnd({3}, f32, 3));
            }),
            "size mismatch, got input (3), mat (2x3), vec (3)");
}

// addbmm: beta * self + alpha * sum_b batch1[b] @ batch2[b].
Ref ref_addbmm(const Tensor& self, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
  Ref bm = ref_matmul(b1, b2);  // [B, n, p]
  Ref r;
  const int64_t nb = b1.size(0), n = b1.size(1), p = b2.size(2);
  r.shape = {n, p};
  r.k = b1.size(2) * nb;
  r.max_abs_sum = bm.max_abs_sum * static_cast<double>(nb);
  r.v.assign(static_cast<size_t>(n * p), 0.0);
  for (int64_t b = 0; b < nb; ++b) {
    for (int64_t i = 0; i < n * p; ++i) r.v[i] += bm.v[b * n * p + i];
  }
  return ref_add(r, self, beta, alpha);
}

TEST(Addbmm, AllDtypes) {
  uint64_t seed = 800;
  for (ScalarType dt : all_types()) {
    Tensor self = rnd({3, 5}, dt, seed++), b1 = rnd({4, 3, 6}, dt, seed++, true),
           b2 = rnd({4, 6, 5}, dt, seed++);
    const Scalar two = is_floating(dt) ? Scalar(2.0) : Scalar(int64_t{2});
    EXPECT_TRUE(matches(ops::addbmm(self, b1, b2, two, two), ref_addbmm(self, b1, b2, 2, 2), dt))
        << dtype_name(dt);
    Tensor row = rnd({5}, dt, seed++);
    EXPECT_TRUE(matches(ops::addbmm(row, b1, b2), ref_addbmm(row, b1, b2, 1, 1), dt))
        << dtype_name(dt);
  }
  EXPECT_EQ(error_of([&] {
              ops::addbmm(rnd({3, 5}, f32, 1), rnd({4, 3, 6}, f32, 2), rnd({3, 6, 5}, f32, 3));
            }),
            "batch1 and batch2 must have same number of batches, got 4 and 3");
  EXPECT_EQ(error_of([&] {
              ops::addbmm(rnd({3, 5}, f32, 1), rnd({4, 3, 6}, f32, 2), rnd({4, 7, 5}, f32, 3));
            }),
            "Incompatible matrix sizes for bmm (3x6 and 7x5)");
}

TEST(Baddbmm, AllDtypesInPlaceAndErrors) {
  uint64_t seed = 900;
  for (ScalarType dt : all_types()) {
    for (const V& cs : {V{2, 3, 5}, V{3, 5}, V{1, 1, 5}}) {
      Tensor self = rnd(cs, dt, seed++), b1 = rnd({2, 3, 4}, dt, seed++),
             b2 = rnd({2, 4, 5}, dt, seed++, true);
      const Scalar beta = is_floating(dt) ? Scalar(-0.5) : Scalar(int64_t{-1});
      const double bv = is_floating(dt) ? -0.5 : -1;
      EXPECT_TRUE(matches(ops::baddbmm(self, b1, b2, beta, 1.0),
                          ref_add(ref_matmul(b1, b2), self, bv, 1), dt))
          << dtype_name(dt) << " self " << shape_str(cs);
    }
  }
  Tensor self = rnd({2, 3, 5}, bf16, 1), b1 = rnd({2, 3, 4}, bf16, 2), b2 = rnd({2, 4, 5}, bf16, 3);
  const Ref want = ref_add(ref_matmul(b1, b2), self, 1, 1);
  ops::baddbmm_(self, b1, b2);
  EXPECT_TRUE(matches(self, want, bf16));
  EXPECT_EQ(error_of([&] {
              ops::baddbmm(rnd({2, 3, 5}, f32, 1), b1, b2);
            }),
            "Input dtypes must be the same, got: input float, batch1: c10::BFloat16, batch2: "
            "c10::BFloat16");
}

// --- linear ---------------------------------------------------------------------------------

TEST(Linear, AFrozenWeightIsPackedOnceAndKeptWithItsStorage) {
  // Note [Pre-packed weights]: a frozen linear weight is packed into the matmul's layout on the
  // first call. The test breaks the contract on purpose (it writes the frozen weight) to see that
  // the second call uses the packed copy; an unfrozen weight is read on every call.
  std::vector<ScalarType> dtypes = {ScalarType::Float32};
  if (cpu_isa() >= CpuIsa::kAvx512Bf16) dtypes.push_back(ScalarType::BFloat16);
  for (ScalarType dt : dtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = random_tensor({5, 48}, dt, 41);
    const Tensor w = random_tensor({96, 48}, dt, 42);
    const Tensor b = random_tensor({96}, dt, 43);
    const Tensor want = ops::linear(x, w, b);
    Tensor frozen = w.clone();
    frozen.storage()->mark_frozen();
    EXPECT_TRUE(testing::close(ops::linear(x, frozen, b), values(want), {5, 96}, tol_for(dt)));
    frozen.fill_(Scalar(0.0));
    EXPECT_TRUE(testing::close(ops::linear(x, frozen, b), values(want), {5, 96}, tol_for(dt)));
    Tensor plain = w.clone();
    (void)ops::linear(x, plain, b);
    plain.fill_(Scalar(0.0));
    EXPECT_EQ(values(ops::linear(x, plain, b)), values(ops::add(ops::zeros_like(want), b)));
  }
}

TEST(Linear, WithAndWithoutBiasOverInputRanks) {
  uint64_t seed = 1000;
  for (ScalarType dt : testing::float_types()) {
    Tensor w = rnd({6, 5}, dt, seed++);
    for (const V& xs : {V{5}, V{4, 5}, V{2, 3, 5}, V{2, 1, 3, 5}}) {
      for (bool nc : {false, true}) {
        Tensor x = rnd(xs, dt, seed++, nc);
        const Ref plain = ref_matmul(x, w.t());
        EXPECT_TRUE(matches(ops::linear(x, w), plain, dt))
            << dtype_name(dt) << " " << shape_str(xs);
        Tensor bias = rnd({6}, dt, seed++);
        EXPECT_TRUE(matches(ops::linear(x, w, bias), ref_add(plain, bias, 1, 1), dt))
            << dtype_name(dt) << " " << shape_str(xs);
      }
    }
    // A bias that broadcasts over more than the features, and a 1-D weight.
    Tensor x = rnd({4, 5}, dt, seed++), b2 = rnd({4, 1}, dt, seed++);
    EXPECT_TRUE(matches(ops::linear(x, w, b2), ref_add(ref_matmul(x, w.t()), b2, 1, 1), dt));
    Tensor w1 = rnd({5}, dt, seed++), b0 = rnd({}, dt, seed++);
    EXPECT_TRUE(matches(ops::linear(x, w1, b0), ref_add(ref_matmul(x, w1), b0, 1, 1), dt));
  }
  EXPECT_EQ(error_of([&] {
              ops::linear(rnd({4, 5}, f32, 1), rnd({6, 4}, f32, 2));
            }),
            "mat1 and mat2 shapes cannot be multiplied (4x5 and 4x6)");
  EXPECT_EQ(error_of([&] {
              ops::linear(rnd({4, 5}, f32, 1), rnd({6, 5}, bf16, 2));
            }),
            "expected m1 and m2 to have the same dtype, but got: float != c10::BFloat16");
  EXPECT_EQ(error_of([&] {
              ops::linear(rnd({4, 5}, f32, 1), rnd({6, 5}, f32, 2), rnd({6}, f16, 3));
            }),
            "self and mat2 must have the same dtype, but got Half and Float");
}

}  // namespace
}  // namespace ampjit
