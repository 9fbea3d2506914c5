// Inference optimization of frozen graphs (see inference.h).
#include "script/passes/inference.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

#include "runtime/ir/queries.h"
#include "runtime/op_table.h"
#include "script/passes/dead_code_elimination.h"

namespace ampjit {

namespace {

// Ops whose result keeps a channels-last input's layout (their first tensor operand's, or that of
// the full-shape operand of a broadcast): pointwise ops, casts, eval-mode norms and max pooling.
// clang-format off
constexpr OpId kKeepsLayout[] = {
    OpId::add, OpId::add_Scalar, OpId::add_, OpId::add__Scalar, OpId::sub, OpId::sub_Scalar,
    OpId::sub_, OpId::sub__Scalar, OpId::mul, OpId::mul_Scalar, OpId::mul_, OpId::mul__Scalar,
    OpId::div, OpId::div_Scalar, OpId::div_, OpId::div__Scalar, OpId::neg, OpId::exp, OpId::sqrt,
    OpId::rsqrt, OpId::tanh, OpId::tanh_, OpId::sigmoid, OpId::sigmoid_, OpId::erf, OpId::silu,
    OpId::silu_, OpId::gelu, OpId::gelu_, OpId::relu, OpId::relu_, OpId::relu6, OpId::relu6_,
    OpId::hardtanh, OpId::hardtanh_, OpId::hardswish, OpId::hardswish_, OpId::hardsigmoid,
    OpId::hardsigmoid_, OpId::leaky_relu, OpId::leaky_relu_, OpId::elu, OpId::elu_, OpId::mish,
    OpId::mish_, OpId::clamp, OpId::clamp_, OpId::clamp_min, OpId::clamp_min_, OpId::clamp_max,
    OpId::clamp_max_, OpId::_autocast_to_reduced_precision, OpId::_autocast_to_full_precision,
    OpId::to_dtype, OpId::clone, OpId::batch_norm, OpId::max_pool2d, OpId::dropout, OpId::dropout_,
    OpId::to_channels_last, OpId::conv2d, OpId::conv2d_padding
};
// clang-format on
bool keeps_layout(OpId id) {
  return std::ranges::find(kKeepsLayout, id) != std::end(kKeepsLayout);
}

// Questions about a tensor's shape or type: their answers do not depend on its strides.
// clang-format off
constexpr OpId kShapeQueries[] = {
    OpId::size_int, OpId::size_list, OpId::dim, OpId::numel, OpId::len_Tensor, OpId::prim_dtype,
    OpId::prim_device, OpId::is_floating_point
};
// clang-format on
bool shape_query(OpId id) {
  return std::ranges::find(kShapeQueries, id) != std::end(kShapeQueries);
}

// Ops whose values do not depend on their tensor operands' strides and that never fail on a
// layout (views may): a channels-last operand needs no conversion. Their results may differ in
// strides from the original graph's.
// clang-format off
constexpr OpId kLayoutBlind[] = {
    OpId::avg_pool2d, OpId::adaptive_avg_pool2d, OpId::cat, OpId::permute, OpId::flatten,
    OpId::reshape, OpId::linear, OpId::layer_norm, OpId::mean_dim, OpId::sum_dim_IntList
};
// clang-format on
bool layout_blind(OpId id) {
  return keeps_layout(id) || shape_query(id) ||
         std::ranges::find(kLayoutBlind, id) != std::end(kLayoutBlind);
}

bool is_tensor(const Value* v) {
  return v->type()->kind() == TypeKind::Tensor;
}

// conv2d with a constant 4-D weight on the CPU: a frozen convolution oneDNN runs.
bool is_frozen_conv(const Node& n) {
  const OpEntry* op = n.op();
  if (!op || (op->id != OpId::conv2d && op->id != OpId::conv2d_padding)) return false;
  const IValue* w = constant_value(n.input(1));
  return w && w->is_tensor() && w->to_tensor().dim() == 4 &&
         w->to_tensor().device().type == DeviceType::CPU;
}

// A prim::ListConstruct only cat reads: cat reads its tensors in any layout.
bool list_only_for_cat(const Node& n) {
  if (n.kind() != sym::prim::ListConstruct) return false;
  for (const Use& u : n.output()->uses())
    if (!u.user->op() || u.user->op()->id != OpId::cat) return false;
  return true;
}

struct LayoutPass {
  Graph& g;
  std::unordered_set<const Value*> other_strides;  // may differ in strides from the original
  std::unordered_set<const Value*> channels_last;  // channels-last when 4-D (a subset)

  bool user_accepts(const Use& u) const {
    const Node* n = u.user;
    // A branch of an If that passes the value through (its output follows it, see below).
    if (n->kind() == sym::prim::Return && n->owning_block() != g.block()) {
      const Node* owner = n->owning_block()->owning_node();
      return owner->kind() == sym::prim::If && owner->owning_block() == g.block() &&
             other_strides.count(owner->output(u.offset));
    }
    // A shape query anywhere (batch_norm's rank check raises from inside an If); any other op
    // only in the graph's own block, where its result's strides are followed.
    if (n->op() && shape_query(n->op()->id)) return true;
    if (n->owning_block() != g.block()) return false;
    if (list_only_for_cat(*n)) return true;
    return n->op() && layout_blind(n->op()->id);
  }

