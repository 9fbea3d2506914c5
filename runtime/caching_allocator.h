// A caching allocator for device memory: keeps freed blocks in per-size-class free lists so that
// the next allocation of the same class skips the raw device allocator (cudaMalloc and friends are
// slow and synchronize). Device-agnostic: the raw allocator is a Backend of function pointers, so
// the CUDA backend plugs in cudaMalloc/cudaFree and the tests plug in a fake over malloc.
//
// Note [Size classes]
// A request is rounded up to its size class (round_size): at least 512 bytes, and above that four
// classes per power of two, as in jemalloc: n is rounded up to a multiple of 2^(floor(log2 n) - 2),
// so a block wastes at most 25% of the request. A freed block is reused only for a request of
// exactly its class, found in O(1) in a free list keyed by (device, class). Blocks are never split
// or merged: a large cached block cannot serve a small request, and the cache may hold memory of
// one class while another class needs it. That is what the out-of-memory retry is for (allocate:
// on a failed raw allocation, the device's whole cache goes back and the allocation is tried once
// more). In exchange there is no fragmentation inside the cache, no block headers or neighbour
// bookkeeping, and every operation is a hash lookup. PyTorch's allocator splits large blocks to
// waste less; for ampjit's workloads (the same few shapes every iteration) exact classes hit the
// cache just as often.
//
// Note [One stream]
// A freed block goes back into its free list at once and may be handed out by the very next
// allocate, although kernels that use it may still be queued on the device. That is safe because
// the CUDA backend issues all work for a device on one stream: a kernel that uses the block's next
// owner is queued after every kernel that used it before, and a stream runs its kernels in order,
// so the new owner's work cannot start before the old owner's finishes. A backend that used
// several streams would have to record an event per block on free and wait for it before reuse
// (PyTorch's record_stream); this allocator does not.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace ampjit {

// Thread-safe: every member function takes one mutex, held also across the Backend's calls.
// The allocator must outlive every block it hands out: the destructor returns the cached blocks to
// the Backend but leaves live ones alone, and freeing one afterwards is undefined behaviour. The
// CUDA backend keeps its allocator for the whole process (intentionally leaked) for that reason.
class CachingAllocator {
 public:
  // The raw device allocator under the cache. raw_alloc returns nullptr when the device is out of
  // memory (and must leave no error state behind); any other failure it throws as ampjit::Error.
  struct Backend {
    const char* device_name;  // "CUDA": used in messages
    void* (*raw_alloc)(size_t nbytes, int device);
    void (*raw_free)(void* ptr, int device);
    size_t (*total_memory)(int device);  // capacity for messages; 0 when unknown
  };
  // Per device.
  struct Stats {
    size_t allocated_bytes = 0;  // in live blocks (rounded sizes)
    // live + cached (everything obtained from raw_alloc, not yet returned)
    size_t reserved_bytes = 0;
    size_t peak_allocated_bytes = 0;
    size_t requested_bytes = 0;   // sum of un-rounded sizes of live blocks
    uint64_t num_allocs = 0;      // successful allocate() calls
    uint64_t num_cache_hits = 0;  // served from the cache
    uint64_t num_raw_allocs = 0;  // raw_alloc calls that succeeded
    uint64_t num_ooms = 0;        // OutOfMemoryErrors thrown
  };

  // The smallest size class; smaller requests get a block of this size (Note [Size classes]).
  static constexpr size_t kMinBlockSize = 512;
  // The largest size class that fits in a size_t; round_size(n) is defined for n up to it.
  static constexpr size_t kLargestSizeClass =
      std::numeric_limits<size_t>::max() - (std::numeric_limits<size_t>::max() >> 3);

  explicit CachingAllocator(Backend backend);
  // Returns the cached blocks to raw_free (which therefore must not throw here); live blocks are
  // left alone (see the class comment).
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // A block of at least nbytes on `device`, from the cache when one of its size class is there.
  // nbytes == 0 returns nullptr and counts nothing. Throws OutOfMemoryError when the device has no
  // room even after the device's cache is released; the allocator stays usable afterwards.
  void* allocate(size_t nbytes, int device);
  // Returns a block from allocate to the cache (Note [One stream]). nullptr is a no-op; a pointer
  // this allocator did not hand out (or already took back) throws ampjit::Error.
  void free(void* ptr);
  // Returns every cached (free) block on every device to the Backend; live blocks stay.
  void empty_cache();
  Stats stats(int device) const;
  // Sets the device's peak_allocated_bytes to its current allocated_bytes.
  void reset_peak_stats(int device);

  // The size class of an nbytes request (Note [Size classes]). Throws ValueError above
  // kLargestSizeClass.
  static size_t round_size(size_t nbytes);

 private:
  struct Block {
    int device;
    size_t size;            // the size class: what raw_alloc was asked for
    size_t requested_size;  // what allocate was asked for
  };
  struct DeviceState {
    Stats stats;
    std::unordered_map<size_t, std::vector<void*>> free_blocks_by_size;
  };

  // Returns the device's cached blocks to the Backend. Callers hold mutex_.
  void release_cached_blocks(int device, DeviceState& state);
  // Counts an OOM on `state` and throws OutOfMemoryError for a request of `size` bytes.
  [[noreturn]] void throw_out_of_memory(size_t size, int device, DeviceState& state);

  const Backend backend_;
  mutable std::mutex mutex_;
  std::map<int, DeviceState> devices_;
  std::unordered_map<void*, Block> live_blocks_;
};

}  // namespace ampjit
