// Pointwise ops (runtime/ops/pointwise.def), called through the C++ API and the dispatcher, against
// float64 references computed here with naive loops: every dtype torch supports, broadcasting,
// non-contiguous, 0-dim and empty inputs, Python-scalar promotion, in-place and out= variants, NaN
// handling, and the error messages.
#include <gmock/gmock.h>

#include <algorithm>
#include <cstring>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using testing::random_tensor;
using testing::round_to;
using testing::tol_for;
using testing::values;
using V = std::vector<int64_t>;
using D = std::vector<double>;

using namespace testing::dtypes;
const std::vector<ScalarType> kIntTypes = {kU8, kI8, kI16, kI32, kI64};
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

// ---- Inputs ------------------------------------------------------------------------------------

Tensor from_values(const V& shape, const D& v, ScalarType dtype) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, kF64);
  std::memcpy(t.data<double>(), v.data(), v.size() * sizeof(double));
  return t.view(shape).to(dtype);
}

// A random input; integer dtypes get integers in [lo, hi] (unsigned ones in [0, hi]); with
// `nonzero`, zeros become 1 (divisors).
Tensor input(const V& shape, ScalarType dtype, uint64_t seed, double lo, double hi,
             bool noncontig = false, bool nonzero = false) {
  if (dtype == kU8) lo = std::max(lo, 0.0);
  if (!nonzero) return random_tensor(shape, dtype, seed, lo, hi, noncontig);
  D v = values(random_tensor(shape, dtype, seed, lo, hi));
  for (double& x : v) x = x == 0 ? 1 : x;
  return random_tensor(shape, dtype, seed, 0, 1, noncontig).copy_(from_values(shape, v, dtype));
}

// ---- float64 references ------------------------------------------------------------------------

