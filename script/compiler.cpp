// The script compiler (see compiler.h): the AST to the graph IR, one function at a time.
//
// Note [Emitting scoped Python into SSA]
// The emitter walks statements with an Env: a chain of frames mapping names to Values, one frame
// per block being emitted. A name assigned inside an `if` branch or a loop body is written to the
// innermost frame; when the block ends, the enclosing node (prim::If, prim::Loop) turns those
// writes into outputs: an `if` outputs every name written in either branch that is defined on both
// paths (a name defined on one path only is remembered, so a later read says which branch lacks
// it, as torch does); a loop carries every name written in its body that was defined before it.
// Types meet at those joins: equal types stay, refined tensor types widen to Tensor, None meets T
// as Optional[T]; anything else is torch's "Type mismatch" error.
//
// Note [Exit flags]
// `return`, `break` and `continue` inside blocks have no IR node: they become assignments to
// hidden variables that the join machinery above carries like any other: `$ret` (a return
// happened) and `$retval` (its value), `$brk`, `$cont`. After a statement that may have exited,
// the rest of the block runs under `if not <flag>:`; a statement that always exits drops the rest
// (it is dead). A loop's continue-condition is `not $brk` (and, for `while`, the test). One common
// shape gets no flags at all: when one branch of an `if` always exits, the statements after the
// `if` are emitted into the other branch, so `if c: return a` / `return b` is a plain prim::If.
#include "script/compiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>

#include "runtime/autocast/autocast_state.h"
#include "runtime/dtype.h"
#include "runtime/ir/queries.h"
#include "runtime/module_object.h"
#include "runtime/op_table.h"
#include "script/parser.h"

namespace ampjit::script {

namespace {

// ---- Small helpers -------------------------------------------------------------------------

[[noreturn]] void fail(const SourceRange& r, const std::string& msg) {
  throw CompileError(msg, r);
}

const Symbol kLen = Symbol::intern("aten::len");
const Symbol kGetItem = Symbol::intern("aten::__getitem__");
const Symbol kSetItem = Symbol::intern("aten::_set_item");
const Symbol kAppend = Symbol::intern("aten::append");
const Symbol kListSlice = Symbol::intern("aten::slice");
const Symbol kContains = Symbol::intern("aten::__contains__");
const Symbol kIs = Symbol::intern("aten::__is__");
const Symbol kIsNot = Symbol::intern("aten::__isnot__");
const Symbol kPrint = Symbol::intern("prim::Print");
const Symbol kStr = Symbol::intern("aten::str");
const Symbol kFormat = Symbol::intern("aten::format");
const Symbol kListCopy = Symbol::intern("aten::list");
const Symbol kNumToTensor = Symbol::intern("prim::NumToTensor");
const Symbol kListMin = Symbol::intern("prim::min");
const Symbol kListMax = Symbol::intern("prim::max");
const Symbol kListSum = Symbol::intern("aten::sum");

bool is_tensor(const TypePtr& t) {
  return t->kind() == TypeKind::Tensor;
}
bool is_none(const TypePtr& t) {
  return t->kind() == TypeKind::None;
}
bool is_number_kind(TypeKind k) {
  return k == TypeKind::Int || k == TypeKind::Float || k == TypeKind::Bool;
}

std::string type_str(const TypePtr& t) {
  return t->unrefined()->str();
}

// The meet of two types at a control-flow join, or nullptr when they do not meet.
TypePtr unify(const TypePtr& a, const TypePtr& b) {
  TypePtr ua = a->unrefined(), ub = b->unrefined();
  if (ua->equals(*ub)) return ua;
  if (is_none(ua) && ub->kind() == TypeKind::Optional) return ub;
  if (is_none(ub) && ua->kind() == TypeKind::Optional) return ua;
  if (is_none(ua)) return Type::optional(ub);
  if (is_none(ub)) return Type::optional(ua);
  if (ua->kind() == TypeKind::Optional && ub->is_subtype_of(*ua->elem())) return ua;
  if (ub->kind() == TypeKind::Optional && ua->is_subtype_of(*ub->elem())) return ub;
  if (ua->kind() == TypeKind::Tuple && ub->kind() == TypeKind::Tuple &&
      ua->contained().size() == ub->contained().size()) {
    std::vector<TypePtr> es;
    for (size_t i = 0; i < ua->contained().size(); ++i) {
      TypePtr e = unify(ua->contained()[i], ub->contained()[i]);
      if (!e) return nullptr;
      es.push_back(e);
    }
    return Type::tuple(std::move(es));
  }
  return nullptr;
}

const std::map<std::string, ScalarType>& dtype_names() {
  static const std::map<std::string, ScalarType> m = {
      {"float32", ScalarType::Float32},   {"float", ScalarType::Float32},
      {"float16", ScalarType::Float16},   {"half", ScalarType::Float16},
      {"bfloat16", ScalarType::BFloat16}, {"float64", ScalarType::Float64},
      {"double", ScalarType::Float64},    {"int64", ScalarType::Int64},
      {"long", ScalarType::Int64},        {"int32", ScalarType::Int32},
      {"int", ScalarType::Int32},         {"int16", ScalarType::Int16},
      {"short", ScalarType::Int16},       {"int8", ScalarType::Int8},
      {"uint8", ScalarType::UInt8},       {"bool", ScalarType::Bool},
  };
  return m;
}

// Collects the names a block of statements assigns (for loop-carried values).
void collect_assigned_target(const Expr& e, std::set<std::string>& out) {
  if (e.kind == ExprKind::Name) out.insert(e.as<Name>().id);
  if (e.kind == ExprKind::Tuple)
    for (const auto& x : e.as<TupleExpr>().elts) collect_assigned_target(*x, out);
  if (e.kind == ExprKind::List)
    for (const auto& x : e.as<ListExpr>().elts) collect_assigned_target(*x, out);
}
void collect_assigned(const Body& body, std::set<std::string>& out);
void collect_assigned(const Stmt& s, std::set<std::string>& out) {
  switch (s.kind) {
    case StmtKind::Assign:
      for (const auto& t : s.as<Assign>().targets) collect_assigned_target(*t, out);
      break;
    case StmtKind::AugAssign:
      collect_assigned_target(*s.as<AugAssign>().target, out);
      break;
    case StmtKind::AnnAssign:
      collect_assigned_target(*s.as<AnnAssign>().target, out);
      break;
    case StmtKind::If:
      collect_assigned(s.as<If>().body, out);
      collect_assigned(s.as<If>().orelse, out);
      break;
    case StmtKind::For:
      collect_assigned_target(*s.as<For>().target, out);
      collect_assigned(s.as<For>().body, out);
      break;
    case StmtKind::While:
      collect_assigned(s.as<While>().body, out);
      break;
    case StmtKind::With:
      for (const auto& it : s.as<With>().items)
        if (it.var) collect_assigned_target(*it.var, out);
      collect_assigned(s.as<With>().body, out);
      break;
    default:
      break;
  }
}
void collect_assigned(const Body& body, std::set<std::string>& out) {
  for (const auto& s : body) collect_assigned(*s, out);
}

// Exit analysis (Note [Exit flags]).
struct Exits {
  bool may_return = false, may_break = false, may_continue = false;
  bool always = false;  // every path through the statement leaves the block
  bool any() const { return may_return || may_break || may_continue; }
};
Exits exits_of(const Body& body, bool in_loop);
Exits exits_of(const Stmt& s, bool in_loop) {
  Exits e;
  switch (s.kind) {
    case StmtKind::Return:
      e.may_return = e.always = true;
      break;
    case StmtKind::Break:
      e.may_break = e.always = in_loop;
      break;
    case StmtKind::Continue:
      e.may_continue = e.always = in_loop;
      break;
    case StmtKind::Raise:
      e.always = true;
      break;
    case StmtKind::If: {
      Exits a = exits_of(s.as<If>().body, in_loop), b = exits_of(s.as<If>().orelse, in_loop);
      e.may_return = a.may_return || b.may_return;
      e.may_break = a.may_break || b.may_break;
      e.may_continue = a.may_continue || b.may_continue;
      e.always = a.always && b.always;
      break;
    }
    case StmtKind::For:
    case StmtKind::While: {
      const Body& b = s.kind == StmtKind::For ? s.as<For>().body : s.as<While>().body;
      e.may_return = exits_of(b, false).may_return || exits_of(b, true).may_return;
      break;
    }
    case StmtKind::With:
      e = exits_of(s.as<With>().body, in_loop);
      break;
    default:
      break;
  }
  return e;
}
Exits exits_of(const Body& body, bool in_loop) {
  Exits e;
  for (const auto& s : body) {
    Exits x = exits_of(*s, in_loop);
    e.may_return |= x.may_return;
    e.may_break |= x.may_break;
    e.may_continue |= x.may_continue;
    if (x.always) {
      e.always = true;
      break;
    }
  }
  return e;
}
bool may_return(const Stmt& s) {
  return exits_of(s, false).may_return || exits_of(s, true).may_return;
}
bool may_return(const Body& b) {
  for (const auto& s : b)
    if (may_return(*s)) return true;
  return false;
}

// Whether a function body needs the exit flags of Note [Exit flags]: a return inside a loop or a
// `with`, or an `if` that may return on some paths where the rest cannot be moved into the other
// branch. A body that may fall off its end after a return somewhere needs them too (the implicit
// `return None`).
bool needs_exit_flags(const Body& body, bool top) {
  for (size_t i = 0; i < body.size(); ++i) {
    const Stmt& s = *body[i];
    if (s.kind == StmtKind::Return || !may_return(s)) continue;
    if (s.kind != StmtKind::If) return true;
    const auto& f = s.as<If>();
    const Exits a = exits_of(f.body, false), b = exits_of(f.orelse, false);
    if (a.always && b.always) {
      if (needs_exit_flags(f.body, false) || needs_exit_flags(f.orelse, false)) return true;
      continue;
    }
    if (a.always == b.always) return true;  // neither branch always exits, one may return
    const Body& other = a.always ? f.orelse : f.body;
    if (needs_exit_flags(a.always ? f.body : f.orelse, false) || may_return(other)) return true;
  }
  return top && may_return(body) && !exits_of(body, false).always;
}
bool contains_nested_return(const Body& body) {
  return needs_exit_flags(body, true);
}

// ---- Sugared values ------------------------------------------------------------------------

// What an expression denotes before it is a graph Value: a value, or a compile-time entity.
struct SV {
  enum Kind {
    kValue,       // value
    kNamespace,   // path: "torch", "torch.nn.functional", "math", "typing", "torch.relu", ...
    kMethod,      // value.path (a method of a tensor, list or str)
    kFunction,    // fn
    kSource,      // res (a Python function to compile)
    kAutocast,    // path: the autocast class
    kModule,      // value (the module object) + module
    kModuleList,  // children (a Sequential / ModuleList / tuple of modules)
    kTupleSV,     // children (a tuple literal of sugared values, e.g. for isinstance)
    kBuiltin,     // path: a Python builtin function: len, range, int, ...
    kType,        // type (a type used as a value: isinstance's second argument)
    kNone,        // the Python None as a compile-time value (used for optional args)
  };
  Kind kind = kValue;
  Value* value = nullptr;
  std::string path;
  std::shared_ptr<Function> fn;
  Resolved res;
  std::shared_ptr<ModuleInfo> module;
  std::vector<SV> children;
  TypePtr type;

  static SV of(Value* v) {
    SV s;
    s.value = v;
    return s;
  }
  static SV ns(std::string p) {
    SV s;
    s.kind = kNamespace;
    s.path = std::move(p);
    return s;
  }
  static SV builtin(std::string p) {
    SV s;
    s.kind = kBuiltin;
    s.path = std::move(p);
    return s;
  }
};

// ---- Environment ---------------------------------------------------------------------------

struct Frame {
  Frame* parent = nullptr;
  Block* block = nullptr;
  std::map<std::string, Value*> vars;
  std::map<std::string, std::string> undefined_in;  // name -> "the false branch" etc.
  std::map<std::string, SV> sugared;        // names bound to compile-time values (modules, ...)
  std::map<std::string, TypePtr> declared;  // annotated types (x: Optional[Tensor] = None)
  bool terminated = false;                  // a `raise` ended this block
};

// ---- The function-level state --------------------------------------------------------------

struct Session;

struct FunctionEmitter {
  Session& session;
  std::shared_ptr<Graph> graph = std::make_shared<Graph>();
  std::shared_ptr<Resolver> resolver;
  std::shared_ptr<ModuleInfo> self_module;  // set when compiling a method
  Frame* env = nullptr;
  TypePtr declared_return;
  TypePtr inferred_return;
  bool use_exit_flags = false;
  int loop_depth = 0;
  int unrolled_depth = 0;  // loop_depth of the innermost loop unrolled at compile time
  std::string fn_name;

  FunctionEmitter(Session& s, std::shared_ptr<Resolver> r) : session(s), resolver(std::move(r)) {}

  std::shared_ptr<Function> emit_def(const FunctionDef& def, bool is_method);

  // ---- values ----
  Value* constant(const IValue& v, const SourceRange& r) { return graph->insert_constant(v, r); }
  Node* insert(Node* n, const SourceRange& r) {
    graph->insert(n);
    n->set_source_range(r);
    return n;
  }
  Value* none(const SourceRange& r) { return constant(IValue(), r); }

  // ---- environment ----
  Value* lookup_var(const std::string& name) {
    for (Frame* f = env; f; f = f->parent) {
      auto it = f->vars.find(name);
      if (it != f->vars.end()) return it->second;
    }
    return nullptr;
  }
  const SV* lookup_sugared(const std::string& name) {
    for (Frame* f = env; f; f = f->parent) {
      auto it = f->sugared.find(name);
      if (it != f->sugared.end()) return &it->second;
      if (f->vars.count(name)) return nullptr;
    }
    return nullptr;
  }
  TypePtr declared_type(const std::string& name) {
    for (Frame* f = env; f; f = f->parent) {
      auto it = f->declared.find(name);
      if (it != f->declared.end()) return it->second;
    }
    return nullptr;
  }
  void set_var(const std::string& name, Value* v, const SourceRange& r) {
    if (TypePtr d = declared_type(name)) {
      if (!v->type()->is_subtype_of(*d) &&
          !(is_none(v->type()) && d->kind() == TypeKind::Optional)) {
        fail(r, fmt::format("Variable '{}' is annotated with type {} but is being assigned to a "
                            "value of type {}",
                            name, type_str(d), type_str(v->type())));
      }
      if (!v->type()->unrefined()->equals(*d)) v = unchecked_cast(v, d, r);
    } else if (in_loop_carry(name)) {
      // A loop-carried variable keeps the type it had before the loop (torch's rule).
      Value* old = lookup_var(name);
      if (old && !v->type()->is_subtype_of(*old->type()->unrefined()) &&
          !(is_none(v->type()) && old->type()->kind() == TypeKind::Optional))
        fail(r, fmt::format("Variable '{}' previously had type {} but is now being assigned to a "
                            "value of type {}",
                            name, type_str(old->type()), type_str(v->type())));
    }
    env->vars[name] = v;
    env->undefined_in.erase(name);
    env->sugared.erase(name);
    if (!v->has_debug_name() && v->node()->kind() != sym::prim::Constant && name[0] != '$')
      v->set_debug_name(name);
  }
  // Whether `name` is carried by an enclosing loop being emitted (its type is then fixed).
  std::vector<std::set<std::string>> carried_stack;
  bool in_loop_carry(const std::string& name) {
    for (const auto& s : carried_stack)
      if (s.count(name)) return true;
    return false;
  }

  Value* unchecked_cast(Value* v, const TypePtr& t, const SourceRange& r) {
    Node* n = insert(graph->create(sym::prim::unchecked_cast, {v}, 1), r);
    n->output()->set_type(t);
    return n->output();
  }

  // ---- statements ----
  void emit_body(const Body& body, size_t from = 0);
  void emit_stmt(const Stmt& s, const Body& body, size_t index, bool& rest_consumed);
  void emit_assign(const Assign& a);
  void emit_assign_target(const Expr& target, SV value, const SourceRange& r);
  void emit_aug_assign(const AugAssign& a);
  void emit_ann_assign(const AnnAssign& a);
  void emit_if(const If& s, const Body* rest_body, size_t rest_from, bool& rest_consumed);
  void emit_if_blocks(Value* cond, const SourceRange& r, const std::function<void()>& then_fn,
                      const std::function<void()>& else_fn,
                      const std::map<std::string, TypePtr>* then_refine = nullptr,
                      const std::map<std::string, TypePtr>* else_refine = nullptr);
  void emit_for(const For& s);
  void emit_while(const While& s);
  void emit_loop(const SourceRange& r, Value* max_trip, Value* init_cond,
                 const std::set<std::string>& assigned, const Exits& ex,
                 const std::function<void(Value* i)>& body_fn,
                 const std::function<Value*()>& cond_fn);
  // Emits `for target in iter:` (a range, list, tensor or str loop; tuples and module lists
  // unroll).
  void emit_for_in(const Expr& target, const Expr& iter, const SourceRange& r,
                   std::set<std::string> assigned, const Exits& ex,
                   const std::function<void()>& body_fn);
  Value* loop_continue_cond(const Exits& ex, const SourceRange& r);
  void emit_return(const Return& s);
  void emit_assert(const Assert& s);
  void emit_raise(const Raise& s);
  void emit_with(const With& s);
  void emit_guarded_rest(const Body& body, size_t from, const SourceRange& r);

  // ---- expressions ----
  SV emit_sv(const Expr& e);
  Value* emit_expr(const Expr& e, const TypePtr& hint = nullptr);
  Value* as_value(const SV& sv, const SourceRange& r);
  SV emit_name(const Name& n);
  SV emit_attribute(const Attribute& a);
  SV emit_call(const Call& c);
  Value* emit_subscript(const Subscript& s, Value* base);
  Value* emit_binop(BinOpKind op, Value* l, Value* r, const SourceRange& range);
  Value* emit_compare(const Compare& c);
  Value* emit_cmp(CmpOpKind op, Value* l, Value* r, const SourceRange& range);
  Value* emit_bool_op(const BoolOp& b);
  Value* emit_unary(const UnaryOp& u);
  Value* emit_if_exp(const IfExp& e);
  Value* emit_list(const ListExpr& l, const TypePtr& hint);
  Value* emit_list_comp(const ListComp& c);
  Value* emit_cond(const Expr& e);  // a bool for `if`/`while`
  SV resolve_free(const std::string& name, const SourceRange& r);

