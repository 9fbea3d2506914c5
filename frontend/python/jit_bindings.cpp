// The jit bindings: tracing a Python callable into a graph, the compiled function and module
// objects that jit.trace returns (call, graph, code), and the hooks the pure-Python side uses
// (tracer warnings, autocast scopes entered while tracing).

#include <functional>
#include <unordered_set>

#include "frontend/python/convert.h"
#include "interop/traced_calls.h"
#include "runtime/autocast/semantics.h"
#include "runtime/diagnostic.h"
#include "runtime/dispatcher.h"
#include "runtime/interpreter.h"
#include "runtime/ir/python_print.h"
#include "runtime/module_object.h"
#include "script/passes/freeze.h"
#include "script/passes/inference.h"
#include "script/passes/inline_calls.h"
#include "tracer/tracer.h"

namespace ampjit::python {

namespace {

PyObject* g_tracer_warning = nullptr;  // ampjit.jit.TracerWarning, installed at import
std::string g_package_dir;             // frames under it are ampjit's own, never a user location

// ---- Source locations of traced ops -------------------------------------------------------------

// co_filename as UTF-8: the str object keeps its UTF-8 form once made, so nothing is cached here
// (a cache by object grew with every code object exec'd from a string: Note [Long-lived caches]).
std::string_view filename_of(PyObject* f) {
  Py_ssize_t n = 0;
  const char* s = PyUnicode_AsUTF8AndSize(f, &n);
  if (!s) {
    PyErr_Clear();
    return "<unknown>";
  }
  return {s, static_cast<size_t>(n)};
}

// The innermost Python frame outside the ampjit package: where the user called the op. Columns
// are 0, as in torch's traced graphs (Python reports lines only).
SourceRange python_location() {
  PyGILState_STATE gil = PyGILState_Ensure();
  SourceRange r;
  PyFrameObject* f = PyEval_GetFrame();
  Py_XINCREF(f);
  while (f) {
    PyCodeObject* code = PyFrame_GetCode(f);
    const std::string_view file = filename_of(code->co_filename);
    if (g_package_dir.empty() || file.substr(0, g_package_dir.size()) != g_package_dir) {
      r = SourceRange::location(std::string(file), PyFrame_GetLineNumber(f), 0);
      Py_DECREF(code);
      Py_DECREF(f);
      break;
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  PyGILState_Release(gil);
  return r;
}

// ---- Graphs -------------------------------------------------------------------------------------

struct PyGraph {
  std::shared_ptr<Graph> g;
};

std::string graph_str(const PyGraph& g) {
  return g.g->str();
}
std::string graph_str2(const PyGraph& g, bool ranges) {
  return g.g->str(ranges);
}

// For tests and tools: (kind, "file:line:col" or "", metadata dict) for every node, in order.
void collect_nodes(const Block& b, bp::list& out) {
  for (const Node* n : b) {
    bp::dict meta;
    for (const auto& [k, v] : n->meta()) meta[std::string(k.name())] = from_ivalue(v);
    out.append(bp::make_tuple(
        n->kind().qualified(),
        n->source_range().valid() ? n->source_range().location_str() : std::string(), meta));
    for (const Block* sub : n->blocks()) collect_nodes(*sub, out);
  }
}
bp::list graph_node_tuples(const PyGraph& g) {
  bp::list out;
  collect_nodes(*g.g->block(), out);
  return out;
}

// torch._C.Node, the parts tests and tools read: kind(), sourceRange(), the counts of inputs and
// outputs, its blocks' nodes; it keeps its graph alive.
struct PyNode {
  std::shared_ptr<Graph> g;
  Node* n;
  std::string kind() const { return n->kind().qualified(); }
  std::string source_range() const {
    return n->source_range().valid() ? n->source_range().location_str() : std::string();
  }
  size_t inputs_size() const { return n->inputs().size(); }
  size_t outputs_size() const { return n->outputs().size(); }
  bool eq(const PyNode& o) const { return n == o.n; }
  std::string repr() const { return "<Node " + kind() + ">"; }
};

bp::list nodes_of(const std::shared_ptr<Graph>& g, const Block& b) {
  bp::list out;
  for (Node* n : b) out.append(PyNode{g, n});
  return out;
}
// Graph.nodes(): the top-level nodes, as torch's (nested blocks through Node.blocks()).
bp::list graph_nodes(const PyGraph& g) {
  return nodes_of(g.g, *g.g->block());
}
bp::list node_blocks(const PyNode& n) {
  bp::list out;
  for (const Block* b : n.n->blocks()) out.append(nodes_of(n.g, *b));
  return out;
}
void find_all(const std::shared_ptr<Graph>& g, const Block& b, const std::string& kind,
              bool recurse, bp::list& out) {
  for (Node* n : b) {
    if (n->kind().qualified() == kind) out.append(PyNode{g, n});
    if (recurse)
      for (const Block* sub : n->blocks()) find_all(g, *sub, kind, recurse, out);
  }
}
bp::list graph_find_all_nodes(const PyGraph& g, const std::string& kind, bool recurse) {
  bp::list out;
  find_all(g.g, *g.g->block(), kind, recurse, out);
  return out;
}
bp::object graph_find_node(const PyGraph& g, const std::string& kind, bool recurse) {
  bp::list all = graph_find_all_nodes(g, kind, recurse);
  return bp::len(all) ? bp::object(all[0]) : bp::object();
}

// Note [Moving nodes]
// torch's AliasDb.move_after_topologically_valid(n, m): whether n can move to just after m (same
// block, n before m) without changing what the program computes. It cannot when a node between
// them (m included) uses one of n's outputs, or when n and a node between touch global state in an
// order that matters: side effects (autocast Enter/Exit, raising, printing, warning, in-place
// writes, random draws) against side effects or reads of that state (the is_autocast_* queries,
// is_grad_enabled). Alias analysis proper (which tensors may share memory) is not modeled: a write
// is treated as touching everything, which only ever answers "cannot" more often.
bool reads_global_state(const Node* n) {
  const std::string k = n->kind().qualified();
  return k == "aten::is_autocast_enabled" || k == "aten::is_autocast_cpu_enabled" ||
         k == "aten::is_grad_enabled";
}
bool has_side_effects(const Node* n) {
  const std::string k = n->kind().qualified();
  if (k == "prim::Enter" || k == "prim::Exit" || k == "prim::RaiseException" ||
      k == "prim::Print" || k == "aten::warn" || k == "prim::AutocastRegion" ||
      k == "prim::SetAttr")
    return true;
  if (const OpEntry* op = n->op()) {
    if (op->has(kNondeterministic) || op->written_arg >= 0) return true;
  }
  return !n->blocks().empty();  // control flow: whatever its blocks do
}
struct PyAliasDb {
  std::shared_ptr<Graph> g;
  bool move_after_topologically_valid(const PyNode& n, const PyNode& m) const {
    if (n.n->owning_block() != m.n->owning_block() || !n.n->is_before(m.n)) return false;
    const bool n_effects = has_side_effects(n.n), n_reads = reads_global_state(n.n);
    for (Node* cur = n.n->next(); cur; cur = cur->next()) {
      for (Value* in : cur->inputs())
        if (in->node() == n.n) return false;
      if ((n_effects || n_reads) && has_side_effects(cur)) return false;
      if (n_effects && reads_global_state(cur)) return false;
      if (cur == m.n) return true;
    }
    return false;
  }
};
PyAliasDb graph_alias_db(const PyGraph& g) {
  return PyAliasDb{g.g};
}
PyGraph parse_graph_text(const std::string& text) {
  auto g = parse_graph(text);
  g->verify();
  return PyGraph{std::shared_ptr<Graph>(std::move(g))};
}

// ---- Modules ------------------------------------------------------------------------------------

struct PyModule {
  Ref<ModuleObject> obj;
};

PyModule* make_module(const std::string& class_name) {
  return new PyModule{Ref<ModuleObject>(new ModuleObject(class_name))};
}

void module_set_attr(PyModule& m, const std::string& name, bp::object v) {
  bp::extract<PyModule&> sub(v);
  if (sub.check())
    m.obj->set_attr(name, IValue(Ref<ObjectBase>(sub().obj)));
  else
    m.obj->set_attr(name, to_ivalue(v.ptr()));
}
bp::object module_get_attr(const PyModule& m, const std::string& name) {
  const IValue& v = m.obj->attr(name);
  if (v.is_object())
    if (auto* sub = dynamic_cast<ModuleObject*>(v.object()))
      return bp::object(PyModule{Ref<ModuleObject>(sub)});
  return from_ivalue(v);
}
std::string module_class_name(const PyModule& m) {
  return m.obj->class_name;
}

// ---- Compiled functions -------------------------------------------------------------------------

// A graph function as Python calls it: a name, a declaration for diagnostics, and, for a
// module's method, the module it is bound to (the graph's first input).
struct PyFunction {
  std::shared_ptr<Function> fn;
  IValue self;  // None for free functions
  std::vector<std::string> arg_names;
  std::vector<TypePtr> arg_types;

  size_t first_arg() const { return self.is_none() ? 0 : 1; }
  std::string declaration() const {
    std::string s = fn->name() + "(";
    if (!self.is_none())
      s += self.object()->type_name() + std::string(" self") + (arg_names.empty() ? "" : ", ");
    for (size_t i = 0; i < arg_names.size(); ++i)
      s += (i ? ", " : "") + schema_type(*arg_types[i]) + " " + arg_names[i];
    s += ") -> ";
    const auto& outs = fn->graph()->outputs();
    s += outs.size() == 1 ? schema_type(*outs[0]->type()) : "(...)";
    return s;
  }
  static std::string schema_type(const Type& t) {
    if (t.kind() == TypeKind::Tensor) return "Tensor";
    if (t.kind() == TypeKind::Tuple) {
      std::string s = "(";
      for (size_t i = 0; i < t.contained().size(); ++i)
        s += (i ? ", " : "") + schema_type(*t.contained()[i]);
      return s + ")";
    }
    if (t.kind() == TypeKind::List) return schema_type(*t.elem()) + "[]";
    if (t.kind() == TypeKind::Dict)
      return "Dict(" + schema_type(*t.key()) + ", " + schema_type(*t.value()) + ")";
    return t.str();
  }
};

std::string py_type_name(PyObject* o) {
  if (as_tensor(o)) return "Tensor";
  return Py_TYPE(o)->tp_name;
}

// Checks one argument against an input type: torch's "Expected a value of type" error. Traced
// inputs are tensors, tuples and lists; scripted ones may also be numbers, strings, Optionals.
bool is_dtype_object(PyObject* o) {
  if (PyLong_Check(o) || PyFloat_Check(o) || PyBool_Check(o) || o == Py_None || PyUnicode_Check(o))
    return false;
  try {
    return to_ivalue(o).is_scalar_type();
  } catch (...) {
    return false;
  }
}

bool matches(const Type& t, PyObject* o) {
  switch (t.kind()) {
    // A dtype argument is an int in TorchScript (a `torch.dtype` annotation): the dtype object
    // binds.
    case TypeKind::Int:
      return (PyLong_Check(o) && !PyBool_Check(o)) || is_dtype_object(o);
    case TypeKind::Float:
      return PyFloat_Check(o) || (PyLong_Check(o) && !PyBool_Check(o));
    case TypeKind::Bool:
      return PyBool_Check(o);
    case TypeKind::Str:
      return PyUnicode_Check(o);
    case TypeKind::None:
      return o == Py_None;
    case TypeKind::Number:
      return PyLong_Check(o) || PyFloat_Check(o);
    case TypeKind::Optional:
      return o == Py_None || matches(*t.elem(), o);
    default:
      break;
  }
  if (t.kind() == TypeKind::Tensor) return as_tensor(o) != nullptr;
  if (t.kind() == TypeKind::Tuple) {
    if (!PyTuple_Check(o) || static_cast<size_t>(PyTuple_GET_SIZE(o)) != t.contained().size())
      return false;
    for (size_t i = 0; i < t.contained().size(); ++i)
      if (!matches(*t.contained()[i], PyTuple_GET_ITEM(o, i))) return false;
    return true;
  }
  if (t.kind() == TypeKind::List) {
    if (!PyList_Check(o)) return false;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); ++i)
      if (!matches(*t.elem(), PyList_GET_ITEM(o, i))) return false;
    return true;
  }
  if (t.kind() == TypeKind::Dict) {
    if (!PyDict_Check(o)) return false;
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &k, &v))
      if (!matches(*t.key(), k) || !matches(*t.value(), v)) return false;
    return true;
  }
  if (t.kind() == TypeKind::Union) {
    for (const TypePtr& m : t.contained())
      if (matches(*m, o)) return true;
    return false;
  }
  return true;
}

