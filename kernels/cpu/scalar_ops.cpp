// Kernels for script's int/float/bool/str ops (runtime/ops/scalar.def).
//
// Note [Python semantics of script scalars]
// Script code is Python, so its numbers behave as Python's do where TorchScript agrees or is
// undefined: // and % round toward -inf (the remainder takes the divisor's sign), division or
// modulo by zero raises ZeroDivisionError with Python's text, int(nan) and int(inf) raise, int and
// float compare exactly, and str -> number conversions accept what Python accepts. Where Python
// would grow a big int, ints wrap as torch's int64 does. The math functions follow TorchScript
// (C's <cmath>: sqrt(-1) is nan, not Python's "math domain error"), as does int ** int (a float,
// inf for 0 ** -1).
#include <charconv>
#include <cmath>
#include <limits>

#include "runtime/boxing.h"
#include "runtime/dtype.h"
#include "runtime/ops.h"

namespace ampjit {
namespace {

// ---- Arithmetic -----------------------------------------------------------------------------

// Wrapping int64 arithmetic (two's complement, as torch's int64 overflows in practice).
int64_t wrap(uint64_t v) {
  return static_cast<int64_t>(v);
}
uint64_t u(int64_t v) {
  return static_cast<uint64_t>(v);
}

[[noreturn]] void throw_int_zero_division() {
  throw Error("ZeroDivisionError: integer division or modulo by zero");
}

int64_t floordiv_ii(int64_t a, int64_t b) {
  if (b == 0) throw_int_zero_division();
  if (b == -1) return wrap(0 - u(a));  // INT64_MIN // -1 wraps
  const int64_t q = a / b;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

int64_t remainder_ii(int64_t a, int64_t b) {
  if (b == 0) throw_int_zero_division();
  if (b == -1) return 0;
  const int64_t r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? r + b : r;
}

// CPython's float_rem.
double remainder_ff(double a, double b) {
  if (b == 0) throw Error("ZeroDivisionError: float modulo");
  double mod = std::fmod(a, b);
  if (mod != 0) {
    if ((b < 0) != (mod < 0)) mod += b;
  } else {
    mod = std::copysign(0.0, b);
  }
  return mod;
}

// CPython's float_floor_div (through float_divmod).
double floordiv_ff(double a, double b) {
  if (b == 0) throw Error("ZeroDivisionError: float floor division by zero");
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && ((b < 0) != (mod < 0))) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floordiv = std::floor(div);
  if (div - floordiv > 0.5) floordiv += 1.0;
  return floordiv;
}

double div_ff(double a, double b) {
  if (b == 0) throw Error("ZeroDivisionError: float division by zero");
  return a / b;
}

int64_t add_ii(int64_t a, int64_t b) {
  return wrap(u(a) + u(b));
}
int64_t sub_ii(int64_t a, int64_t b) {
  return wrap(u(a) - u(b));
}
int64_t mul_ii(int64_t a, int64_t b) {
  return wrap(u(a) * u(b));
}
double div_ii(int64_t a, int64_t b) {
  if (b == 0) throw Error("ZeroDivisionError: division by zero");
  return static_cast<double>(a) / static_cast<double>(b);
}
double pow_ff(double a, double b) {
  return std::pow(a, b);
}
std::string add_ss(std::string a, std::string b) {
  return a + b;
}

double add_ff(double a, double b) {
  return a + b;
}
double sub_ff(double a, double b) {
  return a - b;
}
double mul_ff(double a, double b) {
  return a * b;
}

int64_t neg_i(int64_t a) {
  return wrap(0 - u(a));
}
double neg_f(double a) {
  return -a;
}
int64_t abs_i(int64_t a) {
  return a < 0 ? neg_i(a) : a;
}
double abs_f(double a) {
  return std::fabs(a);
}

// ---- Comparisons ----------------------------------------------------------------------------

// -1, 0, 1 comparing an int with a float exactly (Python does not round the int); nullopt for nan.
std::optional<int> compare_if(int64_t i, double d) {
  if (std::isnan(d)) return std::nullopt;
  constexpr double kTwo63 = 9223372036854775808.0;
  if (d >= kTwo63) return -1;
  if (d < -kTwo63) return 1;
  const double t = std::trunc(d);
  const int64_t ti = static_cast<int64_t>(t);
  if (i != ti) return i < ti ? -1 : 1;
  const double frac = d - t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}

#define AMPJIT_COMPARE_OPS(NAME, OP)                       \
  bool NAME##_ii(int64_t a, int64_t b) {                   \
    return a OP b;                                         \
  }                                                        \
  bool NAME##_ff(double a, double b) {                     \
    return a OP b;                                         \
  }                                                        \
  bool NAME##_if(int64_t a, double b) {                    \
    std::optional<int> c = compare_if(a, b);               \
    return c ? (*c OP 0) : std::string_view(#OP) == "!=";  \
  }                                                        \
  bool NAME##_fi(double a, int64_t b) {                    \
    std::optional<int> c = compare_if(b, a);               \
    return c ? (0 OP * c) : std::string_view(#OP) == "!="; \
  }