  // Calls
  struct Arg {
    SV sv;
    Value* value = nullptr;  // emitted lazily
    SourceRange range;
    std::string name;  // keyword name or ""
  };
  std::vector<Arg> emit_args(const Call& c);
  Value* arg_value(Arg& a) {
    if (!a.value) a.value = as_value(a.sv, a.range);
    return a.value;
  }
  Value* call_builtin_op(const std::string& qualified, std::vector<Arg> args, const SourceRange& r,
                         Value* self = nullptr);
  std::optional<std::vector<Value*>> match_schema(const OpEntry& op, std::vector<Arg>& args,
                                                  Value* self, const SourceRange& r,
                                                  bool allow_conversions, std::string& why);
  Value* convert_to(Value* v, const Argument& arg, bool allow_conversions, const SourceRange& r);
  SV call_sv(const SV& callee, std::vector<Arg> args, const SourceRange& r);
  Value* call_function(const std::shared_ptr<Function>& fn, std::vector<Arg> args,
                       const SourceRange& r, Value* self = nullptr);
  Value* call_python_builtin(const std::string& name, std::vector<Arg>& args, const SourceRange& r);
  Value* call_tensor_method(Value* self, const std::string& name, std::vector<Arg>& args,
                            const SourceRange& r);
  Value* call_list_method(Value* self, const std::string& name, std::vector<Arg>& args,
                          const SourceRange& r);
  Value* call_functional(const std::string& name, std::vector<Arg>& args, const SourceRange& r);
  Value* call_math(const std::string& name, std::vector<Arg>& args, const SourceRange& r);
  Value* call_autocast(const std::string& cls, std::vector<Arg>& args, const SourceRange& r);
  Value* emit_node_call(Symbol kind, const std::vector<Value*>& inputs, TypePtr out,
                        const SourceRange& r);
  Value* tensor_index(Value* t, const std::vector<const Expr*>& idx, const SourceRange& r);

  // Types
  TypePtr parse_type(const Expr& e);
  IValue eval_constant(const Expr& e);

  // Module attributes
  SV module_attr(const SV& mod, const std::string& name, const SourceRange& r);

  // Refinements from a condition: names refined in the true / false branch.
  using Refinements = std::map<std::string, TypePtr>;
  void refinements(const Expr& cond, Refinements& t, Refinements& f);
};

// One compilation: memoizes callees by identity, detects recursion.
struct Session {
  std::map<uintptr_t, std::shared_ptr<Function>> compiled;
  std::set<uintptr_t> in_progress;
  std::map<std::pair<const ModuleInfo*, std::string>, std::shared_ptr<Function>> methods;
  std::set<std::pair<const ModuleInfo*, std::string>> methods_in_progress;
  CompileOptions options;
  // compile_source: callees that are defs of the same file (no source of their own).
  std::function<std::shared_ptr<Function>(uintptr_t, const SourceRange&)> file_defs;

  std::shared_ptr<Function> compile_source_fn(const Resolved& res, const SourceRange& call_site);
  std::shared_ptr<Function> compile_method(const std::shared_ptr<ModuleInfo>& m,
                                           const std::string& name, const SourceRange& call_site);
};

std::string qualified_name_for(const std::string& name) {
  return "__torch__." + name;
}

const FunctionDef& single_def(const Module& m, const SourceRange& fallback) {
  const FunctionDef* def = nullptr;
  for (const auto& s : m.body) {
    if (s->kind == StmtKind::FunctionDef) {
      if (def) fail(s->range, "expected the source of one function, found a second def");
      def = &s->as<FunctionDef>();
    } else if (s->kind != StmtKind::Pass && !(s->kind == StmtKind::Expr)) {
      fail(s->range, "expected the source of one function");
    }
  }
  if (!def) fail(fallback, "expected the source of a function (no def found)");
  return *def;
}

// Keeps parsed sources alive as long as the Functions compiled from them (their ranges point in).
std::shared_ptr<Function> compile_def(Session& session, const FunctionDef& def,
                                      std::shared_ptr<Resolver> resolver,
                                      std::shared_ptr<ModuleInfo> self_module) {
  FunctionEmitter em(session, std::move(resolver));
  em.self_module = std::move(self_module);
  return em.emit_def(def, em.self_module != nullptr);
}

std::shared_ptr<Function> Session::compile_source_fn(const Resolved& res,
                                                     const SourceRange& call_site) {
  if (!res.source && file_defs)
    if (auto fn = file_defs(res.identity, call_site)) return fn;
  if (!res.source) fail(call_site, "internal: a function to compile has no source");
  if (res.identity) {
    auto it = compiled.find(res.identity);
    if (it != compiled.end()) return it->second;
    if (in_progress.count(res.identity))
      fail(call_site, "recursive calls are not supported in script");
    in_progress.insert(res.identity);
  }
  try {
    auto mod = parse_module(res.source);
    const FunctionDef& def = single_def(*mod, call_site);
    auto fn = compile_def(*this, def, res.resolver ? res.resolver : builtin_resolver(), nullptr);
    if (res.identity) {
      in_progress.erase(res.identity);
      compiled[res.identity] = fn;
    }
    return fn;
  } catch (const CompileError& e) {
    if (res.identity) in_progress.erase(res.identity);
    if (call_site.valid()) throw e.called_from(call_site);
    throw;
  }
}

std::shared_ptr<Function> Session::compile_method(const std::shared_ptr<ModuleInfo>& m,
                                                  const std::string& name,
                                                  const SourceRange& call_site) {
  auto key = std::make_pair(m.get(), name);
  auto it = methods.find(key);
  if (it != methods.end()) return it->second;
  auto src = m->methods.find(name);
  if (src == m->methods.end())
    fail(call_site, fmt::format("module '{}' has no method '{}'", m->class_name, name));
  if (methods_in_progress.count(key))
    fail(call_site, "recursive method calls are not supported in script");
  methods_in_progress.insert(key);
  try {
    auto mod = parse_module(src->second);
    const FunctionDef& def = single_def(*mod, call_site);
    auto fn = compile_def(*this, def, m->resolver ? m->resolver : builtin_resolver(), m);
    methods_in_progress.erase(key);
    methods[key] = fn;
    return fn;
  } catch (const CompileError& e) {
    methods_in_progress.erase(key);
    if (call_site.valid()) throw e.called_from(call_site);
    throw;
  }
}

}  // namespace
}  // namespace ampjit::script

// ---- Functions -----------------------------------------------------------------------------

