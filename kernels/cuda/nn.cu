// Normalization kernels: group_norm (layer_norm is its one-group case) and batch_norm, with
// statistics reduced on the device in the op-math type; and dropout's masking kernel (launchers
// declared in nn.h).
//
// Note [Normalization on CUDA]
// Statistics accumulate in opmath_t<T>: float for float16, bfloat16 and float32, double for
// float64, as in torch's CUDA kernels. (The CPU kernels accumulate float32 in double, Note
// [Statistics precision] in kernels/cpu/norm_ops.cpp, so float32 results agree with CPU to float
// rounding, not bit for bit.) Each thread sums a strided share of the values and the shares
// combine in a tree (warp shuffles, then shared memory), which keeps the rounding error close to
// pairwise summation's. Variances take two passes as on CPU: the mean, then the centered sum of
// squares. Outputs are (x - mean) * (rstd * weight) + bias in the op-math type, rounded once.
//
// group_norm/layer_norm: a team of threads normalizes one row of channels_per_group * inner
// values. Rows of at most kWarpRowLimit values get a warp each (eight rows per block), so many
// short rows still fill the device; longer rows get a whole block. A team reads its row three
// times (sum, squares, output); the second and third reads mostly hit L1/L2.
//
// batch_norm: in training one block per channel reduces the channel's batch * inner values into
// its mean and rstd (and updates the running statistics); in evaluation rstd comes from the
// running variance. A flat pass over the input then normalizes.
//
// Note [Dropout draws]
// Dropout draws from the CUDA generator (default_generator(DeviceType::CUDA), seeded by
// torch.cuda.manual_seed) through the Philox4x32-10 stream of philox.h, as rand does: element i
// takes 32-bit draw offset + i, so the mask depends only on (seed, offset) and not on the launch
// configuration. An element is kept when its draw r satisfies r < keep_below = ceil((1 - p) *
// 2^32), i.e. when the exact uniform r * 2^-32 is below 1 - p, the CPU kernel's test on its own
// engine's doubles; the masks differ from CPU's (another engine), the keep probability does not.
// As on CPU the kept values are multiplied by the dtype-rounded 1 / (1 - p) in the op-math type,
// and p = 1 multiplies by zero (NaN stays NaN) without drawing.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/nn.h"
#include "kernels/cuda/philox.h"

namespace ampjit::cuda {

namespace {

constexpr int kMaxWarps = 32;            // per block (1024 threads)
constexpr int64_t kWarpRowLimit = 1024;  // rows up to this length are normalized by one warp
constexpr int kLongRowBlock = 512;       // threads per row for rows of kLongRowThreshold or more
constexpr int64_t kLongRowThreshold = 8192;
constexpr int kStatsBlock = 512;  // threads per channel for batch statistics

__device__ __forceinline__ float device_sqrt(float v) {
  return sqrtf(v);
}
__device__ __forceinline__ double device_sqrt(double v) {
  return sqrt(v);
}

template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

// The sum of `v` over the block, returned to every thread. `scratch` holds kMaxWarps + 1 values;
// consecutive calls may reuse it (each call's writes come after every thread passed the previous
// call's last barrier). blockDim.x is a multiple of 32.
template <typename A>
__device__ A block_sum(A v, A* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum(lane < warps ? scratch[lane] : A(0));
    if (lane == 0) scratch[kMaxWarps] = v;
  }
  __syncthreads();
  return scratch[kMaxWarps];
}

// --- group_norm / layer_norm -----------------------------------------------------------------

template <typename T>
__global__ void group_norm_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t rows,
                                  int64_t groups, int64_t channels_per_group, int64_t inner,
                                  const opmath_t<T>* __restrict__ weight,
                                  const opmath_t<T>* __restrict__ bias, opmath_t<T> eps,
                                  bool warp_per_row) {
  using A = opmath_t<T>;
  __shared__ A scratch[kMaxWarps + 1];
  // A team is a warp or the whole block (Note [Normalization on CUDA]); in block mode every
  // thread of the block runs the same rows, so block_sum's barriers are reached by all.
  const int64_t teams_per_block = warp_per_row ? blockDim.x / 32 : 1;
  const int64_t team_in_block = warp_per_row ? threadIdx.x / 32 : 0;
  const int64_t lane = warp_per_row ? threadIdx.x % 32 : threadIdx.x;
  const int64_t team_size = warp_per_row ? 32 : blockDim.x;
  auto team_sum = [&](A v) { return warp_per_row ? warp_sum(v) : block_sum(v, scratch); };

  const int64_t n = channels_per_group * inner;
  for (int64_t row = blockIdx.x * teams_per_block + team_in_block; row < rows;
       row += static_cast<int64_t>(gridDim.x) * teams_per_block) {
    const T* xr = x + row * n;
    T* yr = y + row * n;
    A sum = 0;
    for (int64_t i = lane; i < n; i += team_size) sum += convert<A>(xr[i]);
    const A mean = team_sum(sum) / static_cast<A>(n);
    A squares = 0;
    for (int64_t i = lane; i < n; i += team_size) {
      const A d = convert<A>(xr[i]) - mean;
      squares += d * d;
    }
    const A rstd = A(1) / device_sqrt(team_sum(squares) / static_cast<A>(n) + eps);
    const int64_t first_channel = (row % groups) * channels_per_group;
    for (int64_t i = lane; i < n; i += team_size) {
      const int64_t c = first_channel + (inner == 1 ? i : i / inner);
      const A scale = weight ? rstd * weight[c] : rstd;
      const A shift = bias ? bias[c] : A(0);
      yr[i] = convert<T>((convert<A>(xr[i]) - mean) * scale + shift);
    }
  }
}