AMPJIT_COMPARE_OPS(eq, ==)
AMPJIT_COMPARE_OPS(ne, !=)
AMPJIT_COMPARE_OPS(lt, <)
AMPJIT_COMPARE_OPS(le, <=)
AMPJIT_COMPARE_OPS(gt, >)
AMPJIT_COMPARE_OPS(ge, >=)
#undef AMPJIT_COMPARE_OPS
bool eq_ss(std::string a, std::string b) {
  return a == b;
}
bool ne_ss(std::string a, std::string b) {
  return a != b;
}
bool eq_bb(bool a, bool b) {
  return a == b;
}
bool ne_bb(bool a, bool b) {
  return a != b;
}

// ---- Logic and bits -------------------------------------------------------------------------

bool and_bb(bool a, bool b) {
  return a && b;
}
bool or_bb(bool a, bool b) {
  return a || b;
}
bool xor_bb(bool a, bool b) {
  return a != b;
}
bool not_b(bool a) {
  return !a;
}
int64_t and_ii(int64_t a, int64_t b) {
  return a & b;
}
int64_t or_ii(int64_t a, int64_t b) {
  return a | b;
}
int64_t xor_ii(int64_t a, int64_t b) {
  return a ^ b;
}
int64_t lshift_ii(int64_t a, int64_t b) {
  AMPJIT_CHECK_T(ValueError, b >= 0, "negative shift count");
  return b >= 64 ? 0 : wrap(u(a) << b);
}
int64_t rshift_ii(int64_t a, int64_t b) {
  AMPJIT_CHECK_T(ValueError, b >= 0, "negative shift count");
  return b >= 64 ? (a < 0 ? -1 : 0) : a >> b;  // arithmetic: rounds toward -inf, as Python
}
int64_t invert_i(int64_t a) {
  return ~a;
}

// ---- Conversions ----------------------------------------------------------------------------

// int(x) for a float: truncates; nan and inf raise as in Python; beyond int64 raises too.
int64_t float_to_int(double d) {
  AMPJIT_CHECK_T(ValueError, !std::isnan(d), "cannot convert float NaN to integer");
  AMPJIT_CHECK(!std::isinf(d), "OverflowError: cannot convert float infinity to integer");
  const double t = std::trunc(d);
  AMPJIT_CHECK(t >= -9223372036854775808.0 && t < 9223372036854775808.0,
               "OverflowError: {} does not fit in a 64-bit int", d);
  return static_cast<int64_t>(t);
}

// The one element of a tensor, on the CPU.
Scalar one_element(const Tensor& a) {
  return a.device().is_cpu() ? a.item() : Tensor(ops::to_device(a, Device())).item();
}

int64_t int_from_tensor(Tensor a) {
  const Scalar s = one_element(a);
  return s.is_floating() ? float_to_int(s.to_double()) : s.to_int();
}
int64_t int_from_float(double a) {
  return float_to_int(a);
}
int64_t int_from_bool(bool a) {
  return a;
}

