// The dispatcher: every op call runs through four layers, in this order:
//   1. autocast  (casts arguments per the op's policy; runtime/autocast, a pass-through until set)
//   2. tracer    (records the call into a graph while tracing; tracer/, a pass-through until set)
//   3. autograd  (records the call for backward when grad mode is on and an argument requires
//                 grad; runtime/autograd, on for every thread)
//   4. kernel    (the op table's kernel for the device of the tensor arguments)
// A layer is active on a thread when it is included and not excluded in that thread's dispatch
// state; a layer that redispatches calls `redispatch(layer, ...)`, which skips it and the layers
// above it, so it never re-enters itself.
#pragma once
#include <cstdint>

#include "runtime/op_table.h"

namespace ampjit {

enum class DispatchLayer : uint8_t { Autocast = 0, Tracer = 1, Autograd = 2 };
constexpr uint8_t layer_bit(DispatchLayer l) {
  return static_cast<uint8_t>(1u << static_cast<uint8_t>(l));
}

struct DispatchTLS {
  uint8_t included = layer_bit(DispatchLayer::Autograd);
  uint8_t excluded = 0;
};
DispatchTLS& dispatch_tls();

using LayerFn = void (*)(const OpEntry& op, Stack& stack);
void set_layer(DispatchLayer layer, LayerFn fn);

// Runs op on stack (arguments in schema order, defaults filled); leaves the results on the stack.
void dispatch(const OpEntry& op, Stack& stack);
inline void dispatch(OpId id, Stack& stack) {
  dispatch(op_entry(id), stack);
}
// Continues below `from`: called by a layer to run the rest of the stack.
void redispatch(DispatchLayer from, const OpEntry& op, Stack& stack);
// Runs the kernel directly, skipping every layer.
void call_kernel(const OpEntry& op, Stack& stack);

// RAII: turns a layer on (include) or off (exclude) for this thread, restoring on exit.
class LayerGuard {
 public:
  // Include / Exclude add the layer to this thread's included / excluded set; Unexclude takes it
  // out of the excluded set (a region of code that needs a layer an enclosing guard excluded).
  enum Mode { Include, Exclude, Unexclude };
  LayerGuard(DispatchLayer l, Mode m, bool on = true);
  ~LayerGuard();
  LayerGuard(const LayerGuard&) = delete;
  LayerGuard& operator=(const LayerGuard&) = delete;

 private:
  uint8_t saved_included_, saved_excluded_;
};

}  // namespace ampjit
