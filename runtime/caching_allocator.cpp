// The caching allocator (see caching_allocator.h): size classes, per-device free lists, the
// out-of-memory retry and the per-device statistics.
#include "runtime/caching_allocator.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <string>
#include <utility>

#include "runtime/error.h"

namespace ampjit {

namespace {

// "2.00 GiB", "1.50 MiB", "3.00 KiB" or "512 bytes": the largest unit that is at least 1, as
// PyTorch's out-of-memory messages print sizes.
std::string format_bytes(size_t nbytes) {
  struct Unit {
    size_t bytes;
    const char* name;
  };
  constexpr Unit kUnits[] = {
      {size_t{1} << 30, "GiB"}, {size_t{1} << 20, "MiB"}, {size_t{1} << 10, "KiB"}};
  for (const Unit& unit : kUnits) {
    if (nbytes >= unit.bytes) {
      return fmt::format("{:.2f} {}", static_cast<double>(nbytes) / static_cast<double>(unit.bytes),
                         unit.name);
    }
  }
  return fmt::format("{} bytes", nbytes);
}

}  // namespace

CachingAllocator::CachingAllocator(Backend backend) : backend_(backend) {
  AMPJIT_CHECK(backend.device_name && backend.raw_alloc && backend.raw_free && backend.total_memory,
               "CachingAllocator: every Backend member must be set");
}

CachingAllocator::~CachingAllocator() {
  empty_cache();
}

size_t CachingAllocator::round_size(size_t nbytes) {
  AMPJIT_CHECK_T(
      ValueError, nbytes <= kLargestSizeClass,
      "CachingAllocator::round_size: {} bytes is above the largest size class ({} bytes)", nbytes,
      kLargestSizeClass);
  if (nbytes <= kMinBlockSize) return kMinBlockSize;
  // Four classes per power of two: round up to a multiple of a quarter of the power of two at or
  // below nbytes (Note [Size classes]).
  const int log2_floor = static_cast<int>(std::bit_width(nbytes)) - 1;
  const size_t step = size_t{1} << (log2_floor - 2);
  return (nbytes + step - 1) & ~(step - 1);
}

void* CachingAllocator::allocate(size_t nbytes, int device) {
  if (nbytes == 0) return nullptr;
  std::lock_guard lock(mutex_);
  DeviceState& state = devices_[device];
  if (nbytes > kLargestSizeClass) throw_out_of_memory(nbytes, device, state);
  const size_t size = round_size(nbytes);
  const Block block{device, size, nbytes};
  void* ptr = nullptr;
  auto cached = state.free_blocks_by_size.find(size);
  if (cached != state.free_blocks_by_size.end() && !cached->second.empty()) {
    ptr = cached->second.back();
    live_blocks_.emplace(ptr, block);  // before the pop: if this throws, the block stays cached
    cached->second.pop_back();
    ++state.stats.num_cache_hits;
  } else {
    ptr = backend_.raw_alloc(size, device);
    if (ptr == nullptr) {
      // The room may be in cached blocks of other classes (Note [Size classes]): give them all
      // back and try once more.
      release_cached_blocks(device, state);
      ptr = backend_.raw_alloc(size, device);
      if (ptr == nullptr) throw_out_of_memory(size, device, state);
    }
    try {
      live_blocks_.emplace(ptr, block);
    } catch (...) {  // no host memory to track the block: do not leak the device memory
      backend_.raw_free(ptr, device);
      throw;
    }
    ++state.stats.num_raw_allocs;
    state.stats.reserved_bytes += size;
  }
  Stats& stats = state.stats;
  ++stats.num_allocs;
  stats.allocated_bytes += size;
  stats.requested_bytes += nbytes;
  stats.peak_allocated_bytes = std::max(stats.peak_allocated_bytes, stats.allocated_bytes);
  return ptr;
}

void CachingAllocator::free(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(mutex_);
  auto live = live_blocks_.find(ptr);
  AMPJIT_CHECK(live != live_blocks_.end(),
               "{} caching allocator: free of a pointer this allocator did not allocate ({})",
               backend_.device_name, ptr);
  const Block block = live->second;
  DeviceState& state = devices_.at(block.device);
  // Reusable by the next allocate at once: Note [One stream].
  state.free_blocks_by_size[block.size].push_back(ptr);
  live_blocks_.erase(live);
  state.stats.allocated_bytes -= block.size;
  state.stats.requested_bytes -= block.requested_size;
}

void CachingAllocator::empty_cache() {
  std::lock_guard lock(mutex_);
  for (auto& [device, state] : devices_) release_cached_blocks(device, state);
}

CachingAllocator::Stats CachingAllocator::stats(int device) const {
  std::lock_guard lock(mutex_);
  auto found = devices_.find(device);
  return found == devices_.end() ? Stats{} : found->second.stats;
}

void CachingAllocator::reset_peak_stats(int device) {
  std::lock_guard lock(mutex_);
  Stats& stats = devices_[device].stats;
  stats.peak_allocated_bytes = stats.allocated_bytes;
}

void CachingAllocator::release_cached_blocks(int device, DeviceState& state) {
  for (auto& [size, blocks] : state.free_blocks_by_size) {
    while (!blocks.empty()) {
      // Forget the block before raw_free, so that a throwing raw_free leaves the cache consistent.
      void* ptr = blocks.back();
      blocks.pop_back();
      state.stats.reserved_bytes -= size;
      backend_.raw_free(ptr, device);
    }
  }
  state.free_blocks_by_size.clear();
}

void CachingAllocator::throw_out_of_memory(size_t size, int device, DeviceState& state) {
  const size_t total_memory = backend_.total_memory(device);
  const std::string capacity =
      total_memory == 0 ? "" : fmt::format("{} total capacity; ", format_bytes(total_memory));
  std::string message = fmt::format(
      "{} out of memory. Tried to allocate {} (GPU {}; {}{} already allocated; {} reserved in "
      "total by ampjit)",
      backend_.device_name, format_bytes(size), device, capacity,
      format_bytes(state.stats.allocated_bytes), format_bytes(state.stats.reserved_bytes));
  ++state.stats.num_ooms;
  throw OutOfMemoryError(std::move(message));
}

}  // namespace ampjit
