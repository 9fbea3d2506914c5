// The rest of torch's floating-point math (runtime/ops/math.def): inverse and hyperbolic
// trigonometry, exponentials and logarithms of other bases, the error and gamma families, Bessel
// and Airy functions, the orthogonal polynomials of torch.special, and the binary functions built
// on them (hypot, logaddexp, xlogy, igamma, zeta, ...), plus lerp and nan_to_num.
//
// Note [Special functions in double]
// Each function is one row of a table of double-precision functions, from the C++ library or
// Boost.Math (a well-kept library: no numerics of ampjit's own where one exists); every floating
// dtype computes in double and rounds once, so float32, float16 and bfloat16 results are the
// correctly rounded value of the double one. torch's float32 kernels compute in float, so they
// may differ from these by an ulp or so; the op database compares such results against float64
// (tests/opdb). Integer and bool inputs compute in float32, as torch's int-to-float ops do. All
// rows share one loop per dtype (Note [One dispatch per op] in kernels/cpu/elementwise.h).
// Edge values (poles, negative integers, zeros, infinities) follow torch's kernels
// (aten/src/ATen/native/Math.h), spelled out in each row.
// The exceptions are log2, log10, expm1 and atan: their float32, float16 and bfloat16 results
// come from ampjit's vectorized float32 kernels (Note [Vectorized log, expm1 and atan] in
// kernels/cpu/vec/math_f32.h), within a few ulps of torch's; float64 keeps the libm row.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include <boost/math/special_functions/airy.hpp>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/digamma.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <boost/math/special_functions/gamma.hpp>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec_unary.h"
#include "kernels/pointwise_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

namespace bm = boost::math;
// Boost.Math reports domain errors, poles and overflows as NaN and infinities, as torch does, and
// never throws.
using Policy = bm::policies::policy<bm::policies::domain_error<bm::policies::ignore_error>,
                                    bm::policies::pole_error<bm::policies::ignore_error>,
                                    bm::policies::overflow_error<bm::policies::ignore_error>,
                                    bm::policies::underflow_error<bm::policies::ignore_error>,
                                    bm::policies::evaluation_error<bm::policies::ignore_error>,
                                    bm::policies::rounding_error<bm::policies::ignore_error>,
                                    bm::policies::promote_double<false>>;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.14159265358979323846;

// ---- unary functions ---------------------------------------------------------------------------

double digamma(double x) {
  if (x == 0) return std::copysign(kInf, -x);  // torch: -inf at +0, +inf at -0
  if (x < 0 && x == std::trunc(x)) return kNaN;
  return bm::digamma(x, Policy());
}

double i0(double x) {
  return bm::cyl_bessel_i(0, std::abs(x), Policy());
}
double i1(double x) {
  const double v = bm::cyl_bessel_i(1, std::abs(x), Policy());
  return x < 0 ? -v : v;
}
// e^-|x| I_v(|x|): directly while I_v does not overflow, else its asymptotic series (A&S 9.7.1).
double scaled_i(int v, double x) {
  const double a = std::abs(x);
  if (std::isnan(x)) return x;
  if (a < 700) return std::exp(-a) * bm::cyl_bessel_i(v, a, Policy());
  const double mu = 4.0 * v * v;
  double term = 1, sum = 1;
  for (int k = 1; k < 30; ++k) {
    term *= -(mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * a);
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return sum / std::sqrt(2 * kPi * a);
}
double i0e(double x) {
  return scaled_i(0, x);
}
double i1e(double x) {
  const double v = scaled_i(1, x);
  return x < 0 ? -v : v;
}

// K_v(x), and e^x K_v(x), for x > 0; +inf at 0 and NaN below, as torch's.
double bessel_k(int v, double x, bool scaled) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return kInf;
  if (!scaled || x < 700) {
    const double k = bm::cyl_bessel_k(v, x, Policy());
    return scaled ? std::exp(x) * k : k;
  }
  const double mu = 4.0 * v * v;  // A&S 9.7.2
  double term = 1, sum = 1;
  for (int k = 1; k < 30; ++k) {
    term *= (mu - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * x);
    sum += term;
    if (std::abs(term) < 1e-17 * std::abs(sum)) break;
  }
  return sum * std::sqrt(kPi / (2 * x));
}

double bessel_j0(double x) {
  return bm::cyl_bessel_j(0, std::abs(x), Policy());
}
double bessel_j1(double x) {
  const double v = bm::cyl_bessel_j(1, std::abs(x), Policy());
  return x < 0 ? -v : v;
}
double bessel_y(int v, double x) {
  if (std::isnan(x) || x < 0) return kNaN;
  if (x == 0) return -kInf;
  return bm::cyl_neumann(v, x, Policy());
}

