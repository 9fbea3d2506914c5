// The CUDA kernels against the CPU kernels on the same inputs, the CPU result being the oracle:
// every pointwise, creation, reduction, nn, indexing, linalg and convolution op with a CUDA
// kernel, over the dtypes, contiguous and strided layouts, broadcasting, 0-dim and empty inputs
// (one parameterized test per op form, data-driven from the tables below); copies between devices
// for every dtype pair and fills; and what only a device has: device-mismatch errors, out of
// memory, the caching allocator, integer division by zero, index errors, random numbers, item()
// and autocast on real CUDA tensors.
//
// Every test skips on a machine without a CUDA device (the CudaTest fixture), and ctest reports it
// as skipped (tests/CMakeLists.txt).
//
// Note [Differential comparison]
// Each case copies its CPU inputs to the device with the same sizes, strides and storage offset
// (a transposed or sliced input stays transposed or sliced there), runs the op on both devices and
// requires: the same outcome (when the CPU kernel raises, the CUDA kernel raises the same
// exception class with the same message); results on cuda:0 with the CPU's dtype and shape and
// values within the tolerance below; every argument equal afterwards (in-place, out= and
// batch_norm's running statistics); and a result that shares an argument's storage on one device
// shares it on the other.
//
// Note [Differential tolerances]
// Both kernels read bitwise the same inputs; what may differ is the order of floating-point
// operations (reductions, GEMMs) and the math library (CUDA's against glibc's). Integers and bool
// compare exactly, NaN positions must agree, and floats, per result dtype:
//  - elementwise arithmetic: float32 1e-5 relative; transcendental functions 2e-5 (addcmul and
//    addcdiv also 1e-5 absolute: a fused multiply-add may round once less); float16, bfloat16
//    and float64 testing::tol_for (a few ulps);
//  - accumulations over n elements (reductions, scans): the same relative bound plus an absolute
//    term growing with sqrt(n); normalizations: float32 1e-4 relative, 1e-5 absolute;
//  - GEMMs and convolutions with contraction length K: float32 1e-4 relative plus 1e-5*sqrt(K)
//    absolute. cuBLAS sums in another order than the CPU, but in full float32 (TF32 is off, as
//    torch's default), which a TF32 product (~1e-3 relative) would fail.
#include <gmock/gmock.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/cuda/cuda_backend.h"
#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/policy_profiles.h"
#include "runtime/random.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using ::testing::StrEq;
using ::testing::ThrowsMessage;
using testing::Tol;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
using D = std::vector<double>;

using namespace testing::dtypes;
constexpr Device kCpu;
constexpr Device kCuda(DeviceType::CUDA, 0);
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

const std::vector<ScalarType> kAllTypes = {kBool, kU8,  kI8,   kI16, kI32,
                                           kI64,  kF16, kBF16, kF32, kF64};
const std::vector<ScalarType> kFloatTypes = {kF32, kF64, kF16, kBF16};
// The floating types plus int64, whose errors the CPU and CUDA kernels must share.
const std::vector<ScalarType> kFloatTypesAndLong = {kF32, kF64, kF16, kBF16, kI64};

// Skips every test on a machine without a CUDA device.
class CudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cuda::init();
    if (cuda::device_count() == 0) {
      GTEST_SKIP() << "no CUDA device: " << cuda::unavailable_reason();
    }
  }
};

// ---- Tensors on both devices --------------------------------------------------------------------

V shape_of(const Tensor& t) {
  return V(t.sizes().begin(), t.sizes().end());
}

Tensor from_values(const V& shape, const D& v, ScalarType dtype) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, kF64);
  if (!v.empty()) std::memcpy(t.data<double>(), v.data(), v.size() * sizeof(double));
  return t.view(shape).to(dtype);
}

// Replaces zeros by ones in place (divisors of integer ops, which raise on zero on the CPU).
void make_nonzero(Tensor& t) {
  const Tensor zero = ops::eq_Scalar(t, 0);
  t.copy_(ops::where_ScalarSelf(zero, 1, t).tensor());
}

// Uniform values in [lo, hi) (integers rounded, uint8 not below 0, bool coin flips), contiguous or
// a transposed / every-other-element view (testing::random_tensor).
Tensor rnd(const V& shape, ScalarType dt, uint64_t seed, double lo = -2, double hi = 2,
           bool noncontig = false, bool nonzero = false) {
  if (dt == kU8) lo = std::max(lo, 0.0);
  Tensor t = testing::random_tensor(shape, dt, seed, lo, hi, noncontig);
  if (nonzero) make_nonzero(t);
  return t;
}

// The same kind of values as a view with a storage offset and a stride of 2 in the last dim.
Tensor sliced(const V& shape, ScalarType dt, uint64_t seed, double lo = -2, double hi = 2,
              bool nonzero = false) {
  V parent = shape;
  parent.back() = 2 * parent.back() + 1;
  Tensor p = rnd(parent, dt, seed, lo, hi, false, nonzero);
  return p.slice(-1, 1, std::nullopt, 2);
}

// A copy of `t` on `device` with the same sizes, strides and storage offset, in new storage.
Tensor copy_with_layout(const Tensor& t, Device device) {
  if (!t.defined()) return t;
  if (t.numel() == 0) return Tensor::empty(t.sizes(), t.dtype(), device);
  int64_t span = t.storage_offset() + 1;
  for (int64_t d = 0; d < t.dim(); ++d) span += (t.size(d) - 1) * t.stride(d);
  Tensor base = Tensor::empty(V{span}, t.dtype(), device);
  Tensor v = base.as_strided(t.sizes(), t.strides(), t.storage_offset());
  v.copy_(t);
  return v;
}
Tensor to_cuda(const Tensor& t) {
  return copy_with_layout(t, kCuda);
}
Tensor to_cpu(const Tensor& t) {
  Tensor c = Tensor::empty(t.sizes(), t.dtype(), kCpu);
  c.copy_(t);
  return c;
}

std::string describe(const std::vector<Tensor>& args) {
  std::string s;
  for (const Tensor& t : args) {
    if (!s.empty()) s += ", ";
    if (!t.defined()) {
      s += "None";
      continue;
    }
    s += std::string(dtype_name(t.dtype())) + t.shape_str();
    if (!t.is_contiguous()) s += " strided";
    if (t.storage_offset()) s += " offset";
  }
  return s.empty() ? "(no tensor arguments)" : s;
}

// Equal dtype, shape and bytes, on whatever devices.
::testing::AssertionResult bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || shape_of(a) != shape_of(b)) {
    return ::testing::AssertionFailure() << dtype_name(a.dtype()) << a.shape_str() << " vs "
                                         << dtype_name(b.dtype()) << b.shape_str();
  }
  const Tensor x = to_cpu(a).contiguous(), y = to_cpu(b).contiguous();
  if (x.numel() && std::memcmp(x.raw_data(), y.raw_data(), x.numel() * x.itemsize()) != 0) {
    return ::testing::AssertionFailure() << "the bytes differ";
  }
  return ::testing::AssertionSuccess();
}

// ---- Tolerances (Note [Differential tolerances]) ----------------------------------------------

using TolFn = Tol (*)(ScalarType, int64_t);

double root(int64_t n) {
  return std::sqrt(static_cast<double>(std::max<int64_t>(n, 1)));
}
Tol elementwise_tol(ScalarType t, int64_t) {
  return t == kF32 ? Tol{1e-5, 1e-6} : tol_for(t);
}
Tol transcendental_tol(ScalarType t, int64_t) {
  return t == kF32 ? Tol{2e-5, 1e-6} : tol_for(t);
}
// addcmul and addcdiv: a fused multiply-add on one device may round the product once less.
Tol fused_tol(ScalarType t, int64_t) {
  return t == kF32 ? Tol{2e-5, 1e-5} : tol_for(t);
}
Tol accumulated_tol(ScalarType t, int64_t n) {
  switch (t) {
    case kF64:
      return {1e-10, 1e-13 * root(n)};
    case kF32:
      return {2e-5, 2e-6 * root(n)};
    case kF16:
    case kBF16:
      return {tol_for(t).rtol, tol_for(t).atol * root(n)};
    default:
      return {0, 0};
  }
}
Tol normalization_tol(ScalarType t, int64_t) {
  switch (t) {
    case kF64:
      return {1e-9, 1e-10};
    case kF32:
      return {1e-4, 1e-5};
    default:
      return tol_for(t);
  }
}
Tol gemm_tol(ScalarType t, int64_t k) {
  switch (t) {
    case kF64:
      return {1e-10, 1e-12 * root(k)};
    case kF32:
      return {1e-4, 1e-5 * root(k)};
    case kF16:
      return {2e-3, 1e-4 * root(k)};
    case kBF16:
      return {1.6e-2, 1e-3 * root(k)};
    default:
      return {0, 0};
  }
}
Tol exact_tol(ScalarType, int64_t) {
  return {0, 0};
}

// ---- The differential runner (Note [Differential comparison]) -----------------------------------

using Args = std::vector<Tensor>;
// Where and in what dtype a case runs: creation ops read both, most ops neither.
struct Ctx {
  Device device;
  ScalarType dtype;
};
using Fn = std::function<OpResult(const Args&, const Ctx&)>;
// FN(expr): a case's op, an expression of the arguments `x` and the context `c`.
#define FN(EXPR)                                \
  [](const Args& x, const Ctx& c) -> OpResult { \
    (void)x;                                    \
    (void)c;                                    \
    return EXPR;                                \
  }

const char* error_kind(const std::exception& e) {
  if (dynamic_cast<const OutOfMemoryError*>(&e)) return "OutOfMemoryError";
  if (dynamic_cast<const NotImplementedError*>(&e)) return "NotImplementedError";
  if (dynamic_cast<const IndexError*>(&e)) return "IndexError";
  if (dynamic_cast<const ValueError*>(&e)) return "ValueError";
  if (dynamic_cast<const TypeError*>(&e)) return "TypeError";
  if (dynamic_cast<const Error*>(&e)) return "Error";
  return "std::exception";
}

struct Outcome {
  std::vector<Tensor> results;
  bool threw = false;
  std::string error;  // "<kind>: <message>"
};
Outcome run(const Fn& fn, const Args& args, const Ctx& ctx) {
  Outcome o;
  try {
    OpResult r = fn(args, ctx);
    for (size_t i = 0; i < r.size(); ++i) {
      if (r.value(i).is_tensor()) o.results.push_back(r.tensor(i));
    }
  } catch (const std::exception& e) {
    o.threw = true;
    o.error = std::string(error_kind(e)) + ": " + e.what();
  }
  return o;
}

// `got` is on cuda:0 with `want`'s dtype and shape, and its values are within `tol` of want's.
::testing::AssertionResult same_result(const Tensor& got, const Tensor& want, Tol tol) {
  if (!(got.device() == kCuda)) {
    return ::testing::AssertionFailure() << "on " << got.device().str() << ", expected cuda:0";
  }
  if (got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(got.dtype()) << ", the CPU gives " << dtype_name(want.dtype());
  }
  return testing::close(to_cpu(got), values(want), shape_of(want), tol);
}

bool shares_storage(const Tensor& a, const Tensor& b) {
  return a.defined() && b.defined() && a.storage().get() == b.storage().get();
}

// Runs fn on CPU copies and CUDA copies of `inputs` and compares everything (Note [Differential
// comparison]); n sizes the tolerance (a reduction's length, a GEMM's K).
::testing::AssertionResult matches_cpu(const Fn& fn, const Args& inputs, ScalarType dt, TolFn tol,
                                       int64_t n) {
  Args cpu, dev;
  for (const Tensor& t : inputs) {
    cpu.push_back(copy_with_layout(t, kCpu));
    dev.push_back(copy_with_layout(t, kCuda));
  }
  const Outcome want = run(fn, cpu, Ctx{kCpu, dt});
  const Outcome got = run(fn, dev, Ctx{kCuda, dt});
  if (want.threw || got.threw) {
    if (want.threw && got.threw && want.error == got.error) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "the CPU " << (want.threw ? "raised " + want.error : std::string("returned"))
           << "\n  CUDA " << (got.threw ? "raised " + got.error : std::string("returned"));
  }
  if (got.results.size() != want.results.size()) {
    return ::testing::AssertionFailure()
           << "CUDA returned " << got.results.size() << " tensors, the CPU " << want.results.size();
  }
  for (size_t i = 0; i < want.results.size(); ++i) {
    const Tensor& w = want.results[i];
    const Tensor& g = got.results[i];
    auto r = same_result(g, w, tol(w.dtype(), n));
    if (!r) return ::testing::AssertionFailure() << "result " << i << ": " << r.message();
    for (size_t k = 0; k < cpu.size(); ++k) {
      const bool on_cpu = shares_storage(w, cpu[k]), on_cuda = shares_storage(g, dev[k]);
      if (on_cpu != on_cuda) {
        return ::testing::AssertionFailure()
               << "result " << i << (on_cpu ? " is" : " is not") << " argument " << k
               << "'s storage on the CPU" << (on_cuda ? " but is" : " but not") << " on CUDA";
      }
    }
  }
  for (size_t k = 0; k < cpu.size(); ++k) {
    if (!cpu[k].defined()) continue;
    auto r = same_result(dev[k], cpu[k], tol(cpu[k].dtype(), n));
    if (!r)
      return ::testing::AssertionFailure() << "argument " << k << " afterwards: " << r.message();
  }
  return ::testing::AssertionSuccess();
}

// One set of CPU arguments; n sizes the tolerance (0: the largest argument's numel).
struct InputSet {
  Args args;
  int64_t n = 0;
};
using Gen = std::function<std::vector<InputSet>(ScalarType)>;

// A row of the tables: an op form, the inputs it runs on for each dtype, and its tolerance.
struct OpCase {
  std::string name;
  Fn fn;
  Gen inputs;
  std::vector<ScalarType> dtypes;
  TolFn tol;
};
void PrintTo(const OpCase& c, std::ostream* os) {
  *os << c.name;
}
std::string case_name(const ::testing::TestParamInfo<OpCase>& info) {
  std::string s = info.param.name;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

class CudaOp : public CudaTest, public ::testing::WithParamInterface<OpCase> {};

TEST_P(CudaOp, MatchesCpuKernel) {
  const OpCase& c = GetParam();
  for (ScalarType dt : c.dtypes) {
    const std::vector<InputSet> sets = c.inputs(dt);
    for (size_t i = 0; i < sets.size(); ++i) {
      const InputSet& s = sets[i];
      int64_t n = s.n;
      if (n == 0) {
        for (const Tensor& t : s.args) n = std::max(n, t.defined() ? t.numel() : 0);
      }
      SCOPED_TRACE(c.name + " " + dtype_name(dt) + " set " + std::to_string(i) + ": " +
                   describe(s.args));
      EXPECT_TRUE(matches_cpu(c.fn, s.args, dt, c.tol, n));
    }
  }
}

// ---- Inputs -------------------------------------------------------------------------------------

// Special floating values: NaN, infinities, signed zeros, and 7e4, which overflows float16.
const D kSpecials = {kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e-3, 7e4};

// The extremes of an integer type (int64's largest exactly representable in a double), and a few
// small values; no zero (they serve as divisors).
D int_extremes(ScalarType t) {
  if (t == kU8) return {255, 128, 1, 3, 7, 200};
  const int bits = 8 * static_cast<int>(itemsize(t));
  const double lo = -std::ldexp(1.0, bits - 1);
  const double hi = t == kI64 ? std::ldexp(1.0, 62) : -lo - 1;
  return {lo, hi, -1, 1, 7, -7, 3};
}
D special_values(ScalarType t, bool nonzero) {
  if (is_floating(t)) return kSpecials;
  if (t == kBool) return nonzero ? D{1} : D{0, 1};
  return int_extremes(t);
}
int64_t len(const D& v) {
  return static_cast<int64_t>(v.size());
}
uint64_t seed_of(ScalarType dt, uint64_t salt) {
  return 1000 * (static_cast<uint64_t>(dt) + 1) + salt;
}

struct Layout {
  V shape;
  bool noncontig;
};
const std::vector<Layout> kUnaryLayouts = {
    {{3, 5}, false}, {{4, 6}, true},  {{7}, true},
    {{}, false},     {{0, 2}, false}, {{129, 517}, false},  // many blocks
};

// One tensor per layout, a sliced view, and (unless `specials` is false) the special values of
// the dtype.
Gen unary_inputs(double lo, double hi, bool nonzero = false, bool specials = true) {
  return [=](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 0);
    for (const Layout& l : kUnaryLayouts) {
      sets.push_back({{rnd(l.shape, dt, ++seed, lo, hi, l.noncontig, nonzero)}});
    }
    sets.push_back({{sliced({4, 5}, dt, ++seed, lo, hi, nonzero)}});
    if (!specials) return sets;
    const D s = special_values(dt, nonzero);
    sets.push_back({{from_values({len(s)}, s, dt)}});
    return sets;
  };
}

