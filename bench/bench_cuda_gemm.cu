// CUDA GEMM throughput: ampjit::ops::mm on ampjit CUDA tensors next to the cuBLAS call it makes,
// issued directly on raw cudaMalloc buffers (the ceiling), for square n x n x n products with
// n = 4096 and 8192 in float16, bfloat16 and float32. The direct call uses the math mode, compute
// type and algorithm of kernels/cuda/blas_ops.cpp (Note [One rounding in reduced-precision
// GEMMs] there), so the ratio ampjit/direct is what dispatch, allocation and layout handling cost.
// Each repetition is one call between two CUDA events (host-side overhead counts when it delays
// the GEMM); the two alternate repetition by repetition and the medians are reported as TFLOP/s,
// with ampjit/direct the ratio of the two throughputs (1.0: no overhead) and the largest relative
// difference between the two results as a check that they computed the same product.
// Run: build/bench/bench_cuda_gemm [repetitions, default 20]   (exits 77 without a GPU)
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "runtime/ops.h"

using namespace ampjit;

namespace {

constexpr int kWarmup = 3;
constexpr unsigned kBlock = 256, kGrid = 1024;

template <typename T>
__device__ T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>)
    return __float2half_rn(v);
  else if constexpr (std::is_same_v<T, __nv_bfloat16>)
    return __float2bfloat16_rn(v);
  else
    return v;
}

// Uniform values in [-1, 1) from a hash of the index (both sides get identical operands).
template <typename T>
__global__ void fill_uniform(T* p, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 0x9e3779b1u ^ seed;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    p[i] = from_float<T>(static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f);
  }
}

// max |x - y| / (1 + |y|) into *max_bits (non-negative floats order like their bit patterns).
template <typename T>
__global__ void max_relative_difference(const T* x, const T* y, int64_t n, unsigned* max_bits) {
  float local = 0.f;
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{gridDim.x} * blockDim.x) {
    const float a = static_cast<float>(x[i]), b = static_cast<float>(y[i]);
    const float d = fabsf(a - b) / (1.f + fabsf(b));
    local = d == d ? fmaxf(local, d) : INFINITY;  // a NaN anywhere is a failure
  }
  atomicMax(max_bits, __float_as_uint(local));
}

struct Case {
  const char* name;
  ScalarType dtype;
  cudaDataType type;
};

template <typename F>
void with_type(ScalarType dt, F&& f) {
  if (dt == ScalarType::Float16)
    f.template operator()<__half>();
  else if (dt == ScalarType::BFloat16)
    f.template operator()<__nv_bfloat16>();
  else
    f.template operator()<float>();
}

float time_ms(cudaEvent_t start, cudaEvent_t stop, auto&& call) {
  AMPJIT_CUDA_CHECK(cudaEventRecord(start, cuda::stream()));
  call();
  AMPJIT_CUDA_CHECK(cudaEventRecord(stop, cuda::stream()));
  AMPJIT_CUDA_CHECK(cudaEventSynchronize(stop));
  float ms = 0.f;
  AMPJIT_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
  return ms;
}

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5f * (v[h - 1] + v[h]);
}