// erfc(x) e^(x^2), without overflow: the product where both factors are finite, else the
// asymptotic series; 2 e^(x^2) - erfcx(-x) for negative x.
double erfcx(double x) {
  if (std::isnan(x)) return x;
  if (x < 0) {
    if (x < -26.7) return kInf;
    return 2 * std::exp(x * x) - erfcx(-x);
  }
  if (x < 25) return std::exp(x * x) * std::erfc(x);
  const double z = 1 / (2 * x * x);
  double term = 1, sum = 1;
  for (int k = 1; k < 12; ++k) {
    term *= -(2.0 * k - 1) * z;
    sum += term;
  }
  return sum / (x * std::sqrt(kPi));
}

double ndtr(double x) {
  return 0.5 * std::erfc(-x * M_SQRT1_2);
}
double ndtri(double p) {
  if (std::isnan(p) || p < 0 || p > 1) return kNaN;
  if (p == 0) return -kInf;
  if (p == 1) return kInf;
  return -M_SQRT2 * bm::erfc_inv(2 * p, Policy());
}
// torch's log_ndtr: through erfcx in the far left tail, where ndtr underflows.
double log_ndtr(double x) {
  const double t = x * M_SQRT1_2;
  if (x < -1) return std::log(erfcx(-t) / 2) - t * t;
  return std::log1p(-std::erfc(t) / 2);
}

double entr(double x) {
  if (std::isnan(x)) return x;
  if (x > 0) return -x * std::log(x);
  if (x == 0) return 0;
  return -kInf;
}

double sinc(double x) {
  if (x == 0) return 1;
  if (std::isinf(x)) return 0;
  const double px = kPi * x;
  return std::sin(px) / px;
}

double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0;
  if (std::abs(x) < 0.5)  // its Taylor series, where sin(x)/x cancels
    return 1 +
           x * x *
               (-1.0 / 6 + x * x * (1.0 / 120 + x * x * (-1.0 / 5040 + x * x * (1.0 / 362880))));
  return std::sin(x) / x;
}

double erfinv(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return kNaN;
  if (x == 1) return kInf;
  if (x == -1) return -kInf;
  return bm::erf_inv(x, Policy());
}

using Fn1 = double (*)(double);
struct UnaryFn {
  const char* name;
  Fn1 f;
};

// The rows, in math.def's order.
enum class U {
  Acos,
  Asin,
  Atan,
  Acosh,
  Asinh,
  Atanh,
  Cosh,
  Sinh,
  Expm1,
  Exp2,
  Log2,
  Log10,
  Erfc,
  Erfinv,
  Lgamma,
  Digamma,
  I0,
  Sinc,
  I0e,
  I1,
  I1e,
  Ndtr,
  Ndtri,
  LogNdtr,
  Erfcx,
  Entr,
  SphericalJ0,
  J0,
  J1,
  Y0,
  Y1,
  ModI0,
  ModI1,
  ModK0,
  ModK1,
  ScaledK0,
  ScaledK1,
  AiryAi,
  Count
};

constexpr UnaryFn kUnary[] = {
    {"acos", [](double x) { return std::acos(x); }},
    {"asin", [](double x) { return std::asin(x); }},
    {"atan", [](double x) { return std::atan(x); }},
    {"acosh", [](double x) { return std::acosh(x); }},
    {"asinh", [](double x) { return std::asinh(x); }},
    {"atanh", [](double x) { return std::atanh(x); }},
    {"cosh", [](double x) { return std::cosh(x); }},
    {"sinh", [](double x) { return std::sinh(x); }},
    {"expm1", [](double x) { return std::expm1(x); }},
    {"exp2", [](double x) { return std::exp2(x); }},
    {"log2", [](double x) { return std::log2(x); }},
    {"log10", [](double x) { return std::log10(x); }},
    {"erfc", [](double x) { return std::erfc(x); }},
    {"erfinv", erfinv},
    {"lgamma", [](double x) { return std::lgamma(x); }},
    {"digamma", digamma},
    {"i0", i0},
    {"sinc", sinc},
    {"special_i0e", i0e},
    {"special_i1", i1},
    {"special_i1e", i1e},
    {"special_ndtr", ndtr},
    {"special_ndtri", ndtri},
    {"special_log_ndtr", log_ndtr},
    {"special_erfcx", erfcx},
    {"special_entr", entr},
    {"special_spherical_bessel_j0", spherical_bessel_j0},
    {"special_bessel_j0", bessel_j0},
    {"special_bessel_j1", bessel_j1},
    {"special_bessel_y0", [](double x) { return bessel_y(0, x); }},
    {"special_bessel_y1", [](double x) { return bessel_y(1, x); }},
    {"special_modified_bessel_i0", i0},
    {"special_modified_bessel_i1", i1},
    {"special_modified_bessel_k0", [](double x) { return bessel_k(0, x, false); }},
    {"special_modified_bessel_k1", [](double x) { return bessel_k(1, x, false); }},
    {"special_scaled_modified_bessel_k0", [](double x) { return bessel_k(0, x, true); }},
    {"special_scaled_modified_bessel_k1", [](double x) { return bessel_k(1, x, true); }},
    {"special_airy_ai", [](double x) { return bm::airy_ai(x, Policy()); }},
};
static_assert(std::size(kUnary) == static_cast<size_t>(U::Count), "one row per U");