// A Python argument that matches(t, o) as the IValue of type t: a float parameter (or element)
// given an int holds a float, a dtype object for an int parameter its TorchScript code.
IValue to_ivalue_as(const Type& t, PyObject* o) {
  switch (t.kind()) {
    case TypeKind::Float:
      return PyLong_Check(o) ? IValue(PyLong_AsDouble(o)) : to_ivalue(o);
    case TypeKind::Int:
      return is_dtype_object(o) ? IValue(torch_dtype_code(to_ivalue(o).to_scalar_type()))
                                : to_ivalue(o);
    case TypeKind::Optional:
      return o == Py_None ? IValue() : to_ivalue_as(*t.elem(), o);
    case TypeKind::Union: {
      // The member of the value's own kind first: 3 for Union[float, int] stays an int.
      const TypeKind own = PyBool_Check(o)    ? TypeKind::Bool
                           : PyLong_Check(o)  ? TypeKind::Int
                           : PyFloat_Check(o) ? TypeKind::Float
                                              : TypeKind::Any;
      for (const TypePtr& m : t.contained())
        if (m->kind() == own) return to_ivalue_as(*m, o);
      for (const TypePtr& m : t.contained())
        if (matches(*m, o)) return to_ivalue_as(*m, o);
      break;
    }
    case TypeKind::List: {
      std::vector<IValue> el;
      el.reserve(static_cast<size_t>(PyList_GET_SIZE(o)));
      for (Py_ssize_t i = 0; i < PyList_GET_SIZE(o); ++i)
        el.push_back(to_ivalue_as(*t.elem(), PyList_GET_ITEM(o, i)));
      return IValue::list(std::move(el));
    }
    case TypeKind::Tuple: {
      std::vector<IValue> el;
      for (size_t i = 0; i < t.contained().size(); ++i)
        el.push_back(to_ivalue_as(*t.contained()[i], PyTuple_GET_ITEM(o, i)));
      return IValue::tuple(std::move(el));
    }
    case TypeKind::Dict: {
      Ref<DictObj> d(new DictObj());
      PyObject *k, *v;
      Py_ssize_t pos = 0;
      while (PyDict_Next(o, &pos, &k, &v))
        d->set(to_ivalue_as(*t.key(), k), to_ivalue_as(*t.value(), v));
      return IValue(std::move(d));
    }
    case TypeKind::Any:
      if (is_dtype_object(o)) return IValue(torch_dtype_code(to_ivalue(o).to_scalar_type()));
      break;
    default:
      break;
  }
  return to_ivalue(o);
}

