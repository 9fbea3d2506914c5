// The registry of long-lived caches (Note [Long-lived caches] in caches.h).
#include "runtime/caches.h"

#include <mutex>

#include "runtime/cpu_allocator.h"

namespace ampjit {

namespace {

struct Registry {
  std::mutex mu;
  std::vector<CacheInfo> caches;
};

Registry& registry() {
  static auto* r = new Registry;  // never destroyed: caches register from static initializers
  return *r;
}

[[maybe_unused]] const bool g_cpu_buffers =
    register_cache({"cpu large buffers", "at most 2 GiB idle (bytes)",
                    [] {
                      const CachingAllocator::Stats s = cpu_cache_stats();
                      return s.reserved_bytes - s.allocated_bytes;
                    },
                    [] { cpu_empty_cache(); }});

}  // namespace

bool register_cache(CacheInfo info) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.caches.push_back(std::move(info));
  return true;
}

std::vector<CacheInfo> registered_caches() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.caches;
}

bool empty_caches(const std::string& name) {
  bool found = false;
  for (const CacheInfo& c : registered_caches()) {  // a copy: clearing may register nothing new
    if (!name.empty() && c.name != name) continue;
    found = true;
    if (c.clear) c.clear();
  }
  return found;
}

}  // namespace ampjit
