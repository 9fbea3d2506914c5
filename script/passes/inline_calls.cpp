// Replacing calls by their callee's graph (see inline_calls.h).
#include "script/passes/inline_calls.h"

#include "runtime/interpreter.h"

namespace ampjit {

namespace {
const Symbol kInlinedAt = Symbol::intern("meta", "inlined_at");
const Symbol kInlinedFrom = Symbol::intern("meta", "inlined_from");
const Symbol kInlinedAtText = Symbol::intern("meta", "inlined_at_text");

// Inlined nodes remember the innermost call they came from (the interop warnings name it).
// (`at`: "file:line:col"; `text`: the same with the source line and a caret, for errors.)
void mark_inlined(Node* n, const IValue& at, const IValue& text, const IValue& from) {
  if (!n->find_meta(kInlinedAt)) {
    n->meta().emplace_back(kInlinedAt, at);
    n->meta().emplace_back(kInlinedAtText, text);
    n->meta().emplace_back(kInlinedFrom, from);
  }
  for (Block* sub : n->blocks())
    for (Node* c : sub->nodes()) mark_inlined(c, at, text, from);
}

bool inline_block(Graph& g, Block& b) {
  bool changed = false;
  for (Node* n : b.nodes()) {
    for (Block* sub : n->blocks()) changed |= inline_block(g, *sub);
    if (n->kind() != sym::prim::CallFunction) continue;
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
      const IValue at(n->source_range().location_str()), text(n->source_range().highlight()),
          from(fo->fn->name());
      for (Node* c = before->next(); c != n; c = c->next()) mark_inlined(c, at, text, from);
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
