// Exhaustive conversion tests for runtime/half.h (Half and BFloat16).
//
// Every expected value here comes from an independent reference written in this file from the
// IEEE 754 definitions (decode via std::ldexp in double, round by searching a table of all the
// representable values), never from the code under test. See Note [Rounding to reduced precision]
// in runtime/half.h for the behaviour being checked.
#include "runtime/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using ampjit::BFloat16;
using ampjit::Half;

// At most this many individual failures are printed per check; the total is always reported.
constexpr int kMaxReported = 10;

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hexfloat(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%a", v);
  return buf;
}

// --- Independent reference ----------------------------------------------------------------------

// A binary interchange format with `exp_bits` exponent bits and `mant_bits` stored mantissa bits.
struct Format {
  int exp_bits;
  int mant_bits;
  const char* name;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint16_t sign_bit() const { return static_cast<uint16_t>(1u << (exp_bits + mant_bits)); }
  // Bits of +infinity; also the number of finite non-negative bit patterns.
  uint16_t inf_bits() const { return static_cast<uint16_t>(((1u << exp_bits) - 1) << mant_bits); }
  uint16_t quiet_bit() const { return static_cast<uint16_t>(1u << (mant_bits - 1)); }
  uint16_t mant_mask() const { return static_cast<uint16_t>((1u << mant_bits) - 1); }
  bool is_nan(uint16_t b) const { return (b & inf_bits()) == inf_bits() && (b & mant_mask()) != 0; }
};

const Format kHalfFmt{5, 10, "Half"};
const Format kBF16Fmt{8, 7, "BFloat16"};

// IEEE 754 decoding: normal (-1)^s * 2^(e - bias) * (1 + m / 2^M),
// subnormal (-1)^s * 2^(1 - bias) * (m / 2^M), e all-ones: infinity (m == 0) or NaN.
double ref_decode(const Format& f, uint16_t bits) {
  const bool neg = (bits >> (f.exp_bits + f.mant_bits)) & 1;
  const int e = (bits >> f.mant_bits) & ((1 << f.exp_bits) - 1);
  const int m = bits & f.mant_mask();
  double mag;
  if (e == (1 << f.exp_bits) - 1) {
    mag =
        m == 0 ? std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  } else if (e == 0) {
    mag = std::ldexp(static_cast<double>(m), 1 - f.bias() - f.mant_bits);
  } else {
    mag = std::ldexp(static_cast<double>((1 << f.mant_bits) + m), e - f.bias() - f.mant_bits);
  }
  return std::copysign(mag, neg ? -1.0 : 1.0);
}

// Magnitudes of the non-negative patterns 0 .. inf_bits(), increasing. The last entry stands for
// the next power of two after the largest finite value, 2^(emax + 1): the value a correctly
// rounded conversion treats as the "neighbour" of max when deciding overflow.
std::vector<double> magnitude_table(const Format& f) {
  std::vector<double> t(f.inf_bits() + 1u);
  for (unsigned p = 0; p < f.inf_bits(); ++p) t[p] = ref_decode(f, static_cast<uint16_t>(p));
  t[f.inf_bits()] = std::ldexp(1.0, f.bias() + 1);
  return t;
}

const std::vector<double>& table_for(const Format& f) {
  static const std::vector<double> half = magnitude_table(kHalfFmt);
  static const std::vector<double> bf16 = magnitude_table(kBF16Fmt);
  return f.exp_bits == kHalfFmt.exp_bits ? half : bf16;
}

// Round-to-nearest-even of a non-NaN double, by search over all representable magnitudes.
// The two differences are exact (Sterbenz: lo <= a < hi <= 2 * lo, or lo == 0), so ties are
// detected exactly.
uint16_t ref_round(const Format& f, double d) {
  const uint16_t sign = std::signbit(d) ? f.sign_bit() : 0;
  const double a = std::fabs(d);
  const std::vector<double>& t = table_for(f);
  if (a >= t.back()) return sign | f.inf_bits();
  const auto it = std::upper_bound(t.begin(), t.end(), a);  // t[0] == 0 <= a, so it > begin
  const auto lo = static_cast<uint16_t>(it - t.begin() - 1);
  const auto hi = static_cast<uint16_t>(lo + 1);
  const double below = a - t[lo];
  const double above = t[hi] - a;
  uint16_t r;
  if (below < above) {
    r = lo;
  } else if (above < below) {
    r = hi;
  } else {
    r = (lo & 1) == 0 ? lo : hi;  // tie: the even mantissa (hi == inf_bits() is "even")
  }
  return sign | r;  // r == inf_bits() is overflow to infinity
}

// Same value, bitwise (so +0 and -0 differ); NaNs compare as NaN with the same sign.
bool same_value(double want, double got) {
  if (std::isnan(want)) return std::isnan(got) && std::signbit(want) == std::signbit(got);
  return std::bit_cast<uint64_t>(want) == std::bit_cast<uint64_t>(got);
}

// A float NaN / double NaN whose payload's top bits are the reduced pattern's mantissa, so that
// a conversion keeping the top payload bits gives back `bits` with the quiet bit set.
float float_nan_from(const Format& f, uint16_t bits) {
  const uint32_t sign = (bits & f.sign_bit()) ? 0x80000000u : 0u;
  const uint32_t m = bits & f.mant_mask();
  return std::bit_cast<float>(sign | 0x7f800000u | (m << (23 - f.mant_bits)));
}
double double_nan_from(const Format& f, uint16_t bits) {
  const uint64_t sign = (bits & f.sign_bit()) ? 0x8000000000000000ull : 0ull;
  const uint64_t m = bits & f.mant_mask();
  return std::bit_cast<double>(sign | 0x7ff0000000000000ull | (m << (52 - f.mant_bits)));
}