namespace ampjit::script {
namespace {

const char* kRet = "$ret";
const char* kRetVal = "$retval";
std::string brk_name(int depth) {
  return fmt::format("$brk{}", depth);
}
std::string cont_name(int depth) {
  return fmt::format("$cont{}", depth);
}

bool is_uninitialized_placeholder(const Value* v) {
  return v->node()->kind() == sym::prim::Uninitialized && v->type()->kind() == TypeKind::Any;
}

std::shared_ptr<Function> FunctionEmitter::emit_def(const FunctionDef& def, bool is_method) {
  fn_name = def.name;
  Frame top;
  top.block = graph->block();
  env = &top;
  graph->set_insert_point(graph->block());

  auto schema = std::make_shared<FunctionSchema>();
  schema->ns = "__torch__";
  schema->name = def.name;
  for (size_t i = 0; i < def.params.size(); ++i) {
    const Param& p = def.params[i];
    if (p.kind == Param::VarArgs || p.kind == Param::VarKw)
      fail(p.range, "script functions do not support variable arguments (*args, **kwargs)");
    Value* in = graph->add_input(p.name);
    if (i == 0 && is_method) {
      if (!self_module) fail(p.range, "a method needs its module");
      in->set_type(Type::named(TypeKind::Object, self_module->class_name));
      top.vars[p.name] = in;
      top.sugared[p.name] = [&] {
        SV s;
        s.kind = SV::kModule;
        s.value = in;
        s.module = self_module;
        return s;
      }();
      continue;
    }
    Argument arg;
    arg.name = p.name;
    arg.kwarg_only = p.kind == Param::KwOnly;
    if (p.default_value) {
      IValue d = eval_constant(*p.default_value);
      if (!p.annotation) {
        // Unannotated means Tensor; a number/str/bool default says otherwise (torch 2 infers too).
        if (d.is_int())
          arg.type = Type::int_();
        else if (d.is_double())
          arg.type = Type::float_();
        else if (d.is_bool())
          arg.type = Type::bool_();
        else if (d.is_string())
          arg.type = Type::str_();
        else if (d.is_none())
          arg.type = Type::optional(Type::tensor());
      }
      if (!arg.type) arg.type = p.annotation ? parse_type(*p.annotation) : Type::tensor();
      if (d.is_scalar_type()) d = IValue(torch_dtype_code(d.to_scalar_type()));
      if (d.is_int() && arg.type->kind() == TypeKind::Float)
        d = IValue(static_cast<double>(d.to_int()));
      if (!value_matches_type(d, *arg.type) &&
          !(d.is_none() && arg.type->kind() == TypeKind::Optional))
        fail(p.default_value->range,
             fmt::format("Expected a default value of type {} on parameter \"{}\"",
                         type_str(arg.type), p.name));
      arg.default_value = d;
    } else {
      arg.type = p.annotation ? parse_type(*p.annotation) : Type::tensor();
    }
    in->set_type(arg.type);
    top.vars[p.name] = in;
    schema->args.push_back(std::move(arg));
  }
  if (def.returns) declared_return = parse_type(*def.returns);

  // Decorators: the script markers are ignored; an autocast decorator is torch's error in
  // torchscript semantics and a region around the whole body in eager semantics.
  const bool eager =
      resolve_autocast_semantics(session.options.semantics) == AutocastSemantics::Eager;
  std::vector<std::pair<Value*, SourceRange>> decorator_regions;
  for (const auto& d : def.decorators) {
    const Expr* e = d.get();
    if (e->kind == ExprKind::Call) e = e->as<Call>().func.get();
    SV s = emit_sv(*e);
    if (s.kind == SV::kAutocast && eager) {
      std::vector<Arg> args;
      if (d->kind == ExprKind::Call) args = emit_args(d->as<Call>());
      decorator_regions.emplace_back(call_autocast(s.path, args, d->range), d->range);
      continue;
    }
    if (s.kind == SV::kAutocast)
      fail(d->range, "TorchScript error: @autocast() decorator is not supported in script mode");
    if (s.kind == SV::kNamespace &&
        (s.path == "torch.jit.script" || s.path == "torch.jit.export" ||
         s.path == "torch.jit.script_method" || s.path == "staticmethod"))
      continue;
    fail(d->range,
         "decorators are not supported in script (only @torch.jit.script / @torch.jit.export)");
  }

  use_exit_flags = contains_nested_return(def.body);
  if (use_exit_flags) {
    top.vars[kRet] = constant(IValue(false), def.range);
    Node* u = insert(graph->create(sym::prim::Uninitialized, {}, 1), def.range);
    u->output()->set_type(declared_return ? declared_return : Type::any());
    top.vars[kRetVal] = u->output();
  }
  // Outermost decorator first, as Python applies them.
  for (const auto& [obj, range] : decorator_regions) {
    Node* enter = insert(graph->create(sym::prim::Enter, {obj}, 1), range);
    enter->output()->set_type(obj->type());
  }
  emit_body(def.body);
  const SourceRange end_range = def.body.empty() ? def.range : def.body.back()->range;
  for (size_t i = decorator_regions.size(); i-- > 0;) {
    Node* exit = insert(graph->create(sym::prim::Exit, {decorator_regions[i].first}, 1),
                        decorator_regions[i].second);
    exit->output()->set_type(Type::none());
  }
  if (use_exit_flags && !exits_of(def.body, false).always) {
    // Falling off the end returns None on the paths that did not return.
    Value* ret = lookup_var(kRet);
    Value* not_ret =
        call_builtin_op("aten::__not__", {Arg{SV::of(ret), ret, end_range, ""}}, end_range);
    emit_if_blocks(
        not_ret, end_range, [&] { set_var(kRetVal, none(end_range), end_range); }, [] {});
  }
  Value* result = env->vars.count(kRetVal) ? env->vars[kRetVal] : nullptr;
  if (!result || is_uninitialized_placeholder(result)) result = none(end_range);
  if (declared_return) {
    if (!result->type()->is_subtype_of(*declared_return) &&
        !(is_none(result->type()) && declared_return->kind() == TypeKind::Optional))
      fail(end_range,
           fmt::format("Return value was annotated as having type {} but is actually of type {}",
                       type_str(declared_return), type_str(result->type())));
  }
  graph->register_output(result);
  Argument ret;
  ret.name = "";
  ret.type = declared_return ? declared_return : result->type()->unrefined();
  schema->returns.push_back(ret);
  graph->verify();

  auto fn = std::make_shared<Function>(qualified_name_for(def.name), graph);
  fn->set_schema(schema);
  fn->set_optimizable(session.options.optimize);
  if (session.options.semantics) fn->set_autocast_semantics(session.options.semantics);
  return fn;
}

// ---- Statements ----------------------------------------------------------------------------

void FunctionEmitter::emit_body(const Body& body, size_t from) {
  const bool in_loop = loop_depth > 0;
  for (size_t i = from; i < body.size(); ++i) {
    const Stmt& s = *body[i];
    bool rest_consumed = false;
    emit_stmt(s, body, i, rest_consumed);
    if (rest_consumed || env->terminated) return;
    const Exits ex = exits_of(s, in_loop);
    if (ex.always) return;  // the rest is dead code
    if (ex.any() && i + 1 < body.size()) {
      emit_guarded_rest(body, i + 1, body[i + 1]->range);
      return;
    }
  }
}

// The statements body[from..] run only when no exit flag is set (Note [Exit flags]).
void FunctionEmitter::emit_guarded_rest(const Body& body, size_t from, const SourceRange& r) {
  std::vector<Value*> flags;
  if (use_exit_flags)
    if (Value* v = lookup_var(kRet)) flags.push_back(v);
  if (loop_depth > 0) {
    if (Value* v = lookup_var(brk_name(loop_depth))) flags.push_back(v);
    if (Value* v = lookup_var(cont_name(loop_depth))) flags.push_back(v);
  }
  if (flags.empty()) {
    emit_body(body, from);
    return;
  }
  Value* any = flags[0];
  for (size_t i = 1; i < flags.size(); ++i)
    any = call_builtin_op(
        "aten::__or__", {Arg{SV::of(any), any, r, ""}, Arg{SV::of(flags[i]), flags[i], r, ""}}, r);
  Value* go = call_builtin_op("aten::__not__", {Arg{SV::of(any), any, r, ""}}, r);
  emit_if_blocks(
      go, r, [&] { emit_body(body, from); }, [] {});
}

void FunctionEmitter::emit_stmt(const Stmt& s, const Body& body, size_t index,
                                bool& rest_consumed) {
  switch (s.kind) {
    case StmtKind::Expr: {
      const Expr& e = *s.as<ExprStmt>().value;
      if (e.kind == ExprKind::Str) return;  // a docstring
      emit_sv(e);
      return;
    }
    case StmtKind::Assign:
      emit_assign(s.as<Assign>());
      return;
    case StmtKind::AugAssign:
      emit_aug_assign(s.as<AugAssign>());
      return;
    case StmtKind::AnnAssign:
      emit_ann_assign(s.as<AnnAssign>());
      return;
    case StmtKind::If:
      emit_if(s.as<If>(), &body, index + 1, rest_consumed);
      return;
    case StmtKind::For:
      emit_for(s.as<For>());
      return;
    case StmtKind::While:
      emit_while(s.as<While>());
      return;
    case StmtKind::Break:
    case StmtKind::Continue: {
      if (loop_depth == 0)
        fail(s.range,
             fmt::format("'{}' outside loop", s.kind == StmtKind::Break ? "break" : "continue"));
      if (unrolled_depth > 0 && unrolled_depth >= loop_depth)
        fail(s.range,
             "break and continue are not supported in loops over modules or tuples (they are "
             "unrolled)");
      set_var(s.kind == StmtKind::Break ? brk_name(loop_depth) : cont_name(loop_depth),
              constant(IValue(true), s.range), s.range);
      return;
    }
    case StmtKind::Return:
      emit_return(s.as<Return>());
      return;
    case StmtKind::Pass:
      return;
    case StmtKind::Assert:
      emit_assert(s.as<Assert>());
      return;
    case StmtKind::Raise:
      emit_raise(s.as<Raise>());
      return;
    case StmtKind::With:
      emit_with(s.as<With>());
      return;
    case StmtKind::FunctionDef:
      fail(s.range, "nested function definitions are not supported in script");
    case StmtKind::ClassDef:
      fail(s.range, "class definitions are not supported inside script functions");
    case StmtKind::Import:
    case StmtKind::ImportFrom:
      fail(s.range, "import statements are not supported inside script functions");
    case StmtKind::Global:
    case StmtKind::Nonlocal:
      fail(s.range, "global and nonlocal are not supported in script");
    case StmtKind::Delete:
      fail(s.range, "del is not supported in script");
  }
  fail(s.range, "unsupported statement");
}

void FunctionEmitter::emit_assign(const Assign& a) {
  if (a.value->kind == ExprKind::List && a.targets.size() == 1 &&
      a.targets[0]->kind == ExprKind::Name) {
    // `x = []` takes the declared element type when x was annotated before.
    const TypePtr d = declared_type(a.targets[0]->as<Name>().id);
    Value* v = emit_list(a.value->as<ListExpr>(), d);
    set_var(a.targets[0]->as<Name>().id, v, a.range);
    return;
  }
  SV v = emit_sv(*a.value);
  for (const auto& t : a.targets) emit_assign_target(*t, v, a.range);
}

void FunctionEmitter::emit_assign_target(const Expr& target, SV value, const SourceRange& r) {
  switch (target.kind) {
    case ExprKind::Name: {
      const std::string& name = target.as<Name>().id;
      if (value.kind != SV::kValue) {
        if (value.kind == SV::kNone) {
          set_var(name, none(r), r);
          return;
        }
        // Modules, functions and other compile-time values bind by name.
        env->sugared[name] = value;
        env->vars.erase(name);
        return;
      }
      set_var(name, value.value, r);
      return;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      const auto& elts =
          target.kind == ExprKind::Tuple ? target.as<TupleExpr>().elts : target.as<ListExpr>().elts;
      for (const auto& e : elts)
        if (e->kind == ExprKind::Starred)
          fail(e->range, "starred assignment targets are not supported in script");
      if (value.kind == SV::kModuleList || value.kind == SV::kTupleSV) {
        if (value.children.size() != elts.size())
          fail(r, fmt::format("too many values to unpack: need {} but found {}", elts.size(),
                              value.children.size()));
        for (size_t i = 0; i < elts.size(); ++i) emit_assign_target(*elts[i], value.children[i], r);
        return;
      }
      Value* v = as_value(value, r);
      const Type& t = *v->type();
      std::vector<TypePtr> types;
      Symbol kind;
      if (t.kind() == TypeKind::Tuple) {
        if (t.contained().size() != elts.size())
          fail(r, fmt::format("{} values to unpack: need {} but found {}",
                              t.contained().size() > elts.size() ? "too many" : "not enough",
                              elts.size(), t.contained().size()));
        types = t.contained();
        kind = sym::prim::TupleUnpack;
      } else if (t.kind() == TypeKind::List) {
        types.assign(elts.size(), t.elem());
        kind = sym::prim::ListUnpack;
      } else {
        fail(target.range, fmt::format("cannot unpack a value of type {}", type_str(v->type())));
      }
      Node* n = insert(graph->create(kind, {v}, elts.size()), r);
      for (size_t i = 0; i < elts.size(); ++i) {
        n->output(i)->set_type(types[i]);
        emit_assign_target(*elts[i], SV::of(n->output(i)), r);
      }
      return;
    }
    case ExprKind::Subscript: {
      const auto& sub = target.as<Subscript>();
      Value* base = emit_expr(*sub.value);
      Value* v = as_value(value, r);
      if (base->type()->kind() == TypeKind::List) {
        if (sub.indices.size() != 1 || sub.indices[0]->kind == ExprKind::Slice)
          fail(target.range, "list slice assignment is not supported in script");
        Value* idx = emit_expr(*sub.indices[0]);
        if (idx->type()->kind() != TypeKind::Int)
          fail(sub.indices[0]->range, "list indices must be integers");
        if (!v->type()->is_subtype_of(*base->type()->elem()))
          fail(r,
               fmt::format("Expected a value of type {} for list element but instead found type {}",
                           type_str(base->type()->elem()), type_str(v->type())));
        emit_node_call(kSetItem, {base, idx, v}, base->type(), r);
        return;
      }
      if (!is_tensor(base->type()))
        fail(target.range,
             fmt::format("'{}' object does not support item assignment", type_str(base->type())));
      std::vector<const Expr*> idx;
      for (const auto& i : sub.indices) idx.push_back(i.get());
      Value* view = tensor_index(base, idx, target.range);
      std::vector<Arg> args{Arg{SV::of(v), v, r, ""}};
      if (is_tensor(v->type()))
        call_builtin_op("aten::copy_", std::move(args), r, view);
      else
        call_builtin_op("aten::fill_", std::move(args), r, view);
      return;
    }
    case ExprKind::Attribute: {
      const auto& at = target.as<Attribute>();
      SV base = emit_sv(*at.value);
      if (base.kind != SV::kModule)
        fail(target.range, "only module attributes (self.x = ...) can be assigned in script");
      const ModuleInfo::Attr* attr = base.module->find(at.attr);
      if (!attr)
        fail(target.range,
             fmt::format("Module '{}' has no attribute '{}'", base.module->class_name, at.attr));
      if (attr->is_constant || attr->submodule)
        fail(target.range, fmt::format("cannot assign to constant or submodule '{}'", at.attr));
      Value* v = as_value(value, r);
      if (!v->type()->is_subtype_of(*attr->type))
        fail(r, fmt::format("Wrong type for attribute assignment. Expected {} but got {}",
                            type_str(attr->type), type_str(v->type())));
      Node* n = insert(graph->create(sym::prim::SetAttr, {base.value, v}, 0), r);
      n->set_attr(sym::attr::name, IValue(at.attr));
      return;
    }
    default:
      fail(target.range, "unsupported assignment target in script");
  }
}

void FunctionEmitter::emit_aug_assign(const AugAssign& a) {
  const Expr& t = *a.target;
  auto in_place = [&](Value* cur, Value* rhs) -> Value* {
    // Tensors update in place for + - * / (Python calls __iadd__ etc.), as eager does.
    static const std::map<BinOpKind, const char*> ops = {{BinOpKind::Add, "aten::add_"},
                                                         {BinOpKind::Sub, "aten::sub_"},
                                                         {BinOpKind::Mul, "aten::mul_"},
                                                         {BinOpKind::Div, "aten::div_"}};
    auto it = ops.find(a.op);
    if (is_tensor(cur->type()) && it != ops.end())
      return call_builtin_op(it->second, {Arg{SV::of(rhs), rhs, a.value->range, ""}}, a.range, cur);
    return emit_binop(a.op, cur, rhs, a.range);
  };
  if (t.kind == ExprKind::Name) {
    Value* cur = as_value(emit_name(t.as<Name>()), t.range);
    Value* rhs = emit_expr(*a.value);
    Value* out = in_place(cur, rhs);
    if (out != cur) set_var(t.as<Name>().id, out, a.range);
    return;
  }
  if (t.kind == ExprKind::Subscript || t.kind == ExprKind::Attribute) {
    Value* cur = emit_expr(t);
    Value* rhs = emit_expr(*a.value);
    Value* out = in_place(cur, rhs);
    if (t.kind == ExprKind::Subscript && is_tensor(cur->type()))
      return;  // updated the view in place
    emit_assign_target(t, SV::of(out), a.range);
    return;
  }
  fail(t.range, "unsupported augmented assignment target in script");
}

void FunctionEmitter::emit_ann_assign(const AnnAssign& a) {
  if (a.target->kind != ExprKind::Name)
    fail(a.target->range, "annotated assignment needs a plain name in script");
  const std::string& name = a.target->as<Name>().id;
  TypePtr t = parse_type(*a.annotation);
  if (!a.value) {
    env->declared[name] = t;
    return;
  }
  Value* v = a.value->kind == ExprKind::List ? emit_list(a.value->as<ListExpr>(), t)
                                             : emit_expr(*a.value, t);
  env->declared[name] = t;
  set_var(name, v, a.range);
}

void FunctionEmitter::emit_if(const If& s, const Body* rest, size_t rest_from,
                              bool& rest_consumed) {
  const bool in_loop = loop_depth > 0;
  Value* cond = emit_cond(*s.test);
  const bool have_rest = rest && rest_from < rest->size();
  // A condition known at compile time (isinstance, `is None` on a non-optional, a module
  // constant) compiles one side only, as torch's metaprogramming does.
  if (auto c = constant_value(cond); c && c->is_bool()) {
    const Body& taken = c->to_bool() ? s.body : s.orelse;
    Refinements tr, fr;
    refinements(*s.test, tr, fr);
    for (auto& [name, t] : c->to_bool() ? tr : fr)
      if (Value* cur = lookup_var(name)) env->vars[name] = unchecked_cast(cur, t, s.range);
    emit_body(taken);
    const Exits ex = exits_of(taken, in_loop);
    if (env->terminated || ex.always) {
      rest_consumed = true;
    } else if (ex.any() && have_rest) {
      emit_guarded_rest(*rest, rest_from, (*rest)[rest_from]->range);
      rest_consumed = true;
    }
    return;
  }
  Refinements tr, fr;
  refinements(*s.test, tr, fr);
  const Exits a = exits_of(s.body, in_loop), b = exits_of(s.orelse, in_loop);
  // Note [Exit flags]: when exactly one branch always exits, the rest goes into the other one.
  const bool absorb = have_rest && a.always != b.always;
  auto branch = [&](const Body& stmts, const Exits& ex) {
    emit_body(stmts);
    if (!absorb || ex.always || env->terminated) return;
    if (ex.any())
      emit_guarded_rest(*rest, rest_from, (*rest)[rest_from]->range);
    else
      emit_body(*rest, rest_from);
  };
  emit_if_blocks(
      cond, s.range, [&] { branch(s.body, a); }, [&] { branch(s.orelse, b); }, &tr, &fr);
  if (absorb) rest_consumed = true;
}

void FunctionEmitter::emit_if_blocks(Value* cond, const SourceRange& r,
                                     const std::function<void()>& then_fn,
                                     const std::function<void()>& else_fn,
                                     const std::map<std::string, TypePtr>* then_refine,
                                     const std::map<std::string, TypePtr>* else_refine) {
  Node* n = insert(graph->create(sym::prim::If, {cond}, 0), r);
  Node* after = graph->insert_point();
  Frame frames[2];
  const std::map<std::string, TypePtr>* refine[2] = {then_refine, else_refine};
  const std::function<void()>* fns[2] = {&then_fn, &else_fn};
  std::map<std::string, Value*> refined_values[2];
  for (int k = 0; k < 2; ++k) {
    Block* b = n->add_block();
    frames[k].parent = env;
    frames[k].block = b;
    graph->set_insert_point(b);
    Frame* saved = env;
    env = &frames[k];
    if (refine[k])
      for (const auto& [name, t] : *refine[k]) {
        Value* cur = lookup_var(name);
        if (!cur) continue;
        Value* cast = unchecked_cast(cur, t, r);
        env->vars[name] = cast;
        refined_values[k][name] = cast;
      }
    (*fns[k])();
    env = saved;
  }
  graph->set_insert_point(after);
  // Join (Note [Emitting scoped Python into SSA]).
  std::set<std::string> names;
  for (int k = 0; k < 2; ++k)
    for (const auto& [name, v] : frames[k].vars) {
      auto it = refined_values[k].find(name);
      if (it != refined_values[k].end() && it->second == v) continue;  // only refined, not assigned
      names.insert(name);
    }
  const char* branch_name[2] = {"the true branch", "the false branch"};
  for (const std::string& name : names) {
    Value* vals[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k) {
      auto it = frames[k].vars.find(name);
      if (it != frames[k].vars.end())
        vals[k] = it->second;
      else
        vals[k] = lookup_var(name);
    }
    const bool dead[2] = {frames[0].terminated, frames[1].terminated};
    if (dead[0] && dead[1]) continue;
    if ((!vals[0] && !dead[0]) || (!vals[1] && !dead[1])) {
      env->undefined_in[name] = branch_name[vals[0] ? 1 : 0];
      env->vars.erase(name);
      continue;
    }
    TypePtr t;
    if (dead[0] || dead[1]) {
      t = vals[dead[0] ? 1 : 0]->type()->unrefined();
    } else {
      for (int k = 0; k < 2; ++k)
        if (is_uninitialized_placeholder(vals[k]) && !is_uninitialized_placeholder(vals[1 - k]))
          vals[k]->set_type(vals[1 - k]->type()->unrefined());
      t = unify(vals[0]->type(), vals[1]->type());
      if (!t)
        fail(r, fmt::format("Type mismatch: {} is set to type {} in the true branch and type {} in "
                            "the false branch",
                            name, type_str(vals[0]->type()), type_str(vals[1]->type())));
    }
    for (int k = 0; k < 2; ++k) {
      Block* b = n->blocks()[static_cast<size_t>(k)];
      Value* v = vals[k];
      if (dead[k] || !v) {
        Node* u = graph->create(sym::prim::Uninitialized, {}, 1);
        u->output()->set_type(t);
        b->append(u);
        v = u->output();
      }
      b->register_output(v);
    }
    Value* out = n->add_output();
    out->set_type(t);
    if (name[0] != '$') out->set_debug_name(name);
    env->vars[name] = out;
    env->undefined_in.erase(name);
  }
  if (frames[0].terminated && frames[1].terminated) env->terminated = true;
}

void FunctionEmitter::emit_return(const Return& s) {
  Value* v = s.value ? emit_expr(*s.value, declared_return) : none(s.range);
  if (declared_return) {
    if (v->type()->kind() == TypeKind::Int && declared_return->kind() == TypeKind::Float)
      v = call_builtin_op("aten::Float", {Arg{SV::of(v), v, s.range, ""}}, s.range);
    if (!v->type()->is_subtype_of(*declared_return) &&
        !(is_none(v->type()) && declared_return->kind() == TypeKind::Optional))
      fail(s.value ? s.value->range : s.range,
           fmt::format("Return value was annotated as having type {} but is actually of type {}",
                       type_str(declared_return), type_str(v->type())));
    if (!v->type()->unrefined()->equals(*declared_return) && !is_tensor(declared_return))
      v = unchecked_cast(v, declared_return, s.range);
  } else if (Value* prev = lookup_var(kRetVal); prev && !is_uninitialized_placeholder(prev)) {
    if (!unify(prev->type(), v->type()))
      fail(s.range,
           fmt::format(
               "Previous return statement returned a value of type {} but this return statement "
               "returns a value of type {}",
               type_str(prev->type()), type_str(v->type())));
  }
  env->vars[kRetVal] = v;
  if (use_exit_flags) env->vars[kRet] = constant(IValue(true), s.range);
}

void FunctionEmitter::emit_assert(const Assert& s) {
  Value* c = emit_cond(*s.test);
  std::string msg = "AssertionError: ";
  Value* msg_value = nullptr;
  if (s.msg) {
    Value* m = emit_expr(*s.msg);
    if (auto cm = constant_value(m); cm && cm->is_string())
      msg += cm->to_string_ref();
    else
      msg_value = m;
  }
  emit_if_blocks(
      c, s.range, [] {},
      [&] {
        Value* text =
            msg_value
                ? emit_node_call(
                      kFormat,
                      {constant(IValue(std::string("AssertionError: {}")), s.range), msg_value},
                      Type::str_(), s.range)
                : constant(IValue(msg), s.range);
        insert(graph->create(sym::prim::RaiseException, {text}, 0), s.range);
        env->terminated = true;
      });
}

void FunctionEmitter::emit_raise(const Raise& s) {
  std::string text = "Exception";
  Value* dynamic_msg = nullptr;
  if (s.exc) {
    const Expr* e = s.exc.get();
    std::string cls;
    const Expr* arg = nullptr;
    if (e->kind == ExprKind::Call) {
      const auto& c = e->as<Call>();
      if (c.func->kind == ExprKind::Name) cls = c.func->as<Name>().id;
      if (!c.args.empty()) arg = c.args[0].get();
    } else if (e->kind == ExprKind::Name) {
      cls = e->as<Name>().id;
    }
    if (cls.empty())
      fail(e->range, "raise needs an exception class call (raise ValueError(\"...\")) in script");
    text = cls;
    if (arg) {
      Value* m = emit_expr(*arg);
      if (auto cm = constant_value(m); cm && cm->is_string())
        text += ": " + cm->to_string_ref();
      else
        dynamic_msg = m;
    }
  }
  Value* msg =
      dynamic_msg ? emit_node_call(kFormat, {constant(IValue(text + ": {}"), s.range), dynamic_msg},
                                   Type::str_(), s.range)
                  : constant(IValue(text), s.range);
  insert(graph->create(sym::prim::RaiseException, {msg}, 0), s.range);
  env->terminated = true;
}

void FunctionEmitter::emit_with(const With& s) {
  std::vector<Value*> objects;
  for (const WithItem& item : s.items) {
    SV ctx = emit_sv(*item.context);
    Value* obj = ctx.kind == SV::kValue ? ctx.value : nullptr;
    if (!obj || obj->type()->kind() != TypeKind::Object ||
        !is_autocast_class_name(obj->type()->name()))
      fail(item.context->range,
           "`with` in script supports only autocast context managers (torch.autocast, "
           "torch.cpu.amp.autocast, torch.cuda.amp.autocast)");
    Node* enter = insert(graph->create(sym::prim::Enter, {obj}, 1), item.range);
    enter->output()->set_type(obj->type());
    if (item.var) {
      if (item.var->kind != ExprKind::Name)
        fail(item.var->range, "`with ... as` needs a plain name in script");
      set_var(item.var->as<Name>().id, enter->output(), item.range);
    }
    objects.push_back(obj);
  }
  emit_body(s.body);
  for (size_t i = objects.size(); i-- > 0;) {
    Node* exit = insert(graph->create(sym::prim::Exit, {objects[i]}, 1), s.items[i].range);
    exit->output()->set_type(Type::none());
  }
}

}  // namespace
}  // namespace ampjit::script

// ---- Loops ---------------------------------------------------------------------------------

namespace ampjit::script {
namespace {

// `not ($brk or $ret)` for the loop being emitted, or true when it cannot exit early.
Value* FunctionEmitter::loop_continue_cond(const Exits& ex, const SourceRange& r) {
  std::vector<Value*> flags;
  if (ex.may_break)
    if (Value* v = lookup_var(brk_name(loop_depth))) flags.push_back(v);
  if (ex.may_return && use_exit_flags)
    if (Value* v = lookup_var(kRet)) flags.push_back(v);
  if (flags.empty()) return constant(IValue(true), r);
  Value* any = flags[0];
  for (size_t i = 1; i < flags.size(); ++i)
    any = call_builtin_op(
        "aten::__or__", {Arg{SV::of(any), any, r, ""}, Arg{SV::of(flags[i]), flags[i], r, ""}}, r);
  return call_builtin_op("aten::__not__", {Arg{SV::of(any), any, r, ""}}, r);
}

void FunctionEmitter::emit_loop(const SourceRange& r, Value* max_trip, Value* init_cond,
                                const std::set<std::string>& assigned, const Exits& ex,
                                const std::function<void(Value* i)>& body_fn,
                                const std::function<Value*()>& cond_fn) {
  const int depth = loop_depth + 1;
  std::set<std::string> names = assigned;
  if (ex.may_break) {
    set_var(brk_name(depth), constant(IValue(false), r), r);
    names.insert(brk_name(depth));
  }
  if (use_exit_flags && ex.may_return) {
    names.insert(kRet);
    names.insert(kRetVal);
  }
  std::vector<std::string> carried;
  std::vector<Value*> inputs{max_trip, init_cond};
  for (const std::string& name : names) {
    Value* v = lookup_var(name);
    if (!v) continue;
    carried.push_back(name);
    inputs.push_back(v);
  }
  Node* loop = insert(graph->create(sym::prim::Loop, inputs, 0), r);
  Node* after = graph->insert_point();
  Block* body = loop->add_block();
  Value* i = body->add_input();
  i->set_type(Type::int_());
  Frame bf;
  bf.parent = env;
  bf.block = body;
  std::vector<Value*> params;
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* p = body->add_input();
    p->set_type(inputs[2 + k]->type()->unrefined());
    if (carried[k][0] != '$') p->set_debug_name(carried[k]);
    bf.vars[carried[k]] = p;
    params.push_back(p);
  }
  carried_stack.emplace_back(carried.begin(), carried.end());
  ++loop_depth;
  env = &bf;
  graph->set_insert_point(body);
  if (ex.may_continue) set_var(cont_name(depth), constant(IValue(false), r), r);
  body_fn(i);
  Value* c = cond_fn();
  body->register_output(c);
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* v = lookup_var(carried[k]);
    Value* p = params[k];
    if (p->type()->kind() == TypeKind::Any && v->type()->kind() != TypeKind::Any) {
      // The hidden return value starts untyped: the loop's return statement gives its type.
      p->set_type(v->type()->unrefined());
      if (is_uninitialized_placeholder(inputs[2 + k]))
        inputs[2 + k]->set_type(v->type()->unrefined());
    }
    if (!v->type()->is_subtype_of(*p->type()) &&
        !(is_none(v->type()) && p->type()->kind() == TypeKind::Optional))
      fail(r, fmt::format("Variable '{}' previously had type {} but is now being assigned to a "
                          "value of type {}",
                          carried[k], type_str(p->type()), type_str(v->type())));
    body->register_output(v);
  }
  --loop_depth;
  carried_stack.pop_back();
  env = bf.parent;
  graph->set_insert_point(after);
  for (size_t k = 0; k < carried.size(); ++k) {
    Value* o = loop->add_output();
    o->set_type(params[k]->type());
    if (carried[k][0] != '$') o->set_debug_name(carried[k]);
    env->vars[carried[k]] = o;
  }
}

void FunctionEmitter::emit_for(const For& s) {
  std::set<std::string> assigned;
  collect_assigned(s.body, assigned);
  Exits ex = exits_of(s.body, true);
  // exits_of(.., true) reports the loop's own break/continue; returns count from nested loops too.
  ex.may_return = ex.may_return || exits_of(s.body, false).may_return;
  emit_for_in(*s.target, *s.iter, s.range, assigned, ex, [&] { emit_body(s.body); });
}