struct BinaryLayout {
  V a, b;
  bool noncontig_a, noncontig_b;
};
const std::vector<BinaryLayout> kBinaryLayouts = {
    {{3, 1, 4}, {2, 4}, false, false},  // broadcasting both ways
    {{4, 6}, {4, 6}, true, true},       // transposed views
    {{5, 7}, {5, 7}, false, false},     // same shape, contiguous
    {{}, {5}, false, false},            // 0-dim with 1-d
    {{3, 4}, {}, true, false},          // strided with 0-dim
    {{0, 3}, {1, 3}, false, false},     // empty
    {{129, 517}, {517}, false, true},   // many blocks, a strided broadcast row
};

// Pairs per layout (b nonzero when asked), a sliced pair, and every pair of special values (a
// column of them against a row of them).
Gen binary_inputs(double lo_a, double hi_a, double lo_b, double hi_b, bool nonzero_b = false) {
  return [=](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 100);
    for (const BinaryLayout& l : kBinaryLayouts) {
      sets.push_back({{rnd(l.a, dt, ++seed, lo_a, hi_a, l.noncontig_a),
                       rnd(l.b, dt, ++seed, lo_b, hi_b, l.noncontig_b, nonzero_b)}});
    }
    sets.push_back({{sliced({4, 5}, dt, ++seed, lo_a, hi_a),
                     rnd({4, 5}, dt, ++seed, lo_b, hi_b, true, nonzero_b)}});
    const D sa = special_values(dt, false), sb = special_values(dt, nonzero_b);
    sets.push_back({{from_values({len(sa), 1}, sa, dt), from_values({len(sb)}, sb, dt)}});
    return sets;
  };
}
Gen binary_inputs(double lo, double hi, bool nonzero_b = false) {
  return binary_inputs(lo, hi, lo, hi, nonzero_b);
}

struct TernaryLayout {
  V a, b, c;
  bool noncontig;
};
const std::vector<TernaryLayout> kTernaryLayouts = {
    {{3, 1, 4}, {2, 4}, {3, 2, 1}, false}, {{4, 6}, {4, 6}, {4, 6}, true},     {{}, {5}, {}, false},
    {{0, 3}, {1, 3}, {3}, false},          {{64, 130}, {130}, {64, 1}, false},
};
// Three tensors per layout; the first of dtype `first` when given (where's condition).
Gen ternary_inputs(double lo, double hi, bool nonzero_c = false,
                   ScalarType first = ScalarType::Undefined) {
  return [=](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 200);
    const ScalarType t0 = first == ScalarType::Undefined ? dt : first;
    for (const TernaryLayout& l : kTernaryLayouts) {
      sets.push_back(
          {{rnd(l.a, t0, ++seed, lo, hi, l.noncontig), rnd(l.b, dt, ++seed, lo, hi, l.noncontig),
            rnd(l.c, dt, ++seed, lo, hi, false, nonzero_c)}});
    }
    const D s = special_values(dt, nonzero_c);
    const Tensor cond = first == ScalarType::Undefined ? from_values({len(s), 1}, s, dt)
                                                       : rnd({len(s), 1}, t0, ++seed, lo, hi);
    sets.push_back({{cond, from_values({len(s)}, s, dt), from_values({len(s), 1}, s, dt)}});
    return sets;
  };
}

// Operands of different dtypes (the dtype loop runs once): promotion between categories and
// widths, and 0-dim tensors that do not promote within their category.
Gen mixed_inputs(bool nonzero_b = false) {
  return [=](ScalarType) {
    const std::vector<std::pair<ScalarType, ScalarType>> pairs = {
        {kF16, kF32},  {kBF16, kF16}, {kBF16, kF32}, {kI32, kF16}, {kI64, kBF16}, {kBool, kI64},
        {kBool, kF32}, {kU8, kI8},    {kI16, kI32},  {kI64, kF64}, {kU8, kBool},  {kF32, kF64}};
    std::vector<InputSet> sets;
    uint64_t seed = 300;
    for (auto [ta, tb] : pairs) {
      sets.push_back(
          {{rnd({3, 4}, ta, ++seed, -3, 3, true), rnd({4}, tb, ++seed, -3, 3, false, nonzero_b)}});
    }
    sets.push_back(
        {{rnd({}, kF64, ++seed, -3, 3), rnd({2, 3}, kF16, ++seed, -3, 3, false, nonzero_b)}});
    sets.push_back(
        {{rnd({3}, kI64, ++seed, -3, 3), rnd({}, kF32, ++seed, -3, 3, false, nonzero_b)}});
    sets.push_back(
        {{rnd({}, kI64, ++seed, -3, 3), rnd({3}, kU8, ++seed, -3, 3, false, nonzero_b)}});
    sets.push_back({{rnd({}, kBool, ++seed), rnd({3}, kBF16, ++seed, -3, 3, false, nonzero_b)}});
    return sets;
  };
}

// ---- Pointwise (runtime/ops/pointwise.def) ------------------------------------------------------

OpCase pw(std::string name, Fn fn, Gen inputs, TolFn tol = transcendental_tol) {
  return OpCase{std::move(name), std::move(fn), std::move(inputs), kAllTypes, tol};
}
OpCase mixed(std::string name, Fn fn, bool nonzero_b = false) {
  return OpCase{
      std::move(name), std::move(fn), mixed_inputs(nonzero_b), {kF32}, transcendental_tol};
}

const std::vector<OpCase>& unary_cases() {
  static const std::vector<OpCase> v = {
      pw("neg", FN(ops::neg(x[0])), unary_inputs(-20, 20), elementwise_tol),
      pw("neg_", FN(ops::neg_(x[0])), unary_inputs(-20, 20), elementwise_tol),
      pw("abs", FN(ops::abs(x[0])), unary_inputs(-20, 20), elementwise_tol),
      pw("abs_", FN(ops::abs_(x[0])), unary_inputs(-20, 20), elementwise_tol),
      pw("sign", FN(ops::sign(x[0])), unary_inputs(-3, 3), elementwise_tol),
      pw("sign_", FN(ops::sign_(x[0])), unary_inputs(-3, 3), elementwise_tol),
      pw("exp", FN(ops::exp(x[0])), unary_inputs(-4, 4)),
      pw("exp_", FN(ops::exp_(x[0])), unary_inputs(-4, 4)),
      pw("log", FN(ops::log(x[0])), unary_inputs(0.05, 6)),
      pw("log_", FN(ops::log_(x[0])), unary_inputs(0.05, 6)),
      pw("log1p", FN(ops::log1p(x[0])), unary_inputs(-0.9, 4)),
      pw("log1p_", FN(ops::log1p_(x[0])), unary_inputs(-0.9, 4)),
      pw("sqrt", FN(ops::sqrt(x[0])), unary_inputs(0, 6)),
      pw("sqrt_", FN(ops::sqrt_(x[0])), unary_inputs(0, 6)),
      pw("rsqrt", FN(ops::rsqrt(x[0])), unary_inputs(0.05, 6)),
      pw("rsqrt_", FN(ops::rsqrt_(x[0])), unary_inputs(0.05, 6)),
      pw("sin", FN(ops::sin(x[0])), unary_inputs(-4, 4)),
      pw("sin_", FN(ops::sin_(x[0])), unary_inputs(-4, 4)),
      pw("cos", FN(ops::cos(x[0])), unary_inputs(-4, 4)),
      pw("cos_", FN(ops::cos_(x[0])), unary_inputs(-4, 4)),
      pw("tan", FN(ops::tan(x[0])), unary_inputs(-1.3, 1.3)),
      pw("tan_", FN(ops::tan_(x[0])), unary_inputs(-1.3, 1.3)),
      pw("tanh", FN(ops::tanh(x[0])), unary_inputs(-3, 3)),
      pw("tanh_", FN(ops::tanh_(x[0])), unary_inputs(-3, 3)),
      pw("sigmoid", FN(ops::sigmoid(x[0])), unary_inputs(-6, 6)),
      pw("sigmoid_", FN(ops::sigmoid_(x[0])), unary_inputs(-6, 6)),
      pw("erf", FN(ops::erf(x[0])), unary_inputs(-2.5, 2.5)),
      pw("erf_", FN(ops::erf_(x[0])), unary_inputs(-2.5, 2.5)),
      pw("reciprocal", FN(ops::reciprocal(x[0])), unary_inputs(0.1, 4)),
      pw("reciprocal_", FN(ops::reciprocal_(x[0])), unary_inputs(0.1, 4)),
      pw("silu", FN(ops::silu(x[0])), unary_inputs(-5, 5)),
      pw("silu_", FN(ops::silu_(x[0])), unary_inputs(-5, 5)),
      pw("gelu", FN(ops::gelu(x[0])), unary_inputs(-3, 3)),
      pw("gelu_", FN(ops::gelu_(x[0])), unary_inputs(-3, 3)),
      pw("gelu_tanh", FN(ops::gelu(x[0], "tanh")), unary_inputs(-4, 4)),
      pw("gelu__tanh", FN(ops::gelu_(x[0], "tanh")), unary_inputs(-4, 4)),
      pw("floor", FN(ops::floor(x[0])), unary_inputs(-5, 5), elementwise_tol),
      pw("floor_", FN(ops::floor_(x[0])), unary_inputs(-5, 5), elementwise_tol),
      pw("ceil", FN(ops::ceil(x[0])), unary_inputs(-5, 5), elementwise_tol),
      pw("ceil_", FN(ops::ceil_(x[0])), unary_inputs(-5, 5), elementwise_tol),
      pw("round", FN(ops::round(x[0])), unary_inputs(-5, 5), elementwise_tol),
      pw("round_", FN(ops::round_(x[0])), unary_inputs(-5, 5), elementwise_tol),
      pw("round_decimals_2", FN(ops::round_decimals(x[0], 2)), unary_inputs(-5, 5)),
      pw("round_decimals_minus1", FN(ops::round_decimals(x[0], -1)), unary_inputs(-50, 50)),
      pw("round__decimals", FN(ops::round__decimals(x[0], 2)), unary_inputs(-5, 5)),
      pw("relu", FN(ops::relu(x[0])), unary_inputs(-3, 3), elementwise_tol),
      pw("relu_", FN(ops::relu_(x[0])), unary_inputs(-3, 3), elementwise_tol),
      pw("clamp", FN(ops::clamp(x[0], -0.5, 0.7)), unary_inputs(-2, 2), elementwise_tol),
      pw("clamp_int_bounds", FN(ops::clamp(x[0], -1, 1)), unary_inputs(-3, 3), elementwise_tol),
      pw("clamp_min_only", FN(ops::clamp(x[0], -0.5, std::nullopt)), unary_inputs(-2, 2),
         elementwise_tol),
      pw("clamp_max_only", FN(ops::clamp(x[0], std::nullopt, 0.7)), unary_inputs(-2, 2),
         elementwise_tol),
      pw("clamp_inverted", FN(ops::clamp(x[0], 1, -1)), unary_inputs(-2, 2), elementwise_tol),
      pw("clamp_", FN(ops::clamp_(x[0], -0.5, 0.7)), unary_inputs(-2, 2), elementwise_tol),
      pw("clamp_min", FN(ops::clamp_min(x[0], 0.3)), unary_inputs(-2, 2), elementwise_tol),
      pw("clamp_min_", FN(ops::clamp_min_(x[0], 1)), unary_inputs(-2, 2), elementwise_tol),
      pw("clamp_max", FN(ops::clamp_max(x[0], 0.3)), unary_inputs(-2, 2), elementwise_tol),
      pw("clamp_max_", FN(ops::clamp_max_(x[0], 1)), unary_inputs(-2, 2), elementwise_tol),
      pw("logical_not", FN(ops::logical_not(x[0])), unary_inputs(-1, 1), elementwise_tol),
      pw("logical_not_", FN(ops::logical_not_(x[0])), unary_inputs(-1, 1), elementwise_tol),
  };
  return v;
}

