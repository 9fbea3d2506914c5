// The CUDA backend's public entry points. Link ampjit_cuda and call ampjit::cuda::init() once
// before using device="cuda" (the Python module does this at import). A binary built with the
// backend runs on machines without a GPU: is_available() is false there and allocating a CUDA
// tensor raises "CUDA is not available: <reason>".
#pragma once
#include <cstddef>
#include <cstdint>

namespace ampjit::cuda {

// Installs the allocator, the copy/fill hooks and every CUDA kernel (idempotent, thread-safe).
void init();

bool is_available();
int device_count();                // 0 when there is no driver or no device
const char* unavailable_reason();  // "" when a device is present
int current_device();
void set_device(int index);
void synchronize(int index = -1);  // -1: the current device

// The caching allocator's view of one device (bytes).
struct MemoryStats {
  size_t allocated = 0;  // in live tensors (rounded to the allocator's size classes)
  size_t reserved = 0;   // held from the driver: live plus cached
  size_t peak_allocated = 0;
};
MemoryStats memory_stats(int device);
void reset_peak_memory_stats(int device);
// Returns every cached, unused block to the driver.
void empty_cache();

// The CUDA generator (one Philox seed and counter shared by every CUDA device, unlike torch's one
// per device): torch.cuda.manual_seed. `device` is accepted for torch's signature; seeding any
// device seeds them all.
void manual_seed(int device, uint64_t seed);
void manual_seed_all(uint64_t seed);

// Kernel registration, one function per family (called by init()).
void register_creation_kernels();
void register_pointwise_kernels();
void register_reduction_kernels();
void register_nn_kernels();
void register_index_kernels();
void register_blas_kernels();

}  // namespace ampjit::cuda