// The rows with a float32 kernel of ampjit's own (Note [Vectorized log, expm1 and atan]).
std::optional<vec::Unary> vec_row(U u) {
  switch (u) {
    case U::Log2:
      return vec::Unary::kLog2;
    case U::Log10:
      return vec::Unary::kLog10;
    case U::Expm1:
      return vec::Unary::kExpm1;
    case U::Atan:
      return vec::Unary::kAtan;
    default:
      return std::nullopt;
  }
}

Tensor unary(U u, const Tensor& self) {
  const UnaryFn& fn = kUnary[static_cast<int>(u)];
  const ScalarType rt = meta::float_result(self.dtype());
  const std::optional<vec::Unary> v = vec_row(u);
  if (v)
    if (std::optional<Tensor> out = vec_unary_dense(*v, self, rt)) return *out;
  return dispatch_floating(rt, fn.name, [&]<typename T>() {
    using M = opmath_t<T>;
    if constexpr (std::is_same_v<M, float>) {
      // float32, float16 and bfloat16 in any layout: the vectorized kernel's formula.
      if (v) {
        const vec::Unary op = *v;
        return map<T>(fn.name, std::array{self}, rt,
                      [op](float x) { return vec::unary_scalar(op, x); });
      }
    }
    const Fn1 f = fn.f;
    return map<T>(fn.name, std::array{self}, rt,
                  [f](M x) { return static_cast<M>(f(static_cast<double>(x))); });
  });
}
template <U u>
Tensor unary_k(const Tensor& self) {
  return unary(u, self);
}

// ---- binary functions --------------------------------------------------------------------------

double logaddexp(double a, double b) {
  if (std::isinf(a) && a == b) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}
double logaddexp2(double a, double b) {
  if (std::isinf(a) && a == b) return a;
  const double m = std::max(a, b);
  return m + std::log1p(std::exp2(-std::abs(a - b))) / M_LN2;
}
double xlogy(double x, double y) {
  if (std::isnan(y)) return kNaN;
  if (x == 0) return 0;
  return x * std::log(y);
}
double xlog1py(double x, double y) {
  if (std::isnan(y)) return kNaN;
  if (x == 0) return 0;
  return x * std::log1p(y);
}

// The regularized incomplete gamma functions, with torch's values at the edges of the domain.
double igamma(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 1.0 : kNaN;
  if (x == 0) return 0;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 0.0;
  if (std::isinf(x)) return 1;
  return bm::gamma_p(a, x, Policy());
}
double igammac(double a, double x) {
  if (std::isnan(a) || std::isnan(x) || a < 0 || x < 0) return kNaN;
  if (a == 0) return x > 0 ? 0.0 : kNaN;
  if (x == 0) return 1;
  if (std::isinf(a)) return std::isinf(x) ? kNaN : 1.0;
  if (std::isinf(x)) return 0;
  return bm::gamma_q(a, x, Policy());
}