void FunctionEmitter::emit_for_in(const Expr& target, const Expr& iter, const SourceRange& r,
                                  std::set<std::string> assigned, const Exits& ex,
                                  const std::function<void()>& body_fn) {
  auto cond = [&] { return loop_continue_cond(ex, r); };
  auto is_builtin_call = [&](const char* name) {
    return iter.kind == ExprKind::Call && iter.as<Call>().func->kind == ExprKind::Name &&
           iter.as<Call>().func->as<Name>().id == name && !lookup_var(name);
  };
  if (is_builtin_call("range")) {
    const auto& c = iter.as<Call>();
    if (c.args.empty() || c.args.size() > 3 || !c.keywords.empty())
      fail(iter.range, "range() takes 1 to 3 positional int arguments in script");
    std::vector<Value*> a;
    for (const auto& e : c.args) {
      Value* v = emit_expr(*e);
      if (v->type()->kind() != TypeKind::Int)
        fail(e->range, fmt::format("range() arguments must be int, not {}", type_str(v->type())));
      a.push_back(v);
    }
    Value* max_trip;
    if (a.size() == 1) {
      max_trip = a[0];
    } else {
      Value* step = a.size() == 3 ? a[2] : constant(IValue(int64_t{1}), r);
      max_trip = call_builtin_op("aten::__range_length",
                                 {Arg{SV::of(a[0]), a[0], r, ""}, Arg{SV::of(a[1]), a[1], r, ""},
                                  Arg{SV::of(step), step, r, ""}},
                                 r);
      a.resize(2);
      a.push_back(step);
    }
    emit_loop(
        r, max_trip, constant(IValue(true), r), assigned, ex,
        [&](Value* i) {
          Value* v = i;
          if (a.size() > 1)
            v = call_builtin_op("aten::__derive_index",
                                {Arg{SV::of(i), i, r, ""}, Arg{SV::of(a[0]), a[0], r, ""},
                                 Arg{SV::of(a[2]), a[2], r, ""}},
                                r);
          emit_assign_target(target, SV::of(v), r);
          body_fn();
        },
        cond);
    return;
  }
  if (is_builtin_call("enumerate")) {
    const auto& c = iter.as<Call>();
    if (c.args.size() != 1 || target.kind != ExprKind::Tuple ||
        target.as<TupleExpr>().elts.size() != 2)
      fail(iter.range, "enumerate() in script: `for i, x in enumerate(xs)` with one argument");
    SV seq = emit_sv(*c.args[0]);
    Value* list = as_value(seq, c.args[0]->range);
    if (list->type()->kind() != TypeKind::List && !is_tensor(list->type()))
      fail(c.args[0]->range, "enumerate() over a list or tensor only in script");
    const auto& elts = target.as<TupleExpr>().elts;
    Value* n = is_tensor(list->type())
                   ? call_builtin_op("aten::len", {Arg{SV::of(list), list, r, ""}}, r)
                   : emit_node_call(kLen, {list}, Type::int_(), r);
    emit_loop(
        r, n, constant(IValue(true), r), assigned, ex,
        [&](Value* i) {
          Value* x =
              is_tensor(list->type())
                  ? call_builtin_op("aten::select",
                                    {Arg{SV::of(constant(IValue(int64_t{0}), r)), nullptr, r, ""},
                                     Arg{SV::of(i), i, r, ""}},
                                    r, list)
                  : emit_node_call(kGetItem, {list, i}, list->type()->elem(), r);
          emit_assign_target(*elts[0], SV::of(i), r);
          emit_assign_target(*elts[1], SV::of(x), r);
          body_fn();
        },
        cond);
    return;
  }
  SV seq = emit_sv(iter);
  // Sequences of modules and tuples unroll at compile time.
  std::vector<SV> items;
  bool unroll = false;
  if (seq.kind == SV::kModuleList || seq.kind == SV::kTupleSV) {
    items = seq.children;
    unroll = true;
  } else if (seq.kind == SV::kModule && seq.module->is_sequence) {
    for (const std::string& child : seq.module->sequence)
      items.push_back(module_attr(seq, child, r));
    unroll = true;
  } else if (seq.kind == SV::kValue && seq.value->type()->kind() == TypeKind::Tuple) {
    const auto& ts = seq.value->type()->contained();
    for (size_t k = 0; k < ts.size(); ++k) {
      Node* n = insert(graph->create(sym::prim::TupleIndex,
                                     {seq.value, constant(IValue(static_cast<int64_t>(k)), r)}, 1),
                       r);
      n->output()->set_type(ts[k]);
      items.push_back(SV::of(n->output()));
    }
    unroll = true;
  }
  if (unroll) {
    if (ex.may_return)
      fail(r,
           "return inside a loop over modules or tuples is not supported in script (it is "
           "unrolled)");
    const int saved = unrolled_depth;
    ++loop_depth;
    unrolled_depth = loop_depth;
    for (SV& item : items) {
      emit_assign_target(target, item, r);
      body_fn();
    }
    --loop_depth;
    unrolled_depth = saved;
    return;
  }
  Value* xs = as_value(seq, iter.range);
  const TypePtr& t = xs->type();
  Value* n;
  std::function<Value*(Value*)> element;
  if (t->kind() == TypeKind::List || t->kind() == TypeKind::Str) {
    n = emit_node_call(kLen, {xs}, Type::int_(), r);
    TypePtr et = t->kind() == TypeKind::List ? t->elem() : Type::str_();
    element = [=, this](Value* i) { return emit_node_call(kGetItem, {xs, i}, et, r); };
  } else if (is_tensor(t)) {
    n = call_builtin_op("aten::len", {Arg{SV::of(xs), xs, r, ""}}, r);
    element = [=, this](Value* i) {
      Value* zero = constant(IValue(int64_t{0}), r);
      return call_builtin_op("aten::select",
                             {Arg{SV::of(zero), zero, r, ""}, Arg{SV::of(i), i, r, ""}}, r, xs);
    };
  } else {
    fail(iter.range, fmt::format("'{}' object is not iterable in script", type_str(t)));
  }
  emit_loop(
      r, n, constant(IValue(true), r), assigned, ex,
      [&](Value* i) {
        emit_assign_target(target, SV::of(element(i)), r);
        body_fn();
      },
      cond);
}

void FunctionEmitter::emit_while(const While& s) {
  std::set<std::string> assigned;
  collect_assigned(s.body, assigned);
  Exits ex = exits_of(s.body, true);
  ex.may_return = ex.may_return || exits_of(s.body, false).may_return;
  Value* first = emit_cond(*s.test);
  Value* max_trip = constant(IValue(std::numeric_limits<int64_t>::max()), s.range);
  emit_loop(
      s.range, max_trip, first, assigned, ex, [&](Value*) { emit_body(s.body); },
      [&]() -> Value* {
        Value* go = loop_continue_cond(ex, s.range);
        if (auto c = constant_value(go); c && c->to_bool()) return emit_cond(*s.test);
        const std::string tmp = "$while";
        emit_if_blocks(
            go, s.range, [&] { set_var(tmp, emit_cond(*s.test), s.range); },
            [&] { set_var(tmp, constant(IValue(false), s.range), s.range); });
        Value* v = lookup_var(tmp);
        env->vars.erase(tmp);
        return v;
      });
}

}  // namespace
}  // namespace ampjit::script

// ---- Expressions ---------------------------------------------------------------------------

namespace ampjit::script {
namespace {

const std::set<std::string>& python_builtins() {
  static const std::set<std::string> s = {
      "len", "range", "int",        "float", "bool",  "str",       "min", "max",
      "abs", "print", "isinstance", "list",  "tuple", "enumerate", "sum", "round"};
  return s;
}

Value* FunctionEmitter::emit_node_call(Symbol kind, const std::vector<Value*>& inputs, TypePtr out,
                                       const SourceRange& r) {
  Node* n = insert(graph->create(kind, inputs, out ? 1 : 0), r);
  if (out) {
    n->output()->set_type(std::move(out));
    return n->output();
  }
  return nullptr;
}

Value* FunctionEmitter::as_value(const SV& sv, const SourceRange& r) {
  switch (sv.kind) {
    case SV::kValue:
      return sv.value;
    case SV::kNone:
      return none(r);
    case SV::kModule:
      return sv.value;
    case SV::kNamespace:
      fail(r, fmt::format("'{}' is a module or builtin, not a value", sv.path));
    case SV::kFunction:
    case SV::kSource:
      fail(r, "functions cannot be used as values in script (only called)");
    case SV::kAutocast:
      fail(r, fmt::format("the class {} cannot be used as a value (call it)", sv.path));
    case SV::kModuleList:
      fail(r, "a module list cannot be used as a value (iterate over it or index it)");
    case SV::kTupleSV: {
      std::vector<Value*> vs;
      for (const SV& c : sv.children) vs.push_back(as_value(c, r));
      return insert(graph->create_tuple(vs), r)->output();
    }
    case SV::kBuiltin:
      fail(r, fmt::format("builtin '{}' cannot be used as a value", sv.path));
    case SV::kType:
      fail(r, fmt::format("type '{}' cannot be used as a value", type_str(sv.type)));
    case SV::kMethod:
      fail(r, fmt::format("method '{}' cannot be used as a value (call it)", sv.path));
  }
  fail(r, "not a value");
}

SV FunctionEmitter::emit_sv(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name:
      return emit_name(e.as<Name>());
    case ExprKind::Attribute:
      return emit_attribute(e.as<Attribute>());
    case ExprKind::Call:
      return emit_call(e.as<Call>());
    case ExprKind::None: {
      SV s;
      s.kind = SV::kNone;
      return s;
    }
    case ExprKind::Tuple: {
      std::vector<SV> items;
      bool all_values = true;
      for (const auto& x : e.as<TupleExpr>().elts) {
        if (x->kind == ExprKind::Starred)
          fail(x->range, "starred expressions are not supported in script");
        items.push_back(emit_sv(*x));
        if (items.back().kind != SV::kValue && items.back().kind != SV::kNone) all_values = false;
      }
      if (!all_values) {
        SV s;
        s.kind = SV::kTupleSV;
        s.children = std::move(items);
        return s;
      }
      std::vector<Value*> vs;
      for (const SV& s : items) vs.push_back(as_value(s, e.range));
      return SV::of(insert(graph->create_tuple(vs), e.range)->output());
    }
    case ExprKind::Subscript: {
      const auto& s = e.as<Subscript>();
      SV base = emit_sv(*s.value);
      if (base.kind == SV::kNamespace && base.path.rfind("typing.", 0) == 0) {
        SV t;
        t.kind = SV::kType;
        t.type = parse_type(e);
        return t;
      }
      if (base.kind == SV::kModule && base.module->is_sequence) {
        if (s.indices.size() != 1) fail(e.range, "module lists take one index");
        IValue i = eval_constant(*s.indices[0]);
        if (!i.is_int())
          fail(s.indices[0]->range, "a module list index must be a constant int in script");
        int64_t k = i.to_int();
        const int64_t n = static_cast<int64_t>(base.module->sequence.size());
        if (k < 0) k += n;
        if (k < 0 || k >= n)
          fail(s.indices[0]->range, fmt::format("index {} is out of range", i.to_int()));
        return module_attr(base, base.module->sequence[static_cast<size_t>(k)], e.range);
      }
      if (base.kind == SV::kModuleList || base.kind == SV::kTupleSV) {
        IValue i = eval_constant(*s.indices[0]);
        if (!i.is_int()) fail(s.indices[0]->range, "the index must be a constant int in script");
        int64_t k = i.to_int(), n = static_cast<int64_t>(base.children.size());
        if (k < 0) k += n;
        if (k < 0 || k >= n) fail(s.indices[0]->range, "tuple index out of range");
        return base.children[static_cast<size_t>(k)];
      }
      return SV::of(emit_subscript(s, as_value(base, s.value->range)));
    }
    default:
      return SV::of(emit_expr(e));
  }
}

Value* FunctionEmitter::emit_expr(const Expr& e, const TypePtr& hint) {
  switch (e.kind) {
    case ExprKind::Int:
      return constant(IValue(e.as<IntLit>().value), e.range);
    case ExprKind::Float:
      return constant(IValue(e.as<FloatLit>().value), e.range);
    case ExprKind::Str:
      return constant(IValue(e.as<StrLit>().value), e.range);
    case ExprKind::Bool:
      return constant(IValue(e.as<BoolLit>().value), e.range);
    case ExprKind::None:
      return none(e.range);
    case ExprKind::Name:
    case ExprKind::Attribute:
    case ExprKind::Call:
    case ExprKind::Tuple:
    case ExprKind::Subscript:
      return as_value(emit_sv(e), e.range);
    case ExprKind::BinOp: {
      const auto& b = e.as<BinOp>();
      Value* l = emit_expr(*b.lhs);
      Value* r = emit_expr(*b.rhs);
      return emit_binop(b.op, l, r, e.range);
    }
    case ExprKind::UnaryOp:
      return emit_unary(e.as<UnaryOp>());
    case ExprKind::BoolOp:
      return emit_bool_op(e.as<BoolOp>());
    case ExprKind::Compare:
      return emit_compare(e.as<Compare>());
    case ExprKind::IfExp:
      return emit_if_exp(e.as<IfExp>());
    case ExprKind::List:
      return emit_list(e.as<ListExpr>(), hint);
    case ExprKind::ListComp:
      return emit_list_comp(e.as<ListComp>());
    case ExprKind::Dict:
      fail(e.range, "dictionaries are not supported by ampjit's script compiler yet");
    case ExprKind::Starred:
      fail(e.range, "starred expressions are not supported in script");
    case ExprKind::Slice:
      fail(e.range, "a slice is only valid inside a subscript");
  }
  fail(e.range, "unsupported expression");
}

SV FunctionEmitter::emit_name(const Name& n) {
  for (Frame* f = env; f; f = f->parent) {
    auto v = f->vars.find(n.id);
    if (v != f->vars.end()) {
      auto s = f->sugared.find(n.id);
      if (s != f->sugared.end()) return s->second;  // `self`
      return SV::of(v->second);
    }
    auto s = f->sugared.find(n.id);
    if (s != f->sugared.end()) return s->second;
    auto u = f->undefined_in.find(n.id);
    if (u != f->undefined_in.end())
      fail(n.range, fmt::format("{} is not defined in {}", n.id, u->second));
  }
  if (python_builtins().count(n.id)) return SV::builtin(n.id);
  return resolve_free(n.id, n.range);
}

SV FunctionEmitter::resolve_free(const std::string& name, const SourceRange& r) {
  Resolved res = resolver ? resolver->resolve(name, r) : Resolved{};
  SV s;
  switch (res.kind) {
    case Resolved::kUnknown:
      fail(r, fmt::format("undefined value {}", name));
    case Resolved::kNamespace:
      return SV::ns(res.path);
    case Resolved::kSource:
      s.kind = SV::kSource;
      s.res = std::move(res);
      return s;
    case Resolved::kFunction:
      s.kind = SV::kFunction;
      s.fn = res.function;
      return s;
    case Resolved::kAutocastClass:
      s.kind = SV::kAutocast;
      s.path = res.path;
      return s;
    case Resolved::kConstant: {
      IValue v = res.constant;
      if (v.is_scalar_type()) v = IValue(torch_dtype_code(v.to_scalar_type()));
      if (v.is_none()) {
        s.kind = SV::kNone;
        return s;
      }
      if (!(v.is_int() || v.is_double() || v.is_bool() || v.is_string() || v.is_device() ||
            v.is_list() || v.is_tuple()))
        fail(r, fmt::format("the global '{}' has a value script cannot use as a constant", name));
      return SV::of(constant(v, r));
    }
    case Resolved::kModule:
      fail(r, fmt::format(
                  "'{}' is a module instance; only `self` and its submodules can be used in script",
                  name));
    case Resolved::kUnsupported:
      fail(r,
           res.message.empty() ? fmt::format("'{}' cannot be used in script", name) : res.message);
  }
  fail(r, fmt::format("undefined value {}", name));
}

const char* autocast_class_for_path(const std::string& path) {
  if (path == "torch.autocast" || path == "torch.amp.autocast" ||
      path == "torch.amp.autocast_mode.autocast")
    return "torch.autocast";
  if (path == "torch.cpu.amp.autocast") return "torch.cpu.amp.autocast";
  if (path == "torch.cuda.amp.autocast") return "torch.cuda.amp.autocast";
  return nullptr;
}

SV FunctionEmitter::emit_attribute(const Attribute& a) {
  SV base = emit_sv(*a.value);
  const SourceRange& r = a.range;
  switch (base.kind) {
    case SV::kNamespace: {
      const std::string path = base.path + "." + a.attr;
      if (base.path == "torch") {
        auto it = dtype_names().find(a.attr);
        if (it != dtype_names().end())
          return SV::of(constant(IValue(torch_dtype_code(it->second)), r));
        if (a.attr == "Tensor") {
          SV t;
          t.kind = SV::kType;
          t.type = Type::tensor();
          return t;
        }
      }
      if (base.path == "math") {
        static const std::map<std::string, double> k = {
            {"pi", M_PI}, {"e", M_E}, {"tau", 2 * M_PI}, {"inf", INFINITY}, {"nan", NAN}};
        auto it = k.find(a.attr);
        if (it != k.end()) return SV::of(constant(IValue(it->second), r));
      }
      if (const char* ac = autocast_class_for_path(path)) {
        SV s;
        s.kind = SV::kAutocast;
        s.path = ac;
        return s;
      }
      return SV::ns(path);
    }
    case SV::kModule:
      return module_attr(base, a.attr, r);
    case SV::kValue: {
      Value* v = base.value;
      const TypeKind k = v->type()->kind();
      if (k == TypeKind::Tensor) {
        auto op0 = [&](const char* name) { return SV::of(call_builtin_op(name, {}, r, v)); };
        if (a.attr == "shape") return op0("aten::size");
        if (a.attr == "dtype") return op0("prim::dtype");
        if (a.attr == "device") return op0("prim::device");
        if (a.attr == "ndim") return op0("aten::dim");
        if (a.attr == "T" || a.attr == "mT" || a.attr == "data" || a.attr == "grad")
          fail(a.attr_range.valid() ? a.attr_range : r,
               fmt::format("Tensor.{} is not supported in script", a.attr));
      }
      if (k == TypeKind::Tensor || k == TypeKind::List || k == TypeKind::Str) {
        SV m;
        m.kind = SV::kMethod;
        m.value = v;
        m.path = a.attr;
        return m;
      }
      fail(r,
           fmt::format("'{}' object has no attribute or method '{}'", type_str(v->type()), a.attr));
    }
    default:
      fail(r, fmt::format("cannot get attribute '{}' of this value in script", a.attr));
  }
}

SV FunctionEmitter::module_attr(const SV& mod, const std::string& name, const SourceRange& r) {
  const ModuleInfo& info = *mod.module;
  if (const ModuleInfo::Attr* attr = info.find(name)) {
    if (attr->is_constant) {
      IValue v = attr->value;
      if (v.is_scalar_type()) v = IValue(torch_dtype_code(v.to_scalar_type()));
      if (v.is_none()) {
        SV s;
        s.kind = SV::kNone;
        return s;
      }
      return SV::of(constant(v, r));
    }
    Node* n = insert(graph->create(sym::prim::GetAttr, {mod.value}, 1), r);
    n->set_attr(sym::attr::name, IValue(name));
    if (attr->submodule) {
      n->output()->set_type(Type::named(TypeKind::Object, attr->submodule->class_name));
      SV s;
      s.kind = SV::kModule;
      s.value = n->output();
      s.module = attr->submodule;
      return s;
    }
    n->output()->set_type(attr->type);
    return SV::of(n->output());
  }
  if (info.methods.count(name)) {
    SV m;
    m.kind = SV::kMethod;
    m.value = mod.value;
    m.module = mod.module;
    m.path = name;
    return m;
  }
  fail(r, fmt::format("Module '{}' has no attribute '{}'", info.class_name, name));
}

// Refinement of Optional values by `x is None`, `x is not None`, `and` / `not` of those.
void FunctionEmitter::refinements(const Expr& cond, Refinements& t, Refinements& f) {
  if (cond.kind == ExprKind::UnaryOp && cond.as<UnaryOp>().op == UnaryOpKind::Not) {
    refinements(*cond.as<UnaryOp>().operand, f, t);
    return;
  }
  if (cond.kind == ExprKind::BoolOp && cond.as<BoolOp>().is_and) {
    for (const auto& v : cond.as<BoolOp>().values) {
      Refinements tt, ff;
      refinements(*v, tt, ff);
      t.insert(tt.begin(), tt.end());
    }
    return;
  }
  if (cond.kind == ExprKind::BoolOp && !cond.as<BoolOp>().is_and) {
    for (const auto& v : cond.as<BoolOp>().values) {
      Refinements tt, ff;
      refinements(*v, tt, ff);
      f.insert(ff.begin(), ff.end());
    }
    return;
  }
  if (cond.kind != ExprKind::Compare) return;
  const auto& c = cond.as<Compare>();
  if (c.ops.size() != 1 || (c.ops[0] != CmpOpKind::Is && c.ops[0] != CmpOpKind::IsNot)) return;
  const Expr* name = nullptr;
  if (c.left->kind == ExprKind::Name && c.comparators[0]->kind == ExprKind::None)
    name = c.left.get();
  if (c.comparators[0]->kind == ExprKind::Name && c.left->kind == ExprKind::None)
    name = c.comparators[0].get();
  if (!name) return;
  const std::string& id = name->as<Name>().id;
  Value* v = lookup_var(id);
  if (!v || v->type()->kind() != TypeKind::Optional) return;
  auto& not_none = c.ops[0] == CmpOpKind::IsNot ? t : f;
  not_none[id] = v->type()->elem();
}

}  // namespace
}  // namespace ampjit::script

