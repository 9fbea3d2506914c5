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

namespace ampjit::tracer {

// The autocast state a node was recorded under, kept as node metadata (never printed) so the
// interop layer can tell, later, what a traced region meant (Note [Traced autocast scopes]).
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

  // Where the op being recorded was called from (set by the frontend's location provider).
  std::function<SourceRange()> location_provider;
  // Autocast scopes entered during tracing (innermost last).
  std::vector<AutocastScope> autocast_scopes;
  // Diagnostics collected while tracing (the frontend turns them into TracerWarnings).
  std::vector<std::string> warnings;
  void warn(std::string message);
  bool strict = true;

 private:
  std::unordered_map<TensorImpl*, std::pair<Ref<TensorImpl>, Value*>> env_;
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
