// Freezing and conv/batch-norm folding (see freeze.h).
#include "script/passes/freeze.h"

#include <optional>
#include <set>
#include <unordered_map>

#include "runtime/ir/queries.h"
#include "runtime/module_object.h"
#include "runtime/ops.h"
#include "script/passes/autocast_pass.h"
#include "script/passes/common_subexpression_elimination.h"
#include "script/passes/constant_propagation.h"
#include "script/passes/dead_code_elimination.h"
#include "script/passes/inline_calls.h"

namespace ampjit {

namespace {

void collect_assigned(const Block& b, std::set<std::string>& names) {
  for (const Node* n : b) {
    if (n->kind() == sym::prim::SetAttr) names.insert(n->attr(sym::attr::name).to_string_ref());
    for (const Block* sub : n->blocks()) collect_assigned(*sub, names);
  }
}

struct AttributeFolder {
  Graph& g;
  std::set<std::string> keep;  // assigned or preserved
  std::unordered_map<const Value*, ModuleObject*> objects;

  void run(Block& b) {
    for (Node* n : b.nodes()) {
      for (Block* sub : n->blocks()) run(*sub);
      if (n->kind() != sym::prim::GetAttr) continue;
      auto it = objects.find(n->input());
      if (it == objects.end()) continue;
      const std::string& name = n->attr(sym::attr::name).to_string_ref();
      if (keep.count(name) || it->second->slot(name) < 0) continue;
      const IValue& v = it->second->attr(name);
      if (v.is_object()) {
        if (auto* sub = dynamic_cast<ModuleObject*>(v.object())) objects[n->output()] = sub;
        continue;
      }
      // A copy, so that the frozen module keeps these values (torch clones the module).
      IValue frozen = v.is_tensor() ? IValue(v.to_tensor().clone()) : v;
      Node* c = g.create_constant(frozen);
      c->insert_before(n);
      c->set_source_range(n->source_range());
      c->output()->set_type(n->output()->type());
      n->output()->replace_all_uses_with(c->output());
    }
  }
};

// Whether every use of `v` other than by `keep` only asks for its shape (BatchNorm's input check
// calls x.dim()): those see the same shape after the fold.
bool only_shape_queries_besides(const Value* v, const Node* keep) {
  static const Symbol kDim = Symbol::intern("aten::dim"), kSize = Symbol::intern("aten::size");
  for (const Use& u : v->uses())
    if (u.user != keep && u.user->kind() != kDim && u.user->kind() != kSize) return false;
  return true;
}

bool is_conv(const Node& n) {
  const OpEntry* op = n.op();
  return op && (op->id == OpId::conv1d || op->id == OpId::conv2d || op->id == OpId::conv3d);
}

std::optional<Tensor> constant_tensor(const Value* v) {
  const IValue* c = constant_value(v);
  if (c && c->is_tensor()) return c->to_tensor();
  return std::nullopt;
}

// Every tensor constant's storage frozen: they are freeze's own copies (or folded from them), and
// nothing can write them (Note [Frozen storage] in runtime/tensor.h).
void mark_constants_frozen(const Block& b) {
  for (const Node* n : b) {
    if (n->kind() == sym::prim::Constant && n->has_attr(sym::attr::value) &&
        n->attr(sym::attr::value).is_tensor())
      n->attr(sym::attr::value).to_tensor().storage()->mark_frozen();
    for (const Block* sub : n->blocks()) mark_constants_frozen(*sub);
  }
}

}  // namespace

bool has_tensor_constants(const Graph& g) {
  for (const Node* n : *g.block())
    if (n->kind() == sym::prim::Constant && n->has_attr(sym::attr::value) &&
        n->attr(sym::attr::value).is_tensor())
      return true;
  return false;
}

bool fold_conv_batch_norm(Graph& g) {
  bool changed = false;
  std::vector<Node*> bns;
  for (Node* n : g.block()->nodes())
    if (n->op() && n->op()->id == OpId::batch_norm) bns.push_back(n);
  for (Node* bn : bns) {
    Node* conv = bn->input(0)->node();
    if (!is_conv(*conv) || !only_shape_queries_besides(conv->output(), bn)) continue;
    if (constant_bool(bn->input(5)) != false) continue;  // training
    const std::optional<Tensor> w = constant_tensor(conv->input(1));
    const IValue* b = constant_value(conv->input(2));
    const std::optional<Tensor> mean = constant_tensor(bn->input(3));
    const std::optional<Tensor> var = constant_tensor(bn->input(4));
    const IValue* gamma = constant_value(bn->input(1));
    const IValue* beta = constant_value(bn->input(2));
    const IValue* eps = constant_value(bn->input(7));
    if (!w || !b || !mean || !var || !gamma || !beta || !eps) continue;
    if ((!b->is_none() && !b->is_tensor()) || (!gamma->is_none() && !gamma->is_tensor()) ||
        (!beta->is_none() && !beta->is_tensor()) || !eps->is_number())
      continue;
    const ScalarType dt = w->dtype();
    if (!is_floating(dt) || mean->dtype() != dt || var->dtype() != dt) continue;
    // scale = gamma / sqrt(var + eps); W' = W * scale (per output channel); b' = (b - mean) *
    // scale + beta.
    Tensor scale = ops::rsqrt(ops::add_Scalar(*var, eps->to_scalar()));
    if (gamma->is_tensor()) scale = ops::mul(scale, gamma->to_tensor());
    std::vector<int64_t> shape(static_cast<size_t>(w->dim()), 1);
    shape[0] = w->size(0);
    Tensor w2 = ops::mul(*w, ops::reshape(scale, shape));
    Tensor bias = b->is_tensor() ? b->to_tensor() : ops::zeros_like(*mean);
    Tensor b2 = ops::mul(ops::sub(bias, *mean), scale);
    if (beta->is_tensor()) b2 = ops::add(b2, beta->to_tensor());
    Node* cw = g.create_constant(IValue(w2));
    Node* cb = g.create_constant(IValue(b2));
    cw->insert_before(conv);
    cb->insert_before(conv);
    conv->replace_input(1, cw->output());
    conv->replace_input(2, cb->output());
    bn->output()->replace_all_uses_with(conv->output());
    bn->destroy();
    changed = true;
  }
  return changed;
}

std::shared_ptr<Graph> freeze_graph(const Graph& forward, const IValue& self,
                                    const std::vector<std::string>& preserved,
                                    const AutocastContext* autocast) {
  std::shared_ptr<Graph> g(forward.copy().release());
  inline_calls(*g);
  AMPJIT_CHECK(!g->inputs().empty() && self.is_object(),
               "freeze: a module's method graph and its module object are needed");
  auto* root = dynamic_cast<ModuleObject*>(self.object());
  AMPJIT_CHECK(root, "freeze: the method's self is not a module object");
  AttributeFolder folder{*g, {}, {}};
  collect_assigned(*g->block(), folder.keep);
  folder.keep.insert(preserved.begin(), preserved.end());
  folder.objects[g->inputs()[0]] = root;
  folder.run(*g->block());
  constant_propagation(*g, /*fold_tensors=*/true);
  fold_conv_batch_norm(*g);
  if (autocast) autocast_pass(*g, *autocast);
  constant_propagation(*g, /*fold_tensors=*/true);
  common_subexpression_elimination(*g);
  dead_code_elimination(*g);
  g->verify();
  if (!constants_may_change(*g)) mark_constants_frozen(*g->block());
  return g;
}

}  // namespace ampjit
