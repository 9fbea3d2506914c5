// Merging repeated pure computations (see common_subexpression_elimination.h).
//
// Note [What CSE may merge]
// Two nodes compute the same result when they run the same deterministic, effect-free op on the
// same inputs and nothing changes those inputs, or the first result, in between, and nothing
// changes how ops compute (the autocast state). The pass checks this conservatively:
//  - Mutation, by alias sets: values of mutable types (tensors, lists, objects) are grouped
//    with every value they may alias: graph inputs with each other (a caller may pass one tensor
//    twice), tensor constants with each other, the results of an op with its arguments unless the
//    op returns fresh values (Note [Results that alias arguments]), the inputs and outputs of
//    every other node (tuples, lists, attributes, calls), and If/Loop outputs with the block
//    values they come from. A set is mutated when a node may write one of its values
//    (may_write_inputs). A node touching a mutated set is never merged, wherever the write is.
//  - Autocast state, by epochs: a node that may change it (non-op nodes that are not pure prims:
//    prim::Enter/Exit, calls, unknown kinds) starts a new epoch, anywhere in the graph, and only
//    nodes of the same epoch merge. Regions are balanced within a block, so a node in a loop body
//    may still reuse one from before the loop when no such node lies between them.
//  - Dominance, by scopes: the table of available nodes gains a block's nodes while the block is
//    walked and loses them when it is left, so a branch never reuses the other branch's nodes and
//    code after an If never reuses nodes from inside it.
#include "script/passes/common_subexpression_elimination.h"

#include <cstring>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "runtime/ir/queries.h"

namespace ampjit {

namespace {

// Whether a value of type `t` can be changed after it is made (or hold something that can).
bool is_mutable_type(const Type& t) {
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
    case TypeKind::Tuple:
    case TypeKind::Optional:
    case TypeKind::Union:
      for (const TypePtr& e : t.contained())
        if (is_mutable_type(*e)) return true;
      return false;
    default:  // Tensor, List, Dict, Object, Function, Any
      return true;
  }
}
bool is_mutable(const Value* v) {
  return is_mutable_type(*v->type());
}

bool holds_tensor(const IValue& v) {
  if (v.is_tensor() || v.is_object()) return true;
  if (v.is_list() || v.is_tuple()) {
    for (const IValue& e : v.is_list() ? v.list_elems() : v.tuple_elems())
      if (holds_tensor(e)) return true;
  }
  return false;
}

// Note [Results that alias arguments]
// The parsed schema keeps only the write marks of alias annotations, so the op table's schema
// text is read once more for them: a result annotated `Tensor(a)` may be (a view of) an argument.
// Views and composites (kView, kComposite) and conversions (kMixedDevice: to(), type_as(), which
// return self when nothing changes) count as aliasing whatever their annotation says.
bool returns_alias_annotation(std::string_view schema) {
  const size_t arrow = schema.rfind("->");
  if (arrow == std::string_view::npos) return false;
  for (size_t i = arrow; i + 2 < schema.size(); ++i) {
    if (schema[i] != '(' || schema[i + 1] < 'a' || schema[i + 1] > 'z') continue;
    size_t j = i + 1;
    while (j < schema.size() && schema[j] >= 'a' && schema[j] <= 'z') ++j;
    if (j < schema.size() && (schema[j] == ')' || schema[j] == '!')) return true;
  }
  return false;
}

bool results_may_alias_arguments(const OpEntry& op) {
  static const std::vector<bool> annotated = [] {
    std::vector<bool> t;
#define AMPJIT_OP(ID, FLAGS, SCHEMA) t.push_back(returns_alias_annotation(SCHEMA));
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
#define AMPJIT_DECOMPOSITION(FLAGS, SCHEMA) t.push_back(returns_alias_annotation(SCHEMA));
#define AMPJIT_VARIANT(FLAGS, SCHEMA) t.push_back(returns_alias_annotation(SCHEMA));
#include "runtime/ops/decompositions.def"
#undef AMPJIT_DECOMPOSITION
#undef AMPJIT_VARIANT
    return t;
  }();
  return op.has(kView) || op.has(kComposite) || op.has(kMixedDevice) ||
         annotated.at(static_cast<size_t>(op.id));
}

// Equality for constants and attributes: like IValue::equals, but 0.0 and -0.0 differ.
bool same_value(const IValue& a, const IValue& b) {
  if (a.tag() != b.tag()) return false;
  if (a.is_double()) {
    const double x = a.to_double(), y = b.to_double();
    return std::memcmp(&x, &y, sizeof x) == 0 || (x != x && y != y);
  }
  if (a.is_list() || a.is_tuple()) {
    const auto& ea = a.is_list() ? a.list_elems() : a.tuple_elems();
    const auto& eb = a.is_list() ? b.list_elems() : b.tuple_elems();
    if (ea.size() != eb.size()) return false;
    for (size_t i = 0; i < ea.size(); ++i)
      if (!same_value(ea[i], eb[i])) return false;
    return true;
  }
  return a.equals(b);
}

size_t combine(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
}

size_t hash_value(const IValue& v) {
  size_t h = static_cast<size_t>(v.tag());
  switch (v.tag()) {
    case IValue::Tag::Double: {
      const double d = v.to_double();
      if (d != d) return combine(h, 1);
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof bits);
      return combine(h, bits);
    }
    case IValue::Tag::Int:
    case IValue::Tag::Bool:
      return combine(h, static_cast<size_t>(v.to_int()));
    case IValue::Tag::ScalarType:
      return combine(h, static_cast<size_t>(v.to_scalar_type()));
    case IValue::Tag::String:
      return combine(h, std::hash<std::string>()(v.to_string_ref()));
    case IValue::Tag::Device:
      return combine(h, std::hash<std::string>()(v.to_device().str()));
    case IValue::Tag::List:
    case IValue::Tag::Tuple:
      for (const IValue& e : v.is_list() ? v.list_elems() : v.tuple_elems())
        h = combine(h, hash_value(e));
      return h;
    default:
      return h;  // None; identity-compared heap values
  }
}

