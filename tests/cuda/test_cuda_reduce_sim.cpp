// The CUDA reductions, scans and softmax (kernels/cuda/reduce.cu) against the CPU kernels, on a
// machine without a GPU: the host compiler builds reduce.cu itself, and its kernels run on
// simulated CUDA threads (Note [Simulated CUDA threads] in cuda_host_sim.h) through the launchers
// that reduce_ops.cpp calls (launch_reduce, launch_scan, launch_softmax), on host memory. Every
// thread mapping of Note [Lanes and columns] is reached: rows and columns, one lane or many, len
// split across blocks, empty arrays. What a GPU adds (its libm, warps, timing) is left to
// tests/cuda/test_cuda_kernels.cpp.
#include "tests/cuda/cuda_host_sim.h"
// The code under test; after the simulation, which supplies its launch macro and built-ins.
#include "kernels/cuda/reduce.cu"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "kernels/cuda/tensor_iter.h"
#include "runtime/ops.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using cuda::ReduceOp;
using cuda::ReduceShape;
using V = std::vector<int64_t>;
using Dim = std::optional<int64_t>;  // nullopt: every dim
using namespace testing::dtypes;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// --- inputs and comparison ----------------------------------------------------------------------

// The [outer, len, inner] view of contiguous `x` along `dim` (Note [Reduction layout] in
// kernels/cuda/reduce_ops.cpp).
ReduceShape shape_along(const Tensor& x, Dim dim) {
  ReduceShape s;
  if (!dim) {
    s.len = x.numel();
    return s;
  }
  for (int64_t d = 0; d < x.dim(); ++d) {
    if (d < *dim)
      s.outer *= x.size(d);
    else if (d == *dim)
      s.len = x.size(d);
    else
      s.inner *= x.size(d);
  }
  return s;
}

// The contiguous inputs of each case: every thread mapping, with the dims that reach them.
struct Input {
  V shape;
  std::vector<Dim> dims;
};
const std::vector<Input>& inputs() {
  static const std::vector<Input> v = {
      {{5, 7}, {1, 0, std::nullopt}},  // short rows; 7 columns of 5 (inner > 1)
      {{3, 4, 5}, {1}},                // outer and inner around len
      {{3, 1000}, {1, 0}},             // long rows (many lanes); many short columns
      {{1000, 3}, {0}},                // long columns: lanes along threadIdx.y
      {{2, 1, 5}, {1}},                // len 1
      {{1, 20000}, {1}},               // one long row: len split across blocks
      {{4096, 8}, {0}},                // few long columns: split, inner > 1
      {{9000, 2}, {1}},                // many short rows (a scan's warp per row)
      {{2, 5, 4100}, {1}},             // many columns (a scan's thread per column)
      {{0, 3}, {1, 0}},                // no columns; columns of len 0
      {{}, {std::nullopt}},            // a 0-dim tensor
  };
  return v;
}

Tensor random_input(const V& shape, ScalarType t, uint64_t seed, double lo, double hi) {
  if (t == kU8 || t == kBool) lo = std::max(lo, 0.0);
  return testing::random_tensor(shape, t, seed, lo, hi);
}

// Rows of special values: NaN, infinities, ties, zeros, a row of all -inf.
Tensor special_input(ScalarType t) {
  const std::vector<double> v = {1,     kNaN,  2,     3,     -1,    kInf, 1,   2,    -kInf, 0,
                                 -kInf, -kInf, -kInf, -kInf, -kInf, 0.5,  0.5, -0.5, 0.5,   0.25};
  Tensor x = Tensor::empty(V{static_cast<int64_t>(v.size())}, kF64);
  std::copy(v.begin(), v.end(), x.data<double>());
  return x.view(V{4, 5}).to(t);
}

// The CUDA accumulation order differs from the CPU's (float accumulators, lanes combined in a
// tree: Note [CUDA reduction accumulators]), so floating results agree to a tolerance growing
// with the number of elements combined; integers exactly.
testing::Tol tolerance(ScalarType t, int64_t combined) {
  const double r = std::sqrt(static_cast<double>(std::max<int64_t>(combined, 1)));
  switch (t) {
    case kF64:
      return {1e-10, 1e-13 * r};
    case kF32:
      return {2e-5, 2e-6 * r};
    case kF16:
    case kBF16:
      return {testing::tol_for(t).rtol, testing::tol_for(t).atol * r};
    default:
      return {0, 0};
  }
}

void expect_close(const Tensor& got, const Tensor& want, int64_t combined,
                  const std::string& what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  EXPECT_TRUE(testing::close(got, testing::values(want),
                             V(want.sizes().begin(), want.sizes().end()),
                             tolerance(want.dtype(), combined)))
      << what;
}