// --- Conversions under test, as plain functions --------------------------------------------------

uint16_t half_from_float(float v) {
  return Half(v).x;
}
uint16_t half_from_double(double v) {
  return Half(v).x;
}
uint16_t half_soft_from_float(float v) {
  return ampjit::detail::round_double_to_bits<5, 10>(static_cast<double>(v));
}
uint16_t bf16_from_float(float v) {
  return BFloat16(v).x;
}
uint16_t bf16_from_double(double v) {
  return BFloat16(v).x;
}
uint16_t bf16_soft_from_float(float v) {
  return ampjit::detail::round_double_to_bits<8, 7>(static_cast<double>(v));
}

using FromFloat = uint16_t (*)(float);
using FromDouble = uint16_t (*)(double);

// --- 1, 2: every bit pattern decodes correctly and round-trips ---------------------------------

template <typename ToFloat>
void check_decode_all(const Format& f, const char* what, ToFloat to_float) {
  int bad = 0;
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const double want = ref_decode(f, b);
    const float got = to_float(b);
    bool ok = same_value(want, got);
    if (ok && f.is_nan(b)) {
      // Widening keeps the payload (the quiet bit may be set by hardware, nothing else changes).
      const uint32_t payload_mask = (f.mant_mask() & ~f.quiet_bit()) << (23 - f.mant_bits);
      ok = (std::bit_cast<uint32_t>(got) & payload_mask) ==
           (static_cast<uint32_t>(b & f.mant_mask()) << (23 - f.mant_bits) & payload_mask);
    }
    if (!ok && ++bad <= kMaxReported) {
      ADD_FAILURE() << what << "(" << hex(b) << ") = " << hexfloat(got) << ", want "
                    << hexfloat(want);
    }
  }
  EXPECT_EQ(bad, 0) << what << ": mismatching patterns";
}

// float -> reduced and double -> reduced give back every pattern (NaNs: the pattern, quieted).
void check_round_trip_all(const Format& f, const char* what, FromFloat from_float,
                          FromDouble from_double) {
  int bad = 0;
  auto expect = [&](uint16_t got, uint16_t want, uint16_t b, const char* path) {
    if (got != want && ++bad <= kMaxReported) {
      ADD_FAILURE() << what << " " << path << " round trip of " << hex(b) << " gave " << hex(got)
                    << ", want " << hex(want);
    }
  };
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto b = static_cast<uint16_t>(i);
    if (f.is_nan(b)) {
      const auto want = static_cast<uint16_t>(b | f.quiet_bit());
      expect(from_float(float_nan_from(f, b)), want, b, "float NaN");
      expect(from_double(double_nan_from(f, b)), want, b, "double NaN");
    } else {
      const double v = ref_decode(f, b);
      expect(from_float(static_cast<float>(v)), b, b, "float");
      expect(from_double(v), b, b, "double");
    }
  }
  EXPECT_EQ(bad, 0) << what << ": patterns that did not round-trip";
}

TEST(HalfConversion, DecodeAllPatterns) {
  check_decode_all(kHalfFmt, "float(Half)", [](uint16_t b) -> float { return Half::from_bits(b); });
  check_decode_all(kHalfFmt, "half_bits_to_float_soft",
                   [](uint16_t b) { return ampjit::detail::half_bits_to_float_soft(b); });
  check_decode_all(kHalfFmt, "half_bits_to_float",
                   [](uint16_t b) { return ampjit::detail::half_bits_to_float(b); });
}

