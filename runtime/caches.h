// The process's long-lived caches, each registered once with its bound and a way to empty it.
//
// Note [Long-lived caches]
// A serving process loads, compiles and runs models for as long as it lives, so every cache that
// outlives the call that filled it must be bounded, and emptiable on request. Each registers here
// when its library loads (register_cache), which is what ampjit._C._caches() reports and what the
// soak tests (tests/python/test_soak.py, tests/cpp/test_caches.cpp) check does not grow:
//  - "library functions": torch.nn.functional's compiled defs (Note [Function caches],
//    script/compiler.h): at most its defs times six compile-option pairs; a loaded archive's own
//    functions live in its archive, never here. Emptied by torch.jit._state._clear_class_state().
//  - "onednn matmul", "onednn conv", "onednn conv backward" (kernels/cpu/onednn.cpp): at most 256
//    primitives each, least recently used evicted; oneDNN's own primitive cache keeps its default
//    capacity (ONEDNN_PRIMITIVE_CACHE_CAPACITY). Emptied by ampjit.cpu.empty_cache().
//  - "cpu large buffers" (Note [Large CPU buffers], runtime/cpu_allocator.h): at most 2 GiB idle.
//    Emptied by ampjit.cpu.empty_cache().
//  - "cuda allocator" (kernels/cuda): idle device blocks, freed and retried on out-of-memory.
//    Emptied by ampjit.cuda.empty_cache().
//  - "autocast weight casts" (runtime/autocast): per thread, cleared when the outermost autocast
//    region exits, as torch's; emptied by torch.clear_autocast_cache().
//  - "warnings shown once" (runtime/diagnostic.cpp): at most 10,000 distinct warnings remembered.
//  - "symbols" (runtime/ir/symbol.h): the interned names of ops, attributes and prims programs
//    use: bounded by their vocabulary, never emptied (Symbols are plain ids held everywhere).
// Per-object caches (a Function's specializations, a frozen weight's packed copy, a script
// module's compiled methods) belong to their object and go with it.
#pragma once
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace ampjit {

struct CacheInfo {
  std::string name;
  std::string bound;             // the bound, in words (what ampjit._C._caches() shows)
  std::function<size_t()> size;  // entries (or bytes, as `bound` says) held now
  std::function<void()> clear;   // empties it; null for a cache that cannot be emptied
};

// Registers a cache (at load time, once per cache). Returns true (to initialize a static).
bool register_cache(CacheInfo info);
// Every registered cache, in registration order.
std::vector<CacheInfo> registered_caches();
// Empties the cache `name`, or every one that can be emptied when `name` is empty; false when no
// cache has that name.
bool empty_caches(const std::string& name = "");

}  // namespace ampjit