// The Hurwitz zeta function sum_k (k + q)^-x, by Euler-Maclaurin summation (Cephes' zeta, which
// torch's is), with its values outside the domain.
double zeta(double x, double q) {
  static const double kA[] = {12.0,
                              -720.0,
                              30240.0,
                              -1209600.0,
                              47900160.0,
                              -1.8924375803183791606e9,
                              7.47242496e10,
                              -2.950130727918164224e12,
                              1.1646782814350067249e14,
                              -4.5979787224074726105e15,
                              1.8152105401943546773e17,
                              -7.1661652561756670113e18};
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;  // q^-x is not real
  }
  double s = std::pow(q, -x), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i += 1;
    a += 1;
    b = std::pow(a, -x);
    s += b;
    if (std::abs(b / s) < 1.1102230246251565e-16) return s;
  }
  const double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  double aa = 1, k = 0;
  for (double coef : kA) {
    aa *= x + k;
    b /= w;
    const double t = aa * b / coef;
    s += t;
    if (std::abs(t / s) < 1.1102230246251565e-16) break;
    k += 1;
    aa *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

using Fn2 = double (*)(double, double);
struct BinaryFn {
  const char* name;
  Fn2 f;
};

enum class B {
  Hypot,
  Logaddexp,
  Logaddexp2,
  Xlogy,
  Xlog1py,
  Igamma,
  Igammac,
  Zeta,
  Copysign,
  Count
};

constexpr BinaryFn kBinary[] = {
    {"hypot", [](double a, double b) { return std::hypot(a, b); }},
    {"logaddexp", logaddexp},
    {"logaddexp2", logaddexp2},
    {"xlogy", xlogy},
    {"special_xlog1py", xlog1py},
    {"igamma", igamma},
    {"igammac", igammac},
    {"special_zeta", zeta},
    {"copysign", [](double a, double b) { return std::copysign(a, b); }},
};
static_assert(std::size(kBinary) == static_cast<size_t>(B::Count), "one row per B");

Tensor binary(B b, const Tensor& x, const Tensor& y) {
  const BinaryFn& fn = kBinary[static_cast<int>(b)];
  const ScalarType rt = meta::float_result(result_type(x, y));
  return dispatch_floating(rt, fn.name, [&]<typename T>() {
    using M = opmath_t<T>;
    const Fn2 f = fn.f;
    return map<T>(fn.name, std::array{x, y}, rt, [f](M a, M c) {
      return static_cast<M>(f(static_cast<double>(a), static_cast<double>(c)));
    });
  });
}
template <B b>
Tensor binary_k(const Tensor& x, const Tensor& y) {
  return binary(b, x, y);
}
template <B b>
Tensor binary_scalar_other_k(const Tensor& x, const Scalar& y) {
  return binary(b, x, wrap_scalar(y));
}
template <B b>
Tensor binary_scalar_self_k(const Scalar& x, const Tensor& y) {
  return binary(b, wrap_scalar(x), y);
}

// hypot and igamma refuse integer operands, unlike the int-to-float ops (torch's kernels dispatch
// on floating types only).
Tensor float_only(B b, const Tensor& x, const Tensor& y) {
  const ScalarType rt = result_type(x, y);
  if (!is_floating(rt)) throw_unsupported_dtype(kBinary[static_cast<int>(b)].name, rt);
  return binary(b, x, y);
}
template <B b>
Tensor float_only_k(const Tensor& x, const Tensor& y) {
  return float_only(b, x, y);
}

// torch's trigamma, in the op-math type M as torch computes it (float for float32 and the reduced
// types): the reflection formula below 1/2 (so a pole comes out as the large finite value sin's
// rounding gives, as torch's does), six steps of the recurrence, then the asymptotic series.
template <typename M>
M trigamma(M x) {
  const M pi = static_cast<M>(kPi);
  M sign = 1, result = 0;
  if (x < M(0.5)) {
    sign = -1;
    const M s = std::sin(pi * x);
    result -= (pi * pi) / (s * s);
    x = 1 - x;
  }
  for (int i = 0; i < 6; ++i) {
    result += 1 / (x * x);
    x += 1;
  }
  const M ixx = 1 / (x * x);
  result += (1 + 1 / (2 * x) + ixx * (M(1. / 6) - ixx * (M(1. / 30) - ixx * M(1. / 42)))) / x;
  return sign * result;
}

// polygamma(n, x): digamma for n = 0, trigamma for 1, and above (-1)^(n+1) n! zeta(n + 1, x), as
// torch computes it (so a pole is an infinity of that sign).
template <typename M>
M polygamma(int64_t n, M x) {
  if (n == 0) return static_cast<M>(digamma(static_cast<double>(x)));
  if (n == 1) return trigamma<M>(x);
  const double sign = n % 2 ? 1.0 : -1.0;
  return static_cast<M>(sign * std::exp(std::lgamma(n + 1.0)) *
                        zeta(static_cast<double>(n + 1), static_cast<double>(x)));
}

Tensor polygamma_k(int64_t n, const Tensor& self) {
  AMPJIT_CHECK(n >= 0, "polygamma(n, x) does not support negative n.");
  const ScalarType rt = meta::float_result(self.dtype());
  return dispatch_floating(rt, "polygamma", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("polygamma", std::array{self}, rt, [n](M x) { return polygamma<M>(n, x); });
  });
}
Tensor polygamma_inplace_k(Tensor self, int64_t n) {
  return write_result(self, polygamma_k(n, self), "polygamma_", true);
}

// ---- the orthogonal polynomials of torch.special
// -------------------------------------------------

// Each is P_n(x) for integer n (a floating n truncates), by its three-term recurrence, with
// torch's closed forms near the ends of [-1, 1] and for large n
// (aten/src/ATen/native/special_functions/).
double chebyshev_t(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
  if (n > 6 && std::abs(x) < 1) return std::cos(n * std::acos(x));
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}
double chebyshev_u(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? n + 1 : -(n + 1);
  if (n > 8 && std::abs(x) < 1) {
    const double t = std::acos(x);
    if (std::sin(t) != 0) return std::sin((n + 1) * t) / std::sin(t);
    return (n + 1) * std::cos((n + 1) * t) * x;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x;
  double p = 1, q = x + x, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}
double chebyshev_v(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) {
    if (x > 0) return 1;
    return n % 2 == 0 ? n + n + 1 : -(n + n + 1);
  }
  if (n > 8 && std::abs(x) < 1) {
    const double t = std::acos(x);
    if (std::sin(t / 2) != 1) return std::cos((n + 0.5) * t) / std::cos(t / 2);
    return n % 2 == 0 ? n + n + 1 : -(n + n + 1);
  }
  if (n == 0) return 1;
  if (n == 1) return x + x - 1;
  double p = 1, q = x + x - 1, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}