void run_case(cublasHandle_t handle, const Case& c, int64_t n, int reps) {
  const size_t bytes = static_cast<size_t>(n * n) * itemsize(c.dtype);
  void *a = nullptr, *b = nullptr, *out = nullptr;
  AMPJIT_CUDA_CHECK(cudaMalloc(&a, bytes));
  AMPJIT_CUDA_CHECK(cudaMalloc(&b, bytes));
  AMPJIT_CUDA_CHECK(cudaMalloc(&out, bytes));
  with_type(c.dtype, [&]<typename T>() {
    fill_uniform<<<kGrid, kBlock>>>(static_cast<T*>(a), n * n, 1u);
    fill_uniform<<<kGrid, kBlock>>>(static_cast<T*>(b), n * n, 2u);
  });
  AMPJIT_CUDA_CHECK_LAUNCH();
  const Device device(DeviceType::CUDA, 0);
  const std::vector<int64_t> shape{n, n};
  const Tensor ta = Tensor::empty(shape, c.dtype, device),
               tb = Tensor::empty(shape, c.dtype, device);
  AMPJIT_CUDA_CHECK(cudaMemcpy(ta.raw_data(), a, bytes, cudaMemcpyDeviceToDevice));
  AMPJIT_CUDA_CHECK(cudaMemcpy(tb.raw_data(), b, bytes, cudaMemcpyDeviceToDevice));

  // Row-major C = A @ B is column-major C^T = B^T @ A^T: B first, every leading dimension n.
  const float alpha = 1.f, beta = 0.f;
  const int ni = static_cast<int>(n);
  auto direct = [&] {
    AMPJIT_CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, ni, ni, ni, &alpha, b,
                                     c.type, ni, a, c.type, ni, &beta, out, c.type, ni,
                                     CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  Tensor result;
  auto through_ampjit = [&] { result = ops::mm(ta, tb); };

  cudaEvent_t start, stop;
  AMPJIT_CUDA_CHECK(cudaEventCreate(&start));
  AMPJIT_CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < kWarmup; ++i) {
    time_ms(start, stop, direct);
    time_ms(start, stop, through_ampjit);
  }
  std::vector<float> direct_ms, ampjit_ms;
  for (int i = 0; i < reps; ++i) {
    direct_ms.push_back(time_ms(start, stop, direct));
    ampjit_ms.push_back(time_ms(start, stop, through_ampjit));
  }

  unsigned* max_bits = nullptr;
  AMPJIT_CUDA_CHECK(cudaMalloc(&max_bits, sizeof(unsigned)));
  AMPJIT_CUDA_CHECK(cudaMemset(max_bits, 0, sizeof(unsigned)));
  with_type(c.dtype, [&]<typename T>() {
    max_relative_difference<<<kGrid, kBlock>>>(static_cast<const T*>(result.raw_data()),
                                               static_cast<const T*>(out), n * n, max_bits);
  });
  AMPJIT_CUDA_CHECK_LAUNCH();
  float max_diff = 0.f;  // the float whose bits the kernel maximized
  static_assert(sizeof(max_diff) == sizeof(unsigned));
  AMPJIT_CUDA_CHECK(cudaMemcpy(&max_diff, max_bits, sizeof(max_diff), cudaMemcpyDeviceToHost));

  const double flop =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const double direct_t = median(direct_ms), ampjit_t = median(ampjit_ms);
  std::printf("%-9s %6lld %14.1f %14.1f %14.3f %14.2e\n", c.name, static_cast<long long>(n),
              flop / (direct_t * 1e-3) * 1e-12, flop / (ampjit_t * 1e-3) * 1e-12,
              direct_t / ampjit_t, static_cast<double>(max_diff));

  AMPJIT_CUDA_CHECK(cudaEventDestroy(start));
  AMPJIT_CUDA_CHECK(cudaEventDestroy(stop));
  AMPJIT_CUDA_CHECK(cudaFree(max_bits));
  AMPJIT_CUDA_CHECK(cudaFree(a));
  AMPJIT_CUDA_CHECK(cudaFree(b));
  AMPJIT_CUDA_CHECK(cudaFree(out));
}

}  // namespace

int main(int argc, char** argv) {
  cuda::init();
  if (cuda::device_count() == 0) {
    std::printf("no CUDA device: %s\n", cuda::unavailable_reason());
    return 77;
  }
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  cudaDeviceProp prop;
  AMPJIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, median of %d repetitions (after %d warm-up), TFLOP/s\n", prop.name, reps,
              kWarmup);
  std::printf("%-9s %6s %14s %14s %14s %14s\n", "dtype", "n", "cuBLAS direct", "ampjit mm",
              "ampjit/direct", "max rel diff");

  cublasHandle_t handle = nullptr;
  AMPJIT_CUBLAS_CHECK(cublasCreate(&handle));
  AMPJIT_CUBLAS_CHECK(cublasSetStream(handle, cuda::stream()));
  AMPJIT_CUBLAS_CHECK(cublasSetMathMode(
      handle, static_cast<cublasMath_t>(CUBLAS_DEFAULT_MATH |
                                        CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
  const Case cases[] = {{"float16", ScalarType::Float16, CUDA_R_16F},
                        {"bfloat16", ScalarType::BFloat16, CUDA_R_16BF},
                        {"float32", ScalarType::Float32, CUDA_R_32F}};
  for (int64_t n : {4096, 8192}) {
    for (const Case& c : cases) run_case(handle, c, n, reps);
  }
  AMPJIT_CUBLAS_CHECK(cublasDestroy(handle));
  return 0;
}
