// Graph::verify(): structural invariants, SSA dominance and types, checked after every pass in
// tests so a bug surfaces at the pass that made it.
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "runtime/ir/ir.h"

namespace ampjit {

namespace {

class Verifier {
 public:
  explicit Verifier(const Graph& g) : g_(g) {}

  void run() {
    std::unordered_set<const Value*> scope;
    check_block(*g_.block(), scope);
    // Every input was counted once; a value's use list must hold exactly those uses (each use
    // points back and none repeats, checked where the value is defined).
    for (const Value* v : defined_) {
      auto it = refs_.find(v);
      const size_t refs = it == refs_.end() ? 0 : it->second;
      if (refs != v->uses().size())
        fail(v->node(), fmt::format("the use list of %{} has {} entries for {} uses", v->unique(),
                                    v->uses().size(), refs));
    }
  }

 private:
  [[noreturn]] void fail(const Node* n, const std::string& what) {
    std::string where = n ? fmt::format(" at node {}", n->kind().qualified()) : "";
    if (n && n->source_range().valid()) where += " (" + n->source_range().location_str() + ")";
    throw Error(fmt::format("graph verification failed{}: {}\n{}", where, what, g_.str()));
  }

  // Linear in the graph: inputs are counted here and compared with the use lists once, in run().
  void check_uses(const Node* n) {
    for (const Value* v : n->inputs()) ++refs_[v];
    for (size_t i = 0; i < n->outputs().size(); ++i) {
      const Value* v = n->output(i);
      if (v->node() != n || v->offset() != i)
        fail(n, fmt::format("output {} does not point back", i));
      std::set<std::pair<const Node*, size_t>> distinct;
      for (const Use& u : v->uses()) {
        if (u.offset >= u.user->inputs().size() || u.user->input(u.offset) != v)
          fail(n, fmt::format("a use of output {} is stale", i));
        if (!distinct.emplace(u.user, u.offset).second)
          fail(n, fmt::format("a use of output {} is listed twice", i));
      }
      defined_.push_back(v);
    }
  }

  void check_block(const Block& b, std::unordered_set<const Value*>& scope) {
    std::vector<const Value*> added;
    auto def = [&](const Value* v) {
      if (!scope.insert(v).second) fail(v->node(), "value defined twice");
      added.push_back(v);
    };
    for (const Value* v : b.inputs()) def(v);
    check_uses(b.param_node());
    for (const Node* n : b) {
      if (n->owning_block() != &b) fail(n, "node's owning block is wrong");
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        if (!scope.count(n->input(i)))
          fail(n, fmt::format("input {} (%{}) is used before it is defined or out of scope", i,
                              n->input(i)->unique()));
      }
      check_uses(n);
      check_types(n);
      for (const Block* inner : n->blocks()) {
        if (inner->owning_node() != n) fail(n, "inner block's owning node is wrong");
        check_block(*inner, scope);
      }
      for (const Value* v : n->outputs()) def(v);
    }
    for (size_t i = 0; i < b.outputs().size(); ++i) {
      if (!scope.count(b.outputs()[i]))
        fail(b.return_node(), fmt::format("block output {} is not in scope", i));
    }
    check_uses(b.return_node());
    for (const Value* v : added) scope.erase(v);
  }

