// The tracer: while tracing is on for a thread, every op that reaches the tracer dispatch layer
// (which sits below autocast, as in PyTorch) becomes a node of the graph being built. So casts
// inserted by eager autocast during tracing are recorded as explicit aten::to nodes with fixed
// dtypes (torch/csrc/jit/frontend/tracer.cpp), and Python control flow is unrolled.
//
// Values are tracked by tensor identity: example inputs map to graph inputs, results of recorded
// ops to node outputs, an in-place op rebinds its tensor to the new node output, and any other
// tensor met on the way becomes a constant. The state holds a reference to every tensor it maps,
// so an address is never reused while tracing.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/autocast/autocast_regions.h"
#include "runtime/autocast/semantics.h"
#include "runtime/dispatcher.h"
#include "runtime/interpreter.h"
#include "runtime/ir/ir.h"
#include "runtime/module_object.h"

namespace ampjit::tracer {

// Note [Traced autocast scopes]
// In torch, `with autocast(...)` inside traced code only flips thread-local flags: the casts it
// causes are recorded as aten::to nodes with fixed dtypes, and nothing marks the region, so a
// traced autocast(False) is silently lost when script later inlines the trace
// (torch/csrc/jit/frontend/tracer.cpp). ampjit's autocast context manager also tells the tracer
// when a region is entered and left (device, dtype, enabled, and the `with` line), and so does the
// interpreter for the regions a graph run during tracing enters (Note [Autocast regions at run
// time], runtime/autocast/autocast_regions.h). In torchscript semantics every node recorded inside
// keeps that as metadata: the printed graph stays torch's, and the interop layer reads the metadata
// to warn where torch cannot. In eager semantics the region becomes a node (Note [Eager-semantics
// tracing]).
//
// Note [Eager-semantics tracing]
// A trace taken in eager semantics (Note [Autocast semantics], runtime/autocast/semantics.h) must
// give what the Python function gives under *any* later eager autocast state, so it records what
// the user wrote, not what autocast made of it:
//  - Ops are recorded as called. The dispatcher runs autocast above the tracer, so for the
//    duration of the trace the autocast layer is excluded on the tracing thread and the tracer
//    layer calls it itself, below the recording (trace_layer: record the call, then run
//    autocast_layer with the tracer excluded). The values computed while tracing are exactly the
//    eager ones; the casts autocast makes never reach the graph, nor do weight-cache casts (so
//    tracing under autocast needs no cache_enabled=False here).
//  - Each region entered while tracing becomes a prim::AutocastRegion node with the region's
//    constant settings (device_type, dtype, enabled, cache_enabled) and one block that receives
//    the ops recorded until the region is left: torch.export's wrap_with_autocast. At run time the
//    node sets the eager state for its block, so the dispatcher autocasts exactly as eager did.
//  - A value recorded inside a region that is used after it (tensors are tracked by identity, so
//    the tracer learns this only at the use) is lifted out through the region's block outputs and
//    node outputs at that first use, one level per enclosing closed region (visible()).
//  - An autocast state active around the trace call leaves nothing in the graph: at run time the
//    caller's state applies through the dispatcher, as it would to the Python function.
// The result is a Function pinned to eager semantics (jit.trace), so it never runs the JIT
// autocast pass.
//
// The autocast state a node was recorded under: a region as the run-time regions report it
// (Python's autocast context manager and graphs run while tracing both enter it).
using AutocastScope = AutocastRegionEvent;

class TracingState {
 public:
  TracingState();
  std::shared_ptr<Graph> graph;

  // The value for a tensor: its mapped value, or a new constant (inserted at the insert point).
  Value* value_of(const Tensor& t);
  bool is_traced(const TensorImpl* t) const { return env_.count(const_cast<TensorImpl*>(t)) > 0; }
  void bind(const Tensor& t, Value* v);
  // Inputs: binds `t` to a new graph input.
  Value* add_input(const Tensor& t, const std::string& name);
  // An example input: a tensor, or a (nested) tuple or list of tensors, which becomes one graph
  // input unpacked at the top of the graph (torch's rule). Anything else cannot be traced.
  Value* add_input(const IValue& v, const std::string& name);
  // Throws torch's "Type '...' cannot be traced" error unless every input is traceable.
  static void check_traceable_inputs(const std::vector<IValue>& inputs);
  // A module input (`self`): its tensors, and those of its submodules, become prim::GetAttr
  // chains on this input the first time the trace uses them (Note [Module attributes in traces]).
  Value* add_module_input(const Ref<ModuleObject>& root, const std::string& name = "self");
  // The graph output for a traced result: tensors, tuples and lists of them (lists warn when
  // strict, as torch does). Anything else is torch's "Only tensors, lists, tuples ..." error.
  Value* add_output(const IValue& v);