TEST(HalfConversion, RoundTripAllPatterns) {
  check_round_trip_all(kHalfFmt, "Half", half_from_float, half_from_double);
  check_round_trip_all(kHalfFmt, "round_double_to_bits<5,10>", half_soft_from_float,
                       [](double v) { return ampjit::detail::round_double_to_bits<5, 10>(v); });
  // And through the decoder under test: Half -> float -> Half is the identity.
  int bad = 0;
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float v = Half::from_bits(b);
    const auto want = kHalfFmt.is_nan(b) ? static_cast<uint16_t>(b | 0x0200) : b;
    if (Half(v).x != want && ++bad <= kMaxReported) {
      ADD_FAILURE() << "Half(float(Half)) of " << hex(b) << " gave " << hex(Half(v).x);
    }
    if (Half(static_cast<double>(v)).x != want && ++bad <= kMaxReported) {
      ADD_FAILURE() << "Half(double(float(Half))) of " << hex(b) << " gave "
                    << hex(Half(static_cast<double>(v)).x);
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(BFloat16Conversion, DecodeAllPatterns) {
  check_decode_all(kBF16Fmt, "float(BFloat16)",
                   [](uint16_t b) -> float { return BFloat16::from_bits(b); });
  check_decode_all(kBF16Fmt, "bfloat16_bits_to_float",
                   [](uint16_t b) { return ampjit::detail::bfloat16_bits_to_float(b); });
}

TEST(BFloat16Conversion, RoundTripAllPatterns) {
  check_round_trip_all(kBF16Fmt, "BFloat16", bf16_from_float, bf16_from_double);
  check_round_trip_all(kBF16Fmt, "round_double_to_bits<8,7>", bf16_soft_from_float,
                       [](double v) { return ampjit::detail::round_double_to_bits<8, 7>(v); });
  int bad = 0;
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float v = BFloat16::from_bits(b);
    const auto want = kBF16Fmt.is_nan(b) ? static_cast<uint16_t>(b | 0x0040) : b;
    if (BFloat16(v).x != want && ++bad <= kMaxReported) {
      ADD_FAILURE() << "BFloat16(float(BFloat16)) of " << hex(b) << " gave " << hex(BFloat16(v).x);
    }
    if (BFloat16(static_cast<double>(v)).x != want && ++bad <= kMaxReported) {
      ADD_FAILURE() << "BFloat16(double(float(BFloat16))) of " << hex(b) << " gave "
                    << hex(BFloat16(static_cast<double>(v)).x);
    }
  }
  EXPECT_EQ(bad, 0);
}

// --- 3: midpoints of every adjacent pair ---------------------------------------------------------

// For every pair of adjacent magnitudes (lo, lo + 1), both signs, including (max, 2^(emax+1)):
// the exact midpoint rounds to the even pattern, one step above (away from zero) to hi, one step
// below (towards zero) to lo. `Real` is the input type, which decides what "one step" is.
template <typename Real>
void check_midpoints(const Format& f, const char* what, uint16_t (*conv)(Real)) {
  const std::vector<double>& t = table_for(f);
  int bad = 0;
  long checked = 0;
  for (int neg = 0; neg < 2; ++neg) {
    const uint16_t sign = neg ? f.sign_bit() : 0;
    const Real away =
        neg ? -std::numeric_limits<Real>::infinity() : std::numeric_limits<Real>::infinity();
    for (unsigned lo = 0; lo < f.inf_bits(); ++lo) {
      const unsigned hi = lo + 1;
      const double mid_d = (t[lo] + t[hi]) / 2;  // exact: one more bit than the format has
      const auto mid = static_cast<Real>(neg ? -mid_d : mid_d);
      if (std::fabs(static_cast<double>(mid)) != mid_d) {
        ADD_FAILURE() << "midpoint " << hexfloat(mid_d) << " is not exact in the input type";
        return;
      }
      const Real up = std::nextafter(mid, away);
      const Real down = std::nextafter(mid, static_cast<Real>(0));
      const auto want_lo = static_cast<uint16_t>(sign | lo);
      const auto want_hi = static_cast<uint16_t>(sign | hi);
      const auto want_mid = (lo & 1) == 0 ? want_lo : want_hi;
      const struct {
        Real in;
        uint16_t want;
        const char* where;
      } cases[] = {{mid, want_mid, "midpoint"}, {up, want_hi, "above"}, {down, want_lo, "below"}};
      for (const auto& c : cases) {
        ++checked;
        const uint16_t got = conv(c.in);
        if (got != c.want && ++bad <= kMaxReported) {
          ADD_FAILURE() << what << "(" << hexfloat(static_cast<double>(c.in)) << ") [" << c.where
                        << " of " << hex(sign | lo) << "/" << hex(sign | hi) << "] = " << hex(got)
                        << ", want " << hex(c.want);
        }
        // The reference must agree with itself, so the table-driven tests below are sound.
        if (ref_round(f, static_cast<double>(c.in)) != c.want && ++bad <= kMaxReported) {
          ADD_FAILURE() << "reference disagrees at " << hexfloat(static_cast<double>(c.in));
        }
      }
    }
  }
  EXPECT_EQ(checked, 2L * 3 * f.inf_bits());
  EXPECT_EQ(bad, 0) << what << ": mis-rounded midpoints";
}

TEST(HalfConversion, MidpointsFromFloat) {
  check_midpoints<float>(kHalfFmt, "Half(float)", half_from_float);
  check_midpoints<float>(kHalfFmt, "round_double_to_bits<5,10>(float)", half_soft_from_float);
}

TEST(HalfConversion, MidpointsFromDouble) {
  check_midpoints<double>(kHalfFmt, "Half(double)", half_from_double);
}

TEST(BFloat16Conversion, MidpointsFromFloat) {
  check_midpoints<float>(kBF16Fmt, "BFloat16(float)", bf16_from_float);
  check_midpoints<float>(kBF16Fmt, "round_double_to_bits<8,7>(float)", bf16_soft_from_float);
}

TEST(BFloat16Conversion, MidpointsFromDouble) {
  check_midpoints<double>(kBF16Fmt, "BFloat16(double)", bf16_from_double);
}

// The ends of the range, spelled out (they are also among the pairs above).
TEST(HalfConversion, RangeEnds) {
  const double max = 65504.0, two16 = 65536.0, mid = (max + two16) / 2;  // 65520
  ASSERT_EQ(mid, 65520.0);
  EXPECT_EQ(Half(mid).x, 0x7c00);  // tie goes to "even" inf
  EXPECT_EQ(Half(static_cast<float>(mid)).x, 0x7c00);
  EXPECT_EQ(Half(std::nextafter(mid, 0.0)).x, 0x7bff);  // just below stays max
  EXPECT_EQ(Half(std::nextafter(static_cast<float>(mid), 0.0f)).x, 0x7bff);
  EXPECT_EQ(Half(std::nextafter(mid, two16)).x, 0x7c00);
  EXPECT_EQ(Half(-mid).x, 0xfc00);
  EXPECT_EQ(Half(std::nextafter(-mid, 0.0)).x, 0xfbff);

  const double tiny = 0x1p-24, half_tiny = 0x1p-25;
  ASSERT_EQ(ref_decode(kHalfFmt, 0x0001), tiny);
  EXPECT_EQ(Half(half_tiny).x, 0x0000);   // tie with zero: zero is even
  EXPECT_EQ(Half(-half_tiny).x, 0x8000);  // sign kept
  EXPECT_EQ(Half(static_cast<float>(half_tiny)).x, 0x0000);
  EXPECT_EQ(Half(static_cast<float>(-half_tiny)).x, 0x8000);
  EXPECT_EQ(Half(std::nextafter(half_tiny, 1.0)).x, 0x0001);
  EXPECT_EQ(Half(std::nextafter(-half_tiny, -1.0)).x, 0x8001);
  EXPECT_EQ(Half(std::nextafter(static_cast<float>(half_tiny), 1.0f)).x, 0x0001);
  EXPECT_EQ(Half(std::nextafter(static_cast<float>(-half_tiny), -1.0f)).x, 0x8001);
  EXPECT_EQ(Half(std::nextafter(half_tiny, 0.0)).x, 0x0000);
  EXPECT_EQ(Half(std::nextafter(-half_tiny, 0.0)).x, 0x8000);
  EXPECT_EQ(Half(1.5 * tiny).x, 0x0002);  // tie between 1 and 2 subnormal units: 2 is even
  EXPECT_EQ(Half(2.5 * tiny).x, 0x0002);
  // Largest subnormal + half a unit rounds up into the smallest normal.
  EXPECT_EQ(Half(0x1p-14 - 0x1p-25).x, 0x0400);
  EXPECT_EQ(Half(std::nextafter(0x1p-14 - 0x1p-25, 0.0)).x, 0x03ff);
}

TEST(BFloat16Conversion, RangeEnds) {
  const double max = ref_decode(kBF16Fmt, 0x7f7f);
  ASSERT_EQ(max, std::ldexp(255.0, 120));
  const double mid = (max + 0x1p128) / 2;
  EXPECT_EQ(BFloat16(mid).x, 0x7f80);
  EXPECT_EQ(BFloat16(static_cast<float>(mid)).x, 0x7f80);
  EXPECT_EQ(BFloat16(std::nextafter(mid, 0.0)).x, 0x7f7f);
  EXPECT_EQ(BFloat16(std::nextafter(static_cast<float>(mid), 0.0f)).x, 0x7f7f);
  EXPECT_EQ(BFloat16(-mid).x, 0xff80);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::max()).x, 0x7f80);
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::max()).x, 0xff80);
  EXPECT_EQ(BFloat16(static_cast<double>(std::numeric_limits<float>::max())).x, 0x7f80);
  EXPECT_EQ(BFloat16(1e300).x, 0x7f80);
  EXPECT_EQ(BFloat16(-1e300).x, 0xff80);
  EXPECT_EQ(BFloat16(0x1p128).x, 0x7f80);

  const double half_tiny = 0x1p-134;  // half of the smallest subnormal 2^-133
  EXPECT_EQ(BFloat16(half_tiny).x, 0x0000);
  EXPECT_EQ(BFloat16(-half_tiny).x, 0x8000);
  EXPECT_EQ(BFloat16(static_cast<float>(half_tiny)).x, 0x0000);
  EXPECT_EQ(BFloat16(static_cast<float>(-half_tiny)).x, 0x8000);
  EXPECT_EQ(BFloat16(std::nextafter(half_tiny, 1.0)).x, 0x0001);
  EXPECT_EQ(BFloat16(std::nextafter(static_cast<float>(half_tiny), 1.0f)).x, 0x0001);
  EXPECT_EQ(BFloat16(std::nextafter(-half_tiny, -1.0)).x, 0x8001);
  EXPECT_EQ(BFloat16(std::numeric_limits<float>::denorm_min()).x, 0x0000);
  EXPECT_EQ(BFloat16(-std::numeric_limits<float>::denorm_min()).x, 0x8000);
}