using Fields = std::vector<std::pair<Symbol, IValue>>;
bool same_fields(const Fields& a, const Fields& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].first != b[i].first || !same_value(a[i].second, b[i].second)) return false;
  return true;
}

// A node as a hash key: what it computes, and (for all but constants) the epoch it runs in.
struct Key {
  Node* node;
  uint64_t epoch;
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    const Node* n = k.node;
    size_t h = combine(k.epoch, n->kind().id());
    h = combine(h, std::hash<const void*>()(n->op()));
    for (const Value* in : n->inputs()) h = combine(h, std::hash<const void*>()(in));
    for (const auto& [name, v] : n->attrs()) h = combine(combine(h, name.id()), hash_value(v));
    return h;
  }
};
// Nodes inlined from different calls stay apart: each keeps the call its diagnostics name.
bool same_calls(const std::vector<InlinedCall>& a, const std::vector<InlinedCall>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].callee != b[i].callee || a[i].call_site.source != b[i].call_site.source ||
        a[i].call_site.start != b[i].call_site.start || a[i].call_site.end != b[i].call_site.end ||
        a[i].call_site.file != b[i].call_site.file || a[i].call_site.line != b[i].call_site.line ||
        a[i].call_site.col != b[i].call_site.col)
      return false;
  return true;
}

