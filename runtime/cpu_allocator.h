// Large CPU buffers from a cache (Note [Large CPU buffers]).
#pragma once
#include <cstddef>

#include "runtime/caching_allocator.h"

namespace ampjit {

// Note [Large CPU buffers]
// A CPU tensor of at least kLargeCpuBytes takes its bytes from a CachingAllocator (Note [Size
// classes] in caching_allocator.h) over 64-byte-aligned operator new, not from malloc: glibc
// serves such sizes with mmap (or trims them back) and returns them to the system on free, so a
// model called in a loop page-faulted every activation in again on every call (resnet18 under
// CPU autocast: 98 ms a call, against 21 ms once glibc's thresholds were fixed by environment).
// The cache keeps each freed block for the next request of its size class, which in a model
// called again is the same tensor's. It holds at most kCpuCacheLimit bytes idle: a free that
// would leave more returns the whole cache to the system. Smaller tensors keep Note [Inline
// storage] (one malloc for header and bytes, glibc's thread caches).
constexpr size_t kLargeCpuBytes = size_t{128} << 10;
constexpr size_t kCpuCacheLimit = size_t{2} << 30;

void* cpu_large_alloc(size_t nbytes);
void cpu_large_free(void* p);
CachingAllocator::Stats cpu_cache_stats();
// Returns every idle cached block to the system (live ones stay).
void cpu_empty_cache();

}  // namespace ampjit