std::string_view strip(std::string_view s) {
  const auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// int("  -12 "), int("1_000"): base 10 as Python parses it (wrapping beyond int64).
int64_t int_from_str(std::string a) {
  std::string_view s = strip(a);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  uint64_t v = 0;
  bool ok = !s.empty() && s.front() != '_' && s.back() != '_';
  for (size_t i = 0; ok && i < s.size(); ++i) {
    if (s[i] == '_') {
      ok = s[i + 1] != '_';
    } else if (s[i] >= '0' && s[i] <= '9') {
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    } else {
      ok = false;
    }
  }
  AMPJIT_CHECK_T(ValueError, ok, "invalid literal for int() with base 10: '{}'", a);
  return wrap(negative ? 0 - v : v);
}

double float_from_tensor(Tensor a) {
  return one_element(a).to_double();
}
double float_from_int(int64_t a) {
  return static_cast<double>(a);
}
double float_from_bool(bool a) {
  return a ? 1.0 : 0.0;
}

// float(" 1.5 "), float("-inf"), float("nan"), float("1e3"): decimal text only (strtod would also
// take hex, which Python does not).
double float_from_str(std::string a) {
  const std::string s(strip(a));
  const char* begin = s.c_str();
  char* end = nullptr;
  const double d =
      s.empty() || s.find_first_of("xX(") != std::string::npos ? 0 : std::strtod(begin, &end);
  AMPJIT_CHECK_T(ValueError, end && end == begin + s.size(),
                 "could not convert string to float: '{}'", a);
  return d;
}

bool bool_from_tensor(Tensor a) {
  AMPJIT_CHECK(a.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  AMPJIT_CHECK(a.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return one_element(a).to_double() != 0;
}
bool bool_from_int(int64_t a) {
  return a != 0;
}
bool bool_from_float(double a) {
  return a != 0;
}

// ---- min, max, math -------------------------------------------------------------------------

int64_t min_ii(int64_t a, int64_t b) {
  return std::min(a, b);
}
int64_t max_ii(int64_t a, int64_t b) {
  return std::max(a, b);
}
// Python's min/max keep the first argument unless the second compares strictly smaller/larger.
double min_ff(double a, double b) {
  return b < a ? b : a;
}
double max_ff(double a, double b) {
  return b > a ? b : a;
}

double sqrt_f(double a) {
  return std::sqrt(a);
}
double exp_f(double a) {
  return std::exp(a);
}
double log_f(double a) {
  return std::log(a);
}
double sin_f(double a) {
  return std::sin(a);
}
double cos_f(double a) {
  return std::cos(a);
}
double tanh_f(double a) {
  return std::tanh(a);
}
int64_t floor_f(double a) {
  return float_to_int(std::floor(a));
}
int64_t ceil_f(double a) {
  return float_to_int(std::ceil(a));
}
bool isnan_f(double a) {
  return std::isnan(a);
}

// ---- Tensor properties and loops ------------------------------------------------------------

std::vector<int64_t> size_k(Tensor self) {
  const IntArrayRef s = self.sizes();
  return {s.begin(), s.end()};
}
int64_t dtype_k(Tensor a) {
  return torch_dtype_code(a.dtype());
}
Device device_k(Tensor a) {
  return a.device();
}
int64_t len_k(Tensor t) {
  AMPJIT_CHECK(t.dim() > 0, "len() of a 0-d tensor");
  return t.sizes()[0];
}

// len(range(lo, hi, step)).
int64_t range_length_k(int64_t lo, int64_t hi, int64_t step) {
  AMPJIT_CHECK_T(ValueError, step != 0, "range() arg 3 must not be zero");
  if (step > 0 && lo < hi) return static_cast<int64_t>(1 + (u(hi) - 1 - u(lo)) / u(step));
  if (step < 0 && lo > hi) return static_cast<int64_t>(1 + (u(lo) - 1 - u(hi)) / (0 - u(step)));
  return 0;
}
int64_t derive_index_k(int64_t index, int64_t start, int64_t step) {
  return add_ii(start, mul_ii(index, step));
}

}  // namespace
}  // namespace ampjit

// Each arithmetic op: .int, .float, .int_float, .float_int (mixed ones compute in float).
#define AMPJIT_NUMERIC_KERNELS(ID, II, FF)    \
  AMPJIT_KERNEL(ID##_int, ::ampjit::II)       \
  AMPJIT_KERNEL(ID##_float, ::ampjit::FF)     \
  AMPJIT_KERNEL(ID##_int_float, ::ampjit::FF) \
  AMPJIT_KERNEL(ID##_float_int, ::ampjit::FF)
AMPJIT_NUMERIC_KERNELS(add, add_ii, add_ff)
AMPJIT_NUMERIC_KERNELS(sub, sub_ii, sub_ff)
AMPJIT_NUMERIC_KERNELS(mul, mul_ii, mul_ff)
AMPJIT_NUMERIC_KERNELS(div, div_ii, div_ff)
AMPJIT_NUMERIC_KERNELS(floordiv, floordiv_ii, floordiv_ff)
AMPJIT_NUMERIC_KERNELS(remainder, remainder_ii, remainder_ff)
AMPJIT_NUMERIC_KERNELS(pow, pow_ff, pow_ff)
#undef AMPJIT_NUMERIC_KERNELS
AMPJIT_KERNEL(add_str, ampjit::add_ss)
AMPJIT_KERNEL(neg_int, ampjit::neg_i)
AMPJIT_KERNEL(neg_float, ampjit::neg_f)
AMPJIT_KERNEL(abs_int, ampjit::abs_i)
AMPJIT_KERNEL(abs_float, ampjit::abs_f)

// Comparisons: the mixed overloads compare exactly.
#define AMPJIT_COMPARE_KERNELS(ID)                 \
  AMPJIT_KERNEL(ID##_int, ::ampjit::ID##_ii)       \
  AMPJIT_KERNEL(ID##_float, ::ampjit::ID##_ff)     \
  AMPJIT_KERNEL(ID##_int_float, ::ampjit::ID##_if) \
  AMPJIT_KERNEL(ID##_float_int, ::ampjit::ID##_fi)
AMPJIT_COMPARE_KERNELS(eq)
AMPJIT_COMPARE_KERNELS(ne)
AMPJIT_COMPARE_KERNELS(lt)
AMPJIT_COMPARE_KERNELS(le)
AMPJIT_COMPARE_KERNELS(gt)
AMPJIT_COMPARE_KERNELS(ge)
#undef AMPJIT_COMPARE_KERNELS
AMPJIT_KERNEL(eq_str, ampjit::eq_ss)
AMPJIT_KERNEL(ne_str, ampjit::ne_ss)
AMPJIT_KERNEL(eq_bool, ampjit::eq_bb)
AMPJIT_KERNEL(ne_bool, ampjit::ne_bb)

AMPJIT_KERNEL(and_bool, ampjit::and_bb)
AMPJIT_KERNEL(or_bool, ampjit::or_bb)
AMPJIT_KERNEL(xor_bool, ampjit::xor_bb)
AMPJIT_KERNEL(not_bool, ampjit::not_b)
AMPJIT_KERNEL(and_int, ampjit::and_ii)
AMPJIT_KERNEL(or_int, ampjit::or_ii)
AMPJIT_KERNEL(xor_int, ampjit::xor_ii)
AMPJIT_KERNEL(lshift_int, ampjit::lshift_ii)
AMPJIT_KERNEL(rshift_int, ampjit::rshift_ii)
AMPJIT_KERNEL(invert_int, ampjit::invert_i)

AMPJIT_KERNEL(Int_Tensor, ampjit::int_from_tensor)
AMPJIT_KERNEL(Int_float, ampjit::int_from_float)
AMPJIT_KERNEL(Int_bool, ampjit::int_from_bool)
AMPJIT_KERNEL(Int_str, ampjit::int_from_str)
AMPJIT_KERNEL(Float_Tensor, ampjit::float_from_tensor)
AMPJIT_KERNEL(Float_int, ampjit::float_from_int)
AMPJIT_KERNEL(Float_bool, ampjit::float_from_bool)
AMPJIT_KERNEL(Float_str, ampjit::float_from_str)
AMPJIT_KERNEL(Bool_Tensor, ampjit::bool_from_tensor)
AMPJIT_KERNEL(Bool_int, ampjit::bool_from_int)
AMPJIT_KERNEL(Bool_float, ampjit::bool_from_float)

AMPJIT_KERNEL(prim_min_int, ampjit::min_ii)
AMPJIT_KERNEL(prim_max_int, ampjit::max_ii)
AMPJIT_KERNEL(prim_min_float, ampjit::min_ff)
AMPJIT_KERNEL(prim_max_float, ampjit::max_ff)

AMPJIT_KERNEL(sqrt_int, ampjit::sqrt_f)
AMPJIT_KERNEL(sqrt_float, ampjit::sqrt_f)
AMPJIT_KERNEL(exp_float, ampjit::exp_f)
AMPJIT_KERNEL(exp_int, ampjit::exp_f)
AMPJIT_KERNEL(log_float, ampjit::log_f)
AMPJIT_KERNEL(log_int, ampjit::log_f)
AMPJIT_KERNEL(sin_float, ampjit::sin_f)
AMPJIT_KERNEL(cos_float, ampjit::cos_f)
AMPJIT_KERNEL(tanh_float, ampjit::tanh_f)
AMPJIT_KERNEL(floor_float, ampjit::floor_f)
AMPJIT_KERNEL(ceil_float, ampjit::ceil_f)
AMPJIT_KERNEL(isnan_float, ampjit::isnan_f)

AMPJIT_KERNEL(size_list, ampjit::size_k)
AMPJIT_KERNEL(prim_dtype, ampjit::dtype_k)
AMPJIT_KERNEL(prim_device, ampjit::device_k)
AMPJIT_KERNEL(len_Tensor, ampjit::len_k)
AMPJIT_KERNEL(range_length, ampjit::range_length_k)
AMPJIT_KERNEL(derive_index, ampjit::derive_index_k)