// ---- Operators -----------------------------------------------------------------------------

namespace ampjit::script {
namespace {

Value* FunctionEmitter::emit_binop(BinOpKind op, Value* l, Value* r, const SourceRange& range) {
  const TypeKind lk = l->type()->kind(), rk = r->type()->kind();
  const bool lt = lk == TypeKind::Tensor, rt = rk == TypeKind::Tensor;
  auto call = [&](const char* name, Value* a, Value* b, std::vector<Arg> extra = {}) {
    std::vector<Arg> args{Arg{SV::of(a), a, range, ""}, Arg{SV::of(b), b, range, ""}};
    for (auto& e : extra) args.push_back(std::move(e));
    return call_builtin_op(name, std::move(args), range);
  };
  if (lk == TypeKind::List && rk == TypeKind::List && op == BinOpKind::Add) {
    if (!l->type()->elem()->equals(*r->type()->elem()))
      fail(range,
           fmt::format("cannot concatenate {} and {}", type_str(l->type()), type_str(r->type())));
    return emit_node_call(Symbol::intern("aten::add"), {l, r}, l->type(), range);
  }
  if (lk == TypeKind::List && rk == TypeKind::Int && op == BinOpKind::Mul)
    return emit_node_call(Symbol::intern("aten::mul"), {l, r}, l->type(), range);
  if (lt || rt) {
    // A number on the left of a tensor: add and mul commute, sub is rsub; the others wrap the
    // number in a 0-dim tensor, which promotes as the Python number does (as eager does).
    if (!lt && is_number_kind(lk)) {
      if (op == BinOpKind::Add) return call("aten::add", r, l);
      if (op == BinOpKind::Mul) return call("aten::mul", r, l);
      if (op == BinOpKind::Sub) return call("aten::rsub", r, l);
      Node* n = insert(graph->create(kNumToTensor, {l}, 1), range);
      n->output()->set_type(Type::tensor());
      l = n->output();
    }
    switch (op) {
      case BinOpKind::Add:
        return call("aten::add", l, r);
      case BinOpKind::Sub:
        return call("aten::sub", l, r);
      case BinOpKind::Mul:
        return call("aten::mul", l, r);
      case BinOpKind::Div:
        return call("aten::div", l, r);
      case BinOpKind::FloorDiv: {
        Value* mode = constant(IValue(std::string("floor")), range);
        return call("aten::div", l, r, {Arg{SV::of(mode), mode, range, "rounding_mode"}});
      }
      case BinOpKind::Mod:
        return call("aten::remainder", l, r);
      case BinOpKind::Pow:
        return call("aten::pow", l, r);
      case BinOpKind::MatMul:
        return call("aten::matmul", l, r);
      case BinOpKind::BitAnd:
        return call("aten::logical_and", l, r);
      case BinOpKind::BitOr:
        return call("aten::logical_or", l, r);
      case BinOpKind::BitXor:
        return call("aten::logical_xor", l, r);
      default:
        break;
    }
    fail(range, fmt::format("unsupported operand types for {}: '{}' and '{}'", binop_str(op),
                            type_str(l->type()), type_str(r->type())));
  }
  if (lk == TypeKind::Str && rk == TypeKind::Str && op == BinOpKind::Add)
    return call("aten::add", l, r);
  if (is_number_kind(lk) && is_number_kind(rk)) {
    if (lk == TypeKind::Bool && rk == TypeKind::Bool &&
        (op == BinOpKind::BitAnd || op == BinOpKind::BitOr || op == BinOpKind::BitXor)) {
      const char* n = op == BinOpKind::BitAnd  ? "aten::__and__"
                      : op == BinOpKind::BitOr ? "aten::__or__"
                                               : "aten::__xor__";
      return call(n, l, r);
    }
    // Bools take part in arithmetic as ints.
    if (lk == TypeKind::Bool)
      l = call_builtin_op("aten::Int", {Arg{SV::of(l), l, range, ""}}, range);
    if (rk == TypeKind::Bool)
      r = call_builtin_op("aten::Int", {Arg{SV::of(r), r, range, ""}}, range);
    static const std::map<BinOpKind, const char*> ops = {
        {BinOpKind::Add, "aten::add"},           {BinOpKind::Sub, "aten::sub"},
        {BinOpKind::Mul, "aten::mul"},           {BinOpKind::Div, "aten::div"},
        {BinOpKind::FloorDiv, "aten::floordiv"}, {BinOpKind::Mod, "aten::remainder"},
        {BinOpKind::Pow, "aten::pow"},           {BinOpKind::BitAnd, "aten::__and__"},
        {BinOpKind::BitOr, "aten::__or__"},      {BinOpKind::BitXor, "aten::__xor__"},
        {BinOpKind::LShift, "aten::__lshift__"}, {BinOpKind::RShift, "aten::__rshift__"}};
    auto it = ops.find(op);
    if (it != ops.end()) return call(it->second, l, r);
  }
  fail(range, fmt::format("unsupported operand types for {}: '{}' and '{}'", binop_str(op),
                          type_str(l->type()), type_str(r->type())));
}

Value* FunctionEmitter::emit_cmp(CmpOpKind op, Value* l, Value* r, const SourceRange& range) {
  auto call = [&](const char* name, Value* a, Value* b) {
    return call_builtin_op(name, {Arg{SV::of(a), a, range, ""}, Arg{SV::of(b), b, range, ""}},
                           range);
  };
  const TypeKind lk = l->type()->kind(), rk = r->type()->kind();
  if (op == CmpOpKind::Is || op == CmpOpKind::IsNot) {
    const bool is = op == CmpOpKind::Is;
    // Decided statically when a side is None and the other cannot be (or must be) None.
    auto static_none = [&](Value* a, Value* b) -> std::optional<bool> {
      if (!is_none(a->type())) return std::nullopt;
      if (is_none(b->type())) return true;
      if (b->type()->kind() != TypeKind::Optional && b->type()->kind() != TypeKind::Any)
        return false;
      return std::nullopt;
    };
    std::optional<bool> s = static_none(l, r);
    if (!s) s = static_none(r, l);
    if (s) return constant(IValue(is ? *s : !*s), range);
    return emit_node_call(is ? kIs : kIsNot, {l, r}, Type::bool_(), range);
  }
  if (op == CmpOpKind::In || op == CmpOpKind::NotIn) {
    if (rk != TypeKind::List && rk != TypeKind::Str)
      fail(range, fmt::format("'in' needs a list or str on the right in script, not {}",
                              type_str(r->type())));
    Value* v = emit_node_call(kContains, {r, l}, Type::bool_(), range);
    if (op == CmpOpKind::NotIn)
      v = call_builtin_op("aten::__not__", {Arg{SV::of(v), v, range, ""}}, range);
    return v;
  }
  static const std::map<CmpOpKind, std::pair<const char*, const char*>> names = {
      {CmpOpKind::Eq, {"aten::eq", "aten::eq"}}, {CmpOpKind::NotEq, {"aten::ne", "aten::ne"}},
      {CmpOpKind::Lt, {"aten::lt", "aten::gt"}}, {CmpOpKind::LtE, {"aten::le", "aten::ge"}},
      {CmpOpKind::Gt, {"aten::gt", "aten::lt"}}, {CmpOpKind::GtE, {"aten::ge", "aten::le"}}};
  const auto& [name, swapped] = names.at(op);
  if (lk != TypeKind::Tensor && rk == TypeKind::Tensor)
    return call(swapped, r, l);  // 1 < x is x > 1
  if (lk == TypeKind::List && rk == TypeKind::List &&
      (op == CmpOpKind::Eq || op == CmpOpKind::NotEq))
    return emit_node_call(Symbol::intern(name), {l, r}, Type::bool_(), range);
  if ((is_none(l->type()) || is_none(r->type())) && (op == CmpOpKind::Eq || op == CmpOpKind::NotEq))
    return emit_cmp(op == CmpOpKind::Eq ? CmpOpKind::Is : CmpOpKind::IsNot, l, r, range);
  if (lk == TypeKind::Bool && rk != TypeKind::Bool && is_number_kind(rk))
    l = call_builtin_op("aten::Int", {Arg{SV::of(l), l, range, ""}}, range);
  if (rk == TypeKind::Bool && lk != TypeKind::Bool && is_number_kind(lk))
    r = call_builtin_op("aten::Int", {Arg{SV::of(r), r, range, ""}}, range);
  return call(name, l, r);
}

Value* FunctionEmitter::emit_compare(const Compare& c) {
  // a < b < c is (a < b) and (b < c), b evaluated once.
  Value* left = emit_expr(*c.left);
  Value* result = nullptr;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    Value* right = emit_expr(*c.comparators[i]);
    Value* v = emit_cmp(c.ops[i], left, right, c.range);
    if (v->type()->kind() == TypeKind::Tensor && c.ops.size() > 1)
      fail(c.range, "chained comparisons of tensors are not supported in script");
    if (!result) {
      result = v;
    } else {
      Value* prev = result;
      const std::string tmp = "$cmp";
      emit_if_blocks(
          prev, c.range, [&] { set_var(tmp, v, c.range); },
          [&] { set_var(tmp, constant(IValue(false), c.range), c.range); });
      result = lookup_var(tmp);
      env->vars.erase(tmp);
    }
    left = right;
  }
  return result;
}

Value* FunctionEmitter::emit_cond(const Expr& e) {
  Value* v = emit_expr(e);
  const SourceRange& r = e.range;
  switch (v->type()->kind()) {
    case TypeKind::Bool:
      return v;
    case TypeKind::Tensor:
    case TypeKind::Int:
    case TypeKind::Float:
      return call_builtin_op("aten::Bool", {Arg{SV::of(v), v, r, ""}}, r);
    case TypeKind::None:
      return constant(IValue(false), r);
    case TypeKind::Optional:
      return emit_node_call(kIsNot, {v, none(r)}, Type::bool_(), r);
    case TypeKind::List:
    case TypeKind::Str: {
      Value* n = emit_node_call(kLen, {v}, Type::int_(), r);
      Value* zero = constant(IValue(int64_t{0}), r);
      return call_builtin_op("aten::ne", {Arg{SV::of(n), n, r, ""}, Arg{SV::of(zero), zero, r, ""}},
                             r);
    }
    default:
      fail(r, fmt::format("a value of type {} cannot be used as a condition in script",
                          type_str(v->type())));
  }
}

Value* FunctionEmitter::emit_bool_op(const BoolOp& b) {
  // Short-circuit: `a and b` is `b if a else False`; `a or b` is `True if a else b`.
  Value* result = emit_cond(*b.values[0]);
  for (size_t i = 1; i < b.values.size(); ++i) {
    const std::string tmp = "$bool";
    Refinements tr, fr;
    refinements(*b.values[0], tr, fr);  // `x is not None and x.sum() > 0`
    const Expr& next = *b.values[i];
    if (b.is_and)
      emit_if_blocks(
          result, b.range, [&] { set_var(tmp, emit_cond(next), b.range); },
          [&] { set_var(tmp, constant(IValue(false), b.range), b.range); }, &tr, &fr);
    else
      emit_if_blocks(
          result, b.range, [&] { set_var(tmp, constant(IValue(true), b.range), b.range); },
          [&] { set_var(tmp, emit_cond(next), b.range); }, &tr, &fr);
    result = lookup_var(tmp);
    env->vars.erase(tmp);
  }
  return result;
}

Value* FunctionEmitter::emit_unary(const UnaryOp& u) {
  const SourceRange& r = u.range;
  if (u.op == UnaryOpKind::Not) {
    Value* c = emit_cond(*u.operand);
    return call_builtin_op("aten::__not__", {Arg{SV::of(c), c, r, ""}}, r);
  }
  if (u.op == UnaryOpKind::Neg &&
      (u.operand->kind == ExprKind::Int || u.operand->kind == ExprKind::Float)) {
    if (u.operand->kind == ExprKind::Int)
      return constant(IValue(-u.operand->as<IntLit>().value), r);
    return constant(IValue(-u.operand->as<FloatLit>().value), r);
  }
  Value* v = emit_expr(*u.operand);
  switch (u.op) {
    case UnaryOpKind::Pos:
      return v;
    case UnaryOpKind::Neg:
      return call_builtin_op("aten::neg", {Arg{SV::of(v), v, r, ""}}, r);
    case UnaryOpKind::Invert:
      if (is_tensor(v->type()))
        return call_builtin_op("aten::logical_not", {Arg{SV::of(v), v, r, ""}}, r);
      return call_builtin_op("aten::__invert__", {Arg{SV::of(v), v, r, ""}}, r);
    default:
      break;
  }
  fail(r, "unsupported unary operator");
}

Value* FunctionEmitter::emit_if_exp(const IfExp& e) {
  Value* c = emit_cond(*e.test);
  if (auto k = constant_value(c); k && k->is_bool())
    return emit_expr(k->to_bool() ? *e.body : *e.orelse);
  Refinements tr, fr;
  refinements(*e.test, tr, fr);
  const std::string tmp = "$ifexp";
  emit_if_blocks(
      c, e.range, [&] { set_var(tmp, emit_expr(*e.body), e.range); },
      [&] { set_var(tmp, emit_expr(*e.orelse), e.range); }, &tr, &fr);
  Value* v = lookup_var(tmp);
  env->vars.erase(tmp);
  return v;
}

Value* FunctionEmitter::emit_list(const ListExpr& l, const TypePtr& hint) {
  std::vector<Value*> vs;
  for (const auto& e : l.elts) {
    if (e->kind == ExprKind::Starred)
      fail(e->range, "starred expressions are not supported in script");
    vs.push_back(emit_expr(*e, hint && hint->kind() == TypeKind::List ? hint->elem() : nullptr));
  }
  TypePtr elem;
  if (hint && hint->kind() == TypeKind::List) {
    elem = hint->elem();
    for (size_t i = 0; i < vs.size(); ++i) {
      if (vs[i]->type()->kind() == TypeKind::Int && elem->kind() == TypeKind::Float)
        vs[i] = call_builtin_op("aten::Float", {Arg{SV::of(vs[i]), vs[i], l.elts[i]->range, ""}},
                                l.elts[i]->range);
      if (!vs[i]->type()->is_subtype_of(*elem))
        fail(l.elts[i]->range,
             fmt::format(
                 "List type annotation `{}` did not match the types of the given list elements",
                 type_str(hint)));
    }
  } else if (vs.empty()) {
    elem = Type::tensor();  // torch: an empty list literal is List[Tensor] unless annotated
  } else {
    elem = vs[0]->type()->unrefined();
    for (size_t i = 1; i < vs.size(); ++i) {
      TypePtr u = unify(elem, vs[i]->type());
      if (!u)
        fail(l.range, fmt::format("Lists must contain only a single type, found {} and {}",
                                  type_str(elem), type_str(vs[i]->type())));
      elem = u;
    }
  }
  return insert(graph->create_list(elem, vs), l.range)->output();
}

Value* FunctionEmitter::emit_list_comp(const ListComp& c) {
  Node* list = insert(graph->create_list(Type::tensor(), {}), c.range);
  bool typed = false;
  std::set<std::string> assigned;
  collect_assigned_target(*c.target, assigned);
  std::function<void(size_t)> body = [&](size_t k) {
    if (k < c.conds.size()) {
      Value* cond = emit_cond(*c.conds[k]);
      emit_if_blocks(
          cond, c.conds[k]->range, [&] { body(k + 1); }, [] {});
      return;
    }
    Value* x = emit_expr(*c.elt);
    if (!typed) {
      list->output()->set_type(Type::list(x->type()->unrefined()));
      typed = true;
    } else if (!x->type()->is_subtype_of(*list->output()->type()->elem())) {
      fail(c.elt->range, "list comprehension elements must have one type");
    }
    emit_node_call(kAppend, {list->output(), x}, list->output()->type(), c.range);
  };
  // The comprehension's variables live in their own scope (Python 3).
  Frame scope;
  scope.parent = env;
  scope.block = env->block;
  env = &scope;
  std::set<std::string> none_assigned;
  emit_for_in(*c.target, *c.iter, c.range, none_assigned, Exits{}, [&] { body(0); });
  env = scope.parent;
  (void)assigned;
  return list->output();
}

// ---- Subscripts ----------------------------------------------------------------------------

Value* FunctionEmitter::emit_subscript(const Subscript& s, Value* base) {
  const TypePtr& t = base->type();
  const SourceRange& r = s.range;
  if (is_tensor(t)) {
    std::vector<const Expr*> idx;
    for (const auto& i : s.indices) idx.push_back(i.get());
    return tensor_index(base, idx, r);
  }
  if (s.indices.size() != 1) fail(r, fmt::format("'{}' takes one index", type_str(t)));
  const Expr& ie = *s.indices[0];
  if (t->kind() == TypeKind::Tuple) {
    const auto& ts = t->contained();
    const int64_t n = static_cast<int64_t>(ts.size());
    auto norm = [&](int64_t k) { return std::clamp<int64_t>(k < 0 ? k + n : k, 0, n); };
    if (ie.kind == ExprKind::Slice) {
      const auto& sl = ie.as<Slice>();
      int64_t lo = sl.lower ? norm(eval_constant(*sl.lower).to_int()) : 0;
      int64_t hi = sl.upper ? norm(eval_constant(*sl.upper).to_int()) : n;
      int64_t step = sl.step ? eval_constant(*sl.step).to_int() : 1;
      if (step != 1) fail(ie.range, "tuple slices with a step are not supported in script");
      std::vector<Value*> vs;
      for (int64_t k = lo; k < hi; ++k) {
        Node* g =
            insert(graph->create(sym::prim::TupleIndex, {base, constant(IValue(k), r)}, 1), r);
        g->output()->set_type(ts[static_cast<size_t>(k)]);
        vs.push_back(g->output());
      }
      return insert(graph->create_tuple(vs), r)->output();
    }
    IValue k = eval_constant(ie);
    if (!k.is_int()) fail(ie.range, "tuple indices must be constant integers in script");
    int64_t i = k.to_int() < 0 ? k.to_int() + n : k.to_int();
    if (i < 0 || i >= n) fail(ie.range, "tuple index out of range");
    Node* g = insert(graph->create(sym::prim::TupleIndex, {base, constant(IValue(i), r)}, 1), r);
    g->output()->set_type(ts[static_cast<size_t>(i)]);
    return g->output();
  }
  if (t->kind() == TypeKind::List || t->kind() == TypeKind::Str) {
    if (ie.kind == ExprKind::Slice) {
      const auto& sl = ie.as<Slice>();
      Value* lo = sl.lower ? emit_expr(*sl.lower) : none(r);
      Value* hi = sl.upper ? emit_expr(*sl.upper) : none(r);
      Value* step = sl.step ? emit_expr(*sl.step) : constant(IValue(int64_t{1}), r);
      return emit_node_call(kListSlice, {base, lo, hi, step}, t, r);
    }
    Value* i = emit_expr(ie);
    if (i->type()->kind() != TypeKind::Int)
      fail(ie.range, fmt::format("list indices must be integers, not {}", type_str(i->type())));
    return emit_node_call(kGetItem, {base, i},
                          t->kind() == TypeKind::List ? t->elem() : Type::str_(), r);
  }
  fail(r, fmt::format("'{}' object is not subscriptable", type_str(t)));
}

// Basic tensor indexing, as eager's __getitem__: ints select, slices slice, None unsqueezes.
Value* FunctionEmitter::tensor_index(Value* t, const std::vector<const Expr*>& idx,
                                     const SourceRange& r) {
  int64_t dim = 0;
  Value* cur = t;
  auto i64 = [&](int64_t v) { return constant(IValue(v), r); };
  for (const Expr* e : idx) {
    if (e->kind == ExprKind::None) {
      Value* d = i64(dim);
      cur = call_builtin_op("aten::unsqueeze", {Arg{SV::of(d), d, r, ""}}, r, cur);
      ++dim;
      continue;
    }
    if (e->kind == ExprKind::Slice) {
      const auto& sl = e->as<Slice>();
      if (!sl.lower && !sl.upper && !sl.step) {
        ++dim;
        continue;
      }
      Value* d = i64(dim);
      Value* lo = sl.lower ? emit_expr(*sl.lower) : none(r);
      Value* hi = sl.upper ? emit_expr(*sl.upper) : none(r);
      Value* step = sl.step ? emit_expr(*sl.step) : i64(1);
      cur = call_builtin_op("aten::slice",
                            {Arg{SV::of(d), d, r, ""}, Arg{SV::of(lo), lo, r, ""},
                             Arg{SV::of(hi), hi, r, ""}, Arg{SV::of(step), step, r, ""}},
                            r, cur);
      ++dim;
      continue;
    }
    Value* v = emit_expr(*e);
    if (v->type()->kind() == TypeKind::Int) {
      Value* d = i64(dim);
      cur = call_builtin_op("aten::select",
                            {Arg{SV::of(d), d, r, ""}, Arg{SV::of(v), v, e->range, ""}}, r, cur);
      continue;
    }
    fail(e->range,
         fmt::format(
             "tensor indices of type {} are not supported in script (ints, slices and None are)",
             type_str(v->type())));
  }
  return cur;
}

}  // namespace
}  // namespace ampjit::script

