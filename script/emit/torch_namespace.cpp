// The torch namespace beyond the op table: torch.nn.functional, math, autocast; types and
// constants.
#include "script/emit/emitter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>

#include "script/literals.h"
#include "script/parser.h"
#include "script/static_resolver.h"

namespace ampjit::script::detail {

// ---- torch.nn.functional, math, autocast ---------------------------------------------------

// torch.nn.functional: frontend/ampjit/nn/functional.py, compiled from its own text (Note
// [Functionals from their own source] there), which the build embeds as kFunctionalSource.
extern const char kFunctionalSource[];

namespace {

// `NAME = boolean_dispatch(arg_name=..., arg_index=..., default=..., if_true=F, if_false=G, ...)`
struct BooleanDispatch {
  std::string arg_name;
  size_t arg_index = 0;
  bool default_value = false;
  std::string if_true, if_false;
};

struct FunctionalModule {
  std::shared_ptr<FileResolver> resolver;  // the file's defs over its imports
  std::map<std::string, BooleanDispatch> dispatch;
};

BooleanDispatch read_boolean_dispatch(const Call& call) {
  BooleanDispatch d;
  bool have_name = false, have_index = false, have_true = false, have_false = false;
  for (const auto& kw : call.keywords) {
    const Expr& v = *kw.value;
    if (kw.name == "arg_name" && v.kind == ExprKind::Str) {
      d.arg_name = v.as<StrLit>().value;
      have_name = true;
    } else if (kw.name == "arg_index" && v.kind == ExprKind::Int && v.as<IntLit>().value >= 0) {
      d.arg_index = static_cast<size_t>(v.as<IntLit>().value);
      have_index = true;
    } else if (kw.name == "default" && v.kind == ExprKind::Bool) {
      d.default_value = v.as<BoolLit>().value;
    } else if (kw.name == "if_true" && v.kind == ExprKind::Name) {
      d.if_true = v.as<Name>().id;
      have_true = true;
    } else if (kw.name == "if_false" && v.kind == ExprKind::Name) {
      d.if_false = v.as<Name>().id;
      have_false = true;
    }
  }
  if (!(have_name && have_index && have_true && have_false))
    fail(call.range,
         "boolean_dispatch needs arg_name=, arg_index=, if_true= and if_false= as literals");
  return d;
}

std::mutex g_functional_path_mu;
std::string g_functional_path = "ampjit/nn/functional.py";

const FunctionalModule& functional_module() {
  static const FunctionalModule m = [] {
    std::string path;
    {
      std::lock_guard<std::mutex> lock(g_functional_path_mu);
      path = g_functional_path;
    }
    auto source = std::make_shared<Source>(std::string(kFunctionalSource), path);
    std::shared_ptr<const Module> file(parse_module(source));
    FunctionalModule fm;
    fm.resolver = std::make_shared<FileResolver>(static_resolver(*file), file,
                                                 "torch.nn.functional", library_function_cache());
    for (const StmtPtr& s : file->body) {
      if (s->kind != StmtKind::Assign) continue;
      const auto& assign = s->as<Assign>();
      if (assign.targets.size() != 1 || assign.targets[0]->kind != ExprKind::Name ||
          assign.value->kind != ExprKind::Call)
        continue;
      const auto& call = assign.value->as<Call>();
      if (call.func->kind == ExprKind::Name && call.func->as<Name>().id == "boolean_dispatch")
        fm.dispatch[assign.targets[0]->as<Name>().id] = read_boolean_dispatch(call);
    }
    return fm;
  }();
  return m;
}

}  // namespace

}  // namespace ampjit::script::detail

namespace ampjit::script {

std::string_view functional_source() {
  return detail::kFunctionalSource;
}

void set_functional_source_path(std::string path) {
  std::lock_guard<std::mutex> lock(detail::g_functional_path_mu);
  detail::g_functional_path = std::move(path);
}

}  // namespace ampjit::script

