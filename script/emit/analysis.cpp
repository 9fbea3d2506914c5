// What the emitter knows about a body before emitting it: the names it assigns, how it exits
// (Note [Exit flags]), and how types meet at joins.
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
    case StmtKind::While:
      // A break or continue inside belongs to the loop; only a return leaves through it.
      e.may_return = may_return(s.kind == StmtKind::For ? s.as<For>().body : s.as<While>().body);
      break;
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
// Whether a return statement is reachable inside `s` (one walk: Note [Exit flags]'s analysis stays
// linear in the size of the body however deep its blocks nest).
bool may_return(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::Return:
      return true;
    case StmtKind::If:
      return may_return(s.as<If>().body) || may_return(s.as<If>().orelse);
    case StmtKind::For:
      return may_return(s.as<For>().body);
    case StmtKind::While:
      return may_return(s.as<While>().body);
    case StmtKind::With:
      return may_return(s.as<With>().body);
    default:
      return false;
  }
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

}  // namespace ampjit::script::detail
