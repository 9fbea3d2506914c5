// The thread-local eager autocast state, AutocastGuard and the weight-cast cache.
#include "runtime/autocast/autocast_state.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <unordered_map>

#include "runtime/autocast/policy_profiles.h"
#include "runtime/autograd/autograd.h"
#include "runtime/caches.h"
#include "runtime/dispatcher.h"

namespace ampjit {

namespace {

// Note [Weight-cast cache]
// Within an autocast region the same weights are cast again and again (every forward step of a
// layer casts its weight to the lower dtype). As torch does, casts *to the lower dtype* of tensors
// that are float32, require grad, are leaves and are not views are cached, per thread, until the
// outermost region exits (clear_autocast_cache).
// The key is the source's identity (TensorImpl*); an entry holds one cast per lower dtype (torch
// holds one cast per source, so a nested region with another dtype would get the outer region's
// cast; we do not).
// The key must never match a *different* tensor that reuses a freed source's address. torch keeps
// a weak_intrusive_ptr to the source, which keeps the TensorImpl allocated (not its data) while
// the entry lives. ampjit's TensorImpl has neither a weak count nor a generation number, so the
// entry holds a strong reference: the address cannot be reused while the entry exists, and a
// lookup can never return a stale cast. So that dropped weights are not held for a whole region,
// entries whose source only the cache references are swept whenever the cache has doubled since
// the last sweep; all entries go when the outermost region exits. (With a generation number in
// TensorImpl, the entry could store it instead and hold nothing.)
struct CacheEntry {
  Ref<TensorImpl> src;  // pins the address: Note [Weight-cast cache]
  Tensor cast[2];       // to float16, to bfloat16

  Tensor& slot(ScalarType to) { return cast[to == ScalarType::BFloat16]; }

  // Whether only the cache keeps the source alive, so the entry can go. Besides the cache's own
  // reference, a cast recorded by autograd reaches the source through its ToCopyBackward node and
  // the source's AccumulateGrad; those count as the cache's when nothing else holds the casts,
  // their nodes or the accumulator.
  bool only_cache_holds_source() const {
    const uint32_t uses = src->use_count();
    if (uses == 1) return true;
    if (uses != 2 || !src->autograd) return false;
    const std::shared_ptr<autograd::Node> acc = src->autograd->grad_accumulator.lock();
    if (!acc) return false;
    long from_casts = 0;
    for (const Tensor& c : cast) {
      if (!c.defined()) continue;
      if (c.impl()->use_count() != 1) return false;
      const std::shared_ptr<autograd::Node> fn = autograd::grad_fn(c);
      if (!fn) continue;
      if (fn.use_count() != 2) return false;  // the cast's and this copy
      for (const autograd::Edge& e : fn->next_edges) from_casts += e.fn == acc;
    }
    return acc.use_count() == 1 + from_casts;
  }
};
constexpr size_t kMinSweepSize = 64;

struct DeviceState {
  bool enabled = false;
  ScalarType dtype;
};

struct AutocastTLS {
  DeviceState device[kNumDeviceTypes] = {{false, ScalarType::BFloat16},
                                         {false, ScalarType::Float16}};
  int nesting = 0;
  bool cache_enabled = true;
  std::unordered_map<const TensorImpl*, CacheEntry> cache;
  size_t sweep_at = kMinSweepSize;