struct KeyEq {
  bool operator()(const Key& ka, const Key& kb) const {
    const Node* a = ka.node;
    const Node* b = kb.node;
    if (ka.epoch != kb.epoch || a->kind() != b->kind() || a->op() != b->op() ||
        a->inputs() != b->inputs() || a->outputs().size() != b->outputs().size() ||
        !same_fields(a->attrs(), b->attrs()))
      return false;
    for (size_t i = 0; i < a->outputs().size(); ++i)
      if (!a->output(i)->type()->equals(*b->output(i)->type())) return false;
    return a->kind() == sym::prim::Constant || (same_fields(a->meta(), b->meta()) &&
                                                same_calls(a->inlined_calls(), b->inlined_calls()));
  }
};
using Table = std::unordered_set<Key, KeyHash, KeyEq>;

// Union-find over values of mutable types (Note [What CSE may merge]).
class AliasSets {
 public:
  explicit AliasSets(const Graph& g) {
    unite_all(g.inputs());
    add_block(*g.block());
    mark_writes(*g.block());
  }

  // Whether a node may see different data than an equal node elsewhere.
  bool touches_mutated(const Node& n) {
    for (const Value* v : n.inputs())
      if (is_mutable(v) && mutated_.count(find(v))) return true;
    for (const Value* v : n.outputs())
      if (is_mutable(v) && mutated_.count(find(v))) return true;
    return false;
  }

 private:
  const Value* find(const Value* v) {
    for (;;) {  // path halving; iterative, as chains of views can be long
      auto it = parent_.find(v);
      if (it == parent_.end()) return v;
      auto up = parent_.find(it->second);
      if (up != parent_.end()) it->second = up->second;
      v = it->second;
    }
  }
  void unite(const Value* a, const Value* b) {
    if (!is_mutable(a) || !is_mutable(b)) return;
    const Value* ra = find(a);
    const Value* rb = find(b);
    if (ra != rb) parent_[ra] = rb;
  }
  template <typename Values>
  void unite_all(const Values& vs) {
    const Value* first = nullptr;
    for (const Value* v : vs) {
      if (!is_mutable(v)) continue;
      if (!first) first = v;
      unite(first, v);
    }
  }

  void add_block(const Block& b) {
    for (const Node* n : b) {
      const Symbol k = n->kind();
      if (k == sym::prim::Constant) {
        if (!is_mutable(n->output())) continue;
        if (!constants_) constants_ = n->output();
        unite(constants_, n->output());
      } else if (k == sym::prim::If) {
        for (size_t i = 0; i < n->outputs().size(); ++i)
          for (const Block* sub : n->blocks()) unite(n->output(i), sub->outputs()[i]);
      } else if (k == sym::prim::Loop) {
        const Block* body = n->blocks()[0];
        for (size_t i = 0; i < n->outputs().size(); ++i) {
          unite(n->output(i), n->input(2 + i));
          unite(n->output(i), body->inputs()[1 + i]);
          unite(n->output(i), body->outputs()[1 + i]);
        }
      } else if (!n->op() || results_may_alias_arguments(*n->op())) {
        std::vector<const Value*> all(n->inputs().begin(), n->inputs().end());
        all.insert(all.end(), n->outputs().begin(), n->outputs().end());
        for (const Block* sub : n->blocks()) {
          all.insert(all.end(), sub->inputs().begin(), sub->inputs().end());
          all.insert(all.end(), sub->outputs().begin(), sub->outputs().end());
        }
        unite_all(all);
      }
      for (const Block* sub : n->blocks()) add_block(*sub);
    }
  }

  void mark_writes(const Block& b) {
    for (const Node* n : b) {
      for (const Block* sub : n->blocks()) mark_writes(*sub);
      if (n->kind() == sym::prim::If || n->kind() == sym::prim::Loop || !may_write_inputs(*n))
        continue;
      bool marked = false;
      if (const OpEntry* op = n->op()) {
        for (size_t i = 0; i < op->schema.args.size(); ++i) {
          if (!op->schema.args[i].is_write) continue;
          mutated_.insert(find(n->input(i)));
          marked = true;
        }
      }
      if (marked) continue;
      for (const Value* v : n->inputs())  // unannotated writes (batch_norm), calls, unknown kinds
        if (is_mutable(v)) mutated_.insert(find(v));
    }
  }

