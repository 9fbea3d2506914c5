// Device-side dtypes: the CUDA type of each ampjit ScalarType, op-math types, conversions with the
// same rounding as the CPU runtime (runtime/tensor.cpp's convert; host and device code), and dtype
// dispatch for launchers. Included by .cu files only.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/launch.h"
#include "kernels/host_device.h"

namespace ampjit::cuda {

// Arithmetic on float16/bfloat16 runs in float and rounds once on store, as on CPU.
template <typename T>
struct OpMath {
  using type = T;
};
template <>
struct OpMath<__half> {
  using type = float;
};
template <>
struct OpMath<__nv_bfloat16> {
  using type = float;
};
template <typename T>
using opmath_t = typename OpMath<T>::type;

template <typename T>
inline constexpr bool is_reduced_v = false;
template <>
inline constexpr bool is_reduced_v<__half> = true;
template <>
inline constexpr bool is_reduced_v<__nv_bfloat16> = true;
template <typename T>
inline constexpr bool is_floating_v = is_reduced_v<T> || std::is_floating_point_v<T>;

// Converts between any two dtypes like the CPU copy: float16/bfloat16 go through float; double
// and integers reach float16/bfloat16 through double, so they round once (round-to-nearest-even);
// bool is `!= 0`.
template <typename To, typename From>
AMPJIT_HOST_DEVICE To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_reduced_v<From>) {
    return convert<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_same_v<To, __half>) {
    if constexpr (std::is_same_v<From, float>)
      return __float2half_rn(v);
    else
      return __double2half(static_cast<double>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    if constexpr (std::is_same_v<From, float>)
      return __float2bfloat16_rn(v);
    else
      return __double2bfloat16(static_cast<double>(v));
  } else {
    return static_cast<To>(v);
  }
}

// Calls f.template operator()<T>() for the CUDA type T of dtype code `dt`: the four floating
// dtypes, every dtype but bool, or all ten (callers have checked the dtype).
template <typename F>
__host__ void dispatch_floating(int dt, F&& f) {
  switch (dt) {
    case kFloat16:
      return f.template operator()<__half>();
    case kFloat32:
      return f.template operator()<float>();
    case kFloat64:
      return f.template operator()<double>();
    case kBFloat16:
      return f.template operator()<__nv_bfloat16>();
    default:
      break;
  }
}
template <typename F>
__host__ void dispatch_numeric(int dt, F&& f) {
  switch (dt) {
    case kUInt8:
      return f.template operator()<uint8_t>();
    case kInt8:
      return f.template operator()<int8_t>();
    case kInt16:
      return f.template operator()<int16_t>();
    case kInt32:
      return f.template operator()<int32_t>();
    case kInt64:
      return f.template operator()<int64_t>();
    default:
      return dispatch_floating(dt, static_cast<F&&>(f));
  }
}
template <typename F>
__host__ void dispatch_all(int dt, F&& f) {
  if (dt == kBool) return f.template operator()<bool>();
  dispatch_numeric(dt, static_cast<F&&>(f));
}

}  // namespace ampjit::cuda