// --- Random inputs against the reference -------------------------------------------------------

// Doubles with a random sign, a random 52-bit mantissa and an unbiased exponent in [lo_e, hi_e].
double random_double(std::mt19937_64& rng, int lo_e, int hi_e) {
  std::uniform_int_distribution<int> e(lo_e, hi_e);
  const uint64_t bits =
      (rng() & 0x800fffffffffffffull) | (static_cast<uint64_t>(e(rng) + 1023) << 52);
  return std::bit_cast<double>(bits);
}

// Floats: either a random bit pattern with the exponent in [lo_e, hi_e], or (one in eight) any
// non-NaN pattern at all, float subnormals included.
float random_float(std::mt19937_64& rng, int lo_e, int hi_e) {
  uint32_t bits = static_cast<uint32_t>(rng());
  if ((rng() & 7) == 0) {
    if ((bits & 0x7fffffffu) > 0x7f800000u) bits &= 0xff800000u;  // NaN -> infinity
    return std::bit_cast<float>(bits);
  }
  std::uniform_int_distribution<int> e(lo_e, hi_e);
  bits = (bits & 0x807fffffu) | (static_cast<uint32_t>(e(rng) + 127) << 23);
  return std::bit_cast<float>(bits);
}

void check_random(const Format& f, FromFloat from_float, FromDouble from_double, int lo_e,
                  int hi_e) {
  std::mt19937_64 rng(0x5eed0000u + static_cast<unsigned>(f.exp_bits));
  int bad = 0;
  for (int i = 0; i < 200000; ++i) {
    const double d = random_double(rng, lo_e, hi_e);
    const uint16_t got_d = from_double(d), want_d = ref_round(f, d);
    if (got_d != want_d && ++bad <= kMaxReported) {
      ADD_FAILURE() << f.name << "(double " << hexfloat(d) << ") = " << hex(got_d) << ", want "
                    << hex(want_d);
    }
    const float x = random_float(rng, std::max(lo_e, -126), std::min(hi_e, 127));
    const uint16_t got_f = from_float(x), want_f = ref_round(f, x);
    if (got_f != want_f && ++bad <= kMaxReported) {
      ADD_FAILURE() << f.name << "(float " << hexfloat(x) << ") = " << hex(got_f) << ", want "
                    << hex(want_f);
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(HalfConversion, RandomAgainstReference) {
  check_random(kHalfFmt, half_from_float, half_from_double, -27, 16);
  check_random(kHalfFmt, half_soft_from_float, half_from_double, -27, 16);
}

TEST(BFloat16Conversion, RandomAgainstReference) {
  check_random(kBF16Fmt, bf16_from_float, bf16_from_double, -136, 128);
  check_random(kBF16Fmt, bf16_soft_from_float, bf16_from_double, -136, 128);
}

// --- 4: no double rounding on the double path --------------------------------------------------

// For every pair, take doubles a little beyond the midpoint (one double ulp, and a quarter of a
// float ulp): rounding them to float first lands exactly on the midpoint, so double -> float ->
// reduced takes the tie-to-even answer, while the correct (direct) answer is the nearer value.
// Where the even value is the farther one the two disagree; the direct conversion must be right.
void check_no_double_rounding(const Format& f, FromFloat from_float, FromDouble from_double) {
  const std::vector<double>& t = table_for(f);
  int bad = 0;
  long differing = 0;
  for (int neg = 0; neg < 2; ++neg) {
    const uint16_t sign = neg ? f.sign_bit() : 0;
    const double s = neg ? -1.0 : 1.0;
    for (unsigned lo = 1; lo < f.inf_bits(); ++lo) {  // lo = 0: float subnormal spacing too fine
      const unsigned hi = lo + 1;
      const double mid = s * (t[lo] + t[hi]) / 2;
      const auto mid_f = static_cast<float>(mid);
      const double float_ulp =
          static_cast<double>(std::nextafter(mid_f, static_cast<float>(s * INFINITY))) -
          static_cast<double>(mid_f);
      const double ins[] = {std::nextafter(mid, s * INFINITY), mid + float_ulp / 4,
                            std::nextafter(mid, 0.0), mid - float_ulp / 4};
      for (int k = 0; k < 4; ++k) {
        const double d = ins[k];
        const bool above = k < 2;
        const auto want = static_cast<uint16_t>(sign | (above ? hi : lo));
        const uint16_t direct = from_double(d);
        const uint16_t two_step = from_float(static_cast<float>(d));
        if (static_cast<double>(static_cast<float>(d)) != mid) {
          if (++bad <= kMaxReported) ADD_FAILURE() << hexfloat(d) << " does not round to mid";
          continue;
        }
        if (direct != want && ++bad <= kMaxReported) {
          ADD_FAILURE() << f.name << "(double " << hexfloat(d) << ") = " << hex(direct) << ", want "
                        << hex(want) << " (double rounding?)";
        }
        if (two_step != want) ++differing;
      }
    }
  }
  EXPECT_EQ(bad, 0);
  // Half of the inputs sit on the side of the odd neighbour, where the two-step path is wrong:
  // make sure the test really exercised the double-rounding cases.
  EXPECT_EQ(differing, 2L * 2 * (f.inf_bits() - 1)) << "double-rounding cases exercised";
}

TEST(HalfConversion, NoDoubleRounding) {
  check_no_double_rounding(kHalfFmt, half_from_float, half_from_double);
  // A concrete one: 1 + 2^-11 is the midpoint of 1 and 1 + 2^-10; 1 + 2^-11 + 2^-40 is above it.
  const double d = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(static_cast<double>(static_cast<float>(d)), 1.0 + 0x1p-11);
  EXPECT_EQ(Half(static_cast<float>(d)).x, 0x3c00);  // double rounding: wrong
  EXPECT_EQ(Half(d).x, 0x3c01);                      // direct: right
  EXPECT_EQ(Half(-d).x, 0xbc01);
  EXPECT_EQ(Half(1.0 + 0x1p-10 + 0x1p-11 - 0x1p-40).x, 0x3c01);  // below a tie-to-2 midpoint
}

TEST(BFloat16Conversion, NoDoubleRounding) {
  check_no_double_rounding(kBF16Fmt, bf16_from_float, bf16_from_double);
  const double d = 1.0 + 0x1p-8 + 0x1p-40;
  EXPECT_EQ(BFloat16(static_cast<float>(d)).x, 0x3f80);
  EXPECT_EQ(BFloat16(d).x, 0x3f81);
}

// --- 5: special values --------------------------------------------------------------------------

TEST(HalfConversion, SpecialValues) {
  EXPECT_EQ(Half(0.0f).x, 0x0000);
  EXPECT_EQ(Half(-0.0f).x, 0x8000);
  EXPECT_EQ(Half(0.0).x, 0x0000);
  EXPECT_EQ(Half(-0.0).x, 0x8000);
  EXPECT_TRUE(std::signbit(static_cast<float>(Half::from_bits(0x8000))));
  const float finf = std::numeric_limits<float>::infinity();
  const double dinf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Half(finf).x, 0x7c00);
  EXPECT_EQ(Half(-finf).x, 0xfc00);
  EXPECT_EQ(Half(dinf).x, 0x7c00);
  EXPECT_EQ(Half(-dinf).x, 0xfc00);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x7c00)), finf);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0xfc00)), -finf);

  // NaN stays NaN, quiet, with its sign, from float and from double, quiet or signalling.
  const float fnans[] = {std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::signaling_NaN(),
                         std::bit_cast<float>(0x7f800001u),   // payload only in the low bits
                         std::bit_cast<float>(0x7fbfe000u)};  // signalling, top payload bits set
  for (float n : fnans) {
    for (float v : {n, -n}) {
      const uint16_t h = Half(v).x;
      EXPECT_TRUE(kHalfFmt.is_nan(h)) << hex(std::bit_cast<uint32_t>(v)) << " -> " << hex(h);
      EXPECT_TRUE(h & 0x0200) << "not quiet: " << hex(h);
      EXPECT_EQ((h & 0x8000) != 0, std::signbit(v));
      // Top payload bits kept: the float's payload bits 21..13 are the half's bits 8..0.
      EXPECT_EQ(h & 0x01ff, (std::bit_cast<uint32_t>(v) >> 13) & 0x01ff);
      EXPECT_TRUE(std::isnan(static_cast<float>(Half(v))));
    }
  }
  const double dnans[] = {std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::signaling_NaN(),
                          std::bit_cast<double>(0x7ff0000000000001ull)};
  for (double n : dnans) {
    for (double v : {n, -n}) {
      const uint16_t h = Half(v).x;
      EXPECT_TRUE(kHalfFmt.is_nan(h)) << hex(std::bit_cast<uint64_t>(v)) << " -> " << hex(h);
      EXPECT_TRUE(h & 0x0200) << "not quiet: " << hex(h);
      EXPECT_EQ((h & 0x8000) != 0, std::signbit(v));
    }
  }

  // Overflow: everything >= 65520 is infinity, 65519.99 is still 65504.
  for (double v : {65520.0, 65520.5, 65535.0, 65536.0, 1e5, 1e10, 1e300, 0x1.fffffffffffffp1023}) {
    EXPECT_EQ(Half(v).x, 0x7c00) << v;
    EXPECT_EQ(Half(-v).x, 0xfc00) << v;
    if (v <= std::numeric_limits<float>::max()) {
      EXPECT_EQ(Half(static_cast<float>(v)).x, 0x7c00) << v;
      EXPECT_EQ(Half(static_cast<float>(-v)).x, 0xfc00) << v;
    }
  }
  EXPECT_EQ(Half(std::numeric_limits<float>::max()).x, 0x7c00);
  for (double v : {65519.99, 65519.0, 65512.0, 65504.0}) {
    EXPECT_EQ(Half(v).x, 0x7bff) << v;
    EXPECT_EQ(Half(-v).x, 0xfbff) << v;
    EXPECT_EQ(Half(static_cast<float>(v)).x, 0x7bff) << v;
  }
  EXPECT_EQ(Half(65488.0).x, 0x7bfe);  // midpoint of 65472 (0x7bfe, even) and 65504
  EXPECT_EQ(Half(65487.99).x, 0x7bfe);
  EXPECT_EQ(Half(65488.01).x, 0x7bff);

  // Underflow: far below the smallest subnormal gives signed zero, double subnormals included.
  for (double v :
       {1e-10, 0x1p-26, 0x1p-60, 1e-300, std::numeric_limits<double>::denorm_min(), 0x1p-1040}) {
    EXPECT_EQ(Half(v).x, 0x0000) << v;
    EXPECT_EQ(Half(-v).x, 0x8000) << v;
  }
  EXPECT_EQ(Half(std::numeric_limits<float>::denorm_min()).x, 0x0000);
  EXPECT_EQ(Half(-std::numeric_limits<float>::denorm_min()).x, 0x8000);

  // A few ordinary values.
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(Half(-2.0).x, 0xc000);
  EXPECT_EQ(Half(0.1).x, 0x2e66);
  EXPECT_EQ(Half(0.1f).x, 0x2e66);
  EXPECT_EQ(Half(1.0 / 3.0).x, 0x3555);
  EXPECT_EQ(static_cast<float>(Half::from_bits(0x3555)), 0x1.554p-2f);
}

