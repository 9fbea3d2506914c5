// Runs of float16/bfloat16 values to and from float32, vectorized (F16C for float16; a
// branch-free loop the compiler vectorizes for bfloat16). The same values as Half/BFloat16's own
// conversions (round to nearest even, NaN kept quiet), element for element: used where a whole
// contiguous run converts at once (Tensor::copy_ between these dtypes, autocast's weight casts;
// the float32 staging of oneDNN's operands).
#pragma once
#include <cstdint>

namespace ampjit {

void widen_reduced(const uint16_t* src, float* dst, int64_t n, bool bf16);
void round_to_reduced(const float* src, uint16_t* dst, int64_t n, bool bf16);

}  // namespace ampjit
