// literal_value (see literals.h).
#include "script/literals.h"

namespace ampjit::script {

std::optional<IValue> literal_value(const Expr& e, const LiteralLookup& lookup, bool allow_lists) {
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
      if (u.op != UnaryOpKind::Neg && u.op != UnaryOpKind::Pos) return std::nullopt;
      std::optional<IValue> v = literal_value(*u.operand, lookup, allow_lists);
      if (!v || !(v->is_int() || v->is_double())) return std::nullopt;
      if (u.op == UnaryOpKind::Pos) return v;
      return v->is_int() ? IValue(-v->to_int()) : IValue(-v->to_double());
    }
    case ExprKind::Tuple:
    case ExprKind::List: {
      if (e.kind == ExprKind::List && !allow_lists) return std::nullopt;
      const auto& elts = e.kind == ExprKind::Tuple ? e.as<TupleExpr>().elts : e.as<ListExpr>().elts;
      std::vector<IValue> items;
      items.reserve(elts.size());
      for (const auto& x : elts) {
        std::optional<IValue> v = literal_value(*x, lookup, allow_lists);
        if (!v) return std::nullopt;
        items.push_back(std::move(*v));
      }
      return e.kind == ExprKind::Tuple ? IValue::tuple(std::move(items))
                                       : IValue::list(std::move(items));
    }
    case ExprKind::Name:
    case ExprKind::Attribute:
      return lookup ? lookup(e) : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace ampjit::script
