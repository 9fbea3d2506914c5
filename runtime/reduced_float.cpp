// Vectorized runs of float16/bfloat16 <-> float32 (see reduced_float.h).
#include "runtime/reduced_float.h"

#include <bit>
#if defined(__F16C__)
#include <immintrin.h>
#endif

#include "runtime/half.h"

namespace ampjit {

void widen_reduced(const uint16_t* s, float* d, int64_t n, bool bf16) {
  if (bf16) {
    for (int64_t i = 0; i < n; ++i) d[i] = std::bit_cast<float>(static_cast<uint32_t>(s[i]) << 16);
    return;
  }
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    _mm256_storeu_ps(d + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) d[i] = detail::half_bits_to_float(s[i]);
}

void round_to_reduced(const float* s, uint16_t* d, int64_t n, bool bf16) {
  if (bf16) {
    // detail::float_to_bfloat16_bits, written branch-free so that it vectorizes.
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t u = std::bit_cast<uint32_t>(s[i]);
      const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
      const uint32_t nan = (u >> 16) | 0x40u;
      d[i] = static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? nan : rounded);
    }
    return;
  }
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), h);
  }
#endif
  for (; i < n; ++i) d[i] = detail::float_to_half_bits(s[i]);
}

}  // namespace ampjit