std::string describe(const char* name, const Tensor& x, Dim dim) {
  return std::string(name) + " of " + dtype_name(x.dtype()) + x.shape_str() + " along " +
         (dim ? std::to_string(*dim) : std::string("every dim"));
}

enum class Types { floating, sum, all };  // floating; int64 and floating; all ten

std::vector<ScalarType> types_of(Types t) {
  switch (t) {
    case Types::floating:
      return {kF32, kF64, kF16, kBF16};
    case Types::sum:
      return {kI64, kF32, kF64, kF16, kBF16};
    case Types::all:
      return {kBool, kU8, kI8, kI16, kI32, kI64, kF16, kF32, kF64, kBF16};
  }
  return {};
}

// --- reductions ---------------------------------------------------------------------------------

// One launch_reduce op with its CPU counterpart, which returns the values (and for max/min the
// indices) that the launcher writes.
struct ReduceCase {
  const char* name;
  ReduceOp op;
  double param;
  Types types;
  double lo, hi;  // the range of the random inputs
  std::function<std::vector<Tensor>(const Tensor&, Dim)> cpu;
};
void PrintTo(const ReduceCase& c, std::ostream* os) {
  *os << c.name;
}

// The ops without an identity, which reject an empty reduction (reduce_meta.h checks that first).
bool needs_elements(const ReduceCase& c) {
  return c.op == ReduceOp::max || c.op == ReduceOp::min ||
         (c.op == ReduceOp::norm && std::isinf(c.param));
}

// Every dim: max_dim of the flattened input (argmax has no bool kernel).
std::vector<Tensor> extreme_on_cpu(const Tensor& x, Dim dim, bool is_max) {
  const Tensor in = dim ? x : x.view(V{-1});
  OpResult r = is_max ? ops::max_dim(in, dim.value_or(0)) : ops::min_dim(in, dim.value_or(0));
  return {r.tensor(0), r.tensor(1)};
}

const std::vector<ReduceCase>& reduce_cases() {
  static const std::vector<ReduceCase> v = {
      {"sum", ReduceOp::sum, 0, Types::sum, -2, 2,
       [](const Tensor& x, Dim d) -> std::vector<Tensor> {
         return {d ? ops::sum_dim_IntList(x, V{*d}) : ops::sum(x)};
       }},
      {"mean", ReduceOp::mean, 0, Types::floating, -2, 2,
       [](const Tensor& x, Dim d) -> std::vector<Tensor> {
         return {d ? ops::mean_dim(x, V{*d}) : ops::mean(x)};
       }},
      {"prod", ReduceOp::prod, 0, Types::sum, 0.5, 1.5,
       [](const Tensor& x, Dim d) -> std::vector<Tensor> {
         return {d ? ops::prod_dim_int(x, *d) : ops::prod(x)};
       }},
      {"max", ReduceOp::max, 0, Types::all, -2, 2,
       [](const Tensor& x, Dim d) { return extreme_on_cpu(x, d, true); }},
      {"min", ReduceOp::min, 0, Types::all, -2, 2,
       [](const Tensor& x, Dim d) { return extreme_on_cpu(x, d, false); }},
      {"logsumexp", ReduceOp::logsumexp, 0, Types::floating, -2, 2,
       [](const Tensor& x, Dim d) -> std::vector<Tensor> {
         return {ops::logsumexp(x, d ? V{*d} : V{})};
       }},
      {"var", ReduceOp::var, 1, Types::floating, -2, 2,
       [](const Tensor& x, Dim d) -> std::vector<Tensor> {
         return {d ? ops::var_correction(x, V{*d}, 1) : ops::var_correction(x, std::nullopt, 1)};
       }},
      {"std_biased", ReduceOp::std, 0, Types::floating, -2, 2,
       [](const Tensor& x, Dim d) -> std::vector<Tensor> {
         return {d ? ops::std_correction(x, V{*d}, 0) : ops::std_correction(x, std::nullopt, 0)};
       }},
  };
  return v;
}

// The vector norms, one case per kind of NormReducer.
ReduceCase norm_case(const char* name, double p) {
  auto cpu = [p](const Tensor& x, Dim d) -> std::vector<Tensor> {
    return {d ? ops::norm_ScalarOpt_dim(x, p, V{*d}) : ops::norm_Scalar(x, p)};
  };
  return {name, ReduceOp::norm, p, Types::floating, -2, 2, cpu};
}
const std::vector<ReduceCase>& norm_cases() {
  static const std::vector<ReduceCase> v = {norm_case("p2", 2),
                                            norm_case("p1", 1),
                                            norm_case("p0", 0),
                                            norm_case("p_inf", kInf),
                                            norm_case("p_neg_inf", -kInf),
                                            norm_case("p0_5", 0.5),
                                            norm_case("p3", 3)};
  return v;
}