double chebyshev_w(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) {
    if (x > 0) return n + n + 1;
    return n % 2 == 0 ? 1 : -1;
  }
  if (n > 8 && std::abs(x) < 1) {
    const double t = std::acos(x);
    if (std::cos(t / 2) != 1) return std::sin((n + 0.5) * t) / std::sin(t / 2);
    if (x > 0) return n + n + 1;
    return n % 2 == 0 ? 1 : -1;
  }
  if (n == 0) return 1;
  if (n == 1) return x + x + 1;
  double p = 1, q = x + x + 1, r = 0;
  for (int64_t k = 2; k <= n; ++k) {
    r = (x + x) * q - p;
    p = q;
    q = r;
  }
  return r;
}
// The shifted polynomials are the plain ones at 2x - 1.
double shifted_chebyshev_t(double x, int64_t n) {
  return chebyshev_t(x + x - 1, n);
}
double shifted_chebyshev_u(double x, int64_t n) {
  return chebyshev_u(x + x - 1, n);
}
double shifted_chebyshev_v(double x, int64_t n) {
  return chebyshev_v(x + x - 1, n);
}
double shifted_chebyshev_w(double x, int64_t n) {
  return chebyshev_w(x + x - 1, n);
}
double hermite_h(double x, int64_t n) {  // the physicists'
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x + x;
  double p = 1, q = x + x, r = 0;
  for (int64_t k = 2; k < n + n; k += 2) {
    r = (x + x) * q - k * p;
    p = q;
    q = r;
  }
  return r;
}
double hermite_he(double x, int64_t n) {  // the probabilists'
  if (n < 0) return 0;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = x * q - k * p;
    p = q;
    q = r;
  }
  return r;
}
double laguerre_l(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 0) return 1;
  if (n == 0) return 1;
  if (n == 1) return 1 - x;
  double p = 1, q = 1 - x, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = (((k + k) + (1 - x)) * q - k * p) / (k + 1);
    p = q;
    q = r;
  }
  return r;
}
double legendre_p(double x, int64_t n) {
  if (n < 0) return 0;
  if (std::abs(x) == 1) return x > 0 || n % 2 == 0 ? 1 : -1;
  if (n == 0) return 1;
  if (n == 1) return x;
  double p = 1, q = x, r = 0;
  for (int64_t k = 1; k < n; ++k) {
    r = ((k + k + 1) * x * q - k * p) / (k + 1);
    p = q;
    q = r;
  }
  return r;
}

using PolyFn = double (*)(double, int64_t);
struct Polynomial {
  const char* name;
  PolyFn f;
};
enum class P { T, U, V, W, ShiftedT, ShiftedU, ShiftedV, ShiftedW, H, He, L, Legendre, Count };
constexpr Polynomial kPolynomials[] = {
    {"special_chebyshev_polynomial_t", chebyshev_t},
    {"special_chebyshev_polynomial_u", chebyshev_u},
    {"special_chebyshev_polynomial_v", chebyshev_v},
    {"special_chebyshev_polynomial_w", chebyshev_w},
    {"special_shifted_chebyshev_polynomial_t", shifted_chebyshev_t},
    {"special_shifted_chebyshev_polynomial_u", shifted_chebyshev_u},
    {"special_shifted_chebyshev_polynomial_v", shifted_chebyshev_v},
    {"special_shifted_chebyshev_polynomial_w", shifted_chebyshev_w},
    {"special_hermite_polynomial_h", hermite_h},
    {"special_hermite_polynomial_he", hermite_he},
    {"special_laguerre_polynomial_l", laguerre_l},
    {"special_legendre_polynomial_p", legendre_p},
};
static_assert(std::size(kPolynomials) == static_cast<size_t>(P::Count), "one row per P");

Tensor polynomial(P p, const Tensor& x, const Tensor& n) {
  const Polynomial& fn = kPolynomials[static_cast<int>(p)];
  const ScalarType rt = meta::float_result(result_type(x, n));
  return dispatch_floating(rt, fn.name, [&]<typename T>() {
    using M = opmath_t<T>;
    const PolyFn f = fn.f;
    return map<T>(fn.name, std::array{x, n}, rt, [f](M a, M k) {
      const double dk = static_cast<double>(k);
      if (std::isnan(dk)) return static_cast<M>(kNaN);
      return static_cast<M>(f(static_cast<double>(a), static_cast<int64_t>(dk)));
    });
  });
}
template <P p>
Tensor polynomial_k(const Tensor& x, const Tensor& n) {
  return polynomial(p, x, n);
}
template <P p>
Tensor polynomial_x_scalar_k(const Scalar& x, const Tensor& n) {
  return polynomial(p, wrap_scalar(x), n);
}
template <P p>
Tensor polynomial_n_scalar_k(const Tensor& x, const Scalar& n) {
  return polynomial(p, x, wrap_scalar(n));
}