// (qualified name, field names, values) -> an instance of the NamedTuple class script resolved by
// that name (ampjit.jit._script._named_tuple_instance); installed at import.
// A raw reference, never released (see g_script_object_factory in convert.cpp).
PyObject* g_named_tuple_class = nullptr;

bp::object function_call(const PyFunction& f, bp::tuple args) {
  const size_t n = static_cast<size_t>(bp::len(args));
  const size_t want = f.arg_names.size();
  AMPJIT_CHECK(n <= want,
               "{}() expected at most {} argument(s) but received {} argument(s). Declaration: {}",
               f.fn->name(), want + f.first_arg(), n + f.first_arg(), f.declaration());
  // Trailing arguments not given take the schema's defaults (a method loaded from an archive is
  // called without a Python signature to bind them).
  const auto& schema = f.fn->schema();
  size_t given = n;
  while (given < want && schema && given < schema->args.size() && schema->args[given].default_value)
    ++given;
  AMPJIT_CHECK(given == want, "{}() is missing value for argument '{}'. Declaration: {}",
               f.fn->name(), f.arg_names[given], f.declaration());
  Stack s;
  s.reserve(want + 1);
  if (!f.self.is_none()) s.push_back(f.self);
  for (size_t i = 0; i < n; ++i) {
    PyObject* o = PyTuple_GET_ITEM(args.ptr(), i);
    if (!matches(*f.arg_types[i], o)) {
      std::string value =
          bp::extract<std::string>(bp::str(bp::object(bp::handle<>(bp::borrowed(o)))));
      throw Error(
          fmt::format("{}() Expected a value of type '{}' for argument '{}' but instead found type "
                      "'{}'.\nPosition: {}\n"
                      "Value: {}\nDeclaration: {}\nCast error details: Unable to cast {} to {}",
                      f.fn->name(), PyFunction::schema_type(*f.arg_types[i]), f.arg_names[i],
                      py_type_name(o), i + f.first_arg(), value, f.declaration(), value,
                      PyFunction::schema_type(*f.arg_types[i])));
    }
    s.push_back(to_ivalue_as(*f.arg_types[i], o));
  }
  for (size_t i = n; i < want; ++i) s.push_back(*schema->args[i].default_value);
  if (tracer::TracingState* st = tracer::current(); st && f.self.is_none()) {
    record_traced_call(*st, f.fn, s);  // Note [Compiled functions called while tracing]
  } else {
    // Ops inside a graph never call back into Python, so the GIL is released for the whole run,
    // unless this thread is tracing (the tracer asks Python for source locations).
    MaybeReleaseGIL nogil(tracer::current() == nullptr);
    f.fn->run(s);
  }
  if (s.size() == 1) {
    if (schema && schema->returns.size() == 1 && schema->returns[0].type->is_named_tuple() &&
        s[0].is_tuple() && g_named_tuple_class) {  // a NamedTuple return: its class
      const Type& t = *schema->returns[0].type;
      bp::list fields, values;
      for (const std::string& name : t.field_names()) fields.append(name);
      for (const IValue& v : s[0].tuple_elems()) values.append(from_ivalue(v));
      return bp::call<bp::object>(g_named_tuple_class, t.name(), bp::tuple(fields),
                                  bp::tuple(values));
    }
    return from_ivalue(s[0]);
  }
  bp::list out;
  for (const IValue& v : s) out.append(from_ivalue(v));
  return bp::tuple(out);
}

