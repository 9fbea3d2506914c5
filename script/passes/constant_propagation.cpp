// Folding constants and the control flow they decide (see constant_propagation.h).
#include "script/passes/constant_propagation.h"

#include <optional>

#include "runtime/dispatcher.h"
#include "runtime/ir/queries.h"

namespace ampjit {

namespace {

bool holds_tensor(const IValue& v) {
  if (v.is_tensor() || v.is_object()) return true;
  if (v.is_list() || v.is_tuple()) {
    for (const IValue& e : v.is_list() ? v.list_elems() : v.tuple_elems())
      if (holds_tensor(e)) return true;
  }
  return false;
}

bool type_may_hold_tensor(const Type& t) {
  switch (t.kind()) {
    case TypeKind::Int:
    case TypeKind::Float:
    case TypeKind::Bool:
    case TypeKind::Str:
    case TypeKind::None:
    case TypeKind::Number:
    case TypeKind::ScalarType:
    case TypeKind::Device:
      return false;
    case TypeKind::List:
    case TypeKind::Tuple:
    case TypeKind::Optional:
    case TypeKind::Union:
      for (const TypePtr& e : t.contained())
        if (type_may_hold_tensor(*e)) return true;
      return false;
    default:
      return true;
  }
}

// Whether a node of `b` may write a tensor's data: one that may write its inputs and is given
// something that may hold a tensor. Setting an attribute, entering or leaving a `with` (autocast
// objects), raising and printing change no tensor's data.
bool any_writer(const Block& b) {
  static const Symbol kRaise = Symbol::intern("prim::RaiseException"),
                      kPrint = Symbol::intern("prim::Print"), kWarn = Symbol::intern("aten::warn");
  auto given_tensors = [](const Node& n) {
    const Symbol k = n.kind();
    if (!n.op() && (k == sym::prim::SetAttr || k == sym::prim::Enter || k == sym::prim::Exit ||
                    k == kRaise || k == kPrint || k == kWarn))
      return false;
    for (const Value* v : n.inputs())
      if (type_may_hold_tensor(*v->type())) return true;
    return false;
  };
  for (const Node* n : b) {
    if (n->kind() != sym::prim::If && n->kind() != sym::prim::Loop && may_write_inputs(*n) &&
        given_tensors(*n))
      return true;
    for (const Block* sub : n->blocks())
      if (any_writer(*sub)) return true;
  }
  return false;
}

class ConstantPropagation {
 public:
  ConstantPropagation(Graph& g, bool fold_tensors)
      : g_(g), tensors_may_change_(any_writer(*g.block())), fold_tensors_(fold_tensors) {}

  bool run() { return propagate_block(*g_.block()); }

 private:
  // Nodes are visited in order, so a folded result is a constant for the nodes after it, and the
  // nodes of an inlined branch are visited next.
  bool propagate_block(Block& b) {
    static const Symbol kIs = Symbol::intern("aten::__is__");
    static const Symbol kIsNot = Symbol::intern("aten::__isnot__");
    bool changed = false;
    for (Node* n = b.param_node()->next(); n != b.return_node();) {
      Node* next = n->next();
      const Symbol k = n->kind();
      if (k == sym::prim::If) {
        if (std::optional<bool> cond = constant_bool(n->input(0))) {
          next = inline_branch(n, *cond);
          changed = true;
        } else {
          for (Block* sub : n->blocks()) changed |= propagate_block(*sub);
        }
      } else if (k == sym::prim::Loop) {
        if (never_runs(n)) {
          for (size_t i = 0; i < n->outputs().size(); ++i)
            n->output(i)->replace_all_uses_with(n->input(2 + i));
          n->destroy();
          changed = true;
        } else {
          changed |= propagate_block(*n->blocks()[0]);
        }
      } else if (k == sym::prim::TupleIndex) {
        changed |= forward_tuple_index(n);
      } else if (k == sym::prim::TupleUnpack) {
        changed |= forward_tuple_unpack(n);
      } else if ((k == kIs || k == kIsNot) && n->inputs().size() == 2 && n->outputs().size() == 1) {
        changed |= fold_none_test(n, k == kIs);
      } else if (n->op()) {
        changed |= fold_op(n);
      }
      n = next;
    }
    return changed;
  }

