// Views under autograd: which tensors are views of which, and what an in-place change through a
// view does to its base's history (Note [Views and in-place changes]).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/autograd/autograd.h"
#include "runtime/op_table.h"

namespace ampjit::autograd {

// Note [Views and in-place changes]
// torch's model, kept whole. A view made by a view op (aten::view, select, slice, transpose,
// as_strided, chunk, ..., any op whose schema returns `Tensor(a)` aliasing `self`, detach aside)
// records its *root base* (TensorImpl::view_base: the base's own base when the base is itself a
// view), how it was made (CreationMeta) and the storage version its grad_fn was derived at. Views
// a kernel makes internally (Tensor::view, the result of linear, ...) are not tracked: nothing
// outside the kernel sees their base, so an in-place change of one is an in-place change of a
// plain tensor, as torch's _unsafe_view.
// - A view requires grad when its base does (Tensor::requires_grad).
// - An in-place op on a tracked view, recorded, becomes part of the base's history: the op's node
//   `fn` is recorded as on the view, then wrapped in a CopySlices node that becomes the base's
//   grad_fn. Backward through CopySlices takes the base's gradient, runs fn on the slice the view
//   covers and writes fn's gradient for the view's old value back into that slice; the rest of the
//   base's gradient passes through to the base's old history, fn's other inputs get fn's.
// - A view whose storage was written since its grad_fn was set (through the base or any other
//   view: the version counter says so) takes a fresh grad_fn when next asked for one: an
//   AsStridedBackward0 from the base's current history, so it reads what the base now holds.
// - torch's refusals, with its messages: an in-place change of a view of a leaf that requires
//   grad, of one output of a function returning several views (unbind, split, chunk), and of a
//   view made in no_grad mode (directly, or through its base once grad_fn is asked for).
enum class CreationMeta : uint8_t { Default = 0, MultiOutput, NoGradMode, InferenceMode };

// Where a tensor's elements lie in its storage (torch's TensorGeometry).
struct Geometry {
  DimVector sizes;
  DimVector strides;
  int64_t offset = 0;
  static Geometry of(const Tensor& t) {
    return Geometry{DimVector(t.sizes()), DimVector(t.strides()), t.storage_offset()};
  }
};

// Whether `t` is a view a view op made (Tensor._is_view()), and its root base (Tensor._base).
inline bool is_tracked_view(const Tensor& t) {
  return static_cast<bool>(t.impl()->view_base);
}
Tensor view_base(const Tensor& t);

// After a view op ran (dispatched: the autograd layer calls it): marks the outputs that alias
// `self` as its views. `multi_output`: the op returns a list of views.
void track_views(const Tensor& self, Stack& outputs, bool multi_output);

// The grad_fn of a tracked view, made afresh from its base's history when the storage was written
// since it was last set (see the Note); checks CreationMeta as torch does then.
void refresh_view_grad_fn(const Tensor& t);

// For an in-place op about to be recorded on `self`: torch's checks (leaf, view of a leaf, the
// CreationMeta refusals). Returns the root base when `self` is a tracked view (so the op must go
// through rebase_view), else an undefined tensor.
Tensor check_inplace(const Tensor& self);

// Makes `fn`, just recorded for an in-place op on the view `self` (whose argument `self` has edge
// `self_edge` of fn, -1 when none), part of `base`'s history (a CopySlices node), and gives `self`
// a grad_fn from it.
void rebase_view(const Tensor& self, const Tensor& base, const std::shared_ptr<Node>& fn,
                 int self_edge);

// The gradient of a base from the gradient of its view: zeros at the base's geometry with the
// view's elements filled in (summed where the view's elements overlap). Recorded under grad mode,
// so double backward goes through it.
Tensor as_strided_backward(const Tensor& grad, const Geometry& base, const Geometry& view);

// The autograd layer's recording of aten::as_strided (a view of any geometry of its input's
// storage): an AsStridedBackward0 node.
void record_as_strided(const OpEntry& op, Stack& stack);

// The node of a view whose base was changed in place, and of aten::as_strided.
class AsStridedBackward : public Node {
 public:
  AsStridedBackward(Geometry base, Geometry view)
      : base_(std::move(base)), view_(std::move(view)) {}
  std::string name() const override { return "AsStridedBackward0"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

 private:
  Geometry base_, view_;
};

// The base's node after an in-place change through a view (torch's CopySlices).
class CopySlices : public Node {
 public:
  CopySlices(const Tensor& base, const Tensor& view, std::shared_ptr<Node> fn, int self_edge);
  std::string name() const override { return "torch::autograd::CopySlices"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  void release_saved() override { fn_->release_saved(); }

 private:
  Geometry base_, view_;
  std::shared_ptr<Node> fn_;
  // Per edge of fn_: the index of the matching edge of this node (-1 for the view's own edge,
  // whose gradient goes back into the base's).
  std::vector<int> fn_edge_to_mine_;
  int self_edge_;
};

}  // namespace ampjit::autograd
