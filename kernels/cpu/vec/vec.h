// ampjit's own hot loops, compiled once per ISA and chosen at run time.
//
// Note [Kernels per ISA]
// The library is built for the AVX2 baseline (-march=haswell), so that one build runs on every
// machine ampjit meets. The loops that gain from wider registers -- here the float32 exp and erf
// family, where models spend their time outside oneDNN (Notes [Vectorized exp] and [Vectorized
// erf] in math_f32.h) --
// are written once in vec_isa.h and compiled twice: vec_avx2.cpp at the baseline and
// vec_avx512.cpp with AVX-512 (512-bit vectors preferred). kernels() picks the table for
// cpu_isa() (Note [CPU dispatch] in runtime/cpu_features.h), so AMPJIT_CPU_ISA=avx2 forces the
// baseline. Both copies compute the same formula with explicit fma and no contraction, so every
// path returns the same bits; tests/cpp/test_cpu_dispatch.cpp runs each table the machine has
// against the scalar formula and a float64 reference. The ISA translation units include nothing
// but math_f32.h's static inline builtins (no inline function of another header can be emitted
// there with AVX-512 instructions and be chosen by the linker for the baseline code).
#pragma once
#include "kernels/cpu/vec/vec_table.h"
#include "runtime/cpu_features.h"

namespace ampjit::cpu::vec {

// The table for cpu_isa().
const Kernels& kernels();
// The table for `isa` (the best one compiled at or below it), for tests.
const Kernels& kernels_for(CpuIsa isa);
// f(x) for one value, the same bits as the tables (the strided and scalar paths use it).
float unary_scalar(Unary op, float x);

}  // namespace ampjit::cpu::vec
