// The CUDA backend's entry point: installs the caching allocator and the device copy/fill hooks
// into the runtime and registers every CUDA kernel in the op table (ampjit::cuda::init, called
// once by the Python module and by C++ users that link ampjit_cuda).
#include <cuda_runtime.h>

#include <mutex>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/tensor_iter.h"
#include "runtime/caches.h"
#include "runtime/caching_allocator.h"
#include "runtime/error.h"

namespace ampjit::cuda {

namespace {

void* raw_alloc(size_t nbytes, int device) {
  DeviceGuard g(Device(DeviceType::CUDA, device));
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, nbytes);
  if (e == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it and let the allocator free its cache and retry
    return nullptr;
  }
  AMPJIT_CUDA_CHECK(e);
  return p;
}

void raw_free(void* p, int device) {
  DeviceGuard g(Device(DeviceType::CUDA, device));
  cudaFree(p);  // errors here (a dead context at exit) have nobody to report to
}

size_t total_memory(int device) {
  cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return prop.totalGlobalMem;
}

// Leaked on purpose: storages may be freed during static destruction, after any static allocator
// would have been destroyed.
CachingAllocator& the_allocator() {
  static CachingAllocator* a =
      new CachingAllocator(CachingAllocator::Backend{"CUDA", raw_alloc, raw_free, total_memory});
  return *a;
}

void* storage_allocate(size_t nbytes, Device d) {
  const int index = checked_index(d);
  return the_allocator().allocate(nbytes, index);
}
void storage_free(void* p, Device) {
  the_allocator().free(p);
}

// Copies between a CUDA tensor and a CPU or CUDA tensor of the same sizes (Tensor::copy_ has
// broadcast the source). Same-device copies are one conversion kernel; host<->device copies move
// the bytes with cudaMemcpy and convert on whichever side keeps it to one pass when layouts match.
void copy(const Tensor& dst, const Tensor& src) {
  const Device dd = dst.device(), sd = src.device();
  if (dd.is_cuda() && sd.is_cuda()) {
    if (dd.index == sd.index) {
      DeviceGuard g(dd);
      launch_copy(make_iter(dst, {src}));
      return;
    }
    // Across devices: a dense copy of src on its own device, moved peer to peer, then converted.
    Tensor dense = src.contiguous();
    Tensor moved = Tensor::empty(src.sizes(), src.dtype(), dd);
    AMPJIT_CUDA_CHECK(cudaMemcpyPeer(moved.raw_data(), dd.index, dense.raw_data(), sd.index,
                                     dense.numel() * dense.itemsize()));
    DeviceGuard g(dd);
    launch_copy(make_iter(dst, {moved}));
    return;
  }
  if (dd.is_cuda()) {  // host -> device
    DeviceGuard g(dd);
    // Convert and densify on the host (where src already is), then one transfer.
    Tensor host =
        src.dtype() == dst.dtype() && src.is_contiguous() ? src : src.to(dst.dtype()).contiguous();
    const size_t nbytes = host.numel() * host.itemsize();
    if (dst.is_contiguous()) {
      AMPJIT_CUDA_CHECK(
          cudaMemcpy(dst.raw_data(), host.raw_data(), nbytes, cudaMemcpyHostToDevice));
      return;
    }
    Tensor staged = Tensor::empty(dst.sizes(), dst.dtype(), dd);
    AMPJIT_CUDA_CHECK(
        cudaMemcpy(staged.raw_data(), host.raw_data(), nbytes, cudaMemcpyHostToDevice));
    launch_copy(make_iter(dst, {staged}));
    return;
  }
  // device -> host: convert and densify on the device, one transfer, then into dst's layout.
  DeviceGuard g(sd);
  Tensor dense = src;
  if (src.dtype() != dst.dtype() || !src.is_contiguous()) {
    dense = Tensor::empty(src.sizes(), dst.dtype(), sd);
    launch_copy(make_iter(dense, {src}));
  }
  const size_t nbytes = dense.numel() * dense.itemsize();
  if (dst.is_contiguous()) {
    AMPJIT_CUDA_CHECK(cudaMemcpy(dst.raw_data(), dense.raw_data(), nbytes, cudaMemcpyDeviceToHost));
    return;
  }
  Tensor host = Tensor::empty(dst.sizes(), dst.dtype(), Device());
  AMPJIT_CUDA_CHECK(cudaMemcpy(host.raw_data(), dense.raw_data(), nbytes, cudaMemcpyDeviceToHost));
  Tensor(dst).copy_(host);
}

void fill(const Tensor& dst, const Scalar& v) {
  DeviceGuard g(dst.device());
  const bool integral = v.is_integral() || v.is_bool();
  launch_fill(make_iter(dst, {}), v.to_double(), integral ? v.to_int() : 0, integral);
}

}  // namespace

MemoryStats memory_stats(int device) {
  const CachingAllocator::Stats s = the_allocator().stats(device);
  return MemoryStats{s.allocated_bytes, s.reserved_bytes, s.peak_allocated_bytes};
}
void reset_peak_memory_stats(int device) {
  the_allocator().reset_peak_stats(device);
}
void empty_cache() {
  the_allocator().empty_cache();
}

void init() {
  static std::once_flag once;
  std::call_once(once, [] {
    Storage::set_device_allocator(DeviceType::CUDA, {storage_allocate, storage_free});
    register_cache({"cuda allocator",
                    "idle device blocks (bytes), returned and retried once on out-of-memory",
                    [] {
                      size_t idle = 0;
                      for (int d = 0; d < device_count(); ++d) {
                        const CachingAllocator::Stats s = the_allocator().stats(d);
                        idle += s.reserved_bytes - s.allocated_bytes;
                      }
                      return idle;
                    },
                    empty_cache});
    set_device_backend(DeviceType::CUDA, DeviceBackend{copy, fill});
    register_creation_kernels();
    register_pointwise_kernels();
    register_reduction_kernels();
    register_nn_kernels();
    register_index_kernels();
    register_blas_kernels();
  });
}

bool is_available() {
  return device_count() > 0;
}

}  // namespace ampjit::cuda