  void sweep() {
    std::erase_if(cache, [](const auto& kv) { return kv.second.only_cache_holds_source(); });
    sweep_at = std::max(kMinSweepSize, 2 * cache.size());
  }
};
thread_local AutocastTLS t_autocast;

DeviceState& device_state(DeviceType d) {
  return t_autocast.device[static_cast<int>(d)];
}

// Includes the autocast layer for this thread exactly when some device has autocast enabled.
void sync_dispatch_layer() {
  bool any = false;
  for (const DeviceState& d : t_autocast.device) any |= d.enabled;
  DispatchTLS& tls = dispatch_tls();
  const uint8_t bit = layer_bit(DispatchLayer::Autocast);
  tls.included = any ? (tls.included | bit) : (tls.included & ~bit);
}

void set_enabled_unchecked(DeviceType device, bool enabled) noexcept {
  device_state(device).enabled = enabled;
  sync_dispatch_layer();
}

void check_dtype(DeviceType device, ScalarType dtype) {
  AMPJIT_CHECK_T(ValueError, is_reduced_floating(dtype),
                 "autocast on {} supports the dtypes float16 and bfloat16, not {}",
                 device_type_name(device), dtype_name(dtype));
}

// Before a thread first enables autocast: the profile is applied and the layer is installed.
void prepare_enable() {
  ensure_autocast_profile();
  static std::once_flag installed;
  std::call_once(installed, [] { set_layer(DispatchLayer::Autocast, autocast_layer); });
}

bool is_cacheable(const TensorImpl& t, ScalarType to, DeviceType device) {
  return t_autocast.cache_enabled && to == device_state(device).dtype &&
         t.dtype == ScalarType::Float32 && t.requires_grad && t.is_leaf && !t.is_view;
}

Tensor cast_below_autocast(const Tensor& t, ScalarType to) {
  Stack s{IValue(t), IValue(to), IValue(false), IValue(false)};
  redispatch(DispatchLayer::Autocast, op_entry(OpId::to_dtype), s);
  return s[0].to_tensor();
}

}  // namespace

bool is_autocast_enabled(DeviceType device) {
  return device_state(device).enabled;
}

void set_autocast_enabled(DeviceType device, bool enabled) {
  if (enabled) prepare_enable();
  set_enabled_unchecked(device, enabled);
}

ScalarType get_autocast_dtype(DeviceType device) {
  return device_state(device).dtype;
}

void set_autocast_dtype(DeviceType device, ScalarType dtype) {
  check_dtype(device, dtype);
  device_state(device).dtype = dtype;
}

AutocastContext current_autocast_context() {
  const AutocastTLS& t = t_autocast;
  const DeviceState& cpu = t.device[static_cast<int>(DeviceType::CPU)];
  const DeviceState& cuda = t.device[static_cast<int>(DeviceType::CUDA)];
  return AutocastContext{cpu.enabled, cpu.dtype, cuda.enabled, cuda.dtype};
}

bool is_autocast_class_name(std::string_view name) {
  // torch's removeTorchMangle: drop every "___torch_mangle_<digits>." segment.
  std::string plain;
  constexpr std::string_view kMangle = "___torch_mangle_";
  for (size_t i = 0; i < name.size();) {
    if (name.substr(i, kMangle.size()) == kMangle) {
      size_t j = i + kMangle.size();
      while (j < name.size() && name[j] >= '0' && name[j] <= '9') ++j;
      if (j > i + kMangle.size() && j < name.size() && name[j] == '.') {
        i = j + 1;
        continue;
      }
    }
    plain += name[i++];
  }
  return plain == "__torch__.torch.amp.autocast_mode.autocast" ||
         plain == "__torch__.torch.cuda.amp.autocast_mode.autocast" ||
         plain == "__torch__.torch.cpu.amp.autocast_mode.autocast";
}

ScalarType default_autocast_dtype(DeviceType device) {
  return device == DeviceType::CPU ? ScalarType::BFloat16 : ScalarType::Float16;
}

int autocast_increment_nesting() {
  return ++t_autocast.nesting;
}

int autocast_decrement_nesting() {
  AMPJIT_CHECK(t_autocast.nesting > 0, "autocast_decrement_nesting: the nesting is already 0");
  return --t_autocast.nesting;
}

int autocast_nesting() {
  return t_autocast.nesting;
}

bool is_autocast_cache_enabled() {
  return t_autocast.cache_enabled;
}
void set_autocast_cache_enabled(bool enabled) {
  t_autocast.cache_enabled = enabled;
}

void clear_autocast_cache() {
  t_autocast.cache.clear();
  t_autocast.sweep_at = kMinSweepSize;
}

size_t autocast_cache_size() {
  size_t n = 0;
  for (const auto& [src, entry] : t_autocast.cache)
    n += entry.cast[0].defined() + entry.cast[1].defined();
  return n;
}

namespace {
[[maybe_unused]] const bool g_cache_registered =
    register_cache({"autocast weight casts",
                    "the calling thread's casts, cleared when its outermost autocast region exits",
                    autocast_cache_size, clear_autocast_cache});
}  // namespace

bool is_autocast_eligible(const Tensor& t, DeviceType device) {
  return t.defined() && t.device().type == device && t.is_floating_point() &&
         t.dtype() != ScalarType::Float64;
}

Tensor autocast_cached_cast(ScalarType to, const Tensor& t, DeviceType device) {
  if (!is_autocast_eligible(t, device) || t.dtype() == to) return t;
  if (!is_cacheable(*t.impl(), to, device)) return cast_below_autocast(t, to);
  AutocastTLS& s = t_autocast;
  auto it = s.cache.find(t.impl());
  if (it == s.cache.end()) {
    if (s.cache.size() >= s.sweep_at) s.sweep();
    it = s.cache.emplace(t.impl(), CacheEntry{t.impl_ref(), {}}).first;
  }
  Tensor& cast = it->second.slot(to);
  if (!cast.defined()) {
    // Recorded by autograd below (ToCopyBackward0 to the float32 weight), so the cast is a non-leaf
    // that requires grad while grad mode is on: its gradient flows back to the weight; a trace that
    // meets it later (the cache outlives the trace) refuses it as a constant, which is torch's
    // behavior and the reason cache_enabled=False exists (aten/src/ATen/autocast_mode.cpp,
    // cached_cast).
    cast = cast_below_autocast(t, to);
  }
  return cast;
}

AutocastGuard::AutocastGuard(DeviceType device, bool enabled, std::optional<ScalarType> dtype,
                             std::optional<bool> cache_enabled)
    : device_(device),
      prev_enabled_(is_autocast_enabled(device)),
      prev_dtype_(get_autocast_dtype(device)),
      prev_cache_enabled_(is_autocast_cache_enabled()) {
  // Everything that can throw happens before the state changes.
  if (dtype) check_dtype(device, *dtype);
  if (enabled) prepare_enable();
  set_enabled_unchecked(device, enabled);
  device_state(device).dtype = dtype.value_or(prev_dtype_);
  ++t_autocast.nesting;
  t_autocast.cache_enabled = cache_enabled.value_or(prev_cache_enabled_);
}

AutocastGuard::~AutocastGuard() {
  if (--t_autocast.nesting == 0) clear_autocast_cache();
  set_enabled_unchecked(device_, prev_enabled_);
  device_state(device_).dtype = prev_dtype_;
  t_autocast.cache_enabled = prev_cache_enabled_;
}

}  // namespace ampjit
