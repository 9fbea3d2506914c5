// Expressions, operators and subscripts: names and attributes to sugared values, binary and
// comparison operators with their schema lookups, tensor and list indexing.
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

namespace ampjit::script::detail {

// ---- Expressions ---------------------------------------------------------------------------

const std::set<std::string>& python_builtins() {
  static const std::set<std::string> s = {
      "len",   "range",      "int",  "float", "bool",      "str", "min",   "max",  "abs",
      "print", "isinstance", "list", "tuple", "enumerate", "sum", "round", "dict", "getattr"};
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
      if (base.kind == SV::kModule && base.module->is_dict) {
        if (s.indices.size() != 1) fail(e.range, "module dicts take one key");
        IValue key = eval_constant(*s.indices[0]);
        if (!key.is_string())
          fail(s.indices[0]->range, "a module dict key must be a constant string in script");
        const auto& keys = base.module->sequence;
        if (std::find(keys.begin(), keys.end(), key.to_string_ref()) == keys.end())
          fail(s.indices[0]->range,
               fmt::format("module dict has no key '{}'", key.to_string_ref()));
        return module_attr(base, key.to_string_ref(), e.range);
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
      return emit_dict(e.as<DictExpr>(), hint);
    case ExprKind::DictComp:
      return emit_dict_comp(e.as<DictComp>());
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
            v.is_list() || v.is_tuple() || (v.is_tensor() && name.rfind("CONSTANTS.", 0) == 0)))
        fail(r, fmt::format("the global '{}' has a value script cannot use as a constant", name));
      return SV::of(constant(v, r));
    }
    case Resolved::kNamedTuple:
      s.kind = SV::kType;
      s.type = named_tuple_type(res, r);
      return s;
    case Resolved::kClass:
      s.kind = SV::kType;
      s.module = script_class(res, r);
      s.type = Type::named(TypeKind::Object, s.module->class_name);
      return s;
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
      // Note [Serialized code]: a qualified class or function of an archive, or CONSTANTS.cN.
      if ((path.rfind("__torch__.", 0) == 0 || path.rfind("CONSTANTS.", 0) == 0) && resolver) {
        const Resolved res = resolver->resolve(path, r);
        if (res.kind != Resolved::kUnknown && res.kind != Resolved::kNamespace)
          return resolve_free(path, r);
      }
      if (base.path == "torch") {
        auto it = dtype_names().find(a.attr);
        if (it != dtype_names().end())
          return SV::of(constant(IValue(torch_dtype_code(it->second)), r));
        // torch.memory_format values are c10::MemoryFormat's ints in TorchScript.
        static const std::map<std::string, int64_t> formats = {{"contiguous_format", 0},
                                                               {"preserve_format", 1},
                                                               {"channels_last", 2},
                                                               {"channels_last_3d", 3}};
        if (auto f = formats.find(a.attr); f != formats.end())
          return SV::of(constant(IValue(f->second), r));
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
      if (auto cls = class_of(v)) {  // an object of a script class: its attributes and methods
        SV obj;
        obj.kind = SV::kModule;
        obj.value = v;
        obj.module = cls;
        return module_attr(obj, a.attr, r);
      }
      if (v->type()->is_named_tuple()) {  // out.logits: the field's element
        const auto& fields = v->type()->field_names();
        const auto it = std::find(fields.begin(), fields.end(), a.attr);
        if (it != fields.end()) {
          const auto k_index = static_cast<int64_t>(it - fields.begin());
          Node* n =
              insert(graph->create(sym::prim::TupleIndex, {v, constant(IValue(k_index), r)}, 1), r);
          n->output()->set_type(v->type()->contained()[static_cast<size_t>(k_index)]);
          return SV::of(n->output());
        }
      }
      if (k == TypeKind::Tensor) {
        auto op0 = [&](const char* name) { return SV::of(call_builtin_op(name, {}, r, v)); };
        if (a.attr == "shape") return op0("aten::size");
        if (a.attr == "dtype") return op0("prim::dtype");
        if (a.attr == "requires_grad")
          return SV::of(
              emit_node_call(Symbol::intern("prim::requires_grad"), {v}, Type::bool_(), r));
        if (a.attr == "device") return op0("prim::device");
        if (a.attr == "ndim") return op0("aten::dim");
        if (a.attr == "mT") return op0("aten::mT");  // as torch's script spells them
        if (a.attr == "mH") return op0("aten::mH");
        if (a.attr == "T" || a.attr == "data" || a.attr == "grad")
          fail(a.attr_range.valid() ? a.attr_range : r,
               fmt::format("Tensor.{} is not supported in script", a.attr));
      }
      if (k == TypeKind::Tensor || k == TypeKind::List || k == TypeKind::Str ||
          k == TypeKind::Dict) {
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
      s.interface = attr->is_interface;
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
    m.interface = mod.interface;
    return m;
  }
  if (info.is_class)  // torch's message for a class
    fail(r, fmt::format("'{}' object has no attribute or method '{}'. Did you forget to initialize "
                        "an attribute in __init__()?",
                        info.class_name, name));
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
  // isinstance(x, T) with x an Any or Optional value and T one plain type: x is a T where it holds
  if (cond.kind == ExprKind::Call) {
    const auto& call = cond.as<Call>();
    if (call.func->kind == ExprKind::Name && call.func->as<Name>().id == "isinstance" &&
        !lookup_var("isinstance") && call.args.size() == 2 && call.keywords.empty() &&
        call.args[0]->kind == ExprKind::Name &&
        (call.args[1]->kind == ExprKind::Name || call.args[1]->kind == ExprKind::Attribute)) {
      const std::string& id = call.args[0]->as<Name>().id;
      Value* v = lookup_var(id);
      if (!v || (v->type()->kind() != TypeKind::Any && v->type()->kind() != TypeKind::Optional &&
                 v->type()->kind() != TypeKind::Union))
        return;
      const std::string tn =
          call.args[1]->kind == ExprKind::Name ? call.args[1]->as<Name>().id : std::string();
      TypePtr target = tn == "int"     ? Type::int_()
                       : tn == "float" ? Type::float_()
                       : tn == "bool"  ? Type::bool_()
                       : tn == "str"   ? Type::str_()
                                       : nullptr;
      const TypePtr& vt = v->type();
      const TypeKind bare = tn == "list"    ? TypeKind::List  // isinstance(u, list) on a Union:
                            : tn == "dict"  ? TypeKind::Dict  // its members of that kind
                            : tn == "tuple" ? TypeKind::Tuple
                                            : TypeKind::Any;
      if (vt->kind() == TypeKind::Union && bare != TypeKind::Any) {
        std::vector<TypePtr> yes, no;
        for (const TypePtr& m : vt->contained()) (m->kind() == bare ? yes : no).push_back(m);
        if (!yes.empty()) t[id] = Type::union_(yes);
        if (!no.empty() && !yes.empty()) f[id] = Type::union_(no);
        return;
      }
      if (!target) {
        try {
          target = parse_type(*call.args[1]);  // Tensor, a NamedTuple, ...
        } catch (const CompileError&) {
          return;
        }
      }
      if (!target || target->kind() == TypeKind::None) return;
      if (vt->kind() == TypeKind::Union) {
        // A Union narrows both ways: to its members that are the target where the test holds
        // (the target itself when it is more precise), to the others where it does not.
        std::vector<TypePtr> yes, no;
        for (const TypePtr& m : vt->contained()) {
          if (m->is_subtype_of(*target))
            yes.push_back(m);
          else if (target->is_subtype_of(*m))
            yes.push_back(target);
          else
            no.push_back(m);
        }
        if (!yes.empty()) t[id] = Type::union_(yes);
        if (!no.empty() && no.size() < vt->contained().size()) f[id] = Type::union_(no);
        return;
      }
      t[id] = target;
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
  if (!v) return;
  auto& not_none = c.ops[0] == CmpOpKind::IsNot ? t : f;
  if (v->type()->kind() == TypeKind::Optional) {
    not_none[id] = v->type()->elem();
  } else if (v->type()->kind() == TypeKind::Union) {  // Union[A, B, None]
    std::vector<TypePtr> rest;
    for (const TypePtr& m : v->type()->contained())
      if (m->kind() != TypeKind::None) rest.push_back(m);
    if (rest.size() < v->type()->contained().size()) not_none[id] = Type::union_(rest);
  }
}

// ---- Operators -----------------------------------------------------------------------------

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
        return call("aten::__and__", l, r);
      case BinOpKind::BitOr:
        return call("aten::__or__", l, r);
      case BinOpKind::BitXor:
        return call("aten::__xor__", l, r);
      case BinOpKind::LShift:
        return call("aten::__lshift__", l, r);
      case BinOpKind::RShift:
        return call("aten::__rshift__", l, r);
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
      if (b->type()->kind() != TypeKind::Optional && b->type()->kind() != TypeKind::Any &&
          !Type::none()->is_subtype_of(*b->type()))  // a Union with None may be None
        return false;
      return std::nullopt;
    };
    std::optional<bool> s = static_none(l, r);
    if (!s) s = static_none(r, l);
    if (s) return constant(IValue(is ? *s : !*s), range);
    return emit_node_call(is ? kIs : kIsNot, {l, r}, Type::bool_(), range);
  }
  if (op == CmpOpKind::In || op == CmpOpKind::NotIn) {
    if (rk == TypeKind::Dict) l = dict_key(r, l, range);
    if (rk != TypeKind::List && rk != TypeKind::Str && rk != TypeKind::Dict)
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

// A comparison of two constant numbers or strings is a constant, so that `if self.kind == 1:` on
// a module constant compiles one branch only, as torch's constant propagation makes it.
Value* FunctionEmitter::fold_cmp(CmpOpKind op, Value* l, Value* r, const SourceRange& range) {
  const auto a = constant_value(l), b = constant_value(r);
  if (!a || !b) return nullptr;
  const auto number = [](const IValue& v) { return v.is_int() || v.is_double() || v.is_bool(); };
  const auto as_double = [](const IValue& v) {
    return v.is_double() ? v.to_double()
           : v.is_int()  ? static_cast<double>(v.to_int())
                         : static_cast<double>(v.to_bool());
  };
  int order;  // -1, 0, 1
  if (number(*a) && number(*b)) {
    const double x = as_double(*a), y = as_double(*b);
    if (std::isnan(x) || std::isnan(y)) return nullptr;
    order = x < y ? -1 : x > y ? 1 : 0;
  } else if (a->is_string() && b->is_string()) {
    const int c = a->to_string_ref().compare(b->to_string_ref());
    order = c < 0 ? -1 : c > 0 ? 1 : 0;
  } else {
    return nullptr;
  }
  bool result;
  switch (op) {
    case CmpOpKind::Eq:
      result = order == 0;
      break;
    case CmpOpKind::NotEq:
      result = order != 0;
      break;
    case CmpOpKind::Lt:
      result = order < 0;
      break;
    case CmpOpKind::LtE:
      result = order <= 0;
      break;
    case CmpOpKind::Gt:
      result = order > 0;
      break;
    case CmpOpKind::GtE:
      result = order >= 0;
      break;
    default:
      return nullptr;
  }
  return constant(IValue(result), range);
}

Value* FunctionEmitter::emit_compare(const Compare& c) {
  // a < b < c is (a < b) and (b < c), b evaluated once.
  Value* left = emit_expr(*c.left);
  Value* result = nullptr;
  for (size_t i = 0; i < c.ops.size(); ++i) {
    Value* right = emit_expr(*c.comparators[i]);
    Value* v = fold_cmp(c.ops[i], left, right, c.range);
    if (!v) v = emit_cmp(c.ops[i], left, right, c.range);
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
  return to_cond(emit_expr(e), e.range);
}

// Python's truth value of `v` (`if v:`), as a bool value.
Value* FunctionEmitter::to_cond(Value* v, const SourceRange& r) {
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
    case TypeKind::Str:
    case TypeKind::Dict: {
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
    // A constant left side decides statically, as torch's static if: the right side is compiled
    // only when it is evaluated.
    if (const IValue* k = constant_value(result); k && k->is_bool()) {
      if (k->to_bool() != b.is_and) return result;  // False and ..., True or ...
      result = emit_cond(*b.values[i]);
      continue;
    }
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
    // A constant stays one, so `if not torch.jit.is_scripting():` compiles one side (torch's
    // static if).
    if (const IValue* k = constant_value(c); k && k->is_bool())
      return constant(IValue(!k->to_bool()), r);
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
        return call_builtin_op("aten::bitwise_not", {Arg{SV::of(v), v, r, ""}}, r);
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

void FunctionEmitter::emit_comprehension(const Expr& target, const Expr& iter,
                                         const std::vector<ExprPtr>& conds, const SourceRange& r,
                                         const std::function<void()>& elt) {
  std::function<void(size_t)> body = [&](size_t k) {
    if (k < conds.size()) {
      Value* cond = emit_cond(*conds[k]);
      emit_if_blocks(
          cond, conds[k]->range, [&] { body(k + 1); }, [] {});
      return;
    }
    elt();
  };
  // The comprehension's variables live in their own scope (Python 3).
  Frame scope;
  scope.parent = env;
  scope.block = env->block;
  env = &scope;
  std::set<std::string> none_assigned;
  emit_for_in(target, iter, r, none_assigned, Exits{}, [&] { body(0); });
  env = scope.parent;
}

Value* FunctionEmitter::emit_list_comp(const ListComp& c) {
  Node* list = insert(graph->create_list(Type::tensor(), {}), c.range);
  bool typed = false;
  emit_comprehension(*c.target, *c.iter, c.conds, c.range, [&] {
    Value* x = emit_expr(*c.elt);
    if (!typed) {
      list->output()->set_type(Type::list(x->type()->unrefined()));
      typed = true;
    } else if (!x->type()->is_subtype_of(*list->output()->type()->elem())) {
      fail(c.elt->range, "list comprehension elements must have one type");
    }
    emit_node_call(kAppend, {list->output(), x}, list->output()->type(), c.range);
  });
  return list->output();
}

// ---- Dicts (Note [Script dicts] in runtime/ivalue.h) ---------------------------------------

// {k: v, ...}: the keys' and values' types must agree (or match an annotation); {} is
// Dict[str, Tensor] unless annotated, as in torch.
Value* FunctionEmitter::emit_dict(const DictExpr& d, const TypePtr& hint) {
  TypePtr want = hint;
  if (want && want->kind() == TypeKind::Optional) want = want->elem();
  if (want && want->kind() != TypeKind::Dict) want = nullptr;
  std::vector<Value*> kvs;
  TypePtr kt = want ? want->key() : nullptr, vt = want ? want->value() : nullptr;
  for (size_t i = 0; i < d.keys.size(); ++i) {
    Value* k = emit_expr(*d.keys[i], kt);
    Value* v = emit_expr(*d.values[i], vt);
    if (!want && i == 0) {
      kt = k->type()->unrefined();
      vt = v->type()->unrefined();
      if (!is_dict_key_type(*kt))
        fail(d.keys[i]->range,
             fmt::format("Dict keys must be str, int, float, bool, Device or Tensor, not {}",
                         type_str(kt)));
    }
    if (!k->type()->is_subtype_of(*kt))
      fail(d.keys[i]->range,
           fmt::format("Dict keys must contain only a single type, expected: {} but found {} "
                       "instead",
                       type_str(kt), type_str(k->type())));
    if (!v->type()->is_subtype_of(*vt))
      fail(d.values[i]->range,
           fmt::format("Dict values must contain only a single type, expected: {} but found {} "
                       "instead",
                       type_str(vt), type_str(v->type())));
    kvs.push_back(k);
    kvs.push_back(v);
  }
  TypePtr t = want             ? want
              : d.keys.empty() ? Type::dict(Type::str_(), Type::tensor())
                               : Type::dict(kt, vt);
  Node* n = insert(graph->create(kDictConstruct, kvs, 1), d.range);
  n->output()->set_type(t);
  return n->output();
}

// {k: v for target in iter if cond}: a DictConstruct filled by a loop (torch's lowering).
Value* FunctionEmitter::emit_dict_comp(const DictComp& c) {
  Node* dict = insert(graph->create(kDictConstruct, {}, 1), c.range);
  dict->output()->set_type(Type::dict(Type::str_(), Type::tensor()));
  bool typed = false;
  emit_comprehension(*c.target, *c.iter, c.conds, c.range, [&] {
    Value* k = emit_expr(*c.key);
    Value* v = emit_expr(*c.value);
    if (!typed) {
      if (!is_dict_key_type(*k->type()))
        fail(c.key->range,
             fmt::format("Dict keys must be str, int, float, bool, Device or Tensor, not {}",
                         type_str(k->type())));
      dict->output()->set_type(Type::dict(k->type()->unrefined(), v->type()->unrefined()));
      typed = true;
    }
    emit_node_call(kSetItem, {dict->output(), dict_key(dict->output(), k, c.key->range), v},
                   nullptr, c.range);
  });
  return dict->output();
}

Value* FunctionEmitter::dict_key(Value* d, Value* key, const SourceRange& r) {
  const TypePtr& kt = d->type()->key();
  if (!key->type()->is_subtype_of(*kt))
    fail(r, fmt::format("Expected a value of type '{}' for argument 'key' but instead found type "
                        "'{}'.",
                        type_str(kt), type_str(key->type())));
  return key;
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
  if (t->kind() == TypeKind::Dict) {
    if (ie.kind == ExprKind::Slice) fail(ie.range, "a dict cannot be sliced");
    Value* k = dict_key(base, emit_expr(ie, t->key()), ie.range);
    return emit_node_call(kGetItem, {base, k}, t->value(), r);
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
  // After `...`, dims count from the end (the rank need not be known), as torch's script does: an
  // entry's dim is minus the number of dim-taking entries from it to the last.
  const auto is_ellipsis = [](const Expr* e) {
    return e->kind == ExprKind::Name && e->as<Name>().id == "Ellipsis" &&
           e->range.end - e->range.start == 3;
  };
  bool after_ellipsis = false;
  for (size_t k = 0; k < idx.size(); ++k) {
    const Expr* e = idx[k];
    if (is_ellipsis(e)) {
      if (after_ellipsis) fail(e->range, "an index can only have a single ellipsis ('...')");
      after_ellipsis = true;
      int64_t rest = 0;
      for (size_t j = k + 1; j < idx.size(); ++j) {
        if (idx[j]->kind == ExprKind::None)
          fail(idx[j]->range, "None after '...' in a tensor index is not supported in script");
        ++rest;
      }
      dim = -rest;
      continue;
    }
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
      if (after_ellipsis) ++dim;  // counting from the end, the next entry's dim is one nearer
      continue;
    }
    if (is_tensor(v->type()) && dim == 0 && k == 0) {  // x[i], x[i, j]: advanced indexing
      std::vector<Value*> tensors{v};
      for (size_t j = 1; j < idx.size(); ++j) {
        Value* w = emit_expr(*idx[j]);
        if (!is_tensor(w->type()))
          fail(idx[j]->range,
               "mixing tensor indices with ints, slices or None is not supported in script yet");
        tensors.push_back(w);
      }
      Value* list =
          insert(graph->create_list(Type::optional(Type::tensor()), tensors), r)->output();
      return call_builtin_op("aten::index", {Arg{SV::of(list), list, r, ""}}, r, cur);
    }
    fail(
        e->range,
        fmt::format("tensor indices of type {} are not supported in script (ints, slices, None and "
                    "leading tensors are)",
                    type_str(v->type())));
  }
  return cur;
}

}  // namespace ampjit::script::detail
