// CPU feature detection and the dispatch level (see cpu_features.h).
#include "runtime/cpu_features.h"

#include <cpuid.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "runtime/error.h"

namespace ampjit {

namespace {

uint64_t xgetbv0() {
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

CpuFeatures detect() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
  const bool osxsave = (c >> 27) & 1;
  f.fma = (c >> 12) & 1;
  f.f16c = (c >> 29) & 1;
  const bool avx = (c >> 28) & 1;
  const uint64_t xcr0 = osxsave ? xgetbv0() : 0;
  const bool ymm_os = (xcr0 & 0x6) == 0x6;          // SSE and AVX state
  const bool zmm_os = (xcr0 & 0xe6) == 0xe6;        // plus opmask, ZMM_Hi256, Hi16_ZMM
  const bool amx_os = (xcr0 & 0x60000) == 0x60000;  // XTILECFG, XTILEDATA
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) {
    f.avx2 = avx && ymm_os && ((b >> 5) & 1);
    f.avx512f = zmm_os && ((b >> 16) & 1);
    f.avx512dq = f.avx512f && ((b >> 17) & 1);
    f.avx512bw = f.avx512f && ((b >> 30) & 1);
    f.avx512vl = f.avx512f && ((b >> 31) & 1);
    f.avx512_fp16 = f.avx512f && ((d >> 23) & 1);
    f.amx_bf16 = amx_os && ((d >> 22) & 1) && ((d >> 24) & 1);
    unsigned a1 = 0, b1 = 0, c1 = 0, d1 = 0;
    if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) f.avx512_bf16 = f.avx512f && ((a1 >> 5) & 1);
  }
  f.fma = f.fma && ymm_os;
  f.f16c = f.f16c && ymm_os;
  unsigned max_ext = __get_cpuid_max(0x80000000, nullptr);
  if (max_ext >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      unsigned r[4];
      __get_cpuid(0x80000002 + i, &r[0], &r[1], &r[2], &r[3]);
      std::memcpy(brand + 16 * i, r, 16);
    }
    std::string s(brand);
    const size_t b0 = s.find_first_not_of(' '), e0 = s.find_last_not_of(' ');
    f.model = b0 == std::string::npos ? "" : s.substr(b0, e0 - b0 + 1);
  }
  return f;
}

CpuIsa best_of(const CpuFeatures& f) {
  const bool avx512 = f.avx512f && f.avx512bw && f.avx512vl && f.avx512dq;
  if (avx512 && f.avx512_bf16 && f.amx_bf16) return CpuIsa::kAmx;
  if (avx512 && f.avx512_bf16) return CpuIsa::kAvx512Bf16;
  if (avx512) return CpuIsa::kAvx512;
  return CpuIsa::kAvx2;
}

CpuIsa capped() {
  const CpuIsa best = detected_cpu_isa();
  const char* env = std::getenv("AMPJIT_CPU_ISA");
  if (!env || !*env) return best;
  const std::string_view v(env);
  for (CpuIsa isa : {CpuIsa::kAvx2, CpuIsa::kAvx512, CpuIsa::kAvx512Bf16, CpuIsa::kAmx})
    if (v == cpu_isa_name(isa)) return std::min(isa, best);
  throw Error(fmt::format("AMPJIT_CPU_ISA={}: expected one of avx2, avx512, avx512_bf16, amx", v));
}

std::atomic<int> g_override{-1};

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures f = detect();
  return f;
}

CpuIsa detected_cpu_isa() {
  static const CpuIsa isa = best_of(cpu_features());
  return isa;
}

CpuIsa configured_cpu_isa() {
  static const CpuIsa isa = capped();
  return isa;
}

CpuIsa cpu_isa() {
  const int o = g_override.load(std::memory_order_relaxed);
  return o >= 0 ? static_cast<CpuIsa>(o) : configured_cpu_isa();
}

CpuIsa set_cpu_isa_for_testing(CpuIsa isa) {
  const CpuIsa before = cpu_isa();
  g_override.store(static_cast<int>(std::min(isa, configured_cpu_isa())),
                   std::memory_order_relaxed);
  return before;
}

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx2:
      return "avx2";
    case CpuIsa::kAvx512:
      return "avx512";
    case CpuIsa::kAvx512Bf16:
      return "avx512_bf16";
    case CpuIsa::kAmx:
      return "amx";
  }
  return "?";
}

std::string cpu_description() {
  const CpuFeatures& f = cpu_features();
  std::string flags;
  auto add = [&](bool on, const char* name) {
    if (on) flags += std::string(flags.empty() ? "" : " ") + name;
  };
  add(f.avx2, "avx2");
  add(f.fma, "fma");
  add(f.f16c, "f16c");
  add(f.avx512f, "avx512f");
  add(f.avx512bw, "avx512bw");
  add(f.avx512vl, "avx512vl");
  add(f.avx512dq, "avx512dq");
  add(f.avx512_bf16, "avx512_bf16");
  add(f.avx512_fp16, "avx512_fp16");
  add(f.amx_bf16, "amx_bf16");
  return fmt::format("{} ({}: {})", cpu_isa_name(cpu_isa()), f.model.empty() ? "?" : f.model,
                     flags);
}

}  // namespace ampjit
