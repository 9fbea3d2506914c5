// Node queries (see queries.h).
#include "runtime/ir/queries.h"

#include "runtime/op_table.h"

namespace ampjit {

const IValue* constant_value(const Value* v) {
  const Node* n = v->node();
  if (n->kind() != sym::prim::Constant) return nullptr;
  static const IValue none;
  return n->has_attr(sym::attr::value) ? &n->attr(sym::attr::value) : &none;
}

std::optional<bool> constant_bool(const Value* v) {
  const IValue* c = constant_value(v);
  if (!c || !(c->is_bool() || c->is_int())) return std::nullopt;
  return c->to_int() != 0;
}

bool is_pure_prim(Symbol k) {
  return k == sym::prim::Constant || k == sym::prim::TupleConstruct ||
         k == sym::prim::TupleUnpack || k == sym::prim::TupleIndex ||
         k == sym::prim::ListConstruct || k == sym::prim::ListUnpack || k == sym::prim::GetAttr ||
         k == sym::prim::CreateObject || k == sym::prim::Uninitialized ||
         k == sym::prim::unchecked_cast;
}

namespace {
bool any_in_blocks(const Node& n, bool (*pred)(const Node&)) {
  for (const Block* b : n.blocks())
    for (const Node* inner : *b)
      if (pred(*inner)) return true;
  return false;
}
}  // namespace

bool may_write_inputs(const Node& n) {
  if (const OpEntry* op = n.op()) {
    for (const Argument& a : op->schema.args)
      if (a.is_write) return true;
    // The kernel updates running_mean and running_var in training mode, which the schema does not
    // annotate (nor does torch's; its alias analysis special-cases batch_norm the same way).
    if (op->id == OpId::batch_norm) {
      return constant_bool(n.input(static_cast<size_t>(op->schema.arg_index("training")))) != false;
    }
    return false;
  }
  const Symbol k = n.kind();
  if (k == sym::prim::If || k == sym::prim::Loop) return any_in_blocks(n, may_write_inputs);
  return !is_pure_prim(k);
}

bool has_side_effects(const Node& n) {
  if (const OpEntry* op = n.op()) return op->has(kNondeterministic) || may_write_inputs(n);
  const Symbol k = n.kind();
  if (k == sym::prim::If || k == sym::prim::Loop) return any_in_blocks(n, has_side_effects);
  return !is_pure_prim(k);
}

}  // namespace ampjit