// ---- lerp, nan_to_num, nextafter, fmax/fmin, heaviside ------------------------------------------

// torch's lerp: exact at both ends (weight 0 gives self, 1 gives end).
template <typename M>
M lerp(M a, M b, M w) {
  return std::abs(w) < M(0.5) ? a + w * (b - a) : b - (b - a) * (M(1) - w);
}
Tensor lerp_tensor_k(const Tensor& self, const Tensor& end, const Tensor& weight) {
  AMPJIT_CHECK(self.dtype() == end.dtype(), "expected dtype {} for `end` but got dtype {}",
               dtype_name(self.dtype()), dtype_name(end.dtype()));
  AMPJIT_CHECK(self.dtype() == weight.dtype(), "expected dtype {} for `weight` but got dtype {}",
               dtype_name(self.dtype()), dtype_name(weight.dtype()));
  return dispatch_floating(self.dtype(), "lerp", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("lerp", std::array{self, end, weight}, self.dtype(),
                  [](M a, M b, M w) { return lerp(a, b, w); });
  });
}
Tensor lerp_scalar_k(const Tensor& self, const Tensor& end, const Scalar& weight) {
  AMPJIT_CHECK(self.dtype() == end.dtype(), "expected dtype {} for `end` but got dtype {}",
               dtype_name(self.dtype()), dtype_name(end.dtype()));
  return dispatch_floating(self.dtype(), "lerp", [&]<typename T>() {
    using M = opmath_t<T>;
    const M w = weight.to<M>();
    return map<T>("lerp", std::array{self, end}, self.dtype(),
                  [w](M a, M b) { return lerp(a, b, w); });
  });
}

// NaN to `nan` (0 by default), infinities to the given values or the dtype's extremes; integer
// and bool tensors are returned as a copy.
Tensor nan_to_num_k(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                    std::optional<double> neginf) {
  if (!is_floating(self.dtype())) return self.clone();
  return dispatch_floating(self.dtype(), "nan_to_num", [&]<typename T>() {
    using M = opmath_t<T>;
    const M n = static_cast<M>(static_cast<T>(nan.value_or(0.0)));
    const M p = posinf ? static_cast<M>(static_cast<T>(*posinf))
                       : static_cast<M>(std::numeric_limits<T>::max());
    const M q = neginf ? static_cast<M>(static_cast<T>(*neginf))
                       : static_cast<M>(std::numeric_limits<T>::lowest());
    return map<T>("nan_to_num", std::array{self}, self.dtype(), [n, p, q](M x) {
      if (std::isnan(x)) return n;
      if (x == std::numeric_limits<M>::infinity()) return p;
      if (x == -std::numeric_limits<M>::infinity()) return q;
      return x;
    });
  });
}

// The next representable value of self's dtype towards other.
template <typename T>
T next_after(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::nextafter(a, b);
  } else {  // float16 and bfloat16 by their bits, as c10::nextafter
    const float fa = static_cast<float>(a), fb = static_cast<float>(b);
    if (std::isnan(fa) || std::isnan(fb))
      return static_cast<T>(std::numeric_limits<float>::quiet_NaN());
    if (fa == fb) return b;
    uint16_t bits = a.x;
    if (fa == 0) {
      bits = 1;
      if (fb < 0) bits |= 0x8000;
    } else if ((fa < fb) == (fa > 0)) {
      ++bits;
    } else {
      --bits;
    }
    return T::from_bits(bits);
  }
}
Tensor nextafter_k(const Tensor& self, const Tensor& other) {
  const ScalarType rt = result_type(self, other);
  return dispatch_floating(rt, "nextafter", [&]<typename T>() {
    return map<T, T>("nextafter", std::array{self, other}, rt, [](auto a, auto b) {
      return next_after<T>(static_cast<T>(a), static_cast<T>(b));
    });
  });
}

// fmax/fmin: the other operand where one is NaN.
Tensor fmax_fmin(const char* op, bool is_max, const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool)
    return map<bool>(op, std::array{a, b}, rt,
                     [is_max](bool x, bool y) { return is_max ? x || y : x && y; });
  return dispatch_numeric(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>(op, std::array{a, b}, rt, [is_max](M x, M y) {
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(x)) return y;
        if (std::isnan(y)) return x;
      }
      return is_max ? std::max(x, y) : std::min(x, y);
    });
  });
}
Tensor fmax_k(const Tensor& a, const Tensor& b) {
  return fmax_fmin("fmax", true, a, b);
}
Tensor fmin_k(const Tensor& a, const Tensor& b) {
  return fmax_fmin("fmin", false, a, b);
}