// Ops with a Python-number operand.
const std::vector<OpCase>& scalar_operand_cases() {
  static const std::vector<OpCase> v = {
      pw("add_Scalar_float", FN(ops::add_Scalar(x[0], 2.5)), unary_inputs(-3, 3), elementwise_tol),
      pw("add_Scalar_int_alpha", FN(ops::add_Scalar(x[0], 3, 2)), unary_inputs(-3, 3),
         elementwise_tol),
      pw("add_Scalar_bool", FN(ops::add_Scalar(x[0], true)), unary_inputs(-3, 3), elementwise_tol),
      pw("add__Scalar", FN(ops::add__Scalar(x[0], 2)), unary_inputs(-3, 3), elementwise_tol),
      pw("add__Scalar_float", FN(ops::add__Scalar(x[0], 2.5)), unary_inputs(-3, 3),
         elementwise_tol),
      pw("sub_Scalar", FN(ops::sub_Scalar(x[0], 1.5)), unary_inputs(-3, 3), elementwise_tol),
      pw("sub__Scalar", FN(ops::sub__Scalar(x[0], 2)), unary_inputs(-3, 3), elementwise_tol),
      pw("rsub_Scalar", FN(ops::rsub_Scalar(x[0], 1.5, 2)), unary_inputs(-3, 3), elementwise_tol),
      pw("mul_Scalar_float", FN(ops::mul_Scalar(x[0], -1.5)), unary_inputs(-3, 3), elementwise_tol),
      pw("mul_Scalar_int", FN(ops::mul_Scalar(x[0], 3)), unary_inputs(-3, 3), elementwise_tol),
      pw("mul__Scalar", FN(ops::mul__Scalar(x[0], 2)), unary_inputs(-3, 3), elementwise_tol),
      pw("div_Scalar_int", FN(ops::div_Scalar(x[0], 3)), unary_inputs(-3, 3), elementwise_tol),
      pw("div_Scalar_float", FN(ops::div_Scalar(x[0], -0.75)), unary_inputs(-3, 3),
         elementwise_tol),
      pw("div__Scalar", FN(ops::div__Scalar(x[0], 2)), unary_inputs(-3, 3), elementwise_tol),
      pw("div_Scalar_mode_floor", FN(ops::div_Scalar_mode(x[0], 3, "floor")), unary_inputs(-9, 9),
         elementwise_tol),
      pw("div_Scalar_mode_trunc", FN(ops::div_Scalar_mode(x[0], -2, "trunc")), unary_inputs(-9, 9),
         elementwise_tol),
      pw("div_Scalar_mode_float_floor", FN(ops::div_Scalar_mode(x[0], 1.5, "floor")),
         unary_inputs(-9, 9), elementwise_tol),
      pw("div_Scalar_mode_none", FN(ops::div_Scalar_mode(x[0], 4, std::nullopt)),
         unary_inputs(-9, 9), elementwise_tol),
      pw("div__Scalar_mode", FN(ops::div__Scalar_mode(x[0], 2, "floor")), unary_inputs(-9, 9),
         elementwise_tol),
      pw("pow_Tensor_Scalar_2", FN(ops::pow_Tensor_Scalar(x[0], 2)), unary_inputs(-3, 3)),
      pw("pow_Tensor_Scalar_3", FN(ops::pow_Tensor_Scalar(x[0], 3)), unary_inputs(-3, 3)),
      pw("pow_Tensor_Scalar_half", FN(ops::pow_Tensor_Scalar(x[0], 0.5)), unary_inputs(0, 4)),
      pw("pow_Tensor_Scalar_minus1", FN(ops::pow_Tensor_Scalar(x[0], -1)), unary_inputs(0.2, 3)),
      pw("pow_Tensor_Scalar_minus2_float", FN(ops::pow_Tensor_Scalar(x[0], -2.0)),
         unary_inputs(0.2, 3)),
      pw("pow_Tensor_Scalar_2_5", FN(ops::pow_Tensor_Scalar(x[0], 2.5)), unary_inputs(0, 3)),
      pw("pow_Tensor_Scalar_0", FN(ops::pow_Tensor_Scalar(x[0], 0)), unary_inputs(-3, 3)),
      pw("pow__Scalar", FN(ops::pow__Scalar(x[0], 2)), unary_inputs(-3, 3)),
      pw("pow_Scalar_int_base", FN(ops::pow_Scalar(2, x[0])), unary_inputs(-3, 5)),
      pw("pow_Scalar_float_base", FN(ops::pow_Scalar(1.5, x[0])), unary_inputs(-3, 5)),
      pw("fmod_Scalar_float", FN(ops::fmod_Scalar(x[0], 1.5)), unary_inputs(-9, 9)),
      pw("fmod_Scalar_int", FN(ops::fmod_Scalar(x[0], -4)), unary_inputs(-9, 9)),
      pw("fmod__Scalar", FN(ops::fmod__Scalar(x[0], 3)), unary_inputs(-9, 9)),
      pw("remainder_Scalar_float", FN(ops::remainder_Scalar(x[0], -1.5)), unary_inputs(-9, 9)),
      pw("remainder_Scalar_int", FN(ops::remainder_Scalar(x[0], 4)), unary_inputs(-9, 9)),
      pw("remainder__Scalar", FN(ops::remainder__Scalar(x[0], -3)), unary_inputs(-9, 9)),
      pw("remainder_Scalar_Tensor", FN(ops::remainder_Scalar_Tensor(5, x[0])),
         unary_inputs(-9, 9, /*nonzero=*/true)),
      pw("eq_Scalar", FN(ops::eq_Scalar(x[0], 1)), unary_inputs(-2, 2), elementwise_tol),
      pw("ne_Scalar", FN(ops::ne_Scalar(x[0], 0.5)), unary_inputs(-2, 2), elementwise_tol),
      pw("lt_Scalar", FN(ops::lt_Scalar(x[0], 0)), unary_inputs(-2, 2), elementwise_tol),
      pw("le_Scalar", FN(ops::le_Scalar(x[0], 1)), unary_inputs(-2, 2), elementwise_tol),
      pw("gt_Scalar", FN(ops::gt_Scalar(x[0], -0.5)), unary_inputs(-2, 2), elementwise_tol),
      pw("ge_Scalar", FN(ops::ge_Scalar(x[0], true)), unary_inputs(-2, 2), elementwise_tol),
  };
  return v;
}

