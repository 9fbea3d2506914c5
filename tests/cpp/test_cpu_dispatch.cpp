// CPU dispatch (Note [CPU dispatch] in runtime/cpu_features.h): the features read, the level in
// use, and every path this machine has (the AVX2 baseline's widening to float32, native bfloat16
// through oneDNN where the CPU has AVX512-BF16) against a float64 reference rounded once.
// ctest also runs this binary, test_linalg and test_conv with AMPJIT_CPU_ISA=avx2 (the baseline for
// the whole process, oneDNN's kernels included).
#include <gmock/gmock.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <tuple>

#include "kernels/cpu/vec/vec.h"
#include "runtime/cpu_features.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using V = std::vector<int64_t>;
using testing::random_tensor;
constexpr auto bf16 = ScalarType::BFloat16, f32 = ScalarType::Float32, f64 = ScalarType::Float64;

// The levels this machine can run, baseline first.
std::vector<CpuIsa> levels() {
  std::vector<CpuIsa> out;
  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16, CpuIsa::kAmx})
    if (isa <= cpu_isa()) out.push_back(isa);
  return out;
}

// Runs `f` at `isa`, restoring the level after.
template <typename F>
auto at_level(CpuIsa isa, F&& f) {
  const CpuIsa before = set_cpu_isa_for_testing(isa);
  struct Restore {
    CpuIsa isa;
    ~Restore() { set_cpu_isa_for_testing(isa); }
  } restore{before};
  return f();
}

// float32 accumulation and one rounding, as torch: within one bfloat16 ulp (2^-8 relative, 2^-7
// near a power of two) of the float64 result rounded once, plus room for cancellation.
::testing::AssertionResult matches_reference(const Tensor& got, const Tensor& ref64) {
  std::vector<double> want;
  for (double v : testing::values(ref64)) want.push_back(testing::round_to(v, bf16));
  return testing::close(got, want, std::vector<int64_t>(ref64.sizes().begin(), ref64.sizes().end()),
                        {1.0 / 128, 2e-3});
}

TEST(CpuDispatch, FeaturesAndLevelAgree) {
  const CpuFeatures& f = cpu_features();
  EXPECT_TRUE(f.avx2 && f.fma && f.f16c) << "the build targets AVX2 + FMA + F16C";
  const CpuIsa best = detected_cpu_isa();
  EXPECT_EQ(best >= CpuIsa::kAvx512, f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq);
  EXPECT_EQ(best >= CpuIsa::kAvx512Bf16, best >= CpuIsa::kAvx512 && f.avx512_bf16);
  EXPECT_LE(cpu_isa(), best);
  const char* env = std::getenv("AMPJIT_CPU_ISA");
  if (env && std::string(env) == "avx2") EXPECT_EQ(cpu_isa(), CpuIsa::kAvx2);
  EXPECT_THAT(cpu_description(), ::testing::StartsWith(cpu_isa_name(cpu_isa())));
  EXPECT_THAT(cpu_description(), ::testing::HasSubstr("avx2"));
}

TEST(CpuDispatch, Bf16GemmsMatchTheReferenceOnEveryPath) {
  const Tensor a = random_tensor({96, 160}, bf16, 1, -2, 2);
  const Tensor b = random_tensor({160, 72}, bf16, 2, -2, 2);
  const Tensor bias = random_tensor({72}, bf16, 3, -1, 1);
  const Tensor addend = random_tensor({96, 72}, bf16, 4, -1, 1);
  const Tensor ba = random_tensor({3, 40, 24}, bf16, 5, -2, 2);
  const Tensor bb = random_tensor({3, 32, 24}, bf16, 6, -2, 2, /*noncontig=*/true);
  auto a64 = a.to(f64), b64 = b.to(f64);
  const Tensor ref_mm = ops::mm(a64, b64);
  const Tensor ref_bias = ops::add(ref_mm, bias.to(f64));
  const Tensor ref_addmm =
      ops::add(ops::mul_Scalar(addend.to(f64), Scalar(0.5)), ref_mm, Scalar(2.0));
  const Tensor ref_bmm = ops::bmm(ba.to(f64), bb.to(f64).transpose(1, 2));
  std::vector<Tensor> firsts;
  for (CpuIsa isa : levels()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    at_level(isa, [&] {
      const Tensor mm = ops::mm(a, b);
      EXPECT_EQ(mm.dtype(), bf16);
      EXPECT_TRUE(matches_reference(mm, ref_mm));
      EXPECT_TRUE(matches_reference(ops::addmm(bias, a, b), ref_bias));
      EXPECT_TRUE(matches_reference(ops::addmm(addend, a, b, Scalar(0.5), Scalar(2.0)), ref_addmm));
      EXPECT_TRUE(matches_reference(ops::bmm(ba, bb.transpose(1, 2)), ref_bmm));
      firsts.push_back(mm);
      return 0;
    });
  }
  // The paths agree with each other within the same bound (they differ only in summation order).
  for (const Tensor& t : firsts) EXPECT_TRUE(matches_reference(t, firsts.front().to(f64)));
}