// frexp: mantissa in [0.5, 1) (of self's dtype) and exponent (int32), x = m * 2^e; 0, inf and NaN
// keep x as the mantissa with exponent 0, as std::frexp gives them.
std::tuple<Tensor, Tensor> frexp_k(const Tensor& self) {
  AMPJIT_CHECK(is_floating(self.dtype()), "torch.frexp() only supports floating-point dtypes");
  const Tensor x = self.contiguous();
  Tensor m = Tensor::empty(self.sizes(), self.dtype(), self.device());
  Tensor e = Tensor::empty(self.sizes(), ScalarType::Int32, self.device());
  dispatch_floating(self.dtype(), "frexp", [&]<typename T>() {
    const T* xp = x.data<T>();
    T* mp = m.data<T>();
    int32_t* ep = e.data<int32_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      int exp = 0;
      const double mant = std::frexp(static_cast<double>(xp[i]), &exp);
      mp[i] = static_cast<T>(mant);
      ep[i] = exp;
    }
  });
  return {m, e};
}

// heaviside: 0 below zero, 1 above, `values` at zero; both operands of one dtype.
Tensor heaviside_k(const Tensor& self, const Tensor& values) {
  AMPJIT_CHECK(self.dtype() == values.dtype(),
               "heaviside is not yet implemented for tensors with different dtypes");
  const ScalarType rt = self.dtype();
  if (rt == ScalarType::Bool)
    return map<bool>("heaviside", std::array{self, values}, rt,
                     [](bool x, bool v) { return x ? true : v; });
  return dispatch_numeric(rt, "heaviside", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("heaviside", std::array{self, values}, rt,
                  [](M x, M v) { return x == 0 ? v : static_cast<M>(x > 0); });
  });
}

}  // namespace
}  // namespace ampjit::cpu

using ampjit::cpu::B;
using ampjit::cpu::P;
using ampjit::cpu::U;