PyGraph function_graph(const PyFunction& f) {
  return PyGraph{f.fn->graph()};
}
PyGraph function_inlined_graph(const PyFunction& f) {
  std::shared_ptr<Graph> g(f.fn->graph()->copy());
  inline_calls(*g);
  return PyGraph{g};
}
std::string function_code(const PyFunction& f) {
  return python_print(*f.fn->graph(), f.fn->name());
}
std::string function_name(const PyFunction& f) {
  return f.fn->name();
}
std::string function_declaration(const PyFunction& f) {
  return f.declaration();
}
std::string function_instructions(const PyFunction& f) {
  return f.fn->code().dump();
}
// The graph a call from this thread runs now: optimized for its eager autocast state (Note
// [Function specialization]). Python's Graph is read-only, so the const graph is shared as is.
PyGraph function_graph_for(const PyFunction& f) {
  return PyGraph{std::const_pointer_cast<Graph>(f.fn->optimized_graph())};
}
void function_set_ignore_amp(const PyFunction& f, bool ignore) {
  f.fn->set_ignore_amp(ignore);
}
bool jit_set_autocast_mode(bool enabled) {
  return set_jit_autocast_mode(enabled);
}

// ---- Tracing ------------------------------------------------------------------------------------

// _trace(fn, args, arg_names, module_or_None, strict, name) -> (function, [warnings])
// Runs fn(*args) with this thread's tracing on and returns the recorded graph as a function.
// `semantics` ("torchscript" / "eager") decides what is recorded (Note [Eager-semantics tracing]);
// the function is pinned to it.
bp::tuple trace(bp::object fn, bp::tuple args, bp::list names, bp::object module, bool strict,
                const std::string& name, const std::string& semantics) {
  const AutocastSemantics sem = parse_autocast_semantics(semantics, "autocast_semantics");
  const size_t n = static_cast<size_t>(bp::len(args));
  std::vector<IValue> inputs;
  for (size_t i = 0; i < n; ++i) {
    try {
      inputs.push_back(to_ivalue(PyTuple_GET_ITEM(args.ptr(), i)));
    } catch (const TypeError&) {
      inputs.push_back(IValue(std::string(Py_TYPE(PyTuple_GET_ITEM(args.ptr(), i))->tp_name)));
    }
  }
  tracer::TracingState::check_traceable_inputs(inputs);
  // The same tensor passed twice must still give two graph inputs: the later occurrences are
  // traced through aliases (same data, their own identity), also inside nested tuples and lists.
  {
    std::unordered_set<const TensorImpl*> seen;
    bool changed = false;
    std::function<bp::object(PyObject*, IValue&)> dedupe = [&](PyObject* o,
                                                               IValue& v) -> bp::object {
      if (v.is_tensor()) {
        if (seen.insert(v.tensor_impl()).second) return bp::object(bp::handle<>(bp::borrowed(o)));
        const Tensor t = v.to_tensor();
        Tensor alias = Tensor::make_view(t, t.sizes(), t.strides(), t.storage_offset());
        v = IValue(alias);
        changed = true;
        return wrap(alias);
      }
      if ((v.is_tuple() && PyTuple_Check(o)) || (v.is_list() && PyList_Check(o))) {
        std::vector<IValue> el = v.is_tuple() ? v.tuple_elems() : v.list_elems();
        bp::list items;
        for (size_t i = 0; i < el.size(); ++i)
          items.append(dedupe(PySequence_Fast_GET_ITEM(o, i), el[i]));
        v = v.is_tuple() ? IValue::tuple(std::move(el)) : IValue::list(std::move(el));
        return v.is_tuple() ? bp::object(bp::tuple(items)) : bp::object(items);
      }
      return bp::object(bp::handle<>(bp::borrowed(o)));
    };
    bp::list fresh;
    for (size_t i = 0; i < n; ++i) fresh.append(dedupe(PyTuple_GET_ITEM(args.ptr(), i), inputs[i]));
    if (changed) args = bp::tuple(fresh);
  }
  AMPJIT_CHECK(tracer::current() == nullptr,
               "jit.trace was called while another trace is being recorded on this thread; nested "
               "traces are "
               "not supported");
  auto st = std::make_shared<tracer::TracingState>();
  st->strict = strict;
  st->semantics = sem;
  st->location_provider = python_location;
  PyFunction out;
  if (!module.is_none()) {
    const PyModule& m = bp::extract<const PyModule&>(module);
    st->add_module_input(m.obj);
    out.self = IValue(Ref<ObjectBase>(m.obj));
  }
  for (size_t i = 0; i < n; ++i) {
    const std::string arg = i < static_cast<size_t>(bp::len(names))
                                ? std::string(bp::extract<std::string>(names[i]))
                                : "input";
    Value* v = st->add_input(inputs[i], arg);
    out.arg_names.push_back(arg);
    out.arg_types.push_back(v->type()->unrefined());
  }
  bp::object result;
  {
    tracer::TracingGuard guard(st);
    PyObject* r = PyObject_Call(fn.ptr(), args.ptr(), nullptr);
    if (!r) bp::throw_error_already_set();
    result = bp::object(bp::handle<>(r));
  }
  IValue rv;
  try {
    rv = to_ivalue(result.ptr());
  } catch (const TypeError&) {
    throw Error(
        "Only tensors, lists, tuples of tensors, or dictionary of tensors can be output from "
        "traced functions");
  }
  st->add_output(rv);
  st->graph->verify();
  out.fn = std::make_shared<Function>(name, st->graph);
  out.fn->set_autocast_semantics(sem);
  bp::list warnings;
  for (const std::string& w : st->warnings) warnings.append(w);
  return bp::make_tuple(out, warnings);
}