TEST(CpuDispatch, Bf16ConvolutionsMatchTheReferenceOnEveryPath) {
  const Tensor x = random_tensor({2, 8, 9, 9}, bf16, 7, -1, 1);
  const Tensor w = random_tensor({12, 4, 3, 3}, bf16, 8, -1, 1);  // groups = 2
  const Tensor b = random_tensor({12}, bf16, 9, -1, 1);
  const Tensor wt = random_tensor({8, 6, 3, 3}, bf16, 10, -1, 1);  // transposed: IC x OC/G
  const Tensor ref = ops::conv2d(x.to(f64), w.to(f64), b.to(f64), V{2, 1}, V{1, 1}, V{1, 1}, 2);
  const Tensor ref_t =
      ops::conv_transpose2d(x.to(f64), wt.to(f64), std::nullopt, V{2, 2}, V{1, 1}, V{1, 1}, 1);
  for (CpuIsa isa : levels()) {
    SCOPED_TRACE(cpu_isa_name(isa));
    at_level(isa, [&] {
      const Tensor y = ops::conv2d(x, w, b, V{2, 1}, V{1, 1}, V{1, 1}, 2);
      EXPECT_EQ(y.dtype(), bf16);
      EXPECT_TRUE(matches_reference(y, ref));
      EXPECT_TRUE(matches_reference(
          ops::conv_transpose2d(x, wt, std::nullopt, V{2, 2}, V{1, 1}, V{1, 1}, 1), ref_t));
      return 0;
    });
  }
}

TEST(CpuDispatch, Float32IsUnchangedByTheLevel) {
  // float32 always takes oneDNN's float32 kernels; ampjit's level only decides bfloat16's path.
  const Tensor a = random_tensor({33, 47}, f32, 11), b = random_tensor({47, 29}, f32, 12);
  const Tensor ref = ops::mm(a.to(f64), b.to(f64));
  for (CpuIsa isa : levels()) {
    at_level(isa, [&] {
      EXPECT_TRUE(testing::close(ops::mm(a, b), testing::values(ref), {33, 29}, {1e-5, 1e-5}));
      return 0;
    });
  }
}

// ---- ampjit's own kernels per ISA (Note [Kernels per ISA] in kernels/cpu/vec/vec.h) ----------

// Distance in ulps between two floats (0 for two NaNs).
int64_t ulps(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INT64_MAX;
  auto ord = [](float f) {
    const int32_t i = std::bit_cast<int32_t>(f);
    return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
  };
  return std::llabs(ord(a) - ord(b));
}

// Inputs over the whole useful range of the exp family, with the edges and specials.
std::vector<float> exp_inputs() {
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> wide(-110.0f, 95.0f), narrow(-2.0f, 2.0f);
  std::vector<float> xs;
  for (int i = 0; i < 200000; ++i) xs.push_back(i % 2 ? wide(gen) : narrow(gen));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x :
       {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72f, 88.7228394f, 88.73f, -87.33f, -103.9f, -103.98f,
        -104.5f, 0.625f, -0.625f, 0.62499994f, inf, -inf, std::numeric_limits<float>::quiet_NaN()})
    xs.push_back(x);
  return xs;
}