const std::vector<OpCase>& binary_cases() {
  static const std::vector<OpCase> v = {
      pw("add", FN(ops::add(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("add_alpha_int", FN(ops::add(x[0], x[1], 2)), binary_inputs(-3, 3), elementwise_tol),
      pw("add_alpha_float", FN(ops::add(x[0], x[1], 0.5)), binary_inputs(-3, 3), elementwise_tol),
      pw("add_", FN(ops::add_(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("add_out",
         FN(ops::add_out(x[0], x[1], 1,
                         Tensor::empty(broadcast_shapes(x[0].sizes(), x[1].sizes()), x[0].dtype(),
                                       x[0].device()))),
         binary_inputs(-3, 3), elementwise_tol),
      pw("sub", FN(ops::sub(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("sub_alpha", FN(ops::sub(x[0], x[1], 3)), binary_inputs(-3, 3), elementwise_tol),
      pw("sub_", FN(ops::sub_(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("rsub", FN(ops::rsub(x[0], x[1], 2)), binary_inputs(-3, 3), elementwise_tol),
      pw("mul", FN(ops::mul(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("mul_", FN(ops::mul_(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("mul_out",
         FN(ops::mul_out(x[0], x[1],
                         Tensor::empty(broadcast_shapes(x[0].sizes(), x[1].sizes()), x[0].dtype(),
                                       x[0].device()))),
         binary_inputs(-3, 3), elementwise_tol),
      pw("div", FN(ops::div(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("div_", FN(ops::div_(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("div_trunc", FN(ops::div_Tensor_mode(x[0], x[1], "trunc")), binary_inputs(-9, 9, true),
         elementwise_tol),
      pw("div_floor", FN(ops::div_Tensor_mode(x[0], x[1], "floor")), binary_inputs(-9, 9, true),
         elementwise_tol),
      pw("div_mode_none", FN(ops::div_Tensor_mode(x[0], x[1], std::nullopt)), binary_inputs(-9, 9),
         elementwise_tol),
      pw("div_bad_mode", FN(ops::div_Tensor_mode(x[0], x[1], "round")), binary_inputs(-9, 9),
         elementwise_tol),
      pw("div__trunc", FN(ops::div__Tensor_mode(x[0], x[1], "trunc")), binary_inputs(-9, 9, true),
         elementwise_tol),
      pw("div__floor", FN(ops::div__Tensor_mode(x[0], x[1], "floor")), binary_inputs(-9, 9, true),
         elementwise_tol),
      pw("pow", FN(ops::pow(x[0], x[1])), binary_inputs(-3, 3)),
      pw("pow_", FN(ops::pow_(x[0], x[1])), binary_inputs(-3, 3)),
      pw("fmod", FN(ops::fmod(x[0], x[1])), binary_inputs(-9, 9, true)),
      pw("fmod_", FN(ops::fmod_(x[0], x[1])), binary_inputs(-9, 9, true)),
      pw("remainder", FN(ops::remainder(x[0], x[1])), binary_inputs(-9, 9, true)),
      pw("remainder_", FN(ops::remainder_(x[0], x[1])), binary_inputs(-9, 9, true)),
      pw("atan2", FN(ops::atan2(x[0], x[1])), binary_inputs(-3, 3)),
      pw("atan2_", FN(ops::atan2_(x[0], x[1])), binary_inputs(-3, 3)),
      pw("eq", FN(ops::eq(x[0], x[1])), binary_inputs(-2, 2), elementwise_tol),
      pw("ne", FN(ops::ne(x[0], x[1])), binary_inputs(-2, 2), elementwise_tol),
      pw("lt", FN(ops::lt(x[0], x[1])), binary_inputs(-2, 2), elementwise_tol),
      pw("le", FN(ops::le(x[0], x[1])), binary_inputs(-2, 2), elementwise_tol),
      pw("gt", FN(ops::gt(x[0], x[1])), binary_inputs(-2, 2), elementwise_tol),
      pw("ge", FN(ops::ge(x[0], x[1])), binary_inputs(-2, 2), elementwise_tol),
      pw("maximum", FN(ops::maximum(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("minimum", FN(ops::minimum(x[0], x[1])), binary_inputs(-3, 3), elementwise_tol),
      pw("logical_and", FN(ops::logical_and(x[0], x[1])), binary_inputs(-1, 1), elementwise_tol),
      pw("logical_and_", FN(ops::logical_and_(x[0], x[1])), binary_inputs(-1, 1), elementwise_tol),
      pw("logical_or", FN(ops::logical_or(x[0], x[1])), binary_inputs(-1, 1), elementwise_tol),
      pw("logical_or_", FN(ops::logical_or_(x[0], x[1])), binary_inputs(-1, 1), elementwise_tol),
      pw("logical_xor", FN(ops::logical_xor(x[0], x[1])), binary_inputs(-1, 1), elementwise_tol),
      pw("logical_xor_", FN(ops::logical_xor_(x[0], x[1])), binary_inputs(-1, 1), elementwise_tol),
      pw("clamp_min_Tensor", FN(ops::clamp_min_Tensor(x[0], x[1])), binary_inputs(-3, 3),
         elementwise_tol),
      pw("clamp_min__Tensor", FN(ops::clamp_min__Tensor(x[0], x[1])), binary_inputs(-3, 3),
         elementwise_tol),
      pw("clamp_max_Tensor", FN(ops::clamp_max_Tensor(x[0], x[1])), binary_inputs(-3, 3),
         elementwise_tol),
      pw("clamp_max__Tensor", FN(ops::clamp_max__Tensor(x[0], x[1])), binary_inputs(-3, 3),
         elementwise_tol),
      pw("clamp_Tensor_min_only", FN(ops::clamp_Tensor(x[0], x[1], Tensor())), binary_inputs(-3, 3),
         elementwise_tol),
      pw("clamp_Tensor_max_only", FN(ops::clamp_Tensor(x[0], Tensor(), x[1])), binary_inputs(-3, 3),
         elementwise_tol),
  };
  return v;
}

const std::vector<OpCase>& ternary_cases() {
  static const std::vector<OpCase> v = {
      pw("addcmul", FN(ops::addcmul(x[0], x[1], x[2])), ternary_inputs(-3, 3), fused_tol),
      pw("addcmul_value", FN(ops::addcmul(x[0], x[1], x[2], 0.5)), ternary_inputs(-3, 3),
         fused_tol),
      pw("addcmul_", FN(ops::addcmul_(x[0], x[1], x[2], 2)), ternary_inputs(-3, 3), fused_tol),
      pw("addcdiv", FN(ops::addcdiv(x[0], x[1], x[2])), ternary_inputs(-3, 3, true), fused_tol),
      pw("addcdiv_value", FN(ops::addcdiv(x[0], x[1], x[2], -2)), ternary_inputs(-3, 3, true),
         fused_tol),
      pw("addcdiv_", FN(ops::addcdiv_(x[0], x[1], x[2], 0.5)), ternary_inputs(-3, 3, true),
         fused_tol),
      pw("clamp_Tensor", FN(ops::clamp_Tensor(x[0], x[1], x[2])), ternary_inputs(-3, 3),
         elementwise_tol),
      pw("clamp__Tensor", FN(ops::clamp__Tensor(x[0], x[1], x[2])), ternary_inputs(-3, 3),
         elementwise_tol),
      pw("where", FN(ops::where(x[0], x[1], x[2])), ternary_inputs(-3, 3, false, kBool),
         elementwise_tol),
      pw("where_ScalarSelf", FN(ops::where_ScalarSelf(x[0], 2.5, x[1])),
         ternary_inputs(-3, 3, false, kBool), elementwise_tol),
      pw("where_ScalarOther", FN(ops::where_ScalarOther(x[0], x[1], -1)),
         ternary_inputs(-3, 3, false, kBool), elementwise_tol),
      pw("where_Scalar", FN(ops::where_Scalar(x[0], 1, 0.5)), ternary_inputs(-3, 3, false, kBool),
         elementwise_tol),
  };
  return v;
}

const std::vector<OpCase>& mixed_dtype_cases() {
  static const std::vector<OpCase> v = {
      mixed("add", FN(ops::add(x[0], x[1]))),
      mixed("add_", FN(ops::add_(x[0], x[1]))),
      mixed("sub", FN(ops::sub(x[0], x[1]))),
      mixed("mul", FN(ops::mul(x[0], x[1]))),
      mixed("div", FN(ops::div(x[0], x[1]))),
      mixed("div_floor", FN(ops::div_Tensor_mode(x[0], x[1], "floor")), true),
      mixed("remainder", FN(ops::remainder(x[0], x[1])), true),
      mixed("pow", FN(ops::pow(x[0], x[1]))),
      mixed("atan2", FN(ops::atan2(x[0], x[1]))),
      mixed("eq", FN(ops::eq(x[0], x[1]))),
      mixed("lt", FN(ops::lt(x[0], x[1]))),
      mixed("maximum", FN(ops::maximum(x[0], x[1]))),
      mixed("logical_and", FN(ops::logical_and(x[0], x[1]))),
      OpCase{"addcmul", FN(ops::addcmul(x[0], x[1], x[1])), mixed_inputs(), {kF32}, fused_tol},
      mixed("where", FN(ops::where(ops::gt_Scalar(x[1], 0).tensor(), x[0], x[1]))),
      mixed("copy_", FN(ops::copy_(x[0], x[1]))),
  };
  return v;
}

INSTANTIATE_TEST_SUITE_P(Unary, CudaOp, ::testing::ValuesIn(unary_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(ScalarOperand, CudaOp, ::testing::ValuesIn(scalar_operand_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Binary, CudaOp, ::testing::ValuesIn(binary_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Ternary, CudaOp, ::testing::ValuesIn(ternary_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(MixedDtypes, CudaOp, ::testing::ValuesIn(mixed_dtype_cases()), case_name);

// ---- Tensor ops: fill_, zero_, clone, conversions (runtime/ops/tensor.def) ----------------------

const std::vector<OpCase>& tensor_op_cases() {
  static const std::vector<OpCase> v = {
      pw("fill__float", FN(ops::fill_(x[0], 2.5)), unary_inputs(-3, 3), exact_tol),
      pw("fill__int", FN(ops::fill_(x[0], -3)), unary_inputs(-3, 3), exact_tol),
      pw("fill__large_int", FN(ops::fill_(x[0], int64_t{1} << 40)), unary_inputs(-3, 3), exact_tol),
      pw("fill__bool", FN(ops::fill_(x[0], true)), unary_inputs(-3, 3), exact_tol),
      pw("zero_", FN(ops::zero_(x[0])), unary_inputs(-3, 3), exact_tol),
      pw("clone", FN(ops::clone(x[0])), unary_inputs(-3, 3), exact_tol),
      pw("contiguous", FN(ops::contiguous(x[0])), unary_inputs(-3, 3), exact_tol),
      pw("to_dtype_float16", FN(ops::to_dtype(x[0], kF16)), unary_inputs(-300, 300), exact_tol),
      // No NaN or infinity: their conversion to an integer is undefined in C++.
      pw("to_dtype_int64", FN(ops::to_dtype(x[0], kI64)), unary_inputs(0, 300, false, false),
         exact_tol),
      pw("to_dtype_bool", FN(ops::to_dtype(x[0], kBool)), unary_inputs(-3, 3), exact_tol),
      pw("to_dtype_same", FN(ops::to_dtype(x[0], c.dtype)), unary_inputs(-3, 3), exact_tol),
      pw("to_dtype_same_copy", FN(ops::to_dtype(x[0], c.dtype, false, true)), unary_inputs(-3, 3),
         exact_tol),
      pw("copy_", FN(ops::copy_(x[0], x[1])), binary_inputs(0, 100), exact_tol),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(TensorOps, CudaOp, ::testing::ValuesIn(tensor_op_cases()), case_name);

// ---- Creation (runtime/ops/creation.def) --------------------------------------------------------

// No tensor arguments: the op builds its tensor on c.device in c.dtype.
Gen no_inputs() {
  return [](ScalarType) { return std::vector<InputSet>{InputSet{}}; };
}
// One tensor to take the shape (and dtype and device) of: strided, 0-dim, empty.
Gen like_inputs() {
  return [](ScalarType dt) {
    return std::vector<InputSet>{
        {{rnd({3, 4}, dt, 1, -2, 2, true)}}, {{rnd({}, dt, 2)}}, {{rnd({0, 5}, dt, 3)}}};
  };
}
OpCase creation(std::string name, Fn fn, Gen inputs = no_inputs(), TolFn tol = exact_tol) {
  return OpCase{std::move(name), std::move(fn), std::move(inputs), kAllTypes, tol};
}

const std::vector<OpCase>& creation_cases() {
  static const std::vector<OpCase> v = {
      creation("zeros", FN(ops::zeros(V{2, 3}, c.dtype, c.device))),
      creation("zeros_0dim", FN(ops::zeros(V{}, c.dtype, c.device))),
      creation("zeros_empty", FN(ops::zeros(V{0, 3}, c.dtype, c.device))),
      creation("zeros_large", FN(ops::zeros(V{300, 257}, c.dtype, c.device))),
      creation("ones", FN(ops::ones(V{4, 1, 3}, c.dtype, c.device))),
      creation("ones_default_dtype", FN(ops::ones(V{5}, std::nullopt, c.device))),
      creation("full_float", FN(ops::full(V{3, 2}, 2.5, c.dtype, c.device))),
      creation("full_negative_int", FN(ops::full(V{2, 2}, -7, c.dtype, c.device))),
      creation("full_bool", FN(ops::full(V{3}, true, c.dtype, c.device))),
      creation("full_inferred_dtype", FN(ops::full(V{2, 3}, 7, std::nullopt, c.device))),
      creation("arange", FN(ops::arange(10, c.dtype, c.device))),
      creation("arange_start", FN(ops::arange_start(-3, 4, c.dtype, c.device))),
      creation("arange_start_step", FN(ops::arange_start_step(0, 2, 0.25, c.dtype, c.device)),
               no_inputs(), elementwise_tol),
      creation("arange_negative_step", FN(ops::arange_start_step(10, -5, -3, c.dtype, c.device))),
      creation("arange_float_default",
               FN(ops::arange_start_step(0.5, 3.0, 0.5, std::nullopt, c.device)), no_inputs(),
               elementwise_tol),
      creation("eye", FN(ops::eye(4, c.dtype, c.device))),
      creation("eye_m", FN(ops::eye_m(3, 5, c.dtype, c.device))),
      creation("eye_empty", FN(ops::eye_m(0, 3, c.dtype, c.device))),
      creation("zeros_like", FN(ops::zeros_like(x[0])), like_inputs()),
      creation("ones_like", FN(ops::ones_like(x[0])), like_inputs()),
      creation("ones_like_dtype", FN(ops::ones_like(x[0], kF16)), like_inputs()),
      creation("full_like", FN(ops::full_like(x[0], 3)), like_inputs()),
      creation("full_like_float", FN(ops::full_like(x[0], -1.5, kF32)), like_inputs()),
      // A CPU tensor's *_like on the device asked for.
      creation("zeros_like_device", FN(ops::zeros_like(to_cpu(x[0]), std::nullopt, c.device)),
               like_inputs()),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(Creation, CudaOp, ::testing::ValuesIn(creation_cases()), case_name);

// empty and empty_like: the metadata only (the values are whatever the allocator held).
TEST_F(CudaTest, EmptyHasTheShapeDtypeAndDevice) {
  for (ScalarType dt : kAllTypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor e = ops::empty(V{2, 0, 3}, dt, kCuda);
    EXPECT_EQ(shape_of(e), (V{2, 0, 3}));
    EXPECT_EQ(e.dtype(), dt);
    EXPECT_EQ(e.device(), kCuda);
    const Tensor f = ops::empty(V{5, 7}, dt, Device(DeviceType::CUDA));  // "cuda": the current one
    EXPECT_EQ(f.device(), kCuda);
    EXPECT_TRUE(f.is_contiguous());
    const Tensor l = ops::empty_like(f);
    EXPECT_EQ(shape_of(l), (V{5, 7}));
    EXPECT_EQ(l.dtype(), dt);
    EXPECT_EQ(l.device(), kCuda);
    const Tensor h = ops::empty_like(f, std::nullopt, kCpu);
    EXPECT_TRUE(h.device().is_cpu());
  }
}

// ---- Reductions, scans, softmax (runtime/ops/reduction.def) -------------------------------------

// Rows short and long (one block and many), strided, 3-d, 0-dim and empty inputs, and special
// values: NaN, infinities, a row of -inf, ties.
Gen reduce_inputs(double lo, double hi) {
  return [=](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 400);
    const std::vector<Layout> layouts = {{{5, 7}, false},   {{4, 6}, true},     {{3, 4, 5}, false},
                                         {{}, false},       {{0, 3}, false},    {{3, 1000}, false},
                                         {{1000, 3}, true}, {{2, 3, 300}, true}};
    for (const Layout& l : layouts)
      sets.push_back({{rnd(l.shape, dt, ++seed, lo, hi, l.noncontig)}});
    sets.push_back({{sliced({6, 9}, dt, ++seed, lo, hi)}});
    if (is_floating(dt)) {
      const D special = {1,     kNaN,  2,     3,     -1,    kInf, 1,   2,    -kInf, 0,
                         -kInf, -kInf, -kInf, -kInf, -kInf, 0.5,  0.5, -0.5, 0.5,   0.25};
      sets.push_back({{from_values({4, 5}, special, dt)}});
    } else {
      const D s = special_values(dt, false);
      sets.push_back({{from_values({1, len(s)}, s, dt)}});
    }
    return sets;
  };
}
OpCase red(std::string name, Fn fn, TolFn tol = accumulated_tol, double lo = -2, double hi = 2) {
  return OpCase{std::move(name), std::move(fn), reduce_inputs(lo, hi), kAllTypes, tol};
}

OpCase with_dtypes(OpCase c, std::vector<ScalarType> dtypes) {
  c.dtypes = std::move(dtypes);
  return c;
}

const std::vector<OpCase>& reduction_cases() {
  static const std::vector<OpCase> v = {
      red("sum", FN(ops::sum(x[0]))),
      red("sum_dtype", FN(ops::sum(x[0], kF64))),
      red("sum_dim_last", FN(ops::sum_dim_IntList(x[0], V{-1}))),
      red("sum_dim_first_keepdim", FN(ops::sum_dim_IntList(x[0], V{0}, true))),
      red("sum_dim_two", FN(ops::sum_dim_IntList(x[0], V{0, -1}))),
      red("sum_dim_none", FN(ops::sum_dim_IntList(x[0], std::nullopt, true, kF64))),
      // Summed in float32: integer extremes cancel catastrophically there (the order of the adds
      // decides the result, on the CPU as on CUDA), so only floating inputs are compared.
      with_dtypes(red("sum_dim_none_f32", FN(ops::sum_dim_IntList(x[0], std::nullopt, true, kF32))),
                  kFloatTypes),
      red("mean", FN(ops::mean(x[0]))),
      red("mean_dim", FN(ops::mean_dim(x[0], V{-1}, true))),
      red("mean_dim_dtype", FN(ops::mean_dim(x[0], V{0}, false, kF64))),
      red("prod", FN(ops::prod(x[0])), accumulated_tol, 0.5, 1.5),
      red("prod_dim_int", FN(ops::prod_dim_int(x[0], -1)), accumulated_tol, 0.5, 1.5),
      red("prod_dim_int_keepdim", FN(ops::prod_dim_int(x[0], 0, true)), accumulated_tol, 0.5, 1.5),
      red("amax", FN(ops::amax(x[0])), exact_tol),
      red("amax_dim", FN(ops::amax(x[0], V{-1})), exact_tol),
      red("amin_dim_keepdim", FN(ops::amin(x[0], V{0}, true)), exact_tol),
      red("max", FN(ops::max(x[0])), exact_tol),
      red("max_dim", FN(ops::max_dim(x[0], -1)), exact_tol),
      red("max_dim_keepdim", FN(ops::max_dim(x[0], 0, true)), exact_tol),
      red("min", FN(ops::min(x[0])), exact_tol),
      red("min_dim", FN(ops::min_dim(x[0], -1)), exact_tol),
      red("argmax", FN(ops::argmax(x[0])), exact_tol),
      red("argmax_dim", FN(ops::argmax(x[0], -1)), exact_tol),
      red("argmin_dim_keepdim", FN(ops::argmin(x[0], 0, true)), exact_tol),
      red("argmin", FN(ops::argmin(x[0])), exact_tol),
      red("cumsum", FN(ops::cumsum(x[0], -1))),
      red("cumsum_dim0_dtype", FN(ops::cumsum(x[0], 0, kF64))),
      red("cumprod", FN(ops::cumprod(x[0], -1)), accumulated_tol, 0.5, 1.5),
      red("logsumexp", FN(ops::logsumexp(x[0], V{-1}))),
      red("logsumexp_keepdim", FN(ops::logsumexp(x[0], V{0}, true))),
      red("var", FN(ops::var(x[0]))),
      red("var_dim", FN(ops::var_dim(x[0], V{-1}))),
      red("var_biased", FN(ops::var_dim(x[0], V{0}, false, true))),
      red("var_correction", FN(ops::var_correction(x[0], V{-1}, 2, false))),
      red("std", FN(ops::std(x[0]))),
      red("std_dim", FN(ops::std_dim(x[0], V{-1}, true, true))),
      red("std_correction", FN(ops::std_correction(x[0], std::nullopt, 0))),
      red("norm_Scalar", FN(ops::norm_Scalar(x[0]))),
      red("norm_Scalar_1", FN(ops::norm_Scalar(x[0], 1))),
      red("norm_Scalar_inf", FN(ops::norm_Scalar(x[0], kInf))),
      red("norm_ScalarOpt_dim", FN(ops::norm_ScalarOpt_dim(x[0], 3.0, V{-1}))),
      red("norm_ScalarOpt_dtype", FN(ops::norm_ScalarOpt_dtype(x[0], 2, kF64))),
      red("norm_ScalarOpt_dim_dtype", FN(ops::norm_ScalarOpt_dim_dtype(x[0], 2, V{0}, true, kF32))),
      red("softmax", FN(ops::softmax_int(x[0], -1)), transcendental_tol),
      red("softmax_dim0_dtype", FN(ops::softmax_int(x[0], 0, kF32)), transcendental_tol),
      red("log_softmax", FN(ops::log_softmax_int(x[0], -1)), transcendental_tol),
      red("log_softmax_dtype", FN(ops::log_softmax_int(x[0], 0, kF64)), transcendental_tol),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(Reduction, CudaOp, ::testing::ValuesIn(reduction_cases()), case_name);

// ---- nn (runtime/ops/nn.def) --------------------------------------------------------------------

// (input, weight, bias): weight's shape is normalized_shape. A mean far from zero (30) with a
// small spread; the last set mixes a reduced-precision input with float32 parameters.
Gen layer_norm_inputs() {
  return [](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 500);
    auto add = [&](const V& x, const V& w, bool noncontig, ScalarType wt, double offset = 0) {
      Tensor in = rnd(x, dt, ++seed, -2 + offset, 2 + offset, noncontig);
      sets.push_back({{in, rnd(w, wt, ++seed, 0.5, 1.5), rnd(w, wt, ++seed, -1, 1)}});
    };
    add({4, 10}, {10}, false, dt);
    add({2, 3, 8}, {3, 8}, false, dt);
    add({6, 5}, {5}, true, dt);
    add({0, 5}, {5}, false, dt);
    add({3, 2000}, {2000}, false, dt);
    if (dt == kF32 || dt == kF64) add({4, 64}, {64}, false, dt, 30);
    if (dt != kF32) add({4, 10}, {10}, false, kF32);
    return sets;
  };
}
// (input, weight, bias) with C = input.size(1) divisible by 2.
Gen group_norm_inputs() {
  return [](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 600);
    auto add = [&](const V& x, bool noncontig, ScalarType wt) {
      sets.push_back({{rnd(x, dt, ++seed, -2, 2, noncontig), rnd({x[1]}, wt, ++seed, 0.5, 1.5),
                       rnd({x[1]}, wt, ++seed, -1, 1)}});
    };
    add({2, 6, 5}, false, dt);
    add({3, 4, 2, 2}, true, dt);
    add({2, 4}, false, dt);
    add({0, 4, 3}, false, dt);
    add({2, 8, 1000}, false, dt);
    if (dt != kF32) add({2, 6, 5}, false, kF32);
    return sets;
  };
}
// (input, weight, bias, running_mean, running_var) with C = input.size(1) = 3.
Gen batch_norm_inputs() {
  return [](ScalarType dt) {
    std::vector<InputSet> sets;
    uint64_t seed = seed_of(dt, 700);
    auto add = [&](const V& x, bool noncontig, ScalarType pt) {
      sets.push_back({{rnd(x, dt, ++seed, -2, 2, noncontig), rnd({3}, pt, ++seed, 0.5, 1.5),
                       rnd({3}, pt, ++seed, -1, 1), rnd({3}, pt, ++seed, -0.5, 0.5),
                       rnd({3}, pt, ++seed, 0.5, 2)}});
    };
    add({4, 3}, false, dt);
    add({2, 3, 5, 4}, false, dt);
    add({6, 3, 7}, true, dt);
    add({1, 3}, false, dt);  // one value per channel: training raises
    add({64, 3, 33, 17}, false, dt);
    if (dt != kF32) add({4, 3, 5}, false, kF32);
    return sets;
  };
}
OpCase nn(std::string name, Fn fn, Gen inputs) {
  return OpCase{std::move(name), std::move(fn), std::move(inputs), kFloatTypesAndLong,
                normalization_tol};
}

const std::vector<OpCase>& nn_cases() {
  static const std::vector<OpCase> v = {
      nn("layer_norm", FN(ops::layer_norm(x[0], shape_of(x[1]), x[1], x[2], 1e-5)),
         layer_norm_inputs()),
      nn("layer_norm_no_affine", FN(ops::layer_norm(x[0], shape_of(x[1]))), layer_norm_inputs()),
      nn("layer_norm_weight_only", FN(ops::layer_norm(x[0], shape_of(x[1]), x[1], Tensor(), 1e-3)),
         layer_norm_inputs()),
      nn("group_norm", FN(ops::group_norm(x[0], 2, x[1], x[2], 1e-5)), group_norm_inputs()),
      nn("group_norm_per_channel", FN(ops::group_norm(x[0], x[0].size(1))), group_norm_inputs()),
      nn("group_norm_one_group", FN(ops::group_norm(x[0], 1, x[1])), group_norm_inputs()),
      nn("batch_norm_eval",
         FN(ops::batch_norm(x[0], x[1], x[2], x[3], x[4], false, 0.1, 1e-5, true)),
         batch_norm_inputs()),
      nn("batch_norm_eval_no_affine",
         FN(ops::batch_norm(x[0], Tensor(), Tensor(), x[3], x[4], false, 0.1, 1e-5, true)),
         batch_norm_inputs()),
      // Training updates running_mean and running_var in place: compared as arguments.
      nn("batch_norm_train",
         FN(ops::batch_norm(x[0], x[1], x[2], x[3], x[4], true, 0.1, 1e-5, true)),
         batch_norm_inputs()),
      nn("batch_norm_train_momentum_1",
         FN(ops::batch_norm(x[0], Tensor(), x[2], x[3], x[4], true, 1.0, 1e-3, false)),
         batch_norm_inputs()),
      nn("batch_norm_train_no_running_stats",
         FN(ops::batch_norm(x[0], x[1], x[2], Tensor(), Tensor(), true, 0.1, 1e-5, true)),
         batch_norm_inputs()),
      nn("dropout_eval", FN(ops::dropout(x[0], 0.5, false)), unary_inputs(-2, 2)),
      nn("dropout__eval", FN(ops::dropout_(x[0], 0.5, false)), unary_inputs(-2, 2)),
      nn("dropout_p0_train", FN(ops::dropout(x[0], 0.0, true)), unary_inputs(-2, 2)),
      nn("dropout_bad_p", FN(ops::dropout(x[0], 1.5, false)), unary_inputs(-2, 2)),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(NN, CudaOp, ::testing::ValuesIn(nn_cases()), case_name);

// ---- Indexing (runtime/ops/indexing.def) --------------------------------------------------------

Tensor index_of(const D& v, const V& shape, ScalarType t = kI64) {
  return from_values(shape, v, t);
}

// (x, index) for index_select along dim 0, 1 or -1 of a [5, 6] input: indices in [0, 4], with
// repeats, int32, 0-dim, empty, strided; a large input.
Gen index_select_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 800);
    std::vector<InputSet> sets = {
        {{rnd({5, 6}, dt, ++seed), rnd({3}, kI64, ++seed, 0, 4)}},
        {{rnd({5, 6}, dt, ++seed, -2, 2, true), rnd({7}, kI64, ++seed, 0, 4, true)}},
        {{sliced({5, 6}, dt, ++seed), rnd({4}, kI32, ++seed, 0, 4)}},
        {{rnd({5, 6}, dt, ++seed), index_of({2}, {})}},
        {{rnd({5, 6}, dt, ++seed), index_of({}, {0})}},
        {{rnd({0, 6}, dt, ++seed), index_of({}, {0})}},
        {{rnd({300, 200}, dt, ++seed), rnd({150}, kI64, ++seed, 0, 199)}},
    };
    return sets;
  };
}
// (x, index) for gather along dim 0 or 1 of a square input.
Gen gather_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 900);
    return std::vector<InputSet>{
        {{rnd({5, 5}, dt, ++seed), rnd({3, 3}, kI64, ++seed, 0, 4)}},
        {{rnd({5, 5}, dt, ++seed, -2, 2, true), rnd({3, 3}, kI64, ++seed, 0, 4, true)}},
        {{rnd({5, 5}, dt, ++seed), rnd({5, 5}, kI64, ++seed, 0, 4)}},
        {{rnd({5, 5}, dt, ++seed), Tensor::empty(V{0, 3}, kI64)}},
        {{rnd({}, dt, ++seed), index_of({0}, {})}},
        {{rnd({5, 5}, dt, ++seed), rnd({3, 3}, kI32, ++seed, 0, 4)}},
        {{rnd({64, 300}, dt, ++seed), rnd({64, 300}, kI64, ++seed, 0, 63)}},
    };
  };
}
// (self, index, source) for index_copy along dim 0 with unique indices (duplicates have no
// defined winner on a device).
Gen index_copy_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 1000);
    D perm;
    for (int i = 0; i < 100; ++i) perm.push_back((7 * i) % 200);
    return std::vector<InputSet>{
        {{rnd({5, 4}, dt, ++seed), index_of({4, 0, 2}, {3}), rnd({3, 4}, dt, ++seed)}},
        {{rnd({5, 4}, dt, ++seed, -2, 2, true), index_of({1, 3}, {2}),
          rnd({2, 4}, dt, ++seed, -2, 2, true)}},
        {{rnd({5, 4}, dt, ++seed), index_of({}, {0}), rnd({0, 4}, dt, ++seed)}},
        {{rnd({5}, dt, ++seed), index_of({3}, {}), rnd({}, dt, ++seed)}},
        {{rnd({5, 4}, dt, ++seed), index_of({4, 0, 2}, {3}, kI32), rnd({3, 4}, dt, ++seed)}},
        {{rnd({200, 64}, dt, ++seed), index_of(perm, {100}), rnd({100, 64}, dt, ++seed)}},
    };
  };
}
// (x) for tril / triu: matrices, batches, strided, empty, and 1-d (an error).
Gen triangle_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 1100);
    return std::vector<InputSet>{
        {{rnd({5, 7}, dt, ++seed)}},        {{rnd({2, 4, 3}, dt, ++seed, -2, 2, true)}},
        {{sliced({6, 4}, dt, ++seed)}},     {{rnd({0, 3}, dt, ++seed)}},
        {{rnd({3, 3, 0}, dt, ++seed)}},     {{rnd({5}, dt, ++seed)}},
        {{rnd({3, 130, 257}, dt, ++seed)}},
    };
  };
}
// (weight, indices) for embedding: rows [0, 9] of a [10, 4] table.
Gen embedding_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 1200);
    return std::vector<InputSet>{
        {{rnd({10, 4}, dt, ++seed), rnd({3, 5}, kI64, ++seed, 0, 9)}},
        {{rnd({10, 4}, dt, ++seed, -2, 2, true), rnd({6}, kI64, ++seed, 0, 9, true)}},
        {{rnd({10, 4}, dt, ++seed), index_of({7}, {})}},
        {{rnd({10, 4}, dt, ++seed), index_of({}, {0})}},
        {{rnd({10, 4}, dt, ++seed), rnd({2, 3, 2}, kI32, ++seed, 0, 9)}},
        {{rnd({1000, 33}, dt, ++seed), rnd({64}, kI64, ++seed, 0, 999)}},
    };
  };
}
// Three tensors to join along dim 0: matrices (one strided, one empty), large, 1-d.
Gen cat_dim0_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 1300);
    return std::vector<InputSet>{
        {{rnd({2, 3}, dt, ++seed), rnd({4, 3}, dt, ++seed, -2, 2, true), rnd({0, 3}, dt, ++seed)}},
        {{rnd({100, 300}, dt, ++seed), rnd({50, 300}, dt, ++seed), rnd({1, 300}, dt, ++seed)}},
        {{rnd({5}, dt, ++seed), rnd({0}, dt, ++seed), sliced({3}, dt, ++seed)}},
        {{rnd({}, dt, ++seed), rnd({}, dt, ++seed), rnd({}, dt, ++seed)}},  // 0-dim: an error
    };
  };
}
// Three tensors to join along dim 1.
Gen cat_dim1_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 1400);
    return std::vector<InputSet>{
        {{rnd({2, 3}, dt, ++seed), rnd({2, 1}, dt, ++seed), rnd({2, 0}, dt, ++seed)}},
        {{rnd({3, 100}, dt, ++seed), rnd({3, 257}, dt, ++seed, -2, 2, true),
          rnd({3, 5}, dt, ++seed)}},
        {{rnd({2, 3, 4}, dt, ++seed), rnd({2, 1, 4}, dt, ++seed), sliced({2, 2, 4}, dt, ++seed)}},
        {{rnd({2, 3}, dt, ++seed), rnd({3, 3}, dt, ++seed), rnd({2, 3}, dt, ++seed)}},  // mismatch
    };
  };
}
// Three tensors of one shape to stack.
Gen stack_inputs() {
  return [](ScalarType dt) {
    uint64_t seed = seed_of(dt, 1500);
    return std::vector<InputSet>{
        {{rnd({2, 3}, dt, ++seed), rnd({2, 3}, dt, ++seed, -2, 2, true),
          sliced({2, 3}, dt, ++seed)}},
        {{rnd({}, dt, ++seed), rnd({}, dt, ++seed), rnd({}, dt, ++seed)}},
        {{rnd({0, 4}, dt, ++seed), rnd({0, 4}, dt, ++seed), rnd({0, 4}, dt, ++seed)}},
        {{rnd({64, 100}, dt, ++seed), rnd({64, 100}, dt, ++seed), rnd({64, 100}, dt, ++seed)}},
    };
  };
}
// Joins of different dtypes (promotion); the dtype loop runs once.
Gen cat_mixed_inputs() {
  return [](ScalarType) {
    return std::vector<InputSet>{
        {{rnd({2, 3}, kF16, 1), rnd({1, 3}, kI64, 2), rnd({2, 3}, kBool, 3)}},
        {{rnd({2}, kF32, 4), rnd({3}, kF64, 5), rnd({1}, kBF16, 6)}},
        {{rnd({2}, kI32, 7), rnd({2}, kU8, 8), rnd({2}, kBool, 9)}},
    };
  };
}
OpCase idx(std::string name, Fn fn, Gen inputs) {
  return OpCase{std::move(name), std::move(fn), std::move(inputs), kAllTypes, exact_tol};
}

const std::vector<OpCase>& indexing_cases() {
  static const std::vector<OpCase> v = {
      idx("cat_dim0", FN(ops::cat(Args{x[0], x[1], x[2]}, 0)), cat_dim0_inputs()),
      idx("cat_dim1", FN(ops::cat(Args{x[0], x[1], x[2]}, 1)), cat_dim1_inputs()),
      idx("cat_dim_minus1", FN(ops::cat(Args{x[0], x[1], x[2]}, -1)), cat_dim1_inputs()),
      OpCase{"cat_mixed_dtypes",
             FN(ops::cat(Args{x[0], x[1], x[2]}, 0)),
             cat_mixed_inputs(),
             {kF32},
             exact_tol},
      idx("stack_dim0", FN(ops::stack(Args{x[0], x[1], x[2]}, 0)), stack_inputs()),
      idx("stack_dim1", FN(ops::stack(Args{x[0], x[1], x[2]}, 1)), stack_inputs()),
      idx("stack_dim_minus1", FN(ops::stack(Args{x[0], x[1], x[2]}, -1)), stack_inputs()),
      idx("index_select_dim0", FN(ops::index_select(x[0], 0, x[1])), index_select_inputs()),
      idx("index_select_dim1", FN(ops::index_select(x[0], 1, x[1])), index_select_inputs()),
      idx("index_select_dim_minus1", FN(ops::index_select(x[0], -1, x[1])), index_select_inputs()),
      idx("gather_dim0", FN(ops::gather(x[0], 0, x[1])), gather_inputs()),
      idx("gather_dim1", FN(ops::gather(x[0], 1, x[1])), gather_inputs()),
      idx("index_copy", FN(ops::index_copy(x[0], 0, x[1], x[2])), index_copy_inputs()),
      idx("index_copy_", FN(ops::index_copy_(x[0], 0, x[1], x[2])), index_copy_inputs()),
      idx("index_copy_dim1",
          FN(ops::index_copy(x[0].transpose(0, -1), -1, x[1], x[2].transpose(0, -1))),
          index_copy_inputs()),
      idx("tril", FN(ops::tril(x[0])), triangle_inputs()),
      idx("tril_below", FN(ops::tril(x[0], -2)), triangle_inputs()),
      idx("tril_above", FN(ops::tril(x[0], 3)), triangle_inputs()),
      idx("tril_", FN(ops::tril_(x[0], 1)), triangle_inputs()),
      idx("triu", FN(ops::triu(x[0])), triangle_inputs()),
      idx("triu_below", FN(ops::triu(x[0], -1)), triangle_inputs()),
      idx("triu_far", FN(ops::triu(x[0], 10)), triangle_inputs()),
      idx("triu_", FN(ops::triu_(x[0], -1)), triangle_inputs()),
      idx("embedding", FN(ops::embedding(x[0], x[1])), embedding_inputs()),
      idx("embedding_padding_idx", FN(ops::embedding(x[0], x[1], 0)), embedding_inputs()),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(Indexing, CudaOp, ::testing::ValuesIn(indexing_cases()), case_name);

// ---- Linalg (runtime/ops/linalg.def) ------------------------------------------------------------

// GEMM operands in [-1, 1]; n is the contraction length K.
Tensor g(const V& shape, ScalarType dt, uint64_t seed, bool noncontig = false) {
  return rnd(shape, dt, seed, -1, 1, noncontig);
}

Gen mm_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 1600);
    return std::vector<InputSet>{
        {{g({5, 7}, dt, ++s), g({7, 3}, dt, ++s)}, 7},
        {{g({6, 4}, dt, ++s, true), g({4, 5}, dt, ++s, true)}, 4},  // column-major operands
        {{sliced({5, 7}, dt, ++s, -1, 1), sliced({7, 3}, dt, ++s, -1, 1)}, 7},  // neither
        {{g({16, 64}, dt, ++s), g({64, 24}, dt, ++s, true)}, 64},
        {{g({64, 256}, dt, ++s), g({256, 48}, dt, ++s)}, 256},
        {{g({1, 9}, dt, ++s), g({9, 1}, dt, ++s)}, 9},
        {{g({0, 3}, dt, ++s), g({3, 4}, dt, ++s)}, 3},
        {{g({3, 0}, dt, ++s), g({0, 4}, dt, ++s)}, 1},  // K = 0: zeros
        {{g({3, 4}, dt, ++s), g({5, 2}, dt, ++s)}, 4},  // shape mismatch
    };
  };
}
Gen bmm_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 1700);
    return std::vector<InputSet>{
        {{g({3, 5, 7}, dt, ++s), g({3, 7, 4}, dt, ++s)}, 7},
        {{g({2, 6, 4}, dt, ++s, true), g({2, 4, 5}, dt, ++s, true)}, 4},
        {{g({8, 32, 96}, dt, ++s), g({8, 96, 40}, dt, ++s)}, 96},
        {{g({2, 0, 3}, dt, ++s), g({2, 3, 4}, dt, ++s)}, 3},
        {{g({0, 2, 3}, dt, ++s), g({0, 3, 4}, dt, ++s)}, 3},
        {{g({2, 3, 0}, dt, ++s), g({2, 0, 4}, dt, ++s)}, 1},
    };
  };
}
// (self, mat1, mat2): self full, broadcast from a row, 0-dim-like [1, 1], and with NaN (beta = 0
// must ignore it).
Gen addmm_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 1800);
    return std::vector<InputSet>{
        {{g({5, 3}, dt, ++s), g({5, 7}, dt, ++s), g({7, 3}, dt, ++s)}, 7},
        {{g({3}, dt, ++s), g({5, 7}, dt, ++s, true), g({7, 3}, dt, ++s)}, 7},
        {{g({1, 1}, dt, ++s), g({4, 40}, dt, ++s), g({40, 6}, dt, ++s, true)}, 40},
        {{g({5, 3}, dt, ++s, true), g({5, 7}, dt, ++s), g({7, 3}, dt, ++s)}, 7},
        {{from_values({2, 2}, {kNaN, 1, kInf, 2}, dt), g({2, 3}, dt, ++s), g({3, 2}, dt, ++s)}, 3},
        {{g({0, 3}, dt, ++s), g({0, 7}, dt, ++s), g({7, 3}, dt, ++s)}, 7},
    };
  };
}
Gen mv_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 1900);
    return std::vector<InputSet>{
        {{g({5, 7}, dt, ++s), g({7}, dt, ++s)}, 7},
        {{g({5, 7}, dt, ++s, true), g({7}, dt, ++s, true)}, 7},
        {{sliced({4, 6}, dt, ++s, -1, 1), sliced({6}, dt, ++s, -1, 1)}, 6},
        {{g({300, 200}, dt, ++s), g({200}, dt, ++s)}, 200},
        {{g({0, 3}, dt, ++s), g({3}, dt, ++s)}, 3},
        {{g({3, 0}, dt, ++s), g({0}, dt, ++s)}, 1},
    };
  };
}
// (self, mat, vec) for addmv.
Gen addmv_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 2000);
    return std::vector<InputSet>{
        {{g({5}, dt, ++s), g({5, 7}, dt, ++s), g({7}, dt, ++s)}, 7},
        {{g({1}, dt, ++s), g({5, 7}, dt, ++s, true), g({7}, dt, ++s, true)}, 7},
        {{g({}, dt, ++s), g({64, 128}, dt, ++s), g({128}, dt, ++s)}, 128},
        {{from_values({2}, {kNaN, kInf}, dt), g({2, 3}, dt, ++s), g({3}, dt, ++s)}, 3},
    };
  };
}
Gen dot_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 2100);
    return std::vector<InputSet>{
        {{g({7}, dt, ++s), g({7}, dt, ++s)}, 7},
        {{g({9}, dt, ++s, true), sliced({9}, dt, ++s, -1, 1)}, 9},
        {{g({4096}, dt, ++s), g({4096}, dt, ++s)}, 4096},
        {{g({0}, dt, ++s), g({0}, dt, ++s)}, 1},
        {{g({3}, dt, ++s), g({4}, dt, ++s)}, 4},  // length mismatch
    };
  };
}
// Every rank combination of matmul, with broadcast batch dims.
Gen matmul_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 2200);
    return std::vector<InputSet>{
        {{g({7}, dt, ++s), g({7}, dt, ++s)}, 7},
        {{g({5, 7}, dt, ++s), g({7}, dt, ++s)}, 7},
        {{g({7}, dt, ++s), g({7, 3}, dt, ++s, true)}, 7},
        {{g({5, 7}, dt, ++s, true), g({7, 3}, dt, ++s)}, 7},
        {{g({2, 5, 7}, dt, ++s), g({7, 3}, dt, ++s)}, 7},
        {{g({5, 7}, dt, ++s), g({2, 7, 3}, dt, ++s)}, 7},
        {{g({2, 1, 5, 7}, dt, ++s), g({3, 7, 4}, dt, ++s)}, 7},
        {{g({7}, dt, ++s), g({2, 7, 3}, dt, ++s)}, 7},
        {{g({2, 5, 7}, dt, ++s, true), g({7}, dt, ++s)}, 7},
        {{g({4, 32, 64}, dt, ++s), g({4, 64, 16}, dt, ++s, true)}, 64},
        {{g({0, 5, 7}, dt, ++s), g({7, 3}, dt, ++s)}, 7},
    };
  };
}
// (self, batch1, batch2) for addbmm (self [n, p]) and baddbmm (self [b, n, p] or broadcast).
Gen addbmm_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 2300);
    return std::vector<InputSet>{
        {{g({5, 4}, dt, ++s), g({3, 5, 7}, dt, ++s), g({3, 7, 4}, dt, ++s)}, 21},
        {{g({4}, dt, ++s), g({2, 5, 6}, dt, ++s, true), g({2, 6, 4}, dt, ++s)}, 12},
        {{g({5, 4}, dt, ++s), g({0, 5, 7}, dt, ++s), g({0, 7, 4}, dt, ++s)}, 1},
    };
  };
}
Gen baddbmm_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 2400);
    return std::vector<InputSet>{
        {{g({3, 5, 4}, dt, ++s), g({3, 5, 7}, dt, ++s), g({3, 7, 4}, dt, ++s)}, 7},
        {{g({5, 4}, dt, ++s), g({2, 5, 6}, dt, ++s, true), g({2, 6, 4}, dt, ++s)}, 6},
        {{g({3, 5, 4}, dt, ++s, true), g({3, 5, 7}, dt, ++s), g({3, 7, 4}, dt, ++s, true)}, 7},
        {{g({8, 16, 8}, dt, ++s), g({8, 16, 64}, dt, ++s), g({8, 64, 8}, dt, ++s)}, 64},
    };
  };
}
// (input, weight, bias) for linear.
Gen linear_inputs() {
  return [](ScalarType dt) {
    uint64_t s = seed_of(dt, 2500);
    return std::vector<InputSet>{
        {{g({5, 7}, dt, ++s), g({3, 7}, dt, ++s), g({3}, dt, ++s)}, 7},
        {{g({2, 4, 7}, dt, ++s), g({3, 7}, dt, ++s, true), g({3}, dt, ++s)}, 7},
        {{g({7}, dt, ++s), g({3, 7}, dt, ++s), g({3}, dt, ++s)}, 7},
        {{g({32, 128}, dt, ++s, true), g({64, 128}, dt, ++s), g({64}, dt, ++s)}, 128},
        {{g({0, 7}, dt, ++s), g({3, 7}, dt, ++s), g({3}, dt, ++s)}, 7},
    };
  };
}
OpCase la(std::string name, Fn fn, Gen inputs) {
  return OpCase{std::move(name), std::move(fn), std::move(inputs), kFloatTypes, gemm_tol};
}
// An out= tensor of the right shape for result `r` of the same op on the CPU shapes.
Tensor out_like(const Tensor& r) {
  return Tensor::empty(r.sizes(), r.dtype(), r.device());
}

