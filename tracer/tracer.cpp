// Recording dispatched ops into a graph (see tracer.h).
#include "tracer/tracer.h"

namespace ampjit::tracer {

namespace {
thread_local std::shared_ptr<TracingState> t_state;

Symbol meta(const char* name) { return Symbol::intern("meta", name); }

// Records one op call: inputs resolved to values, the op run below the tracer, outputs bound.
void trace_layer(const OpEntry& op, Stack& stack) {
  TracingState* st = t_state.get();
  if (!st) return redispatch(DispatchLayer::Tracer, op, stack);
  Graph& g = *st->graph;
  const SourceRange where = st->location_provider ? st->location_provider() : SourceRange();
  std::vector<Value*> inputs;
  inputs.reserve(stack.size());
  for (size_t i = 0; i < stack.size(); ++i) {
    const IValue& v = stack[i];
    const Argument& arg = op.schema.args[i];
    if (v.is_tensor()) {
      inputs.push_back(st->value_of(v.to_tensor()));
    } else if (v.is_list() && arg.type->kind() == TypeKind::List &&
               arg.type->elem()->kind() == TypeKind::Tensor) {
      std::vector<Value*> elems;
      for (const IValue& e : v.list_elems()) elems.push_back(st->value_of(e.to_tensor()));
      Node* l = g.insert(g.create_list(Type::tensor(), elems));
      l->set_source_range(where);
      inputs.push_back(l->output());
    } else {
      Value* c = g.insert_constant(v, where);
      if (v.is_scalar_type()) c->set_type(Type::int_());
      inputs.push_back(c);
    }
  }
  // Keep the inputs alive: an in-place op rebinds them and we need the pre-call identities.
  Stack args = stack;
  {
    // Ops that kernels call internally are implementation details, not part of the trace.
    LayerGuard no_trace(DispatchLayer::Tracer, LayerGuard::Exclude);
    redispatch(DispatchLayer::Tracer, op, stack);
  }
  Node* n = g.insert(g.create_op(op, inputs));
  n->set_source_range(where);
  if (!st->autocast_scopes.empty()) {
    const AutocastScope& s = st->autocast_scopes.back();
    n->meta().emplace_back(meta_autocast_enabled(), IValue(true));
    n->meta().emplace_back(meta_autocast_device(), IValue(static_cast<int64_t>(s.device)));
    n->meta().emplace_back(meta_autocast_dtype(), IValue(s.dtype));
    n->meta().emplace_back(meta_autocast_scope_enabled(), IValue(s.enabled));
    n->meta().emplace_back(meta_autocast_where(), IValue(s.where.location_str()));
  }
  for (size_t i = 0; i < stack.size() && i < n->outputs().size(); ++i) {
    const IValue& r = stack[i];
    Value* out = n->output(i);
    if (r.is_tensor()) {
      const TensorImpl* t = r.tensor_impl();
      out->set_type(Type::tensor_of(t->dtype, std::vector<int64_t>(t->sizes.begin(), t->sizes.end()), t->device));
      st->bind(r.to_tensor(), out);
    } else if (r.is_int()) {
      out->set_type(Type::int_());
    } else if (r.is_double()) {
      out->set_type(Type::float_());
    } else if (r.is_bool()) {
      out->set_type(Type::bool_());
    }
  }
}
}  // namespace

TracingState::TracingState() : graph(std::make_shared<Graph>()) {}

Value* TracingState::value_of(const Tensor& t) {
  auto it = env_.find(t.impl());
  if (it != env_.end()) return it->second.second;
  // A tensor the trace did not produce: it becomes a constant (torch does the same), except that
  // a tensor requiring grad cannot be baked in (torch: "Cannot insert a Tensor that requires
  // grad as a constant").
  AMPJIT_CHECK(!t.requires_grad(),
               "Cannot insert a Tensor that requires grad as a constant. Consider making it a "
               "parameter or input, or detaching the gradient\nTensor:\n{}",
               t.str());
  Value* c = graph->insert_constant(IValue(t));
  bind(t, c);
  return c;
}

void TracingState::bind(const Tensor& t, Value* v) {
  env_[t.impl()] = {t.impl_ref(), v};
}

Value* TracingState::add_input(const Tensor& t, const std::string& name) {
  Value* v = graph->add_input(name);
  v->set_type(Type::tensor_of(t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.device()));
  bind(t, v);
  return v;
}

void TracingState::warn(std::string message) { warnings.push_back(std::move(message)); }

TracingState* current() { return t_state.get(); }

TracingGuard::TracingGuard(std::shared_ptr<TracingState> state)
    : prev_(t_state), layer_(DispatchLayer::Tracer, LayerGuard::Include) {
  t_state = std::move(state);
}

TracingGuard::~TracingGuard() { t_state = std::move(prev_); }

Symbol meta_autocast_enabled() { static Symbol s = meta("autocast"); return s; }
Symbol meta_autocast_device() { static Symbol s = meta("autocast_device"); return s; }
Symbol meta_autocast_dtype() { static Symbol s = meta("autocast_dtype"); return s; }
Symbol meta_autocast_where() { static Symbol s = meta("autocast_where"); return s; }
Symbol meta_autocast_scope_enabled() { static Symbol s = meta("autocast_scope_enabled"); return s; }

void install() { set_layer(DispatchLayer::Tracer, trace_layer); }

namespace {
// The layer is installed when the library loads, so every frontend gets it.
[[maybe_unused]] const bool g_installed = (install(), true);
}  // namespace

}  // namespace ampjit::tracer