TEST(BFloat16Conversion, SpecialValues) {
  EXPECT_EQ(BFloat16(0.0f).x, 0x0000);
  EXPECT_EQ(BFloat16(-0.0f).x, 0x8000);
  EXPECT_EQ(BFloat16(0.0).x, 0x0000);
  EXPECT_EQ(BFloat16(-0.0).x, 0x8000);
  const float finf = std::numeric_limits<float>::infinity();
  const double dinf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(BFloat16(finf).x, 0x7f80);
  EXPECT_EQ(BFloat16(-finf).x, 0xff80);
  EXPECT_EQ(BFloat16(dinf).x, 0x7f80);
  EXPECT_EQ(BFloat16(-dinf).x, 0xff80);

  const float fnans[] = {std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::signaling_NaN(),
                         std::bit_cast<float>(0x7f800001u),  // payload only in the dropped bits
                         std::bit_cast<float>(0x7fffffffu), std::bit_cast<float>(0x7f810000u)};
  for (float n : fnans) {
    for (float v : {n, -n}) {
      const uint16_t b = BFloat16(v).x;
      EXPECT_TRUE(kBF16Fmt.is_nan(b)) << hex(std::bit_cast<uint32_t>(v)) << " -> " << hex(b);
      EXPECT_TRUE(b & 0x0040) << "not quiet: " << hex(b);
      EXPECT_EQ((b & 0x8000) != 0, std::signbit(v));
      EXPECT_EQ(b & 0x003f, (std::bit_cast<uint32_t>(v) >> 16) & 0x003f);
      EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(v))));
    }
  }
  const double dnans[] = {
      std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::signaling_NaN(),
      std::bit_cast<double>(0x7ff0000000000001ull), std::bit_cast<double>(0x7fffffffffffffffull)};
  for (double n : dnans) {
    for (double v : {n, -n}) {
      const uint16_t b = BFloat16(v).x;
      EXPECT_TRUE(kBF16Fmt.is_nan(b)) << hex(std::bit_cast<uint64_t>(v)) << " -> " << hex(b);
      EXPECT_TRUE(b & 0x0040) << "not quiet: " << hex(b);
      EXPECT_EQ((b & 0x8000) != 0, std::signbit(v));
    }
  }

  // Overflow: the midpoint of max (2^128 - 2^120) and 2^128 is 2^128 - 2^119.
  const double edge = 0x1p128 - 0x1p119;
  for (double v : {edge, 0x1p128, 1e39, 1e300, 0x1.fffffffffffffp1023}) {
    EXPECT_EQ(BFloat16(v).x, 0x7f80) << v;
    EXPECT_EQ(BFloat16(-v).x, 0xff80) << v;
  }
  EXPECT_EQ(BFloat16(edge - 0x1p100).x, 0x7f7f);
  EXPECT_EQ(BFloat16(static_cast<float>(edge - 0x1p104)).x, 0x7f7f);
  EXPECT_EQ(BFloat16(3.39e38).x, 0x7f7f);
  EXPECT_EQ(BFloat16(3.39e38f).x, 0x7f7f);
  EXPECT_EQ(BFloat16(3.4e38).x, 0x7f80);
  EXPECT_EQ(BFloat16(3.4e38f).x, 0x7f80);
  for (double v : {1e-45, 1e-300, std::numeric_limits<double>::denorm_min()}) {
    EXPECT_EQ(BFloat16(v).x, 0x0000) << v;
    EXPECT_EQ(BFloat16(-v).x, 0x8000) << v;
  }

  EXPECT_EQ(BFloat16(1.0f).x, 0x3f80);
  EXPECT_EQ(BFloat16(0.1).x, 0x3dcd);
  EXPECT_EQ(BFloat16(0.1f).x, 0x3dcd);
  EXPECT_EQ(BFloat16(-3.0).x, 0xc040);
}

