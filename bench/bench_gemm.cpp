// GEMM throughput (the GFLOP counter is a rate: GFLOP per second; square n x n x n):
//  - float32 through ampjit::ops::mm next to oneDNN's f32 matmul called directly (the ceiling);
//  - bfloat16 and float16 through ampjit::ops::mm (widened to float32, Note [Widening bf16 for
//    gemm] in kernels/cpu/matmul_ops.cpp);
//  - the alternatives that note weighs: oneDNN's own bf16 matmul (where this CPU has one),
//    widening whole operands, and widening A in sequential row panels.
// Run: OMP_NUM_THREADS=2 build/bench/bench_gemm --benchmark_repetitions=5
//      --benchmark_report_aggregates_only=true [--benchmark_enable_random_interleaving=true]
// (interleaving the repetitions keeps a busy shared host from favouring whichever ran first).
#include <benchmark/benchmark.h>

#include <oneapi/dnnl/dnnl.hpp>
#include <random>

#include "kernels/cpu/onednn.h"
#include "runtime/ops.h"

using namespace ampjit;

namespace {

using Dims = std::vector<int64_t>;

void set_gflops(benchmark::State& state, int64_t n) {
  const double flop =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  state.counters["GFLOP"] =
      benchmark::Counter(flop * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

Tensor square(int64_t n, ScalarType dt) {
  return ops::randn(Dims{n, n}, dt);
}

void ampjit_mm(benchmark::State& state, ScalarType dt) {
  const int64_t n = state.range(0);
  const Tensor a = square(n, dt), b = square(n, dt);
  for (auto _ : state) {
    Tensor c = ops::mm(a, b);
    benchmark::DoNotOptimize(c.raw_data());
  }
  set_gflops(state, n);
}

void BM_AmpjitMm_f32(benchmark::State& state) {
  ampjit_mm(state, ScalarType::Float32);
}
void BM_AmpjitMm_bf16(benchmark::State& state) {
  ampjit_mm(state, ScalarType::BFloat16);
}
void BM_AmpjitMm_f16(benchmark::State& state) {
  ampjit_mm(state, ScalarType::Float16);
}

// oneDNN's matmul on dense row-major n x n operands, primitive and buffers made once.
void onednn_mm(benchmark::State& state, dnnl::memory::data_type dt) {
  using dnnl::memory;
  const int64_t n = state.range(0);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  const memory::desc md({n, n}, dt, memory::format_tag::ab);
  std::optional<dnnl::matmul> prim;
  try {
    prim = dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(md, md, md), eng));
  } catch (const dnnl::error&) {
    state.SkipWithError("oneDNN has no matmul for this dtype on this CPU");
    return;
  }
  memory a(md, eng), b(md, eng), c(md, eng);
  std::mt19937 rng(1);
  for (memory* m : {&a, &b}) {
    auto* p = static_cast<uint16_t*>(m->get_data_handle());  // bf16 halves or f32 bit patterns
    const size_t words = md.get_size() / sizeof(uint16_t);
    for (size_t i = 0; i < words; ++i) p[i] = static_cast<uint16_t>(0x3c00 + (rng() & 0x1ff));
  }
  for (auto _ : state) {
    prim->execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    s.wait();
  }
  set_gflops(state, n);
}

void BM_OneDnnDirect_f32(benchmark::State& state) {
  onednn_mm(state, dnnl::memory::data_type::f32);
}
void BM_OneDnnDirect_bf16(benchmark::State& state) {
  onednn_mm(state, dnnl::memory::data_type::bf16);
}

// The alternatives Note [Widening bf16 for gemm] weighs against ampjit's per-thread row panels,
// built from the same pieces (onednn.h's widening, float32 matmul and rounding):
//  - whole: widen A and B whole (each split across the threads), one 2-thread gemm, round C;
//  - sequential panels (range(1) rows each): widen B once, then per panel of A widen it, run a
//    2-thread gemm into a float32 panel of C (still in cache) and round it.
void bf16_widened_mm(benchmark::State& state, int64_t panel) {
  namespace od = cpu::onednn;
  const int64_t n = state.range(0);
  const ScalarType bf16 = ScalarType::BFloat16;
  const Tensor a = square(n, bf16), b = square(n, bf16);
  Tensor c = Tensor::empty(Dims{n, n}, bf16);
  const od::Scratch::Buffer a32 = od::Scratch::allocate(n * n), b32 = od::Scratch::allocate(n * n),
                            c32 = od::Scratch::allocate(n * n);
  for (auto _ : state) {
    od::widen_to_float(b.raw_data(), bf16, b32.get(), n * n);
    for (int64_t r0 = 0; r0 < n; r0 += panel) {
      const int64_t rows = std::min(panel, n - r0);
      od::widen_to_float(a.data<BFloat16>() + r0 * n, bf16, a32.get() + r0 * n, rows * n);
      od::MatmulArgs args;
      args.m = rows;
      args.n = args.k = n;
      args.a = a32.get() + r0 * n;
      args.a_rs = n;
      args.b = b32.get();
      args.b_rs = n;
      args.c = c32.get() + r0 * n;
      args.c_rs = n;
      od::matmul(args, "bench");
      od::round_from_float(c32.get() + r0 * n, c.data<BFloat16>() + r0 * n, bf16, rows * n);
    }
    benchmark::DoNotOptimize(c.raw_data());
  }
  set_gflops(state, n);
}
void BM_Bf16WholeWidening(benchmark::State& state) {
  bf16_widened_mm(state, state.range(0));
}
void BM_Bf16PanelWidening(benchmark::State& state) {
  bf16_widened_mm(state, state.range(1));
}

}  // namespace

// Grouped by size, so each size's figures sit together in the report.
int main(int argc, char** argv) {
  for (int64_t n : {256, 1024, 2048}) {
    for (auto [name, fn] : {std::pair{"OneDnnDirect_f32", &BM_OneDnnDirect_f32},
                            std::pair{"AmpjitMm_f32", &BM_AmpjitMm_f32},
                            std::pair{"AmpjitMm_bf16", &BM_AmpjitMm_bf16},
                            std::pair{"AmpjitMm_f16", &BM_AmpjitMm_f16},
                            std::pair{"OneDnnDirect_bf16", &BM_OneDnnDirect_bf16},
                            std::pair{"Bf16WholeWidening", &BM_Bf16WholeWidening}}) {
      benchmark::RegisterBenchmark(name, fn)->Arg(n)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
    for (int64_t panel : {64, 256}) {
      if (panel >= n) continue;
      benchmark::RegisterBenchmark("Bf16PanelWidening", &BM_Bf16PanelWidening)
          ->Args({n, panel})
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
