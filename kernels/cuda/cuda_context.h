// The CUDA backend's host-side context: error checking, device selection, the one stream per
// device that all of ampjit's work goes to, and the cuBLAS handle. Plain C++ (no device code), so
// boxed kernels in .cpp files use it without nvcc.
//
// Note [One stream per device]
// Every kernel, copy and GEMM ampjit issues on a device goes to that device's legacy default
// stream. Stream order then makes the caching allocator's immediate reuse of a freed block safe
// (Note [One stream] in runtime/caching_allocator.h), host<->device copies of pageable memory
// synchronize with the work before them, and a result read back with .cpu() or item() is
// complete. Overlap between streams is left for later; nothing in the API exposes streams yet.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "runtime/device.h"

typedef struct cublasContext* cublasHandle_t;

namespace ampjit::cuda {

// Throws ampjit::Error ("CUDA error: <cudaGetErrorString> (<what> at file:line)"), or
// OutOfMemoryError for cudaErrorMemoryAllocation; clears CUDA's last error first so the process
// stays usable after a recoverable failure.
[[noreturn]] void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line);

#define AMPJIT_CUDA_CHECK(expr)                                                      \
  do {                                                                               \
    const cudaError_t ampjit_cuda_err_ = (expr);                                     \
    if (ampjit_cuda_err_ != cudaSuccess) [[unlikely]]                                \
      ::ampjit::cuda::throw_cuda_error(ampjit_cuda_err_, #expr, __FILE__, __LINE__); \
  } while (0)

// Checks the launch of the kernel just issued (launch errors are reported asynchronously
// otherwise, at some later call that did nothing wrong).
#define AMPJIT_CUDA_CHECK_LAUNCH() AMPJIT_CUDA_CHECK(cudaGetLastError())

// Devices present; 0 when there is no driver or no GPU (never throws).
int device_count();
// Why CUDA is not available ("" when it is): the driver's error string, or "no CUDA device".
const char* unavailable_reason();
// Throws a clear Error ("CUDA is not available: ...") unless a device is present; returns the
// index of `d` (-1 resolved to the current device) after checking it is in range.
int checked_index(Device d);

int current_device();
void set_device(int index);
// Waits for all work on `index` (-1: the current device).
void synchronize(int index);

// The stream all of ampjit's work on the current device goes to (Note [One stream per device]).
inline cudaStream_t stream() {
  return nullptr;
}

// Makes `d` the current device for the scope (a no-op for a CPU device).
class DeviceGuard {
 public:
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// The cuBLAS handle of the current device, created on first use and bound to stream().
cublasHandle_t cublas_handle();
// Throws ampjit::Error naming the cuBLAS status for a failed call.
void check_cublas(int status, const char* what, const char* file, int line);
#define AMPJIT_CUBLAS_CHECK(expr) \
  ::ampjit::cuda::check_cublas(static_cast<int>(expr), #expr, __FILE__, __LINE__)

// Properties of the current device used by launch heuristics.
int multiprocessor_count();

}  // namespace ampjit::cuda