V broadcast_shape(V a, V b) {
  while (a.size() < b.size()) a.insert(a.begin(), 1);
  while (b.size() < a.size()) b.insert(b.begin(), 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = a[i] == 1 ? b[i] : a[i];
  return a;
}

// The row-major index, in a tensor of shape `in`, of the element broadcast to output index `idx`.
int64_t source_index(const V& in, const V& idx) {
  const size_t off = idx.size() - in.size();
  int64_t lin = 0;
  for (size_t d = 0; d < in.size(); ++d) lin = lin * in[d] + (in[d] == 1 ? 0 : idx[off + d]);
  return lin;
}

// Integer results wrap like the dtype; bool is nonzero-ness.
double wrap_to(double v, ScalarType t) {
  if (t == kBool) return v != 0;
  const int bits = 8 * static_cast<int>(itemsize(t));
  if (bits == 64) return v;
  const int64_t m = int64_t{1} << bits;
  int64_t i = static_cast<int64_t>(v) % m;
  if (i < 0) i += m;
  if (traits(t).is_signed && i >= m / 2) i -= m;
  return static_cast<double>(i);
}

using RefN = std::function<double(const D&)>;

// ref over the broadcast inputs, each converted first to `compute` (the dtype the op computes
// in), the result rounded (floats) or wrapped (integers) to `out`; compared with tol_for(out).
::testing::AssertionResult matches(const Tensor& got, const std::vector<Tensor>& ins,
                                   ScalarType compute, ScalarType out, const RefN& ref) {
  if (got.dtype() != out) {
    return ::testing::AssertionFailure()
           << "dtype " << dtype_name(got.dtype()) << ", expected " << dtype_name(out);
  }
  V shape;
  std::vector<D> in_values;
  for (const Tensor& t : ins) {
    shape = broadcast_shape(shape, V(t.sizes().begin(), t.sizes().end()));
    in_values.push_back(values(t.to(compute)));
  }
  D want(static_cast<size_t>(numel_of(shape)));
  testing::for_each_index(shape, [&](const V& idx, int64_t lin) {
    D args;
    for (size_t k = 0; k < ins.size(); ++k)
      args.push_back(
          in_values[k][source_index(V(ins[k].sizes().begin(), ins[k].sizes().end()), idx)]);
    const double v = ref(args);
    want[lin] = is_floating(out) ? round_to(v, out) : wrap_to(v, out);
  });
  return testing::close(got, want, shape, tol_for(out));
}

// ---- Shape cases -------------------------------------------------------------------------------

struct UnaryShape {
  V shape;
  bool noncontig;
};
const std::vector<UnaryShape> kUnaryShapes = {
    {{3, 5}, false}, {{4, 6}, true}, {{7}, true}, {{}, false}, {{0, 2}, false}};

struct BinaryShape {
  V a, b;
  bool noncontig_a, noncontig_b;
};
const std::vector<BinaryShape> kBinaryShapes = {
    {{3, 1, 4}, {2, 4}, false, false},  // broadcasting both ways
    {{4, 6}, {4, 6}, true, true},       // transposed views
    {{5, 7}, {5, 7}, false, false},     // the flat path
    {{}, {5}, false, false},            // 0-dim with 1-d
    {{3, 4}, {}, true, false},          // strided with 0-dim
    {{0, 3}, {1, 3}, false, false},     // empty
};

std::string describe(ScalarType dt, const V& a, const V& b = {}) {
  return std::string(dtype_name(dt)) + " " + shape_str(a) + (b.empty() ? "" : " " + shape_str(b));
}

// ---- Unary math --------------------------------------------------------------------------------

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op, inplace;
  std::function<double(double)> ref;
  double lo, hi;
};
// A table row for ops::ID and ops::ID_, with the float64 reference EXPR (a function of x).
// clang-format off
#define UNARY_CASE(ID, EXPR, LO, HI)                                    \
  UnaryCase{#ID, [](const Tensor& t) -> Tensor { return ops::ID(t); },  \
            [](const Tensor& t) -> Tensor { return ops::ID##_(t); },    \
            [](double x) -> double { return EXPR; }, LO, HI}
// clang-format on

double sigmoid_ref(double x) {
  return 1 / (1 + std::exp(-x));
}
double gelu_ref(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double gelu_tanh_ref(double x) {
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

// The int-to-float ops, then silu and gelu (floating inputs only).
const std::vector<UnaryCase>& math_cases() {
  static const std::vector<UnaryCase> v = {
      UNARY_CASE(exp, std::exp(x), -4, 4),          UNARY_CASE(log, std::log(x), 0.05, 6),
      UNARY_CASE(log1p, std::log1p(x), -0.9, 4),    UNARY_CASE(sqrt, std::sqrt(x), 0, 6),
      UNARY_CASE(rsqrt, 1 / std::sqrt(x), 0.05, 6), UNARY_CASE(sin, std::sin(x), -4, 4),
      UNARY_CASE(cos, std::cos(x), -4, 4),          UNARY_CASE(tan, std::tan(x), -1.3, 1.3),
      UNARY_CASE(tanh, std::tanh(x), -3, 3),        UNARY_CASE(sigmoid, sigmoid_ref(x), -6, 6),
      UNARY_CASE(erf, std::erf(x), -2.5, 2.5),      UNARY_CASE(reciprocal, 1 / x, 0.1, 4),
      UNARY_CASE(silu, x * sigmoid_ref(x), -5, 5),  UNARY_CASE(gelu, gelu_ref(x), -3, 3),
  };
  return v;
}
constexpr size_t kNumIntToFloat = 12;  // the first 12 cases

// op(x) and op_(x) against ref on every float dtype and shape case.
void check_unary(const UnaryCase& c, const std::vector<ScalarType>& dtypes, uint64_t seed) {
  for (ScalarType dt : dtypes) {
    for (const UnaryShape& s : kUnaryShapes) {
      SCOPED_TRACE(std::string(c.name) + " " + describe(dt, s.shape));
      Tensor x = input(s.shape, dt, ++seed, c.lo, c.hi, s.noncontig);
      const Tensor y = c.op(x);
      EXPECT_TRUE(matches(y, {x}, dt, dt, [&](const D& a) { return c.ref(a[0]); }));
      // In place, through the strided view: the same values land in x's storage.
      Tensor r = c.inplace(x);
      EXPECT_TRUE(r.is_same(x));
      EXPECT_TRUE(testing::close(x, values(y), V(y.sizes().begin(), y.sizes().end()), {0, 0}));
    }
  }
}

TEST(UnaryMath, MatchFloat64ReferenceOnFloatTypes) {
  uint64_t seed = 100;
  for (const UnaryCase& c : math_cases()) check_unary(c, testing::float_types(), seed += 50);
}

TEST(UnaryMath, GeluTanhApproximation) {
  const UnaryCase c{"gelu tanh",
                    [](const Tensor& x) -> Tensor { return ops::gelu(x, "tanh"); },
                    [](const Tensor& x) -> Tensor { return ops::gelu_(x, "tanh"); },
                    gelu_tanh_ref,
                    -4,
                    4};
  check_unary(c, testing::float_types(), 7);
}

TEST(UnaryMath, IntegerAndBoolInputsComputeInFloat32) {
  uint64_t seed = 3;
  for (size_t i = 0; i < kNumIntToFloat; ++i) {
    const UnaryCase& c = math_cases()[i];
    for (ScalarType dt : {kU8, kI8, kI16, kI32, kI64, kBool}) {
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt));
      Tensor x = input({3, 4}, dt, ++seed, std::floor(c.lo), std::ceil(c.hi));
      EXPECT_TRUE(matches(c.op(x), {x}, kF32, kF32, [&](const D& a) { return c.ref(a[0]); }));
    }
  }
}

TEST(UnaryMath, SpecialValues) {
  Tensor x = from_values({6}, {kNaN, kInf, -kInf, 0.0, -0.0, -1.0}, kF32);
  EXPECT_TRUE(
      testing::close(ops::exp(x), {kNaN, kInf, 0, 1, 1, std::exp(-1.0)}, {6}, tol_for(kF32)));
  EXPECT_TRUE(testing::close(ops::log(x), {kNaN, kInf, kNaN, -kInf, -kInf, kNaN}, {6}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::sqrt(x), {kNaN, kInf, kNaN, 0, 0, kNaN}, {6}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::rsqrt(x), {kNaN, 0, kNaN, kInf, -kInf, kNaN}, {6}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::reciprocal(x), {kNaN, 0, -0.0, kInf, -kInf, -1}, {6}, {0, 0}));
  EXPECT_TRUE(
      testing::close(ops::sigmoid(x), {kNaN, 1, 0, 0.5, 0.5, sigmoid_ref(-1)}, {6}, tol_for(kF32)));
  EXPECT_TRUE(
      testing::close(ops::tanh(x), {kNaN, 1, -1, 0, 0, std::tanh(-1.0)}, {6}, tol_for(kF32)));
}

// ---- neg, abs, sign, rounding ------------------------------------------------------------------

TEST(UnaryNumeric, NegAbsSignKeepTheDtype) {
  const std::vector<UnaryCase> cases = {
      UNARY_CASE(neg, -x, -20, 20),
      UNARY_CASE(abs, std::abs(x), -20, 20),
      UNARY_CASE(sign, double((0 < x) - (x < 0)), -3, 3),
  };
  std::vector<ScalarType> dtypes = testing::float_types();
  dtypes.insert(dtypes.end(), kIntTypes.begin(), kIntTypes.end());
  uint64_t seed = 11;
  for (const UnaryCase& c : cases) check_unary(c, dtypes, seed += 40);
  // Integers wrap as in torch: -(-128) and abs(-128) stay -128 in int8; neg of uint8 wraps.
  EXPECT_EQ(values(ops::neg(from_values({2}, {-128, 5}, kI8))), (D{-128, -5}));
  EXPECT_EQ(values(ops::abs(from_values({1}, {-128}, kI8))), (D{-128}));
  EXPECT_EQ(values(ops::neg(from_values({2}, {1, 0}, kU8))), (D{255, 0}));
  // sign: NaN and -0 give 0; a bool tensor stays bool.
  EXPECT_EQ(values(ops::sign(from_values({3}, {kNaN, -0.0, -kInf}, kF16))), (D{0, 0, -1}));
  Tensor b = ops::sign(from_values({2}, {1, 0}, kBool));
  EXPECT_EQ(b.dtype(), kBool);
  EXPECT_EQ(values(b), (D{1, 0}));
}

TEST(UnaryNumeric, FloorCeilRound) {
  const std::vector<UnaryCase> cases = {
      UNARY_CASE(floor, std::floor(x), -5, 5),
      UNARY_CASE(ceil, std::ceil(x), -5, 5),
      UNARY_CASE(round, std::nearbyint(x), -5, 5),
  };
  uint64_t seed = 21;
  for (const UnaryCase& c : cases) check_unary(c, testing::float_types(), seed += 40);
  // Round half to even, in every float dtype.
  for (ScalarType dt : testing::float_types()) {
    Tensor x = from_values({7}, {-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.25}, dt);
    EXPECT_EQ(values(ops::round(x)), (D{-2, -2, -0.0, 0, 2, 2, 3})) << dtype_name(dt);
  }
  // Integers are already integral: a copy in the same dtype.
  for (ScalarType dt : kIntTypes) {
    Tensor x = input({2, 3}, dt, 5, -9, 9);
    for (const UnaryCase& c : cases) {
      Tensor y = c.op(x);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(values(y), values(x)) << c.name;
    }
  }
}

TEST(UnaryNumeric, RoundDecimals) {
  for (ScalarType dt : {kF32, kF64}) {
    for (int64_t d : {2, 1, -1}) {
      SCOPED_TRACE(std::string(dtype_name(dt)) + " decimals=" + std::to_string(d));
      Tensor x = input({4, 5}, dt, 31 + d, -300, 300, true);
      const double s = std::pow(10.0, std::abs(static_cast<double>(d)));
      EXPECT_TRUE(matches(ops::round_decimals(x, d), {x}, dt, dt, [&](const D& a) {
        return d < 0 ? std::nearbyint(a[0] / s) * s : std::nearbyint(a[0] * s) / s;
      }));
    }
  }
  Tensor x = from_values({3}, {1.25, 2.675, -0.125}, kF64);
  EXPECT_TRUE(testing::close(ops::round_decimals(x, 1), {1.2, 2.7, -0.1}, {3}, tol_for(kF64)));
  Tensor y = x.clone();
  EXPECT_TRUE(ops::round__decimals(y, 1).tensor().is_same(y));
  EXPECT_EQ(values(y), values(ops::round_decimals(x, 1)));
}

// ---- clamp, clamp_min, clamp_max, relu ---------------------------------------------------------

TEST(Clamp, ScalarBoundsOnEveryNumericDtype) {
  std::vector<ScalarType> dtypes = testing::float_types();
  dtypes.insert(dtypes.end(), kIntTypes.begin(), kIntTypes.end());
  uint64_t seed = 40;
  for (ScalarType dt : dtypes) {
    for (const UnaryShape& s : kUnaryShapes) {
      SCOPED_TRACE(describe(dt, s.shape));
      Tensor x = input(s.shape, dt, ++seed, -20, 20, s.noncontig);
      auto clip = [](double lo, double hi) {
        return [=](const D& a) { return std::min(std::max(a[0], lo), hi); };
      };
      EXPECT_TRUE(matches(ops::clamp(x, 2, 9), {x}, dt, dt, clip(2, 9)));
      EXPECT_TRUE(matches(ops::clamp(x, 3), {x}, dt, dt, clip(3, kInf)));
      EXPECT_TRUE(matches(ops::clamp(x, std::nullopt, 4), {x}, dt, dt, clip(-kInf, 4)));
      EXPECT_TRUE(matches(ops::clamp(x, 5, 1), {x}, dt, dt, clip(5, 1)));  // min > max: max
      EXPECT_TRUE(matches(ops::clamp_min(x, 3), {x}, dt, dt, clip(3, kInf)));
      EXPECT_TRUE(matches(ops::clamp_max(x, 4), {x}, dt, dt, clip(-kInf, 4)));
      EXPECT_TRUE(matches(ops::relu(x), {x}, dt, dt, clip(0, kInf)));
      Tensor c = x.clone(), cmin = x.clone(), cmax = x.clone();
      EXPECT_TRUE(ops::clamp_(c, 2, 9).tensor().is_same(c));
      ops::clamp_min_(cmin, 3);
      ops::clamp_max_(cmax, 4);
      EXPECT_EQ(values(c), values(ops::clamp(x, 2, 9)));
      EXPECT_EQ(values(cmin), values(ops::clamp_min(x, 3)));
      EXPECT_EQ(values(cmax), values(ops::clamp_max(x, 4)));
      const Tensor relu = ops::relu(x);
      EXPECT_TRUE(ops::relu_(x).tensor().is_same(x));
      EXPECT_EQ(values(x), values(relu));
    }
  }
}

TEST(Clamp, PromotionAndNaN) {
  // Python-number bounds promote a non-floating self: int32 clamped to 0.5 is float32.
  Tensor i = from_values({4}, {-2, 0, 1, 3}, kI32);
  Tensor f = ops::clamp(i, 0.5, 2);
  EXPECT_EQ(f.dtype(), kF32);
  EXPECT_EQ(values(f), (D{0.5, 0.5, 1, 2}));
  EXPECT_EQ(ops::clamp(from_values({2}, {0, 1}, kBool), 0).tensor().dtype(), kI64);
  EXPECT_EQ(ops::clamp(from_values({2}, {1, 2}, kF16), 0.5, 1.5).tensor().dtype(), kF16);
  // NaN: a NaN input stays NaN; a NaN Scalar bound makes everything NaN, except in clamp when it
  // is the only bound (torch's kernels).
  Tensor x = from_values({4}, {kNaN, -3, 3, 0.5}, kF32);
  const D all_nan = {kNaN, kNaN, kNaN, kNaN};
  EXPECT_TRUE(testing::close(ops::clamp(x, -1, 1), {kNaN, -1, 1, 0.5}, {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::clamp(x, kNaN, 1), all_nan, {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::clamp(x, -1, kNaN), all_nan, {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::clamp(x, kNaN), values(x), {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::clamp(x, std::nullopt, kNaN), values(x), {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::clamp_min(x, kNaN), all_nan, {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::clamp_max(x, kNaN), all_nan, {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::relu(x), {kNaN, 0, 3, 0.5}, {4}, {0, 0}));
  Tensor lo = from_values({4}, {-1, kNaN, -1, -1}, kF32);
  EXPECT_TRUE(testing::close(ops::clamp_Tensor(x, lo), {kNaN, kNaN, 3, 0.5}, {4}, {0, 0}));
}

TEST(Clamp, TensorBoundsBroadcastAndPromote) {
  uint64_t seed = 60;
  for (ScalarType dt : {kF32, kF64, kF16, kBF16, kI32, kI8}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor x = input({3, 1, 4}, dt, ++seed, -10, 10);
    Tensor lo = input({2, 4}, dt, ++seed, -6, 0, true);
    Tensor hi = input({4}, dt, ++seed, 0, 6);
    auto clip = [](const D& a) { return std::min(std::max(a[0], a[1]), a[2]); };
    EXPECT_TRUE(matches(ops::clamp_Tensor(x, lo, hi), {x, lo, hi}, dt, dt, clip));
    EXPECT_TRUE(matches(ops::clamp_min_Tensor(x, lo), {x, lo}, dt, dt,
                        [](const D& a) { return std::max(a[0], a[1]); }));
    EXPECT_TRUE(matches(ops::clamp_max_Tensor(x, hi), {x, hi}, dt, dt,
                        [](const D& a) { return std::min(a[0], a[1]); }));
    EXPECT_TRUE(matches(ops::clamp_Tensor(x, std::nullopt, hi), {x, hi}, dt, dt,
                        [](const D& a) { return std::min(a[0], a[1]); }));
    // In place: self must already have the broadcast shape.
    Tensor y = input({2, 4}, dt, ++seed, -10, 10, true);
    const Tensor want = ops::clamp_Tensor(y, lo, hi);
    EXPECT_TRUE(ops::clamp__Tensor(y, lo, hi).tensor().is_same(y));
    EXPECT_EQ(values(y), values(want));
    Tensor z = input({2, 4}, dt, ++seed, -10, 10), z2 = z.clone();
    const Tensor zmin = ops::clamp_min_Tensor(z, lo), zmax = ops::clamp_max_Tensor(z, hi);
    ops::clamp_min__Tensor(z, lo);
    ops::clamp_max__Tensor(z2, hi);
    EXPECT_EQ(values(z), values(zmin));
    EXPECT_EQ(values(z2), values(zmax));
  }
  // int32 self with float32 bounds computes in float32.
  Tensor i = from_values({3}, {-5, 0, 5}, kI32);
  Tensor f = ops::clamp_Tensor(i, from_values({}, {-1.5}, kF32), from_values({}, {2.5}, kF32));
  EXPECT_EQ(f.dtype(), kF32);
  EXPECT_EQ(values(f), (D{-1.5, 0, 2.5}));
}

// ---- Binary arithmetic -------------------------------------------------------------------------

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> op;
  std::function<double(double, double)> ref;
  double lo_a, hi_a, lo_b, hi_b;
  bool nonzero_b = false;
};
// The op under test (of tensors a and b) and its float64 reference (of doubles x and y).
#define REF2(EXPR) [](double x, double y) -> double { return EXPR; }
#define BINARY_OP(EXPR) \
  [](const Tensor& a, [[maybe_unused]] const Tensor& b) -> Tensor { return EXPR; }

double floor_div(double x, double y) {
  return std::floor(x / y);
}
double py_mod(double x, double y) {
  const double r = std::fmod(x, y);
  return r != 0 && (r < 0) != (y < 0) ? r + y : r;
}

// Checks each case over the shape cases with both operands of dtype `dt` (result `out`).
void check_binary(const std::vector<BinaryCase>& cases, ScalarType dt, ScalarType out,
                  uint64_t seed) {
  for (const BinaryCase& c : cases) {
    for (const BinaryShape& s : kBinaryShapes) {
      SCOPED_TRACE(std::string(c.name) + " " + describe(dt, s.a, s.b));
      Tensor a = input(s.a, dt, ++seed, c.lo_a, c.hi_a, s.noncontig_a);
      Tensor b = input(s.b, dt, ++seed, c.lo_b, c.hi_b, s.noncontig_b, c.nonzero_b);
      EXPECT_TRUE(matches(c.op(a, b), {a, b}, is_floating(out) ? out : dt, out,
                          [&](const D& v) { return c.ref(v[0], v[1]); }));
    }
  }
}

TEST(Binary, FloatTypesMatchReference) {
  const std::vector<BinaryCase> cases = {
      {"add", BINARY_OP(ops::add(a, b)), REF2(x + y), -4, 4, -4, 4},
      {"add alpha", BINARY_OP(ops::add(a, b, 0.5)), REF2(x + 0.5 * y), -4, 4, -4, 4},
      {"sub alpha", BINARY_OP(ops::sub(a, b, 2)), REF2(x - 2 * y), -4, 4, -4, 4},
      {"rsub", BINARY_OP(ops::rsub(a, b)), REF2(y - x), -4, 4, -4, 4},
      {"mul", BINARY_OP(ops::mul(a, b)), REF2(x * y), -4, 4, -4, 4},
      {"div", BINARY_OP(ops::div(a, b)), REF2(x / y), -4, 4, 0.25, 4},
      {"div trunc", BINARY_OP(ops::div_Tensor_mode(a, b, "trunc")), REF2(std::trunc(x / y)), -9, 9,
       -3, 3},
      {"div floor", BINARY_OP(ops::div_Tensor_mode(a, b, "floor")), floor_div, -9, 9, -3, 3},
      {"div None", BINARY_OP(ops::div_Tensor_mode(a, b, std::nullopt)), REF2(x / y), -4, 4, 0.25,
       4},
      {"pow", BINARY_OP(ops::pow(a, b)), REF2(std::pow(x, y)), 0.1, 3, -2.5, 2.5},
      {"pow negative base", BINARY_OP(ops::pow(a, b)), REF2(std::pow(x, y)), -3, 0, -2.5, 2.5},
      {"fmod", BINARY_OP(ops::fmod(a, b)), REF2(std::fmod(x, y)), -9, 9, -3, 3},
      {"remainder", BINARY_OP(ops::remainder(a, b)), py_mod, -9, 9, -3, 3},
      {"atan2", BINARY_OP(ops::atan2(a, b)), REF2(std::atan2(x, y)), -3, 3, -3, 3},
      {"maximum", BINARY_OP(ops::maximum(a, b)), REF2(std::max(x, y)), -4, 4, -4, 4},
      {"minimum", BINARY_OP(ops::minimum(a, b)), REF2(std::min(x, y)), -4, 4, -4, 4},
  };
  uint64_t seed = 1000;
  for (ScalarType dt : testing::float_types()) check_binary(cases, dt, dt, seed += 1000);
}

TEST(Binary, IntegerTypesMatchReferenceExactly) {
  const std::vector<BinaryCase> cases = {
      {"add", BINARY_OP(ops::add(a, b, 3)), REF2(x + 3 * y), -20, 20, -20, 20},
      {"sub", BINARY_OP(ops::sub(a, b)), REF2(x - y), -20, 20, -20, 20},
      {"mul", BINARY_OP(ops::mul(a, b)), REF2(x * y), -20, 20, -20, 20},
      {"div trunc", BINARY_OP(ops::div_Tensor_mode(a, b, "trunc")), REF2(std::trunc(x / y)), -20,
       20, -6, 6, true},
      {"div floor", BINARY_OP(ops::div_Tensor_mode(a, b, "floor")), floor_div, -20, 20, -6, 6,
       true},
      {"fmod", BINARY_OP(ops::fmod(a, b)), REF2(std::fmod(x, y)), -20, 20, -6, 6, true},
      {"remainder", BINARY_OP(ops::remainder(a, b)), py_mod, -20, 20, -6, 6, true},
      {"pow", BINARY_OP(ops::pow(a, b)), REF2(std::pow(x, y)), -9, 9, 0, 4},
      {"maximum", BINARY_OP(ops::maximum(a, b)), REF2(std::max(x, y)), -20, 20, -20, 20},
      {"minimum", BINARY_OP(ops::minimum(a, b)), REF2(std::min(x, y)), -20, 20, -20, 20},
  };
  const std::vector<BinaryCase> to_float = {
      {"div", BINARY_OP(ops::div(a, b)), REF2(x / y), -20, 20, -6, 6, true},
      {"atan2", BINARY_OP(ops::atan2(a, b)), REF2(std::atan2(x, y)), -5, 5, -5, 5},
  };
  uint64_t seed = 9000;
  for (ScalarType dt : kIntTypes) {
    check_binary(cases, dt, dt, seed += 1000);
    check_binary(to_float, dt, kF32, seed += 1000);  // true division of integers is float32
  }
}

TEST(Binary, IntegerEdgeCases) {
  // Wrapping arithmetic, INT_MIN / -1, and integer pow with a negative tensor exponent (torch:
  // 1 for base 1, +-1 for base -1, 0 otherwise).
  EXPECT_EQ(values(ops::add(from_values({1}, {100}, kI8), from_values({1}, {100}, kI8))), (D{-56}));
  Tensor m = from_values({2}, {-2147483648.0, 7}, kI32);
  Tensor neg1 = from_values({2}, {-1, -1}, kI32);
  EXPECT_EQ(values(ops::div_Tensor_mode(m, neg1, "trunc")), (D{-2147483648.0, -7}));
  EXPECT_EQ(values(ops::div_Tensor_mode(m, neg1, "floor")), (D{-2147483648.0, -7}));
  EXPECT_EQ(values(ops::remainder(m, neg1)), (D{0, 0}));
  Tensor base = from_values({4}, {1, -1, -1, 2}, kI64);
  Tensor e = from_values({4}, {-3, -3, -2, -1}, kI64);
  EXPECT_EQ(values(ops::pow(base, e)), (D{1, -1, 1, 0}));
  EXPECT_EQ(values(ops::pow_Tensor_Scalar(from_values({3}, {2, -3, 5}, kI64), 3)),
            (D{8, -27, 125}));
  // Bool arithmetic: add is or, mul is and, maximum/minimum are or/and.
  Tensor p = from_values({4}, {0, 0, 1, 1}, kBool), q = from_values({4}, {0, 1, 0, 1}, kBool);
  EXPECT_EQ(ops::add(p, q).tensor().dtype(), kBool);
  EXPECT_EQ(values(ops::add(p, q)), (D{0, 1, 1, 1}));
  EXPECT_EQ(values(ops::mul(p, q)), (D{0, 0, 0, 1}));
  EXPECT_EQ(values(ops::maximum(p, q)), (D{0, 1, 1, 1}));
  EXPECT_EQ(values(ops::minimum(p, q)), (D{0, 0, 0, 1}));
}

TEST(Binary, FloatSpecialValues) {
  Tensor a = from_values({4}, {kNaN, 1, -kInf, 0.0}, kF32);
  Tensor b = from_values({4}, {0, kNaN, 2, -0.0}, kF32);
  EXPECT_TRUE(testing::close(ops::maximum(a, b), {kNaN, kNaN, 2, 0}, {4}, {0, 0}));
  EXPECT_TRUE(testing::close(ops::minimum(a, b), {kNaN, kNaN, -kInf, 0}, {4}, {0, 0}));
  // Division by zero follows IEEE in every rounding mode.
  Tensor x = from_values({3}, {1, -1, 0}, kF32), z = from_values({3}, {0, 0, 0}, kF32);
  EXPECT_TRUE(testing::close(ops::div(x, z), {kInf, -kInf, kNaN}, {3}, {0, 0}));
  EXPECT_TRUE(
      testing::close(ops::div_Tensor_mode(x, z, "floor"), {kInf, -kInf, kNaN}, {3}, {0, 0}));
  EXPECT_TRUE(
      testing::close(ops::div_Tensor_mode(x, z, "trunc"), {kInf, -kInf, kNaN}, {3}, {0, 0}));
  // Floor division keeps the sign of a zero quotient; remainder takes the divisor's sign.
  Tensor fd = ops::div_Tensor_mode(from_values({2}, {0.5, -0.5}, kF64),
                                   from_values({2}, {4, 4}, kF64), "floor");
  EXPECT_EQ(values(fd), (D{0, -1}));
  EXPECT_FALSE(std::signbit(values(ops::div_Tensor_mode(from_values({1}, {0.0}, kF64),
                                                        from_values({1}, {4}, kF64), "floor"))[0]));
  EXPECT_EQ(
      values(ops::remainder(from_values({2}, {5, -5}, kF32), from_values({2}, {-3, 3}, kF32))),
      (D{-1, 1}));
  EXPECT_EQ(values(ops::fmod(from_values({2}, {5, -5}, kF32), from_values({2}, {-3, 3}, kF32))),
            (D{2, -2}));
}

TEST(Binary, ScalarOverloads) {
  uint64_t seed = 300;
  for (ScalarType dt : testing::float_types()) {
    for (const UnaryShape& s : kUnaryShapes) {
      SCOPED_TRACE(describe(dt, s.shape));
      Tensor x = input(s.shape, dt, ++seed, 0.5, 4, s.noncontig);
      auto unary = [&](double (*f)(double)) { return [f](const D& a) { return f(a[0]); }; };
      EXPECT_TRUE(
          matches(ops::add_Scalar(x, 1.5, 2), {x}, dt, dt, unary([](double v) { return v + 3; })));
      EXPECT_TRUE(
          matches(ops::sub_Scalar(x, 0.25), {x}, dt, dt, unary([](double v) { return v - 0.25; })));
      EXPECT_TRUE(
          matches(ops::rsub_Scalar(x, 1), {x}, dt, dt, unary([](double v) { return 1 - v; })));
      EXPECT_TRUE(
          matches(ops::mul_Scalar(x, -1.5), {x}, dt, dt, unary([](double v) { return -1.5 * v; })));
      EXPECT_TRUE(
          matches(ops::div_Scalar(x, 4), {x}, dt, dt, unary([](double v) { return v / 4; })));
      EXPECT_TRUE(matches(ops::div_Scalar_mode(x, 0.75, "floor"), {x}, dt, dt,
                          unary([](double v) { return std::floor(v / 0.75); })));
      EXPECT_TRUE(matches(ops::fmod_Scalar(x, 1.5), {x}, dt, dt,
                          unary([](double v) { return std::fmod(v, 1.5); })));
      EXPECT_TRUE(matches(ops::remainder_Scalar(x, -1.5), {x}, dt, dt,
                          unary([](double v) { return py_mod(v, -1.5); })));
      EXPECT_TRUE(matches(ops::remainder_Scalar_Tensor(3, x), {x}, dt, dt,
                          unary([](double v) { return py_mod(3, v); })));
      EXPECT_TRUE(matches(ops::pow_Scalar(2, x), {x}, dt, dt,
                          unary([](double v) { return std::pow(2, v); })));
      for (double e : {2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.7, 0.0, 1.0}) {
        EXPECT_TRUE(matches(ops::pow_Tensor_Scalar(x, e), {x}, dt, dt,
                            [e](const D& a) { return std::pow(a[0], e); }))
            << "exponent " << e;
      }
    }
  }
}

TEST(Binary, PythonScalarAndZeroDimPromotion) {
  Tensor i32 = input({5}, kI32, 1, -5, 5);
  Tensor h = input({5}, kF16, 2, -2, 2);
  Tensor u8 = input({6}, kU8, 3, 0, 10);
  auto ref = [](double (*f)(double, double)) {
    return [f](const D& a) { return f(a[0], a.size() > 1 ? a[1] : 0); };
  };
  // int32 tensor + 2.5 -> float32; float16 tensor + 2.5 -> float16 (a Python float never widens).
  EXPECT_TRUE(matches(ops::add_Scalar(i32, 2.5), {i32}, kF32, kF32,
                      ref([](double x, double) { return x + 2.5; })));
  EXPECT_TRUE(matches(ops::add_Scalar(h, 2.5), {h}, kF16, kF16,
                      ref([](double x, double) { return x + 2.5; })));
  // uint8 + bool -> uint8; uint8 + 1000 stays uint8 (and wraps).
  Tensor bl = input({6}, kBool, 4, 0, 1);
  EXPECT_TRUE(matches(ops::add(u8, bl), {u8, bl}, kU8, kU8, ref(REF2(x + y))));
  EXPECT_TRUE(matches(ops::add_Scalar(u8, 1000), {u8}, kU8, kU8,
                      ref([](double x, double) { return x + 1000; })));
  // Integer tensor with integer scalars stays integral; true division does not.
  EXPECT_TRUE(matches(ops::mul_Scalar(i32, 3), {i32}, kI32, kI32,
                      ref([](double x, double) { return 3 * x; })));
  EXPECT_TRUE(matches(ops::div_Scalar(i32, 2), {i32}, kF32, kF32,
                      ref([](double x, double) { return x / 2; })));
  EXPECT_TRUE(matches(ops::div_Scalar_mode(i32, 2, "floor"), {i32}, kI32, kI32,
                      ref([](double x, double) { return std::floor(x / 2); })));
  EXPECT_TRUE(matches(ops::pow_Tensor_Scalar(i32, 2.0), {i32}, kF32, kF32,
                      ref([](double x, double) { return x * x; })));
  EXPECT_TRUE(matches(ops::pow_Scalar(2, ops::abs(i32)), {ops::abs(i32)}, kI32, kI32,
                      ref([](double x, double) { return std::pow(2, x); })));
  EXPECT_TRUE(matches(ops::remainder_Scalar_Tensor(7, input({5}, kI64, 9, 1, 4)),
                      {input({5}, kI64, 9, 1, 4)}, kI64, kI64,
                      ref([](double x, double) { return py_mod(7, x); })));
  // Zero-dim tensors promote only across categories: int64 0-dim * float16 -> float16, float16
  // tensor * float64 0-dim -> float16, but int32 tensor * float64 0-dim -> float64.
  Tensor z64 = from_values({}, {3}, kI64), zf64 = from_values({}, {0.75}, kF64);
  EXPECT_TRUE(matches(ops::mul(z64, h), {z64, h}, kF16, kF16, ref(REF2(x * y))));
  EXPECT_TRUE(matches(ops::mul(h, zf64), {h, zf64}, kF16, kF16, ref(REF2(x * y))));
  EXPECT_EQ(ops::mul(i32, zf64).tensor().dtype(), kF64);
  EXPECT_EQ(ops::add(i32, h).tensor().dtype(), kF16);
  EXPECT_TRUE(matches(ops::add(i32, h), {i32, h}, kF16, kF16, ref(REF2(x + y))));
  // bool with Python numbers: bool + 1 -> int64, bool * True -> bool.
  EXPECT_EQ(ops::add_Scalar(bl, 1).tensor().dtype(), kI64);
  EXPECT_EQ(ops::mul_Scalar(bl, true).tensor().dtype(), kBool);
  // Comparisons compute in the promoted type: int32 < 2.5 compares in float32.
  EXPECT_TRUE(matches(ops::lt_Scalar(i32, 2.5), {i32}, kF32, kBool,
                      ref([](double x, double) { return double(x < 2.5); })));
  EXPECT_TRUE(matches(ops::ge_Scalar(h, 0), {h}, kF16, kBool,
                      ref([](double x, double) { return double(x >= 0); })));
}

TEST(Binary, ScalarPrecisionInReducedFloatsFollowsTorch) {
  // s is just above half an ulp of 1. Unrounded, 1 + s rounds up; rounded to the dtype first, s is
  // exactly half an ulp and 1 + s ties to even, 1. add rounds the number and alpha first; mul, div
  // and addcmul's value do not, nor does mul a 0-dim tensor of another dtype (either side).
  for (auto [dt, half_ulp] : {std::pair{kF16, 0x1p-11}, std::pair{kBF16, 0x1p-8}}) {
    SCOPED_TRACE(dtype_name(dt));
    const double s = half_ulp + 0x1p-23, up = 1 + 2 * half_ulp;
    Tensor one = from_values({1}, {1}, dt);
    EXPECT_EQ(values(ops::add_Scalar(one, s)), D{1});
    EXPECT_EQ(values(ops::add(one, one, s)), D{1});
    EXPECT_EQ(values(ops::sub_Scalar(one, -s)), D{1});
    EXPECT_EQ(values(ops::mul_Scalar(one, 1 + s)), D{up});
    EXPECT_EQ(values(ops::div_Scalar(one, 1 / (1 + s))), D{up});
    EXPECT_EQ(values(ops::mul(one, from_values({}, {1 + s}, kF64))), D{up});
    EXPECT_EQ(values(ops::mul(from_values({}, {1 + s}, kF64), one)), D{up});
    EXPECT_EQ(values(ops::addcmul(one, one, one, s)), D{up});
  }
}

// ---- In-place and out= -------------------------------------------------------------------------

TEST(InPlace, WritesSelfThroughViews) {
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&, const Tensor&)> functional, inplace;
  };
  const std::vector<Case> cases = {
      {"add_", BINARY_OP(ops::add(a, b, 2)), BINARY_OP(ops::add_(a, b, 2))},
      {"sub_", BINARY_OP(ops::sub(a, b)), BINARY_OP(ops::sub_(a, b))},
      {"mul_", BINARY_OP(ops::mul(a, b)), BINARY_OP(ops::mul_(a, b))},
      {"div_", BINARY_OP(ops::div(a, b)), BINARY_OP(ops::div_(a, b))},
      {"div_ floor", BINARY_OP(ops::div_Tensor_mode(a, b, "floor")),
       BINARY_OP(ops::div__Tensor_mode(a, b, "floor"))},
      {"pow_", BINARY_OP(ops::pow(a, b)), BINARY_OP(ops::pow_(a, b))},
      {"fmod_", BINARY_OP(ops::fmod(a, b)), BINARY_OP(ops::fmod_(a, b))},
      {"remainder_", BINARY_OP(ops::remainder(a, b)), BINARY_OP(ops::remainder_(a, b))},
      {"atan2_", BINARY_OP(ops::atan2(a, b)), BINARY_OP(ops::atan2_(a, b))},
      {"add_ scalar", BINARY_OP(ops::add_Scalar(a, 2)), BINARY_OP(ops::add__Scalar(a, 2))},
      {"sub_ scalar", BINARY_OP(ops::sub_Scalar(a, 2)), BINARY_OP(ops::sub__Scalar(a, 2))},
      {"mul_ scalar", BINARY_OP(ops::mul_Scalar(a, 2)), BINARY_OP(ops::mul__Scalar(a, 2))},
      {"div_ scalar", BINARY_OP(ops::div_Scalar(a, 2)), BINARY_OP(ops::div__Scalar(a, 2))},
      {"div_ scalar trunc", BINARY_OP(ops::div_Scalar_mode(a, 2, "trunc")),
       BINARY_OP(ops::div__Scalar_mode(a, 2, "trunc"))},
      {"pow_ scalar", BINARY_OP(ops::pow_Tensor_Scalar(a, 2)), BINARY_OP(ops::pow__Scalar(a, 2))},
      {"fmod_ scalar", BINARY_OP(ops::fmod_Scalar(a, 2)), BINARY_OP(ops::fmod__Scalar(a, 2))},
      {"remainder_ scalar", BINARY_OP(ops::remainder_Scalar(a, 2)),
       BINARY_OP(ops::remainder__Scalar(a, 2))},
      {"logical_and_", BINARY_OP(ops::logical_and(a, b)), BINARY_OP(ops::logical_and_(a, b))},
      {"logical_or_", BINARY_OP(ops::logical_or(a, b)), BINARY_OP(ops::logical_or_(a, b))},
      {"logical_xor_", BINARY_OP(ops::logical_xor(a, b)), BINARY_OP(ops::logical_xor_(a, b))},
      {"addcmul_", BINARY_OP(ops::addcmul(a, b, b, 0.5)), BINARY_OP(ops::addcmul_(a, b, b, 0.5))},
      {"addcdiv_", BINARY_OP(ops::addcdiv(a, b, b, 0.5)), BINARY_OP(ops::addcdiv_(a, b, b, 0.5))},
  };
  uint64_t seed = 500;
  for (const Case& c : cases) {
    for (ScalarType dt : {kF32, kBF16}) {
      SCOPED_TRACE(std::string(c.name) + " " + dtype_name(dt));
      Tensor self = input({4, 6}, dt, ++seed, 0.5, 3, true);  // a transposed view
      Tensor other = input({6}, dt, ++seed, 0.5, 3);          // broadcast along dim 0
      const Tensor want = c.functional(self, other).to(dt);
      Tensor r = c.inplace(self, other);
      EXPECT_TRUE(r.is_same(self));
      EXPECT_EQ(self.dtype(), dt);
      EXPECT_EQ(values(self), values(want));
    }
  }
  // In-place ops keep self's dtype: float16 self with a Python float, int32 self with an int.
  Tensor h = input({3}, kF16, 1, -2, 2);
  const D hv = values(h);
  ops::mul__Scalar(h, 2.5);
  EXPECT_EQ(h.dtype(), kF16);
  for (size_t i = 0; i < hv.size(); ++i) EXPECT_EQ(values(h)[i], round_to(hv[i] * 2.5, kF16));
  Tensor i = from_values({3}, {7, -7, 2}, kI32);
  ops::div__Scalar_mode(i, 2, "floor");
  EXPECT_EQ(values(i), (D{3, -4, 1}));
  Tensor n = from_values({3}, {0, 1, 2}, kI64);
  ops::logical_not_(n);
  EXPECT_EQ(n.dtype(), kI64);
  EXPECT_EQ(values(n), (D{1, 0, 0}));
}

TEST(Out, MulAndAddOutResizeAndCheckTheDtype) {
  Tensor a = input({3, 1}, kF32, 1, -2, 2), b = input({4}, kF32, 2, -2, 2);
  Tensor out = Tensor::empty(V{1}, kF32);
  Tensor r = ops::mul_out(a, b, out);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(out.shape_str(), "[3, 4]");
  EXPECT_TRUE(matches(out, {a, b}, kF32, kF32, [](const D& v) { return v[0] * v[1]; }));
  Tensor out64 = Tensor::empty(V{3, 4}, kF64);  // float32 results may go to a float64 out
  ops::add_out(a, b, 1, out64);
  EXPECT_TRUE(
      matches(out64, {a, b}, kF32, kF64, [](const D& v) { return round_to(v[0] + v[1], kF32); }));
  Tensor iout = Tensor::empty(V{3, 4}, kI64);
  EXPECT_THAT([&] { ops::mul_out(a, b, iout); },
              ::testing::ThrowsMessage<Error>(HasSubstr(
                  "mul: result type float32 can't be cast to the desired output type int64")));
}

// ---- Comparisons, where, logical ---------------------------------------------------------------

TEST(Compare, EveryDtypeAndShape) {
  const std::vector<BinaryCase> cases = {
      {"eq", BINARY_OP(ops::eq(a, b)), REF2(double(x == y)), -3, 3, -3, 3},
      {"ne", BINARY_OP(ops::ne(a, b)), REF2(double(x != y)), -3, 3, -3, 3},
      {"lt", BINARY_OP(ops::lt(a, b)), REF2(double(x < y)), -3, 3, -3, 3},
      {"le", BINARY_OP(ops::le(a, b)), REF2(double(x <= y)), -3, 3, -3, 3},
      {"gt", BINARY_OP(ops::gt(a, b)), REF2(double(x > y)), -3, 3, -3, 3},
      {"ge", BINARY_OP(ops::ge(a, b)), REF2(double(x >= y)), -3, 3, -3, 3},
  };
  std::vector<ScalarType> dtypes = testing::float_types();
  dtypes.insert(dtypes.end(), kIntTypes.begin(), kIntTypes.end());
  dtypes.push_back(kBool);
  uint64_t seed = 700;
  for (ScalarType dt : dtypes) {
    // Small integers as values, so that equal elements are common.
    for (const BinaryCase& c : cases) {
      for (const BinaryShape& s : kBinaryShapes) {
        SCOPED_TRACE(std::string(c.name) + " " + describe(dt, s.a, s.b));
        Tensor a = input(s.a, kI32, ++seed, 0, 3).to(dt), b = input(s.b, kI32, ++seed, 0, 3).to(dt);
        if (s.noncontig_a) a = input(s.a, dt, seed, 0, 3, true);
        EXPECT_TRUE(
            matches(c.op(a, b), {a, b}, dt, kBool, [&](const D& v) { return c.ref(v[0], v[1]); }));
      }
    }
  }
  // Scalar overloads, and NaN: unequal to everything, itself included.
  Tensor x = from_values({3}, {kNaN, 1, 2}, kF32);
  EXPECT_EQ(values(ops::eq_Scalar(x, 1)), (D{0, 1, 0}));
  EXPECT_EQ(values(ops::ne_Scalar(x, 1)), (D{1, 0, 1}));
  EXPECT_EQ(values(ops::lt_Scalar(x, 2)), (D{0, 1, 0}));
  EXPECT_EQ(values(ops::le_Scalar(x, 2)), (D{0, 1, 1}));
  EXPECT_EQ(values(ops::gt_Scalar(x, 1)), (D{0, 0, 1}));
  EXPECT_EQ(values(ops::ge_Scalar(x, 1)), (D{0, 1, 1}));
  EXPECT_EQ(values(ops::eq(x, x)), (D{0, 1, 1}));
  EXPECT_EQ(values(ops::ne(x, x)), (D{1, 0, 0}));
}

TEST(Where, BroadcastsAndPromotes) {
  uint64_t seed = 800;
  std::vector<ScalarType> dtypes = testing::float_types();
  dtypes.insert(dtypes.end(), {kI32, kU8, kBool});
  auto select = [](const D& v) { return v[0] != 0 ? v[1] : v[2]; };
  for (ScalarType dt : dtypes) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor cond = input({3, 1, 4}, kBool, ++seed, 0, 1);
    Tensor a = input({2, 4}, dt, ++seed, -5, 5, true), b = input({4}, dt, ++seed, -5, 5);
    EXPECT_TRUE(matches(ops::where(cond, a, b), {cond, a, b}, dt, dt, select));
    Tensor scalar_cond = input({}, kBool, ++seed, 0, 1);
    EXPECT_TRUE(matches(ops::where(scalar_cond, a, b), {scalar_cond, a, b}, dt, dt, select));
  }
  // Mixed dtypes and Python numbers promote as the other binary ops.
  Tensor cond = from_values({4}, {1, 0, 1, 0}, kBool);
  Tensor i = from_values({4}, {1, 2, 3, 4}, kI32);
  Tensor h = from_values({4}, {0.5, 1.5, 2.5, 3.5}, kF16);
  Tensor r = ops::where(cond, i, h);
  EXPECT_EQ(r.dtype(), kF16);
  EXPECT_EQ(values(r), (D{1, 1.5, 3, 3.5}));
  r = ops::where_ScalarOther(cond, i, 2.5);
  EXPECT_EQ(r.dtype(), kF32);
  EXPECT_EQ(values(r), (D{1, 2.5, 3, 2.5}));
  r = ops::where_ScalarSelf(cond, -1, i);
  EXPECT_EQ(r.dtype(), kI32);
  EXPECT_EQ(values(r), (D{-1, 2, -1, 4}));
  r = ops::where_ScalarOther(cond, h, 2.5);
  EXPECT_EQ(r.dtype(), kF16);
  EXPECT_EQ(ops::where_Scalar(cond, 1, 0).tensor().dtype(), kI64);
  r = ops::where_Scalar(cond, 1.0, 0);
  EXPECT_EQ(r.dtype(), kF32);
  EXPECT_EQ(values(r), (D{1, 0, 1, 0}));
  // A uint8 condition is still accepted, as in torch.
  EXPECT_EQ(values(ops::where(from_values({4}, {2, 0, 1, 0}, kU8), i, h)), (D{1, 1.5, 3, 3.5}));
}

TEST(Logical, AnyDtypeInBoolOut) {
  uint64_t seed = 900;
  const std::vector<BinaryCase> cases = {
      {"logical_and", BINARY_OP(ops::logical_and(a, b)), REF2(double(x != 0 && y != 0)), -1, 1, -1,
       1},
      {"logical_or", BINARY_OP(ops::logical_or(a, b)), REF2(double(x != 0 || y != 0)), -1, 1, -1,
       1},
      {"logical_xor", BINARY_OP(ops::logical_xor(a, b)), REF2(double((x != 0) != (y != 0))), -1, 1,
       -1, 1},
  };
  for (ScalarType dt : {kF32, kF16, kBF16, kI64, kU8, kBool}) {
    for (const BinaryCase& c : cases) {
      for (const BinaryShape& s : kBinaryShapes) {
        SCOPED_TRACE(std::string(c.name) + " " + describe(dt, s.a, s.b));
        Tensor a = input(s.a, kI32, ++seed, -1, 1, s.noncontig_a).to(dt);
        Tensor b = input(s.b, dt, ++seed, -1, 1, s.noncontig_b);
        EXPECT_TRUE(
            matches(c.op(a, b), {a, b}, dt, kBool, [&](const D& v) { return c.ref(v[0], v[1]); }));
      }
    }
    Tensor x = input({3, 4}, dt, ++seed, -1, 1, true);
    EXPECT_TRUE(
        matches(ops::logical_not(x), {x}, dt, kBool, [](const D& v) { return double(v[0] == 0); }));
  }
  // NaN is true; mixed dtypes are fine.
  Tensor x = from_values({3}, {kNaN, 0, 2}, kF32);
  Tensor y = from_values({3}, {1, 1, 0}, kI64);
  EXPECT_EQ(values(ops::logical_and(x, y)), (D{1, 0, 0}));
  EXPECT_EQ(values(ops::logical_or(x, y)), (D{1, 1, 1}));
  EXPECT_EQ(values(ops::logical_not(x)), (D{0, 1, 0}));
}

TEST(Addcmul, AddcmulAndAddcdiv) {
  uint64_t seed = 950;
  for (ScalarType dt : testing::float_types()) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor s = input({3, 1, 4}, dt, ++seed, -2, 2), t1 = input({2, 4}, dt, ++seed, -2, 2, true);
    Tensor t2 = input({4}, dt, ++seed, 0.5, 2);
    EXPECT_TRUE(matches(ops::addcmul(s, t1, t2, 0.5), {s, t1, t2}, dt, dt,
                        [](const D& v) { return v[0] + 0.5 * v[1] * v[2]; }));
    EXPECT_TRUE(matches(ops::addcdiv(s, t1, t2, -2), {s, t1, t2}, dt, dt,
                        [](const D& v) { return v[0] - 2 * v[1] / v[2]; }));
    EXPECT_TRUE(matches(ops::addcmul(s, t1, t2), {s, t1, t2}, dt, dt,
                        [](const D& v) { return v[0] + v[1] * v[2]; }));
  }
  for (ScalarType dt : kIntTypes) {
    Tensor s = input({2, 3}, dt, ++seed, 0, 9), t1 = input({3}, dt, ++seed, 0, 5),
           t2 = input({2, 1}, dt, ++seed, 0, 4);
    EXPECT_TRUE(matches(ops::addcmul(s, t1, t2, 2), {s, t1, t2}, dt, dt, [](const D& v) {
      return v[0] + 2 * v[1] * v[2];
    })) << dtype_name(dt);
  }
  // Integer self with a float tensor1: the result is floating.
  Tensor s = from_values({2}, {1, 2}, kI32), t = from_values({2}, {0.5, 4}, kF32);
  Tensor r = ops::addcdiv(s, t, t);
  EXPECT_EQ(r.dtype(), kF32);
  EXPECT_EQ(values(r), (D{2, 3}));
}

TEST(Pointwise, LargeTensorsSplitAcrossThreads) {
  // Big enough for the parallel loop (more than 2 x kParallelGrain, runtime/strided_loop.h).
  const int64_t n = 3 * 32768 + 17;
  Tensor a = input({n}, kF32, 1, -2, 2), b = input({n}, kF32, 2, -2, 2);
  EXPECT_TRUE(matches(ops::mul(a, b), {a, b}, kF32, kF32, [](const D& v) { return v[0] * v[1]; }));
  Tensor x = input({n}, kI64, 3, -50, 50), y = input({n}, kI64, 4, 1, 5);
  EXPECT_TRUE(matches(ops::remainder(x, y), {x, y}, kI64, kI64,
                      [](const D& v) { return py_mod(v[0], v[1]); }));
  // A zero divisor near the end, seen by a worker thread, still raises.
  y.select(0, n - 3).fill_(Scalar(int64_t{0}));
  EXPECT_THAT([&] { ops::div_Tensor_mode(x, y, "floor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("ZeroDivisionError")));
}

// ---- Errors ------------------------------------------------------------------------------------

TEST(Errors, ShapeMismatchNamesTheOpAndBothShapes) {
  Tensor a = input({2, 3}, kF32, 1, -1, 1), b = input({4}, kF32, 2, -1, 1);
  EXPECT_THAT(error_of([&] { ops::add(a, b); }),
              HasSubstr("add: the size of tensor a (3) must match the size of tensor b (4) at "
                        "non-singleton dimension 1 (shapes [2, 3] and [4])"));
  EXPECT_THAT(error_of([&] { ops::mul(a, b); }), HasSubstr("mul: the size of tensor a (3)"));
  EXPECT_THAT(error_of([&] { ops::sub(a, b); }), HasSubstr("sub: the size of tensor a (3)"));
  EXPECT_THAT(error_of([&] { ops::rsub(a, b); }),
              HasSubstr("rsub: the size of tensor a (3) must match the size of tensor b (4) at "
                        "non-singleton dimension 1 (shapes [2, 3] and [4])"));
  EXPECT_THAT(error_of([&] { ops::div(a, b); }), HasSubstr("div: "));
  EXPECT_THAT(error_of([&] { ops::gt(a, b); }),
              HasSubstr("gt: the size of tensor a (3) must match the size of tensor b (4)"));
  EXPECT_THAT(error_of([&] { ops::maximum(a, b); }), HasSubstr("maximum: "));
  EXPECT_THAT(error_of([&] { ops::where(ops::gt_Scalar(a, 0), a, b); }), HasSubstr("where: "));
  EXPECT_THAT(error_of([&] { ops::clamp_Tensor(a, b); }), HasSubstr("clamp: "));
  EXPECT_THAT(error_of([&] { ops::addcmul(a, a, b); }), HasSubstr("addcmul: "));
  // In place, self cannot grow to the broadcast shape.
  Tensor s = input({3}, kF32, 3, -1, 1);
  EXPECT_THAT(error_of([&] { ops::add_(s, a); }),
              HasSubstr("add_: output with shape [3] doesn't match the broadcast shape [2, 3]"));
  EXPECT_THAT(error_of([&] { ops::mul_(s, a); }), HasSubstr("mul_: output with shape [3]"));
}

TEST(Errors, InPlaceResultMustCastToSelf) {
  Tensor i = input({4}, kI64, 1, 1, 5);
  EXPECT_THAT(
      error_of([&] { ops::div_(i, i); }),
      HasSubstr("div_: result type float32 can't be cast to the desired output type int64"));
  EXPECT_THAT(error_of([&] { ops::exp_(i); }),
              HasSubstr("exp_: result type float32 can't be cast"));
  EXPECT_THAT(error_of([&] { ops::mul__Scalar(i, 2.5); }),
              HasSubstr("can't be cast to the desired output type int64"));
  EXPECT_THAT(error_of([&] { ops::clamp_(i, 0.5); }),
              HasSubstr("clamp_: result type float32 can't be cast"));
  EXPECT_THAT(error_of([&] { ops::add_(i, input({4}, kF16, 2, 0, 1)); }),
              HasSubstr("result type float16"));
  Tensor b = input({4}, kBool, 3, 0, 1);
  EXPECT_THAT(error_of([&] { ops::add__Scalar(b, 1); }),
              HasSubstr("result type int64 can't be cast to the desired output type bool"));
}

TEST(Errors, DtypeRulesFromTorch) {
  Tensor i = input({3}, kI64, 1, 1, 5);
  Tensor b = input({3}, kBool, 2, 0, 1);
  Tensor f = input({3}, kF32, 3, -1, 1);
  EXPECT_THAT(error_of([&] { ops::pow_Tensor_Scalar(i, -2); }),
              HasSubstr("Integers to negative integer powers are not allowed."));
  EXPECT_THAT(error_of([&] { ops::pow__Scalar(i, -1); }),
              HasSubstr("Integers to negative integer powers are not allowed."));
  EXPECT_EQ(ops::pow_Tensor_Scalar(i, -2.0).tensor().dtype(), kF32);  // a float exponent is fine
  EXPECT_THAT(error_of([&] { ops::sub(b, b); }),
              HasSubstr("Subtraction, the `-` operator, with two bool tensors is not supported. "
                        "Use the `^` or `logical_xor()` operator instead."));
  EXPECT_THAT(error_of([&] { ops::sub(f, b); }),
              HasSubstr("Subtraction, the `-` operator, with a bool tensor is not supported."));
  EXPECT_THAT(error_of([&] { ops::sub_Scalar(i, true); }),
              HasSubstr("with a bool tensor is not supported"));
  EXPECT_THAT(error_of([&] { ops::rsub(b, b); }), HasSubstr("with two bool tensors"));
  EXPECT_THAT(error_of([&] { ops::neg(b); }),
              HasSubstr("Negation, the `-` operator, on a bool tensor is not supported."));
  EXPECT_THAT(error_of([&] { ops::relu(b); }), HasSubstr("Boolean inputs not supported for relu"));
  EXPECT_THAT(
      error_of([&] { ops::add(i, i, 0.5); }),
      HasSubstr("For integral input tensors, argument alpha must not be a floating point number."));
  EXPECT_THAT(error_of([&] { ops::sub(i, i, 1.5); }),
              HasSubstr("argument alpha must not be a floating point number"));
  EXPECT_THAT(error_of([&] { ops::add(f, f, true); }),
              HasSubstr("Boolean alpha only supported for Boolean results."));
  EXPECT_THAT(error_of([&] { ops::addcdiv(f, i, i); }),
              HasSubstr("Integer division with addcdiv is no longer supported"));
  EXPECT_THAT(error_of([&] { ops::silu(i); }), HasSubstr("silu: not implemented for dtype int64"));
  EXPECT_THAT(error_of([&] { ops::gelu(i); }), HasSubstr("gelu: not implemented for dtype int64"));
  EXPECT_THAT(error_of([&] { ops::floor(b); }), HasSubstr("floor: not implemented for dtype bool"));
  EXPECT_THAT(error_of([&] { ops::round_decimals(i, 0); }),
              HasSubstr("round: not implemented for dtype int64"));
  EXPECT_THAT(error_of([&] { ops::abs(b); }), HasSubstr("abs: not implemented for dtype bool"));
  EXPECT_THAT(error_of([&] { ops::fmod(b, b); }),
              HasSubstr("fmod: not implemented for dtype bool"));
  EXPECT_THAT(
      error_of([&] { ops::where(f, f, f); }),
      HasSubstr(
          "where expected condition to be a boolean tensor, but got a tensor with dtype float32"));
}

TEST(Errors, BadArgumentsAndIntegerDivisionByZero) {
  Tensor f = input({3}, kF32, 1, -1, 1);
  Tensor i = from_values({3}, {4, 5, 6}, kI32), z = from_values({3}, {1, 0, 2}, kI32);
  EXPECT_THAT(
      error_of([&] { ops::div_Tensor_mode(f, f, "round"); }),
      HasSubstr(
          "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"));
  EXPECT_THAT(error_of([&] { ops::gelu(f, "exact"); }),
              HasSubstr("approximate argument must be either none or tanh"));
  EXPECT_THAT(error_of([&] { ops::clamp(f); }),
              HasSubstr("torch.clamp: At least one of 'min' or 'max' must not be None"));
  EXPECT_THAT(error_of([&] { ops::clamp_Tensor(f); }),
              HasSubstr("At least one of 'min' or 'max' must not be None"));
  for (const char* mode : {"trunc", "floor"})
    EXPECT_THAT(error_of([&] { ops::div_Tensor_mode(i, z, mode); }), HasSubstr("ZeroDivisionError"))
        << mode;
  EXPECT_THAT(error_of([&] { ops::fmod(i, z); }), HasSubstr("ZeroDivisionError"));
  EXPECT_THAT(error_of([&] { ops::remainder_Scalar(i, 0); }), HasSubstr("ZeroDivisionError"));
  EXPECT_THAT(error_of([&] { ops::div_Scalar_mode(i, 0, "trunc"); }),
              HasSubstr("ZeroDivisionError"));
  EXPECT_EQ(values(ops::div(i, z))[1], kInf);  // true division of integers is float: no error
}

// ---- Broadcast operands ------------------------------------------------------------------------

// The bytes of two results of one dtype and shape are the same.
::testing::AssertionResult same_bits(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || !std::ranges::equal(got.sizes(), want.sizes()))
    return ::testing::AssertionFailure() << "dtype or shape differs";
  Tensor g = got.contiguous(), w = want.contiguous();
  if (std::memcmp(g.raw_data(), w.raw_data(), g.numel() * g.itemsize()) != 0)
    return ::testing::AssertionFailure() << "values differ";
  return ::testing::AssertionSuccess();
}

// Operands of stride 0 in the inner dimension (a wrapped scalar, a [n, 1] column against [n, m])
// run a vectorized loop over their value spread into a buffer (Note [Pointwise loops that
// vectorize] in kernels/cpu/elementwise.h): each element must be the op of the same values as
// with the operands materialized, in runs longer than the buffer and in parallel chunks.
TEST(BroadcastOperands, EveryElementAsWithMaterializedOperands) {
  uint64_t seed = 900;
  for (ScalarType dt : {kF32, kF64, kBF16, kF16}) {
    SCOPED_TRACE(dtype_name(dt));
    for (int64_t m : {7, 256, 1000, 70000}) {
      SCOPED_TRACE(m);
      Tensor a = input({3, m}, dt, ++seed, -4, 4);
      a.view(V{-1}).slice(0, 0, std::nullopt, 5).fill_(Scalar(kNaN));
      a.view(V{-1}).slice(0, 1, std::nullopt, 7).fill_(Scalar(kInf));
      Tensor col = input({3, 1}, dt, ++seed, -4, 4), s = input({}, dt, ++seed, -4, 4);
      Tensor colx = col.expand(V{3, m}).contiguous(), sx = s.expand(V{3, m}).contiguous();
      EXPECT_TRUE(same_bits(ops::lerp_Scalar(a, col, 0.3), ops::lerp_Scalar(a, colx, 0.3)));
      EXPECT_TRUE(same_bits(ops::lerp_Scalar(col, a, 0.7), ops::lerp_Scalar(colx, a, 0.7)));
      EXPECT_TRUE(same_bits(ops::lerp(a, col, s), ops::lerp(a, colx, sx)));
      EXPECT_TRUE(same_bits(ops::add(a, s, 2.5), ops::add(a, sx, 2.5)));
      Tensor zeros = Tensor::empty(V{3, m}, dt);
      zeros.fill_(Scalar(0.0));
      EXPECT_TRUE(same_bits(ops::ne_Scalar(a, 0), ops::ne(a, zeros)));
      EXPECT_TRUE(
          same_bits(ops::where(ops::gt(a, s), col, s), ops::where(ops::gt(a, sx), colx, sx)));
      EXPECT_TRUE(same_bits(ops::nan_to_num(col.expand(V{3, m})), ops::nan_to_num(colx)));
    }
  }
  // outer: a column times a row, both broadcast; integers exactly.
  for (ScalarType dt : {kF32, kI64}) {
    Tensor u = input({700}, dt, ++seed, -9, 9), v = input({700}, dt, ++seed, -9, 9);
    Tensor got = ops::mul(u.view(V{700, 1}), v);
    Tensor want = ops::mul(u.view(V{700, 1}).expand(V{700, 700}).contiguous(),
                           v.view(V{1, 700}).expand(V{700, 700}).contiguous());
    EXPECT_TRUE(same_bits(got, want)) << dtype_name(dt);
  }
}

}  // namespace
}  // namespace ampjit
