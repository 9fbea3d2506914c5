// Views under autograd (Note [Views and in-place changes] in views.h).
#include "runtime/autograd/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "runtime/dispatcher.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"

namespace ampjit::autograd {

namespace {

std::vector<int64_t> vec(IntArrayRef a) {
  return {a.begin(), a.end()};
}

// torch's propagate_creation_meta: a view of a view keeps the stricter of the two.
CreationMeta propagate(CreationMeta prev, CreationMeta now) {
  if (now == CreationMeta::Default) return prev;
  return prev == CreationMeta::InferenceMode ? prev : now;
}

// torch's handle_view_on_rebase: the refusals of an in-place change of (`indirect`: through the
// base or another view of) a view not made in plain grad mode by a single-view op.
void check_creation(const Tensor& view, bool indirect) {
  const auto creation = static_cast<CreationMeta>(view.impl()->view_creation);
  if (creation == CreationMeta::Default) return;
  const std::shared_ptr<Node> fn = meta(view) ? meta(view)->grad_fn : nullptr;
  const char* modified = indirect ? "its base or another view of its base has been" : "is being";
  std::string msg;
  if (creation == CreationMeta::InferenceMode || creation == CreationMeta::NoGradMode || !fn) {
    const std::string prefix =
        fn ? fmt::format("Output {} of {} is a view of a view which was created in",
                         meta(view)->output_nr, fn->name())
           : std::string("A view was created in");
    msg = creation == CreationMeta::InferenceMode
              ? fmt::format("{} inference mode and {} modified inplace in normal mode.", prefix,
                            modified)
              : fmt::format("{} no_grad mode and {} modified inplace with grad mode enabled.",
                            prefix, modified);
  } else {
    msg = fmt::format("Output {} of {} is a view and {} modified inplace.", meta(view)->output_nr,
                      fn->name(), modified);
  }
  switch (creation) {
    case CreationMeta::MultiOutput:
      msg +=
          " This view is the output of a function that returns multiple views. Such functions do "
          "not allow the output views to be modified inplace. You should replace the inplace "
          "operation by an out-of-place one.";
      break;
    case CreationMeta::NoGradMode:
    case CreationMeta::InferenceMode: {
      const char* block = creation == CreationMeta::NoGradMode ? "no_grad" : "inference_mode";
      msg += fmt::format(
          " Given that this use case is ambiguous and error-prone, it is forbidden. You can "
          "clarify your code by moving both the view and the inplace either both inside the {} "
          "block (if you don't want the inplace to be tracked) or both outside (if you want the "
          "inplace to be tracked).",
          block);
      break;
    }
    case CreationMeta::Default:
      break;
  }
  throw Error(msg);
}

// The number of storage elements from the first element of `g` to past its last one.
int64_t extent(const Geometry& g) {
  int64_t n = 1;
  for (size_t i = 0; i < g.sizes.size(); ++i) {
    if (g.sizes[i] == 0) return 0;
    n += (g.sizes[i] - 1) * g.strides[i];
  }
  return n;
}

// The storage elements a buffer laid out like `base` needs, from the base's first element, to hold
// `view` too (views lie inside their base; as_strided's checks say so for the others).
int64_t span(const Geometry& base, const Geometry& view) {
  return std::max(extent(base), view.offset - base.offset + extent(view));
}

// Whether no two elements of `g` share a storage element (torch's is_non_overlapping).
bool non_overlapping(const Geometry& g) {
  std::vector<size_t> dims;
  for (size_t i = 0; i < g.sizes.size(); ++i)
    if (g.sizes[i] > 1) dims.push_back(i);
  std::sort(dims.begin(), dims.end(),
            [&](size_t a, size_t b) { return g.strides[a] < g.strides[b]; });
  int64_t reach = 1;  // elements spanned by the dimensions so far
  for (size_t d : dims) {
    if (g.strides[d] < reach) return false;
    reach = g.strides[d] * (g.sizes[d] - 1) + reach;
  }
  return true;
}

// A view of `t`'s storage at `g` (offset relative to t's first element): the dispatched op when
// the result must be recorded (so it is a tracked view), the metadata view otherwise.
Tensor restride(const Tensor& t, const Geometry& g, int64_t rel_offset) {
  if (grad_enabled())
    return ops::as_strided(t, vec(g.sizes), vec(g.strides), t.storage_offset() + rel_offset);
  return t.as_strided(g.sizes, g.strides, t.storage_offset() + rel_offset);
}

}  // namespace

Tensor view_base(const Tensor& t) {
  return t.impl()->view_base ? Tensor(t.impl()->view_base) : Tensor();
}

void track_views(const Tensor& self, Stack& outputs, bool multi_output) {
  TensorImpl* s = self.impl();
  if (s->is_inference) return;  // an inference tensor's views are plain inference tensors
  const Ref<TensorImpl> root = s->view_base ? s->view_base : self.impl_ref();
  CreationMeta created = inference_mode_enabled() ? CreationMeta::InferenceMode
                         : !grad_enabled()        ? CreationMeta::NoGradMode
                         : multi_output           ? CreationMeta::MultiOutput
                                                  : CreationMeta::Default;
  if (s->view_base) created = propagate(static_cast<CreationMeta>(s->view_creation), created);
  auto mark = [&](const Tensor& o) {
    TensorImpl* i = o.impl();
    if (i == s || i->storage.get() != s->storage.get()) return;
    if (i->view_base && !multi_output) return;  // an op inside the kernel tracked it already
    i->view_base = root;
    i->view_version = i->storage->version();
    i->view_creation = static_cast<uint8_t>(created);
    i->is_view = true;
  };
  for (const IValue& v : outputs) {
    if (v.is_tensor()) {
      mark(v.to_tensor());
    } else if (v.is_list()) {
      for (const IValue& e : v.list_elems())
        if (e.is_tensor()) mark(e.to_tensor());
    }
  }
}

namespace {
// Gives the view `t` a grad_fn from its base's current history.
void derive_grad_fn_from_base(const Tensor& t) {
  TensorImpl* i = t.impl();
  const Tensor base(i->view_base);
  auto node = std::make_shared<AsStridedBackward>(Geometry::of(base), Geometry::of(t));
  node->next_edges.push_back(gradient_edge(base));
  set_history(t, node, node->add_output(t));
  i->view_version = i->storage->version();
}
}  // namespace

void refresh_view_grad_fn(const Tensor& t) {
  TensorImpl* i = t.impl();
  if (!i->view_base || i->storage->version() == i->view_version) return;
  if (!(meta(t) && meta(t)->grad_fn) && !i->view_base->requires_grad) return;
  // Threads recording ops on one view may both find it stale: one derives, under the view's lock.
  AutogradMeta& m = ensure_meta(t);
  std::lock_guard<std::mutex> lock(m.view_mutex);
  if (i->storage->version() == i->view_version) return;
  check_creation(t, /*indirect=*/true);
  derive_grad_fn_from_base(t);
}

Tensor check_inplace(const Tensor& self) {
  if (is_tracked_view(self)) {
    check_creation(self, /*indirect=*/false);
    const Tensor base = view_base(self);
    AMPJIT_CHECK(!(self.requires_grad() && base.is_leaf() && base.requires_grad()),
                 "a view of a leaf Variable that requires grad is being used in an in-place "
                 "operation.");
    return base;
  }
  AMPJIT_CHECK(!(self.is_leaf() && self.requires_grad()),
               "a leaf Variable that requires grad is being used in an in-place operation.");
  return Tensor();
}

void rebase_view(const Tensor& self, const Tensor& base, const std::shared_ptr<Node>& fn,
                 int self_edge) {
  auto slices = std::make_shared<CopySlices>(base, self, fn, self_edge);
  set_history(base, slices, slices->add_output(base));
  derive_grad_fn_from_base(self);
}

Tensor as_strided_backward(const Tensor& grad, const Geometry& base, const Geometry& view) {
  const int64_t n = span(base, view);
  Tensor flat = ops::zeros(std::vector<int64_t>{n}, grad.dtype(), grad.device());
  if (non_overlapping(view)) {
    Tensor slot = restride(flat, view, view.offset - base.offset);
    ops::copy_(slot, grad);
  } else {  // several view elements share one storage element: their gradients add up
    const Tensor all = ops::arange(Scalar(n), ScalarType::Int64);
    const Tensor idx = all.as_strided(view.sizes, view.strides, view.offset - base.offset).clone();
    const std::vector<int64_t> flat_shape{-1};
    flat = ops::index_add(flat, 0, ops::reshape(idx, flat_shape), ops::reshape(grad, flat_shape));
  }
  return restride(flat, base, 0);
}

void record_as_strided(const OpEntry& op, Stack& stack) {
  const Tensor self = stack.at(0).to_tensor();
  const Geometry in = Geometry::of(self);
  const Edge edge = gradient_edge(self);
  {
    LayerGuard below(DispatchLayer::Autograd, LayerGuard::Exclude);
    redispatch(DispatchLayer::Autograd, op, stack);
  }
  const Tensor out = stack.at(0).to_tensor();
  auto node = std::make_shared<AsStridedBackward>(in, Geometry::of(out));
  node->next_edges.push_back(edge);
  set_history(out, node, node->add_output(out));
}

std::vector<Tensor> AsStridedBackward::apply(std::vector<Tensor>&& grads) {
  return {as_strided_backward(grads.at(0), base_, view_)};
}

CopySlices::CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn,
                       int self_edge)
    : base_(Geometry::of(base)),
      view_(Geometry::of(view)),
      fn_(std::move(fn)),
      self_edge_(self_edge) {
  next_edges.push_back(gradient_edge(base));
  for (size_t i = 0; i < fn_->next_edges.size(); ++i) {
    if (static_cast<int>(i) == self_edge_) {
      fn_edge_to_mine_.push_back(-1);
      continue;
    }
    fn_edge_to_mine_.push_back(static_cast<int>(next_edges.size()));
    next_edges.push_back(fn_->next_edges[i]);
  }
}