  // Where the op being recorded was called from (set by the frontend's location provider).
  std::function<SourceRange()> location_provider;
  SourceRange location() const { return location_provider ? location_provider() : SourceRange(); }
  // What the trace records (Note [Eager-semantics tracing]); set before tracing starts.
  AutocastSemantics semantics = AutocastSemantics::TorchScript;
  // Autocast scopes entered during tracing (innermost last).
  std::vector<AutocastScope> autocast_scopes;
  // A region entered / left while tracing (Note [Traced autocast scopes]): a scope for the
  // metadata, and in eager semantics a prim::AutocastRegion node that receives the ops recorded
  // until it is left. Leaving with no region entered does nothing.
  void enter_autocast(AutocastScope scope);
  void exit_autocast() noexcept;
  // `v` made usable at the insert point: lifted out of the closed regions it was recorded in.
  Value* visible(Value* v);
  // Diagnostics collected while tracing (the frontend turns them into TracerWarnings).
  std::vector<std::string> warnings;
  void warn(std::string message);
  bool strict = true;

 private:
  struct PendingAttr {
    Ref<TensorImpl> keep;
    std::vector<std::pair<std::string, TypePtr>> path;  // submodule names then the tensor's name
  };
  void collect_attrs(const ModuleObject& m, std::vector<std::pair<std::string, TypePtr>>& path);
  Value* emit_attr_chain(const PendingAttr& a);
  Value* output_value(const IValue& v);

  std::unordered_map<TensorImpl*, std::pair<Ref<TensorImpl>, Value*>> env_;
  std::unordered_map<TensorImpl*, PendingAttr> pending_attrs_;
  std::unordered_map<std::string, Value*> module_values_;  // "", "encoder", "encoder.0", ...
  Value* self_ = nullptr;
  // Eager semantics: the open prim::AutocastRegion nodes (innermost last) and, for each, the
  // node the insert point was before when it was entered.
  std::vector<std::pair<Node*, Node*>> open_regions_;
  // A value recorded in a region -> its region output (one level out), so it is lifted once.
  std::unordered_map<const Value*, Value*> lifted_;
  bool any_region_ = false;  // some region was entered: values may need lifting
};

// The thread's tracing state (nullptr when not tracing).
TracingState* current();

// Records a call of a compiled function (scripted or traced) made while tracing as one
// prim::CallFunction, running `fn` with the recording off (Note [Compiled functions called while
// tracing]); `s` holds the arguments and receives the results, which later ops use as the call's
// outputs.
void record_call(TracingState& st, const std::shared_ptr<Function>& fn, Stack& s);

// Turns tracing on for this thread for the guard's lifetime (and the tracer layer with it).
class TracingGuard {
 public:
  explicit TracingGuard(std::shared_ptr<TracingState> state);
  ~TracingGuard();
  TracingGuard(const TracingGuard&) = delete;
  TracingGuard& operator=(const TracingGuard&) = delete;

 private:
  std::shared_ptr<TracingState> prev_;
  LayerGuard layer_;
  LayerGuard no_autocast_;  // eager semantics: the tracer runs the autocast layer itself
};

// Symbols of the metadata keys the tracer attaches to every node it records.
Symbol meta_autocast_enabled();        // bool: whether any autocast scope was active
Symbol meta_autocast_device();         // int: DeviceType
Symbol meta_autocast_dtype();          // ScalarType
Symbol meta_autocast_where();          // str: "file:line:col" of the innermost scope
Symbol meta_autocast_scope_enabled();  // bool: the innermost scope's `enabled`

// Installs the tracer dispatch layer (called once at start-up by the library).
void install();

}  // namespace ampjit::tracer