namespace vec = cpu::vec;
using vec::Unary;
const std::pair<Unary, double (*)(double)> kUnaryRefs[] = {
    {Unary::kExp, [](double x) { return std::exp(x); }},
    {Unary::kSigmoid, [](double x) { return 1.0 / (1.0 + std::exp(-x)); }},
    {Unary::kSilu, [](double x) { return x / (1.0 + std::exp(-x)); }},
    {Unary::kTanh, [](double x) { return std::tanh(x); }},
    {Unary::kErf, [](double x) { return std::erf(x); }},
    {Unary::kGelu, [](double x) { return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2)); }},
    {Unary::kGeluTanh,
     [](double x) {
       return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
     }},
};

TEST(CpuDispatch, TheExpFamilyIsWithinItsUlpBoundsOfTheCorrectlyRoundedValue) {
  // exp and tanh within 1 ulp of float64's result rounded to float; sigmoid and silu compose a
  // 1-ulp exp with a division, so 3 ulps (where exp(-x) does not overflow: there torch's formula
  // gives 0 or -0 as this one does). erf within 2 ulps (Note [Vectorized erf]). The gelus' 1 + tanh
  // and 1 + erf cancel for negative x, in torch's formulas as here: their bound is absolute,
  // 2^-22 |x| (about 2 ulps of x).
  for (auto [op, ref] : kUnaryRefs) {
    int64_t worst = 0;
    float at = 0;
    for (float x : exp_inputs()) {
      const float got = vec::unary_scalar(op, x), want = static_cast<float>(ref(x));
      if (op == Unary::kGeluTanh || op == Unary::kGelu) {
        if (std::isfinite(x))
          EXPECT_LE(std::fabs(got - want), std::ldexp(std::fabs(x), -22)) << "gelu at " << x;
        continue;
      }
      if (op != Unary::kExp && op != Unary::kTanh && std::fabs(x) > 87.0f) continue;
      const int64_t u = ulps(got, want);
      if (u > worst) worst = u, at = x;
    }
    EXPECT_LE(worst, op == Unary::kExp || op == Unary::kTanh ? 1
                     : op == Unary::kErf                     ? 2
                                                             : 3)
        << "op " << static_cast<int>(op) << " at " << at;
  }
  EXPECT_EQ(vec::unary_scalar(Unary::kExp, 89.0f), std::numeric_limits<float>::infinity());
  EXPECT_EQ(vec::unary_scalar(Unary::kExp, -105.0f), 0.0f);
  EXPECT_TRUE(std::signbit(vec::unary_scalar(Unary::kTanh, -0.0f)));
}