std::vector<Tensor> CopySlices::apply(std::vector<Tensor>&& grads) {
  const Tensor& grad = grads.at(0);
  std::vector<Tensor> out(next_edges.size());
  // The base's gradient, in a buffer of the base's strides; the view's part of it is what fn
  // turns into the gradients of its inputs.
  const int64_t n = span(base_, view_);
  Tensor flat = ops::empty(std::vector<int64_t>{n}, grad.dtype(), grad.device());
  Tensor result = restride(flat, base_, 0);
  ops::copy_(result, grad);
  Tensor slot = restride(result, view_, view_.offset - base_.offset);
  std::vector<Tensor> fn_grads(fn_->num_outputs());
  fn_grads.at(0) = ops::clone(slot);
  std::vector<Tensor> res = fn_->apply(std::move(fn_grads));
  if (self_edge_ >= 0 && res.at(self_edge_).defined())
    ops::copy_(slot, res[self_edge_]);
  else
    ops::zero_(slot);
  out[0] = result;
  for (size_t i = 0; i < res.size() && i < fn_edge_to_mine_.size(); ++i)
    if (fn_edge_to_mine_[i] >= 0) out[fn_edge_to_mine_[i]] = std::move(res[i]);
  return out;
}

}  // namespace ampjit::autograd