namespace ampjit::script::detail {

Value* FunctionEmitter::call_functional(const std::string& name, std::vector<Arg>& args,
                                        const SourceRange& r) {
  const FunctionalModule& m = functional_module();
  std::string target = name;
  if (auto d = m.dispatch.find(name); d != m.dispatch.end()) {
    // The flag must be known at compile time: it decides the function, and so the result type.
    const BooleanDispatch& bd = d->second;
    const Arg* flag = nullptr;
    size_t positional = 0;
    for (const Arg& a : args) {
      if (a.name == bd.arg_name || (a.name.empty() && positional++ == bd.arg_index)) flag = &a;
    }
    bool value = bd.default_value;
    if (flag) {
      const IValue* c = flag->value ? constant_value(flag->value) : nullptr;
      if (!c || !c->is_bool())
        fail(flag->range,
             fmt::format("{}(): {} must be a constant bool in script", name, bd.arg_name));
      value = c->to_bool();
    }
    target = value ? bd.if_true : bd.if_false;
  }
  Resolved res = m.resolver->resolve(target, r);
  if (res.kind == Resolved::kSource)
    return call_function(session.compile_source_fn(res, r), std::move(args), r);
  if (res.kind == Resolved::kNamespace)  // an op bound by name: `conv2d = torch.conv2d`
    return as_value(call_sv(SV::ns(res.path), std::move(args), r), r);
  if (!find_overloads("aten::" + name).empty())
    return call_builtin_op("aten::" + name, std::move(args), r);
  fail(r, fmt::format("torch.nn.functional.{} is not supported in script", name));
}

// warnings.warn(message, stacklevel=...): aten::warn(message, stacklevel), as torch emits it. A
// category is not supported (torch's script has none either).
Value* FunctionEmitter::call_warn(std::vector<Arg>& args, const SourceRange& r) {
  Value* message = nullptr;
  Value* stacklevel = nullptr;
  size_t positional = 0;
  for (Arg& a : args) {
    const std::string key = !a.name.empty() ? a.name : positional++ == 0 ? "message" : "category";
    if (key == "message" && !message) {
      message = arg_value(a);
    } else if (key == "stacklevel" && !stacklevel) {
      stacklevel = arg_value(a);
      if (stacklevel->type()->kind() != TypeKind::Int)
        fail(a.range, "warnings.warn(): stacklevel must be an int");
    } else {
      fail(a.range, "warnings.warn() takes a message and stacklevel= in script (no category)");
    }
  }
  if (!message || message->type()->kind() != TypeKind::Str)
    fail(r, "warnings.warn() needs a str message in script");
  if (!stacklevel) stacklevel = constant(IValue(int64_t{2}), r);
  emit_node_call(Symbol::intern("aten::warn"), {message, stacklevel}, nullptr, r);
  return none(r);
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
    if (n == "Any" || n == "typing.Any") return Type::any();
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
      if ((e.kind == ExprKind::Name && !lookup_var(n) && resolver) ||
          (n.rfind("__torch__.", 0) == 0 && resolver)) {  // Note [Serialized code]
        Resolved res = resolver->resolve(n, e.range);
        if (res.kind == Resolved::kNamedTuple) return named_tuple_type(res, e.range);
        if (res.kind == Resolved::kClass)
          return Type::named(TypeKind::Object, script_class(res, e.range)->class_name);
      }
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
      if (broadcasting_list_len(e) > 0) {  // BroadcastingList2[int]: a List[int] (one int is N)
        if (items.size() != 1) fail(e.range, fmt::format("{}[T] takes one type", head));
        return Type::list(parse_type(*items[0]));
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
      if (head == "Dict" || head == "dict") {
        if (items.size() != 2) fail(e.range, "Dict[K, V] takes two types");
        TypePtr k = parse_type(*items[0]);
        if (!is_dict_key_type(*k))
          fail(items[0]->range,
               fmt::format("Dict keys must be str, int, float, bool, Device or Tensor, not {}",
                           type_str(k)));
        return Type::dict(std::move(k), parse_type(*items[1]));
      }
      if (head == "Union") {  // Union[A, B, ...]; with None it is Optional (Note in type.h)
        std::vector<TypePtr> alts;
        for (const Expr* x : items) alts.push_back(parse_type(*x));
        return Type::union_(std::move(alts));
      }
      fail(e.range, fmt::format("Unknown type constructor '{}'", head));
    }
    case ExprKind::BinOp: {
      const auto& b = e.as<BinOp>();  // T | None
      if (b.op == BinOpKind::BitOr) return Type::union_({parse_type(*b.lhs), parse_type(*b.rhs)});
      break;
    }
    default:
      break;
  }
  fail(e.range, "unsupported type annotation");
}

