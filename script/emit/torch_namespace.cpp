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

#include "script/parser.h"

namespace ampjit::script::detail {

// ---- torch.nn.functional, math, autocast ---------------------------------------------------

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

}  // namespace ampjit::script::detail
