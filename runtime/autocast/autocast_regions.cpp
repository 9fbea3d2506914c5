// Autocast regions: the region node, autocast objects, and the run-time region stack (see
// autocast_regions.h).
#include "runtime/autocast/autocast_regions.h"

#include <atomic>

#include "runtime/autocast/policy_profiles.h"
#include "runtime/diagnostic.h"
#include "runtime/tensor.h"

namespace ampjit {

namespace {

std::string where_str(const Node& n) {
  return n.source_range().valid() ? " at " + n.source_range().location_str() : "";
}

std::optional<bool> as_bool(const IValue& v) {
  if (v.is_bool()) return v.to_bool();
  if (v.is_int() && (v.to_int() == 0 || v.to_int() == 1)) return v.to_int() != 0;
  return std::nullopt;
}

// A dtype given as a ScalarType or as torch's dtype code (TorchScript's int encoding).
std::optional<ScalarType> as_dtype(const IValue& v) {
  if (v.is_scalar_type()) return v.to_scalar_type();
  if (v.is_int()) return from_torch_dtype_code(v.to_int());
  return std::nullopt;
}

DeviceType parse_device(const std::string& d, const std::string& context) {
  if (d == "cpu") return DeviceType::CPU;
  if (d == "cuda") return DeviceType::CUDA;
  throw Error(fmt::format(
      "User specified autocast device_type must be 'cuda' or 'cpu', but got '{}'{}", d, context));
}

}  // namespace

Node* create_autocast_region(Graph& g, const AutocastRegionSpec& spec) {
  AMPJIT_CHECK(spec.dtype && spec.cache_enabled,
               "create_autocast_region: the dtype and cache flag must be set");
  Node* n = g.create(sym::prim::AutocastRegion, {}, 0);
  n->set_attr(sym::attr::device_type, IValue(std::string(device_type_name(spec.device))));
  n->set_attr(sym::attr::dtype, IValue(*spec.dtype));
  n->set_attr(sym::attr::enabled, IValue(spec.enabled));
  n->set_attr(sym::attr::cache_enabled, IValue(*spec.cache_enabled));
  n->add_block();
  return n;
}

AutocastRegionSpec autocast_region_spec(const Node& n) {
  const std::string at = where_str(n);
  AMPJIT_CHECK(n.kind() == sym::prim::AutocastRegion,
               "internal error: {} is not a prim::AutocastRegion", n.kind().qualified());
  auto get = [&](Symbol name) -> const IValue& {
    AMPJIT_CHECK(n.has_attr(name), "prim::AutocastRegion{}: missing the '{}' attribute", at,
                 name.name());
    return n.attr(name);
  };
  AutocastRegionSpec spec;
  const IValue& device = get(sym::attr::device_type);
  AMPJIT_CHECK(device.is_string(), "prim::AutocastRegion{}: device_type must be a string, got {}",
               at, device.repr());
  spec.device = parse_device(device.to_string_ref(), at);
  const std::optional<bool> enabled = as_bool(get(sym::attr::enabled));
  AMPJIT_CHECK(enabled, "prim::AutocastRegion{}: enabled must be a bool", at);
  spec.enabled = *enabled;
  const std::optional<ScalarType> dtype = as_dtype(get(sym::attr::dtype));
  AMPJIT_CHECK(
      dtype && is_reduced_floating(*dtype),
      "prim::AutocastRegion{}: dtype must be float16 or bfloat16 (torch codes 5 or 15), got {}", at,
      n.attr(sym::attr::dtype).repr());
  spec.dtype = *dtype;
  if (n.has_attr(sym::attr::cache_enabled)) {
    const std::optional<bool> cache = as_bool(n.attr(sym::attr::cache_enabled));
    AMPJIT_CHECK(cache, "prim::AutocastRegion{}: cache_enabled must be a bool", at);
    spec.cache_enabled = *cache;
  }
  return spec;
}

AutocastRegionSpec autocast_object_spec(const ModuleObject& obj, const SourceRange& where) {
  const std::string at = where.valid() ? " at " + where.location_str() : "";
  auto find = [&](const char* name) -> const IValue* {
    const int s = obj.slot(name);
    return s < 0 ? nullptr : &obj.attrs[static_cast<size_t>(s)].second;
  };
  AutocastRegionSpec spec;
  const IValue* device = find("device");
  AMPJIT_CHECK(device && device->is_string(),
               "with {}{}: the autocast object has no `device` string attribute", obj.class_name,
               at);
  spec.device = parse_device(device->to_string_ref(), at);
  const IValue* enabled = find("_enabled");
  const std::optional<bool> on = enabled ? as_bool(*enabled) : std::nullopt;
  AMPJIT_CHECK(on, "with {}{}: the autocast object has no `_enabled` bool attribute",
               obj.class_name, at);
  spec.enabled = *on;
  if (const IValue* dt = find("fast_dtype"); dt && !dt->is_none()) {
    spec.dtype = as_dtype(*dt);
    AMPJIT_CHECK(spec.dtype.has_value(), "with {}{}: fast_dtype must be a dtype or None, got {}",
                 obj.class_name, at, dt->repr());
  }
  if (const IValue* cache = find("_cache_enabled"); cache && !cache->is_none()) {
    spec.cache_enabled = as_bool(*cache);
    AMPJIT_CHECK(spec.cache_enabled.has_value(),
                 "with {}{}: _cache_enabled must be a bool or None, got {}", obj.class_name, at,
                 cache->repr());
  }
  // What ampjit.amp.autocast.__init__ checks (frontend/ampjit/amp/autocast_mode.py), same words.
  const ScalarType dtype = spec.dtype.value_or(get_autocast_dtype(spec.device));
  if (spec.device == DeviceType::CUDA) {
    if (spec.enabled && !Storage::has_device_allocator(DeviceType::CUDA)) {
      warn(WarningCategory::User,
           "User provided device_type of 'cuda', but CUDA is not available. Disabling", where);
      spec.enabled = false;
    }
    AMPJIT_CHECK(is_reduced_floating(dtype),
                 "In CUDA autocast, the target dtype must be torch.float16 or torch.bfloat16{}",
                 at);
  } else {
    const bool f16_ok = get_autocast_profile() == "torch-2";
    const bool supported =
        dtype == ScalarType::BFloat16 || (f16_ok && dtype == ScalarType::Float16);
    if (spec.enabled && !supported) {
      warn(WarningCategory::User,
           fmt::format(
               "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
               "CPU Autocast only supports dtype of {} currently.",
               f16_ok ? "torch.bfloat16 and torch.float16" : "torch.bfloat16"),
           where);
      spec.enabled = false;
    }
  }
  return spec;
}

namespace {
std::atomic<const AutocastRegionHooks*> g_hooks{nullptr};
}  // namespace

void set_autocast_region_hooks(const AutocastRegionHooks* hooks) {
  g_hooks.store(hooks);
}

// ---- The run-time stack -------------------------------------------------------------------------

void AutocastRegionStack::enter(const AutocastRegionSpec& spec, const void* owner,
                                const SourceRange& where) {
  const ScalarType dtype = spec.dtype.value_or(get_autocast_dtype(spec.device));
  entries_.reserve(entries_.size() + 1);  // so that nothing throws after the state changed
  auto guard = std::make_unique<AutocastGuard>(
      spec.device, spec.enabled, spec.enabled ? std::optional<ScalarType>(dtype) : std::nullopt,
      spec.cache_enabled);
  const AutocastRegionHooks* hooks = g_hooks.load();
  const bool traced =
      hooks && hooks->enter(AutocastRegionEvent{spec.device, dtype, spec.enabled,
                                                is_autocast_cache_enabled(), where});
  // (enter may throw: the guard restores the state)
  entries_.push_back(Entry{owner, std::move(guard), traced});
}

void AutocastRegionStack::exit(const void* owner) {
  AMPJIT_CHECK(!entries_.empty() && entries_.back().owner == owner,
               "internal error: leaving an autocast region that is not the innermost one entered");
  leave_top();
}

void AutocastRegionStack::leave_top() noexcept {
  Entry& e = entries_.back();
  if (e.traced) {
    if (const AutocastRegionHooks* hooks = g_hooks.load()) hooks->exit();
  }
  entries_.pop_back();  // ~AutocastGuard restores the state
}

AutocastRegionStack::~AutocastRegionStack() {
  while (!entries_.empty()) leave_top();
}

}  // namespace ampjit