AMPJIT_KERNEL(acos, cpu::unary_k<U::Acos>)
AMPJIT_KERNEL(asin, cpu::unary_k<U::Asin>)
AMPJIT_KERNEL(atan, cpu::unary_k<U::Atan>)
AMPJIT_KERNEL(acosh, cpu::unary_k<U::Acosh>)
AMPJIT_KERNEL(asinh, cpu::unary_k<U::Asinh>)
AMPJIT_KERNEL(atanh, cpu::unary_k<U::Atanh>)
AMPJIT_KERNEL(cosh, cpu::unary_k<U::Cosh>)
AMPJIT_KERNEL(sinh, cpu::unary_k<U::Sinh>)
AMPJIT_KERNEL(expm1, cpu::unary_k<U::Expm1>)
AMPJIT_KERNEL(exp2, cpu::unary_k<U::Exp2>)
AMPJIT_KERNEL(log2, cpu::unary_k<U::Log2>)
AMPJIT_KERNEL(log10, cpu::unary_k<U::Log10>)
AMPJIT_KERNEL(erfc, cpu::unary_k<U::Erfc>)
AMPJIT_KERNEL(erfinv, cpu::unary_k<U::Erfinv>)
AMPJIT_KERNEL(lgamma, cpu::unary_k<U::Lgamma>)
AMPJIT_KERNEL(digamma, cpu::unary_k<U::Digamma>)
AMPJIT_KERNEL(i0, cpu::unary_k<U::I0>)
AMPJIT_KERNEL(sinc, cpu::unary_k<U::Sinc>)
AMPJIT_KERNEL(special_i0e, cpu::unary_k<U::I0e>)
AMPJIT_KERNEL(special_i1, cpu::unary_k<U::I1>)
AMPJIT_KERNEL(special_i1e, cpu::unary_k<U::I1e>)
AMPJIT_KERNEL(special_ndtr, cpu::unary_k<U::Ndtr>)
AMPJIT_KERNEL(special_ndtri, cpu::unary_k<U::Ndtri>)
AMPJIT_KERNEL(special_log_ndtr, cpu::unary_k<U::LogNdtr>)
AMPJIT_KERNEL(special_erfcx, cpu::unary_k<U::Erfcx>)
AMPJIT_KERNEL(special_entr, cpu::unary_k<U::Entr>)
AMPJIT_KERNEL(special_spherical_bessel_j0, cpu::unary_k<U::SphericalJ0>)
AMPJIT_KERNEL(special_bessel_j0, cpu::unary_k<U::J0>)
AMPJIT_KERNEL(special_bessel_j1, cpu::unary_k<U::J1>)
AMPJIT_KERNEL(special_bessel_y0, cpu::unary_k<U::Y0>)
AMPJIT_KERNEL(special_bessel_y1, cpu::unary_k<U::Y1>)
AMPJIT_KERNEL(special_modified_bessel_i0, cpu::unary_k<U::ModI0>)
AMPJIT_KERNEL(special_modified_bessel_i1, cpu::unary_k<U::ModI1>)
AMPJIT_KERNEL(special_modified_bessel_k0, cpu::unary_k<U::ModK0>)
AMPJIT_KERNEL(special_modified_bessel_k1, cpu::unary_k<U::ModK1>)
AMPJIT_KERNEL(special_scaled_modified_bessel_k0, cpu::unary_k<U::ScaledK0>)
AMPJIT_KERNEL(special_scaled_modified_bessel_k1, cpu::unary_k<U::ScaledK1>)
AMPJIT_KERNEL(special_airy_ai, cpu::unary_k<U::AiryAi>)
AMPJIT_KERNEL(hypot, cpu::float_only_k<B::Hypot>)
AMPJIT_KERNEL(logaddexp, cpu::float_only_k<B::Logaddexp>)
AMPJIT_KERNEL(logaddexp2, cpu::float_only_k<B::Logaddexp2>)
AMPJIT_KERNEL(xlogy, cpu::binary_k<B::Xlogy>)
AMPJIT_KERNEL(xlogy_Scalar_Other, cpu::binary_scalar_other_k<B::Xlogy>)
AMPJIT_KERNEL(xlogy_Scalar_Self, cpu::binary_scalar_self_k<B::Xlogy>)
AMPJIT_KERNEL(special_xlog1py, cpu::binary_k<B::Xlog1py>)
AMPJIT_KERNEL(special_xlog1py_other_scalar, cpu::binary_scalar_other_k<B::Xlog1py>)
AMPJIT_KERNEL(special_xlog1py_self_scalar, cpu::binary_scalar_self_k<B::Xlog1py>)
AMPJIT_KERNEL(igamma, cpu::float_only_k<B::Igamma>)
AMPJIT_KERNEL(igammac, cpu::float_only_k<B::Igammac>)
AMPJIT_KERNEL(special_zeta, cpu::binary_k<B::Zeta>)
AMPJIT_KERNEL(special_zeta_other_scalar, cpu::binary_scalar_other_k<B::Zeta>)
AMPJIT_KERNEL(special_zeta_self_scalar, cpu::binary_scalar_self_k<B::Zeta>)
AMPJIT_KERNEL(copysign, cpu::binary_k<B::Copysign>)
AMPJIT_KERNEL(copysign_Scalar, cpu::binary_scalar_other_k<B::Copysign>)
AMPJIT_KERNEL(polygamma, cpu::polygamma_k)
AMPJIT_KERNEL(polygamma_, cpu::polygamma_inplace_k)
#define AMPJIT_POLYNOMIAL(ID, ROW)                                 \
  AMPJIT_KERNEL(ID, cpu::polynomial_k<P::ROW>)                     \
  AMPJIT_KERNEL(ID##_x_scalar, cpu::polynomial_x_scalar_k<P::ROW>) \
  AMPJIT_KERNEL(ID##_n_scalar, cpu::polynomial_n_scalar_k<P::ROW>)
AMPJIT_POLYNOMIAL(special_chebyshev_polynomial_t, T)
AMPJIT_POLYNOMIAL(special_chebyshev_polynomial_u, U)
AMPJIT_POLYNOMIAL(special_chebyshev_polynomial_v, V)
AMPJIT_POLYNOMIAL(special_chebyshev_polynomial_w, W)
AMPJIT_POLYNOMIAL(special_shifted_chebyshev_polynomial_t, ShiftedT)
AMPJIT_POLYNOMIAL(special_shifted_chebyshev_polynomial_u, ShiftedU)
AMPJIT_POLYNOMIAL(special_shifted_chebyshev_polynomial_v, ShiftedV)
AMPJIT_POLYNOMIAL(special_shifted_chebyshev_polynomial_w, ShiftedW)
AMPJIT_POLYNOMIAL(special_hermite_polynomial_h, H)
AMPJIT_POLYNOMIAL(special_hermite_polynomial_he, He)
AMPJIT_POLYNOMIAL(special_laguerre_polynomial_l, L)
AMPJIT_POLYNOMIAL(special_legendre_polynomial_p, Legendre)
#undef AMPJIT_POLYNOMIAL
AMPJIT_KERNEL(lerp_Scalar, cpu::lerp_scalar_k)
AMPJIT_KERNEL(lerp, cpu::lerp_tensor_k)
AMPJIT_KERNEL(nan_to_num, cpu::nan_to_num_k)
AMPJIT_KERNEL(nextafter, cpu::nextafter_k)
AMPJIT_KERNEL(fmax, cpu::fmax_k)
AMPJIT_KERNEL(fmin, cpu::fmin_k)
AMPJIT_KERNEL(heaviside, cpu::heaviside_k)
AMPJIT_KERNEL(frexp, cpu::frexp_k)