  void check_types(const Node* n) {
    const Symbol k = n->kind();
    if (k == sym::prim::Constant) {
      if (!n->inputs().empty() || n->outputs().size() != 1)
        fail(n, "a constant has no inputs and one output");
      return;
    }
    if (k == sym::prim::If) {
      if (n->inputs().size() != 1 || n->input()->type()->kind() != TypeKind::Bool)
        fail(n, "prim::If takes one bool condition");
      if (n->blocks().size() != 2) fail(n, "prim::If has two blocks");
      for (const Block* b : n->blocks())
        if (b->outputs().size() != n->outputs().size())
          fail(n, "each branch yields one value per output");
      return;
    }
    if (k == sym::prim::Loop) {
      // inputs: max_trip_count, initial condition, carried...; block: (i, carried...) -> (cond,
      // carried...)
      if (n->inputs().size() < 2 || n->blocks().size() != 1)
        fail(n, "prim::Loop(max_trip, cond, carried...) has one block");
      const size_t carried = n->inputs().size() - 2;
      const Block* b = n->blocks()[0];
      if (b->inputs().size() != carried + 1 || b->outputs().size() != carried + 1 ||
          n->outputs().size() != carried)
        fail(n, "loop-carried values do not line up between inputs, block and outputs");
      return;
    }
    if (k == sym::prim::AutocastRegion) {
      // Note [Autocast regions at run time] (runtime/autocast/autocast_regions.h): constant
      // settings, one block without inputs whose outputs are the node's.
      if (!n->inputs().empty() || n->blocks().size() != 1 || !n->blocks()[0]->inputs().empty())
        fail(n, "prim::AutocastRegion has no inputs and one block without inputs");
      if (n->blocks()[0]->outputs().size() != n->outputs().size())
        fail(n, "prim::AutocastRegion's block yields one value per output");
      auto is_flag = [](const IValue& v) {
        return v.is_bool() || (v.is_int() && (v.to_int() == 0 || v.to_int() == 1));
      };
      const IValue* device =
          n->has_attr(sym::attr::device_type) ? &n->attr(sym::attr::device_type) : nullptr;
      if (!device || !device->is_string() ||
          (device->to_string_ref() != "cpu" && device->to_string_ref() != "cuda"))
        fail(n, "prim::AutocastRegion needs device_type=\"cpu\" or \"cuda\"");
      if (!n->has_attr(sym::attr::enabled) || !is_flag(n->attr(sym::attr::enabled)))
        fail(n, "prim::AutocastRegion needs a bool `enabled`");
      if (n->has_attr(sym::attr::cache_enabled) && !is_flag(n->attr(sym::attr::cache_enabled)))
        fail(n, "prim::AutocastRegion's `cache_enabled` is a bool");
      const IValue* dt = n->has_attr(sym::attr::dtype) ? &n->attr(sym::attr::dtype) : nullptr;
      std::optional<ScalarType> t;
      if (dt && dt->is_scalar_type()) t = dt->to_scalar_type();
      if (dt && dt->is_int()) t = from_torch_dtype_code(dt->to_int());
      if (!t || !is_reduced_floating(*t))
        fail(n, "prim::AutocastRegion needs dtype float16 or bfloat16");
      return;
    }
    if (const OpEntry* op = n->op()) {
      const auto& args = op->schema.args;
      if (n->inputs().size() != args.size())
        fail(n, fmt::format("{} takes {} inputs, node has {}", op->name, args.size(),
                            n->inputs().size()));
      if (n->outputs().size() != op->schema.returns.size())
        fail(n, fmt::format("{} has {} outputs, node has {}", op->name, op->schema.returns.size(),
                            n->outputs().size()));
      for (size_t i = 0; i < args.size(); ++i) {
        const Type& vt = *n->input(i)->type();
        const Type& at = *args[i].type;
        if (vt.kind() == TypeKind::Tensor &&
            !(at.kind() == TypeKind::Tensor ||
              (at.kind() == TypeKind::Optional && at.elem()->kind() == TypeKind::Tensor) ||
              at.kind() == TypeKind::Any))
          fail(n, fmt::format("input {} is a Tensor but {} expects {} for '{}'", i, op->name,
                              at.str(), args[i].name));
      }
    }
  }

  const Graph& g_;
  std::unordered_map<const Value*, size_t> refs_;  // inputs seen, per value
  std::vector<const Value*> defined_;              // every value defined, in order
};

}  // namespace

void Graph::verify() const {
  Verifier(*this).run();
}

}  // namespace ampjit
