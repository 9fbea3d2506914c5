// Math in the op-math type: float and double overloads of the functions the pointwise kernels
// use, with the formulas of the CPU kernels (kernels/cpu/unary_ops.cpp, binary_ops.cpp) so CUDA and
// CPU results agree to the per-dtype tolerance. Host and device code (the host side is what
// tests/cuda/test_cuda_functors.cu checks against the CPU kernels without a GPU).
#pragma once
#include <cuda/std/limits>

#include <cmath>

#include "kernels/host_device.h"

#include "kernels/cuda/device_types.cuh"
#include "kernels/integer_math.h"

namespace ampjit::cuda::dmath {

#define AMPJIT_DMATH_UNARY(name, ffn, dfn)   \
  AMPJIT_HOST_DEVICE float name(float x) {   \
    return ffn(x);                           \
  }                                          \
  AMPJIT_HOST_DEVICE double name(double x) { \
    return dfn(x);                           \
  }
AMPJIT_DMATH_UNARY(exp, expf, ::exp)
AMPJIT_DMATH_UNARY(log, logf, ::log)
AMPJIT_DMATH_UNARY(log1p, log1pf, ::log1p)
AMPJIT_DMATH_UNARY(sqrt, sqrtf, ::sqrt)
AMPJIT_DMATH_UNARY(sin, sinf, ::sin)
AMPJIT_DMATH_UNARY(cos, cosf, ::cos)
AMPJIT_DMATH_UNARY(tan, tanf, ::tan)
AMPJIT_DMATH_UNARY(tanh, tanhf, ::tanh)
AMPJIT_DMATH_UNARY(erf, erff, ::erf)
AMPJIT_DMATH_UNARY(floor, floorf, ::floor)
AMPJIT_DMATH_UNARY(ceil, ceilf, ::ceil)
AMPJIT_DMATH_UNARY(rint, rintf, ::rint)  // half to even, as std::nearbyint on CPU
AMPJIT_DMATH_UNARY(trunc, truncf, ::trunc)
AMPJIT_DMATH_UNARY(fabs, fabsf, ::fabs)
#undef AMPJIT_DMATH_UNARY
AMPJIT_HOST_DEVICE float fmod(float a, float b) {
  return fmodf(a, b);
}
AMPJIT_HOST_DEVICE double fmod(double a, double b) {
  return ::fmod(a, b);
}
AMPJIT_HOST_DEVICE float pow(float a, float b) {
  return powf(a, b);
}
AMPJIT_HOST_DEVICE double pow(double a, double b) {
  return ::pow(a, b);
}
AMPJIT_HOST_DEVICE float atan2(float a, float b) {
  return atan2f(a, b);
}
AMPJIT_HOST_DEVICE double atan2(double a, double b) {
  return ::atan2(a, b);
}
AMPJIT_HOST_DEVICE float copysign(float a, float b) {
  return copysignf(a, b);
}
AMPJIT_HOST_DEVICE double copysign(double a, double b) {
  return ::copysign(a, b);
}

template <typename M>
AMPJIT_HOST_DEVICE bool isnan(M x) {
  if constexpr (std::is_floating_point_v<M>)
    return x != x;
  else
    return false;
}

using integer_math::wrapping_neg;

// NaN-propagating max/min of the CPU's std::max/std::min order: max(x, l) keeps a NaN x.
template <typename M>
AMPJIT_HOST_DEVICE M max_keep_first_nan(M x, M l) {
  return x < l ? l : x;
}
template <typename M>
AMPJIT_HOST_DEVICE M min_keep_first_nan(M x, M h) {
  return h < x ? h : x;
}

using integer_math::pow_integer;

// torch's div_floor_floating.
template <typename M>
AMPJIT_HOST_DEVICE M div_floor_floating(M a, M b) {
  if (b == 0) return a / b;
  const M mod = fmod(a, b);
  M div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= M(1);
  if (div == 0) return copysign(M(0), a / b);
  M floordiv = floor(div);
  if (div - floordiv > M(0.5)) floordiv += M(1);
  return floordiv;
}

}  // namespace ampjit::cuda::dmath
