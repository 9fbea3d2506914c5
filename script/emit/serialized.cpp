// The serialized dialect: the forms torch's code printer writes into TorchScript archives
// (code/__torch__/...py) that hand-written script does not use.
//
// Note [Serialized code]
// torch.jit.save stores each method as TorchScript source printed from its graph
// (torch/csrc/jit/serialization/python_print.cpp), and torch.jit.load compiles that source again.
// The printer spells Python's operators and builtins as the ops they became, so the same compiler
// must read these spellings back:
//  - `torch.NAME(args)` where NAME is a Python operator or builtin's op and no argument is a
//  tensor:
//    `torch.add(i, 2)` is `i + 2`, `torch.eq(a, b)` is `a == b`, `torch.__isnot__(o, None)` is
//    `o is not None`, `torch.len(l)` is `len(l)`, `torch.append(l, x)` is `l.append(x)`,
//    `torch.format(s, x)` is `s.format(x)`, `torch.warn(msg)` is `warnings.warn(msg)`;
//  - `ops.prim.NAME(args)` and `ops.aten.NAME(args)`: the prim ops it has no other spelling for
//    (RaiseException, device, dtype, NumToTensor, unchecked_unwrap_optional, ...), and aten ops;
//  - `unchecked_cast(T, v)`, `uninitialized(T)` and `annotate(T, v)` (the resolver of an archive
//    answers these names: serialization/jit_load.cpp);
//  - qualified names: `__torch__.torch.nn.functional.relu(x)`, `__torch__.m.Out(a, b)` and the
//    annotation `-> __torch__.m.Out` are asked of the resolver with the whole dotted name, and so
//    is `CONSTANTS.c0`, a tensor constant of the archive.
// What a method's class declares (attributes, Final constants, `__annotations__["0"] = T`) is the
// loader's to read; the compiler sees a ModuleInfo as it does for a Python module.
#include "script/emit/emitter.h"

#include "runtime/default_dtype.h"
#include "runtime/grad_mode.h"