// launch_reduce on x along dim, as reduce_ops.cpp's run_reduction calls it, into tensors shaped
// like the CPU results `like` (values, then indices for max/min).
std::vector<Tensor> reduce_on_sim(const ReduceCase& c, const Tensor& x, Dim dim,
                                  const std::vector<Tensor>& like) {
  std::vector<Tensor> out;
  for (const Tensor& t : like) out.push_back(Tensor::empty(t.sizes(), t.dtype()));
  cuda::ReduceArgs a;
  a.op = c.op;
  a.dtype = cuda::dt(x.dtype());
  a.shape = shape_along(x, dim);
  a.in = x.raw_data();
  a.out = out[0].raw_data();
  a.indices = out.size() > 1 ? out[1].data<int64_t>() : nullptr;
  a.param = c.param;
  // Scratch in 8-byte words, as reduce_ops.cpp allocates it.
  std::vector<int64_t> workspace((cuda::reduce_workspace_bytes(a) + 7) / 8);
  cuda::launch_reduce(a, workspace.data());
  return out;
}

void check_reduction(const ReduceCase& c) {
  uint64_t seed = 0;
  for (ScalarType t : types_of(c.types)) {
    for (const Input& in : inputs()) {
      const Tensor x = random_input(in.shape, t, ++seed, c.lo, c.hi);
      for (Dim dim : in.dims) {
        if (shape_along(x, dim).len == 0 && needs_elements(c)) continue;
        const std::vector<Tensor> want = c.cpu(x, dim);
        const std::vector<Tensor> got = reduce_on_sim(c, x, dim, want);
        for (size_t i = 0; i < want.size(); ++i)
          expect_close(got[i], want[i], shape_along(x, dim).len, describe(c.name, x, dim));
      }
    }
    if (is_floating(t)) {
      const Tensor x = special_input(t);
      for (Dim dim : {Dim(1), Dim(0), Dim()}) {
        const std::vector<Tensor> want = c.cpu(x, dim);
        const std::vector<Tensor> got = reduce_on_sim(c, x, dim, want);
        for (size_t i = 0; i < want.size(); ++i)
          expect_close(got[i], want[i], shape_along(x, dim).len, describe(c.name, x, dim));
      }
    }
  }
}

