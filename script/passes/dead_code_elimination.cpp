// Removing unused, effect-free nodes (see dead_code_elimination.h).
//
// Mark and sweep, as in torch's DCE: the graph outputs and every node with side effects are live;
// a live node makes its inputs live, and a live value makes the node that produces it live. Control
// flow refines this per output: a live If output makes the matching output of each block live; a
// live loop-carried value (the Loop output, its initial value, the body input or the body output)
// makes all four live. A live node inside a block makes the If or Loop that owns the block live
// (it must run), which makes the condition, or the trip count and loop condition, live. The sweep
// then walks each block backwards, so the users of a dead node are gone before the node itself.
#include "script/passes/dead_code_elimination.h"

#include "runtime/ir/queries.h"

#include <set>
#include <unordered_set>
#include <utility>

namespace ampjit {

namespace {

class DeadCodeElimination {
 public:
  bool run(Graph& g) {
    seed(*g.block());
    for (Value* v : g.outputs()) mark_value(v);
    propagate();
    return sweep_block(*g.block());
  }

 private:
  void seed(const Block& b) {
    for (Node* n : b) {
      const Symbol k = n->kind();
      if (k == sym::prim::If || k == sym::prim::Loop) {
        for (const Block* sub : n->blocks()) seed(*sub);
        continue;
      }
      if (has_side_effects(*n)) mark_node(n);
      for (const Block* sub : n->blocks()) seed(*sub);  // a node of unknown kind with blocks
    }
  }

  void mark_value(Value* v) {
    if (live_values_.insert(v).second) values_todo_.push_back(v);
  }
  void mark_node(Node* n) {
    if (live_nodes_.insert(n).second) nodes_todo_.push_back(n);
  }
  void mark_carried(Node* loop, size_t k) {
    if (!live_carried_.insert({loop, k}).second) return;
    Block* body = loop->blocks()[0];
    mark_value(loop->output(k));
    mark_value(loop->input(2 + k));
    mark_value(body->inputs()[1 + k]);
    mark_value(body->outputs()[1 + k]);
  }

  // A worklist rather than recursion: dependency chains can be as long as the graph.
  void propagate() {
    while (!nodes_todo_.empty() || !values_todo_.empty()) {
      if (!nodes_todo_.empty()) {
        Node* n = nodes_todo_.back();
        nodes_todo_.pop_back();
        visit_node(n);
      } else {
        Value* v = values_todo_.back();
        values_todo_.pop_back();
        visit_value(v);
      }
    }
  }

  // `n` runs: what it needs to run is live, and so is whatever runs the block it is in.
  void visit_node(Node* n) {
    const Symbol k = n->kind();
    if (k == sym::prim::If) {
      mark_value(n->input(0));
    } else if (k == sym::prim::Loop) {
      mark_value(n->input(0));
      mark_value(n->input(1));
      mark_value(n->blocks()[0]->outputs()[0]);
    } else {
      for (Value* in : n->inputs()) mark_value(in);
      for (Block* b : n->blocks())
        for (Value* out : b->outputs()) mark_value(out);
    }
    if (Node* owner = n->owning_block()->owning_node()) mark_node(owner);
  }

  void visit_value(Value* v) {
    Node* p = v->node();
    if (p->kind() == sym::prim::Param) {
      Node* owner = p->owning_block()->owning_node();
      if (!owner) return;  // a graph input
      mark_node(owner);
      if (owner->kind() == sym::prim::Loop && v->offset() > 0) mark_carried(owner, v->offset() - 1);
      return;
    }
    mark_node(p);
    if (p->kind() == sym::prim::If) {
      for (Block* b : p->blocks()) mark_value(b->outputs()[v->offset()]);
    } else if (p->kind() == sym::prim::Loop) {
      mark_carried(p, v->offset());
    }
  }

  bool sweep_block(Block& b) {
    bool changed = false;
    for (Node* n = b.return_node()->prev(); n != b.param_node();) {
      Node* prev = n->prev();
      if (!live_nodes_.count(n)) {
        n->destroy();
        changed = true;
      } else if (n->kind() == sym::prim::If) {
        changed |= sweep_if(n);
      } else if (n->kind() == sym::prim::Loop) {
        changed |= sweep_loop(n);
      } else {
        for (Block* sub : n->blocks()) changed |= sweep_block(*sub);
      }
      n = prev;
    }
    return changed;
  }

  bool sweep_if(Node* n) {
    bool changed = false;
    for (size_t i = n->outputs().size(); i-- > 0;) {
      if (live_values_.count(n->output(i))) continue;
      for (Block* b : n->blocks()) b->erase_output(i);
      n->erase_output(i);
      changed = true;
    }
    for (Block* b : n->blocks()) changed |= sweep_block(*b);
    return changed;
  }

  // Dead carried values leave the body's outputs first, so the sweep of the body can remove what
  // computed them; then their body inputs are unused and go with the Loop's input and output.
  bool sweep_loop(Node* n) {
    Block* body = n->blocks()[0];
    std::vector<size_t> dead;
    for (size_t k = n->outputs().size(); k-- > 0;) {
      if (live_carried_.count({n, k})) continue;
      body->erase_output(1 + k);
      dead.push_back(k);
    }
    bool changed = sweep_block(*body);
    for (size_t k : dead) {  // descending
      n->erase_output(k);
      n->remove_input(2 + k);
      body->erase_input(1 + k);
      changed = true;
    }
    return changed;
  }

  std::unordered_set<const Node*> live_nodes_;
  std::unordered_set<const Value*> live_values_;
  std::set<std::pair<const Node*, size_t>> live_carried_;
  std::vector<Node*> nodes_todo_;
  std::vector<Value*> values_todo_;
};

}  // namespace

bool dead_code_elimination(Graph& g) {
  return DeadCodeElimination().run(g);
}

}  // namespace ampjit
