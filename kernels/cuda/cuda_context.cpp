// Host-side CUDA context: errors, devices, the cuBLAS handle (see cuda_context.h).
#include "kernels/cuda/cuda_context.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "runtime/error.h"

namespace ampjit::cuda {

void throw_cuda_error(cudaError_t e, const char* what, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  std::string msg =
      fmt::format("CUDA error: {} ({} at {}:{})", cudaGetErrorString(e), what, base, line);
  if (e == cudaErrorMemoryAllocation) throw OutOfMemoryError(msg);
  throw Error(msg);
}

int device_count() {
  static const int n = [] {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
      cudaGetLastError();  // clear the "no driver" error
      return 0;
    }
    return count;
  }();
  return n;
}

const char* unavailable_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  cudaGetLastError();
  if (e != cudaSuccess) return cudaGetErrorString(e);
  return n == 0 ? "no CUDA device found" : "";
}

int checked_index(Device d) {
  const int n = device_count();
  if (n == 0) throw Error(fmt::format("CUDA is not available: {}", unavailable_reason()));
  const int index = d.index < 0 ? current_device() : d.index;
  if (index >= n) {
    throw Error(
        fmt::format("CUDA error: invalid device ordinal (cuda:{} requested, {} device{} present)",
                    index, n, n == 1 ? "" : "s"));
  }
  return index;
}

int current_device() {
  int d = 0;
  AMPJIT_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

void set_device(int index) {
  AMPJIT_CUDA_CHECK(cudaSetDevice(index));
}

void synchronize(int index) {
  if (index < 0) {
    AMPJIT_CUDA_CHECK(cudaDeviceSynchronize());
    return;
  }
  DeviceGuard g(Device(DeviceType::CUDA, index));
  AMPJIT_CUDA_CHECK(cudaDeviceSynchronize());
}

DeviceGuard::DeviceGuard(Device d) {
  if (!d.is_cuda() || d.index < 0) return;
  const int current = current_device();
  if (current == d.index) return;
  previous_ = current;
  set_device(d.index);
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

namespace {
const char* cublas_status_name(int s) {
  switch (static_cast<cublasStatus_t>(s)) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    default:
      return "CUBLAS_STATUS_UNKNOWN";
  }
}
}  // namespace

void check_cublas(int status, const char* what, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  const char* base = file;
  for (const char* p = file; *p; ++p)
    if (*p == '/') base = p + 1;
  throw Error(fmt::format("CUDA error: {} when calling `{}` ({}:{})", cublas_status_name(status),
                          what, base, line));
}

cublasHandle_t cublas_handle() {
  static std::mutex mu;
  static std::vector<cublasHandle_t> handles;
  const int d = current_device();
  std::lock_guard<std::mutex> lock(mu);
  if (static_cast<int>(handles.size()) <= d) handles.resize(d + 1, nullptr);
  if (!handles[d]) {
    cublasHandle_t h = nullptr;
    AMPJIT_CUBLAS_CHECK(cublasCreate(&h));
    AMPJIT_CUBLAS_CHECK(cublasSetStream(h, stream()));
    // Tensor-core math for float16/bfloat16 is the default; float32 GEMMs stay full float32 (no
    // TF32), as torch's default allow_tf32=False for matmul.
    AMPJIT_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
    handles[d] = h;
  }
  return handles[d];
}

// Read on every launch (grid sizing), so cached without a lock: racing first reads store the same
// value.
int multiprocessor_count() {
  constexpr int kMaxDevices = 64;
  static std::atomic<int> counts[kMaxDevices];
  const int d = current_device();
  if (d >= kMaxDevices) {
    int n = 0;
    AMPJIT_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d));
    return n;
  }
  int n = counts[d].load(std::memory_order_relaxed);
  if (n == 0) {
    AMPJIT_CUDA_CHECK(cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d));
    counts[d].store(n, std::memory_order_relaxed);
  }
  return n;
}

}  // namespace ampjit::cuda