  // `x` as the input of a frozen convolution: channels-last, converted before `conv` unless it
  // already is.
  Value* channels_last_input(Value* x, Node* conv) {
    if (channels_last.count(x)) return x;
    Node* c = g.create_op(op_entry(OpId::to_channels_last), {x});
    c->insert_before(conv);
    c->set_source_range(conv->source_range());
    c->output()->set_type(x->type());
    return c->output();
  }

  void propagate() {
    for (Node* n : g.block()->nodes()) {
      if (is_frozen_conv(*n)) {
        n->replace_input(0, channels_last_input(n->input(0), n));
        Node* cvt = n->input(0)->node();
        if (cvt->op() && cvt->op()->id == OpId::to_channels_last) mark(cvt->output(), true);
        mark(n->output(), true);
        continue;
      }
      // The first operand with other strides decides (the full-shape operand of a broadcast in
      // practice: a constant broadcast over an activation has the original's strides).
      const Value* first = nullptr;
      for (const Value* in : n->inputs())
        if (other_strides.count(in)) {
          first = in;
          break;
        }
      if (n->kind() == sym::prim::If) {
        pass_through(*n);
        continue;
      }
      if (!first) continue;
      if (list_only_for_cat(*n)) {
        mark(n->output(), false);
        continue;
      }
      if (!n->op() || !layout_blind(n->op()->id)) continue;
      const bool keeps = keeps_layout(n->op()->id) && channels_last.count(first);
      for (Value* out : n->outputs())
        if (is_tensor(out)) mark(out, keeps);
    }
  }

  // An If whose branches each return a value with other strides or raise (torchvision's
  // stochastic_depth checks its mode so): its output has them too.
  void pass_through(const Node& n) {
    for (size_t i = 0; i < n.outputs().size(); ++i) {
      bool any = false, all_cl = true, ok = is_tensor(n.output(i));
      for (const Block* b : n.blocks()) {
        if (raises(*b)) continue;
        const Value* v = b->outputs()[i];
        ok &= other_strides.count(v) > 0;
        any = true;
        all_cl &= channels_last.count(v) > 0;
      }
      if (ok && any) mark(n.output(i), all_cl);
    }
  }

  static bool raises(const Block& b) {
    for (const Node* n : b)
      if (n->kind() == sym::prim::RaiseException) return true;
    return false;
  }

  void mark(const Value* v, bool cl) {
    other_strides.insert(v);
    if (cl) channels_last.insert(v);
  }

  // Every use of a value with other strides by a node that needs the original's gets a row-major
  // copy, made once after the value's producer.
  void restore_row_major() {
    std::vector<Value*> values;
    for (Node* n : g.block()->nodes())
      for (Value* out : n->outputs())
        if (other_strides.count(out) && is_tensor(out)) values.push_back(out);
    for (Value* v : values) {
      std::vector<Use> rejecting;
      for (const Use& u : v->uses())
        if (!user_accepts(u)) rejecting.push_back(u);
      if (rejecting.empty()) continue;
      Node* c = g.create_op(
          op_entry(OpId::contiguous),
          {v, g.create_constant(IValue(int64_t{0}))->insert_after(v->node())->output()});
      c->insert_after(c->input(1)->node());
      c->set_source_range(v->node()->source_range());
      c->output()->set_type(v->type());
      for (const Use& u : rejecting) u.user->replace_input(u.offset, c->output());
    }
  }
};

// The one use of a convolution's result that is not a shape query, when it is a ReLU in the
// graph's block: the convolution and the ReLU fuse (an in-place relu_ too, since nothing else
// reads the values).
Node* lone_relu_user(const Node& conv) {
  Node* relu = nullptr;
  for (const Use& u : conv.output()->uses()) {
    const OpEntry* op = u.user->op();
    if (op && shape_query(op->id)) continue;
    if (relu || !op || (op->id != OpId::relu && op->id != OpId::relu_) ||
        u.user->owning_block() != conv.owning_block())
      return nullptr;
    relu = u.user;
  }
  return relu;
}

}  // namespace

bool fuse_convolution_relu(Graph& g) {
  std::vector<std::pair<Node*, Node*>> pairs;
  for (Node* n : g.block()->nodes())
    if (n->op() && n->op()->id == OpId::conv2d && is_frozen_conv(*n))
      if (Node* relu = lone_relu_user(*n)) pairs.emplace_back(n, relu);
  for (auto [conv, relu] : pairs) {
    Node* fused = g.create_op(op_entry(OpId::conv2d_relu), conv->inputs());
    fused->insert_before(conv);
    fused->set_source_range(relu->source_range());
    fused->output()->set_type(conv->output()->type());
    relu->output()->replace_all_uses_with(fused->output());
    conv->output()->replace_all_uses_with(fused->output());  // the shape queries
    relu->destroy();
    conv->destroy();
  }
  if (!pairs.empty()) g.verify();
  return !pairs.empty();
}

bool channels_last_convolutions(Graph& g) {
  int convs = 0;
  for (const Node* n : g.block()->nodes()) convs += is_frozen_conv(*n);
  if (convs < 3) return false;
  LayoutPass pass{g, {}, {}};
  pass.propagate();
  pass.restore_row_major();
  g.verify();
  return true;
}

bool optimize_frozen_graph(Graph& g) {
  bool changed = channels_last_convolutions(g);
  changed |= fuse_convolution_relu(g);
  dead_code_elimination(g);
  return changed;
}

}  // namespace ampjit