// ---- Calls ---------------------------------------------------------------------------------

namespace ampjit::script {
namespace {

std::vector<FunctionEmitter::Arg> FunctionEmitter::emit_args(const Call& c) {
  std::vector<Arg> args;
  for (const auto& a : c.args) {
    if (a->kind == ExprKind::Starred)
      fail(a->range, "starred arguments are not supported in script");
    args.push_back(Arg{emit_sv(*a), nullptr, a->range, ""});
  }
  for (const auto& k : c.keywords) {
    if (k.name.empty()) fail(k.range, "**kwargs arguments are not supported in script");
    args.push_back(Arg{emit_sv(*k.value), nullptr, k.range, k.name});
  }
  for (auto& a : args)
    if (a.sv.kind == SV::kValue) a.value = a.sv.value;
  return args;
}

SV FunctionEmitter::emit_call(const Call& c) {
  SV callee = emit_sv(*c.func);
  return call_sv(callee, emit_args(c), c.range);
}

std::string value_type_str(FunctionEmitter::Arg& a) {
  if (a.sv.kind == SV::kNone) return "NoneType";
  if (a.value) return type_str(a.value->type());
  if (a.sv.kind == SV::kType) return "Type";
  return "a non-value";
}

// A Device constant from a constant string ("cpu", "cuda:0").
Value* FunctionEmitter::convert_to(Value* v, const Argument& arg, bool allow,
                                   const SourceRange& r) {
  const TypePtr& want = arg.type;
  const TypePtr& have = v->type();
  if (have->is_subtype_of(*want)) return v;
  if (want->kind() == TypeKind::Any) return v;
  if (want->kind() == TypeKind::Optional) {
    if (is_none(have)) return v;
    // Optional[int] for a `ScalarType?` argument: a dtype is an int in TorchScript.
    if (have->kind() == TypeKind::Optional && want->elem()->kind() == TypeKind::ScalarType &&
        have->elem()->kind() == TypeKind::Int)
      return v;
    Argument inner = arg;
    inner.type = want->elem();
    return convert_to(v, inner, allow, r);
  }
  switch (want->kind()) {
    case TypeKind::Number:
      if (is_number_kind(have->kind())) return v;
      return nullptr;
    case TypeKind::ScalarType:
      return have->kind() == TypeKind::Int ? v : nullptr;
    case TypeKind::Float:
      if (allow && have->kind() == TypeKind::Int) {
        if (auto c = constant_value(v))
          return constant(IValue(static_cast<double>(c->to_int())), r);
        return call_builtin_op("aten::Float", {Arg{SV::of(v), v, r, ""}}, r);
      }
      return nullptr;
    case TypeKind::Device:
      if (have->kind() == TypeKind::Str)
        if (auto c = constant_value(v))
          return constant(IValue(Device::parse(c->to_string_ref())), r);
      return nullptr;
    case TypeKind::List: {
      const TypePtr& elem = want->elem();
      if (have->kind() == TypeKind::List) {
        if (have->elem()->is_subtype_of(*elem)) return v;
        return nullptr;
      }
      if (have->kind() == TypeKind::Int && elem->kind() == TypeKind::Int && arg.list_len > 0) {
        std::vector<Value*> copies(static_cast<size_t>(arg.list_len), v);
        return insert(graph->create_list(Type::int_(), copies), r)->output();
      }
      if (have->kind() == TypeKind::Tuple) {
        for (const auto& t : have->contained())
          if (!t->is_subtype_of(*elem)) return nullptr;
        std::vector<Value*> elems;
        if (v->node()->kind() == sym::prim::TupleConstruct) {
          elems = v->node()->inputs();
        } else {
          Node* u = insert(graph->create(sym::prim::TupleUnpack, {v}, have->contained().size()), r);
          for (size_t i = 0; i < have->contained().size(); ++i)
            u->output(i)->set_type(have->contained()[i]);
          elems = u->outputs();
        }
        return insert(graph->create_list(elem, elems), r)->output();
      }
      return nullptr;
    }
    default:
      return nullptr;
  }
}

std::optional<std::vector<Value*>> FunctionEmitter::match_schema(const OpEntry& op,
                                                                 std::vector<Arg>& args,
                                                                 Value* self, const SourceRange& r,
                                                                 bool allow, std::string& why) {
  const FunctionSchema& s = op.schema;
  std::vector<Value*> bound(s.args.size(), nullptr);
  std::vector<Arg*> positional;
  std::vector<Arg*> named;
  for (Arg& a : args) (a.name.empty() ? positional : named).push_back(&a);
  size_t pi = 0;
  auto next_positional = [&]() -> int {
    while (pi < s.args.size() && (s.args[pi].kwarg_only || bound[pi])) ++pi;
    return pi < s.args.size() ? static_cast<int>(pi) : -1;
  };
  auto bind = [&](int idx, Value* v, const std::string& shown_type) -> bool {
    const Argument& a = s.args[static_cast<size_t>(idx)];
    Value* c = convert_to(v, a, allow, r);
    if (!c) {
      why = fmt::format(
          "Expected a value of type '{}' for argument '{}' but instead found type '{}'.",
          a.type->str(), a.name, shown_type);
      return false;
    }
    bound[static_cast<size_t>(idx)] = c;
    return true;
  };
  if (self) {
    const int idx = next_positional();
    if (idx < 0 || !is_tensor(s.args[static_cast<size_t>(idx)].type) ||
        !bind(idx, self, type_str(self->type()))) {
      why = "it is not a method of Tensor";
      return std::nullopt;
    }
  }
  for (size_t k = 0; k < positional.size(); ++k) {
    const int idx = next_positional();
    if (idx < 0) {
      size_t n = 0;
      for (const Argument& x : s.args) n += x.kwarg_only ? 0 : 1;
      why = fmt::format("Expected at most {} positional argument(s) but found {}.", n,
                        positional.size() + (self ? 1 : 0));
      return std::nullopt;
    }
    const Argument& a = s.args[static_cast<size_t>(idx)];
    // Varargs sizes: x.view(2, 3), torch.zeros(2, 3) pack the remaining ints into the int[]
    // argument.
    if (a.type->kind() == TypeKind::List && a.type->elem()->kind() == TypeKind::Int) {
      bool all_ints = true;
      for (size_t j = k; j < positional.size(); ++j) {
        Value* v = positional[j]->value;
        if (!v || v->type()->kind() != TypeKind::Int) all_ints = false;
      }
      size_t remaining_params = 0;
      for (size_t j = static_cast<size_t>(idx) + 1; j < s.args.size(); ++j)
        if (!s.args[j].kwarg_only) ++remaining_params;
      // Only a trailing list parameter takes varargs (view, permute, zeros, expand, repeat): one
      // followed by more positional parameters (conv2d's stride) takes them one by one.
      if (all_ints && remaining_params == 0) {
        std::vector<Value*> vs;
        for (size_t j = k; j < positional.size(); ++j) vs.push_back(positional[j]->value);
        bound[static_cast<size_t>(idx)] = insert(graph->create_list(Type::int_(), vs), r)->output();
        k = positional.size();
        break;
      }
    }
    Arg& pa = *positional[k];
    if (pa.sv.kind == SV::kNone) pa.value = none(pa.range);
    if (!pa.value) {
      why = fmt::format("Expected a value of type '{}' for argument '{}' but instead found {}.",
                        a.type->str(), a.name, value_type_str(pa));
      return std::nullopt;
    }
    if (!bind(idx, pa.value, value_type_str(pa))) return std::nullopt;
  }
  for (Arg* na : named) {
    const int idx = s.arg_index(na->name);
    if (idx < 0) {
      why = fmt::format("Keyword argument {} unknown.", na->name);
      return std::nullopt;
    }
    if (bound[static_cast<size_t>(idx)]) {
      why = fmt::format("Argument {} specified twice.", na->name);
      return std::nullopt;
    }
    if (na->sv.kind == SV::kNone) na->value = none(na->range);
    if (!na->value) {
      why = fmt::format("Expected a value for argument '{}' but instead found {}.", na->name,
                        value_type_str(*na));
      return std::nullopt;
    }
    if (!bind(idx, na->value, value_type_str(*na))) return std::nullopt;
  }
  for (size_t i = 0; i < s.args.size(); ++i) {
    if (bound[i]) continue;
    if (!s.args[i].default_value) {
      why = fmt::format("Argument {} not provided.", s.args[i].name);
      return std::nullopt;
    }
    IValue d = *s.args[i].default_value;
    if (d.is_scalar_type()) d = IValue(torch_dtype_code(d.to_scalar_type()));
    Value* c = constant(d, r);
    if (!c->type()->is_subtype_of(*s.args[i].type) && !(d.is_none()) &&
        s.args[i].type->kind() == TypeKind::List)
      c->set_type(s.args[i].type);  // an empty default list takes the declared element type
    bound[i] = c;
  }
  return bound;
}

Value* FunctionEmitter::call_builtin_op(const std::string& qualified, std::vector<Arg> args,
                                        const SourceRange& r, Value* self) {
  const auto& overloads = find_overloads(qualified);
  if (overloads.empty()) {
    if (self)
      fail(r, fmt::format("'Tensor' object has no attribute or method '{}'",
                          qualified.substr(qualified.find("::") + 2)));
    fail(r, fmt::format("Unknown builtin op: {}", qualified));
  }
  for (Arg& a : args)
    if (!a.value && a.sv.kind == SV::kValue) a.value = a.sv.value;
  std::vector<std::pair<const OpEntry*, std::string>> failures;
  // Inserted nodes of a failed attempt (conversions, defaults) are removed before the next one.
  Node* mark = graph->insert_point()->prev();
  auto rollback = [&] {
    // Last first: a node inserted later may use an earlier one's output.
    for (Node* n = graph->insert_point()->prev(); n != mark;) {
      Node* prev = n->prev();
      n->destroy();
      n = prev;
    }
  };
  for (bool allow : {false, true}) {
    for (const OpEntry* op : overloads) {
      std::string why;
      auto bound = match_schema(*op, args, self, r, allow, why);
      if (!bound) {
        rollback();
        if (allow) failures.emplace_back(op, why);
        continue;
      }
      Node* n = insert(graph->create_op(*op, *bound), r);
      if (n->outputs().empty()) return none(r);
      if (n->outputs().size() == 1) return n->output();
      return insert(graph->create_tuple(n->outputs()), r)->output();
    }
  }
  std::string msg;
  if (failures.size() == 1) {
    msg = fmt::format("{}\nDeclaration: {}", failures[0].second, failures[0].first->schema.str());
  } else {
    msg = fmt::format(
        "Arguments for call to {} are not valid.\nThe following variants are available:\n",
        qualified);
    for (const auto& [op, why] : failures)
      msg += fmt::format("\n  {}:\n  {}\n", op->schema.str(), why);
  }
  fail(r, msg);
}

Value* FunctionEmitter::call_function(const std::shared_ptr<Function>& fn, std::vector<Arg> args,
                                      const SourceRange& r, Value* self) {
  std::vector<Value*> inputs;
  if (self) inputs.push_back(self);
  const auto& schema = fn->schema();
  const size_t first = self ? 1 : 0;
  if (schema) {
    std::vector<Value*> bound(schema->args.size(), nullptr);
    size_t pi = 0;
    for (Arg& a : args) {
      int idx;
      if (a.name.empty()) {
        while (pi < schema->args.size() && schema->args[pi].kwarg_only) ++pi;
        if (pi >= schema->args.size())
          fail(r, fmt::format("{}() expected at most {} argument(s) but received {} argument(s)",
                              fn->name(), schema->args.size(), args.size()));
        idx = static_cast<int>(pi++);
      } else {
        idx = schema->arg_index(a.name);
        if (idx < 0)
          fail(a.range,
               fmt::format("{}() got an unexpected keyword argument '{}'", fn->name(), a.name));
      }
      const Argument& p = schema->args[static_cast<size_t>(idx)];
      if (bound[static_cast<size_t>(idx)])
        fail(a.range,
             fmt::format("{}() got multiple values for argument '{}'", fn->name(), p.name));
      if (a.sv.kind == SV::kNone) a.value = none(a.range);
      Value* v = a.value ? convert_to(a.value, p, true, a.range) : nullptr;
      if (!v)
        fail(a.range,
             fmt::format(
                 "Expected a value of type '{}' for argument '{}' but instead found type '{}'.",
                 type_str(p.type), p.name, value_type_str(a)));
      bound[static_cast<size_t>(idx)] = v;
    }
    for (size_t i = 0; i < bound.size(); ++i) {
      if (bound[i]) continue;
      if (!schema->args[i].default_value)
        fail(r, fmt::format("{}() is missing value for argument '{}'.", fn->name(),
                            schema->args[i].name));
      Value* c = constant(*schema->args[i].default_value, r);
      if (schema->args[i].default_value->is_none()) c->set_type(Type::none());
      bound[i] = c;
    }
    inputs.insert(inputs.end(), bound.begin(), bound.end());
  } else {
    // A traced function: positional tensors (and the types its graph takes).
    const auto& params = fn->graph()->inputs();
    if (args.size() + first != params.size())
      fail(r, fmt::format("{}() takes {} argument(s) but {} were given", fn->name(),
                          params.size() - first, args.size()));
    for (size_t i = 0; i < args.size(); ++i) {
      Arg& a = args[i];
      if (!a.name.empty()) fail(a.range, "traced functions take positional arguments only");
      Value* v = arg_value(a);
      const TypePtr want = params[i + first]->type()->unrefined();
      if (!v->type()->is_subtype_of(*want))
        fail(a.range,
             fmt::format(
                 "Expected a value of type '{}' for argument {} but instead found type '{}'.",
                 type_str(want), i, type_str(v->type())));
      inputs.push_back(v);
    }
  }
  const auto& outs = fn->graph()->outputs();
  Node* n = insert(graph->create(sym::prim::CallFunction, inputs, outs.size()), r);
  n->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(fn))));
  n->set_attr(sym::attr::name, IValue(fn->name()));
  for (size_t i = 0; i < outs.size(); ++i) n->output(i)->set_type(outs[i]->type()->unrefined());
  if (outs.size() == 1) return n->output();
  if (outs.empty()) return none(r);
  return insert(graph->create_tuple(n->outputs()), r)->output();
}

SV FunctionEmitter::call_sv(const SV& callee, std::vector<Arg> args, const SourceRange& r) {
  switch (callee.kind) {
    case SV::kNamespace: {
      const std::string& p = callee.path;
      auto tail = [&](const std::string& prefix) { return p.substr(prefix.size()); };
      if (p.rfind("torch.nn.functional.", 0) == 0)
        return SV::of(call_functional(tail("torch.nn.functional."), args, r));
      if (p.rfind("math.", 0) == 0) return SV::of(call_math(tail("math."), args, r));
      if (p == "torch.jit.is_scripting") return SV::of(constant(IValue(true), r));
      if (p == "torch.jit.is_tracing") return SV::of(constant(IValue(false), r));
      if (p == "torch.jit.annotate" || p == "typing.cast") {
        if (args.size() != 2 || args[0].sv.kind != SV::kType)
          fail(r, "annotate(T, value) takes a type and a value");
        SV v = args[1].sv;
        TypePtr t = args[0].sv.type;
        if (v.kind == SV::kNone) return SV::of(unchecked_cast(none(r), t, r));
        Value* x = as_value(v, r);
        if (x->node()->kind() == sym::prim::ListConstruct && x->node()->inputs().empty() &&
            t->kind() == TypeKind::List) {
          x->set_type(t);
          return SV::of(x);
        }
        if (!x->type()->is_subtype_of(*t))
          fail(r, fmt::format("annotate: {} is not a {}", type_str(x->type()), type_str(t)));
        return SV::of(x);
      }
      if (p.rfind("torch.", 0) == 0 && p.find('.', 6) == std::string::npos) {
        const std::string name = tail("torch.");
        if (name == "is_autocast_enabled" || name == "is_autocast_cpu_enabled")
          return SV::of(call_builtin_op("aten::" + name, std::move(args), r));
        return SV::of(call_builtin_op("aten::" + name, std::move(args), r));
      }
      fail(r, fmt::format("{} is not supported in script", p));
    }
    case SV::kAutocast:
      return SV::of(call_autocast(callee.path, args, r));
    case SV::kBuiltin:
      return SV::of(call_python_builtin(callee.path, args, r));
    case SV::kMethod: {
      if (callee.module) {
        auto fn = session.compile_method(callee.module, callee.path, r);
        return SV::of(call_function(fn, std::move(args), r, callee.value));
      }
      const TypeKind k = callee.value->type()->kind();
      if (k == TypeKind::Tensor)
        return SV::of(call_tensor_method(callee.value, callee.path, args, r));
      return SV::of(call_list_method(callee.value, callee.path, args, r));
    }
    case SV::kFunction:
      return SV::of(call_function(callee.fn, std::move(args), r));
    case SV::kSource:
      return SV::of(call_function(session.compile_source_fn(callee.res, r), std::move(args), r));
    case SV::kModule: {
      auto fn = session.compile_method(callee.module, "forward", r);
      return SV::of(call_function(fn, std::move(args), r, callee.value));
    }
    case SV::kType: {
      fail(r, fmt::format("cannot call type {} in script", type_str(callee.type)));
    }
    default:
      break;
  }
  if (callee.kind == SV::kValue)
    fail(r, fmt::format("'{}' object is not callable", type_str(callee.value->type())));
  fail(r, "this value is not callable in script");
}

