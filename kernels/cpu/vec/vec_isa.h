// The body of one ISA's kernel table (Note [Kernels per ISA] in vec.h), included by exactly one
// translation unit per ISA with AMPJIT_VEC_ISA naming its namespace. It may include nothing but
// math_f32.h and vec_table.h.
#pragma once
#include "kernels/cpu/vec/math_f32.h"
#include "kernels/cpu/vec/vec_table.h"

#ifndef AMPJIT_VEC_ISA
#error "define AMPJIT_VEC_ISA before including vec_isa.h"
#endif

namespace ampjit::cpu::vec::AMPJIT_VEC_ISA {
namespace {

template <float (*F)(float)>
void unary_f32(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = F(x[i]);
}

template <float (*F)(float)>
void unary_bf16(const uint16_t* x, uint16_t* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f32_to_bf16(F(bf16_to_f32(x[i])));
}

#define AMPJIT_VEC_ROW(kind)                                                               \
  {                                                                                        \
    kind<exp_f32>, kind<sigmoid_f32>, kind<silu_f32>, kind<tanh_f32>, kind<gelu_tanh_f32>, \
        kind<erf_f32>, kind<gelu_f32>, kind<log2_f32>, kind<log10_f32>, kind<expm1_f32>,   \
        kind<atan_f32>                                                                     \
  }

const Kernels kTable = {
    AMPJIT_STRINGIFY_ISA,
    AMPJIT_VEC_ROW(unary_f32),
    AMPJIT_VEC_ROW(unary_bf16),
};

#undef AMPJIT_VEC_ROW

}  // namespace

const Kernels& table() {
  return kTable;
}

}  // namespace ampjit::cpu::vec::AMPJIT_VEC_ISA
