// The one elementwise kernel family: out[i] = f(in0[i], ..., in{N-1}[i]) over an ElementwiseIter,
// for any functor f. Every pointwise op, copy, cast and fill is an instantiation of it (Note
// [One kernel family]); included by .cu files only.
//
// Note [One kernel family]
// A dense iteration (every operand contiguous after coalescing) runs a flat grid-stride loop; any
// other runs the same loop computing each operand's byte offset from the linear index through
// the coalesced sizes (usually one to three dimensions). f receives the operands' stored values
// (e.g. __half) and returns a value the kernel converts to the output type with convert<>(), so a
// functor decides its own op-math type and one instantiation per (dtype, op) pair exists.
#pragma once
#include <algorithm>

#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/device_types.cuh"

namespace ampjit::cuda {

constexpr int kBlockSize = 256;

template <typename T, int N>
struct DeviceArray {
  T v[N > 0 ? N : 1];
  __host__ __device__ T& operator[](int i) { return v[i]; }
  __host__ __device__ const T& operator[](int i) const { return v[i]; }
};

// Byte offsets of each operand for a linear index in row-major iteration order.
template <int NOPS>
struct OffsetCalculator {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t strides[kMaxDims][NOPS];

  explicit OffsetCalculator(const ElementwiseIter& it) : ndim(it.ndim) {
    for (int d = 0; d < it.ndim; ++d) {
      sizes[d] = it.sizes[d];
      for (int op = 0; op < NOPS; ++op) strides[d][op] = it.strides[op][d];
    }
  }
  AMPJIT_HOST_DEVICE DeviceArray<int64_t, NOPS> get(int64_t linear) const {
    DeviceArray<int64_t, NOPS> off;
    for (int op = 0; op < NOPS; ++op) off[op] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t i = linear % sizes[d];
      linear /= sizes[d];
      for (int op = 0; op < NOPS; ++op) off[op] += i * strides[d][op];
    }
    return off;
  }
};

template <typename F, typename TIn, int N>
__device__ __forceinline__ auto apply_at(const F& f, const DeviceArray<const TIn*, N>& in,
                                         int64_t i) {
  if constexpr (N == 0)
    return f();
  else if constexpr (N == 1)
    return f(in[0][i]);
  else if constexpr (N == 2)
    return f(in[0][i], in[1][i]);
  else
    return f(in[0][i], in[1][i], in[2][i]);
}

template <typename TOut, typename TIn, int N, typename F>
__global__ void elementwise_dense_kernel(int64_t n, TOut* __restrict__ out,
                                         DeviceArray<const TIn*, N> in, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step)
    out[i] = convert<TOut>(apply_at(f, in, i));
}

template <typename TOut, typename TIn, int N, typename F>
__global__ void elementwise_strided_kernel(int64_t n, char* out, DeviceArray<const char*, N> in,
                                           OffsetCalculator<N + 1> calc, F f) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto off = calc.get(i);
    TOut* o = reinterpret_cast<TOut*>(out + off[0]);
    if constexpr (N == 0) {
      *o = convert<TOut>(f());
    } else if constexpr (N == 1) {
      *o = convert<TOut>(f(*reinterpret_cast<const TIn*>(in[0] + off[1])));
    } else if constexpr (N == 2) {
      *o = convert<TOut>(f(*reinterpret_cast<const TIn*>(in[0] + off[1]),
                           *reinterpret_cast<const TIn*>(in[1] + off[2])));
    } else {
      *o = convert<TOut>(f(*reinterpret_cast<const TIn*>(in[0] + off[1]),
                           *reinterpret_cast<const TIn*>(in[1] + off[2]),
                           *reinterpret_cast<const TIn*>(in[2] + off[3])));
    }
  }
}

// Blocks for n elements: enough to fill the device a few times over, then grid-stride.
inline unsigned grid_size(int64_t n, int block = kBlockSize) {
  const int64_t want = (n + block - 1) / block;
  const int64_t cap = static_cast<int64_t>(multiprocessor_count()) * 16;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(want, cap)));
}

// Runs f over `it`: operand 0 of type TOut, operands 1..N of type TIn (the caller has dispatched
// on the dtypes recorded in `it`).
template <typename TOut, typename TIn, int N, typename F>
void launch_elementwise(const ElementwiseIter& it, F f) {
  if (it.numel == 0) return;
  const unsigned grid = grid_size(it.numel);
  if (it.contiguous) {
    DeviceArray<const TIn*, N> in{};
    for (int k = 0; k < N; ++k) in[k] = reinterpret_cast<const TIn*>(it.data[k + 1]);
    elementwise_dense_kernel<TOut, TIn, N>
        <<<grid, kBlockSize, 0, stream()>>>(it.numel, reinterpret_cast<TOut*>(it.data[0]), in, f);
  } else {
    DeviceArray<const char*, N> in{};
    for (int k = 0; k < N; ++k) in[k] = it.data[k + 1];
    elementwise_strided_kernel<TOut, TIn, N><<<grid, kBlockSize, 0, stream()>>>(
        it.numel, it.data[0], in, OffsetCalculator<N + 1>(it), f);
  }
  AMPJIT_CUDA_CHECK_LAUNCH();
}

}  // namespace ampjit::cuda