// --- batch_norm ------------------------------------------------------------------------------

// Per-channel mean and rstd of x [batch, channels, inner] over batch and inner; one block per
// channel. Thread t visits flat positions k = t, t + blockDim.x, ... of the channel's
// batch * inner values, tracking k as (n, s) with k = n * inner + s so the loop never divides.
template <typename T>
__global__ void batch_norm_stats_kernel(const T* __restrict__ x, int64_t batch, int64_t channels,
                                        int64_t inner, opmath_t<T> eps,
                                        opmath_t<T>* __restrict__ mean_out,
                                        opmath_t<T>* __restrict__ rstd_out,
                                        double* __restrict__ running_mean,
                                        double* __restrict__ running_var, double momentum) {
  using A = opmath_t<T>;
  __shared__ A scratch[kMaxWarps + 1];
  const int64_t count = batch * inner;
  const int64_t plane = channels * inner;  // elements between consecutive n of one channel
  const int64_t step_n = blockDim.x / inner, step_s = blockDim.x % inner;
  for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
    const T* xc = x + c * inner;
    auto channel_sum = [&](auto term) {
      A acc = 0;
      int64_t n = threadIdx.x / inner, s = threadIdx.x % inner;
      while (n < batch) {
        acc += term(convert<A>(xc[n * plane + s]));
        n += step_n;
        s += step_s;
        if (s >= inner) {
          s -= inner;
          ++n;
        }
      }
      return block_sum(acc, scratch);
    };
    const A mean = channel_sum([](A v) { return v; }) / static_cast<A>(count);
    const A squares = channel_sum([mean](A v) {
      const A d = v - mean;
      return d * d;
    });
    if (threadIdx.x == 0) {
      mean_out[c] = mean;
      rstd_out[c] = A(1) / device_sqrt(squares / static_cast<A>(count) + eps);
      // As the CPU kernel: in double, with the unbiased variance (count > 1 was checked).
      if (running_mean)
        running_mean[c] = momentum * static_cast<double>(mean) + (1 - momentum) * running_mean[c];
      if (running_var) {
        const double unbiased = static_cast<double>(squares) / static_cast<double>(count - 1);
        running_var[c] = momentum * unbiased + (1 - momentum) * running_var[c];
      }
    }
  }
}

template <typename A>
__global__ void batch_norm_rstd_kernel(const A* __restrict__ running_var, int64_t channels, A eps,
                                       A* __restrict__ rstd_out) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels;
       c += step)
    rstd_out[c] = A(1) / device_sqrt(running_var[c] + eps);
}

// y = (x - mean[c]) * (rstd[c] * weight[c]) + bias[c] over x [batch, channels, inner], flat and
// grid-stride; each thread tracks its position's (c, s) by adding the step instead of dividing.
template <typename T>
__global__ void batch_norm_apply_kernel(const T* __restrict__ x, T* __restrict__ y, int64_t numel,
                                        int64_t channels, int64_t inner,
                                        const opmath_t<T>* __restrict__ mean,
                                        const opmath_t<T>* __restrict__ rstd,
                                        const opmath_t<T>* __restrict__ weight,
                                        const opmath_t<T>* __restrict__ bias) {
  using A = opmath_t<T>;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  int64_t s = i % inner, c = (i / inner) % channels;
  const int64_t step_s = step % inner, step_c = (step / inner) % channels;
  for (; i < numel; i += step) {
    const A scale = weight ? rstd[c] * weight[c] : rstd[c];
    const A shift = bias ? bias[c] : A(0);
    y[i] = convert<T>((convert<A>(x[i]) - mean[c]) * scale + shift);
    s += step_s;
    c += step_c;
    if (s >= inner) {
      s -= inner;
      ++c;
    }
    if (c >= channels) c -= channels;  // c < 2 * channels here
  }
}

