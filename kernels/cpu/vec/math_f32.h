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