Value* FunctionEmitter::call_python_builtin(const std::string& name, std::vector<Arg>& args,
                                            const SourceRange& r) {
  for (const Arg& a : args)
    if (!a.name.empty() && name != "print")
      fail(a.range, fmt::format("{}() takes no keyword arguments in script", name));
  auto one = [&]() -> Value* {
    if (args.size() != 1) fail(r, fmt::format("{}() takes exactly one argument in script", name));
    return arg_value(args[0]);
  };
  if (name == "len") {
    Value* v = one();
    const TypeKind k = v->type()->kind();
    if (k == TypeKind::List || k == TypeKind::Str)
      return emit_node_call(kLen, {v}, Type::int_(), r);
    if (k == TypeKind::Tuple)
      return constant(IValue(static_cast<int64_t>(v->type()->contained().size())), r);
    if (k == TypeKind::Tensor) return call_builtin_op("aten::len", {Arg{SV::of(v), v, r, ""}}, r);
    fail(r, fmt::format("object of type '{}' has no len()", type_str(v->type())));
  }
  if (name == "int" || name == "float" || name == "bool") {
    if (args.empty())
      return constant(name == "int"     ? IValue(int64_t{0})
                      : name == "float" ? IValue(0.0)
                                        : IValue(false),
                      r);
    Value* v = one();
    const TypeKind want = name == "int"     ? TypeKind::Int
                          : name == "float" ? TypeKind::Float
                                            : TypeKind::Bool;
    if (v->type()->kind() == want) return v;
    const std::string op = name == "int"     ? "aten::Int"
                           : name == "float" ? "aten::Float"
                                             : "aten::Bool";
    return call_builtin_op(op, {Arg{SV::of(v), v, r, ""}}, r);
  }
  if (name == "str") return emit_node_call(kStr, {one()}, Type::str_(), r);
  if (name == "abs") {
    Value* v = one();
    return call_builtin_op("aten::abs", {Arg{SV::of(v), v, r, ""}}, r);
  }
  if (name == "list") {
    Value* v = one();
    if (v->type()->kind() != TypeKind::List) fail(r, "list() takes a list in script");
    return emit_node_call(kListCopy, {v}, v->type(), r);
  }
  if (name == "sum") {
    Value* v = one();
    if (v->type()->kind() != TypeKind::List || !is_number_kind(v->type()->elem()->kind()))
      fail(r, "sum() takes a list of numbers in script");
    return emit_node_call(kListSum, {v}, v->type()->elem(), r);
  }
  if (name == "min" || name == "max") {
    if (args.size() == 1) {
      Value* v = one();
      if (v->type()->kind() != TypeKind::List)
        fail(r, fmt::format("{}() of one argument takes a list in script", name));
      return emit_node_call(name == "min" ? kListMin : kListMax, {v}, v->type()->elem(), r);
    }
    if (args.size() != 2)
      fail(r, fmt::format("{}() takes two numbers or one list in script", name));
    Value* a = arg_value(args[0]);
    Value* b = arg_value(args[1]);
    if (!is_number_kind(a->type()->kind()) || !is_number_kind(b->type()->kind()))
      fail(r, fmt::format("{}() of two values takes numbers in script, not {} and {}", name,
                          type_str(a->type()), type_str(b->type())));
    if (a->type()->kind() != b->type()->kind()) {
      if (a->type()->kind() == TypeKind::Int)
        a = call_builtin_op("aten::Float", {Arg{SV::of(a), a, r, ""}}, r);
      if (b->type()->kind() == TypeKind::Int)
        b = call_builtin_op("aten::Float", {Arg{SV::of(b), b, r, ""}}, r);
    }
    return call_builtin_op("prim::" + name, {Arg{SV::of(a), a, r, ""}, Arg{SV::of(b), b, r, ""}},
                           r);
  }
  if (name == "print") {
    std::vector<Value*> vs;
    for (Arg& a : args) {
      if (!a.name.empty()) fail(a.range, "print() keyword arguments are not supported in script");
      vs.push_back(arg_value(a));
    }
    emit_node_call(kPrint, vs, nullptr, r);
    return none(r);
  }
  if (name == "isinstance") {
    if (args.size() != 2) fail(r, "isinstance() takes two arguments");
    Value* v = arg_value(args[0]);
    std::vector<TypePtr> types;
    std::function<void(const SV&)> collect = [&](const SV& s) {
      if (s.kind == SV::kType)
        types.push_back(s.type);
      else if (s.kind == SV::kBuiltin &&
               (s.path == "int" || s.path == "float" || s.path == "bool" || s.path == "str"))
        types.push_back(s.path == "int"     ? Type::int_()
                        : s.path == "float" ? Type::float_()
                        : s.path == "bool"  ? Type::bool_()
                                            : Type::str_());
      else if (s.kind == SV::kBuiltin && s.path == "list")
        types.push_back(nullptr);  // any list
      else if (s.kind == SV::kBuiltin && s.path == "tuple")
        types.push_back(Type::tuple({}));
      else if (s.kind == SV::kTupleSV)
        for (const SV& c : s.children) collect(c);
      else if (s.kind == SV::kNone)
        types.push_back(Type::none());
      else
        fail(args[1].range, "isinstance() needs a type or a tuple of types in script");
    };
    collect(args[1].sv);
    const TypePtr& t = v->type();
    for (const TypePtr& want : types) {
      if (!want) {
        if (t->kind() == TypeKind::List) return constant(IValue(true), r);
        continue;
      }
      if (want->kind() == TypeKind::Tuple && want->contained().empty()) {
        if (t->kind() == TypeKind::Tuple) return constant(IValue(true), r);
        continue;
      }
      if (t->is_subtype_of(*want)) return constant(IValue(true), r);
      if (t->kind() == TypeKind::Optional && t->elem()->is_subtype_of(*want))
        return emit_node_call(kIsNot, {v, none(r)}, Type::bool_(), r);
    }
    return constant(IValue(false), r);
  }
  if (name == "range" || name == "enumerate")
    fail(r, fmt::format(
                "{}() is only supported as the iterable of a for loop or comprehension in script",
                name));
  fail(r, fmt::format("builtin {}() is not supported in script", name));
}

Value* FunctionEmitter::call_tensor_method(Value* self, const std::string& name,
                                           std::vector<Arg>& args, const SourceRange& r) {
  static const std::map<std::string, ScalarType> conv = {
      {"float", ScalarType::Float32},     {"half", ScalarType::Float16},
      {"bfloat16", ScalarType::BFloat16}, {"double", ScalarType::Float64},
      {"long", ScalarType::Int64},        {"int", ScalarType::Int32},
      {"bool", ScalarType::Bool},         {"byte", ScalarType::UInt8},
      {"char", ScalarType::Int8},         {"short", ScalarType::Int16}};
  if (auto it = conv.find(name); it != conv.end() && args.empty()) {
    Value* d = constant(IValue(torch_dtype_code(it->second)), r);
    return call_builtin_op("aten::to", {Arg{SV::of(d), d, r, ""}}, r, self);
  }
  if (name == "cpu" || name == "cuda") {
    if (!args.empty()) fail(r, fmt::format("Tensor.{}() takes no arguments in script", name));
    Value* d = constant(IValue(Device::parse(name)), r);
    return call_builtin_op("aten::to", {Arg{SV::of(d), d, r, ""}}, r, self);
  }
  if (name == "size" && args.empty()) return call_builtin_op("aten::size", {}, r, self);
  if (name == "item" || name == "tolist" || name == "numpy" || name == "backward")
    fail(r, fmt::format("Tensor.{}() is not supported in script", name));
  return call_builtin_op("aten::" + name, std::move(args), r, self);
}

Value* FunctionEmitter::call_list_method(Value* self, const std::string& name,
                                         std::vector<Arg>& args, const SourceRange& r) {
  const TypePtr& t = self->type();
  for (const Arg& a : args)
    if (!a.name.empty())
      fail(a.range, fmt::format("{}.{}() takes no keyword arguments in script", type_str(t), name));
  if (t->kind() == TypeKind::Str) {
    if (name == "format") {
      std::vector<Value*> vs{self};
      for (Arg& a : args) vs.push_back(arg_value(a));
      return emit_node_call(kFormat, vs, Type::str_(), r);
    }
    fail(r, fmt::format("str.{}() is not supported in script", name));
  }
  const TypePtr& elem = t->elem();
  auto elem_arg = [&](Arg& a) {
    Value* v = arg_value(a);
    if (v->type()->kind() == TypeKind::Int && elem->kind() == TypeKind::Float)
      v = call_builtin_op("aten::Float", {Arg{SV::of(v), v, r, ""}}, r);
    if (!v->type()->is_subtype_of(*elem))
      fail(a.range,
           fmt::format(
               "Expected a value of type '{}' for argument 'el' but instead found type '{}'.",
               type_str(elem), type_str(v->type())));
    return v;
  };
  auto int_arg = [&](Arg& a) {
    Value* v = arg_value(a);
    if (v->type()->kind() != TypeKind::Int) fail(a.range, "list indices must be integers");
    return v;
  };
  if (name == "append" && args.size() == 1)
    return emit_node_call(kAppend, {self, elem_arg(args[0])}, t, r);
  if (name == "pop" && args.size() <= 1) {
    Value* i = args.empty() ? constant(IValue(int64_t{-1}), r) : int_arg(args[0]);
    return emit_node_call(Symbol::intern("aten::pop"), {self, i}, elem, r);
  }
  if (name == "insert" && args.size() == 2) {
    emit_node_call(Symbol::intern("aten::insert"), {self, int_arg(args[0]), elem_arg(args[1])},
                   nullptr, r);
    return none(r);
  }
  if (name == "extend" && args.size() == 1) {
    Value* o = arg_value(args[0]);
    if (!o->type()->is_subtype_of(*t))
      fail(args[0].range, fmt::format("extend() needs a {}", type_str(t)));
    emit_node_call(Symbol::intern("aten::extend"), {self, o}, nullptr, r);
    return none(r);
  }
  if ((name == "clear" || name == "reverse") && args.empty()) {
    emit_node_call(Symbol::intern("aten::" + name), {self}, nullptr, r);
    return none(r);
  }
  if (name == "copy" && args.empty()) return emit_node_call(kListCopy, {self}, t, r);
  fail(r, fmt::format("'{}' object has no method '{}' in script (or wrong arguments)", type_str(t),
                      name));
}

}  // namespace
}  // namespace ampjit::script

// ---- torch.nn.functional, math, autocast ---------------------------------------------------

namespace ampjit::script {
namespace {

// Note [Functional table]
// torch.nn.functional's Python functions, as ampjit's eager ones (frontend/ampjit/nn/functional.py)
// lower them: the Python signature (names and defaults), then the aten call. In the call, a name is
// a parameter; `name|X` passes X when the parameter is None; `name#` turns a reduction string into
// its enum; other tokens are literals. `inplace` picks the second call when it is True.
struct FunctionalSpec {
  const char* name;
  const char* params;
  const char* call;
  const char* inplace_call;
};
const FunctionalSpec kFunctional[] = {
    {"relu", "input, inplace=False", "relu(input)", "relu_(input)"},
    {"relu6", "input, inplace=False", "relu6(input)", "relu6_(input)"},
    {"elu", "input, alpha=1.0, inplace=False", "elu(input, alpha)", "elu_(input, alpha)"},
    {"leaky_relu", "input, negative_slope=0.01, inplace=False", "leaky_relu(input, negative_slope)",
     "leaky_relu_(input, negative_slope)"},
    {"hardtanh", "input, min_val=-1.0, max_val=1.0, inplace=False",
     "hardtanh(input, min_val, max_val)", "hardtanh_(input, min_val, max_val)"},
    {"gelu", "input, approximate='none'", "gelu(input, approximate=approximate)", nullptr},
    {"silu", "input, inplace=False", "silu(input)", "silu_(input)"},
    {"mish", "input, inplace=False", "mish(input)", "mish_(input)"},
    {"sigmoid", "input", "sigmoid(input)", nullptr},
    {"tanh", "input", "tanh(input)", nullptr},
    {"softplus", "input, beta=1, threshold=20", "softplus(input, beta, threshold)", nullptr},
    {"logsigmoid", "input", "log_sigmoid(input)", nullptr},
    {"hardsigmoid", "input, inplace=False", "hardsigmoid(input)", "hardsigmoid_(input)"},
    {"hardswish", "input, inplace=False", "hardswish(input)", "hardswish_(input)"},
    {"softmax", "input, dim=None, _stacklevel=3, dtype=None", "softmax(input, dim, dtype)",
     nullptr},
    {"log_softmax", "input, dim=None, _stacklevel=3, dtype=None", "log_softmax(input, dim, dtype)",
     nullptr},
    {"linear", "input, weight, bias=None", "linear(input, weight, bias)", nullptr},
    {"conv1d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
     "conv1d(input, weight, bias, stride, padding, dilation, groups)", nullptr},
    {"conv2d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
     "conv2d(input, weight, bias, stride, padding, dilation, groups)", nullptr},
    {"conv3d", "input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1",
     "conv3d(input, weight, bias, stride, padding, dilation, groups)", nullptr},
    {"conv_transpose2d",
     "input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1",
     "conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation)",
     nullptr},
    {"max_pool2d",
     "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, "
     "return_indices=False",
     "max_pool2d(input, kernel_size, stride|[], padding, dilation, ceil_mode)", nullptr},
    {"avg_pool2d",
     "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, "
     "divisor_override=None",
     "avg_pool2d(input, kernel_size, stride|[], padding, ceil_mode, count_include_pad, "
     "divisor_override)",
     nullptr},
    {"adaptive_avg_pool2d", "input, output_size", "adaptive_avg_pool2d(input, output_size)",
     nullptr},
    {"layer_norm", "input, normalized_shape, weight=None, bias=None, eps=1e-05",
     "layer_norm(input, normalized_shape, weight, bias, eps, True)", nullptr},
    {"batch_norm",
     "input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, "
     "eps=1e-05",
     "batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)",
     nullptr},
    {"group_norm", "input, num_groups, weight=None, bias=None, eps=1e-05",
     "group_norm(input, num_groups, weight, bias, eps, True)", nullptr},
    {"dropout", "input, p=0.5, training=True, inplace=False", "dropout(input, p, training)",
     "dropout_(input, p, training)"},
    {"embedding",
     "input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, "
     "sparse=False",
     "embedding(weight, input, padding_idx|-1, scale_grad_by_freq, sparse)", nullptr},
    {"one_hot", "tensor, num_classes=-1", "one_hot(tensor, num_classes)", nullptr},
    {"l1_loss", "input, target, size_average=None, reduce=None, reduction='mean'",
     "l1_loss(input, target, reduction#)", nullptr},
    {"mse_loss", "input, target, size_average=None, reduce=None, reduction='mean'",
     "mse_loss(input, target, reduction#)", nullptr},
    {"smooth_l1_loss", "input, target, size_average=None, reduce=None, reduction='mean', beta=1.0",
     "smooth_l1_loss(input, target, reduction#, beta)", nullptr},
    {"binary_cross_entropy",
     "input, target, weight=None, size_average=None, reduce=None, reduction='mean'",
     "binary_cross_entropy(input, target, weight, reduction#)", nullptr},
    {"binary_cross_entropy_with_logits",
     "input, target, weight=None, size_average=None, reduce=None, reduction='mean', "
     "pos_weight=None",
     "binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction#)", nullptr},
    {"cross_entropy",
     "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
     "reduction='mean', "
     "label_smoothing=0.0",
     "cross_entropy_loss(input, target, weight, reduction#, ignore_index, label_smoothing)",
     nullptr},
    {"nll_loss",
     "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, "
     "reduction='mean'",
     "nll_loss_nd(input, target, weight, reduction#, ignore_index)", nullptr},
};

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    if (c != ' ' || !cur.empty()) cur += c;
  }
  if (!cur.empty()) out.push_back(cur);
  for (auto& x : out)
    while (!x.empty() && x.back() == ' ') x.pop_back();
  return out;
}

IValue parse_literal(const std::string& t) {
  if (t == "None") return IValue();
  if (t == "True") return IValue(true);
  if (t == "False") return IValue(false);
  if (t == "[]") return IValue(std::vector<int64_t>{});
  if (t.size() >= 2 && t.front() == '\'') return IValue(t.substr(1, t.size() - 2));
  if (t.find_first_of(".e") != std::string::npos) return IValue(std::stod(t));
  return IValue(static_cast<int64_t>(std::stoll(t)));
}