class Reduce : public ::testing::TestWithParam<ReduceCase> {};
TEST_P(Reduce, MatchesCpu) {
  check_reduction(GetParam());
}
INSTANTIATE_TEST_SUITE_P(CudaSim, Reduce, ::testing::ValuesIn(reduce_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

class Norm : public ::testing::TestWithParam<ReduceCase> {};
TEST_P(Norm, MatchesCpu) {
  check_reduction(GetParam());
}
INSTANTIATE_TEST_SUITE_P(CudaSim, Norm, ::testing::ValuesIn(norm_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// A long row is split across blocks, more of them on a larger device, and a second kernel
// combines the splits (the inputs above reach this path with the simulation's 4 multiprocessors).
TEST(CudaSimReduce, SplitsLongColumnsAcrossBlocks) {
  const Tensor x = random_input({1, 70000}, kF32, 7, -2, 2);
  const std::vector<Tensor> want = {ops::sum_dim_IntList(x, V{1})};
  int64_t blocks_before = 0;
  for (int multiprocessors : {1, 132}) {
    cuda::host_sim::set_multiprocessor_count(multiprocessors);
    const cuda::host_sim::Counters before = cuda::host_sim::counters();
    const std::vector<Tensor> got = reduce_on_sim(reduce_cases()[0], x, Dim(1), want);
    const cuda::host_sim::Counters& after = cuda::host_sim::counters();
    EXPECT_EQ(after.launches - before.launches, 2) << multiprocessors << " multiprocessors";
    EXPECT_GT(after.blocks - before.blocks, blocks_before) << multiprocessors << " multiprocessors";
    blocks_before = after.blocks - before.blocks;
    expect_close(got[0], want[0], x.numel(), "split sum");
  }
  cuda::host_sim::set_multiprocessor_count(4);
}

// --- scans and softmax --------------------------------------------------------------------------

// launch_scan or launch_softmax on x along dim with its CPU counterpart.
struct AlongCase {
  const char* name;
  Types types;
  double lo, hi;
  std::function<Tensor(const Tensor&, int64_t)> cpu;
  std::function<void(int dtype, ReduceShape, const void* in, void* out)> launch;
};
void PrintTo(const AlongCase& c, std::ostream* os) {
  *os << c.name;
}

const std::vector<AlongCase>& along_cases() {
  using cuda::launch_scan;
  using cuda::launch_softmax;
  static const std::vector<AlongCase> v = {
      {"cumsum", Types::sum, -2, 2,
       [](const Tensor& x, int64_t d) -> Tensor { return ops::cumsum(x, d); },
       [](int t, ReduceShape s, const void* in, void* out) { launch_scan(false, t, s, in, out); }},
      {"cumprod", Types::sum, 0.5, 1.5,
       [](const Tensor& x, int64_t d) -> Tensor { return ops::cumprod(x, d); },
       [](int t, ReduceShape s, const void* in, void* out) { launch_scan(true, t, s, in, out); }},
      {"softmax", Types::floating, -4, 4,
       [](const Tensor& x, int64_t d) -> Tensor { return ops::softmax_int(x, d); },
       [](int t, ReduceShape s, const void* in, void* out) {
         launch_softmax(false, t, s, in, out);
       }},
      {"log_softmax", Types::floating, -4, 4,
       [](const Tensor& x, int64_t d) -> Tensor { return ops::log_softmax_int(x, d); },
       [](int t, ReduceShape s, const void* in, void* out) {
         launch_softmax(true, t, s, in, out);
       }},
  };
  return v;
}

void check_along(const AlongCase& c, const Tensor& x, int64_t dim) {
  const Tensor want = c.cpu(x, dim);
  Tensor got = Tensor::empty(want.sizes(), want.dtype());
  c.launch(cuda::dt(x.dtype()), shape_along(x, dim), x.raw_data(), got.raw_data());
  expect_close(got, want, x.size(dim), describe(c.name, x, dim));
}

class Along : public ::testing::TestWithParam<AlongCase> {};
TEST_P(Along, MatchesCpu) {
  const AlongCase& c = GetParam();
  uint64_t seed = 100;
  for (ScalarType t : types_of(c.types)) {
    for (const Input& in : inputs()) {
      const Tensor x = random_input(in.shape, t, ++seed, c.lo, c.hi);
      for (Dim dim : in.dims)
        if (dim) check_along(c, x, *dim);
    }
    if (is_floating(t)) {
      const Tensor x = special_input(t);
      check_along(c, x, 1);
      check_along(c, x, 0);
    }
  }
}
INSTANTIATE_TEST_SUITE_P(CudaSim, Along, ::testing::ValuesIn(along_cases()),
                         [](const auto& info) { return std::string(info.param.name); });

// --- the simulation itself ----------------------------------------------------------------------

void diverging_barrier(int* out) {
  if (threadIdx.x == 0) return;
  __syncthreads();
  out[threadIdx.x] = 1;
}

TEST(CudaHostSim, ReportsABarrierNotEveryThreadReaches) {
  int out[8] = {};
  EXPECT_THROW(cuda::host_sim::launch(diverging_barrier, dim3(1), dim3(8), &out[0]),
               std::logic_error);
}

TEST(CudaHostSim, RejectsAnEmptyOrOversizedLaunch) {
  int out[8] = {};
  EXPECT_THROW(cuda::host_sim::launch(diverging_barrier, dim3(0), dim3(8), &out[0]),
               std::logic_error);
  EXPECT_THROW(cuda::host_sim::launch(diverging_barrier, dim3(1), dim3(64, 32), &out[0]),
               std::logic_error);
}

// Each thread reads its neighbour's slot of shared memory, with or without the barrier between
// the writes and the reads; without it the shuffled order gives some threads a stale slot.
void rotate_through_shared(int* out, bool with_barrier) {
  __shared__ int slots[64];
  slots[threadIdx.x] = static_cast<int>(threadIdx.x + blockIdx.x * 1000);
  if (with_barrier) __syncthreads();
  out[blockIdx.x * 64 + threadIdx.x] = slots[(threadIdx.x + 1) % 64];
}

TEST(CudaHostSim, AMissingBarrierShowsAsWrongResults) {
  std::vector<int> out(128);
  auto rotated = [&] {
    for (int i = 0; i < 128; ++i)
      if (out[i] != (i + 1) % 64 + i / 64 * 1000) return false;
    return true;
  };
  cuda::host_sim::launch(rotate_through_shared, dim3(2), dim3(64), out.data(), true);
  EXPECT_TRUE(rotated());
  cuda::host_sim::launch(rotate_through_shared, dim3(2), dim3(64), out.data(), false);
  EXPECT_FALSE(rotated());
}

}  // namespace
}  // namespace ampjit