TEST(HalfConversion, FromIntegers) {
  EXPECT_EQ(Half(0).x, 0x0000);
  EXPECT_EQ(Half(1).x, 0x3c00);
  EXPECT_EQ(Half(-1).x, 0xbc00);
  EXPECT_EQ(Half(2049).x, 0x6800);  // tie between 2048 and 2050: 2048 is even
  EXPECT_EQ(Half(2051).x, 0x6802);  // tie between 2050 and 2052: 2052 is even
  EXPECT_EQ(Half(65504).x, 0x7bff);
  EXPECT_EQ(Half(65519).x, 0x7bff);
  EXPECT_EQ(Half(65520).x, 0x7c00);
  EXPECT_EQ(Half(-65520).x, 0xfc00);
  EXPECT_EQ(Half(int64_t{1} << 40).x, 0x7c00);
  EXPECT_EQ(Half(uint8_t{255}).x, 0x5bf8);
  EXPECT_EQ(BFloat16(257).x, 0x4380);  // tie between 256 and 258: 256 is even
  EXPECT_EQ(BFloat16(259).x, 0x4382);  // tie between 258 and 260: 260 is even
  EXPECT_EQ(BFloat16(-1).x, 0xbf80);
  EXPECT_EQ(BFloat16((int64_t{1} << 53) + (int64_t{1} << 45)).x, 0x5a00);  // exact tie: even
}

