// Recording dispatched ops into a graph (see tracer.h).
#include "tracer/tracer.h"

#include "runtime/ops.h"

#include <cctype>

namespace ampjit::tracer {

namespace {
thread_local std::shared_ptr<TracingState> t_state;

Symbol meta(const char* name) {
  return Symbol::intern("meta", name);
}

constexpr uint8_t kAutocastBit = layer_bit(DispatchLayer::Autocast);
constexpr uint8_t kTracerBit = layer_bit(DispatchLayer::Tracer);

// Runs a recorded op the way eager runs it, below the recording (Note [Eager-semantics tracing]):
// the tracer excluded and the autocast layer, excluded for the trace, active again, so the op and
// the ops its kernel calls are autocast exactly as outside a trace.
void run_below_recording(const OpEntry& op, Stack& stack) {
  DispatchTLS& tls = dispatch_tls();
  struct Restore {
    DispatchTLS& tls;
    uint8_t excluded;
    ~Restore() { tls.excluded = excluded; }
  } restore{tls, tls.excluded};
  tls.excluded = static_cast<uint8_t>((tls.excluded | kTracerBit) & ~kAutocastBit);
  dispatch(op, stack);
}

// Records one op call: inputs resolved to values, the op run below the tracer, outputs bound.
void trace_layer(const OpEntry& op, Stack& stack) {
  TracingState* st = t_state.get();
  if (!st) return redispatch(DispatchLayer::Tracer, op, stack);
  Graph& g = *st->graph;
  const SourceRange where = st->location();
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
  if (st->semantics == AutocastSemantics::Eager) {
    run_below_recording(op, stack);
    // A dtype conversion that is a no-op now (v.float() on a float32 v) returns v itself; at run
    // time, under another autocast state, it may convert. The trace must tell the two apart (it
    // maps tensors by identity), so the result is made a tensor of its own, with the same values.
    if ((op.base_name == "aten::to" || op.base_name == "aten::type_as") && !stack.empty() &&
        stack[0].is_tensor()) {
      const TensorImpl* out = stack[0].tensor_impl();
      for (const IValue& in : args)
        if (in.is_tensor() && in.tensor_impl() == out) {
          LayerGuard no_layers(DispatchLayer::Tracer, LayerGuard::Exclude);
          stack[0] = IValue(Tensor(ops::clone(stack[0].to_tensor())));
          break;
        }
    }
  } else {
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
      out->set_type(Type::tensor_of(
          t->dtype, std::vector<int64_t>(t->sizes.begin(), t->sizes.end()), t->device));
      st->bind(r.to_tensor(), out);
    } else if (r.is_list() && !r.list_elems().empty() && r.list_elems()[0].is_tensor()) {
      // A Tensor[] result (chunk, split, unbind, meshgrid): unpacked, as torch's trace does, so
      // each tensor the program goes on using has its value.
      const auto& el = r.list_elems();
      out->set_type(Type::list(Type::tensor()));
      Node* unpack = g.insert(g.create(sym::prim::ListUnpack, {out}, el.size()));
      unpack->set_source_range(where);
      for (size_t k = 0; k < el.size(); ++k) {
        const TensorImpl* t = el[k].tensor_impl();
        unpack->output(k)->set_type(Type::tensor_of(
            t->dtype, std::vector<int64_t>(t->sizes.begin(), t->sizes.end()), t->device));
        st->bind(el[k].to_tensor(), unpack->output(k));
      }
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
  if (it != env_.end()) {
    if (any_region_) it->second.second = visible(it->second.second);
    return it->second.second;
  }
  if (auto p = pending_attrs_.find(t.impl()); p != pending_attrs_.end()) {
    Value* v = emit_attr_chain(p->second);
    bind(t, v);
    return v;
  }
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
  v->set_type(Type::tensor_of(t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                              t.device()));
  bind(t, v);
  return v;
}

namespace {
// Python-style type names for diagnostics: Tensor, int, Tuple[Tensor, int], List[Tensor].
std::string py_type_name(const IValue& v) {
  if (v.is_tensor()) return "Tensor";
  if (v.is_bool()) return "bool";
  if (v.is_int()) return "int";
  if (v.is_double()) return "float";
  if (v.is_string()) return "str";
  if (v.is_none()) return "NoneType";
  if (v.is_tuple() || v.is_list()) {
    const auto& el = v.is_tuple() ? v.tuple_elems() : v.list_elems();
    std::string s = v.is_tuple() ? "Tuple[" : "List[";
    if (v.is_list()) return s + (el.empty() ? "Tensor" : py_type_name(el[0])) + "]";
    for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + py_type_name(el[i]);
    return s + "]";
  }
  if (v.is_object()) return v.object()->type_name();
  return v.repr();
}

bool traceable(const IValue& v) {
  if (v.is_tensor()) return true;
  if (!v.is_tuple() && !v.is_list()) return false;
  for (const IValue& e : v.is_tuple() ? v.tuple_elems() : v.list_elems())
    if (!traceable(e)) return false;
  return true;
}

TypePtr traced_type(const IValue& v) {
  if (v.is_tensor()) {
    const Tensor t = v.to_tensor();
    return Type::tensor_of(t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                           t.device());
  }
  const auto& el = v.is_tuple() ? v.tuple_elems() : v.list_elems();
  if (v.is_list()) return Type::list(Type::tensor());
  std::vector<TypePtr> ts;
  for (const IValue& e : el) ts.push_back(traced_type(e));
  return Type::tuple(std::move(ts));
}
}  // namespace

void TracingState::check_traceable_inputs(const std::vector<IValue>& inputs) {
  bool ok = true;
  for (const IValue& v : inputs) ok = ok && traceable(v);
  if (ok) return;
  std::string t = "Tuple[";
  for (size_t i = 0; i < inputs.size(); ++i) t += (i ? ", " : "") + py_type_name(inputs[i]);
  throw Error(
      fmt::format("Type '{}]' cannot be traced. Only Tensors and (possibly nested) Lists, "
                  "Dicts, and Tuples of Tensors can be traced",
                  t));
}

Value* TracingState::add_input(const IValue& v, const std::string& name) {
  if (v.is_tensor()) return add_input(v.to_tensor(), name);
  check_traceable_inputs({v});
  Value* in = graph->add_input(name);
  in->set_type(traced_type(v));
  // Unpack recursively at the top of the graph so each tensor has its own value.
  std::function<void(const IValue&, Value*)> unpack = [&](const IValue& c, Value* cv) {
    const auto& el = c.is_tuple() ? c.tuple_elems() : c.list_elems();
    Node* u = graph->insert(graph->create(
        c.is_tuple() ? sym::prim::TupleUnpack : sym::prim::ListUnpack, {cv}, el.size()));
    for (size_t i = 0; i < el.size(); ++i) {
      u->output(i)->set_type(traced_type(el[i]));
      if (el[i].is_tensor())
        bind(el[i].to_tensor(), u->output(i));
      else
        unpack(el[i], u->output(i));
    }
  };
  unpack(v, in);
  return in;
}

// Note [Module attributes in traces]
// torch.jit.trace on a module gives a graph whose first input is the module and whose weights are
// read with prim::GetAttr (through each submodule on the way), so that the traced module shares
// its parameters with the Python one and can be re-weighted. The tracer meets a weight only as a
// tensor passed to an op; so every tensor attribute of the module tree is registered up front,
// and the GetAttr chain is emitted where the trace first uses it (a use the chain dominates). A
// submodule's GetAttr is emitted once and shared by all its weights.
Value* TracingState::add_module_input(const Ref<ModuleObject>& root, const std::string& name) {
  self_ = graph->add_input(name);
  self_->set_type(Type::named(TypeKind::Object, root->class_name));
  module_values_[""] = self_;
  std::vector<std::pair<std::string, TypePtr>> path;
  collect_attrs(*root, path);
  return self_;
}

void TracingState::collect_attrs(const ModuleObject& m,
                                 std::vector<std::pair<std::string, TypePtr>>& path) {
  for (const auto& [name, v] : m.attrs) {
    if (v.is_tensor()) {
      const Tensor t = v.to_tensor();
      if (pending_attrs_.count(t.impl()))
        continue;  // shared weights: the first path wins, as in torch
      PendingAttr a{t.impl_ref(), path};
      a.path.emplace_back(name, Type::tensor());
      pending_attrs_.emplace(t.impl(), std::move(a));
    } else if (v.is_object()) {
      if (auto* sub = dynamic_cast<const ModuleObject*>(v.object())) {
        path.emplace_back(name, Type::named(TypeKind::Object, sub->class_name));
        collect_attrs(*sub, path);
        path.pop_back();
      }
    }
  }
}

Value* TracingState::emit_attr_chain(const PendingAttr& a) {
  Value* cur = self_;
  std::string key;
  for (size_t i = 0; i < a.path.size(); ++i) {
    const auto& [name, type] = a.path[i];
    const bool last = i + 1 == a.path.size();
    key += (key.empty() ? "" : ".") + name;
    if (!last) {
      if (auto it = module_values_.find(key); it != module_values_.end()) {
        cur = it->second = visible(it->second);
        continue;
      }
    }
    Node* g = graph->insert(graph->create(sym::prim::GetAttr, {cur}));
    g->set_attr(sym::attr::name, IValue(name));
    g->output()->set_type(type);
    g->output()->set_debug_name(std::isdigit(static_cast<unsigned char>(name[0])) ? "_" + name
                                                                                  : name);
    cur = g->output();
    if (!last) module_values_[key] = cur;
  }
  const Tensor t(a.keep);
  cur->set_type(Type::tensor_of(t.dtype(), std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                                t.device()));
  return cur;
}

Value* TracingState::output_value(const IValue& v) {
  if (v.is_tensor()) return value_of(v.to_tensor());
  if (v.is_tuple() || v.is_list()) {
    std::vector<Value*> el;
    for (const IValue& e : v.is_tuple() ? v.tuple_elems() : v.list_elems())
      el.push_back(output_value(e));
    if (v.is_tuple()) return graph->insert(graph->create_tuple(el))->output();
    if (strict)
      warn(
          "Encountering a list at the output of the tracer might cause the trace to be incorrect, "
          "this "
          "is only valid if the container structure does not change based on the module's inputs. "
          "Consider using a constant container instead (e.g. for `list`, use a `tuple` instead. "
          "for "
          "`dict`, use a `NamedTuple` instead). If you absolutely need this and know the side "
          "effects, "
          "pass strict=False to trace() to allow this behavior.");
    return graph->insert(graph->create_list(Type::tensor(), el))->output();
  }
  throw Error(
      "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from traced "
      "functions");
}

Value* TracingState::add_output(const IValue& v) {
  AMPJIT_CHECK(open_regions_.empty(), "internal error: the trace ended inside an autocast region");
  Value* out = output_value(v);
  graph->register_output(out);
  return out;
}

void TracingState::warn(std::string message) {
  warnings.push_back(std::move(message));
}

// ---- Autocast regions (Notes [Traced autocast scopes] and [Eager-semantics tracing]) ------------

void TracingState::enter_autocast(AutocastScope scope) {
  if (semantics == AutocastSemantics::Eager) {
    Node* r = create_autocast_region(
        *graph, AutocastRegionSpec{scope.device, scope.enabled, scope.dtype, scope.cache_enabled});
    r->set_source_range(scope.where);
    graph->insert(r);
    open_regions_.emplace_back(r, graph->insert_point());
    graph->set_insert_point(r->blocks()[0]);
    any_region_ = true;
  }
  autocast_scopes.push_back(std::move(scope));
}

void TracingState::exit_autocast() noexcept {
  if (autocast_scopes.empty()) return;
  autocast_scopes.pop_back();
  if (semantics == AutocastSemantics::Eager && !open_regions_.empty()) {
    graph->set_insert_point(open_regions_.back().second);
    open_regions_.pop_back();
  }
}

namespace {
// Whether values of block `b` are in scope in block `here`: `b` is `here` or encloses it.
bool encloses(const Block* b, const Block* here) {
  for (const Block* x = here; x; x = x->owning_node() ? x->owning_node()->owning_block() : nullptr)
    if (x == b) return true;
  return false;
}
}  // namespace

Value* TracingState::visible(Value* v) {
  const Block* here = graph->insert_point()->owning_block();
  for (;;) {
    Block* b = v->node()->owning_block();
    if (encloses(b, here)) return v;
    // `v` was recorded in a region that has been left: it leaves through the region's outputs.
    Node* region = b->owning_node();
    AMPJIT_CHECK(region && region->kind() == sym::prim::AutocastRegion,
                 "internal error: a traced value is out of scope outside an autocast region");
    if (auto it = lifted_.find(v); it != lifted_.end()) {
      v = it->second;
      continue;
    }
    b->register_output(v);
    Value* out = region->add_output();
    out->set_type(v->type());
    lifted_.emplace(v, out);
    v = out;
  }
}

TracingState* current() {
  return t_state.get();
}

TracingGuard::TracingGuard(std::shared_ptr<TracingState> state)
    : prev_(t_state),
      layer_(DispatchLayer::Tracer, LayerGuard::Include),
      no_autocast_(DispatchLayer::Autocast, LayerGuard::Exclude,
                   state && state->semantics == AutocastSemantics::Eager) {
  t_state = std::move(state);
}

TracingGuard::~TracingGuard() {
  t_state = std::move(prev_);
}

// Note [Compiled functions called while tracing]
// As torch's runAndInsertCall: a scripted or traced function called by traced code is recorded as
// one prim::CallFunction (its ops are not recorded one by one), and it runs with the recording
// off. So the eager autocast state around the call while tracing is not part of the trace: when
// the trace runs, the callee runs under whatever autocast state is current then. In torchscript
// semantics that loses an eager `with autocast(...)` region around the call (PyTorch returns
// float32 there, silently); the interop layer warns, naming the region (docs/limitations.md,
// "traced calling script": interop/traced_calls.h). In eager semantics the call is recorded inside
// the region's prim::AutocastRegion node, which applies it at run time.
void record_call(TracingState& st, const std::shared_ptr<Function>& fn, Stack& s) {
  Graph& g = *st.graph;
  const SourceRange where = st.location();
  std::vector<Value*> inputs;
  for (const IValue& v : s) {
    if (v.is_tensor())
      inputs.push_back(st.value_of(v.to_tensor()));
    else
      inputs.push_back(g.insert_constant(v, where));
  }
  {
    // The callee runs untraced (neither its ops nor its autocast regions are recorded); in eager
    // semantics the tracer had excluded the autocast layer (it runs it below the recording), so
    // the callee gets it back.
    const bool eager = st.semantics == AutocastSemantics::Eager;
    TracingGuard paused(nullptr);
    LayerGuard autocast(DispatchLayer::Autocast, LayerGuard::Unexclude, eager);
    fn->run(s);
  }
  Node* call = g.insert(g.create(sym::prim::CallFunction, inputs, s.size()));
  call->set_source_range(where);
  call->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(fn))));
  call->set_attr(sym::attr::name, IValue(fn->name()));
  // Results: tensors are bound to the call's outputs (tuples and lists of them unpacked), so
  // the code after the call uses them instead of baking them in as constants.
  std::function<void(Value*, const IValue&)> bind = [&](Value* out, const IValue& r) {
    if (r.is_tensor()) {
      const TensorImpl* t = r.tensor_impl();
      out->set_type(Type::tensor_of(
          t->dtype, std::vector<int64_t>(t->sizes.begin(), t->sizes.end()), t->device));
      st.bind(r.to_tensor(), out);
    } else if ((r.is_tuple() && out->type()->kind() == TypeKind::Tuple) ||
               (r.is_list() && out->type()->kind() == TypeKind::List)) {
      const auto& elems = r.is_tuple() ? r.tuple_elems() : r.list_elems();
      Node* u = g.insert(g.create(r.is_tuple() ? sym::prim::TupleUnpack : sym::prim::ListUnpack,
                                  {out}, elems.size()));
      u->set_source_range(where);
      for (size_t k = 0; k < elems.size(); ++k) {
        u->output(k)->set_type(r.is_tuple() ? out->type()->contained()[k] : out->type()->elem());
        bind(u->output(k), elems[k]);
      }
    }
  };
  for (size_t i = 0; i < s.size(); ++i) {
    call->output(i)->set_type(fn->graph()->outputs()[i]->type()->unrefined());
    bind(call->output(i), s[i]);
  }
}