bool is_tracing() {
  return tracer::current() != nullptr;
}

// Autocast regions entered and left while tracing (Note [Traced autocast scopes]): called by the
// context manager after it has set the state, so the cache flag is the region's.
void tracer_enter_autocast(const std::string& device, bp::object dtype, bool enabled) {
  tracer::TracingState* st = tracer::current();
  if (!st) return;
  tracer::AutocastScope s;
  s.device = Device::parse(device).type;
  s.dtype = to_ivalue(dtype.ptr()).to_scalar_type();
  s.enabled = enabled;
  s.cache_enabled = is_autocast_cache_enabled();
  s.where = python_location();
  st->enter_autocast(std::move(s));
}
void tracer_exit_autocast() {
  if (tracer::TracingState* st = tracer::current()) st->exit_autocast();
}

// ---- Autocast semantics (Note [Autocast semantics], runtime/autocast/semantics.h) ---------------

std::string get_semantics() {
  return autocast_semantics_name(autocast_semantics());
}
std::string set_semantics(const std::string& s) {
  return autocast_semantics_name(
      set_autocast_semantics(parse_autocast_semantics(s, "set_autocast_semantics")));
}
bp::object function_semantics(const PyFunction& f) {
  const std::optional<AutocastSemantics> s = f.fn->own_autocast_semantics();
  return s ? bp::object(std::string(autocast_semantics_name(*s))) : bp::object();
}
void function_set_semantics(const PyFunction& f, bp::object s) {
  if (s.is_none()) return f.fn->set_autocast_semantics(std::nullopt);
  bp::extract<std::string> str(s);
  AMPJIT_CHECK_T(ValueError, str.check(),
                 "autocast_semantics: expected 'torchscript', 'eager' or None");
  f.fn->set_autocast_semantics(parse_autocast_semantics(str(), "autocast_semantics"));
}

