// The cache of large CPU buffers (see cpu_allocator.h).
#include "runtime/cpu_allocator.h"

#include <new>

#include "runtime/error.h"

namespace ampjit {

namespace {
constexpr std::align_val_t kAlign{64};

void* raw_alloc(size_t nbytes, int) {
  return ::operator new(nbytes, kAlign, std::nothrow);
}
void raw_free(void* p, int) {
  ::operator delete(p, kAlign);
}
size_t unknown_total(int) {
  return 0;
}

CachingAllocator& cache() {
  // Leaked on purpose: tensors freed during static destruction still come back to it.
  static CachingAllocator* c =
      new CachingAllocator(CachingAllocator::Backend{"cpu", raw_alloc, raw_free, unknown_total});
  return *c;
}
}  // namespace

void* cpu_large_alloc(size_t nbytes) {
  return cache().allocate(nbytes, 0);
}

void cpu_large_free(void* p) {
  CachingAllocator& c = cache();
  c.free(p);
  const CachingAllocator::Stats s = c.stats(0);
  if (s.reserved_bytes - s.allocated_bytes > kCpuCacheLimit) c.empty_cache();
}

CachingAllocator::Stats cpu_cache_stats() {
  return cache().stats(0);
}

void cpu_empty_cache() {
  cache().empty_cache();
}

}  // namespace ampjit
