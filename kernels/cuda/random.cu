// rand and randn on the device: Philox4x32-10 (philox.h), one block of four 32-bit draws per
// thread step, keyed by the CUDA generator's seed and counted from its offset, so a seed gives the
// same tensor on every run and every launch configuration.
//
// Note [Uniform and normal draws]
// float32, float16 and bfloat16 take 24 random bits per value: u = (x >> 8) * 2^-24 in [0, 1); a
// reduced-precision value that rounds up to 1 becomes 0, as on CPU. float64 takes two draws per
// value (53 bits). Normals use Box-Muller on a pair of uniforms, u1 in (0, 1] so log(u1) is finite,
// computed in float (double for float64). Values are not the CPU's (a different engine), only the
// distribution is.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/philox.h"

namespace ampjit::cuda {
namespace {

// Values per Philox block: four from 24-bit uniforms, two for float64.
template <typename T>
constexpr int kPerBlock = std::is_same_v<T, double> ? 2 : 4;

template <typename T, bool Normal>
__global__ void random_kernel(T* out, int64_t n, uint64_t seed, uint64_t first_block) {
  using M = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr int per = kPerBlock<T>;
  const int64_t blocks = (n + per - 1) / per;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < blocks;
       b += step) {
    const philox::Block r = philox::draws(seed, first_block + static_cast<uint64_t>(b));
    M u[per];
    if constexpr (per == 4) {
      for (int k = 0; k < 4; ++k) u[k] = static_cast<float>(r.v[k] >> 8) * (1.0f / 16777216.0f);
    } else {
      for (int k = 0; k < 2; ++k) {
        const uint64_t bits = (static_cast<uint64_t>(r.v[2 * k]) << 32 | r.v[2 * k + 1]) >> 11;
        u[k] = static_cast<double>(bits) * (1.0 / 9007199254740992.0);
      }
    }
    M v[per];
    if constexpr (Normal) {
      for (int k = 0; k < per; k += 2) {
        const M u1 = M(1) - u[k];  // (0, 1]
        const M radius = sqrt(M(-2) * log(u1));
        const M theta = M(6.283185307179586476925) * u[k + 1];
        v[k] = radius * cos(theta);
        v[k + 1] = radius * sin(theta);
      }
    } else {
      for (int k = 0; k < per; ++k) v[k] = u[k];
    }
    for (int k = 0; k < per; ++k) {
      const int64_t i = b * per + k;
      if (i >= n) break;
      T value = convert<T>(v[k]);
      if constexpr (!Normal && is_reduced_v<T>) {
        if (static_cast<float>(value) >= 1.0f) value = convert<T>(0.0f);
      }
      out[i] = value;
    }
  }
}

template <bool Normal>
void launch_random(void* out, int dtype, int64_t n, uint64_t seed, uint64_t offset) {
  if (n == 0) return;
  dispatch_floating(dtype, [&]<typename T>() {
    const int64_t blocks = (n + kPerBlock<T> - 1) / kPerBlock<T>;
    random_kernel<T, Normal>
        <<<grid_size(blocks), kBlockSize, 0, stream()>>>(static_cast<T*>(out), n, seed, offset / 4);
  });
  AMPJIT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_uniform(void* out, int dtype, int64_t n, uint64_t seed, uint64_t offset) {
  launch_random<false>(out, dtype, n, seed, offset);
}
void launch_normal(void* out, int dtype, int64_t n, uint64_t seed, uint64_t offset) {
  launch_random<true>(out, dtype, n, seed, offset);
}

}  // namespace ampjit::cuda
