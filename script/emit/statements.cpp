// Statements and loops: assignments, if, for/while (prim::Loop), return/break/continue, assert,
// raise and with (Note [Emitting scoped Python into SSA], Note [Exit flags]).
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
      emit_delete(s.as<Delete>());
      return;
  }
  fail(s.range, "unsupported statement");
}

// del d[k], del l[i] (aten::Delete) and del x (x is unbound from here on, as torch).
void FunctionEmitter::emit_delete(const Delete& s) {
  for (const ExprPtr& t : s.targets) {
    if (t->kind == ExprKind::Name) {
      const std::string& id = t->as<Name>().id;
      if (!lookup_var(id) && !lookup_sugared(id))
        fail(t->range, fmt::format("undefined value {}", id));
      for (Frame* f = env; f; f = f->parent) {
        f->vars.erase(id);
        f->sugared.erase(id);
      }
      continue;
    }
    if (t->kind != ExprKind::Subscript)
      fail(t->range, "del only deletes names and subscripts (del d[k], del l[i]) in script");
    const auto& sub = t->as<Subscript>();
    Value* base = emit_expr(*sub.value);
    const TypeKind k = base->type()->kind();
    if ((k != TypeKind::Dict && k != TypeKind::List) || sub.indices.size() != 1 ||
        sub.indices[0]->kind == ExprKind::Slice)
      fail(t->range, fmt::format("'{}' object does not support item deletion in script",
                                 type_str(base->type())));
    Value* idx = emit_expr(*sub.indices[0]);
    if (k == TypeKind::Dict)
      idx = dict_key(base, idx, sub.indices[0]->range);
    else if (idx->type()->kind() != TypeKind::Int)
      fail(sub.indices[0]->range, "list indices must be integers");
    emit_node_call(Symbol::intern("aten::Delete"), {base, idx}, nullptr, t->range);
  }
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
      if (base->type()->kind() == TypeKind::Dict) {
        if (sub.indices.size() != 1 || sub.indices[0]->kind == ExprKind::Slice)
          fail(target.range, "a dict cannot be sliced");
        const TypePtr& t = base->type();
        Value* k = dict_key(base, emit_expr(*sub.indices[0], t->key()), sub.indices[0]->range);
        if (!v->type()->is_subtype_of(*t->value()))
          fail(r, fmt::format("Expected a value of type '{}' for argument 'value' but instead "
                              "found type '{}'.",
                              type_str(t->value()), type_str(v->type())));
        emit_node_call(kSetItem, {base, k, v}, nullptr, r);
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
      if (base.kind == SV::kValue) {
        if (auto cls = class_of(base.value)) {
          base.kind = SV::kModule;
          base.module = cls;
        }
      }
      if (base.kind != SV::kModule)
        fail(target.range, "only module attributes (self.x = ...) can be assigned in script");
      const ModuleInfo::Attr* attr = base.module->find(at.attr);
      if (!attr && declares_attribute(base)) {
        // a script class's __init__ declares its attributes (Note [Script classes])
        Value* v = as_value(value, r);
        ModuleInfo::Attr added;
        added.name = at.attr;
        added.type = v->type()->unrefined();
        base.module->attrs.push_back(std::move(added));
        attr = &base.module->attrs.back();
      }
      if (!attr && base.module->is_class)
        fail(target.range, fmt::format("Tried to set nonexistent attribute: {}. Did you forget to "
                                       "initialize it in __init__()?",
                                       at.attr));
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
  if (a.target->kind == ExprKind::Attribute && a.value) {  // self.x: T = v in a class's __init__
    SV base = emit_sv(*a.target->as<Attribute>().value);
    const std::string& name = a.target->as<Attribute>().attr;
    if (declares_attribute(base) && !base.module->find(name)) {
      TypePtr t = parse_type(*a.annotation);
      Value* v = emit_expr(*a.value, t);
      if (!v->type()->is_subtype_of(*t))
        fail(a.value->range,
             fmt::format("Variable 'self.{}' is annotated with type {} but is being "
                         "assigned to a value of type {}",
                         name, type_str(t), type_str(v->type())));
      ModuleInfo::Attr added;
      added.name = name;
      added.type = t;
      base.module->attrs.push_back(std::move(added));
      emit_assign_target(*a.target, SV::of(v), a.range);
      return;
    }
  }
  if (a.target->kind != ExprKind::Name)
    fail(a.target->range, "annotated assignment needs a plain name in script");
  const std::string& name = a.target->as<Name>().id;
  TypePtr t = parse_type(*a.annotation);
  if (!a.value) {
    env->declared[name] = t;
    return;
  }
  Value* v = emit_expr(*a.value, t);
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

// The message is computed only when the assertion fails, as in Python; after the statement the
// condition's refinements hold (`assert x is not None` makes x a Tensor), as in torch.
void FunctionEmitter::emit_assert(const Assert& s) {
  Value* c = emit_cond(*s.test);
  if (!s.msg) {
    emit_assert_value(c, nullptr, s.range);
  } else if (s.msg->kind == ExprKind::Str) {
    emit_assert_value(c, emit_expr(*s.msg), s.range);
  } else {
    emit_if_blocks(
        c, s.range, [] {},
        [&] {
          Value* text = emit_node_call(
              kFormat,
              {constant(IValue(std::string("AssertionError: {}")), s.range), emit_expr(*s.msg)},
              Type::str_(), s.range);
          insert(graph->create(sym::prim::RaiseException, {text}, 0), s.range);
          env->terminated = true;
        });
  }
  Refinements tr, fr;
  refinements(*s.test, tr, fr);
  for (auto& [name, t] : tr)
    if (Value* cur = lookup_var(name)) env->vars[name] = unchecked_cast(cur, t, s.range);
}

// `assert cond, msg` (and torch._assert) once the condition is a bool: raises AssertionError with
// the message (formatted at run time when it is not a constant string).
void FunctionEmitter::emit_assert_value(Value* c, Value* message, const SourceRange& r) {
  std::string msg = "AssertionError: ";
  Value* msg_value = nullptr;
  if (message) {
    if (auto cm = constant_value(message); cm && cm->is_string())
      msg += cm->to_string_ref();
    else
      msg_value = message;
  }
  emit_if_blocks(
      c, r, [] {},
      [&] {
        Value* text =
            msg_value
                ? emit_node_call(
                      kFormat, {constant(IValue(std::string("AssertionError: {}")), r), msg_value},
                      Type::str_(), r)
                : constant(IValue(msg), r);
        insert(graph->create(sym::prim::RaiseException, {text}, 0), r);
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

// ---- Loops ---------------------------------------------------------------------------------

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

// GCC 12 at -O2 reports "'<anonymous>' may be used uninitialized" for temporaries in the loop
// bodies below (every one is initialized; the report moves with inlining decisions). Clang has no
// such warning (and would warn about the unknown name).
#if !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
void FunctionEmitter::emit_for_in(const Expr& target, const Expr& iter, const SourceRange& r,
                                  std::set<std::string> assigned, const Exits& ex,
                                  const std::function<void()>& body_fn) {
  const std::function<Value*()> cond = [&] { return loop_continue_cond(ex, r); };
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
  // Sequences of modules and tuples unroll at compile time: `items` are their elements.
  std::vector<SV> items;
  bool unroll = false;
  const auto tuple_of = [&](SV a, SV b) {
    SV t;
    t.kind = SV::kTupleSV;
    t.children = {std::move(a), std::move(b)};
    return t;
  };
  const auto unrolled = [&](const SV& seq) {  // the elements of a sequence that unrolls
    if (seq.kind == SV::kModuleList || seq.kind == SV::kTupleSV) {
      items = seq.children;
    } else if (seq.kind == SV::kModule && seq.module->is_sequence) {
      for (const std::string& child : seq.module->sequence)
        items.push_back(module_attr(seq, child, r));
    } else if (seq.kind == SV::kModule && seq.module->is_dict) {  // iterating a dict: its keys
      for (const std::string& key : seq.module->sequence)
        items.push_back(SV::of(constant(IValue(key), r)));
    } else if (seq.kind == SV::kValue && seq.value->type()->kind() == TypeKind::Tuple) {
      const auto& ts = seq.value->type()->contained();
      for (size_t k = 0; k < ts.size(); ++k) {
        Node* n =
            insert(graph->create(sym::prim::TupleIndex,
                                 {seq.value, constant(IValue(static_cast<int64_t>(k)), r)}, 1),
                   r);
        n->output()->set_type(ts[k]);
        items.push_back(SV::of(n->output()));
      }
    } else {
      return false;
    }
    return true;
  };
  // nn.ModuleDict's views: `for name, m in self.d.items()`, keys(), values().
  if (iter.kind == ExprKind::Call && iter.as<Call>().func->kind == ExprKind::Attribute &&
      iter.as<Call>().args.empty() && iter.as<Call>().keywords.empty()) {
    const auto& a = iter.as<Call>().func->as<Attribute>();
    if ((a.attr == "items" || a.attr == "keys" || a.attr == "values") &&
        (a.value->kind == ExprKind::Name || a.value->kind == ExprKind::Attribute)) {
      SV d = emit_sv(*a.value);
      if (d.kind == SV::kModule && d.module->is_dict) {
        for (const std::string& key : d.module->sequence) {
          SV k = SV::of(constant(IValue(key), r));
          if (a.attr == "keys")
            items.push_back(k);
          else if (a.attr == "values")
            items.push_back(module_attr(d, key, r));
          else
            items.push_back(tuple_of(k, module_attr(d, key, r)));
        }
        unroll = true;
      }
    }
  }
  std::optional<SV> enumerated;  // the argument of enumerate(), emitted once
  if (!unroll && is_builtin_call("enumerate")) {
    const auto& c = iter.as<Call>();
    if (c.args.size() != 1 || target.kind != ExprKind::Tuple ||
        target.as<TupleExpr>().elts.size() != 2)
      fail(iter.range, "enumerate() in script: `for i, x in enumerate(xs)` with one argument");
    enumerated = emit_sv(*c.args[0]);
    if (unrolled(*enumerated)) {  // enumerate(self.layers): constant indices beside the modules
      for (size_t k = 0; k < items.size(); ++k)
        items[k] = tuple_of(SV::of(constant(IValue(static_cast<int64_t>(k)), r)), items[k]);
      unroll = true;
    }
  }
  if (!unroll && is_builtin_call("zip")) {  // zip of module lists and tuples unrolls
    const auto& c = iter.as<Call>();
    std::vector<std::vector<SV>> columns;
    for (const ExprPtr& arg : c.args) {
      items.clear();
      if (!unrolled(emit_sv(*arg))) {
        fail(arg->range, "zip() in script: over module lists and tuples (which unroll) only");
      }
      columns.push_back(std::move(items));
    }
    if (columns.empty() || !c.keywords.empty())
      fail(iter.range, "zip() takes positional arguments");
    size_t n = columns[0].size();
    for (const auto& col : columns) n = std::min(n, col.size());
    items.clear();
    for (size_t k = 0; k < n; ++k) {
      SV t;
      t.kind = SV::kTupleSV;
      for (const auto& col : columns) t.children.push_back(col[k]);
      items.push_back(std::move(t));
    }
    unroll = true;
  }
  if (!unroll && enumerated) {
    const auto& c = iter.as<Call>();
    Value* list = as_value(*enumerated, c.args[0]->range);
    if (list->type()->kind() != TypeKind::List && !is_tensor(list->type()))
      fail(c.args[0]->range, "enumerate() over a list or tensor only in script");
    const auto& elts = target.as<TupleExpr>().elts;
    Value* n = is_tensor(list->type())
                   ? call_builtin_op("aten::len", {Arg{SV::of(list), list, r, ""}}, r)
                   : emit_node_call(kLen, {list}, Type::int_(), r);
    const std::function<void(Value*)> body = [&](Value* i) {
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
    };
    emit_loop(r, n, constant(IValue(true), r), assigned, ex, body, cond);
    return;
  }
  SV seq;
  if (!unroll) {
    seq = emit_sv(iter);
    unroll = unrolled(seq);
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
  if (t->kind() == TypeKind::Dict) {  // over its keys, as torch: aten::keys, then the list
    xs = emit_node_call(Symbol::intern("aten::keys"), {xs}, Type::list(t->key()), r);
    n = emit_node_call(kLen, {xs}, Type::int_(), r);
    const TypePtr kt = t->key();
    element = [=, this](Value* i) { return emit_node_call(kGetItem, {xs, i}, kt, r); };
  } else if (t->kind() == TypeKind::List || t->kind() == TypeKind::Str) {
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
  const std::function<void(Value*)> body = [&](Value* i) {
    emit_assign_target(target, SV::of(element(i)), r);
    body_fn();
  };
  emit_loop(r, n, constant(IValue(true), r), assigned, ex, body, cond);
}
#if !defined(__clang__)
#pragma GCC diagnostic pop
#endif

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

}  // namespace ampjit::script::detail
