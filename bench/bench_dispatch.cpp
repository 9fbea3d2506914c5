// Eager dispatch overhead: one `add` of two 4-element float32 tensors through the C++ API
// (dispatcher, kernel, result allocation included), and the pieces it is made of.
#include <benchmark/benchmark.h>

#include "runtime/ops.h"

using namespace ampjit;

static void BM_EagerAdd4(benchmark::State& state) {
  Tensor a = ops::ones(std::vector<int64_t>{4}), b = ops::ones(std::vector<int64_t>{4});
  for (auto _ : state) {
    Tensor c = ops::add(a, b);
    benchmark::DoNotOptimize(c.raw_data());
  }
}
BENCHMARK(BM_EagerAdd4);

static void BM_EagerAddScalar4(benchmark::State& state) {
  Tensor a = ops::ones(std::vector<int64_t>{4});
  for (auto _ : state) {
    Tensor c = ops::add_Scalar(a, 1.0);
    benchmark::DoNotOptimize(c.raw_data());
  }
}
BENCHMARK(BM_EagerAddScalar4);

// The boxed path without the C++ API's stack building: what the interpreter will pay.
static void BM_BoxedDispatchAdd4(benchmark::State& state) {
  Tensor a = ops::ones(std::vector<int64_t>{4}), b = ops::ones(std::vector<int64_t>{4});
  const OpEntry& op = op_entry(OpId::add);
  Stack s;
  s.reserve(4);
  for (auto _ : state) {
    s.clear();
    s.emplace_back(a);
    s.emplace_back(b);
    s.emplace_back(int64_t{1});
    dispatch(op, s);
    benchmark::DoNotOptimize(s[0].tensor_impl());
  }
}
BENCHMARK(BM_BoxedDispatchAdd4);

static void BM_AllocateTensor4(benchmark::State& state) {
  for (auto _ : state) {
    Tensor c = Tensor::empty(std::vector<int64_t>{4});
    benchmark::DoNotOptimize(c.raw_data());
  }
}
BENCHMARK(BM_AllocateTensor4);