const std::vector<OpCase>& linalg_cases() {
  static const std::vector<OpCase> v = {
      la("mm", FN(ops::mm(x[0], x[1])), mm_inputs()),
      la("mm_out", FN(ops::mm_out(x[0], x[1], out_like(ops::mm(x[0], x[1])))), mm_inputs()),
      la("mm_out_transposed",
         FN(ops::mm_out(x[0], x[1], out_like(ops::mm(x[0], x[1]).tensor().t()).t())), mm_inputs()),
      la("bmm", FN(ops::bmm(x[0], x[1])), bmm_inputs()),
      la("bmm_out", FN(ops::bmm_out(x[0], x[1], out_like(ops::bmm(x[0], x[1])))), bmm_inputs()),
      la("mv", FN(ops::mv(x[0], x[1])), mv_inputs()),
      la("dot", FN(ops::dot(x[0], x[1])), dot_inputs()),
      la("matmul", FN(ops::matmul(x[0], x[1])), matmul_inputs()),
      la("matmul_out", FN(ops::matmul_out(x[0], x[1], out_like(ops::matmul(x[0], x[1])))),
         matmul_inputs()),
      la("addmm", FN(ops::addmm(x[0], x[1], x[2])), addmm_inputs()),
      la("addmm_beta_alpha", FN(ops::addmm(x[0], x[1], x[2], 0.5, -2)), addmm_inputs()),
      la("addmm_beta0", FN(ops::addmm(x[0], x[1], x[2], 0, 1)), addmm_inputs()),
      la("addmm_", FN(ops::addmm_(x[0], x[1], x[2], 2, 0.5)), addmm_inputs()),
      la("addmm_out",
         FN(ops::addmm_out(x[0], x[1], x[2], 1, 1, out_like(ops::addmm(x[0], x[1], x[2])))),
         addmm_inputs()),
      la("addmv", FN(ops::addmv(x[0], x[1], x[2])), addmv_inputs()),
      la("addmv_beta0", FN(ops::addmv(x[0], x[1], x[2], 0, 3)), addmv_inputs()),
      la("addbmm", FN(ops::addbmm(x[0], x[1], x[2])), addbmm_inputs()),
      la("addbmm_beta_alpha", FN(ops::addbmm(x[0], x[1], x[2], -1, 0.25)), addbmm_inputs()),
      la("baddbmm", FN(ops::baddbmm(x[0], x[1], x[2])), baddbmm_inputs()),
      la("baddbmm_beta_alpha", FN(ops::baddbmm(x[0], x[1], x[2], 0.5, 2)), baddbmm_inputs()),
      la("baddbmm_", FN(ops::baddbmm_(x[0], x[1], x[2], 1, -1)), baddbmm_inputs()),
      la("linear", FN(ops::linear(x[0], x[1], x[2])), linear_inputs()),
      la("linear_no_bias", FN(ops::linear(x[0], x[1])), linear_inputs()),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(Linalg, CudaOp, ::testing::ValuesIn(linalg_cases()), case_name);

// torch's CUDA products take floating dtypes only (Note [Floating products only on CUDA] in
// kernels/cuda/blas_ops.cpp): the CPU computes integer products, CUDA raises.
TEST_F(CudaTest, IntegerProductsRaiseNotImplemented) {
  const Tensor a = to_cuda(rnd({2, 3}, kI64, 1)), b = to_cuda(rnd({3, 2}, kI64, 2));
  EXPECT_THAT([&] { ops::mm(a, b); }, ThrowsMessage<NotImplementedError>(
                                          StrEq("\"addmm_cuda\" not implemented for 'Long'")));
  const Tensor a3 = to_cuda(rnd({2, 2, 3}, kI32, 3)), b3 = to_cuda(rnd({2, 3, 2}, kI32, 4));
  EXPECT_THAT([&] { ops::bmm(a3, b3); }, ThrowsMessage<NotImplementedError>(
                                             StrEq("\"baddbmm_cuda\" not implemented for 'Int'")));
  const Tensor v = to_cuda(rnd({3}, kI64, 5));
  EXPECT_THAT([&] { ops::mv(a, v); }, ThrowsMessage<NotImplementedError>(
                                          StrEq("\"addmv_impl_cuda\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::dot(v, v); },
              ThrowsMessage<NotImplementedError>(StrEq("\"dot\" not implemented for 'Long'")));
  const Tensor x = to_cuda(rnd({1, 2, 5, 5}, kI64, 6)), w = to_cuda(rnd({3, 2, 3, 3}, kI64, 7));
  EXPECT_THAT(
      [&] { ops::conv2d(x, w); },
      ThrowsMessage<NotImplementedError>(StrEq("\"slow_conv2d_cuda\" not implemented for 'Long'")));
}

// ---- Convolutions (runtime/ops/conv.def) --------------------------------------------------------

// A convolution case: input and weight shapes and the arguments; n = in_channels/groups * kernel.
struct ConvSpec {
  std::string name;
  V input, weight;
  bool bias;
  V stride, padding, dilation;
  int64_t groups;
  bool noncontig = false;
};
OpCase conv_case(const ConvSpec& s) {
  const bool two_d = s.weight.size() == 4;
  Fn fn = [s, two_d](const Args& x, const Ctx&) -> OpResult {
    const Tensor bias = s.bias ? x[2] : Tensor();
    return two_d ? ops::conv2d(x[0], x[1], bias, s.stride, s.padding, s.dilation, s.groups)
                 : ops::conv1d(x[0], x[1], bias, s.stride, s.padding, s.dilation, s.groups);
  };
  Gen inputs = [s](ScalarType dt) {
    uint64_t seed = seed_of(dt, 2600);
    int64_t k = s.weight[1];
    for (size_t i = 2; i < s.weight.size(); ++i) k *= s.weight[i];
    return std::vector<InputSet>{{{g(s.input, dt, ++seed, s.noncontig), g(s.weight, dt, ++seed),
                                   g({s.weight[0]}, dt, ++seed)},
                                  k}};
  };
  return OpCase{s.name, fn, inputs, kFloatTypes, gemm_tol};
}

const std::vector<OpCase>& conv_cases() {
  static const std::vector<OpCase> v = {
      conv_case({"conv1d", {2, 4, 9}, {6, 4, 3}, true, {1}, {0}, {1}, 1}),
      conv_case({"conv1d_stride_pad_dilation", {2, 4, 17}, {6, 4, 3}, true, {2}, {1}, {2}, 1}),
      conv_case({"conv1d_groups", {2, 4, 9}, {6, 2, 3}, false, {1}, {1}, {1}, 2}),
      conv_case({"conv1d_unbatched", {4, 9}, {6, 4, 3}, true, {1}, {0}, {1}, 1}),
      conv_case({"conv1d_strided_input", {2, 4, 9}, {6, 4, 3}, true, {1}, {2}, {1}, 1, true}),
      conv_case({"conv2d", {2, 3, 8, 7}, {5, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1}),
      conv_case({"conv2d_stride_pad", {2, 3, 9, 8}, {5, 3, 3, 3}, true, {2, 2}, {1, 1}, {1, 1}, 1}),
      conv_case({"conv2d_dilation", {2, 3, 9, 9}, {4, 3, 3, 3}, false, {1, 1}, {2, 2}, {2, 2}, 1}),
      conv_case(
          {"conv2d_asymmetric", {1, 2, 10, 7}, {3, 2, 3, 2}, true, {2, 1}, {1, 0}, {1, 2}, 1}),
      conv_case({"conv2d_groups", {2, 6, 6, 6}, {9, 2, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 3}),
      conv_case({"conv2d_depthwise", {2, 4, 7, 7}, {4, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 4}),
      conv_case({"conv2d_1x1", {3, 16, 5, 5}, {8, 16, 1, 1}, true, {1, 1}, {0, 0}, {1, 1}, 1}),
      conv_case({"conv2d_unbatched", {3, 8, 7}, {5, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}),
      conv_case({"conv2d_strided_input",
                 {2, 3, 8, 8},
                 {5, 3, 3, 3},
                 true,
                 {1, 1},
                 {1, 1},
                 {1, 1},
                 1,
                 true}),
      conv_case(
          {"conv2d_empty_batch", {0, 3, 5, 5}, {2, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1}),
      conv_case({"conv2d_large", {4, 32, 28, 28}, {64, 32, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1}),
      conv_case(
          {"conv2d_kernel_too_big", {1, 2, 2, 2}, {3, 2, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1}),
  };
  return v;
}
INSTANTIATE_TEST_SUITE_P(Conv, CudaOp, ::testing::ValuesIn(conv_cases()), case_name);

// ---- Copies between devices ---------------------------------------------------------------------

// Non-contiguous destinations of shape [3, 4] (a transposed [4, 3]) and [5] (every other
// element of a [10]).
Tensor strided_empty(const V& shape, ScalarType dt, Device d) {
  if (shape.size() == 2) return Tensor::empty(V{shape[1], shape[0]}, dt, d).transpose(0, 1);
  return Tensor::empty(V{2 * shape[0]}, dt, d).slice(0, 0, std::nullopt, 2);
}

// Sources with values in [0, 100) that are exact in float32 (no double rounding when a float64
// becomes a float16), converted between every pair of dtypes, contiguous or strided on either
// side, host to device, device to host and device to device: bitwise the CPU's conversion.
TEST_F(CudaTest, CopyConvertsEveryDtypePairBothWays) {
  uint64_t seed = 1;
  for (const V& shape : {V{3, 4}, V{5}}) {
    for (ScalarType from : kAllTypes) {
      for (ScalarType to : kAllTypes) {
        SCOPED_TRACE(std::string(dtype_name(from)) + " -> " + dtype_name(to) + " " +
                     shape_str(shape));
        Tensor src = strided_empty(shape, from, kCpu);
        src.copy_(rnd(shape, kF32, ++seed, 0, 100));
        Tensor want = strided_empty(shape, to, kCpu);
        want.copy_(src);
        const D w = values(want);
        for (bool strided_dst : {false, true}) {
          auto dst = [&](Device d) {
            return strided_dst ? strided_empty(shape, to, d) : Tensor::empty(shape, to, d);
          };
          Tensor h2d = dst(kCuda);  // host -> device
          h2d.copy_(src);
          EXPECT_TRUE(testing::close(h2d, w, shape, {0, 0})) << "host to device";
          const Tensor dsrc = to_cuda(src);  // a strided device source
          ASSERT_FALSE(dsrc.is_contiguous());
          Tensor d2h = dst(kCpu);  // device -> host
          d2h.copy_(dsrc);
          EXPECT_TRUE(testing::close(d2h, w, shape, {0, 0})) << "device to host";
          Tensor d2d = dst(kCuda);  // device -> device
          d2d.copy_(dsrc);
          EXPECT_TRUE(testing::close(d2d, w, shape, {0, 0})) << "device to device";
        }
      }
    }
  }
}

// copy_ broadcasts its source, across devices too; an empty copy is a no-op.
TEST_F(CudaTest, CopyBroadcastsAcrossDevices) {
  const Tensor row = rnd({4}, kF64, 1);
  Tensor d = strided_empty({3, 4}, kF32, kCuda);
  d.copy_(row);
  Tensor want = Tensor::empty(V{3, 4}, kF32);
  want.copy_(row);
  EXPECT_TRUE(testing::close(d, values(want), {3, 4}, {0, 0}));
  Tensor h = Tensor::empty(V{2, 4}, kI64);
  h.copy_(to_cuda(row));
  Tensor want_h = Tensor::empty(V{2, 4}, kI64);
  want_h.copy_(row);
  EXPECT_EQ(values(h), values(want_h));
  Tensor e = Tensor::empty(V{0, 4}, kF32, kCuda);
  e.copy_(row);
  EXPECT_EQ(e.numel(), 0);
}

// Tensor::fill_ on strided device tensors of every dtype with float, int, large int and bool
// values: the CPU's conversions.
TEST_F(CudaTest, FillConvertsLikeTheCpu) {
  const std::vector<Scalar> fills = {Scalar(2.5), Scalar(int64_t{-3}), Scalar(int64_t{1} << 40),
                                     Scalar(true), Scalar(-0.0)};
  for (ScalarType dt : kAllTypes) {
    for (const Scalar& v : fills) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " fill " + v.str());
      Tensor want = strided_empty({3, 4}, dt, kCpu);
      want.fill_(v);
      Tensor d = strided_empty({3, 4}, dt, kCuda);
      d.fill_(v);
      EXPECT_TRUE(testing::close(d, values(want), {3, 4}, {0, 0}));
    }
  }
}

// The dispatched conversions: to.device both ways (with and without a dtype), to.other,
// type_as, and copy_ across devices.
TEST_F(CudaTest, ToDeviceAndCopyThroughTheDispatcher) {
  const Tensor c = rnd({3, 4}, kF32, 1, -2, 2, true);
  const Tensor d = ops::to_device(c, kCuda, std::nullopt, false, false);
  EXPECT_EQ(d.device(), kCuda);
  EXPECT_EQ(d.dtype(), kF32);
  EXPECT_EQ(values(to_cpu(d)), values(c));
  const Tensor dh = ops::to_device(c, kCuda, kF16, false, false);
  EXPECT_EQ(dh.dtype(), kF16);
  EXPECT_EQ(values(to_cpu(dh)), values(c.to(kF16)));
  const Tensor back = ops::to_device(dh, kCpu, kF64, false, false);
  EXPECT_TRUE(back.device().is_cpu());
  EXPECT_EQ(back.dtype(), kF64);
  EXPECT_EQ(values(back), values(c.to(kF16)));
  // Nothing to do: the same tensor, unless a copy is asked for.
  EXPECT_TRUE(Tensor(ops::to_device(d, kCuda, std::nullopt, false, false)).is_same(d));
  const Tensor copied = ops::to_device(d, kCuda, std::nullopt, false, true);
  EXPECT_FALSE(copied.is_same(d));
  EXPECT_FALSE(shares_storage(copied, d));
  EXPECT_EQ(values(to_cpu(copied)), values(c));
  // to.other and type_as take the other tensor's device and dtype.
  const Tensor like = to_cuda(rnd({1}, kBF16, 2));
  const Tensor o = ops::to_other(c, like);
  EXPECT_EQ(o.device(), kCuda);
  EXPECT_EQ(o.dtype(), kBF16);
  EXPECT_EQ(values(to_cpu(o)), values(c.to(kBF16)));
  EXPECT_EQ(Tensor(ops::type_as(c, like)).device(), kCuda);
  // copy_ takes tensors of two devices.
  Tensor dst = Tensor::empty(V{3, 4}, kF64, kCuda);
  EXPECT_TRUE(Tensor(ops::copy_(dst, c)).is_same(dst));
  EXPECT_EQ(values(to_cpu(dst)), values(c));
  Tensor host = Tensor::empty(V{3, 4}, kI32);
  ops::copy_(host, d);
  EXPECT_EQ(values(host), values(c.to(kI32)));
}

// Runtime-level conversions of device tensors: to(dtype), clone and contiguous keep the device.
TEST_F(CudaTest, TensorConversionsStayOnTheDevice) {
  const Tensor c = rnd({4, 5}, kF32, 1, -2, 2, true);
  const Tensor d = to_cuda(c);
  const Tensor h = d.to(kF16);
  EXPECT_EQ(h.device(), kCuda);
  EXPECT_EQ(values(to_cpu(h)), values(c.to(kF16)));
  const Tensor cl = d.clone();
  EXPECT_EQ(cl.device(), kCuda);
  EXPECT_TRUE(cl.is_contiguous());
  EXPECT_EQ(values(to_cpu(cl)), values(c));
  const Tensor ct = d.contiguous();
  EXPECT_TRUE(ct.is_contiguous());
  EXPECT_EQ(values(ct), values(c));  // to_double_vector reads device tensors too
}

// item() and the script conversions copy one element back.
TEST_F(CudaTest, ItemOfADeviceTensor) {
  uint64_t seed = 1;
  for (ScalarType dt : kAllTypes) {
    SCOPED_TRACE(dtype_name(dt));
    for (const V& shape : {V{}, V{1}, V{1, 1}}) {
      const Tensor c = rnd(shape, dt, ++seed, -50, 50);
      EXPECT_EQ(to_cuda(c).item<double>(), c.item<double>());
    }
    // One element of a strided device view.
    const Tensor big = to_cuda(rnd({4, 6}, dt, ++seed, -50, 50, true));
    EXPECT_EQ(big.select(0, 2).select(0, 3).item<double>(),
              to_cpu(big).select(0, 2).select(0, 3).item<double>());
  }
  const int64_t large = (int64_t{1} << 53) + 7;  // not a double
  Tensor l = Tensor::empty(V{}, kI64);
  *l.data<int64_t>() = large;
  EXPECT_EQ(to_cuda(l).item<int64_t>(), large);
  EXPECT_EQ(ops::Int_Tensor(to_cuda(l)).value().to_int(), large);
  EXPECT_EQ(to_cuda(from_values({}, {1}, kBool)).item().is_bool(), true);
  EXPECT_DOUBLE_EQ(ops::Float_Tensor(to_cuda(from_values({}, {0.25}, kF16))).value().to_double(),
                   0.25);
  EXPECT_THAT(
      [] {
        to_cuda(rnd({2, 2}, kF32, 1)).item();
      },
      ThrowsMessage<Error>(StrEq("a Tensor with 4 elements cannot be converted to Scalar")));
}

// ---- Devices ------------------------------------------------------------------------------------

TEST_F(CudaTest, DeviceMismatchRaisesTorchsMessage) {
  const Tensor c = rnd({2, 2}, kF32, 1), d = to_cuda(rnd({2, 2}, kF32, 2));
  EXPECT_THAT(
      [&] { ops::add(c, d); },
      ThrowsMessage<Error>(StrEq("aten::add.Tensor: Expected all tensors to be on the same "
                                 "device, but found at least two devices, cpu and cuda:0!")));
  EXPECT_THAT(
      [&] { ops::add(d, c); },
      ThrowsMessage<Error>(StrEq("aten::add.Tensor: Expected all tensors to be on the same "
                                 "device, but found at least two devices, cuda:0 and cpu!")));
  EXPECT_THAT([&] { ops::mm(d, c); },
              ThrowsMessage<Error>(StrEq("aten::mm: Expected all tensors to be on the same device, "
                                         "but found at least two devices, cuda:0 and cpu!")));
  // Tensor lists are checked too.
  EXPECT_THAT(
      [&] {
        ops::cat(Args{d, c});
      },
      ThrowsMessage<Error>(StrEq("aten::cat: Expected all tensors to be on the same device, "
                                 "but found at least two devices, cuda:0 and cpu!")));
  // A one-element CPU tensor that is not 0-dim is no exception.
  EXPECT_THAT([&] { ops::mul(d, rnd({1}, kF32, 3)); },
              ThrowsMessage<Error>(HasSubstr("found at least two devices, cuda:0 and cpu!")));
  EXPECT_THAT(
      [&] {
        ops::where(to_cuda(rnd({2, 2}, kBool, 4)), d, c);
      },
      ThrowsMessage<Error>(HasSubstr("found at least two devices, cuda:0 and cpu!")));
}

// A 0-dim CPU tensor joins device tensors wherever it stands, as in torch; the result is on the
// device and equals the CPU result.
TEST_F(CudaTest, ZeroDimCpuTensorJoinsDeviceTensors) {
  const Tensor c = rnd({3, 4}, kF32, 1, -2, 2, true), s = rnd({}, kF32, 2);
  const Tensor d = to_cuda(c);
  const Tensor s64 = rnd({}, kF64, 3), si = rnd({}, kI64, 4, -5, 5);
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> f;  // (tensor, scalar)
  };
  const std::vector<Case> cases = {
      {"add", [](const Tensor& t, const Tensor& u) { return ops::add(t, u); }},
      {"add scalar first", [](const Tensor& t, const Tensor& u) { return ops::add(u, t); }},
      {"mul", [](const Tensor& t, const Tensor& u) { return ops::mul(u, t); }},
      {"div", [](const Tensor& t, const Tensor& u) { return ops::div(t, u); }},
      {"pow", [](const Tensor& t, const Tensor& u) { return ops::pow(t, u); }},
      {"maximum", [](const Tensor& t, const Tensor& u) { return ops::maximum(u, t); }},
      {"where", [](const Tensor& t,
                   const Tensor& u) { return ops::where(ops::gt_Scalar(t, 0).tensor(), u, t); }},
      {"addcmul", [](const Tensor& t, const Tensor& u) { return ops::addcmul(t, u, t); }},
      {"add_", [](const Tensor& t, const Tensor& u) { return ops::add_(t.clone(), u); }},
  };
  for (const Case& k : cases) {
    for (const Tensor& scalar : {s, s64, si}) {
      SCOPED_TRACE(std::string(k.name) + " with a 0-dim " + dtype_name(scalar.dtype()));
      const Tensor want = k.f(c, scalar);
      const Tensor got = k.f(d, scalar);
      EXPECT_TRUE(same_result(got, want, transcendental_tol(want.dtype(), 1)));
    }
  }
}

// ---- Out of memory and the caching allocator ----------------------------------------------------

TEST_F(CudaTest, OutOfMemoryRaisesAndTheDeviceStaysUsable) {
  cuda::synchronize();
  const size_t before = cuda::memory_stats(0).allocated;
  EXPECT_THAT([] { Tensor::empty(V{int64_t{1} << 50}, kU8, kCuda); },
              ThrowsMessage<OutOfMemoryError>(StartsWith("CUDA out of memory. Tried to allocate")));
  // Through an op, and as the base class Error (a RuntimeError in Python).
  EXPECT_THAT(
      [] {
        ops::zeros(V{int64_t{1} << 46, 4}, kF32, kCuda);
      },
      ThrowsMessage<Error>(StartsWith("CUDA out of memory. Tried to allocate")));
  EXPECT_EQ(cuda::memory_stats(0).allocated, before);
  {
    const Tensor a = rnd({64, 65}, kF32, 1), b = rnd({65}, kF32, 2);
    const Tensor got = ops::add(to_cuda(a), to_cuda(b));
    EXPECT_TRUE(same_result(got, ops::add(a, b), elementwise_tol(kF32, 1)));
    const Tensor m = ops::mm(to_cuda(a), to_cuda(rnd({65, 3}, kF32, 3)));
    EXPECT_EQ(shape_of(m), (V{64, 3}));
    cuda::synchronize();
  }
  EXPECT_EQ(cuda::memory_stats(0).allocated, before);
}

// Freeing a block caches it; the next allocation of its size takes it back (the same address)
// without growing the reserved memory; empty_cache returns the cached blocks.
TEST_F(CudaTest, CachingAllocatorReusesFreedBlocks) {
  cuda::synchronize();
  const size_t bytes = size_t{1} << 20;  // a size class of its own (Note [Size classes])
  const V shape{static_cast<int64_t>(bytes / 4)};
  const cuda::MemoryStats start = cuda::memory_stats(0);
  void* first = nullptr;
  {
    const Tensor a = Tensor::empty(shape, kF32, kCuda);
    first = a.raw_data();
    EXPECT_EQ(cuda::memory_stats(0).allocated, start.allocated + bytes);
    EXPECT_GE(cuda::memory_stats(0).peak_allocated, start.allocated + bytes);
  }
  const cuda::MemoryStats freed = cuda::memory_stats(0);
  EXPECT_EQ(freed.allocated, start.allocated);
  EXPECT_GE(freed.reserved, start.allocated + bytes);  // still held, in the cache
  {
    const Tensor b = Tensor::empty(shape, kF32, kCuda);
    EXPECT_EQ(b.raw_data(), first);
    EXPECT_EQ(cuda::memory_stats(0).reserved, freed.reserved);
    EXPECT_EQ(cuda::memory_stats(0).allocated, start.allocated + bytes);
  }
  cuda::empty_cache();
  const cuda::MemoryStats emptied = cuda::memory_stats(0);
  EXPECT_EQ(emptied.allocated, start.allocated);
  EXPECT_EQ(emptied.reserved, emptied.allocated);
  cuda::reset_peak_memory_stats(0);
  EXPECT_EQ(cuda::memory_stats(0).peak_allocated, emptied.allocated);
}

// ---- Integer division by zero -------------------------------------------------------------------

// Note [Integer division by zero on CUDA] in kernels/cuda/pointwise_binary.cu: the quotient and
// the remainder are 0 and nothing raises (the CPU raises ZeroDivisionError).
TEST_F(CudaTest, IntegerDivisionByZeroGivesZero) {
  using Op = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<const char*, Op>> op_list = {
      {"div trunc",
       [](const Tensor& a, const Tensor& b) { return ops::div_Tensor_mode(a, b, "trunc"); }},
      {"div floor",
       [](const Tensor& a, const Tensor& b) { return ops::div_Tensor_mode(a, b, "floor"); }},
      {"remainder", [](const Tensor& a, const Tensor& b) { return ops::remainder(a, b); }},
      {"fmod", [](const Tensor& a, const Tensor& b) { return ops::fmod(a, b); }},
      {"div_ floor", [](const Tensor& a,
                        const Tensor& b) { return ops::div__Tensor_mode(a.clone(), b, "floor"); }},
      {"remainder_",
       [](const Tensor& a, const Tensor& b) { return ops::remainder_(a.clone(), b); }},
  };
  for (ScalarType dt : {kU8, kI8, kI16, kI32, kI64}) {
    for (const auto& [name, op] : op_list) {
      SCOPED_TRACE(std::string(name) + " " + dtype_name(dt));
      const Tensor a = rnd({4, 5}, dt, 1, -9, 9);
      // Zeros in every other column; the rest nonzero.
      Tensor b = rnd({4, 5}, dt, 2, -9, 9, false, /*nonzero=*/true);
      b.select(1, 1).fill_(0);
      b.select(1, 3).fill_(0);
      EXPECT_THAT([&] { op(a, b); }, ThrowsMessage<Error>(HasSubstr("ZeroDivisionError")));
      Tensor got;
      EXPECT_NO_THROW(got = op(to_cuda(a), to_cuda(b)));
      cuda::synchronize();
      // Elsewhere, the CPU's result.
      Tensor b1 = b.clone();
      make_nonzero(b1);
      const Tensor want = ops::where_ScalarSelf(ops::eq_Scalar(b, 0).tensor(), 0, op(a, b1));
      ASSERT_TRUE(got.defined());
      EXPECT_EQ(got.dtype(), dt);
      EXPECT_TRUE(testing::close(to_cpu(got), values(want), {4, 5}, {0, 0}));
    }
    // Python-number divisors.
    SCOPED_TRACE(dtype_name(dt));
    const Tensor d = to_cuda(rnd({6}, dt, 3, -9, 9));
    EXPECT_EQ(values(ops::div_Scalar_mode(d, 0, "trunc")), D(6, 0.0));
    EXPECT_EQ(values(ops::div_Scalar_mode(d, 0, "floor")), D(6, 0.0));
    EXPECT_EQ(values(ops::remainder_Scalar(d, 0)), D(6, 0.0));
    EXPECT_EQ(values(ops::fmod_Scalar(d, 0)), D(6, 0.0));
  }
}

// ---- Index errors -------------------------------------------------------------------------------

// An index outside its dimension raises the CPU's exception and message on CUDA (a host-side
// check, not a device assert), and the device keeps working afterwards.
TEST_F(CudaTest, IndexOutOfRangeRaisesTheCpuMessage) {
  const Tensor x = rnd({5, 3}, kF32, 1), w = rnd({5, 2}, kF32, 2), ones = rnd({1, 3}, kF32, 3);
  struct Case {
    const char* name;
    Fn fn;
    Args args;
  };
  const std::vector<Case> cases = {
      {"index_select past the end",
       FN(ops::index_select(x[0], 0, x[1])),
       {x, index_of({1, 7}, {2})}},
      {"index_select negative", FN(ops::index_select(x[0], 0, x[1])), {x, index_of({-1}, {1})}},
      {"index_select dim 1 int32",
       FN(ops::index_select(x[0], 1, x[1])),
       {x, index_of({0, 3}, {2}, kI32)}},
      {"index_select 0-dim index", FN(ops::index_select(x[0], 0, x[1])), {x, index_of({5}, {})}},
      {"gather past the end", FN(ops::gather(x[0], 0, x[1])), {x, index_of({0, 7}, {2, 1})}},
      {"gather negative", FN(ops::gather(x[0], 1, x[1])), {x, index_of({0, -4}, {1, 2})}},
      {"embedding past the end", FN(ops::embedding(x[0], x[1])), {w, index_of({0, 5}, {2})}},
      {"embedding negative", FN(ops::embedding(x[0], x[1])), {w, index_of({-1}, {1})}},
      {"index_copy_ past the end",
       FN(ops::index_copy_(x[0], 0, x[1], x[2])),
       {x, index_of({7}, {1}), ones}},
      {"index_copy negative",
       FN(ops::index_copy(x[0], 0, x[1], x[2])),
       {x, index_of({-6}, {1}), ones}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    ASSERT_TRUE(run(k.fn, k.args, Ctx{kCpu, kF32}).threw) << "the CPU accepted the index";
    EXPECT_TRUE(matches_cpu(k.fn, k.args, kF32, exact_tol, 1));
  }
  const Tensor a = rnd({8}, kF32, 4);
  EXPECT_TRUE(
      same_result(ops::add(to_cuda(a), to_cuda(a)), ops::add(a, a), elementwise_tol(kF32, 1)));
  cuda::synchronize();
}

// ---- Random numbers -----------------------------------------------------------------------------

TEST_F(CudaTest, RandAndRandnAreDeterministicUnderManualSeed) {
  for (ScalarType dt : kFloatTypes) {
    SCOPED_TRACE(dtype_name(dt));
    for (bool normal : {false, true}) {
      auto draw = [&] {
        return Tensor(normal ? ops::randn(V{1000}, dt, kCuda) : ops::rand(V{1000}, dt, kCuda));
      };
      manual_seed(1234);
      const Tensor a = draw(), a2 = draw();
      manual_seed(1234);
      const Tensor b = draw();
      manual_seed(4321);
      const Tensor c = draw();
      EXPECT_EQ(a.device(), kCuda);
      EXPECT_EQ(a.dtype(), dt);
      EXPECT_TRUE(bitwise_equal(a, b)) << "the same seed";
      EXPECT_FALSE(bitwise_equal(a, a2)) << "the next draw";
      EXPECT_FALSE(bitwise_equal(a, c)) << "another seed";
    }
  }
  // The *_like forms draw from the same stream as the factories.
  const Tensor like = to_cuda(rnd({7, 9}, kF16, 1, -2, 2, true));
  manual_seed(99);
  const Tensor r1 = ops::rand_like(like), n1 = ops::randn_like(like);
  manual_seed(99);
  const Tensor r2 = ops::rand(V{7, 9}, kF16, kCuda), n2 = ops::randn(V{7, 9}, kF16, kCuda);
  EXPECT_EQ(r1.device(), kCuda);
  EXPECT_TRUE(bitwise_equal(r1, r2));
  EXPECT_TRUE(bitwise_equal(n1, n2));
  // The CPU generator is untouched by device draws.
  manual_seed(5);
  const Tensor cpu1 = ops::rand(V{16});
  manual_seed(5);
  (void)ops::rand(V{100}, kF32, kCuda);
  EXPECT_TRUE(bitwise_equal(ops::rand(V{16}), cpu1));
}

// rand is uniform in [0, 1) in every floating dtype (no value rounds up to 1), randn standard
// normal: means and standard deviations of 2^20 draws within 0.01.
TEST_F(CudaTest, RandAndRandnDistributions) {
  manual_seed(2024);
  for (ScalarType dt : kFloatTypes) {
    SCOPED_TRACE(dtype_name(dt));
    const D u = values(to_cpu(ops::rand(V{1 << 20}, dt, kCuda)));
    double sum = 0, sq = 0, lo = 1, hi = 0;
    for (double v : u) {
      sum += v;
      sq += v * v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    const double n = static_cast<double>(u.size());
    EXPECT_GE(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    EXPECT_LT(lo, 0.01);
    EXPECT_GT(hi, 0.99);
    EXPECT_NEAR(sum / n, 0.5, 0.01);
    EXPECT_NEAR(std::sqrt(sq / n - (sum / n) * (sum / n)), std::sqrt(1.0 / 12), 0.01);
    const D z = values(to_cpu(ops::randn(V{1 << 20}, dt, kCuda)));
    sum = sq = 0;
    for (double v : z) {
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      sq += v * v;
    }
    const double mean = sum / n;
    EXPECT_NEAR(mean, 0.0, 0.01);
    EXPECT_NEAR(std::sqrt(sq / n - mean * mean), 1.0, 0.01);
  }
  EXPECT_THAT([] { ops::rand(V{3}, kI64, kCuda); }, ThrowsMessage<Error>(HasSubstr("rand")));
}

// Training-mode dropout on the device: each element is 0 or x / (1 - p) (rounded to the dtype as
// on the CPU), about 1 - p of them kept, deterministic under manual_seed; p = 1 zeroes everything.
TEST_F(CudaTest, DropoutTraining) {
  for (ScalarType dt : kFloatTypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = rnd({1 << 18}, dt, 1, 0.5, 2);
    const Tensor d = to_cuda(x);
    manual_seed(7);
    const Tensor y = ops::dropout(d, 0.25, true);
    manual_seed(7);
    const Tensor y2 = ops::dropout(d, 0.25, true);
    EXPECT_EQ(y.device(), kCuda);
    EXPECT_EQ(y.dtype(), dt);
    EXPECT_TRUE(bitwise_equal(y, y2));
    const Tensor scaled = ops::mul_Scalar(x, 1 / 0.75);
    const D xv = values(scaled), yv = values(to_cpu(y));
    int64_t kept = 0, bad = 0;
    for (size_t i = 0; i < yv.size(); ++i) {
      if (yv[i] == 0) continue;
      ++kept;
      if (std::fabs(yv[i] - xv[i]) > tol_for(dt).rtol * std::fabs(xv[i])) ++bad;
    }
    EXPECT_EQ(bad, 0);
    EXPECT_NEAR(static_cast<double>(kept) / yv.size(), 0.75, 0.01);
    Tensor inplace = to_cuda(x);
    manual_seed(7);
    EXPECT_TRUE(Tensor(ops::dropout_(inplace, 0.25, true)).is_same(inplace));
    EXPECT_TRUE(bitwise_equal(inplace, y));
    const Tensor all = ops::dropout(to_cuda(from_values({3}, {1, kNaN, -2}, dt)), 1.0, true);
    const D av = values(to_cpu(all));
    EXPECT_EQ(av[0], 0);
    EXPECT_TRUE(std::isnan(av[1]));  // NaN * 0, as on the CPU and in torch
    EXPECT_EQ(av[2], 0);
  }
}

// ---- Autocast on CUDA tensors -------------------------------------------------------------------

class CudaAutocast : public CudaTest {
 protected:
  void SetUp() override {
    CudaTest::SetUp();
    if (IsSkipped()) return;
    set_autocast_profile("torch-1.13");
    reset_op_policies();
  }
  void TearDown() override {
    if (IsSkipped()) return;
    EXPECT_FALSE(is_autocast_enabled(DeviceType::CUDA));
    EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
    EXPECT_EQ(autocast_nesting(), 0);
  }
};

// Under CUDA autocast (float16 by default) mm of two float32 device tensors runs in float16: the
// CPU float16 product of the rounded inputs, and close to the float32 product.
TEST_F(CudaAutocast, MmRunsInFloat16ByDefault) {
  const Tensor a = g({8, 16}, kF32, 1), b = g({16, 5}, kF32, 2);
  Tensor y;
  {
    AutocastGuard ac(DeviceType::CUDA);
    EXPECT_EQ(get_autocast_dtype(DeviceType::CUDA), kF16);
    y = ops::mm(to_cuda(a), to_cuda(b));
  }
  EXPECT_EQ(y.device(), kCuda);
  EXPECT_EQ(y.dtype(), kF16);
  EXPECT_TRUE(same_result(y, ops::mm(a.to(kF16), b.to(kF16)), gemm_tol(kF16, 16)));
  const Tensor y32 = ops::mm(a, b);
  EXPECT_TRUE(testing::close(to_cpu(y), values(y32), {8, 5}, {1e-2, 1e-2}));
}

TEST_F(CudaAutocast, MmRunsInBfloat16WhenAsked) {
  const Tensor a = g({8, 16}, kF32, 1), b = g({16, 5}, kF32, 2);
  Tensor y;
  {
    AutocastGuard ac(DeviceType::CUDA, true, kBF16);
    y = ops::mm(to_cuda(a), to_cuda(b));
  }
  EXPECT_EQ(y.dtype(), kBF16);
  EXPECT_EQ(get_autocast_dtype(DeviceType::CUDA), kF16);  // restored
  EXPECT_TRUE(same_result(y, ops::mm(a.to(kBF16), b.to(kBF16)), gemm_tol(kBF16, 16)));
  EXPECT_TRUE(testing::close(to_cpu(y), values(ops::mm(a, b)), {8, 5}, {5e-2, 5e-2}));
}

// The lower-precision ops of the CUDA list: every float32 operand is cast.
TEST_F(CudaAutocast, LowerPrecisionOpsGiveFloat16) {
  const Tensor m = to_cuda(g({4, 6}, kF32, 1)), w = to_cuda(g({3, 6}, kF32, 2)),
               bias = to_cuda(g({3}, kF32, 3)), b3 = to_cuda(g({2, 4, 6}, kF32, 4)),
               c3 = to_cuda(g({2, 6, 3}, kF32, 5)), x = to_cuda(g({1, 2, 5, 5}, kF32, 6)),
               k = to_cuda(g({3, 2, 3, 3}, kF32, 7)), h = to_cuda(g({6, 3}, kF16, 8));
  AutocastGuard ac(DeviceType::CUDA);
  EXPECT_EQ(Tensor(ops::matmul(m, h)).dtype(), kF16);  // float32 with float16: both cast
  EXPECT_EQ(Tensor(ops::linear(m, w, bias)).dtype(), kF16);
  EXPECT_EQ(Tensor(ops::bmm(b3, c3)).dtype(), kF16);
  EXPECT_EQ(Tensor(ops::baddbmm(to_cuda(g({2, 4, 3}, kF32, 9)), b3, c3)).dtype(), kF16);
  EXPECT_EQ(Tensor(ops::addmm(to_cuda(g({3}, kF32, 10)), m, h)).dtype(), kF16);
  EXPECT_EQ(Tensor(ops::conv2d(x, k)).dtype(), kF16);
  // float64 is not eligible: it stays float64.
  const Tensor d = to_cuda(g({4, 6}, kF64, 11)), e = to_cuda(g({6, 2}, kF64, 12));
  EXPECT_EQ(Tensor(ops::mm(d, e)).dtype(), kF64);
  // Ops without a policy keep their dtypes.
  EXPECT_EQ(Tensor(ops::add(m, m)).dtype(), kF32);
}

// The float32 ops of the CUDA list (fp32, fp32_set_opt_dtype) run in float32 on float16 inputs.
TEST_F(CudaAutocast, Float32OpsGiveFloat32) {
  EXPECT_EQ(get_op_policy(DeviceType::CUDA, "aten::exp"), AutocastPolicy::Fp32);
  EXPECT_EQ(get_op_policy(DeviceType::CUDA, "aten::softmax"), AutocastPolicy::Fp32SetOptDtype);
  const Tensor xc = rnd({4, 8}, kF16, 1), wc = rnd({8}, kF16, 2, 0.5, 1.5);
  const Tensor x = to_cuda(xc), w = to_cuda(wc);
  AutocastGuard ac(DeviceType::CUDA);
  const Tensor e = ops::exp(x);
  EXPECT_EQ(e.dtype(), kF32);
  EXPECT_TRUE(same_result(e, ops::exp(xc.to(kF32)), transcendental_tol(kF32, 1)));
  const Tensor s = ops::softmax_int(x, -1);
  EXPECT_EQ(s.dtype(), kF32);
  EXPECT_TRUE(same_result(s, ops::softmax_int(xc.to(kF32), -1), transcendental_tol(kF32, 1)));
  EXPECT_EQ(Tensor(ops::log_softmax_int(x, 0)).dtype(), kF32);
  EXPECT_EQ(Tensor(ops::sum(x)).dtype(), kF32);
  EXPECT_EQ(Tensor(ops::layer_norm(x, V{8}, w, w)).dtype(), kF32);
  EXPECT_EQ(Tensor(ops::pow_Tensor_Scalar(x, 2)).dtype(), kF32);
  // promote: the widest floating type of the arguments.
  const Tensor r0 = x.select(0, 0), r1 = x.select(0, 1);
  EXPECT_EQ(Tensor(ops::addcmul(to_cuda(rnd({8}, kF32, 3)), r0, r1)).dtype(), kF32);
}

TEST_F(CudaAutocast, BinaryCrossEntropyIsBanned) {
  const Tensor p = to_cuda(rnd({3}, kF32, 1, 0.1, 0.9)), t = to_cuda(rnd({3}, kF32, 2, 0, 1));
  AutocastGuard ac(DeviceType::CUDA);
  EXPECT_THAT(
      [&] { ops::binary_cross_entropy(p, t); },
      ThrowsMessage<Error>(StrEq(
          "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
          "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
          "In this case, combine the two layers using "
          "torch.nn.functional.binary_cross_entropy_with_logits\n"
          "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
          "safe to autocast.")));
}

// Each device's autocast applies to its own tensors only.
TEST_F(CudaAutocast, EachDeviceHasItsOwnState) {
  const Tensor a = g({4, 6}, kF32, 1), b = g({6, 3}, kF32, 2);
  const Tensor da = to_cuda(a), db = to_cuda(b);
  const Tensor plain = ops::mm(da, db), plain_cpu = ops::mm(a, b);
  {
    AutocastGuard cpu(DeviceType::CPU);
    const Tensor y = ops::mm(da, db);
    EXPECT_EQ(y.dtype(), kF32);
    EXPECT_TRUE(bitwise_equal(y, plain));
    EXPECT_EQ(Tensor(ops::mm(a, b)).dtype(), kBF16);  // the CPU tensors are cast
  }
  {
    AutocastGuard cuda_ac(DeviceType::CUDA);
    EXPECT_TRUE(bitwise_equal(ops::mm(a, b), plain_cpu));  // the CPU tensors are not cast
    EXPECT_EQ(Tensor(ops::mm(da, db)).dtype(), kF16);
    {
      AutocastGuard off(DeviceType::CUDA, false);  // disabled inside
      EXPECT_EQ(Tensor(ops::mm(da, db)).dtype(), kF32);
    }
    EXPECT_EQ(Tensor(ops::mm(da, db)).dtype(), kF16);
  }
}

}  // namespace
}  // namespace ampjit