// --- dropout (Note [Dropout draws]) ----------------------------------------------------------

// Thread steps over Philox blocks: block b covers elements 4b .. 4b + 3, one draw each.
template <typename T>
__global__ void dropout_kernel(const T* x, T* y, int64_t n, opmath_t<T> scale, uint64_t keep_below,
                               uint64_t seed, uint64_t first_block) {
  using M = opmath_t<T>;
  const int64_t blocks = (n + 3) / 4;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += step) {
    const philox::Block r = keep_below == 0
                                ? philox::Block{}
                                : philox::draws(seed, first_block + static_cast<uint64_t>(b));
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      const int64_t i = b * 4 + k;
      if (i >= n) break;
      const M noise = r.v[k] < keep_below ? scale : M(0);
      y[i] = convert<T>(convert<M>(x[i]) * noise);
    }
  }
}

unsigned capped_grid(int64_t blocks) {
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, int64_t{1} << 30));
}

}  // namespace

void launch_group_norm(const void* x, void* y, int dtype, int64_t rows, int64_t groups,
                       int64_t channels_per_group, int64_t inner, const void* weight,
                       const void* bias, double eps) {
  const int64_t n = channels_per_group * inner;
  if (rows == 0 || n == 0) return;
  const bool warp_per_row = n <= kWarpRowLimit;
  const int threads = !warp_per_row && n >= kLongRowThreshold ? kLongRowBlock : kBlockSize;
  const int64_t teams_per_block = warp_per_row ? threads / 32 : 1;
  // Enough blocks for every row when that fills the device a few times over; the kernel loops
  // over rows otherwise.
  const int64_t blocks = std::min<int64_t>((rows + teams_per_block - 1) / teams_per_block,
                                           static_cast<int64_t>(multiprocessor_count()) * 32);
  dispatch_floating(dtype, [&]<typename T>() {
    using A = opmath_t<T>;
    group_norm_kernel<T><<<capped_grid(blocks), threads, 0, stream()>>>(
        static_cast<const T*>(x), static_cast<T*>(y), rows, groups, channels_per_group, inner,
        static_cast<const A*>(weight), static_cast<const A*>(bias), static_cast<A>(eps),
        warp_per_row);
  });
  AMPJIT_CUDA_CHECK_LAUNCH();
}

void launch_batch_norm(const BatchNormArgs& a) {
  const int64_t numel = a.batch * a.channels * a.inner;
  if (numel == 0) return;
  dispatch_floating(a.dtype, [&]<typename T>() {
    using A = opmath_t<T>;
    const A eps = static_cast<A>(a.eps);
    A* rstd = static_cast<A*>(a.rstd);
    const A* mean = static_cast<const A*>(a.running_mean);
    if (a.training) {
      batch_norm_stats_kernel<T><<<capped_grid(a.channels), kStatsBlock, 0, stream()>>>(
          static_cast<const T*>(a.x), a.batch, a.channels, a.inner, eps, static_cast<A*>(a.mean),
          rstd, a.running_mean_f64, a.running_var_f64, a.momentum);
      mean = static_cast<const A*>(a.mean);
    } else {
      batch_norm_rstd_kernel<A><<<grid_size(a.channels), kBlockSize, 0, stream()>>>(
          static_cast<const A*>(a.running_var), a.channels, eps, rstd);
    }
    AMPJIT_CUDA_CHECK_LAUNCH();
    batch_norm_apply_kernel<T><<<grid_size(numel), kBlockSize, 0, stream()>>>(
        static_cast<const T*>(a.x), static_cast<T*>(a.y), numel, a.channels, a.inner, mean, rstd,
        static_cast<const A*>(a.weight), static_cast<const A*>(a.bias));
    AMPJIT_CUDA_CHECK_LAUNCH();
  });
}

void launch_dropout(const void* x, void* y, int dtype, int64_t n, double scale, uint64_t keep_below,
                    uint64_t seed, uint64_t offset) {
  if (n == 0) return;
  dispatch_floating(dtype, [&]<typename T>() {
    dropout_kernel<T><<<grid_size((n + 3) / 4), kBlockSize, 0, stream()>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n, static_cast<opmath_t<T>>(scale),
        keep_below, seed, offset / 4);
  });
  AMPJIT_CUDA_CHECK_LAUNCH();
}

}  // namespace ampjit::cuda
