// Indexing kernels: batched concatenation, gather/scatter along a dimension, the device-side index
// bounds check and triangles (launchers declared in index.h). Every kernel moves elements as
// unsigned integers of the element size, so four instantiations serve all ten dtypes.
//
// Note [Index bounds on CUDA]
// torch checks indices inside its CUDA kernels with a device-side assert, which poisons the
// context: every later CUDA call in the process fails. ampjit instead checks the indices before
// moving anything: a small kernel records the lowest position holding an out-of-range index with
// atomicMin, the host reads it back, and the boxed kernel raises the CPU kernel's IndexError,
// naming that index (the one the CPU's sequential check would name). The price is one device
// synchronization per indexing op; the move kernels then never see a bad index.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/index.h"

namespace ampjit::cuda {

namespace {

// --- cat -------------------------------------------------------------------------------------

// Inputs per launch: blockIdx.y picks one. The batch travels as a kernel parameter (64 * 24
// bytes, well under the 4 KiB limit).
constexpr int kCatBatch = 64;
struct CatBatch {
  CatInput inputs[kCatBatch];
};

// Thread t copies flat positions k = t, t + step, ... of its input's [outer, cols] values,
// tracking k as (row, col) with k = row * cols + col so the loop never divides.
template <typename U>
__global__ void cat_kernel(U* __restrict__ out, int64_t outer, int64_t out_cols, CatBatch batch) {
  const CatInput in = batch.inputs[blockIdx.y];
  const int64_t cols = in.cols;
  const int64_t n = outer * cols;
  const U* __restrict__ src = static_cast<const U*>(in.data);
  U* __restrict__ dst = out + in.offset;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t k = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t row = k / cols, col = k % cols;
  const int64_t step_row = step / cols, step_col = step % cols;
  for (; k < n; k += step) {
    dst[row * out_cols + col] = src[k];
    row += step_row;
    col += step_col;
    if (col >= cols) {
      col -= cols;
      ++row;
    }
  }
}

// --- gather / scatter ------------------------------------------------------------------------

template <typename U>
__global__ void index_move_kernel(int64_t n, char* dense, char* indexed, const char* index,
                                  OffsetCalculator<3> calc, int64_t dim_stride, bool scatter) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const auto off = calc.get(i);
    const int64_t at = *reinterpret_cast<const int64_t*>(index + off[2]);
    U* d = reinterpret_cast<U*>(dense + off[0]);
    U* x = reinterpret_cast<U*>(indexed + off[1] + at * dim_stride);
    if (scatter)
      *x = *d;
    else
      *d = *x;
  }
}

// --- bounds check (Note [Index bounds on CUDA]) ----------------------------------------------

__global__ void first_out_of_range_kernel(const int64_t* __restrict__ index, int64_t n,
                                          int64_t size, unsigned long long* first) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t v = index[i];
    if (v < 0 || v >= size) {
      atomicMin(first, static_cast<unsigned long long>(i));
      return;  // this thread's later positions are larger
    }
  }
}

// --- tril / triu -----------------------------------------------------------------------------

template <typename U>
__global__ void triangle_kernel(const U* in, U* out, int64_t numel, int64_t rows, int64_t cols,
                                int64_t k, bool lower) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel;
       i += step) {
    const int64_t j = i % cols, r = (i / cols) % rows;
    const bool keep = lower ? j - r <= k : j - r >= k;
    out[i] = keep ? in[i] : U(0);
  }
}

}  // namespace

template <typename U>
void launch_cat(void* out, int64_t outer, int64_t out_cols, const CatInput* inputs, int64_t count) {
  const int64_t sms = multiprocessor_count();
  for (int64_t first = 0; first < count; first += kCatBatch) {
    CatBatch batch;
    const int64_t in_batch = std::min<int64_t>(kCatBatch, count - first);
    int64_t largest = 0;
    for (int64_t i = 0; i < in_batch; ++i) {
      batch.inputs[i] = inputs[first + i];
      largest = std::max(largest, outer * inputs[first + i].cols);
    }
    // Blocks per input: enough for the largest, but about 32 blocks per SM over the whole batch
    // (each block grid-strides over its input).
    const int64_t per_input = std::clamp<int64_t>((sms * 32 + in_batch - 1) / in_batch, 1,
                                                  static_cast<int64_t>(grid_size(largest)));
    const dim3 grid(static_cast<unsigned>(per_input), static_cast<unsigned>(in_batch));
    cat_kernel<U><<<grid, kBlockSize, 0, stream()>>>(static_cast<U*>(out), outer, out_cols, batch);
    AMPJIT_CUDA_CHECK_LAUNCH();
  }
}

template <typename U>
void launch_index_move(const ElementwiseIter& it, int64_t dim_stride, bool scatter) {
  if (it.numel == 0) return;
  index_move_kernel<U><<<grid_size(it.numel), kBlockSize, 0, stream()>>>(
      it.numel, it.data[0], it.data[1], it.data[2], OffsetCalculator<3>(it), dim_stride, scatter);
  AMPJIT_CUDA_CHECK_LAUNCH();
}

OutOfRange find_out_of_range(const int64_t* index, int64_t n, int64_t size, void* scratch) {
  OutOfRange result;
  if (n == 0) return result;
  auto* first = static_cast<unsigned long long*>(scratch);
  constexpr unsigned long long kNone = ~0ull;  // what the 0xff memset writes
  AMPJIT_CUDA_CHECK(cudaMemsetAsync(first, 0xff, sizeof(*first), stream()));
  first_out_of_range_kernel<<<grid_size(n), kBlockSize, 0, stream()>>>(index, n, size, first);
  AMPJIT_CUDA_CHECK_LAUNCH();
  unsigned long long position = kNone;
  AMPJIT_CUDA_CHECK(
      cudaMemcpyAsync(&position, first, sizeof(position), cudaMemcpyDeviceToHost, stream()));
  AMPJIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
  if (position == kNone) return result;
  result.position = static_cast<int64_t>(position);
  AMPJIT_CUDA_CHECK(cudaMemcpyAsync(&result.value, index + result.position, sizeof(int64_t),
                                    cudaMemcpyDeviceToHost, stream()));
  AMPJIT_CUDA_CHECK(cudaStreamSynchronize(stream()));
  return result;
}

template <typename U>
void launch_triangle(const void* in, void* out, int64_t numel, int64_t rows, int64_t cols,
                     int64_t k, bool lower) {
  if (numel == 0) return;
  triangle_kernel<U><<<grid_size(numel), kBlockSize, 0, stream()>>>(
      static_cast<const U*>(in), static_cast<U*>(out), numel, rows, cols, k, lower);
  AMPJIT_CUDA_CHECK_LAUNCH();
}

// The four element sizes (index.h).
#define AMPJIT_INDEX_LAUNCHERS(U)                                                 \
  template void launch_cat<U>(void*, int64_t, int64_t, const CatInput*, int64_t); \
  template void launch_index_move<U>(const ElementwiseIter&, int64_t, bool);      \
  template void launch_triangle<U>(const void*, void*, int64_t, int64_t, int64_t, int64_t, bool);
AMPJIT_INDEX_LAUNCHERS(uint8_t)
AMPJIT_INDEX_LAUNCHERS(uint16_t)
AMPJIT_INDEX_LAUNCHERS(uint32_t)
AMPJIT_INDEX_LAUNCHERS(uint64_t)
#undef AMPJIT_INDEX_LAUNCHERS

}  // namespace ampjit::cuda