Value* FunctionEmitter::call_functional(const std::string& name, std::vector<Arg>& args,
                                        const SourceRange& r) {
  const FunctionalSpec* spec = nullptr;
  for (const auto& f : kFunctional)
    if (name == f.name) spec = &f;
  if (!spec) {
    if (!find_overloads("aten::" + name).empty())
      return call_builtin_op("aten::" + name, std::move(args), r);
    fail(r, fmt::format("torch.nn.functional.{} is not supported in script", name));
  }
  // Bind the Python signature.
  std::vector<std::string> names;
  std::vector<std::optional<IValue>> defaults;
  for (const std::string& p : split_commas(spec->params)) {
    const size_t eq = p.find('=');
    names.push_back(p.substr(0, eq));
    defaults.push_back(eq == std::string::npos
                           ? std::nullopt
                           : std::optional<IValue>(parse_literal(p.substr(eq + 1))));
  }
  std::vector<Value*> bound(names.size(), nullptr);
  size_t pi = 0;
  for (Arg& a : args) {
    size_t idx;
    if (a.name.empty()) {
      if (pi >= names.size())
        fail(r, fmt::format("{}() takes at most {} arguments", name, names.size()));
      idx = pi++;
    } else {
      auto it = std::find(names.begin(), names.end(), a.name);
      if (it == names.end())
        fail(a.range, fmt::format("{}() got an unexpected keyword argument '{}'", name, a.name));
      idx = static_cast<size_t>(it - names.begin());
    }
    if (a.sv.kind == SV::kNone) a.value = none(a.range);
    bound[idx] = arg_value(a);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    if (bound[i]) continue;
    if (!defaults[i]) fail(r, fmt::format("{}() missing required argument '{}'", name, names[i]));
    bound[i] = constant(*defaults[i], r);
  }
  auto param = [&](const std::string& n) -> Value* {
    auto it = std::find(names.begin(), names.end(), n);
    return it == names.end() ? nullptr : bound[static_cast<size_t>(it - names.begin())];
  };
  if (Value* ri = param("return_indices");
      ri && constant_value(ri) && constant_value(ri)->to_bool())
    fail(r, fmt::format("{}(return_indices=True) is not supported in script", name));
  if (name == "softmax" || name == "log_softmax")
    if (Value* d = param("dim"); d && is_none(d->type()))
      fail(r, fmt::format("{}(): pass dim explicitly in script (the implicit dim is deprecated)",
                          name));
  const char* call = spec->call;
  if (spec->inplace_call) {
    Value* ip = param("inplace");
    const IValue* c = ip ? constant_value(ip) : nullptr;
    if (ip && !c) fail(r, fmt::format("{}(): inplace must be a constant in script", name));
    if (c && c->to_bool()) call = spec->inplace_call;
  }
  const std::string_view cs(call);
  const size_t open = cs.find('(');
  const std::string op = "aten::" + std::string(cs.substr(0, open));
  std::vector<Arg> op_args;
  for (std::string tok : split_commas(cs.substr(open + 1, cs.size() - open - 2))) {
    Value* v;
    std::string key;
    if (const size_t eq = tok.find('='); eq != std::string::npos) {
      key = tok.substr(0, eq);
      tok = tok.substr(eq + 1);
    }
    if (const size_t bar = tok.find('|'); bar != std::string::npos) {
      v = param(tok.substr(0, bar));
      if (is_none(v->type())) v = constant(parse_literal(tok.substr(bar + 1)), r);
    } else if (tok.back() == '#') {
      Value* s = param(tok.substr(0, tok.size() - 1));
      auto c = constant_value(s);
      if (!c || !c->is_string())
        fail(r, fmt::format("{}(): reduction must be a constant string in script", name));
      const std::string& red = c->to_string_ref();
      int64_t e = red == "none" ? 0 : red == "mean" ? 1 : red == "sum" ? 2 : -1;
      if (e < 0) fail(r, fmt::format("{} is not a valid value for reduction", red));
      v = constant(IValue(e), r);
    } else if (Value* p = param(tok)) {
      v = p;
    } else {
      v = constant(parse_literal(tok), r);
    }
    op_args.push_back(Arg{SV::of(v), v, r, key});
  }
  return call_builtin_op(op, std::move(op_args), r);
}

Value* FunctionEmitter::call_math(const std::string& name, std::vector<Arg>& args,
                                  const SourceRange& r) {
  static const std::set<std::string> fns = {"sqrt", "exp",   "log",  "sin",  "cos",
                                            "tanh", "floor", "ceil", "isnan"};
  if (name == "fabs") return call_builtin_op("aten::abs", std::move(args), r);
  if (!fns.count(name)) fail(r, fmt::format("math.{} is not supported in script", name));
  return call_builtin_op("aten::" + name, std::move(args), r);
}

// torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None) and the per-device
// classes: prim::CreateObject of the class, then the attributes torch's __init__ sets, which the
// JIT autocast pass reads (script/passes/autocast_pass.cpp).
Value* FunctionEmitter::call_autocast(const std::string& cls, std::vector<Arg>& args,
                                      const SourceRange& r) {
  std::vector<std::string> names;
  std::string device, class_name;
  if (cls == "torch.autocast") {
    names = {"device_type", "dtype", "enabled", "cache_enabled"};
    class_name = "__torch__.torch.amp.autocast_mode.autocast";
  } else if (cls == "torch.cpu.amp.autocast") {
    names = {"enabled", "dtype", "cache_enabled"};
    device = "cpu";
    class_name = "__torch__.torch.cpu.amp.autocast_mode.autocast";
  } else {
    names = {"enabled", "dtype", "cache_enabled"};
    device = "cuda";
    class_name = "__torch__.torch.cuda.amp.autocast_mode.autocast";
  }
  std::map<std::string, Value*> bound;
  size_t pi = 0;
  for (Arg& a : args) {
    std::string n = a.name;
    if (n.empty()) {
      if (pi >= names.size())
        fail(r, fmt::format("{}() takes at most {} arguments", cls, names.size()));
      n = names[pi++];
    } else if (std::find(names.begin(), names.end(), n) == names.end()) {
      fail(a.range, fmt::format("{}() got an unexpected keyword argument '{}'", cls, n));
    }
    if (a.sv.kind == SV::kNone) a.value = none(a.range);
    bound[n] = arg_value(a);
  }
  Value* dev;
  if (device.empty()) {
    if (!bound.count("device_type")) fail(r, "autocast() missing required argument 'device_type'");
    dev = bound["device_type"];
    if (dev->type()->kind() != TypeKind::Str) fail(r, "autocast(): device_type must be a str");
    if (auto c = constant_value(dev)) device = c->to_string_ref();
    if (!device.empty() && device != "cpu" && device != "cuda")
      fail(r, fmt::format("User specified autocast device_type must be 'cuda' or 'cpu', but got {}",
                          device));
  } else {
    dev = constant(IValue(device), r);
  }
  Value* dtype = bound.count("dtype") ? bound["dtype"] : nullptr;
  if ((!dtype || is_none(dtype->type())) && cls == "torch.autocast" &&
      resolve_autocast_semantics(session.options.semantics) == AutocastSemantics::Eager) {
    // Eager semantics: None, which entering reads as the device's autocast dtype current then,
    // as eager's torch.autocast() does at construction (runtime/autocast/autocast_regions.h). The
    // per-device classes default to a fixed dtype.
    dtype = none(r);
  } else if (!dtype || is_none(dtype->type())) {
    // torch reads the device's current autocast dtype here, which script cannot do (it fails to
    // compile); ampjit gives the eager answer: the device's default (issue 6).
    const ScalarType d = device == "cuda" ? ScalarType::Float16 : ScalarType::BFloat16;
    dtype = constant(IValue(torch_dtype_code(d)), r);
  } else if (dtype->type()->kind() != TypeKind::Int) {
    fail(r,
         fmt::format("autocast(): dtype must be a torch.dtype, not {}", type_str(dtype->type())));
  }
  Value* enabled = bound.count("enabled") ? bound["enabled"] : constant(IValue(true), r);
  if (enabled->type()->kind() != TypeKind::Bool)
    fail(r, fmt::format("autocast(): enabled must be a bool, not {}", type_str(enabled->type())));
  Node* obj = insert(graph->create(sym::prim::CreateObject, {}, 1), r);
  obj->output()->set_type(Type::named(TypeKind::Object, class_name));
  auto set = [&](const char* attr, Value* v) {
    Node* n = insert(graph->create(sym::prim::SetAttr, {obj->output(), v}, 0), r);
    n->set_attr(sym::attr::name, IValue(std::string(attr)));
  };
  set("device", dev);
  set("fast_dtype", dtype);
  set("_enabled", enabled);
  if (bound.count("cache_enabled") && !is_none(bound["cache_enabled"]->type()))
    set("_cache_enabled", bound["cache_enabled"]);
  return obj->output();
}

// ---- Types and constants -------------------------------------------------------------------

TypePtr FunctionEmitter::parse_type(const Expr& e) {
  auto named = [&](const std::string& n) -> TypePtr {
    if (n == "int") return Type::int_();
    if (n == "float") return Type::float_();
    if (n == "bool") return Type::bool_();
    if (n == "str") return Type::str_();
    if (n == "None" || n == "NoneType") return Type::none();
    if (n == "Tensor" || n == "torch.Tensor") return Type::tensor();
    if (n == "torch.dtype" || n == "dtype") return Type::int_();  // TorchScript: a dtype is an int
    if (n == "torch.device" || n == "device") return Type::device();
    return nullptr;
  };
  auto dotted = [&](const Expr& x) -> std::string {
    std::string s;
    const Expr* cur = &x;
    while (cur->kind == ExprKind::Attribute) {
      s = "." + cur->as<Attribute>().attr + s;
      cur = cur->as<Attribute>().value.get();
    }
    if (cur->kind != ExprKind::Name) return "";
    std::string head = cur->as<Name>().id;
    // `import ampjit as torch` or `import torch`: the resolver says which namespace a head is.
    if (!s.empty() && head != "torch" && head != "typing") {
      Resolved res = resolver ? resolver->resolve(head, x.range) : Resolved{};
      if (res.kind == Resolved::kNamespace) head = res.path;
    }
    return head + s;
  };
  switch (e.kind) {
    case ExprKind::None:
      return Type::none();
    case ExprKind::Str: {
      // A string annotation ("Tensor") is parsed as an expression.
      auto src = std::make_shared<Source>(e.as<StrLit>().value, e.range.filename());
      auto m = parse_module(src);
      if (m->body.size() != 1 || m->body[0]->kind != StmtKind::Expr)
        fail(e.range, "bad type annotation string");
      return parse_type(*m->body[0]->as<ExprStmt>().value);
    }
    case ExprKind::Name:
    case ExprKind::Attribute: {
      std::string n = dotted(e);
      if (e.kind == ExprKind::Name && !lookup_var(n)) {
        Resolved res = resolver ? resolver->resolve(n, e.range) : Resolved{};
        if (res.kind == Resolved::kNamespace &&
            (res.path == "torch.Tensor" || res.path == "torch.dtype" || res.path == "torch.device"))
          n = res.path;
      }
      if (TypePtr t = named(n)) return t;
      fail(e.range, fmt::format("Unknown type name '{}'", n.empty() ? "?" : n));
    }
    case ExprKind::Subscript: {
      const auto& s = e.as<Subscript>();
      std::string head = dotted(*s.value);
      if (head.rfind("typing.", 0) == 0) head = head.substr(7);
      std::vector<const Expr*> items;
      if (s.indices.size() == 1 && s.indices[0]->kind == ExprKind::Tuple)
        for (const auto& x : s.indices[0]->as<TupleExpr>().elts) items.push_back(x.get());
      else
        for (const auto& x : s.indices) items.push_back(x.get());
      if (head.empty() && s.value->kind == ExprKind::Name) head = s.value->as<Name>().id;
      if (head == "List" || head == "list") {
        if (items.size() != 1) fail(e.range, "List[T] takes one type");
        return Type::list(parse_type(*items[0]));
      }
      if (head == "Optional") {
        if (items.size() != 1) fail(e.range, "Optional[T] takes one type");
        return Type::optional(parse_type(*items[0]));
      }
      if (head == "Tuple" || head == "tuple") {
        std::vector<TypePtr> ts;
        for (const Expr* x : items) ts.push_back(parse_type(*x));
        return Type::tuple(std::move(ts));
      }
      if (head == "Final") {
        if (items.size() != 1) fail(e.range, "Final[T] takes one type");
        return parse_type(*items[0]);
      }
      if (head == "Dict" || head == "dict")
        fail(e.range, "Dict types are not supported by ampjit's script compiler yet");
      if (head == "Union") {
        if (items.size() == 2 &&
            (items[0]->kind == ExprKind::None || items[1]->kind == ExprKind::None))
          return Type::optional(parse_type(*items[items[0]->kind == ExprKind::None ? 1 : 0]));
        fail(e.range, "Union types are not supported in script (Optional[T] is)");
      }
      fail(e.range, fmt::format("Unknown type constructor '{}'", head));
    }
    case ExprKind::BinOp: {
      const auto& b = e.as<BinOp>();  // T | None
      if (b.op == BinOpKind::BitOr) {
        if (b.rhs->kind == ExprKind::None) return Type::optional(parse_type(*b.lhs));
        if (b.lhs->kind == ExprKind::None) return Type::optional(parse_type(*b.rhs));
      }
      break;
    }
    default:
      break;
  }
  fail(e.range, "unsupported type annotation");
}

// A compile-time constant: literals, negated numbers, tuples/lists of constants, dtype and math
// constants, and names the resolver knows as constants.
IValue FunctionEmitter::eval_constant(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Int:
      return IValue(e.as<IntLit>().value);
    case ExprKind::Float:
      return IValue(e.as<FloatLit>().value);
    case ExprKind::Str:
      return IValue(e.as<StrLit>().value);
    case ExprKind::Bool:
      return IValue(e.as<BoolLit>().value);
    case ExprKind::None:
      return IValue();
    case ExprKind::UnaryOp: {
      const auto& u = e.as<UnaryOp>();
      IValue v = eval_constant(*u.operand);
      if (u.op == UnaryOpKind::Neg && v.is_int()) return IValue(-v.to_int());
      if (u.op == UnaryOpKind::Neg && v.is_double()) return IValue(-v.to_double());
      if (u.op == UnaryOpKind::Pos && v.is_number()) return v;
      break;
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      std::vector<IValue> items;
      const auto& elts = e.kind == ExprKind::Tuple ? e.as<TupleExpr>().elts : e.as<ListExpr>().elts;
      for (const auto& x : elts) items.push_back(eval_constant(*x));
      return e.kind == ExprKind::Tuple ? IValue::tuple(std::move(items))
                                       : IValue::list(std::move(items));
    }
    case ExprKind::Name:
    case ExprKind::Attribute: {
      // Emitting into a scratch graph keeps the function's graph clean.
      auto saved_graph = graph;
      graph = std::make_shared<Graph>();
      graph->set_insert_point(graph->block());
      Frame* saved_env = env;
      Frame scratch;
      scratch.parent = nullptr;
      env = saved_env ? saved_env : &scratch;
      SV s;
      try {
        s = emit_sv(e);
      } catch (...) {
        graph = saved_graph;
        throw;
      }
      graph = saved_graph;
      env = saved_env;
      if (s.kind == SV::kNone) return IValue();
      if (s.kind == SV::kValue)
        if (auto c = constant_value(s.value)) return *c;
      break;
    }
    default:
      break;
  }
  fail(e.range,
       "expected a constant (a literal, a tuple of literals, a dtype or a global constant)");
}

}  // namespace
}  // namespace ampjit::script

// ---- Entry points --------------------------------------------------------------------------

namespace ampjit::script {

namespace {

// A file's top-level defs over another resolver (compile_source).
class FileResolver : public Resolver {
 public:
  FileResolver(std::shared_ptr<Resolver> base, std::shared_ptr<const Source> source)
      : base_(std::move(base)), source_(std::move(source)) {}
  void add_def(const std::string& name, const FunctionDef* def) { defs_[name] = def; }
  Resolved resolve(const std::string& name, const SourceRange& range) override {
    auto it = defs_.find(name);
    if (it == defs_.end()) return base_ ? base_->resolve(name, range) : Resolved{};
    Resolved r;
    r.kind = Resolved::kSource;
    r.identity = reinterpret_cast<uintptr_t>(it->second);
    return r;
  }
  const FunctionDef* def(uintptr_t identity) const {
    for (const auto& [n, d] : defs_)
      if (reinterpret_cast<uintptr_t>(d) == identity) return d;
    return nullptr;
  }

 private:
  std::shared_ptr<Resolver> base_;
  std::shared_ptr<const Source> source_;
  std::map<std::string, const FunctionDef*> defs_;
};

class BuiltinResolver : public Resolver {
 public:
  Resolved resolve(const std::string& name, const SourceRange&) override {
    if (name == "torch") return Resolved::ns("torch");
    if (name == "math") return Resolved::ns("math");
    if (name == "typing") return Resolved::ns("typing");
    if (name == "List" || name == "Tuple" || name == "Optional" || name == "Dict" ||
        name == "Final" || name == "Union")
      return Resolved::ns("typing." + name);
    return {};
  }
};

// The wrapped-number tensor of a Python number on the left of a tensor operator (`2 / x`).
void num_to_tensor(const Node&, Stack& io) {
  const IValue v = io.at(0);
  Scalar s = v.to_scalar();
  Tensor t = Tensor::empty(IntArrayRef{}, s.type());
  t.fill_(s);
  t.impl()->is_wrapped_number = true;
  io.clear();
  io.emplace_back(std::move(t));
}
const bool kNumToTensorRegistered =
    (register_prim_handler(Symbol::intern("prim::NumToTensor"), num_to_tensor), true);

}  // namespace

std::shared_ptr<Resolver> builtin_resolver() {
  static auto r = std::make_shared<BuiltinResolver>();
  return r;
}

std::string qualified_function_name(const std::string& name) {
  return qualified_name_for(name);
}

std::shared_ptr<Function> compile_function(std::shared_ptr<const Source> source,
                                           std::shared_ptr<Resolver> resolver,
                                           const CompileOptions& options) {
  Session session;
  session.options = options;
  Resolved self;
  self.kind = Resolved::kSource;
  self.source = std::move(source);
  self.resolver = resolver ? std::move(resolver) : builtin_resolver();
  return session.compile_source_fn(self, SourceRange{});
}

std::shared_ptr<Function> compile_module(std::shared_ptr<ModuleInfo> module,
                                         const CompileOptions& options) {
  AMPJIT_CHECK(module != nullptr, "compile_module: no module");
  Session session;
  session.options = options;
  if (!module->methods.count("forward"))
    throw CompileError(fmt::format("module '{}' has no forward method", module->class_name),
                       SourceRange{});
  return session.compile_method(module, "forward", SourceRange{});
}

std::vector<std::shared_ptr<Function>> compile_source(std::shared_ptr<const Source> source,
                                                      std::shared_ptr<Resolver> resolver,
                                                      const CompileOptions& options) {
  auto mod = std::shared_ptr<Module>(parse_module(source));
  auto files = std::make_shared<FileResolver>(resolver ? resolver : builtin_resolver(), source);
  std::vector<const FunctionDef*> defs;
  for (const auto& s : mod->body)
    if (s->kind == StmtKind::FunctionDef) {
      defs.push_back(&s->as<FunctionDef>());
      files->add_def(defs.back()->name, defs.back());
    }
  Session session;
  session.options = options;
  // Callees resolve to their def in this file; compile them (memoized by identity) on demand.
  struct DefCompiler {
    Session& session;
    std::shared_ptr<FileResolver> files;
    std::shared_ptr<Module> keep;
    std::shared_ptr<Function> operator()(const FunctionDef* def, const SourceRange& site) {
      const auto id = reinterpret_cast<uintptr_t>(def);
      auto it = session.compiled.find(id);
      if (it != session.compiled.end()) return it->second;
      if (session.in_progress.count(id)) fail(site, "recursive calls are not supported in script");
      session.in_progress.insert(id);
      try {
        auto fn = compile_def(session, *def, files, nullptr);
        session.in_progress.erase(id);
        session.compiled[id] = fn;
        return fn;
      } catch (const CompileError& e) {
        session.in_progress.erase(id);
        if (site.valid()) throw e.called_from(site);
        throw;
      }
    }
  };
  session.file_defs = [files, mod, &session](uintptr_t id,
                                             const SourceRange& site) -> std::shared_ptr<Function> {
    const FunctionDef* def = files->def(id);
    if (!def) return nullptr;
    DefCompiler c{session, files, mod};
    return c(def, site);
  };
  // Later defs first: they usually call the earlier ones, so an error in a helper is reported with
  // the call chain that reaches it.
  std::vector<std::shared_ptr<Function>> out(defs.size());
  for (size_t i = defs.size(); i-- > 0;) {
    DefCompiler c{session, files, mod};
    out[i] = c(defs[i], SourceRange{});
  }
  session.file_defs = nullptr;
  return out;
}

}  // namespace ampjit::script
