// The AVX-512 kernel table (Note [Kernels per ISA] in vec.h): kernels/CMakeLists.txt compiles this
// file with AVX-512 F/BW/VL/DQ and 512-bit vectors; it runs only where cpu_isa() says so.
#define AMPJIT_VEC_ISA avx512
#define AMPJIT_STRINGIFY_ISA "avx512"
#include "kernels/cpu/vec/vec_isa.h"
