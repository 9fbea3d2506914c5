// Half (IEEE binary16) and BFloat16 value types.
//
// Note [Rounding to reduced precision]
// Every conversion into Half or BFloat16 rounds to nearest, ties to even, from float *and* from
// double: converting a double directly (rather than through float) avoids double rounding, which
// matters for float64 -> float16 casts. Integers convert through double, as torch's casts do (so an
// int64 above 2^53 may round twice on its way to bfloat16, exactly as in torch). NaN stays NaN
// (quieted, sign and top payload bits kept), overflow goes to infinity, and values below the
// smallest subnormal round to signed zero. Arithmetic on these types happens in float: kernels
// load, compute in float, round once on store.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ampjit {
namespace detail {

// Rounds a double to a binary format with EXP exponent bits and MANT mantissa bits (RNE).
template <int EXP, int MANT>
constexpr uint16_t round_double_to_bits(double d) {
  const uint64_t x = std::bit_cast<uint64_t>(d);
  const uint16_t sign = static_cast<uint16_t>((x >> 63) << (EXP + MANT));
  const uint64_t ax = x & 0x7fffffffffffffffull;
  constexpr uint16_t exp_all = static_cast<uint16_t>(((1u << EXP) - 1) << MANT);
  constexpr int bias = (1 << (EXP - 1)) - 1;
  if (ax > 0x7ff0000000000000ull) {  // NaN: quiet it, keep the top payload bits
    return sign | exp_all | static_cast<uint16_t>(1u << (MANT - 1)) |
           static_cast<uint16_t>((ax >> (52 - MANT)) & ((1u << MANT) - 1));
  }
  if (ax == 0x7ff0000000000000ull) return sign | exp_all;
  if (ax == 0) return sign;
  const int dexp = static_cast<int>(ax >> 52);
  if (dexp == 0) return sign;  // double subnormals are far below any reduced-precision subnormal
  const int e = dexp - 1023;
  const uint64_t m = (ax & 0xfffffffffffffull) | (1ull << 52);
  if (e > bias) return sign | exp_all;  // >= 2^(emax+1): infinity
  constexpr int emin = 1 - bias;
  int shift;
  uint64_t base;
  if (e >= emin) {
    shift = 52 - MANT;
    base = static_cast<uint64_t>(e + bias - 1) << MANT;  // the implicit bit of q adds the last 1
  } else {
    shift = 52 - MANT + (emin - e);
    base = 0;
    if (shift >= 54) return sign;  // below half of the smallest subnormal
  }
  const uint64_t q = m >> shift;
  const uint64_t rem = m & ((1ull << shift) - 1);
  const uint64_t halfway = 1ull << (shift - 1);
  uint64_t r = base + q;
  if (rem > halfway || (rem == halfway && (q & 1))) ++r;  // a carry rolls into the exponent
  if (r >= exp_all) return sign | exp_all;
  return sign | static_cast<uint16_t>(r);
}

inline uint16_t float_to_half_bits(float f) {
#if defined(__F16C__)
  return static_cast<uint16_t>(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
#else
  return round_double_to_bits<5, 10>(static_cast<double>(f));  // float -> double is exact
#endif
}

constexpr float half_bits_to_float_soft(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t e = (h >> 10) & 0x1f;
  const uint32_t m = h & 0x3ff;
  if (e == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  if (e == 0) {  // zero or subnormal: m * 2^-24, exact in float
    const float v = static_cast<float>(m) * 0x1p-24f;
    return sign ? -v : v;
  }
  return std::bit_cast<float>(sign | ((e + 112) << 23) | (m << 13));
}

inline float half_bits_to_float(uint16_t h) {
#if defined(__F16C__)
  return _cvtsh_ss(h);
#else
  return half_bits_to_float_soft(h);
#endif
}

constexpr uint16_t float_to_bfloat16_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x0040);
  const uint32_t lsb = (x >> 16) & 1;
  return static_cast<uint16_t>((x + 0x7fffu + lsb) >> 16);
}

constexpr float bfloat16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace detail

struct Half {
  uint16_t x = 0;
  struct FromBits {};
  constexpr Half() = default;
  constexpr Half(uint16_t bits, FromBits) : x(bits) {}
  Half(float f) : x(detail::float_to_half_bits(f)) {}
  Half(double d) : x(detail::round_double_to_bits<5, 10>(d)) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  Half(I i) : Half(static_cast<double>(i)) {}
  static constexpr Half from_bits(uint16_t b) { return Half(b, FromBits{}); }
  operator float() const { return detail::half_bits_to_float(x); }
};

struct BFloat16 {
  uint16_t x = 0;
  struct FromBits {};
  constexpr BFloat16() = default;
  constexpr BFloat16(uint16_t bits, FromBits) : x(bits) {}
  constexpr BFloat16(float f) : x(detail::float_to_bfloat16_bits(f)) {}
  constexpr BFloat16(double d) : x(detail::round_double_to_bits<8, 7>(d)) {}
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  constexpr BFloat16(I i) : BFloat16(static_cast<double>(i)) {}
  static constexpr BFloat16 from_bits(uint16_t b) { return BFloat16(b, FromBits{}); }
  constexpr operator float() const { return detail::bfloat16_bits_to_float(x); }
};

// The type arithmetic happens in: float for the reduced-precision types, the type itself otherwise.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<Half> {
  using type = float;
};
template <>
struct OpMath<BFloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

}  // namespace ampjit

namespace std {
template <>
class numeric_limits<ampjit::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr ampjit::Half lowest() { return ampjit::Half::from_bits(0xfbff); }
  static constexpr ampjit::Half max() { return ampjit::Half::from_bits(0x7bff); }
  static constexpr ampjit::Half min() { return ampjit::Half::from_bits(0x0400); }
  static constexpr ampjit::Half epsilon() { return ampjit::Half::from_bits(0x1400); }
  static constexpr ampjit::Half infinity() { return ampjit::Half::from_bits(0x7c00); }
  static constexpr ampjit::Half quiet_NaN() { return ampjit::Half::from_bits(0x7e00); }
};
template <>
class numeric_limits<ampjit::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr ampjit::BFloat16 lowest() { return ampjit::BFloat16::from_bits(0xff7f); }
  static constexpr ampjit::BFloat16 max() { return ampjit::BFloat16::from_bits(0x7f7f); }
  static constexpr ampjit::BFloat16 min() { return ampjit::BFloat16::from_bits(0x0080); }
  static constexpr ampjit::BFloat16 epsilon() { return ampjit::BFloat16::from_bits(0x3c00); }
  static constexpr ampjit::BFloat16 infinity() { return ampjit::BFloat16::from_bits(0x7f80); }
  static constexpr ampjit::BFloat16 quiet_NaN() { return ampjit::BFloat16::from_bits(0x7fc0); }
};
}  // namespace std
