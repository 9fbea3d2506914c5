// The tracer: while tracing is on for a thread, every op that reaches the tracer dispatch layer
// (which sits below autocast, as in PyTorch) becomes a node of the graph being built. So casts
// inserted by eager autocast during tracing are recorded as explicit aten::to nodes with fixed
// dtypes (reference §3), and Python control flow is unrolled.
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

#include "runtime/dispatcher.h"
#include "runtime/ir/ir.h"
#include "runtime/module_object.h"

namespace ampjit::tracer {

// Note [Traced autocast scopes]
// In torch, `with autocast(...)` inside traced code only flips thread-local flags: the casts it
// causes are recorded as aten::to nodes with fixed dtypes, and nothing marks the region, so a
// traced autocast(False) is silently lost when script later inlines the trace (reference §3).
// ampjit's autocast context manager also tells the tracer when a region is entered and left
// (device, dtype, enabled, and the `with` line), and every node recorded inside keeps that as
// metadata. The printed graph stays torch's (torchscript semantics); the interop layer reads the
// metadata to warn where torch cannot, and the eager semantics mode to keep the region.
//
// The autocast state a node was recorded under.
struct AutocastScope {
  DeviceType device = DeviceType::CPU;
  ScalarType dtype = ScalarType::BFloat16;
  bool enabled = true;
  SourceRange where;  // the `with autocast(...)` line
};

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
  // Autocast scopes entered during tracing (innermost last).
  std::vector<AutocastScope> autocast_scopes;
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
};

// The thread's tracing state (nullptr when not tracing).
TracingState* current();

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
};

// Symbols of the metadata keys the tracer attaches to every node it records.
Symbol meta_autocast_enabled();   // bool: whether any autocast scope was active
Symbol meta_autocast_device();    // int: DeviceType
Symbol meta_autocast_dtype();     // ScalarType
Symbol meta_autocast_where();     // str: "file:line:col" of the innermost scope
Symbol meta_autocast_scope_enabled();  // bool: the innermost scope's `enabled`

// Installs the tracer dispatch layer (called once at start-up by the library).
void install();

}  // namespace ampjit::tracer