// ---- Interop warnings (Note [Interop warnings], runtime/diagnostic.h) ---------------------------

PyObject* g_interop_warning = nullptr;  // ampjit.jit.AutocastInteropWarning, installed at import

// warnings.warn_explicit at the warning's location, with one registry per file so that the default
// "once per location" filter works as for warnings raised in that file.
void python_warning_handler(const Diagnostic& w) {
  PyGILState_STATE gil = PyGILState_Ensure();
  PyObject* category = w.category == WarningCategory::AutocastInterop && g_interop_warning
                           ? g_interop_warning
                           : PyExc_UserWarning;
  int rc;
  if (w.range.valid()) {
    static PyObject* registries = PyDict_New();
    const std::string file = w.range.filename();
    PyObject* key = PyUnicode_FromString(file.c_str());
    PyObject* registry = key ? PyDict_GetItemWithError(registries, key) : nullptr;
    if (key && !registry && !PyErr_Occurred()) {
      registry = PyDict_New();
      if (registry && PyDict_SetItem(registries, key, registry) < 0) Py_CLEAR(registry);
      Py_XDECREF(registry);  // the dict holds it
    }
    Py_XDECREF(key);
    rc = registry ? PyErr_WarnExplicit(category, w.message.c_str(), file.c_str(),
                                       w.range.start_line(), nullptr, registry)
                  : -1;
  } else {
    rc = PyErr_WarnEx(category, w.message.c_str(), 1);
  }
  PyGILState_Release(gil);
  // A filter made it an error: the Python exception is set; Boost.Python hands it to the caller.
  if (rc < 0) bp::throw_error_already_set();
}

