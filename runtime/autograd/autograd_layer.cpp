// The autograd dispatcher layer: records ops into the graph backward runs (Note [Autograd],
// Note [Derivatives as data]).
#include <fmt/format.h>

#include <mutex>

#include "runtime/autograd/autograd.h"
#include "runtime/autograd/derivatives.h"
#include "runtime/autograd/functions.h"
#include "runtime/autograd/views.h"
#include "runtime/dispatcher.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"

namespace ampjit::autograd {

// The node of an op with a declared derivative.
class OpNode : public Node {
 public:
  struct Arg {
    IValue value;  // arguments that are not tensors
    bool is_tensor = false;
    std::vector<int> edge;         // per element: index into next_edges, -1 when none
    std::vector<int> saved;        // per element: index into saved_, -1 when not kept
    std::vector<TensorMeta> meta;  // per element
    std::vector<bool> defined;     // per element
  };

  OpNode(const OpEntry& op, const Derivative& d) : op_(op), d_(d) {}

  std::string name() const override {
    static const std::pair<const char*, const char*> kNames[] = {
        {"aten::to", "ToCopy"},
        {"aten::chunk", "Split"},
        {"aten::max_pool2d_with_indices", "MaxPool2DWithIndices"},
        {"aten::conv2d", "Convolution"},
        {"aten::conv1d", "Convolution"},
        {"aten::batch_norm", "NativeBatchNorm"},
        {"aten::layer_norm", "NativeLayerNorm"},
        {"aten::type_as", "ToCopy"}};
    const std::string_view base =
        std::string_view(op_.base_name).substr(op_.base_name.find("::") + 2);
    for (auto& [from, to] : kNames)
      if (op_.base_name == from) return fmt::format("{}Backward0", to);
    std::string out;
    bool upper = true;
    for (char c : base) {
      if (c == '_') {
        upper = true;
        continue;
      }
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    }
    return out + "Backward0";
  }

  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    for (size_t i = 0; i < grads.size(); ++i) {
      if (grads[i].defined() || i >= out_meta.size()) continue;
      const TensorMeta& m = out_meta[i];
      if (!is_floating(m.dtype)) continue;
      grads[i] =
          ops::zeros(std::vector<int64_t>(m.sizes.begin(), m.sizes.end()), m.dtype, m.device);
    }
    // The gradients live in the context, not the node: threads may run backward through one
    // retained graph at once.
    BackwardContext ctx(*this, std::move(grads));
    d_.formula(ctx);
    return std::move(ctx.edge_grads_);
  }

  void release_saved() override {
    for (SavedVariable& s : saved_) s.reset();
    for (SavedVariable& s : results_) s.reset();
  }

  const OpEntry& op_;
  const Derivative& d_;
  std::vector<Arg> args_;
  std::vector<SavedVariable> saved_;
  std::vector<SavedVariable> results_;
  bool saves_result_ = false;
};

// ---- BackwardContext -------------------------------------------------------------------------

BackwardContext::BackwardContext(OpNode& node, std::vector<Tensor> grads)
    : node_(node), grads_(std::move(grads)), edge_grads_(node.next_edges.size()) {}

size_t BackwardContext::index(const char* name) const {
  const auto& args = node_.op_.schema.args;
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == name) return i;
  throw Error(fmt::format("derivative of {}: no argument named '{}'", node_.op_.name, name));
}

Tensor BackwardContext::in(const char* name) const {
  const OpNode::Arg& a = node_.args_.at(index(name));
  if (!a.is_tensor || a.saved.empty() || !a.defined[0]) return Tensor();
  AMPJIT_CHECK(a.saved[0] >= 0, "derivative of {}: '{}' is read but not declared saved",
               node_.op_.name, name);
  return node_.saved_[a.saved[0]].unpack();
}

std::vector<Tensor> BackwardContext::in_list(const char* name) const {
  const OpNode::Arg& a = node_.args_.at(index(name));
  std::vector<Tensor> out;
  for (size_t i = 0; i < a.saved.size(); ++i) {
    AMPJIT_CHECK(a.saved[i] >= 0, "derivative of {}: '{}' is read but not declared saved",
                 node_.op_.name, name);
    out.push_back(node_.saved_[a.saved[i]].unpack());
  }
  return out;
}

Tensor BackwardContext::result(size_t i) const {
  AMPJIT_CHECK(node_.saves_result_, "derivative of {}: result is read but not declared saved",
               node_.op_.name);
  return node_.results_.at(i).unpack(
      std::static_pointer_cast<Node>(const_cast<OpNode&>(node_).shared_from_this()));
}

const IValue& BackwardContext::arg(const char* name) const {
  return node_.args_.at(index(name)).value;
}

IntArrayRef BackwardContext::sizes(const char* name, size_t i) const {
  return node_.args_.at(index(name)).meta.at(i).sizes;
}

ScalarType BackwardContext::dtype(const char* name, size_t i) const {
  return node_.args_.at(index(name)).meta.at(i).dtype;
}

Device BackwardContext::device(const char* name, size_t i) const {
  return node_.args_.at(index(name)).meta.at(i).device;
}

