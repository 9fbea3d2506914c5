// Calls: arguments, schema matching and conversions, builtin ops, tensor and list methods, script
// functions and methods.
#include "script/emit/emitter.h"

#include "script/builtins.h"
#include "script/passes/inline_calls.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <unordered_set>

namespace ampjit::script::detail {

// ---- Calls ---------------------------------------------------------------------------------

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
        // Tensor?[] for a Tensor[] (torch's index takes Tensor?[]; ampjit's takes integer tensors
        // only): cast, and a None element (a full slice) is the kernel's error at run time.
        if (allow && elem->kind() == TypeKind::Tensor &&
            have->elem()->kind() == TypeKind::Optional &&
            have->elem()->elem()->kind() == TypeKind::Tensor)
          return unchecked_cast(v, want, r);
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
    case TypeKind::Union:
      // The first alternative the value converts to (a tuple to a List, an int to a float), as
      // an argument of that type would (interpolate's `Union[int, List[int]]` size).
      for (const TypePtr& alt : want->contained()) {
        Argument a = arg;
        a.type = alt;
        if (Value* c = convert_to(v, a, allow, r)) return c;
      }
      return nullptr;
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
    // torch binds the receiver to the argument named self wherever it is (polygamma(int n,
    // Tensor self) as x.polygamma(n)), else to the first positional one
    const int named_self = s.arg_index("self");
    const int idx = named_self >= 0 ? named_self : next_positional();
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
    size_t remaining_params = 0;
    for (size_t j = static_cast<size_t>(idx) + 1; j < s.args.size(); ++j)
      if (!s.args[j].kwarg_only) ++remaining_params;
    // Varargs sizes: x.view(2, 3), torch.zeros(2, 3) pack the remaining ints into the int[]
    // argument.
    if (a.type->kind() == TypeKind::List && a.type->elem()->kind() == TypeKind::Int) {
      bool all_ints = true;
      for (size_t j = k; j < positional.size(); ++j) {
        Value* v = positional[j]->value;
        if (!v || v->type()->kind() != TypeKind::Int) all_ints = false;
      }
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
    // torch's varargsCanBeUsedAsList (schema_matching.cpp), when conversions are allowed: the
    // remaining positional values become the trailing list parameter (torch.block_diag(a, b),
    // torch.broadcast_tensors(a, b), torch.cartesian_prod(a)) unless the first is a list or a
    // tuple already; not for a fixed-size list (int[2], where one int is itself valid).
    if (allow && a.type->kind() == TypeKind::List && a.list_len == 0 && remaining_params == 0 &&
        positional[k]->value && positional[k]->value->type()->kind() != TypeKind::List &&
        positional[k]->value->type()->kind() != TypeKind::Tuple) {
      Argument elem_arg = a;
      elem_arg.type = a.type->elem();
      std::vector<Value*> vs;
      for (size_t j = k; j < positional.size(); ++j) {
        Value* v = positional[j]->value;
        Value* c = v ? convert_to(v, elem_arg, allow, r) : nullptr;
        if (!c) {
          why = fmt::format(
              "Expected a value of type '{}' for argument '{}' but instead found type '{}'.",
              a.type->str(), a.name, value_type_str(*positional[j]));
          return std::nullopt;
        }
        vs.push_back(c);
      }
      bound[static_cast<size_t>(idx)] = insert(graph->create_list(elem_arg.type, vs), r)->output();
      break;
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

// torch.unique and torch.unique_consecutive are Python in torch (torch/functional.py): a
// boolean_dispatch on return_inverse and return_counts, which must be constants in script, picks
// the result: the values alone, or a tuple with the inverse and/or the counts. unique runs
// aten::_unique2, or aten::unique_dim given a dim; unique_consecutive its op.
Value* FunctionEmitter::call_unique(bool unique, std::vector<Arg> args, const SourceRange& r) {
  const std::vector<std::string> names =
      unique ? std::vector<std::string>{"input", "sorted", "return_inverse", "return_counts", "dim"}
             : std::vector<std::string>{"input", "return_inverse", "return_counts", "dim"};
  const char* fn = unique ? "unique" : "unique_consecutive";
  std::map<std::string, Arg*> by_name;
  size_t pos = 0;
  for (Arg& a : args) {
    const std::string key = a.name.empty() ? (pos < names.size() ? names[pos++] : "") : a.name;
    if (key.empty() || std::find(names.begin(), names.end(), key) == names.end())
      fail(a.range, fmt::format("{}() got an unexpected argument", fn));
    by_name[key] = &a;
  }
  if (!by_name.count("input")) fail(r, fmt::format("{}() missing required argument 'input'", fn));
  auto flag = [&](const std::string& key) {
    auto it = by_name.find(key);
    if (it == by_name.end()) return false;
    Value* v = arg_value(*it->second);
    const Node* n = v->node();
    if (n->kind() != sym::prim::Constant || !n->has_attr(sym::attr::value) ||
        !n->attr(sym::attr::value).is_bool())
      fail(it->second->range, fmt::format("{}(): {} must be a constant bool in script", fn, key));
    return n->attr(sym::attr::value).to_bool();
  };
  const bool inverse = flag("return_inverse"), counts = flag("return_counts");
  Arg* dim = by_name.count("dim") ? by_name["dim"] : nullptr;
  const bool has_dim =
      dim && dim->sv.kind != SV::kNone && !(arg_value(*dim)->type()->kind() == TypeKind::None);
  std::vector<Arg> call{*by_name["input"]};
  auto pass = [&](const std::string& key) {
    if (by_name.count(key)) {
      Arg a = *by_name[key];
      a.name = key;
      call.push_back(a);
    }
  };
  std::string op;
  if (unique) {
    op = has_dim ? "aten::unique_dim" : "aten::_unique2";
    if (has_dim) {
      Arg a = *dim;
      a.name = "dim";
      call.push_back(a);
    }
    pass("sorted");
  } else {
    op = "aten::unique_consecutive";
    pass("dim");
  }
  pass("return_inverse");
  pass("return_counts");
  Value* t = call_builtin_op(op, std::move(call), r);
  std::vector<Value*> outs =
      t->node()->inputs();  // the op's results, as call_builtin_op tuples them
  std::vector<Value*> picked{outs.at(0)};
  if (inverse) picked.push_back(outs.at(1));
  if (counts) picked.push_back(outs.at(2));
  if (picked.size() == 1) return picked[0];
  return insert(graph->create_tuple(picked), r)->output();
}

// torch.norm(input, p: str, dim, keepdim, dtype=) is Python in torch (torch/functional.py): "fro"
// over at most two dims is linalg.vector_norm with ord 2, any other string ("nuc", "fro" over
// more dims) linalg.matrix_norm over `dim` (all dims when None). nullptr when p is no string.
Value* FunctionEmitter::call_norm_str(std::vector<Arg>& args, const SourceRange& r) {
  const std::vector<std::string> names{"input", "p", "dim", "keepdim", "out", "dtype"};
  std::map<std::string, Arg*> by_name;
  size_t pos = 0;
  for (Arg& a : args) {
    const std::string key = a.name.empty() ? (pos < names.size() ? names[pos++] : "") : a.name;
    if (key.empty()) return nullptr;
    by_name[key] = &a;
  }
  if (!by_name.count("p") || !by_name.count("input")) return nullptr;
  Value* p = arg_value(*by_name["p"]);
  if (p->type()->kind() != TypeKind::Str) return nullptr;
  if (by_name.count("out"))
    fail(r, "torch.norm(): out= with a string p is not supported in script");
  const Node* pn = p->node();
  const bool fro = pn->kind() == sym::prim::Constant && pn->has_attr(sym::attr::value) &&
                   pn->attr(sym::attr::value).is_string() &&
                   pn->attr(sym::attr::value).to_string_ref() == "fro";
  Value* dim = by_name.count("dim") ? arg_value(*by_name["dim"]) : none(r);
  const TypePtr& dt = dim->type();
  if (dt->kind() == TypeKind::Int)
    dim = insert(graph->create_list(Type::int_(), {dim}), r)->output();
  const bool few_dims =
      dt->kind() == TypeKind::None || dt->kind() == TypeKind::Int ||
      (dim->node()->kind() == sym::prim::ListConstruct && dim->node()->inputs().size() <= 2);
  std::vector<Arg> call{*by_name["input"]};
  auto named = [&](const std::string& key, Value* v) { call.push_back(Arg{SV::of(v), v, r, key}); };
  if (fro && few_dims) {
    named("ord", constant(IValue(2.0), r));
    named("dim", dim);
  } else {
    named("ord", p);
    // torch takes every dim when dim is None, which matrix_norm accepts for a matrix only: its
    // default, the last two dims, is the same there
    if (dim->type()->kind() != TypeKind::None) named("dim", dim);
  }
  if (by_name.count("keepdim")) named("keepdim", arg_value(*by_name["keepdim"]));
  if (by_name.count("dtype")) named("dtype", arg_value(*by_name["dtype"]));
  return call_builtin_op(fro && few_dims ? "aten::linalg_vector_norm" : "aten::linalg_matrix_norm",
                         std::move(call), r);
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
                                      const SourceRange& r, Value* self, bool keep_call) {
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
  if (keep_call) n->set_attr(kInterfaceCall, IValue(true));
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
      // torch._C._nn.NAME: the ATen op NAME, as nn.functional spells it.
      if (p.rfind("torch._C._nn.", 0) == 0)
        return SV::of(call_builtin_op("aten::" + tail("torch._C._nn."), std::move(args), r));
      // torch.fft.NAME: the ATen op fft_NAME, which torch/fft/__init__.py binds to the name.
      if (p.rfind("torch.fft.", 0) == 0)
        return SV::of(call_builtin_op("aten::fft_" + tail("torch.fft."), std::move(args), r));
      // torch.ops.ampjit.NAME: one of ampjit's own ops (the FFT primitives the decompositions of
      // torch.fft call, Note [FFTs without a complex dtype] in kernels/fft_meta.h).
      if (p.rfind("torch.ops.ampjit.", 0) == 0)
        return SV::of(call_builtin_op("ampjit::" + tail("torch.ops.ampjit."), std::move(args), r));
      // torch.linalg.NAME: the ATen op linalg_NAME (torch.linalg.det is aten::linalg_det).
      if (p.rfind("torch.linalg.", 0) == 0)
        return SV::of(call_builtin_op("aten::linalg_" + tail("torch.linalg."), std::move(args), r));
      // torch.special.NAME: the ATen op special_NAME, or where ampjit has the function under its
      // plain name only (torch.special.expit is aten::special_expit, an alias of sigmoid), NAME.
      if (p.rfind("torch.special.", 0) == 0) {
        const std::string name = tail("torch.special.");
        const bool prefixed = !find_overloads("aten::special_" + name).empty();
        return SV::of(call_builtin_op(prefixed ? "aten::special_" + name : "aten::" + name,
                                      std::move(args), r));
      }
      if (p == "warnings.warn") return SV::of(call_warn(args, r));
      if (p.rfind("ops.", 0) == 0) return call_ops(p, std::move(args), r);
      if (p == "torch._assert") {  // torch._assert(condition, message): an assert statement
        if (args.size() != 2 || !args[0].name.empty() || !args[1].name.empty())
          fail(r, "torch._assert(condition, message) takes two positional arguments");
        emit_assert_value(to_cond(arg_value(args[0]), args[0].range), arg_value(args[1]), r);
        return SV::of(none(r));
      }
      // torch.jit.fork(fn, *args) runs fn(*args) where the fork is, and its "future" is the result,
      // which torch.jit.wait returns: the values torch's asynchronous task gives, without the
      // parallelism (ampjit's Python fork runs the task at wait instead; both orders give the
      // same results for the pure functions fork is meant for).
      if (p == "torch.jit.fork" || p == "torch.jit._fork") {
        if (args.empty() || !args[0].name.empty())
          fail(r, "torch.jit.fork(fn, *args) takes the function to run first");
        const SV fn = args[0].sv;
        args.erase(args.begin());
        return call_sv(fn, std::move(args), r);
      }
      if (p == "torch.jit.wait" || p == "torch.jit._wait") {
        if (args.size() != 1 || !args[0].name.empty())
          fail(r, "torch.jit.wait(future) takes one argument");
        return SV::of(arg_value(args[0]));
      }
      if (p == "torch.jit.is_scripting") return SV::of(constant(IValue(true), r));
      if (p == "torch.jit.is_tracing") return SV::of(constant(IValue(false), r));
      if (p == "torch.jit.annotate" || p == "typing.cast") {
        if (args.size() != 2 || args[0].sv.kind != SV::kType)
          fail(r, "annotate(T, value) takes a type and a value");
        SV v = args[1].sv;
        TypePtr t = args[0].sv.type;
        if (v.kind == SV::kNone) return SV::of(unchecked_cast(none(r), t, r));
        Value* x = as_value(v, r);
        // A list literal takes the annotated element type when its elements have it, as torch
        // emits the literal with the annotation as its hint: annotate(List[Optional[Tensor]], [a,
        // b]).
        if (x->node()->kind() == sym::prim::ListConstruct && t->kind() == TypeKind::List &&
            x->uses().empty() &&
            std::all_of(x->node()->inputs().begin(), x->node()->inputs().end(),
                        [&](const Value* e) { return e->type()->is_subtype_of(*t->elem()); })) {
          x->set_type(t);
          return SV::of(x);
        }
        if (!x->type()->is_subtype_of(*t))
          fail(r, fmt::format("annotate: {} is not a {}", type_str(x->type()), type_str(t)));
        return SV::of(x);
      }
      if (p.rfind("torch.", 0) == 0 && p.find('.', 6) == std::string::npos) {
        std::string name = tail("torch.");
        if (std::string_view target = op_alias_target(name); !target.empty())
          name = target;  // Note [Op aliases]
        if (name == "is_autocast_enabled" || name == "is_autocast_cpu_enabled")
          return SV::of(call_builtin_op("aten::" + name, std::move(args), r));
        if (Value* v = call_serialized_form(name, args, r)) return SV::of(v);
        if (name == "unique" || name == "unique_consecutive")
          return SV::of(call_unique(name == "unique", std::move(args), r));
        if (name == "norm")
          if (Value* v = call_norm_str(args, r)) return SV::of(v);
        drop_unused_factory_args("aten::" + name, args);
        // torch.einsum(eq, a, b, ...) and torch.meshgrid(a, b, ...): the tensors as one list, as
        // torch's Python signatures take them (torch.functional)
        const size_t first = name == "einsum" ? 1 : name == "meshgrid" ? 0 : args.size();
        if (first < args.size() && args[first].name.empty() &&
            is_tensor(arg_value(args[first])->type())) {
          std::vector<Value*> tensors;
          std::vector<Arg> packed(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(first));
          for (size_t k = first; k < args.size(); ++k) {
            if (!args[k].name.empty()) {
              packed.push_back(args[k]);
              continue;
            }
            Value* v = arg_value(args[k]);
            if (!is_tensor(v->type()))
              fail(args[k].range, fmt::format("torch.{}() takes tensors here", name));
            tensors.push_back(v);
          }
          Value* list = insert(graph->create_list(Type::tensor(), tensors), r)->output();
          packed.insert(packed.begin() + static_cast<std::ptrdiff_t>(first),
                        Arg{SV::of(list), list, r, ""});
          args = std::move(packed);
        }
        return SV::of(call_builtin_op("aten::" + name, std::move(args), r));
      }
      fail(r, fmt::format("{} is not supported in script", p));
    }
    case SV::kAutocast:
      return SV::of(call_autocast(callee.path, args, r));
    case SV::kBuiltin:
      if (callee.path == "getattr") {  // getattr(module, "name"): an attribute named by a constant
        if (args.size() != 2 || !args[0].name.empty() || !args[1].name.empty())
          fail(r, "getattr(obj, name) takes two positional arguments in script");
        const IValue* name = constant_value(arg_value(args[1]));
        if (!name || !name->is_string())
          fail(args[1].range, "getattr's attribute name must be a constant string in script");
        SV obj = args[0].sv;
        if (obj.kind == SV::kValue)
          if (auto cls = class_of(obj.value)) {
            obj.kind = SV::kModule;
            obj.module = cls;
          }
        if (obj.kind != SV::kModule)
          fail(args[0].range, "getattr() takes a module or an object in script");
        return module_attr(obj, name->to_string_ref(), r);
      }
      return SV::of(call_python_builtin(callee.path, args, r));
    case SV::kMethod: {
      if (callee.module) {
        auto fn = resolve_method(callee.module, callee.path, args, r);
        return SV::of(call_function(fn, std::move(args), r, callee.value, callee.interface));
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
      auto fn = resolve_method(callee.module, "forward", args, r);
      return SV::of(call_function(fn, std::move(args), r, callee.value, callee.interface));
    }
    case SV::kType: {
      if (callee.module && callee.module->is_class)
        return SV::of(construct_object(callee.module, std::move(args), r));
      if (callee.type->is_named_tuple()) {  // Out(a, b=...): the fields in order, converted
        const auto& fields = callee.type->field_names();
        const auto& types = callee.type->contained();
        std::vector<Value*> bound(fields.size(), nullptr);
        size_t pi = 0;
        for (Arg& a : args) {
          size_t idx = pi;
          if (a.name.empty()) {
            if (pi >= fields.size())
              fail(r, fmt::format("{}() takes {} arguments but {} were given",
                                  type_str(callee.type), fields.size(), args.size()));
            ++pi;
          } else {
            const auto it = std::find(fields.begin(), fields.end(), a.name);
            if (it == fields.end())
              fail(a.range, fmt::format("unexpected keyword argument '{}'", a.name));
            idx = static_cast<size_t>(it - fields.begin());
          }
          if (bound[idx]) fail(a.range, fmt::format("multiple values for field '{}'", fields[idx]));
          Argument p;
          p.name = fields[idx];
          p.type = types[idx];
          if (a.sv.kind == SV::kNone) a.value = none(a.range);
          Value* v = convert_to(arg_value(a), p, true, a.range);
          if (!v)
            fail(a.range, fmt::format("Expected a value of type '{}' for field '{}' but instead "
                                      "found type '{}'.",
                                      type_str(types[idx]), fields[idx], value_type_str(a)));
          bound[idx] = v;
        }
        for (size_t i = 0; i < bound.size(); ++i)
          if (!bound[i]) fail(r, fmt::format("missing value for field '{}'", fields[i]));
        Node* n = insert(graph->create_tuple(bound), r);
        n->output()->set_type(callee.type);
        return SV::of(n->output());
      }
      fail(r, fmt::format("cannot call type {} in script", type_str(callee.type)));
    }
    default:
      break;
  }
  if (callee.kind == SV::kValue)
    fail(r, fmt::format("'{}' object is not callable", type_str(callee.value->type())));
  fail(r, "this value is not callable in script");
}

std::shared_ptr<Function> FunctionEmitter::resolve_method(const std::shared_ptr<ModuleInfo>& m,
                                                          const std::string& name,
                                                          std::vector<Arg>& args,
                                                          const SourceRange& r) {
  auto ov = m->overloads.find(name);
  if (ov == m->overloads.end()) return session.compile_method(m, name, r);
  // Whether `fn` takes `args` without conversions (a method's schema leaves self out).
  const auto accepts = [&](const Function& fn) {
    const auto& schema = fn.schema();
    if (!schema) return false;
    std::vector<bool> bound(schema->args.size(), false);
    size_t pi = 0;
    for (Arg& a : args) {
      size_t idx;
      if (a.name.empty()) {
        if (pi >= schema->args.size()) return false;
        idx = pi++;
      } else {
        const int k = schema->arg_index(a.name);
        if (k < 0) return false;
        idx = static_cast<size_t>(k);
      }
      bound[idx] = true;
      const TypePtr& want = schema->args[idx].type;
      if (a.sv.kind == SV::kNone) {
        if (want->kind() != TypeKind::Optional && want->kind() != TypeKind::None) return false;
        continue;
      }
      if (!arg_value(a)->type()->is_subtype_of(*want)) return false;
    }
    for (size_t i = 0; i < bound.size(); ++i)
      if (!bound[i] && !schema->args[i].default_value) return false;
    return true;
  };
  std::vector<std::string> tried;
  for (const std::string& mangled : ov->second) {
    auto fn = session.compile_method(m, mangled, r);
    if (accepts(*fn)) return fn;
    tried.push_back(fn->schema() ? fn->schema()->str() : mangled);
  }
  std::vector<std::string> given;
  for (Arg& a : args) given.push_back(value_type_str(a));
  fail(r, fmt::format("no overload of {}.{} accepts ({}); the overloads are:\n  {}", m->class_name,
                      name, fmt::join(given, ", "), fmt::join(tried, "\n  ")));
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
    if (k == TypeKind::List || k == TypeKind::Str || k == TypeKind::Dict)
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
    const TypeKind have = v->type()->kind();
    if (name == "bool" &&
        (have == TypeKind::List || have == TypeKind::Dict || have == TypeKind::Str))
      return to_cond(v, r);  // bool(d): not empty
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
  if (name == "dict") {  // dict(), dict(d) (a copy), dict([(k, v), ...])
    const Symbol op = Symbol::intern("aten::dict");
    if (args.empty()) return emit_node_call(op, {}, Type::dict(Type::str_(), Type::tensor()), r);
    Value* v = one();
    const TypePtr& t = v->type();
    if (t->kind() == TypeKind::Dict) return emit_node_call(op, {v}, t, r);
    if (t->kind() == TypeKind::List && t->elem()->kind() == TypeKind::Tuple &&
        t->elem()->contained().size() == 2)
      return emit_node_call(op, {v},
                            Type::dict(t->elem()->contained()[0], t->elem()->contained()[1]), r);
    fail(r, fmt::format("dict() takes a dict or a list of (key, value) tuples in script, not {}",
                        type_str(t)));
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
      else if (s.kind == SV::kNamespace && s.path == "torch.Tensor")  // `from torch import Tensor`
        types.push_back(Type::tensor());
      else
        fail(args[1].range, "isinstance() needs a type or a tuple of types in script");
    };
    collect(args[1].sv);
    const TypePtr& t = v->type();
    if (t->kind() == TypeKind::Any || t->kind() == TypeKind::Union) {
      // decided at run time (prim::isinstance)
      std::string kinds;
      for (const TypePtr& want : types) {
        const std::string k = !want || want->kind() == TypeKind::List ? "list"
                              : want->kind() == TypeKind::Dict        ? "dict"
                              : want->kind() == TypeKind::Tuple       ? "tuple"
                              : want->kind() == TypeKind::Int         ? "int"
                              : want->kind() == TypeKind::Float       ? "float"
                              : want->kind() == TypeKind::Bool        ? "bool"
                              : want->kind() == TypeKind::Str         ? "str"
                              : want->kind() == TypeKind::Tensor      ? "Tensor"
                              : want->kind() == TypeKind::None        ? "NoneType"
                                                                      : "";
        if (k.empty())
          fail(args[1].range,
               fmt::format("isinstance() of an {} value against {} is not supported in script",
                           type_str(t), type_str(want)));
        kinds += (kinds.empty() ? "" : ",") + k;
      }
      Node* n = insert(graph->create(Symbol::intern("prim::isinstance"), {v}, 1), r);
      n->set_attr(sym::attr::value, IValue(kinds));
      n->output()->set_type(Type::bool_());
      return n->output();
    }
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
  if (std::string_view target = op_alias_target(name); !target.empty())  // Note [Op aliases]
    return call_builtin_op("aten::" + std::string(target), std::move(args), r, self);
  return call_builtin_op("aten::" + name, std::move(args), r, self);
}

Value* FunctionEmitter::call_list_method(Value* self, const std::string& name,
                                         std::vector<Arg>& args, const SourceRange& r) {
  const TypePtr& t = self->type();
  for (const Arg& a : args)
    if (!a.name.empty())
      fail(a.range, fmt::format("{}.{}() takes no keyword arguments in script", type_str(t), name));
  if (t->kind() == TypeKind::Dict) return call_dict_method(self, name, args, r);
  if (t->kind() != TypeKind::Str && t->kind() != TypeKind::List)
    fail(r, fmt::format("'{}' object has no method '{}' in script", type_str(t), name));
  if (t->kind() == TypeKind::Str) {
    if (name == "format") {
      std::vector<Value*> vs{self};
      for (Arg& a : args) vs.push_back(arg_value(a));
      return emit_node_call(kFormat, vs, Type::str_(), r);
    }
    // The str methods of torch's script (aten::startswith, aten::split, ...): each with its
    // arguments' types (trailing ones optional, given here by their defaults) and result type.
    struct StrMethod {
      std::vector<TypePtr> params;
      std::vector<IValue> defaults;  // for the trailing params not given
      TypePtr result;
    };
    const TypePtr S = Type::str_(), I = Type::int_(), B = Type::bool_();
    static const auto& methods = *new std::map<std::string, StrMethod>{
        {"startswith", {{S}, {}, B}},
        {"endswith", {{S}, {}, B}},
        {"lower", {{}, {}, S}},
        {"upper", {{}, {}, S}},
        {"strip", {{S}, {IValue(std::string(" \n\t\f\v"))}, S}},
        {"lstrip", {{S}, {IValue(std::string(" \n\t\f\v"))}, S}},
        {"rstrip", {{S}, {IValue(std::string(" \n\t\f\v"))}, S}},
        {"split", {{S, I}, {IValue(std::string()), IValue(int64_t{-1})}, Type::list(S)}},
        {"join", {{Type::list(S)}, {}, S}},
        {"replace", {{S, S}, {}, S}},
        {"find", {{S, I, I}, {IValue(int64_t{0}), IValue(int64_t{-1})}, I}},
        {"count", {{S}, {}, I}},
        {"isdigit", {{}, {}, B}},
        {"isalpha", {{}, {}, B}},
        {"isspace", {{}, {}, B}},
    };
    const auto it = methods.find(name);
    if (it == methods.end()) fail(r, fmt::format("str.{}() is not supported in script", name));
    const StrMethod& m = it->second;
    const size_t required = m.params.size() - m.defaults.size();
    if (args.size() < required || args.size() > m.params.size())
      fail(r, fmt::format("str.{}() takes {} to {} arguments in script, got {}", name, required,
                          m.params.size(), args.size()));
    std::vector<Value*> vs{self};
    for (size_t k = 0; k < m.params.size(); ++k) {
      if (k < args.size()) {
        Value* v = arg_value(args[k]);
        const bool none_sep = name == "split" && k == 0 && is_none(v->type());
        if (none_sep) v = constant(IValue(std::string()), r);  // split(None): on whitespace
        if (!v->type()->is_subtype_of(*m.params[k]))
          fail(args[k].range, fmt::format("str.{}() expected a value of type '{}' but found '{}'",
                                          name, type_str(m.params[k]), type_str(v->type())));
        vs.push_back(v);
      } else {
        vs.push_back(constant(m.defaults[k - required], r));
      }
    }
    return emit_node_call(Symbol::intern("aten::" + name), vs, m.result, r);
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

// The methods of Dict[K, V], with torch's op names and result types (builtins.cpp runs them).
Value* FunctionEmitter::call_dict_method(Value* self, const std::string& name,
                                         std::vector<Arg>& args, const SourceRange& r) {
  const TypePtr& t = self->type();
  const TypePtr& kt = t->key();
  const TypePtr& vt = t->value();
  auto arity = [&](size_t lo, size_t hi) {
    if (args.size() < lo || args.size() > hi)
      fail(r, lo == hi ? fmt::format("dict.{}() takes {} argument{} in script", name, lo,
                                     lo == 1 ? "" : "s")
                       : fmt::format("dict.{}() takes {} to {} arguments in script", name, lo, hi));
  };
  auto key = [&](size_t i) { return dict_key(self, arg_value(args[i]), args[i].range); };
  auto value = [&](size_t i) {
    Value* v = arg_value(args[i]);
    if (!v->type()->is_subtype_of(*vt))
      fail(args[i].range,
           fmt::format("Expected a value of type '{}' for argument 'default_value' but instead "
                       "found type '{}'.",
                       type_str(vt), type_str(v->type())));
    return v;
  };
  const Symbol op = Symbol::intern("aten::" + name);
  if (name == "keys" || name == "values") {
    arity(0, 0);
    return emit_node_call(op, {self}, Type::list(name == "keys" ? kt : vt), r);
  }
  if (name == "items") {
    arity(0, 0);
    return emit_node_call(op, {self}, Type::list(Type::tuple({kt, vt})), r);
  }
  if (name == "get") {
    arity(1, 2);
    if (args.size() == 1) return emit_node_call(op, {self, key(0)}, Type::optional(vt), r);
    return emit_node_call(op, {self, key(0), value(1)}, vt, r);
  }
  if (name == "pop") {
    arity(1, 2);
    if (args.size() == 1) return emit_node_call(op, {self, key(0)}, vt, r);
    return emit_node_call(op, {self, key(0), value(1)}, vt, r);
  }
  if (name == "setdefault") {
    arity(2, 2);
    return emit_node_call(op, {self, key(0), value(1)}, vt, r);
  }
  if (name == "update") {
    arity(1, 1);
    Value* o = arg_value(args[0]);
    if (!o->type()->is_subtype_of(*t))
      fail(args[0].range,
           fmt::format("dict.update() needs a {}, not {}", type_str(t), type_str(o->type())));
    emit_node_call(op, {self, o}, nullptr, r);
    return none(r);
  }
  if (name == "clear") {
    arity(0, 0);
    emit_node_call(op, {self}, nullptr, r);
    return none(r);
  }
  if (name == "copy") {
    arity(0, 0);
    return emit_node_call(op, {self}, t, r);
  }
  if (name == "popitem") {
    arity(0, 0);
    return emit_node_call(op, {self}, Type::tuple({kt, vt}), r);
  }
  fail(r, fmt::format("'{}' object has no method '{}' in script", type_str(t), name));
}

}  // namespace ampjit::script::detail