void set_interop_warning(bp::object cls) {
  Py_XINCREF(cls.ptr());
  g_interop_warning = cls.ptr();
  set_warning_handler(python_warning_handler);
}

// For tests: raises a warning through the C++ channel, as interop rules do.
void warn_for_testing(const std::string& category, const std::string& message,
                      const std::string& file, int line) {
  warn(category == "AutocastInteropWarning" ? WarningCategory::AutocastInterop
                                            : WarningCategory::User,
       message, line > 0 ? SourceRange::location(file, line, 0) : SourceRange());
}

void set_tracer_warning(bp::object cls, const std::string& package_dir) {
  Py_XINCREF(cls.ptr());
  g_tracer_warning = cls.ptr();
  g_package_dir = package_dir;
}

}  // namespace

// For script_bindings.cpp and serialization_bindings.cpp: a compiled function as the `_Function`
// object Python calls (argument names and types from the graph's inputs, after `self` for a
// method), a module object as the `_Module` object, and the reverse lookups.
// _Function._freeze(preserved_attrs): the frozen version of a module's bound forward (Note
// [Freezing] in script/passes/freeze.h), bound to the same module object.
bp::object wrap_function(std::shared_ptr<Function> fn, IValue self);
bp::object wrap_module(Ref<ModuleObject> obj);
bp::object function_freeze(const PyFunction& f, bp::object preserved) {
  AMPJIT_CHECK(!f.self.is_none(), "freeze: {} is not a module's method", f.fn->name());
  std::vector<std::string> keep;
  for (Py_ssize_t i = 0, n = bp::len(preserved); i < n; ++i)
    keep.push_back(bp::extract<std::string>(preserved[i]));
  // torch's freezing runs the JIT autocast pass (under the eager state of now): in torchscript
  // semantics with the pass on.
  const bool autocast = f.fn->effective_autocast_semantics() == AutocastSemantics::TorchScript &&
                        jit_autocast_mode() && !f.fn->ignore_amp();
  const AutocastContext ctx = current_autocast_context();
  auto frozen = std::make_shared<Function>(
      f.fn->name(), freeze_graph(*f.fn->graph(), f.self, keep, autocast ? &ctx : nullptr));
  frozen->set_schema(f.fn->schema());
  frozen->set_optimizable(f.fn->optimizable());
  frozen->set_ignore_amp(f.fn->ignore_amp());
  frozen->set_autocast_semantics(f.fn->own_autocast_semantics());
  return wrap_function(std::move(frozen), f.self);
}

// _Function._optimize_for_inference(): a frozen forward with optimize_for_inference's passes run
// on a copy of its graph (Note [Inference layouts] in script/passes/inference.h).
bp::object function_optimize_for_inference(const PyFunction& f) {
  std::shared_ptr<Graph> g(f.fn->graph()->copy().release());
  optimize_frozen_graph(*g);
  auto optimized = std::make_shared<Function>(f.fn->name(), std::move(g));
  optimized->set_schema(f.fn->schema());
  optimized->set_optimizable(f.fn->optimizable());
  optimized->set_ignore_amp(f.fn->ignore_amp());
  optimized->set_autocast_semantics(f.fn->own_autocast_semantics());
  return wrap_function(std::move(optimized), f.self);
}

