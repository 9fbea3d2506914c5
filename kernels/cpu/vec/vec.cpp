// Choosing the kernel table for the CPU (Note [Kernels per ISA] in vec.h).
#include "kernels/cpu/vec/vec.h"

#include "kernels/cpu/vec/math_f32.h"

namespace ampjit::cpu::vec {
namespace avx2 {
const Kernels& table();
}
namespace avx512 {
const Kernels& table();
}

const Kernels& kernels_for(CpuIsa isa) {
  return isa >= CpuIsa::kAvx512 ? avx512::table() : avx2::table();
}

const Kernels& kernels() {
  return kernels_for(cpu_isa());
}

float unary_scalar(Unary op, float x) {
  switch (op) {
    case Unary::kExp:
      return exp_f32(x);
    case Unary::kSigmoid:
      return sigmoid_f32(x);
    case Unary::kSilu:
      return silu_f32(x);
    case Unary::kTanh:
      return tanh_f32(x);
    case Unary::kGeluTanh:
      return gelu_tanh_f32(x);
    case Unary::kErf:
      return erf_f32(x);
    case Unary::kGelu:
      return gelu_f32(x);
    case Unary::kLog2:
      return log2_f32(x);
    case Unary::kLog10:
      return log10_f32(x);
    case Unary::kExpm1:
      return expm1_f32(x);
    case Unary::kAtan:
      return atan_f32(x);
  }
  return x;
}

}  // namespace ampjit::cpu::vec