namespace ampjit::script::detail {

namespace {

const std::map<std::string, BinOpKind>& binary_ops() {
  static const auto& m = *new std::map<std::string, BinOpKind>{
      {"add", BinOpKind::Add},           {"sub", BinOpKind::Sub},
      {"mul", BinOpKind::Mul},           {"div", BinOpKind::Div},
      {"floordiv", BinOpKind::FloorDiv}, {"remainder", BinOpKind::Mod},
      {"pow", BinOpKind::Pow},           {"__and__", BinOpKind::BitAnd},
      {"__or__", BinOpKind::BitOr},      {"__xor__", BinOpKind::BitXor},
      {"__lshift__", BinOpKind::LShift}, {"__rshift__", BinOpKind::RShift}};
  return m;
}

const std::map<std::string, CmpOpKind>& compare_ops() {
  static const auto& m = *new std::map<std::string, CmpOpKind>{
      {"eq", CmpOpKind::Eq},     {"ne", CmpOpKind::NotEq},       {"lt", CmpOpKind::Lt},
      {"le", CmpOpKind::LtE},    {"gt", CmpOpKind::Gt},          {"ge", CmpOpKind::GtE},
      {"__is__", CmpOpKind::Is}, {"__isnot__", CmpOpKind::IsNot}};
  return m;
}

// torch's op names of Python's builtins.
const std::map<std::string, std::string>& builtin_ops() {
  static const auto& m = *new std::map<std::string, std::string>{
      {"len", "len"},     {"list", "list"}, {"str", "str"}, {"Int", "int"},
      {"Float", "float"}, {"Bool", "bool"}, {"abs", "abs"}, {"round", "round"}};
  return m;
}

// ops.prim.is_cuda(x): whether x is on a CUDA device.
void is_cuda(const Node&, Stack& io) {
  const bool cuda = io.at(0).to_tensor().device().is_cuda();
  io.clear();
  io.emplace_back(cuda);
}
const bool kIsCudaRegistered =
    (register_prim_handler(Symbol::intern("prim::is_cuda"), is_cuda), true);

// aten::tensor(data, ScalarType? dtype) -> Tensor: torch.tensor of a number or a (nested) list of
// numbers, on the CPU; its dtype, when not given, as torch infers it: the default float dtype if
// any element is a float, else int64 if any is an int, else bool.
void tensor_from_data(const Node&, Stack& io) {
  const IValue data = io.at(0);
  const IValue dtype = io.at(1);
  std::vector<int64_t> shape;
  for (const IValue* v = &data; v->is_list(); v = &v->list_elems()[0]) {
    shape.push_back(static_cast<int64_t>(v->list_elems().size()));
    if (v->list_elems().empty()) break;
  }
  std::vector<double> values;
  bool any_float = false, any_int = false;
  std::function<void(const IValue&, size_t)> walk = [&](const IValue& v, size_t depth) {
    if (depth < shape.size()) {
      AMPJIT_CHECK(v.is_list() && static_cast<int64_t>(v.list_elems().size()) == shape[depth],
                   "torch.tensor: expected a sequence of length {} at dimension {}", shape[depth],
                   depth);
      for (const IValue& e : v.list_elems()) walk(e, depth + 1);
      return;
    }
    AMPJIT_CHECK(v.is_double() || v.is_int() || v.is_bool(),
                 "torch.tensor: expected numbers, got {}", v.tag_name());
    any_float |= v.is_double();
    any_int |= v.is_int();
    values.push_back(v.is_double() ? v.to_double() : static_cast<double>(v.to_int()));
  };
  walk(data, 0);
  const ScalarType inferred = any_float || values.empty() ? default_float_dtype()
                              : any_int                   ? ScalarType::Int64
                                                          : ScalarType::Bool;
  Tensor staged = Tensor::empty(shape, ScalarType::Float64);
  std::copy(values.begin(), values.end(), static_cast<double*>(staged.raw_data()));
  if (any_int && !any_float) {  // int64 exactly, not through a double
    staged = Tensor::empty(shape, ScalarType::Int64);
    std::vector<int64_t> ints;
    std::function<void(const IValue&)> flat = [&](const IValue& v) {
      if (v.is_list())
        for (const IValue& e : v.list_elems()) flat(e);
      else
        ints.push_back(v.to_int());
    };
    flat(data);
    std::copy(ints.begin(), ints.end(), static_cast<int64_t*>(staged.raw_data()));
  }
  const ScalarType want = dtype.is_none() ? inferred : *from_torch_dtype_code(dtype.to_int());
  io.clear();
  io.emplace_back(staged.to(want, /*copy=*/true));
}
const bool kTensorRegistered =
    (register_prim_handler(Symbol::intern("aten::tensor"), tensor_from_data), true);

// aten::any(bool[]) / aten::all(bool[]): Python's any() and all() of a list of bools.
template <bool Any>
void any_all(const Node&, Stack& io) {
  bool result = !Any;
  for (const IValue& v : io.at(0).list_elems())
    if (v.to_bool() == Any) {
      result = Any;
      break;
    }
  io.clear();
  io.emplace_back(result);
}
const bool kAnyAllRegistered =
    (register_prim_handler(Symbol::intern("aten::any"), any_all<true>),
     register_prim_handler(Symbol::intern("aten::all"), any_all<false>), true);

void is_grad_enabled(const Node&, Stack& io) {
  io.clear();
  io.emplace_back(grad_enabled());
}
const bool kGradModeRegistered =
    (register_prim_handler(Symbol::intern("aten::is_grad_enabled"), is_grad_enabled), true);

}  // namespace

void FunctionEmitter::drop_unused_factory_args(const std::string& qualified,
                                               std::vector<Arg>& args) {
  // torch's factories take layout= and pin_memory=, which its printer writes out; ampjit's tensors
  // are all strided and unpinned, so the defaults (None, strided, False) say nothing.
  const auto& overloads = find_overloads(qualified);
  auto declared = [&](const std::string& n) {
    for (const OpEntry* op : overloads)
      for (const Argument& a : op->schema.args)
        if (a.name == n) return true;
    return false;
  };
  for (size_t i = 0; i < args.size();) {
    const std::string& n = args[i].name;
    const bool droppable =
        (n == "layout" || n == "pin_memory" || n == "memory_format") && !declared(n);
    const IValue* c = droppable ? constant_value(arg_value(args[i])) : nullptr;
    const bool is_default =
        c && (c->is_none() || (n == "layout" && c->is_int() && c->to_int() == 0) ||
              (n == "pin_memory" && c->is_bool() && !c->to_bool()));
    if (is_default)
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
    else
      ++i;
  }
}

Value* FunctionEmitter::call_tensor_literal(std::vector<Arg>& args, const SourceRange& r) {
  Value* data = nullptr;
  Value* dtype = nullptr;
  Value* device = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& n = args[i].name;
    Value*& slot = (n.empty() && i == 0) || n == "data" ? data
                   : n == "dtype"                       ? dtype
                   : n == "device"                      ? device
                                                        : dtype;
    if (!(n.empty() && i == 0) && n != "data" && n != "dtype" && n != "device" &&
        n != "requires_grad")
      fail(args[i].range, fmt::format("torch.tensor() got an unexpected argument '{}'", n));
    if (n == "requires_grad") continue;
    slot = arg_value(args[i]);
  }
  if (!data) fail(r, "torch.tensor() takes the data first");
  const TypeKind k = data->type()->kind();
  if (k != TypeKind::List && k != TypeKind::Int && k != TypeKind::Float && k != TypeKind::Bool)
    fail(r, fmt::format("torch.tensor() takes a number or a list of numbers, not {}",
                        type_str(data->type())));
  if (!dtype) dtype = none(r);
  Value* t = emit_node_call(Symbol::intern("aten::tensor"), {data, dtype}, Type::tensor(), r);
  if (device && device->type()->kind() != TypeKind::None) {
    std::vector<Arg> to{Arg{SV::of(device), device, r, ""}};
    t = call_tensor_method(t, "to", to, r);
  }
  return t;
}

