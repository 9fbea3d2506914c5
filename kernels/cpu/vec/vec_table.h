// The table of one ISA's kernels (Note [Kernels per ISA] in vec.h). Only <cstdint>: the ISA
// translation units include it.
#pragma once
#include <cstdint>

namespace ampjit::cpu::vec {

enum class Unary : uint8_t {
  kExp,
  kSigmoid,
  kSilu,
  kTanh,
  kGeluTanh,
  kErf,
  kGelu,
  kLog2,
  kLog10,
  kExpm1,
  kAtan
};
constexpr int kUnaryCount = 11;

struct Kernels {
  const char* isa;  // "avx2" or "avx512"
  // y[i] = f(x[i]) for i < n, for each Unary (indexed by it).
  void (*unary_f32[kUnaryCount])(const float* x, float* y, int64_t n);
  // The same over bfloat16 bits: widened, computed in float32, rounded once.
  void (*unary_bf16[kUnaryCount])(const uint16_t* x, uint16_t* y, int64_t n);
};

}  // namespace ampjit::cpu::vec
