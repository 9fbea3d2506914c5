// The three-layer dispatch (see dispatcher.h) and device selection for kernels.
#include "runtime/dispatcher.h"

#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/mem_overlap.h"

namespace ampjit {

namespace {
constexpr int kNumLayers = 3;
LayerFn g_layers[kNumLayers] = {};
thread_local DispatchTLS t_dispatch;

// The device an op runs on: that of its tensor arguments (which must agree, except that a 0-dim
// CPU tensor may join tensors of another device, as in torch), else its `device=` argument.
Device op_device(const OpEntry& op, const Stack& stack) {
  const TensorImpl* first = nullptr;
  const TensorImpl* cpu_scalar = nullptr;
  auto visit = [&](const TensorImpl* t) {
    if (!first) {
      first = t;
      return;
    }
    if (t->device == first->device) return;
    if (t->device.is_cpu() && t->sizes.empty()) return;  // CPU scalar with device tensors
    if (first->device.is_cpu() && first->sizes.empty()) {
      cpu_scalar = first;
      first = t;
      return;
    }
    if (op.has(kMixedDevice)) return;
    throw Error(fmt::format(
        "{}: Expected all tensors to be on the same device, but found at least two devices, {} "
        "and {}!",
        op.name, first->device.str(), t->device.str()));
  };
  for (const IValue& v : stack) {
    if (v.is_tensor()) {
      visit(v.tensor_impl());
    } else if (v.is_list()) {
      for (const IValue& e : v.list_elems())
        if (e.is_tensor()) visit(e.tensor_impl());
    }
  }
  (void)cpu_scalar;
  if (first) return first->device;
  if (op.device_arg >= 0 && static_cast<size_t>(op.device_arg) < stack.size()) {
    const IValue& d = stack[op.device_arg];
    if (d.is_device()) return d.to_device();
  }
  return Device();
}
}  // namespace

DispatchTLS& dispatch_tls() {
  return t_dispatch;
}

void set_layer(DispatchLayer layer, LayerFn fn) {
  g_layers[static_cast<int>(layer)] = fn;
}

void call_kernel(const OpEntry& op, Stack& stack) {
  if (op.written_arg < 0) [[likely]]
    return kernel_for(op, op_device(op, stack))(stack);
  // An in-place or out= write: the written storage's version moves on (Note [Version counter]).
  Ref<Storage> written;
  if (static_cast<size_t>(op.written_arg) < stack.size() && stack[op.written_arg].is_tensor()) {
    const TensorImpl& w = *stack[op.written_arg].tensor_impl();
    if (!op.has(kWritesOverlap)) assert_no_internal_overlap(w);  // Note [Overlapping writes]
    AMPJIT_CHECK(!w.is_inference || inference_mode_enabled(),
                 "Inplace update to inference tensor outside InferenceMode is not allowed.You can "
                 "make a clone to get a normal tensor before doing inplace update.See "
                 "https://github.com/pytorch/rfcs/pull/17 for more details.");
    written = w.storage;
  }
  kernel_for(op, op_device(op, stack))(stack);
  if (written) written->bump_version();
}

static inline void run_from(uint8_t active, const OpEntry& op, Stack& stack) {
  for (int l = 0; l < kNumLayers; ++l) {
    if ((active >> l) & 1) {
      if (LayerFn fn = g_layers[l]) return fn(op, stack);
    }
  }
  call_kernel(op, stack);
}

void dispatch(const OpEntry& op, Stack& stack) {
  const uint8_t active = t_dispatch.included & ~t_dispatch.excluded;
  if (active == 0) [[likely]]
    return call_kernel(op, stack);
  run_from(active, op, stack);
}

void redispatch(DispatchLayer from, const OpEntry& op, Stack& stack) {
  const uint8_t below = static_cast<uint8_t>(~((layer_bit(from) << 1) - 1));
  run_from(t_dispatch.included & ~t_dispatch.excluded & below, op, stack);
}

LayerGuard::LayerGuard(DispatchLayer l, Mode m, bool on)
    : saved_included_(t_dispatch.included), saved_excluded_(t_dispatch.excluded) {
  if (!on) return;
  if (m == Include)
    t_dispatch.included |= layer_bit(l);
  else if (m == Exclude)
    t_dispatch.excluded |= layer_bit(l);
  else
    t_dispatch.excluded &= static_cast<uint8_t>(~layer_bit(l));
}

LayerGuard::~LayerGuard() {
  t_dispatch.included = saved_included_;
  t_dispatch.excluded = saved_excluded_;
}

}  // namespace ampjit
