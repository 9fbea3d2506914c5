// float32 exp and the activations built on it, written branch-free so that a loop over them
// vectorizes at whatever width the translation unit is compiled for (Note [Kernels per ISA] in
// kernels/cpu/vec/vec.h). Every function here is `static inline` and uses only builtins: a copy
// compiled for AVX-512 must never be the one an AVX2-only CPU links to.
//
// Note [Vectorized exp]
// glibc's expf is correctly rounded but scalar: efficientnet_b0 spent 12% of its time in it
// (SiLU and its squeeze-excite sigmoids). exp_f32 reduces x = n*ln2 + r with |r| <= ln2/2 (n by
// the round-to-nearest magic constant, r with the two-part ln2 through fma), evaluates Cephes'
// degree-6 polynomial for e^r and scales by 2^n in two exact steps, so that results in the
// subnormal range round once. Its error is at most 1 ulp (measured over every float in [-110, 90];
// tests/cpp/test_cpu_dispatch.cpp checks a sample against the correctly rounded value), the bound
// of torch's own vectorized exp (Sleef's u10). Every fma is explicit and the translation units that
// use this header are compiled with -ffp-contract=off, so each ISA's copy returns the same bits
// (and with -fno-trapping-math, without which GCC keeps the clamps as branches and vectorizes
// nothing).
// sigmoid, silu and gelu(tanh) are torch's CPU formulas over it; tanh is Cephes' odd polynomial
// below 0.625 and 1 - 2/(e^{2|x|} + 1) above (at most 1 ulp over every float in [-20, 20]).
//
// Note [Vectorized erf]
// GELU's erf was glibc's scalar erff, 28% of convnext_tiny's time. erf_f32 uses polynomials fitted
// here (least squares on Chebyshev nodes, in float64) to erf(x)/x in x^2 below 1 (degree 7,
// relative error 4e-11) and to erfc(x) e^{x^2} in |x| - 2.5 from 1 to 4 (degree 12, 8e-9). Its
// error, measured over every float in [-5, 5], is at most 2 ulps (1.5e-7 absolute, the bound of
// torch's own vectorized erf, Abramowitz and Stegun's 7.1.26, which is not within 2 ulps near 0).
//
// Note [Vectorized log, expm1 and atan]
// log2, log10, expm1 and atan called double-precision libm one element at a time through
// math_ops.cpp's table: 7 to 8 times torch's time, which runs Sleef's vectorized u10 kernels. These
// are float32 formulas of the same kind as exp_f32: a range reduction, a polynomial fitted here
// (least squares on Chebyshev nodes against mpmath, coefficients rounded to float) and a
// reconstruction whose rounding errors are kept small by fma. Measured over every float32 against
// the correctly rounded value (float64 libm rounded once): log2 and log10 within 2 ulps, expm1
// within 1, atan within 3 -- so within 4 ulps of torch's (Sleef's bound is 1 ulp), far inside
// torch's float32 tolerance (rtol 1.3e-6 is about 11 ulps). tests/cpp/test_cpu_dispatch.cpp
// checks a sample against these bounds; tests/python/test_vec_math_vs_torch.py compares with torch
// over a dense sweep of edges, subnormals and specials. float64 keeps exact libm.
#pragma once
#include <cstdint>

