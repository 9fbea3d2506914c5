// Replacing calls by their callee's graph (see inline_calls.h).
#include "script/passes/inline_calls.h"

#include "runtime/interpreter.h"

namespace ampjit {

namespace {
// Inlined nodes remember the calls they came from, innermost first (the diagnostics of the later
// passes name them): a node already inlined from deeper calls gets this call as its outer one.
void mark_inlined(Node* n, const InlinedCall& call) {
  n->add_inlined_call(call);
  for (Block* sub : n->blocks())
    for (Node* c : sub->nodes()) mark_inlined(c, call);
}

bool inline_block(Graph& g, Block& b) {
  bool changed = false;
  for (Node* n : b.nodes()) {
    for (Block* sub : n->blocks()) changed |= inline_block(g, *sub);
    if (n->kind() != sym::prim::CallFunction || n->has_attr(kInterfaceCall)) continue;
    const IValue& f = n->attr(sym::attr::value);
    auto* fo = f.is_object() ? dynamic_cast<FunctionObject*>(f.object()) : nullptr;
    if (!fo) continue;
    // Inline a copy that is itself fully inlined, so nested calls disappear too.
    std::unique_ptr<Graph> callee = fo->fn->graph()->copy();
    inline_calls(*callee);
    Node* saved = g.insert_point();
    g.set_insert_point(n);
    Node* before = n->prev();
    std::vector<Value*> outs = g.insert_graph(*callee, n->inputs());
    g.set_insert_point(saved);
    if (n->source_range().valid()) {
      const InlinedCall call{fo->fn->name(), n->source_range()};
      for (Node* c = before->next(); c != n; c = c->next()) mark_inlined(c, call);
    }
    for (size_t i = 0; i < outs.size(); ++i) n->output(i)->replace_all_uses_with(outs[i]);
    n->destroy();
    changed = true;
  }
  return changed;
}
}  // namespace

bool inline_calls(Graph& g) {
  return inline_block(g, *g.block());
}

}  // namespace ampjit