std::shared_ptr<ModuleInfo> FunctionEmitter::script_class(const Resolved& res,
                                                          const SourceRange& r) {
  auto [it, fresh] = session.classes.emplace(res.module->class_name, res.module);
  if (fresh && res.module->methods.count("__init__"))
    session.compile_method(it->second, "__init__", r);
  return it->second;
}

std::shared_ptr<ModuleInfo> FunctionEmitter::class_of(const Value* v) {
  if (v->type()->kind() != TypeKind::Object) return nullptr;
  auto it = session.classes.find(v->type()->name());
  return it == session.classes.end() ? nullptr : it->second;
}

// C(args): a new object of the class, then its __init__ (torch's prim::CreateObject and
// __init__ call).
Value* FunctionEmitter::construct_object(const std::shared_ptr<ModuleInfo>& cls,
                                         std::vector<Arg> args, const SourceRange& r) {
  Node* n = insert(graph->create(sym::prim::CreateObject, {}, 1), r);
  n->output()->set_type(Type::named(TypeKind::Object, cls->class_name));
  if (cls->methods.count("__init__")) {
    auto init = resolve_method(cls, "__init__", args, r);
    call_function(init, std::move(args), r, n->output());
  } else if (!args.empty()) {
    fail(r, fmt::format("{}() takes no arguments (it has no __init__)", cls->class_name));
  }
  return n->output();
}

TypePtr FunctionEmitter::named_tuple_type(const Resolved& res, const SourceRange& r) {
  std::vector<TypePtr> elems;
  for (const std::string& text : res.field_types) elems.push_back(parse_type(StrLit(text, r)));
  return Type::named_tuple(res.path, res.fields, std::move(elems));
}

// Note [Broadcasting lists]
// torch's BroadcastingList1/2/3[T] annotation (torch._jit_internal) is a List[T] parameter that
// also takes one T, repeated N times, as an op's `int[2]` does: the argument's list_len.
int broadcasting_list_len(const Expr& annotation) {
  if (annotation.kind != ExprKind::Subscript) return 0;
  const auto& s = annotation.as<Subscript>();
  const Expr* head = s.value.get();
  std::string name = head->kind == ExprKind::Name        ? head->as<Name>().id
                     : head->kind == ExprKind::Attribute ? head->as<Attribute>().attr
                                                         : "";
  if (name == "Optional" && s.indices.size() == 1) return broadcasting_list_len(*s.indices[0]);
  static const std::string kPrefix = "BroadcastingList";
  if (name.size() == kPrefix.size() + 1 && name.starts_with(kPrefix) && name.back() >= '1' &&
      name.back() <= '9')
    return name.back() - '0';
  return 0;
}

// A compile-time constant: literals, negated numbers, tuples/lists of constants, dtype and math
// constants, and names the resolver knows as constants.
IValue FunctionEmitter::eval_constant(const Expr& e) {
  // A name or attribute is emitted into a scratch graph (the function's graph stays clean) and is
  // a constant when it emits one.
  auto lookup = [&](const Expr& x) -> std::optional<IValue> {
    auto saved_graph = graph;
    graph = std::make_shared<Graph>();
    graph->set_insert_point(graph->block());
    Frame* saved_env = env;
    Frame scratch;
    scratch.parent = nullptr;
    env = saved_env ? saved_env : &scratch;
    SV s;
    try {
      s = emit_sv(x);
    } catch (...) {
      graph = saved_graph;
      env = saved_env;
      throw;
    }
    graph = saved_graph;
    env = saved_env;
    if (s.kind == SV::kNone) return IValue();
    if (s.kind == SV::kValue)
      if (auto c = constant_value(s.value)) return *c;
    return std::nullopt;
  };
  if (std::optional<IValue> v = literal_value(e, lookup, /*allow_lists=*/true)) return *v;
  fail(e.range,
       "expected a constant (a literal, a tuple of literals, a dtype or a global constant)");
}

}  // namespace ampjit::script::detail