  // Moves the taken branch's nodes before `n`, rewires its outputs and removes it; returns the
  // node to visit next (the first moved node).
  Node* inline_branch(Node* n, bool cond) {
    Block* taken = n->blocks()[cond ? 0 : 1];
    Node* next = n->next();
    Node* first = nullptr;
    for (Node* inner : taken->nodes()) {
      inner->move_before(n);
      if (!first) first = inner;
    }
    for (size_t i = 0; i < n->outputs().size(); ++i)
      n->output(i)->replace_all_uses_with(taken->outputs()[i]);
    n->destroy();
    return first ? first : next;
  }

  static bool never_runs(const Node* loop) {
    const IValue* trips = constant_value(loop->input(0));
    if (trips && trips->is_int() && trips->to_int() <= 0) return true;
    std::optional<bool> cond = constant_bool(loop->input(1));
    return cond && !*cond;
  }

  static bool forward_tuple_index(Node* n) {
    const Node* t = n->input(0)->node();
    const IValue* index = constant_value(n->input(1));
    if (t->kind() != sym::prim::TupleConstruct || !index || !index->is_int()) return false;
    const int64_t size = static_cast<int64_t>(t->inputs().size());
    int64_t i = index->to_int();
    if (i < 0) i += size;
    if (i < 0 || i >= size) return false;  // raises at run time
    n->output()->replace_all_uses_with(t->input(static_cast<size_t>(i)));
    n->destroy();
    return true;
  }

  static bool forward_tuple_unpack(Node* n) {
    const Node* t = n->input(0)->node();
    if (t->kind() != sym::prim::TupleConstruct || t->inputs().size() != n->outputs().size())
      return false;
    for (size_t i = 0; i < n->outputs().size(); ++i)
      n->output(i)->replace_all_uses_with(t->input(i));
    n->destroy();
    return true;
  }

  bool fold_none_test(Node* n, bool is) {
    auto always_none = [](const Value* v) { return v->type()->kind() == TypeKind::None; };
    auto never_none = [](const Value* v) { return !Type::none()->is_subtype_of(*v->type()); };
    const Value* a = n->input(0);
    const Value* b = n->input(1);
    bool same;
    if (always_none(a) && always_none(b))
      same = true;
    else if ((always_none(a) && never_none(b)) || (never_none(a) && always_none(b)))
      same = false;
    else
      return false;
    replace_by_constants(n, {IValue(same == is)});
    return true;
  }

  bool fold_op(Node* n) {
    if (has_side_effects(*n)) return false;
    bool tensor_results = false;
    for (const Value* out : n->outputs()) tensor_results |= type_may_hold_tensor(*out->type());
    if (tensor_results && (!fold_tensors_ || tensors_may_change_)) return false;
    Stack stack;
    bool tensor_input = false;
    for (const Value* in : n->inputs()) {
      const IValue* c = constant_value(in);
      if (!c || (tensors_may_change_ && holds_tensor(*c))) return false;
      tensor_input |= c->is_tensor();
      stack.push_back(*c);
    }
    if (tensor_results && !tensor_input) return false;  // a factory: a fresh tensor each call
    try {
      // The kernel's own semantics: neither autocast nor a tracer active on this thread applies.
      LayerGuard no_autocast(DispatchLayer::Autocast, LayerGuard::Exclude);
      LayerGuard no_tracer(DispatchLayer::Tracer, LayerGuard::Exclude);
      dispatch(*n->op(), stack);
    } catch (const std::exception&) {
      return false;  // raised again at run time, with the node's source location
    }
    if (stack.size() != n->outputs().size()) return false;
    for (const IValue& v : stack)
      if (holds_tensor(v) && !(fold_tensors_ && v.is_tensor())) return false;
    replace_by_constants(n, stack);
    return true;
  }

  // New constants take the place (and the source range) of `n`; the outputs keep their types.
  void replace_by_constants(Node* n, const Stack& values) {
    for (size_t i = 0; i < values.size(); ++i) {
      Node* c = g_.create_constant(values[i]);
      c->insert_before(n);
      c->set_source_range(n->source_range());
      c->output()->set_type(n->output(i)->type());
      n->output(i)->replace_all_uses_with(c->output());
    }
    n->destroy();
  }

  Graph& g_;
  const bool tensors_may_change_;
  const bool fold_tensors_;
};

}  // namespace

bool constant_propagation(Graph& g, bool fold_tensors) {
  return ConstantPropagation(g, fold_tensors).run();
}

}  // namespace ampjit
