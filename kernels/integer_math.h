// Integer arithmetic with torch's wrapping semantics, written once for the CPU kernels and the CUDA
// kernels (host and device code alike).
#pragma once
#include <type_traits>

#include "kernels/host_device.h"

namespace ampjit::integer_math {

// Two's-complement negation without signed-overflow UB (torch wraps INT_MIN to itself).
template <typename I>
AMPJIT_HOST_DEVICE I wrapping_neg(I x) {
  using U = std::make_unsigned_t<I>;
  return static_cast<I>(U(0) - static_cast<U>(x));
}

// torch's powi: square-and-multiply in the integer type (wrapping on overflow); a negative
// exponent gives 1 / base truncated: 1 for base 1, +-1 for base -1, else 0.
template <typename I>
AMPJIT_HOST_DEVICE I pow_integer(I base, I exp) {
  using U = std::make_unsigned_t<I>;
  if constexpr (std::is_signed_v<I>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp % 2) ? I(-1) : I(1);
      return 0;
    }
  }
  // At least unsigned int: int16's unsigned type would promote to int, whose products overflow.
  using W = std::common_type_t<U, unsigned>;
  W result = 1, b = static_cast<U>(base);
  for (U e = static_cast<U>(exp); e; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<I>(result);
}

}  // namespace ampjit::integer_math