// log2, log10, expm1 and atan (Note [Vectorized log, expm1 and atan]): every binade's edges and a
// random sample over all finite floats, both signs, subnormals and the specials.
std::vector<float> wide_inputs() {
  std::mt19937 gen(7);
  std::uniform_int_distribution<uint32_t> bits(0, 0x7f7fffffu);
  std::uniform_real_distribution<float> narrow(-20.0f, 20.0f);
  std::vector<float> xs;
  for (int i = 0; i < 200000; ++i) {
    const float x = i % 2 ? std::bit_cast<float>(bits(gen)) : narrow(gen);
    xs.push_back(i % 4 < 2 ? x : -x);
  }
  for (int e = -149; e < 128; ++e)
    for (float m : {1.0f, 1.3333334f, 1.4142135f, 1.9999999f}) xs.push_back(std::ldexp(m, e));
  const float inf = std::numeric_limits<float>::infinity();
  for (float x :
       {0.0f, -0.0f, 0.41421357f, 2.4142137f, 16.0f, -17.5f, 88.72f, 88.73f, inf, -inf,
        std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
    xs.push_back(x);
  return xs;
}

const std::tuple<Unary, double (*)(double), int64_t> kWideRefs[] = {
    {Unary::kLog2, [](double x) { return std::log2(x); }, 2},
    {Unary::kLog10, [](double x) { return std::log10(x); }, 2},
    {Unary::kExpm1, [](double x) { return std::expm1(x); }, 1},
    {Unary::kAtan, [](double x) { return std::atan(x); }, 3},
};

TEST(CpuDispatch, LogExpm1AndAtanAreWithinTheirUlpBoundsOfTheCorrectlyRoundedValue) {
  for (auto [op, ref, bound] : kWideRefs) {
    int64_t worst = 0, wrong_sign = 0;
    float at = 0;
    for (float x : wide_inputs()) {
      const float got = vec::unary_scalar(op, x), want = static_cast<float>(ref(x));
      const int64_t u = ulps(got, want);
      if (u > worst) worst = u, at = x;
      wrong_sign += want == 0 && std::signbit(got) != std::signbit(want);
    }
    EXPECT_LE(worst, bound) << "op " << static_cast<int>(op) << " at " << at;
    EXPECT_EQ(wrong_sign, 0) << "op " << static_cast<int>(op);
  }
}

TEST(CpuDispatch, EveryKernelTableReturnsTheScalarFormulasBits) {
  std::vector<float> xs = exp_inputs();
  for (float x : wide_inputs()) xs.push_back(x);
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<uint16_t> xb(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) xb[i] = BFloat16(xs[i]).x;
  for (CpuIsa isa : levels()) {
    const vec::Kernels& k = vec::kernels_for(isa);
    SCOPED_TRACE(k.isa);
    EXPECT_EQ(std::string(k.isa), isa >= CpuIsa::kAvx512 ? "avx512" : "avx2");
    std::vector<Unary> ops;
    for (auto [op, ref] : kUnaryRefs) ops.push_back(op);
    for (auto [op, ref, bound] : kWideRefs) ops.push_back(op);
    for (Unary op : ops) {
      std::vector<float> y(xs.size());
      std::vector<uint16_t> yb(xs.size());
      // Odd offsets and lengths: the vector loops' heads and tails.
      k.unary_f32[static_cast<int>(op)](xs.data() + 1, y.data() + 1, n - 2);
      k.unary_bf16[static_cast<int>(op)](xb.data() + 1, yb.data() + 1, n - 2);
      int64_t bad = 0, bad_bf16 = 0;
      for (int64_t i = 1; i < n - 1; ++i) {
        bad += ulps(y[i], vec::unary_scalar(op, xs[i])) != 0;
        const float w = static_cast<float>(BFloat16(vec::unary_scalar(op, float(BFloat16(xs[i])))));
        bad_bf16 += ulps(float(BFloat16::from_bits(yb[i])), w) != 0;
      }
      EXPECT_EQ(bad, 0) << "op " << static_cast<int>(op);
      EXPECT_EQ(bad_bf16, 0) << "op " << static_cast<int>(op);
    }
  }
}

TEST(CpuDispatch, TheVectorizedFunctionsGiveTheSameBitsInEveryLayoutAndAtEveryLevel) {
  // Contiguous float32 and bfloat16 run the table; a transposed view runs the scalar formula.
  const Tensor x = ops::mul_Scalar(random_tensor({64, 129}, f32, 21), Scalar(8.0));
  for (const char* name :
       {"exp", "sigmoid", "silu", "tanh", "erf", "gelu", "log2", "log10", "expm1", "atan"}) {
    SCOPED_TRACE(name);
    auto run = [&](const Tensor& t) -> Tensor {
      return call_op(std::string("aten::") + name, {IValue(t)});
    };
    auto same = [](const Tensor& a, const Tensor& b) {  // NaNs (log of x < 0) equal
      const std::vector<double> va = testing::values(a), vb = testing::values(b);
      return a.dtype() == b.dtype() && va.size() == vb.size() &&
             std::equal(va.begin(), va.end(), vb.begin(),
                        [](double p, double q) { return p == q || (p != p && q != q); });
    };
    const Tensor base = at_level(CpuIsa::kAvx2, [&] { return run(x); });
    for (CpuIsa isa : levels()) {
      at_level(isa, [&] {
        EXPECT_TRUE(same(run(x), base));
        EXPECT_TRUE(same(run(x.t().contiguous().t()), base));  // strided input
        const Tensor xb = x.to(bf16);
        EXPECT_TRUE(same(run(xb), run(xb.to(f32)).to(bf16)));
        EXPECT_TRUE(same(run(xb.t().contiguous().t()), run(xb)));
        return 0;
      });
    }
  }
}

}  // namespace
}  // namespace ampjit