Value* FunctionEmitter::call_serialized_form(const std::string& name, std::vector<Arg>& args,
                                             const SourceRange& r) {
  if (name == "tensor") return call_tensor_literal(args, r);
  if (name == "is_grad_enabled" && args.empty())
    return emit_node_call(Symbol::intern("aten::is_grad_enabled"), {}, Type::bool_(), r);
  for (Arg& a : args)
    if (!a.name.empty()) return nullptr;
  if (name == "device" && args.size() == 1) {  // torch.device("cpu")
    const IValue* s = constant_value(arg_value(args[0]));
    if (!s || !s->is_string())
      fail(args[0].range, "torch.device() takes a constant string in script");
    try {
      return constant(IValue(Device::parse(s->to_string_ref())), r);
    } catch (const Error& e) {
      fail(args[0].range, e.what());
    }
  }
  if (name == "warn") {  // aten::warn(str message, int stacklevel=2)
    if (args.size() == 2) args[1].name = "stacklevel";
    return call_warn(args, r);
  }
  if (args.empty()) return nullptr;
  auto value = [&](size_t i) { return arg_value(args[i]); };
  static const std::set<std::string> list_methods = {"append",  "extend", "insert", "pop",
                                                     "remove",  "clear",  "index",  "count",
                                                     "reverse", "sort",   "copy"};
  static const std::set<std::string> dict_methods = {
      "keys", "values", "items", "get", "setdefault", "update", "pop", "popitem", "clear", "copy"};
  // A container's method: torch.append(l, x) is l.append(x), x a tensor or not.
  const TypeKind k =
      args[0].sv.kind == SV::kValue ? args[0].sv.value->type()->kind() : TypeKind::None;
  if (name == "slice" && (k == TypeKind::List || k == TypeKind::Str) && args.size() <= 4) {
    // torch.slice(l, start, end, step): l[start:end:step]
    Value* lo = args.size() > 1 ? value(1) : none(r);
    Value* hi = args.size() > 2 ? value(2) : none(r);
    Value* step = args.size() > 3 ? value(3) : constant(IValue(int64_t{1}), r);
    return emit_node_call(kListSlice, {value(0), lo, hi, step}, value(0)->type(), r);
  }
  if (name == "_set_item" && args.size() == 3 && (k == TypeKind::List || k == TypeKind::Dict)) {
    // torch._set_item(c, i, v): c[i] = v
    const TypePtr& t = value(0)->type();
    Value* key = k == TypeKind::Dict ? dict_key(value(0), value(1), r) : value(1);
    if (k == TypeKind::List && key->type()->kind() != TypeKind::Int)
      fail(args[1].range, "list indices must be integers");
    const TypePtr& elem = k == TypeKind::List ? t->elem() : t->value();
    if (!value(2)->type()->is_subtype_of(*elem))
      fail(args[2].range, fmt::format("Expected a value of type {} for the element but instead "
                                      "found type {}",
                                      type_str(elem), type_str(value(2)->type())));
    return emit_node_call(kSetItem, {value(0), key, value(2)}, k == TypeKind::List ? t : nullptr, r)
               ?: none(r);
  }
  if (name == "__getitem__" && args.size() == 2 &&
      (k == TypeKind::List || k == TypeKind::Str || k == TypeKind::Dict)) {  // c[i]
    const TypePtr& t = value(0)->type();
    Value* key = k == TypeKind::Dict ? dict_key(value(0), value(1), r) : value(1);
    if (k != TypeKind::Dict && key->type()->kind() != TypeKind::Int)
      fail(args[1].range,
           fmt::format("list indices must be integers, not {}", type_str(key->type())));
    return emit_node_call(kGetItem, {value(0), key},
                          k == TypeKind::List   ? t->elem()
                          : k == TypeKind::Dict ? t->value()
                                                : Type::str_(),
                          r);
  }
  if ((k == TypeKind::List && list_methods.count(name)) ||
      (k == TypeKind::Dict && dict_methods.count(name))) {
    std::vector<Arg> rest(args.begin() + 1, args.end());
    return call_list_method(value(0), name, rest, r);
  }
  if ((name == "__is__" || name == "__isnot__") && args.size() == 2)  // identity, of anything
    return emit_cmp(name == "__is__" ? CmpOpKind::Is : CmpOpKind::IsNot, value(0), value(1), r);
  for (Arg& a : args)
    if (a.sv.kind == SV::kValue && is_tensor(a.sv.value->type())) return nullptr;
  if (auto b = binary_ops().find(name); b != binary_ops().end() && args.size() == 2)
    return emit_binop(b->second, value(0), value(1), r);
  if (auto c = compare_ops().find(name); c != compare_ops().end() && args.size() == 2)
    return emit_cmp(c->second, value(0), value(1), r);
  if (name == "__contains__" && args.size() == 2)  // torch.__contains__(c, x): x in c
    return emit_cmp(CmpOpKind::In, value(1), value(0), r);
  if (name == "__not__" && args.size() == 1) {
    Value* c = to_cond(value(0), r);
    return call_builtin_op("aten::__not__", {Arg{SV::of(c), c, r, ""}}, r);
  }
  if ((name == "any" || name == "all") && args.size() == 1 && k == TypeKind::List &&
      value(0)->type()->elem()->kind() == TypeKind::Bool)
    return emit_node_call(Symbol::intern("aten::" + name), {value(0)}, Type::bool_(), r);
  if (auto b = builtin_ops().find(name); b != builtin_ops().end()) {
    std::vector<Arg> rest = args;
    return call_python_builtin(b->second, rest, r);
  }
  static const std::set<std::string> str_methods = {
      "format", "startswith", "endswith", "lower", "upper", "strip",   "lstrip",  "rstrip",
      "split",  "join",       "replace",  "find",  "count", "isdigit", "isalpha", "isspace"};
  if (k == TypeKind::Str && str_methods.count(name)) {
    std::vector<Arg> rest(args.begin() + 1, args.end());
    return call_list_method(value(0), name, rest, r);
  }
  if (k == TypeKind::Int || k == TypeKind::Float || k == TypeKind::Bool) {
    static const std::set<std::string> math = {
        "sqrt", "floor", "ceil",  "exp",   "log",   "log10", "sin",      "cos",  "tan",
        "tanh", "fabs",  "isnan", "isinf", "trunc", "gcd",   "copysign", "log1p"};
    if (math.count(name)) return call_math(name, args, r);
  }
  return nullptr;
}