TEST(Limits, MatchReference) {
  using HL = std::numeric_limits<Half>;
  using BL = std::numeric_limits<BFloat16>;
  EXPECT_EQ(ref_decode(kHalfFmt, HL::max().x), 65504.0);
  EXPECT_EQ(ref_decode(kHalfFmt, HL::lowest().x), -65504.0);
  EXPECT_EQ(ref_decode(kHalfFmt, HL::min().x), 0x1p-14);
  EXPECT_EQ(ref_decode(kHalfFmt, HL::epsilon().x), 0x1p-10);
  EXPECT_EQ(ref_decode(kHalfFmt, HL::infinity().x), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(kHalfFmt.is_nan(HL::quiet_NaN().x) && (HL::quiet_NaN().x & 0x0200));
  EXPECT_EQ(ref_decode(kBF16Fmt, BL::max().x), std::ldexp(255.0, 120));
  EXPECT_EQ(ref_decode(kBF16Fmt, BL::lowest().x), -std::ldexp(255.0, 120));
  EXPECT_EQ(ref_decode(kBF16Fmt, BL::min().x), 0x1p-126);
  EXPECT_EQ(ref_decode(kBF16Fmt, BL::epsilon().x), 0x1p-7);
  EXPECT_EQ(ref_decode(kBF16Fmt, BL::infinity().x), std::numeric_limits<double>::infinity());
  EXPECT_TRUE(kBF16Fmt.is_nan(BL::quiet_NaN().x) && (BL::quiet_NaN().x & 0x0040));
  EXPECT_EQ(static_cast<float>(BL::min()), std::numeric_limits<float>::min());
}

TEST(Constexpr, ConversionsAreConstantExpressions) {
  constexpr uint16_t h = ampjit::detail::round_double_to_bits<5, 10>(1.0 + 0x1p-11 + 0x1p-40);
  constexpr uint16_t b = BFloat16(0.1).x;
  constexpr uint16_t bf = BFloat16(0.1f).x;
  constexpr float back = BFloat16::from_bits(0x3f80);
  constexpr float hs = ampjit::detail::half_bits_to_float_soft(0x0001);
  EXPECT_EQ(h, 0x3c01);
  EXPECT_EQ(b, 0x3dcd);
  EXPECT_EQ(bf, 0x3dcd);
  EXPECT_EQ(back, 1.0f);
  EXPECT_EQ(hs, 0x1p-24f);
}

// The conversions round to nearest-even whatever the dynamic rounding mode is (the float path may
// use F16C, whose rounding is fixed by its immediate, not by MXCSR).
TEST(HalfConversion, IndependentOfRoundingMode) {
  for (int mode : {FE_UPWARD, FE_DOWNWARD, FE_TOWARDZERO}) {
    ASSERT_EQ(std::fesetround(mode), 0);
    volatile float tie = 1.0f + 0x1p-11f, above = 1.0f + 0x1p-11f + 0x1p-23f;
    volatile float below = 1.0f + 0x1p-11f - 0x1p-23f, neg_tie = -(1.0f + 0x1p-11f);
    volatile double dtie = 1.0 + 0x1p-11, dabove = 1.0 + 0x1p-11 + 0x1p-40;
    const uint16_t got[] = {Half(tie).x,  Half(above).x,  Half(below).x,   Half(neg_tie).x,
                            Half(dtie).x, Half(dabove).x, BFloat16(tie).x, BFloat16(dabove).x};
    std::fesetround(FE_TONEAREST);
    EXPECT_EQ(got[0], 0x3c00) << "mode " << mode;
    EXPECT_EQ(got[1], 0x3c01) << "mode " << mode;
    EXPECT_EQ(got[2], 0x3c00) << "mode " << mode;
    EXPECT_EQ(got[3], 0xbc00) << "mode " << mode;
    EXPECT_EQ(got[4], 0x3c00) << "mode " << mode;
    EXPECT_EQ(got[5], 0x3c01) << "mode " << mode;
    EXPECT_EQ(got[6], 0x3f80) << "mode " << mode;
    EXPECT_EQ(got[7], 0x3f80) << "mode " << mode;
  }
  EXPECT_EQ(std::fegetround(), FE_TONEAREST);
}

// --- 6: hardware (F16C) float -> half against the software rounding ---------------------------

#if defined(__F16C__)
// Compares Half(float) (F16C) with round_double_to_bits<5,10> and with the
// reference. NaNs compare as NaN with the same sign.
void check_hw_vs_soft(float v, int& bad, long& checked) {
  ++checked;
  const uint16_t hw = Half(v).x;
  const uint16_t soft = ampjit::detail::round_double_to_bits<5, 10>(static_cast<double>(v));
  bool ok;
  if (std::isnan(v)) {
    ok = kHalfFmt.is_nan(hw) && kHalfFmt.is_nan(soft) && (hw & 0x8000) == (soft & 0x8000);
  } else {
    ok = hw == soft && hw == ref_round(kHalfFmt, v);
  }
  if (!ok && ++bad <= kMaxReported) {
    ADD_FAILURE() << "float " << hex(std::bit_cast<uint32_t>(v)) << " (" << hexfloat(v)
                  << "): Half(float) = " << hex(hw) << ", round_double_to_bits = " << hex(soft);
  }
}

#endif

TEST(HalfConversion, HardwareMatchesSoftware) {
#if defined(__F16C__)
  int bad = 0;
  long checked = 0;
  // A stride walk over all 2^32 float patterns (4099 is prime, so the low bits vary too).
  for (uint64_t i = 0; i < (uint64_t{1} << 32); i += 4099) {
    check_hw_vs_soft(std::bit_cast<float>(static_cast<uint32_t>(i)), bad, checked);
  }
  // Every float whose low 12 bits are 0x000, 0x001 or 0xfff: all the half midpoints in the
  // normal range (bit 12 is the rounding bit), and their immediate neighbours.
  for (uint32_t hi = 0; hi < (1u << 20); ++hi) {
    for (uint32_t low : {0x000u, 0x001u, 0xfffu}) {
      check_hw_vs_soft(std::bit_cast<float>((hi << 12) | low), bad, checked);
    }
  }
  EXPECT_GT(checked, 4000000L);
  EXPECT_EQ(bad, 0);
  // Hardware decoding agrees with the software decoder on every pattern.
  bad = 0;
  for (uint32_t i = 0; i < 0x10000; ++i) {
    const auto b = static_cast<uint16_t>(i);
    const float hw = ampjit::detail::half_bits_to_float(b);
    const float soft = ampjit::detail::half_bits_to_float_soft(b);
    if (!same_value(soft, hw) && ++bad <= kMaxReported) {
      ADD_FAILURE() << "decode " << hex(b) << ": hardware " << hexfloat(hw) << ", software "
                    << hexfloat(soft);
    }
  }
  EXPECT_EQ(bad, 0);
#else
  GTEST_SKIP() << "built without F16C: Half(float) already is the software path";
#endif
}

}  // namespace