// Regions that graphs enter at run time while this thread traces reach the tracer as the Python
// context manager's do (Note [Autocast regions at run time]).
namespace {
bool enter_traced_region(const AutocastRegionEvent& region) {
  TracingState* st = current();
  if (st == nullptr) return false;
  st->enter_autocast(region);
  return true;
}
void exit_traced_region() {
  if (TracingState* st = current()) st->exit_autocast();
}
const AutocastRegionHooks kRegionHooks{&enter_traced_region, &exit_traced_region};
const bool kRegionHooksInstalled = (set_autocast_region_hooks(&kRegionHooks), true);
}  // namespace

Symbol meta_autocast_enabled() {
  static Symbol s = meta("autocast");
  return s;
}
Symbol meta_autocast_device() {
  static Symbol s = meta("autocast_device");
  return s;
}
Symbol meta_autocast_dtype() {
  static Symbol s = meta("autocast_dtype");
  return s;
}
Symbol meta_autocast_where() {
  static Symbol s = meta("autocast_where");
  return s;
}
Symbol meta_autocast_scope_enabled() {
  static Symbol s = meta("autocast_scope_enabled");
  return s;
}

void install() {
  set_layer(DispatchLayer::Tracer, trace_layer);
}

namespace {
// The layer is installed when the library loads, so every frontend gets it.
[[maybe_unused]] const bool g_installed = (install(), true);
}  // namespace

}  // namespace ampjit::tracer