namespace ampjit::cpu::vec {

// c0 x^n + c1 x^(n-1) + ... + cn, by Horner's rule with an fma per step (a fold, not a loop, so
// that the loops over these functions vectorize).
template <typename... C>
[[gnu::always_inline]] static inline float horner(float x, float c0, C... cs) {
  float p = c0;
  ((p = __builtin_fmaf(p, x, cs)), ...);
  return p;
}

// For odd functions: x's sign bit, |x|, and a result given that sign back (so f(-0) is -0 and a
// NaN stays NaN).
[[gnu::always_inline]] static inline uint32_t sign_bit(float x) {
  return __builtin_bit_cast(uint32_t, x) & 0x80000000u;
}
[[gnu::always_inline]] static inline float with_sign_bit(float a, uint32_t sign) {
  return __builtin_bit_cast(float, __builtin_bit_cast(uint32_t, a) ^ sign);
}

[[gnu::always_inline]] static inline float exp_f32(float x) {
  // exp underflows to 0 below -104 and overflows above 88.73; the clamp keeps n in range, and
  // the two-step scale gives 0 and inf there.
  const float xc = x < -104.0f ? -104.0f : (x > 88.8f ? 88.8f : x);
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = __builtin_fmaf(xc, 1.44269504088896341f, kMagic);
  const float n = t - kMagic;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - __builtin_bit_cast(int32_t, kMagic);
  float r = __builtin_fmaf(n, -0.693359375f, xc);
  r = __builtin_fmaf(n, 2.12194440e-4f, r);
  const float p = horner(r, 1.9875691500e-4f, 1.3981999507e-3f, 8.3334519073e-3f, 4.1665795894e-2f,
                         1.6666665459e-1f, 5.0000001201e-1f);
  const float e = __builtin_fmaf(p, r * r, r) + 1.0f;
  const int32_t n1 = ni >> 1, n2 = ni - n1;
  const float s1 = __builtin_bit_cast(float, (n1 + 127) << 23);
  const float s2 = __builtin_bit_cast(float, (n2 + 127) << 23);
  const float y = (e * s1) * s2;
  return x == x ? y : x;  // NaN stays NaN
}

[[gnu::always_inline]] static inline float sigmoid_f32(float x) {
  return 1.0f / (1.0f + exp_f32(-x));
}

[[gnu::always_inline]] static inline float silu_f32(float x) {
  return x / (1.0f + exp_f32(-x));
}

[[gnu::always_inline]] static inline float tanh_f32(float x) {
  const uint32_t sign = sign_bit(x);
  const float a = with_sign_bit(x, sign);  // |x|
  const float z = a * a;
  const float p = horner(z, -5.70498872745e-3f, 2.06390887954e-2f, -5.37397155531e-2f,
                         1.33314422036e-1f, -3.33332819422e-1f);
  const float small = __builtin_fmaf(p * z, a, a);
  const float big = 1.0f - 2.0f / (exp_f32(2.0f * a) + 1.0f);
  return with_sign_bit(a < 0.625f ? small : big, sign);
}

[[gnu::always_inline]] static inline float gelu_tanh_f32(float x) {
  const float beta = 0.7978845608028654f, kappa = 0.044715f;  // sqrt(2/pi)
  const float inner = beta * (x + kappa * x * x * x);
  return 0.5f * x * (1.0f + tanh_f32(inner));
}

// erf (Note [Vectorized erf]): x * P(x^2) below 1; 1 - e^{-x^2} R(|x|) from 1 to 4, R a
// polynomial fit of erfc(x) e^{x^2} in |x| - 2.5; 1 beyond (erf(4) rounds to 1); x's sign put back.
[[gnu::always_inline]] static inline float erf_f32(float x) {
  const uint32_t sign = sign_bit(x);
  const float a = with_sign_bit(x, sign);  // |x|
  const float small =
      a * horner(a * a, -9.673597954e-06f, 1.126825962e-04f, -8.484397867e-04f, 5.221053548e-03f,
                 -2.686543838e-02f, 1.128378262e-01f, -3.761263848e-01f, 1.128379167e+00f);
  const float ac = a < 4.0f ? a : 4.0f;  // (NaN stays NaN)
  const float u = ac - 2.5f;
  const float r = horner(u, 1.065103040e-07f, -4.269412358e-07f, 9.528582426e-07f,
                         -3.744391041e-06f, 1.617348586e-05f, -5.952961253e-05f, 2.108489560e-04f,
                         -7.331466456e-04f, 2.467101972e-03f, -8.001696409e-03f, 2.493798781e-02f,
                         -7.434733646e-02f, 2.108063643e-01f);
  const float big = 1.0f - exp_f32(-(ac * ac)) * r;
  return with_sign_bit(a < 1.0f ? small : (a < 4.0f ? big : (a == a ? 1.0f : a)), sign);
}

[[gnu::always_inline]] static inline float gelu_f32(float x) {
  return x * 0.5f * (1.0f + erf_f32(x * 0.70710678118654752f));  // torch's formula
}

// log2 and log10 (Note [Vectorized log, expm1 and atan]): x = 2^n (1 + r) with r in [-1/3, 1/3)
// (ARM's optimized-routines reduction, subnormals scaled by 2^23 first), log1p(r) = r + t with
// t = r^2 Q(r); the result n c + log1p(r) e (c = log_b 2, e = log_b e) is summed with c and e split
// in two floats and the product r e's rounding error kept (an fma), so only the last two additions
// round. Edges as torch's: NaN below 0, -inf at +-0, inf at inf, NaN stays NaN.
[[gnu::always_inline]] static inline float log_base_f32(float x, float c_hi, float c_lo, float e_hi,
                                                        float e_lo) {
  const bool sub = x < 0x1p-126f;
  const float xs = sub ? x * 0x1p23f : x;
  // in unsigned arithmetic: a negative x's bits would overflow int32 (modular conversion back)
  const auto u = static_cast<int32_t>(__builtin_bit_cast(uint32_t, xs) - 0x3f2aaaabu);
  const float n = static_cast<float>((u >> 23) - (sub ? 23 : 0));
  const float r = __builtin_bit_cast(float, (u & 0x007fffff) + 0x3f2aaaab) - 1.0f;  // exact
  const float t = r * r *
                  horner(r, -1.273415238e-01f, 1.375653893e-01f, -1.221961752e-01f,
                         1.405421793e-01f, -1.667809337e-01f, 2.000732273e-01f, -2.499983907e-01f,
                         3.333327174e-01f, -5.000000000e-01f);
  const float hi = r * e_hi;
  const float lo = __builtin_fmaf(
      n, c_lo, __builtin_fmaf(t, e_hi, __builtin_fmaf(r, e_lo, __builtin_fmaf(r, e_hi, -hi))));
  const float y = __builtin_fmaf(n, c_hi, hi + lo);
  const float inf = __builtin_inff();
  const float edge = x < 0.0f ? __builtin_nanf("") : (x == 0.0f ? -inf : x);  // x: inf and NaN
  return x > 0.0f && x < inf ? y : edge;
}

[[gnu::always_inline]] static inline float log2_f32(float x) {
  return log_base_f32(x, 1.0f, 0.0f, 1.44269502162933349609375f, 1.92596298909109e-08f);
}

[[gnu::always_inline]] static inline float log10_f32(float x) {
  // c_hi = log10(2) to 16 bits, so that n c_hi is exact for every n.
  return log_base_f32(x, 0.30102539062500000000f, 4.6050389811980175e-06f, 0.4342944920063018799f,
                      -1.010305006321488e-08f);
}

// expm1 (Note [Vectorized log, expm1 and atan]): x = n ln2 + r, n rounded from x/ln2 -+ 1/4 so
// that r in [-0.52, 0.52] never makes 2^n expm1(r) + (2^n - 1) cancel; expm1(r) = r + r^2 P(r).
// Above 16, exp(x) - 1 (exact there); below -17.5 the result rounds to -1; below 2^-25 in
// magnitude it is x (and -0 stays -0).
[[gnu::always_inline]] static inline float expm1_f32(float x) {
  const float xc = x < -17.5f ? -17.5f : (x > 16.0f ? 16.0f : x);
  constexpr float kMagic = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float t = __builtin_fmaf(xc, 1.44269504088896341f, kMagic + (x < 0.0f ? 0.25f : -0.25f));
  const float n = t - kMagic;
  const int32_t ni = __builtin_bit_cast(int32_t, t) - __builtin_bit_cast(int32_t, kMagic);
  float r = __builtin_fmaf(n, -0.693359375f, xc);
  r = __builtin_fmaf(n, 2.12194440e-4f, r);
  const float p = horner(r, 2.771014124e-06f, 2.495104854e-05f, 1.984096016e-04f, 1.388863660e-03f,
                         8.333333768e-03f, 4.166666791e-02f, 1.666666716e-01f, 5.000000000e-01f);
  const float em1r = __builtin_fmaf(p, r * r, r);
  const float s = __builtin_bit_cast(float, (ni + 127) << 23);  // 2^n, n in [-26, 24]
  const float mid = __builtin_fmaf(s, em1r, s - 1.0f);
  const float y = x > 16.0f ? exp_f32(x) - 1.0f : mid;
  const float a = with_sign_bit(x, sign_bit(x));
  return a < 0x1p-25f || x != x ? x : y;
}

// atan (Note [Vectorized log, expm1 and atan]): Cephes' reduction of |x| to [0, tan(pi/8)] (by
// -1/|x| above tan(3pi/8) and (|x| - 1)/(|x| + 1) above tan(pi/8)), x + x^3 A(x^2) there, A fitted
// here, and x's sign put back.
[[gnu::always_inline]] static inline float atan_f32(float x) {
  const uint32_t sign = sign_bit(x);
  const float a = with_sign_bit(x, sign);  // |x|
  const bool big = a > 2.414213562373095f, mid = a > 0.4142135623730950f;
  const float xr = big ? -1.0f / a : (mid ? (a - 1.0f) / (a + 1.0f) : a);
  const float base = big ? 1.57079632679489662f : (mid ? 0.785398163397448310f : 0.0f);
  const float z = xr * xr;
  const float p = horner(z, 5.054209754e-02f, -8.627289534e-02f, 1.107175946e-01f,
                         -1.428417563e-01f, 1.999997795e-01f, -3.333333433e-01f);
  return with_sign_bit(base + __builtin_fmaf(p * z, xr, xr), sign);
}

// bfloat16 bits <-> float32, as runtime/half.h (round to nearest even, NaN kept quiet).
[[gnu::always_inline]] static inline float bf16_to_f32(uint16_t b) {
  return __builtin_bit_cast(float, static_cast<uint32_t>(b) << 16);
}
[[gnu::always_inline]] static inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = __builtin_bit_cast(uint32_t, f);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  const uint32_t nan = (u >> 16) | 0x40u;
  return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
}

}  // namespace ampjit::cpu::vec
