// Eager autocast state and its torch-shaped C++ API: per thread, the enabled flag and
// lower-precision dtype of each device type, the nesting counter, cache_enabled and the weight-cast
// cache; plus AutocastGuard, which does what torch's `with torch.autocast(...)` does
// (aten/src/ATen/autocast_mode.cpp and torch/amp/autocast_mode.py).
//
//   {
//     AutocastGuard ac(DeviceType::CPU);          // bfloat16, cache as before
//     Tensor y = ops::mm(x, w);                   // runs in bfloat16
//   }                                             // state restored, cache cleared
//
// Note [Autocast state is per thread]
// All state is thread_local, as in torch 1.x: another thread starts with autocast off. As in
// torch, the enabled flag and dtype are per device type, while the nesting counter, cache_enabled
// and the cache are one per thread: the cache is cleared when the outermost region of *any* device
// exits, so a cpu region nested in a cuda region keeps the cuda region's cached weights.
// Enabling autocast for any device includes the autocast dispatcher layer in the thread's
// DispatchTLS (runtime/dispatcher.h); a thread with every device disabled never enters it.
#pragma once
#include <cstddef>
#include <optional>
#include <string_view>

#include "runtime/ivalue.h"

namespace ampjit {

struct OpEntry;

// torch.is_autocast_enabled(device) / torch.set_autocast_enabled(device, enabled). Enabling
// applies the policy profile first if none is applied yet (runtime/autocast/policy_profiles.h),
// which throws ValueError when AMPJIT_AUTOCAST_PROFILE names no profile.
bool is_autocast_enabled(DeviceType device);
void set_autocast_enabled(DeviceType device, bool enabled);

// The lower-precision dtype autocast casts to: cpu bfloat16, cuda float16 by default. Only
// float16 and bfloat16 are accepted (ValueError otherwise).
ScalarType get_autocast_dtype(DeviceType device);
void set_autocast_dtype(DeviceType device, ScalarType dtype);
ScalarType default_autocast_dtype(DeviceType device);

// torch.autocast_increment_nesting() / autocast_decrement_nesting(): return the new depth.
// Decrementing below 0 throws.
int autocast_increment_nesting();
int autocast_decrement_nesting();
int autocast_nesting();

// torch.is_autocast_cache_enabled() / set_autocast_cache_enabled() / clear_autocast_cache().
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
void clear_autocast_cache();
size_t autocast_cache_size();  // casts held by this thread's weight-cast cache

// Eligibility (aten/src/ATen/autocast_mode.h, is_eligible): defined, floating point, not float64,
// on `device`.
bool is_autocast_eligible(const Tensor& t, DeviceType device);

// torch's cached_cast: `t` cast to `to` when it is eligible on `device` and of another dtype, else
// `t` itself. The cast runs as an aten::to.dtype call below the autocast layer (the tracer sees
// it); casts of weights to the lower dtype go through the cache (Note [Weight-cast cache]).
Tensor autocast_cached_cast(ScalarType to, const Tensor& t, DeviceType device);

// What `with torch.autocast(device, enabled=, dtype=, cache_enabled=):` does. On entry: save the
// device's enabled flag and dtype and the cache flag, set them, increment the nesting. On exit,
// also when an exception unwinds: decrement, clear the cache when the nesting returns to 0, and
// restore. An unset dtype or cache_enabled keeps the current value, as in torch.
class AutocastGuard {
 public:
  explicit AutocastGuard(DeviceType device, bool enabled = true,
                         std::optional<ScalarType> dtype = std::nullopt,
                         std::optional<bool> cache_enabled = std::nullopt);
  ~AutocastGuard();
  AutocastGuard(const AutocastGuard&) = delete;
  AutocastGuard& operator=(const AutocastGuard&) = delete;

 private:
  DeviceType device_;
  bool prev_enabled_;
  ScalarType prev_dtype_;
  bool prev_cache_enabled_;
};

// Both devices' enabled flags and dtypes as one value: what the JIT autocast pass starts from and
// carries per region (script/passes/autocast_pass.h), and what a Function's optimized graphs are
// specialized on (Note [Function specialization] in runtime/interpreter.h).
struct AutocastContext {
  bool cpu_enabled = false;
  ScalarType cpu_dtype = ScalarType::BFloat16;
  bool cuda_enabled = false;
  ScalarType cuda_dtype = ScalarType::Float16;

  // torch's `operator bool` of its AutocastContext: some device is enabled.
  bool any_enabled() const { return cpu_enabled || cuda_enabled; }
  bool operator==(const AutocastContext&) const = default;
};
// This thread's eager state, as torch seeds its JIT pass (torch/csrc/jit/passes/autocast.cpp,
// Autocast()).
AutocastContext current_autocast_context();

// Whether a TorchScript class name (mangling such as `___torch_mangle_3.` ignored) is one of
// torch's autocast context managers: __torch__.torch.amp.autocast_mode.autocast and its
// torch.cuda.amp / torch.cpu.amp subclasses. `with` on such an object is an autocast region.
bool is_autocast_class_name(std::string_view class_name);

// The dispatcher layer (autocast_layer.cpp), installed with set_layer() when autocast is first
// enabled on any thread.
void autocast_layer(const OpEntry& op, Stack& stack);

}  // namespace ampjit