  std::unordered_map<const Value*, const Value*> parent_;
  std::unordered_set<const Value*> mutated_;
  const Value* constants_ = nullptr;
};

// prim kinds that compute their outputs from their inputs alone.
bool is_mergeable_prim(Symbol k) {
  return k == sym::prim::TupleConstruct || k == sym::prim::TupleUnpack ||
         k == sym::prim::TupleIndex || k == sym::prim::ListConstruct ||
         k == sym::prim::ListUnpack || k == sym::prim::GetAttr || k == sym::prim::unchecked_cast;
}

// A node that may change how later ops compute (Note [What CSE may merge]).
bool starts_epoch(const Node& n) {
  return !n.op() && n.kind() != sym::prim::If && n.kind() != sym::prim::Loop && may_write_inputs(n);
}

class CommonSubexpressionElimination {
 public:
  explicit CommonSubexpressionElimination(Graph& g) : g_(g), aliases_(g) {}

  bool run() {
    pool_constants();
    Table available;
    merge_block(*g_.block(), available);
    return changed_;
  }

 private:
  void collect_constants(const Block& b, std::vector<Node*>& out) {
    for (Node* n : b) {
      if (n->kind() == sym::prim::Constant) out.push_back(n);
      for (const Block* sub : n->blocks()) collect_constants(*sub, out);
    }
  }

  // Constants have no inputs, so one placed at the top of the graph dominates every use. Those
  // with duplicates move there, in their original order; the duplicates go.
  void pool_constants() {
    std::vector<Node*> constants;
    collect_constants(*g_.block(), constants);
    Table first;
    std::unordered_map<const Node*, Node*> keep_of;  // duplicate -> the constant that stays
    std::unordered_set<const Node*> kept;
    for (Node* c : constants) {
      if (c->has_attr(sym::attr::value) && holds_tensor(c->attr(sym::attr::value))) continue;
      if (aliases_.touches_mutated(*c)) continue;
      auto [it, inserted] = first.insert(Key{c, 0});
      if (inserted) continue;
      keep_of[c] = it->node;
      kept.insert(it->node);
    }
    Node* hoist_after = g_.block()->param_node();
    for (Node* c : constants) {
      if (!kept.count(c)) continue;
      if (c != hoist_after->next()) c->move_after(hoist_after);
      hoist_after = c;
    }
    for (Node* c : constants) {
      auto it = keep_of.find(c);
      if (it == keep_of.end()) continue;
      c->output()->replace_all_uses_with(it->second->output());
      c->destroy();
      changed_ = true;
    }
  }

  bool mergeable(const Node& n) {
    if (!n.blocks().empty()) return false;
    if (n.op() ? has_side_effects(n) : !is_mergeable_prim(n.kind())) return false;
    return !aliases_.touches_mutated(n);
  }

  void merge_block(Block& b, Table& available) {
    std::vector<Key> added;
    for (Node* n : b.nodes()) {
      if (starts_epoch(*n)) ++epoch_;
      for (Block* sub : n->blocks()) merge_block(*sub, available);
      if (!mergeable(*n)) continue;
      auto [it, inserted] = available.insert(Key{n, epoch_});
      if (inserted) {
        added.push_back(*it);
        continue;
      }
      Node* keep = it->node;
      for (size_t i = 0; i < n->outputs().size(); ++i)
        n->output(i)->replace_all_uses_with(keep->output(i));
      n->destroy();
      changed_ = true;
    }
    for (const Key& k : added) available.erase(k);
  }

  Graph& g_;
  AliasSets aliases_;
  uint64_t epoch_ = 0;
  bool changed_ = false;
};

}  // namespace

bool common_subexpression_elimination(Graph& g) {
  return CommonSubexpressionElimination(g).run();
}

}  // namespace ampjit
