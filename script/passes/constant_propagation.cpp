// Folding constants and the control flow they decide (see constant_propagation.h).
#include "script/passes/constant_propagation.h"

#include <optional>
#include <unordered_map>

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

// Note [Writes to constants]
// Folding an op over a tensor constant is sound only when nothing can change that constant's data
// between runs. A write reaches a constant through aliases: a value may alias a constant when it is
// one, when it is a graph input (a traced graph's constant can be the caller's own tensor, and a
// returned constant can come back as an argument), when an op's result is in an alias set (`->
// Tensor(a)`: views, reshape, to) and one of the op's arguments may alias a constant, or when a
// prim node (lists, tuples, control flow, calls) is given one that may. A node that writes such a
// value -- an (a!) argument, batch_norm's running statistics in training, any input of a call or an
// unknown kind -- or a graph that returns one (the caller may write it) means the constants may
// change. An op's fresh result never aliases a constant, so the in-place ReLU after every
// convolution of a resnet leaves its frozen weights foldable (the graph-wide "does anything write"
// test this replaced did not).
class ConstantWrites {
 public:
  static bool reach(const Graph& g) {
    ConstantWrites w;
    for (const Value* in : g.block()->inputs())
      if (type_may_hold_tensor(*in->type())) w.may_alias_[in] = kInput;
    if (w.block(*g.block())) return true;
    for (const Value* v : g.block()->return_node()->inputs())
      if (w.aliases(v) & kConstant) return true;
    return false;
  }

 private:
  // What a value may alias: a constant, a graph input, or both (bits).
  static constexpr uint8_t kConstant = 1, kInput = 2;
  uint8_t aliases(const Value* v) const {
    auto it = may_alias_.find(v);
    return it == may_alias_.end() ? 0 : it->second;
  }
  void add(const Value* v, uint8_t bits) {
    if (bits) may_alias_[v] |= bits;
  }

  // Visits b's nodes in order; true when a write reaches a value that may alias a constant.
  bool block(const Block& b) {
    for (const Node* n : b) {
      if (n->kind() == sym::prim::Constant) {
        if (type_may_hold_tensor(*n->output()->type())) add(n->output(), kConstant);
        continue;
      }
      uint8_t in_bits = 0;
      for (const Value* in : n->inputs()) in_bits |= aliases(in);
      if (n->kind() == sym::prim::If || n->kind() == sym::prim::Loop) {
        if (control_flow(*n, in_bits)) return true;
        continue;
      }
      if (const OpEntry* op = n->op()) {
        const std::vector<Argument>& args = op->schema.args;
        const bool bn_training = op->id == OpId::batch_norm && may_write_inputs(*n);
        for (size_t i = 0; i < n->inputs().size(); ++i) {
          const bool written = i >= args.size() || args[i].is_write || bn_training;
          if (written && aliases(n->input(i))) return true;
        }
        const std::vector<Argument>& rets = op->schema.returns;
        for (size_t i = 0; i < n->outputs().size(); ++i)
          if (i >= rets.size() || rets[i].in_alias_set) add(n->output(i), in_bits);
        continue;
      }
      if (in_bits && may_write_inputs(*n)) return true;
      for (const Value* out : n->outputs()) add(out, in_bits);
    }
    return false;
  }

  // prim::If and prim::Loop: a loop's carried values may alias what its initial ones or an
  // iteration's results may (its body is visited twice, to reach that fixed point); an output
  // may alias what a branch or the body can return.
  bool control_flow(const Node& n, uint8_t in_bits) {
    const bool loop = n.kind() == sym::prim::Loop;
    for (int round = 0; round < (loop ? 2 : 1); ++round) {
      for (const Block* sub : n.blocks()) {
        if (loop) {
          const auto& params = sub->inputs();
          const auto& rets = sub->return_node()->inputs();
          for (size_t i = 1; i < params.size(); ++i)
            add(params[i], aliases(n.input(i + 1)) | (round > 0 ? aliases(rets[i]) : 0));
        }
        if (block(*sub)) return true;
      }
    }
    for (size_t i = 0; i < n.outputs().size(); ++i) {
      uint8_t bits = loop ? aliases(n.input(i + 2)) : in_bits;
      for (const Block* sub : n.blocks()) {
        const auto& rets = sub->return_node()->inputs();
        const size_t k = loop ? i + 1 : i;
        if (k < rets.size()) bits |= aliases(rets[k]);
      }
      add(n.output(i), bits);
    }
    return false;
  }

  std::unordered_map<const Value*, uint8_t> may_alias_;
};

class ConstantPropagation {
 public:
  ConstantPropagation(Graph& g, bool fold_tensors)
      : g_(g), tensors_may_change_(ConstantWrites::reach(g)), fold_tensors_(fold_tensors) {}

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
    // A result computed from frozen constants only is frozen too (Note [Frozen storage] in
    // runtime/tensor.h): the casts of a frozen weight that the autocast pass folds.
    bool from_frozen = tensor_input;
    for (const Value* in : n->inputs()) {
      const IValue* c = constant_value(in);
      if (c->is_tensor()) from_frozen &= c->to_tensor().storage()->frozen();
    }
    if (from_frozen)
      for (const IValue& v : stack)
        if (v.is_tensor()) v.to_tensor().storage()->mark_frozen();
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

bool constants_may_change(const Graph& g) {
  return ConstantWrites::reach(g);
}

bool constant_propagation(Graph& g, bool fold_tensors) {
  return ConstantPropagation(g, fold_tensors).run();
}

}  // namespace ampjit
