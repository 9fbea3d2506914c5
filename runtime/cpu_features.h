// What the CPU can do, read once, and which kernels ampjit uses because of it.
//
// Note [CPU dispatch]
// These machines change between sessions (AVX2-only, AVX-512, AVX512-BF16; AMX elsewhere), and
// one build must run fast on each. The features are read once with cpuid, and xgetbv says which
// register states the OS saves. From them, cpu_isa() is the best level both have:
//   kAvx2        the baseline the build targets (-march=haswell: AVX2, FMA, F16C);
//   kAvx512      AVX-512 F/BW/VL/DQ: oneDNN's avx512_core kernels;
//   kAvx512Bf16  plus AVX512-BF16: bfloat16 matmul and convolution run natively in oneDNN (twice
//                float32's rate) instead of widening to float32 (Note [Native bf16 gemm] in
//                kernels/cpu/onednn.h);
//   kAmx         plus AMX-BF16 tiles (oneDNN's avx512_core_amx kernels).
// AMPJIT_CPU_ISA=avx2|avx512|avx512_bf16|amx caps the level for the whole process, oneDNN's own
// kernels included (its max ISA is set before its first primitive), so CI runs the tests on the
// baseline path as well as on this machine's best. Results do not depend on the path beyond
// float32 summation order: every path accumulates in float32 and rounds once, as torch does.
#pragma once
#include <cstdint>
#include <string>

namespace ampjit {

struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
  bool avx512_bf16 = false, avx512_fp16 = false, amx_bf16 = false;
  std::string model;  // the brand string ("AMD EPYC 9B45"), or "" where cpuid has none
};
// The detected features (the environment does not change them).
const CpuFeatures& cpu_features();

enum class CpuIsa : uint8_t { kAvx2, kAvx512, kAvx512Bf16, kAmx };
// The level ampjit's kernels use: the best the CPU and OS support, capped by AMPJIT_CPU_ISA
// (an unknown value is an error naming the valid ones, raised on first use).
CpuIsa cpu_isa();
const char* cpu_isa_name(CpuIsa isa);
// The best level the CPU and OS support, before the cap.
CpuIsa detected_cpu_isa();
// The level the process runs at: detected_cpu_isa() capped by AMPJIT_CPU_ISA. oneDNN's kernels
// are capped to it; cpu_isa() is it unless a test has set another.
CpuIsa configured_cpu_isa();

// For tests: the level ampjit's own choices use from now on (oneDNN's cap stays as it was set at
// its first use); returns the previous one. Not thread-safe against concurrent kernels.
CpuIsa set_cpu_isa_for_testing(CpuIsa isa);

// "avx512_bf16 (AMD EPYC 9B45: avx2 fma f16c avx512f avx512bw avx512vl avx512dq avx512_bf16)":
// the level in use, the model and its flags, for benchmarks and reports.
std::string cpu_description();

}  // namespace ampjit