size_t BackwardContext::list_size(const char* name) const {
  return node_.args_.at(index(name)).meta.size();
}

bool BackwardContext::defined(const char* name) const {
  const OpNode::Arg& a = node_.args_.at(index(name));
  return a.is_tensor && !a.defined.empty() && a.defined[0];
}

bool BackwardContext::needs(const char* name) const {
  const OpNode::Arg& a = node_.args_.at(index(name));
  for (int e : a.edge)
    if (e >= 0) return true;
  return false;
}

void BackwardContext::set(const char* name, Tensor g) {
  const OpNode::Arg& a = node_.args_.at(index(name));
  if (!a.edge.empty() && a.edge[0] >= 0) edge_grads_[a.edge[0]] = std::move(g);
}

void BackwardContext::set_list(const char* name, std::vector<Tensor> gs) {
  const OpNode::Arg& a = node_.args_.at(index(name));
  for (size_t i = 0; i < a.edge.size() && i < gs.size(); ++i)
    if (a.edge[i] >= 0) edge_grads_[a.edge[i]] = std::move(gs[i]);
}

namespace {

bool requires_grad(const IValue& v) {
  if (v.is_tensor()) return v.tensor_impl()->grad_required();
  if (v.is_list())
    for (const IValue& e : v.list_elems())
      if (e.is_tensor() && e.tensor_impl()->grad_required()) return true;
  return false;
}

// Whether an argument of this type is a Tensor, Tensor? or Tensor[] (what a derivative may see
// as a tensor argument).
bool holds_tensors(const TypePtr& t) {
  if (!t) return false;
  switch (t->kind()) {
    case TypeKind::Tensor:
      return true;
    case TypeKind::Optional:
    case TypeKind::List:
      return t->elem()->kind() == TypeKind::Tensor;
    default:
      return false;
  }
}

// The tensors among an op's results, in order (Tensor[] results flattened).
template <typename F>
void for_each_output(Stack& stack, F&& f) {
  for (IValue& v : stack) {
    if (v.is_tensor()) {
      f(v.to_tensor());
    } else if (v.is_list()) {
      for (const IValue& e : v.list_elems())
        if (e.is_tensor()) f(e.to_tensor());
    }
  }
}

bool is_input(const std::vector<Tensor>& inputs, const Tensor& t) {
  for (const Tensor& in : inputs)
    if (in.is_same(t)) return true;
  return false;
}

// The outputs of an op recorded without a derivative: a node that raises when reached. `written`:
// the tensor an in-place op wrote (its output, though one of the inputs). Returns the node, if
// one was made.
std::shared_ptr<Node> attach_not_implemented(const OpEntry& op, const std::vector<Tensor>& inputs,
                                             const Tensor& written, Stack& stack) {
  std::shared_ptr<Node> node;
  for_each_output(stack, [&](const Tensor& t) {
    const bool is_written = written.defined() && written.is_same(t);
    if (!is_floating(t.dtype()) || (t.requires_grad() && !is_written) ||
        (is_input(inputs, t) && !is_written))
      return;
    if (!node) {
      node = std::make_shared<NotImplementedNode>(op.base_name);
      for (const Tensor& in : inputs)
        if (in.defined() && in.requires_grad()) node->next_edges.push_back(gradient_edge(in));
    }
    set_history(t, node, node->add_output(t));
  });
  return node;
}

// A copy of `t` that keeps its history (recorded as aten::clone when t requires grad, so that
// double backward sees through an in-place op's saved `self`), not seen by the tracer.
Tensor recorded_clone(const Tensor& t) {
  if (!t.requires_grad()) return t.clone();
  Stack s{IValue(t)};
  redispatch(DispatchLayer::Tracer, op_entry(OpId::clone), s);
  return s.at(0).to_tensor();
}

std::vector<Tensor> tensor_inputs(const Stack& stack) {
  std::vector<Tensor> out;
  for (const IValue& v : stack) {
    if (v.is_tensor()) {
      out.push_back(v.to_tensor());
    } else if (v.is_list()) {
      for (const IValue& e : v.list_elems())
        if (e.is_tensor()) out.push_back(e.to_tensor());
    }
  }
  return out;
}

std::shared_ptr<OpNode> record(const OpEntry& op, const Derivative& d, Stack& stack) {
  auto node = std::make_shared<OpNode>(op, d);
  const auto& schema_args = op.schema.args;
  node->saves_result_ = d.saves_result;
  node->args_.resize(stack.size());
  for (size_t i = 0; i < stack.size(); ++i) {
    OpNode::Arg& a = node->args_[i];
    const IValue& v = stack[i];
    const bool saved = i < 64 && ((d.saved_args >> i) & 1);
    auto add_tensor = [&](const Tensor& t) {
      a.defined.push_back(t.defined());
      a.meta.push_back(t.defined() ? TensorMeta{DimVector(t.sizes()), t.dtype(), t.device()}
                                   : TensorMeta{});
      int edge = -1;
      if (t.defined() && t.requires_grad()) {
        edge = static_cast<int>(node->next_edges.size());
        node->next_edges.push_back(gradient_edge(t));
      }
      a.edge.push_back(edge);
      int slot = -1;
      if (saved && t.defined()) {
        slot = static_cast<int>(node->saved_.size());
        const bool overwritten = op.is_inplace && static_cast<int>(i) == op.written_arg;
        // torch's formulas read an in-place op's `self` as it was: keep a copy
        node->saved_.emplace_back(overwritten ? recorded_clone(t) : t, false);
      }
      a.saved.push_back(slot);
    };
    const bool tensor_arg = i < schema_args.size() && holds_tensors(schema_args[i].type);
    if (tensor_arg && v.is_tensor()) {
      a.is_tensor = true;
      add_tensor(v.to_tensor());
    } else if (tensor_arg && v.is_list()) {
      a.is_tensor = true;
      for (const IValue& e : v.list_elems()) add_tensor(e.is_tensor() ? e.to_tensor() : Tensor());
    } else if (tensor_arg) {
      a.is_tensor = true;
      add_tensor(Tensor());
    } else {
      a.value = v;
    }
  }
  const std::vector<Tensor> inputs = tensor_inputs(stack);
  {
    LayerGuard below(DispatchLayer::Autograd, LayerGuard::Exclude);
    redispatch(DispatchLayer::Autograd, op, stack);
  }
  const Tensor written = op.is_inplace ? inputs.at(0) : Tensor();
  for_each_output(stack, [&](const Tensor& t) {
    const uint32_t nr = node->add_output(t);
    const bool passthrough = is_input(inputs, t) && !(written.defined() && written.is_same(t));
    if (is_floating(t.dtype()) && !passthrough) set_history(t, node, nr);
    if (node->saves_result_) node->results_.emplace_back(t, !passthrough);
  });
  return node;
}

void record_op(const OpEntry& op, Stack& stack) {
  bool any = false;
  if (grad_enabled())
    for (const IValue& v : stack) any = any || requires_grad(v);
  if (!any) return redispatch(DispatchLayer::Autograd, op, stack);
  AMPJIT_CHECK(!op.is_out,
               "{}(): functions with out=... arguments don't support automatic differentiation, "
               "but one of the arguments requires grad.",
               op.base_name.substr(op.base_name.find("::") + 2));
  const Derivative* d = derivative_for(op);
  if (d && d->decompose) return d->decompose(op, stack);
  if (d && !d->formula) {  // never differentiable
    LayerGuard below(DispatchLayer::Autograd, LayerGuard::Exclude);
    return redispatch(DispatchLayer::Autograd, op, stack);
  }
  // An in-place op: torch's checks, and the root base when it writes through a view (Note
  // [Views and in-place changes]).
  Tensor written, base;
  if (op.is_inplace && op.written_arg >= 0 && stack.at(op.written_arg).is_tensor()) {
    written = stack[op.written_arg].to_tensor();
    base = check_inplace(written);
  }
  if (d) {
    std::shared_ptr<OpNode> node = record(op, *d, stack);
    if (base.defined()) rebase_view(written, base, node, node->args_.at(op.written_arg).edge.at(0));
    return;
  }
  const std::vector<Tensor> inputs = tensor_inputs(stack);
  if (op.has(kComposite)) {
    const std::shared_ptr<Node> before = written.defined() ? grad_fn(written) : nullptr;
    redispatch(DispatchLayer::Autograd, op, stack);  // the ops it calls are recorded
    // An in-place composite whose own ops recorded the write (a decomposed op's in-place variant,
    // Note [Decomposed ops]) has its history already.
    if (written.defined() && grad_fn(written) != before) return;
    // A decomposition calls only ops (its def is script), so a result without history is one
    // torch's composite gives none either (combinations(x, 0) is a fresh empty tensor); a C++
    // composite may have made a view without the dispatcher, so it still gets the raising node.
    if (op.has(kDecomposed) && !written.defined()) return;
  } else {
    LayerGuard below(DispatchLayer::Autograd, LayerGuard::Exclude);
    redispatch(DispatchLayer::Autograd, op, stack);
  }
  const bool self_had_grad = written.defined() && written.requires_grad();
  std::shared_ptr<Node> node = attach_not_implemented(op, inputs, written, stack);
  if (node && base.defined()) rebase_view(written, base, node, self_had_grad ? 0 : -1);
}

// Records the op (record_op) and, for a view op, marks its results as views of its input (Note
// [Views and in-place changes]); detach's result is no view to autograd.
void autograd_layer(const OpEntry& op, Stack& stack) {
  if (!op.returns_alias || stack.empty() || !stack[0].is_tensor()) return record_op(op, stack);
  const Derivative* d = derivative_for(op);
  if (d && !d->formula && !d->decompose) return record_op(op, stack);
  const Tensor self = stack[0].to_tensor();
  record_op(op, stack);
  track_views(self, stack, op.schema.returns.at(0).type->kind() == TypeKind::List);
}

}  // namespace

void install_autograd_layer() {
  static std::once_flag once;
  std::call_once(once, [] { set_layer(DispatchLayer::Autograd, autograd_layer); });
}

namespace {
[[maybe_unused]] const bool g_installed = (install_autograd_layer(), true);
}  // namespace

}  // namespace ampjit::autograd