SV FunctionEmitter::call_ops(const std::string& path, std::vector<Arg> args, const SourceRange& r) {
  if (path.rfind("ops.aten.", 0) == 0) return call_sv(SV::ns("torch." + path.substr(9)), args, r);
  if (path.rfind("ops.prim.", 0) != 0) fail(r, fmt::format("{} is not supported in script", path));
  const std::string name = path.substr(9);
  for (const Arg& a : args)
    if (!a.name.empty()) fail(a.range, fmt::format("{}() takes no keyword arguments", path));
  auto want = [&](size_t n) {
    if (args.size() != n) fail(r, fmt::format("{}() takes {} arguments", path, n));
  };
  auto type_arg = [&](const Arg& a) -> TypePtr {
    if (a.sv.kind == SV::kType) return a.sv.type;
    if (a.sv.kind == SV::kBuiltin) {
      if (a.sv.path == "int") return Type::int_();
      if (a.sv.path == "float") return Type::float_();
      if (a.sv.path == "bool") return Type::bool_();
      if (a.sv.path == "str") return Type::str_();
    }
    if (a.sv.kind == SV::kNamespace && a.sv.path == "torch.Tensor") return Type::tensor();
    if (a.sv.kind == SV::kNamespace && a.sv.path == "torch.device") return Type::device();
    fail(a.range, fmt::format("{}() takes a type first", path));
  };
  if (name == "unchecked_cast") {  // unchecked_cast(T, v)
    want(2);
    const TypePtr t = type_arg(args[0]);
    if (args[1].sv.kind == SV::kNone) return SV::of(unchecked_cast(none(r), t, r));
    return SV::of(unchecked_cast(arg_value(args[1]), t, r));
  }
  if (name == "Uninitialized") {  // uninitialized(T)
    want(1);
    Node* n = insert(graph->create(sym::prim::Uninitialized, {}, 1), r);
    n->output()->set_type(type_arg(args[0]));
    return SV::of(n->output());
  }
  if (name == "RaiseException") {  // RaiseException(msg, "builtins.ValueError")
    if (args.empty() || args.size() > 2) fail(r, "ops.prim.RaiseException(msg, cls) takes 1 or 2");
    std::string cls = "Exception";
    if (args.size() == 2) {
      const IValue* c = constant_value(arg_value(args[1]));
      if (c && c->is_string()) cls = c->to_string_ref();
      if (cls.rfind("builtins.", 0) == 0) cls = cls.substr(9);
    }
    Value* msg = emit_node_call(kFormat, {constant(IValue(cls + ": {}"), r), arg_value(args[0])},
                                Type::str_(), r);
    insert(graph->create(sym::prim::RaiseException, {msg}, 0), r);
    return SV::of(none(r));
  }
  if (name == "unchecked_unwrap_optional") {
    want(1);
    Value* v = arg_value(args[0]);
    const TypePtr& t = v->type();
    return SV::of(t->kind() == TypeKind::Optional ? unchecked_cast(v, t->elem(), r) : v);
  }
  if (name == "NumToTensor") {
    want(1);
    return SV::of(emit_node_call(Symbol::intern("prim::NumToTensor"), {arg_value(args[0])},
                                 Type::tensor(), r));
  }
  if (name == "min" || name == "max") return SV::of(call_python_builtin(name, args, r));
  // Tensor properties: ops.prim.device(x) is x.device, and so on.
  static const std::set<std::string> properties = {
      "device", "dtype",        "requires_grad", "is_cuda",   "is_nested", "data",
      "layout", "is_quantized", "is_meta",       "is_sparse", "is_mkldnn"};
  if (properties.count(name)) {
    want(1);
    Value* v = arg_value(args[0]);
    if (!is_tensor(v->type())) fail(args[0].range, fmt::format("{}() takes a tensor", path));
    if (name == "device" || name == "dtype")
      return SV::of(call_builtin_op("prim::" + name, {}, r, v));
    if (name == "requires_grad")
      return SV::of(emit_node_call(Symbol::intern("prim::requires_grad"), {v}, Type::bool_(), r));
    if (name == "is_cuda")
      return SV::of(emit_node_call(Symbol::intern("prim::is_cuda"), {v}, Type::bool_(), r));
    if (name == "data") {
      std::vector<Arg> none;
      return SV::of(call_tensor_method(v, "detach", none, r));
    }
    if (name == "layout") return SV::of(constant(IValue(int64_t{0}), r));  // torch.strided
    return SV::of(constant(IValue(false), r));  // ampjit has no nested/quantized/... tensors
  }
  fail(r, fmt::format("{} is not supported by ampjit", path));
}

}  // namespace ampjit::script::detail
