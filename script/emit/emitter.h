// The script compiler's emitter, shared by its files in script/emit/: sugared values, the
// environment, the per-function state (FunctionEmitter) and the per-compilation state (Session).
// Only the compiler includes this header; script/compiler.h is the public entry.
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
#pragma once
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
#include "script/compiler.h"

namespace ampjit::script::detail {

// ---- Small helpers (analysis.cpp) ---------------------------------------------------------

[[noreturn]] inline void fail(const SourceRange& r, const std::string& msg) {
  throw CompileError(msg, r);
}

inline const Symbol kLen = Symbol::intern("aten::len");
inline const Symbol kGetItem = Symbol::intern("aten::__getitem__");
inline const Symbol kSetItem = Symbol::intern("aten::_set_item");
inline const Symbol kAppend = Symbol::intern("aten::append");
inline const Symbol kListSlice = Symbol::intern("aten::slice");
inline const Symbol kContains = Symbol::intern("aten::__contains__");
inline const Symbol kIs = Symbol::intern("aten::__is__");
inline const Symbol kIsNot = Symbol::intern("aten::__isnot__");
inline const Symbol kPrint = Symbol::intern("prim::Print");
inline const Symbol kStr = Symbol::intern("aten::str");
inline const Symbol kFormat = Symbol::intern("aten::format");
inline const Symbol kListCopy = Symbol::intern("aten::list");
inline const Symbol kDictConstruct = Symbol::intern("prim::DictConstruct");
inline const Symbol kNumToTensor = Symbol::intern("prim::NumToTensor");
inline const Symbol kListMin = Symbol::intern("prim::min");
inline const Symbol kListMax = Symbol::intern("prim::max");
inline const Symbol kListSum = Symbol::intern("aten::sum");

inline bool is_tensor(const TypePtr& t) {
  return t->kind() == TypeKind::Tensor;
}
inline bool is_none(const TypePtr& t) {
  return t->kind() == TypeKind::None;
}
inline bool is_number_kind(TypeKind k) {
  return k == TypeKind::Int || k == TypeKind::Float || k == TypeKind::Bool;
}
// Whether values of `t` may be dict keys (str, int, float, bool, Device, Tensor), as torch's.
inline bool is_dict_key_type(const Type& t) {
  const TypeKind k = t.kind();
  return k == TypeKind::Str || k == TypeKind::Int || k == TypeKind::Float || k == TypeKind::Bool ||
         k == TypeKind::Device || k == TypeKind::Tensor;
}

inline std::string type_str(const TypePtr& t) {
  return t->unrefined()->str();
}

// The meet of two types at a control-flow join, or nullptr when they do not meet.
TypePtr unify(const TypePtr& a, const TypePtr& b);
// Python's dtype names (torch.float32, torch.half, ...).
const std::map<std::string, ScalarType>& dtype_names();
// Collects the names a block of statements assigns (for loop-carried values).
void collect_assigned(const Body& body, std::set<std::string>& out);
void collect_assigned(const Stmt& s, std::set<std::string>& out);

// Exit analysis (Note [Exit flags]).
struct Exits {
  bool may_return = false, may_break = false, may_continue = false;
  bool always = false;  // every path through the statement leaves the block
  bool any() const { return may_return || may_break || may_continue; }
};
Exits exits_of(const Body& body, bool in_loop);
Exits exits_of(const Stmt& s, bool in_loop);
bool may_return(const Stmt& s);
bool may_return(const Body& b);
// Whether a function body needs the exit flags of Note [Exit flags].
bool needs_exit_flags(const Body& body, bool top);
bool contains_nested_return(const Body& body);
void collect_assigned_target(const Expr& e, std::set<std::string>& out);

// The hidden variables of Note [Exit flags].
inline const char* const kRet = "$ret";
inline const char* const kRetVal = "$retval";
inline std::string brk_name(int depth) {
  return fmt::format("$brk{}", depth);
}
inline std::string cont_name(int depth) {
  return fmt::format("$cont{}", depth);
}
// The placeholder a name gets on a path that has not assigned it yet.
inline bool is_uninitialized_placeholder(const Value* v) {
  return v->node()->kind() == sym::prim::Uninitialized && v->type()->kind() == TypeKind::Any;
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
  bool interface = false;  // kModule, kMethod: reached through an interface-typed attribute

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
  Value* self_value = nullptr;              // the method's `self` input
  Frame* env = nullptr;
  TypePtr declared_return;
  TypePtr inferred_return;
  bool use_exit_flags = false;
  int loop_depth = 0;
  int unrolled_depth = 0;  // loop_depth of the innermost loop unrolled at compile time
  std::string fn_name;
  std::string module_name;  // the Python module of a def that has one ("torch.nn.functional")

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
  void emit_delete(const Delete& s);
  // Whether `base` is `self` in a script class's __init__, where assignments declare attributes.
  bool declares_attribute(const SV& base) const {
    return base.kind == SV::kModule && base.module && base.module->is_class &&
           base.module == self_module && fn_name == "__init__" && base.value == self_value;
  }
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
  void emit_assert_value(Value* cond, Value* message, const SourceRange& r);
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
  Value* fold_cmp(CmpOpKind op, Value* l, Value* r, const SourceRange& range);
  Value* emit_bool_op(const BoolOp& b);
  Value* emit_unary(const UnaryOp& u);
  Value* emit_if_exp(const IfExp& e);
  Value* emit_list(const ListExpr& l, const TypePtr& hint);
  Value* emit_list_comp(const ListComp& c);
  Value* emit_dict(const DictExpr& d, const TypePtr& hint);
  Value* emit_dict_comp(const DictComp& c);
  // The loop of a comprehension: `body` runs once per element that passes the `if` clauses, in a
  // scope of its own (Python 3).
  void emit_comprehension(const Expr& target, const Expr& iter, const std::vector<ExprPtr>& conds,
                          const SourceRange& r, const std::function<void()>& body);
  // A dict key of `d`'s key type (an error at `r` otherwise).
  Value* dict_key(Value* d, Value* key, const SourceRange& r);
  Value* emit_cond(const Expr& e);                 // a bool for `if`/`while`
  Value* to_cond(Value* v, const SourceRange& r);  // Python's truth value of v
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
  Value* call_unique(bool unique, std::vector<Arg> args, const SourceRange& r);
  Value* call_norm_str(std::vector<Arg>& args, const SourceRange& r);
  std::optional<std::vector<Value*>> match_schema(const OpEntry& op, std::vector<Arg>& args,
                                                  Value* self, const SourceRange& r,
                                                  bool allow_conversions, std::string& why);
  Value* convert_to(Value* v, const Argument& arg, bool allow_conversions, const SourceRange& r);
  SV call_sv(const SV& callee, std::vector<Arg> args, const SourceRange& r);
  // `keep_call`: the call is never inlined (an interface call, Note [Interface calls]).
  Value* call_function(const std::shared_ptr<Function>& fn, std::vector<Arg> args,
                       const SourceRange& r, Value* self = nullptr, bool keep_call = false);
  Value* call_python_builtin(const std::string& name, std::vector<Arg>& args, const SourceRange& r);
  // Module method `name`, or the first of its overloads that accepts `args`
  // (ModuleInfo::overloads).
  std::shared_ptr<Function> resolve_method(const std::shared_ptr<ModuleInfo>& m,
                                           const std::string& name, std::vector<Arg>& args,
                                           const SourceRange& r);
  Value* call_tensor_method(Value* self, const std::string& name, std::vector<Arg>& args,
                            const SourceRange& r);
  Value* call_dict_method(Value* self, const std::string& name, std::vector<Arg>& args,
                          const SourceRange& r);
  Value* call_list_method(Value* self, const std::string& name, std::vector<Arg>& args,
                          const SourceRange& r);
  Value* call_functional(const std::string& name, std::vector<Arg>& args, const SourceRange& r);
  Value* call_warn(std::vector<Arg>& args, const SourceRange& r);
  Value* call_math(const std::string& name, std::vector<Arg>& args, const SourceRange& r);
  Value* call_autocast(const std::string& cls, std::vector<Arg>& args, const SourceRange& r);
  // Note [Serialized code] (serialized.cpp): torch.NAME(args) as the Python operator or builtin
  // torch's printer spelled that way (nullptr when it is not one), and ops.prim.NAME(args).
  Value* call_serialized_form(const std::string& name, std::vector<Arg>& args,
                              const SourceRange& r);
  SV call_ops(const std::string& path, std::vector<Arg> args, const SourceRange& r);
  // Removes layout=/pin_memory=/memory_format= at their defaults when no overload of `qualified`
  // declares them (torch's factories have them; ampjit's tensors are strided and unpinned).
  void drop_unused_factory_args(const std::string& qualified, std::vector<Arg>& args);
  // torch.tensor(data, dtype=None, device=None): a number or nested list of numbers as a tensor.
  Value* call_tensor_literal(std::vector<Arg>& args, const SourceRange& r);
  Value* emit_node_call(Symbol kind, const std::vector<Value*>& inputs, TypePtr out,
                        const SourceRange& r);
  Value* tensor_index(Value* t, const std::vector<const Expr*>& idx, const SourceRange& r);

  // Types
  TypePtr parse_type(const Expr& e);
  // The type of a NamedTuple class the resolver found (its field annotations parsed here).
  TypePtr named_tuple_type(const Resolved& res, const SourceRange& r);
  // The script class `res` describes, known to the session from here on, its __init__ compiled
  // (Note [Script classes]).
  std::shared_ptr<ModuleInfo> script_class(const Resolved& res, const SourceRange& r);
  // The class of a value whose type is a script class, or nullptr.
  std::shared_ptr<ModuleInfo> class_of(const Value* v);
  Value* construct_object(const std::shared_ptr<ModuleInfo>& cls, std::vector<Arg> args,
                          const SourceRange& r);
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
  // The script classes met so far, by class name (Note [Script classes]).
  std::map<std::string, std::shared_ptr<ModuleInfo>> classes;
  CompileOptions options;
  int depth = 0;  // functions being compiled, each inside its caller's compilation (kMaxCallDepth)

  std::shared_ptr<Function> compile_source_fn(const Resolved& res, const SourceRange& call_site);
  std::shared_ptr<Function> compile_method(const std::shared_ptr<ModuleInfo>& m,
                                           const std::string& name, const SourceRange& call_site);
};

// The N of a BroadcastingListN[T] (or Optional[BroadcastingListN[T]]) annotation, else 0 (Note
// [Broadcasting lists], torch_namespace.cpp).
int broadcasting_list_len(const Expr& annotation);

// ---- Sessions (functions.cpp) ------------------------------------------------------------

// Note [Call depth limit]
// A callee is compiled inside its caller's compilation, one C++ recursion per level of calls (and
// each level holds an emitter). Past this many levels compile_def refuses with a CompileError that
// names the chain, as torch's Python frontend raises RecursionError near 2,000, so no chain of
// calls can exhaust the stack (the deepest allowed chain is compiled on a small stack in
// tests/cpp/test_script_compiler.cpp, Release and ASan).
inline constexpr int kMaxCallDepth = 200;

// "__torch__." + name: the qualified name of a compiled function
// ("__torch__.torch.nn.functional.relu" when `name` is qualified by its module).
std::string qualified_name_for(const std::string& name);
// The one def of a parsed source (a function's own source).
const FunctionDef& single_def(const Module& m, const SourceRange& fallback);
// Compiles one def, a method when self_module is set.
std::shared_ptr<Function> compile_def(Session& session, const FunctionDef& def,
                                      std::shared_ptr<Resolver> resolver,
                                      std::shared_ptr<ModuleInfo> self_module,
                                      std::string module_name = "");

}  // namespace ampjit::script::detail
