// Autocast regions in graphs: the prim::AutocastRegion node, the settings of a `with autocast(...)`
// object, and entering and leaving regions at run time, exception-safe.
//
//   %y : Tensor = prim::AutocastRegion[device_type="cpu", dtype=15, enabled=0, cache_enabled=0]()
//     block0():
//       %z : Tensor = aten::mm(%a, %b)
//       -> (%z)
//
// Note [Autocast regions at run time]
// Two graph forms mean "run this code under autocast(device, dtype, enabled, cache_enabled)":
//  - prim::AutocastRegion: a node with constant settings and one block (no block inputs; its
//    outputs are the node's outputs). The eager-semantics tracer records one per `with autocast`
//    entered while tracing (torch.export's wrap_with_autocast). It always means what it says,
//    whatever the semantics: it has no torchscript-semantics counterpart to be faithful to. (The
//    JIT autocast pass treats it as a scope with those settings, so the two agree.)
//  - prim::Enter(obj) ... prim::Exit(obj) on an autocast object (prim::CreateObject of
//    __torch__.torch.amp.autocast_mode.autocast or its cpu/cuda subclasses, configured by
//    prim::SetAttr of `_enabled`, `device`, `fast_dtype` and optionally `_cache_enabled`): what the
//    script compiler emits for `with autocast(...)`. In torchscript semantics it is inert at run
//    time (the JIT autocast pass alone gives it meaning, as in torch). In eager semantics Enter
//    reads the object's attributes *at run time* (so `enabled` may be a runtime bool and one object
//    may be entered again) and enters the region exactly as the Python context manager does;
//    Exit leaves it; Enter returns the object (`with autocast() as ac:`).
// The interpreter compiles both to enter/exit instructions (Code, per semantics) and keeps, per
// run of a graph, an AutocastRegionStack: the regions entered and not yet left. Leaving the run by
// an exception destroys the stack, which leaves every region still entered, innermost first; so
// an exception between enter and exit never leaves this thread's autocast state changed.
// Entering does what ampjit.amp.autocast.__enter__ does (AutocastGuard): save the device's enabled
// flag and dtype and the cache flag; set enabled; set the dtype only when enabled; increment the
// nesting; set the cache flag. Leaving restores them and clears the weight-cast cache when the
// nesting returns to 0. While the thread is tracing, entering and leaving are reported to the
// tracer as the Python context manager reports them (Note [Traced autocast scopes]), through the
// hooks below: the runtime cannot see tracer/, so the tracer installs them when the library loads.
#pragma once
#include <memory>
#include <optional>
#include <vector>

#include "runtime/autocast/autocast_state.h"
#include "runtime/ir/ir.h"
#include "runtime/module_object.h"

namespace ampjit {

// The settings of one region.
struct AutocastRegionSpec {
  DeviceType device = DeviceType::CPU;
  bool enabled = true;
  // Unset: the dtype autocast currently has for the device (what eager's autocast() reads).
  std::optional<ScalarType> dtype;
  // Unset: the current cache flag.
  std::optional<bool> cache_enabled;
};

// A new prim::AutocastRegion node with these settings (dtype and cache flag must be set) and its
// empty block; not inserted anywhere.
Node* create_autocast_region(Graph& g, const AutocastRegionSpec& spec);
// The settings of a prim::AutocastRegion node; Error naming the node when they are malformed.
// Also accepts the forms the text parser gives back (ints for bools and dtypes).
AutocastRegionSpec autocast_region_spec(const Node& region);

// The settings of an autocast object at run time (eager-semantics prim::Enter), with the checks
// and warnings of eager autocast's __init__: an unknown device is an error, CUDA without a GPU and
// an unsupported CPU dtype disable the region with eager's UserWarning. `where` locates both.
AutocastRegionSpec autocast_object_spec(const ModuleObject& obj, const SourceRange& where);

// A region entered at run time, as the tracer hears of it.
struct AutocastRegionEvent {
  DeviceType device = DeviceType::CPU;
  ScalarType dtype = ScalarType::BFloat16;
  bool enabled = true;
  bool cache_enabled = true;
  SourceRange where;  // the `with autocast(...)` line
};
// How the run-time regions reach a tracer: `enter` returns whether this thread's tracer recorded
// the region (then `exit` is called when it is left). Installed once, when the library loads
// (tracer/tracer.cpp); none installed: nothing is reported.
struct AutocastRegionHooks {
  bool (*enter)(const AutocastRegionEvent&);
  void (*exit)();
};
void set_autocast_region_hooks(const AutocastRegionHooks* hooks);

// The regions one run of a graph has entered and not yet left (Note [Autocast regions at run
// time]). `owner` identifies what entered (the autocast object, or the region node) so that leaving
// can check it leaves the innermost region.
class AutocastRegionStack {
 public:
  AutocastRegionStack() = default;
  ~AutocastRegionStack();
  AutocastRegionStack(const AutocastRegionStack&) = delete;
  AutocastRegionStack& operator=(const AutocastRegionStack&) = delete;

  void enter(const AutocastRegionSpec& spec, const void* owner, const SourceRange& where = {});
  void exit(const void* owner);
  size_t depth() const { return entries_.size(); }

 private:
  struct Entry {
    const void* owner;
    std::unique_ptr<AutocastGuard> guard;
    bool traced;  // reported to the tracer hooks
  };
  void leave_top() noexcept;
  std::vector<Entry> entries_;
};

}  // namespace ampjit
