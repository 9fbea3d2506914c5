// The AVX2 baseline's kernel table (Note [Kernels per ISA] in vec.h).
#define AMPJIT_VEC_ISA avx2
#define AMPJIT_STRINGIFY_ISA "avx2"
#include "kernels/cpu/vec/vec_isa.h"