bp::object wrap_function(std::shared_ptr<Function> fn, IValue self) {
  PyFunction f;
  f.fn = std::move(fn);
  f.self = std::move(self);
  const auto& inputs = f.fn->graph()->inputs();
  for (size_t i = f.first_arg(); i < inputs.size(); ++i) {
    f.arg_names.push_back(inputs[i]->debug_name());
    f.arg_types.push_back(inputs[i]->type()->unrefined());
  }
  return bp::object(f);
}
bp::object wrap_module(Ref<ModuleObject> obj) {
  return bp::object(PyModule{std::move(obj)});
}
std::shared_ptr<Function> unwrap_function(PyObject* o) {
  bp::extract<const PyFunction&> f{bp::object(bp::handle<>(bp::borrowed(o)))};
  return f.check() ? f().fn : nullptr;
}
Ref<ModuleObject> unwrap_module(PyObject* o) {
  bp::extract<const PyModule&> m{bp::object(bp::handle<>(bp::borrowed(o)))};
  return m.check() ? m().obj : Ref<ModuleObject>();
}

void warn_python_dataflow(const char* what) {
  if (!tracer::current()) return;
  const std::string msg =
      std::string("Converting a tensor to ") + what +
      " might cause the trace to be incorrect. We can't record the data flow of Python values, "
      "so this value will be treated as a constant in the future. This means that the trace "
      "might not generalize to other inputs!";
  if (PyErr_WarnEx(g_tracer_warning ? g_tracer_warning : PyExc_UserWarning, msg.c_str(), 1) < 0)
    bp::throw_error_already_set();
}

void bind_jit() {
  bp::class_<PyGraph>("Graph", bp::no_init)
      .def("__str__", graph_str)
      .def("__repr__", graph_str)
      .def("str", graph_str2, (bp::arg("print_source_ranges") = true))
      .def("nodes", graph_nodes)
      .def("_node_tuples", graph_node_tuples)
      .def("findAllNodes", graph_find_all_nodes, (bp::arg("kind"), bp::arg("recurse") = true))
      .def("findNode", graph_find_node, (bp::arg("kind"), bp::arg("recurse") = true))
      .def("alias_db", graph_alias_db);
  bp::class_<PyNode>("Node", bp::no_init)
      .def("kind", &PyNode::kind)
      .def("sourceRange", &PyNode::source_range)
      .def("inputsSize", &PyNode::inputs_size)
      .def("outputsSize", &PyNode::outputs_size)
      .def("blocks", node_blocks)
      .def("__eq__", &PyNode::eq)
      .def("__repr__", &PyNode::repr);
  bp::class_<PyAliasDb>("AliasDb", bp::no_init)
      .def("move_after_topologically_valid", &PyAliasDb::move_after_topologically_valid);
  bp::def("_parse_graph", parse_graph_text);
  bp::class_<PyModule>("_Module", bp::no_init)
      .def("__init__", bp::make_constructor(make_module))
      .def("_set_attr", module_set_attr)
      .def("_get_attr", module_get_attr)
      .add_property("_class_name", module_class_name);
  bp::class_<PyFunction>("_Function", bp::no_init)
      .def("_run", function_call)
      .add_property("graph", function_graph)
      .add_property("inlined_graph", function_inlined_graph)
      .add_property("code", function_code)
      .add_property("name", function_name)
      .add_property("_declaration", function_declaration)
      .def("_instructions", function_instructions)
      .def("graph_for", function_graph_for)
      .def("_set_ignore_amp", function_set_ignore_amp)
      .add_property("_autocast_semantics", function_semantics)
      .def("_set_autocast_semantics", function_set_semantics)
      .def("_freeze", function_freeze)
      .def("_optimize_for_inference", function_optimize_for_inference);
  bp::def("_trace", trace);
  bp::def("_is_tracing", is_tracing);
  bp::def(
      "_last_executed_optimized_graph", +[]() -> bp::object {
        auto g = last_executed_optimized_graph();
        if (!g) return bp::object();
        return bp::object(PyGraph{std::const_pointer_cast<Graph>(g)});
      });
  bp::def(
      "_set_named_tuple_class", +[](bp::object f) {
        Py_INCREF(f.ptr());
        g_named_tuple_class = f.ptr();
      });
  bp::def("_tracer_enter_autocast", tracer_enter_autocast);
  bp::def("_tracer_exit_autocast", tracer_exit_autocast);
  bp::def("_set_tracer_warning", set_tracer_warning);
  bp::def("_jit_set_autocast_mode", jit_set_autocast_mode);
  bp::def("_get_autocast_semantics", get_semantics);
  bp::def("_set_autocast_semantics", set_semantics);
  bp::def("_set_interop_warning", set_interop_warning);
  bp::def("_interop_warn_for_testing", warn_for_testing);
}

}  // namespace ampjit::python
