// A host simulation of the CUDA execution model, enough to compile a .cu file's kernels with the
// host compiler and run them without a GPU: include this header, then the .cu file (which must
// launch its kernels through AMPJIT_CUDA_LAUNCH, Note [One launch site] in kernels/cuda/reduce.cu).
// tests/cuda/test_cuda_reduce_sim.cpp runs reduce.cu this way.
//
// Note [Simulated CUDA threads]
// A launch runs its blocks one after another. Each thread of a block is a fiber (a ucontext with
// its own stack) on the calling OS thread; __syncthreads() switches back to the scheduler, which
// resumes every waiting thread once all of them have arrived. Between barriers the threads of a
// block run one at a time, in a new pseudo-random order for every phase (seeded, so a run is
// reproducible), so a read of shared memory that a missing barrier leaves unordered with a write
// sees the wrong value in most runs instead of the one that in-order execution happens to make
// right. The scheduler also reports what the hardware leaves undefined or refuses:
//  - a barrier that some threads of the block reach while others have returned;
//  - a launch configuration the device rejects (an empty grid or block, more than 1024 threads
//    per block, grid or block dims over their limits).
// __shared__ variables become function-local statics, one instance shared by every block, which
// is right because blocks do not overlap. What this cannot see: warp-level behaviour (there are no
// warps here), the device's math library and fused multiply-adds, memory limits (static shared
// memory, registers per __launch_bounds__), and timing.
#pragma once
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>

// The host compiler sees CUDA's declaration specifiers as nothing (crt/host_defines.h), except
// __shared__, which must give one variable per block rather than one per thread.
#undef __shared__
#define __shared__ static
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

namespace ampjit::cuda::host_sim {

namespace detail {
inline uint3 thread_idx, block_idx;
inline dim3 block_dim, grid_dim;
void run_grid(dim3 grid, dim3 block, void (*body)(const void*), const void* arg);
}  // namespace detail

// Runs kernel(args...) on every thread of `grid` x `block`; throws std::logic_error for an invalid
// launch or a barrier not every thread reaches (Note [Simulated CUDA threads]).
template <typename... Params, typename... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, const Args&... args) {
  const auto call = [&] { kernel(args...); };
  detail::run_grid(
      grid, block, [](const void* f) { (*static_cast<const decltype(call)*>(f))(); }, &call);
}

// The multiprocessor count multiprocessor_count() reports (launch heuristics read it); 4 at first.
void set_multiprocessor_count(int n);

// Totals since the start, to check that a test reached the paths it means to.
struct Counters {
  int64_t launches = 0;
  int64_t blocks = 0;
};
const Counters& counters();

}  // namespace ampjit::cuda::host_sim

// The built-in variables and barrier of device code, read-only as on the device.
inline const uint3& threadIdx = ampjit::cuda::host_sim::detail::thread_idx;
inline const uint3& blockIdx = ampjit::cuda::host_sim::detail::block_idx;
inline const dim3& blockDim = ampjit::cuda::host_sim::detail::block_dim;
inline const dim3& gridDim = ampjit::cuda::host_sim::detail::grid_dim;
void __syncthreads();

#define AMPJIT_CUDA_LAUNCH ::ampjit::cuda::host_sim::launch
