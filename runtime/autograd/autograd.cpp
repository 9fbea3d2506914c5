// Autograd metadata, leaves and hooks (see autograd.h, Note [Autograd]).
#include "runtime/autograd/autograd.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "runtime/autograd/functions.h"
#include "runtime/autograd/views.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"

namespace ampjit::autograd {

namespace {
std::atomic<uint64_t> g_next_sequence_nr{0};
std::atomic<uint64_t> g_next_hook_id{1};
}  // namespace

Node::Node() : sequence_nr(g_next_sequence_nr.fetch_add(1, std::memory_order_relaxed)) {}

uint32_t Node::add_output(const Tensor& t) {
  out_meta.push_back(TensorMeta{DimVector(t.sizes()), t.dtype(), t.device()});
  return static_cast<uint32_t>(out_meta.size() - 1);
}

AutogradMeta* meta(const Tensor& t) {
  return t.impl()->autograd.get();
}

// Made once, under a lock: threads recording ops on one shared leaf may ask for its meta at the
// same time. A tensor that requires grad gets its meta when it is made to (set_requires_grad),
// before it is shared, so the lock is taken at most once per tensor in practice.
AutogradMeta& ensure_meta(const Tensor& t) {
  auto& m = t.impl()->autograd;
  if (!m) {
    static std::mutex creating;
    std::lock_guard<std::mutex> lock(creating);
    if (!m) m = std::make_shared<AutogradMeta>();
  }
  return *m;
}

std::shared_ptr<Node> grad_fn(const Tensor& t) {
  if (is_tracked_view(t)) refresh_view_grad_fn(t);
  AutogradMeta* m = meta(t);
  return m ? m->grad_fn : nullptr;
}

uint32_t output_nr(const Tensor& t) {
  if (is_tracked_view(t)) refresh_view_grad_fn(t);
  AutogradMeta* m = meta(t);
  return m ? m->output_nr : 0;
}

void set_requires_grad(const Tensor& t, bool requires_grad) {
  AMPJIT_CHECK(t.is_leaf() || requires_grad == t.requires_grad(),
               "you can only change requires_grad flags of leaf variables.{}",
               requires_grad ? ""
                             : " If you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().");
  AMPJIT_CHECK(!requires_grad || is_floating(t.dtype()),
               "only Tensors of floating point and complex dtype can require gradients");
  AMPJIT_CHECK(!requires_grad || !t.impl()->is_inference || inference_mode_enabled(),
               "Setting requires_grad=True on inference tensor outside InferenceMode is not "
               "allowed.");
  t.impl()->requires_grad = requires_grad;
  if (requires_grad) ensure_meta(t);
}

void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t nr) {
  AutogradMeta& m = ensure_meta(t);
  // torch 1.13 moves retain_grad's hook to the new grad_fn (an in-place op, a view's refresh):
  // .grad is the gradient of what the tensor holds now. Other hooks stay with the old value.
  if (m.retains_grad && m.grad_fn && m.grad_fn != fn) {
    std::optional<HookEntry> moved;
    {
      std::lock_guard<std::mutex> lock(m.grad_fn->hooks_mutex);
      auto& hooks = m.grad_fn->pre_hooks;
      auto it = std::find_if(hooks.begin(), hooks.end(),
                             [&](const HookEntry& h) { return h.id == m.retain_hook_id; });
      if (it != hooks.end()) {
        moved = std::move(*it);
        hooks.erase(it);
      }
    }
    if (moved) {
      moved->output_nr = nr;
      std::lock_guard<std::mutex> lock(fn->hooks_mutex);
      fn->pre_hooks.push_back(std::move(*moved));
    }
  }
  m.grad_fn = fn;
  m.output_nr = nr;
  t.impl()->requires_grad = true;
  t.impl()->is_leaf = false;
}

Edge gradient_edge(const Tensor& t) {
  if (is_tracked_view(t)) refresh_view_grad_fn(t);
  AutogradMeta* m = meta(t);
  if (m && m->grad_fn) return Edge{m->grad_fn, m->output_nr};
  if (!t.requires_grad()) return Edge{};
  AutogradMeta& lm = ensure_meta(t);
  std::lock_guard<std::mutex> lock(lm.mutex);
  std::shared_ptr<Node> acc = lm.grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t);
    lm.grad_accumulator = acc;
  }
  return Edge{acc, 0};
}

Tensor grad(const Tensor& t) {
  AutogradMeta* m = meta(t);
  return m ? m->grad : Tensor();
}

void set_grad(const Tensor& t, const Tensor& g) {
  if (g.defined()) {
    AMPJIT_CHECK(!g.is_same(t), "can't assign Variable as its own grad");
    AMPJIT_CHECK(g.dtype() == t.dtype(), "assigned grad has data of a different type");
    AMPJIT_CHECK(g.device() == t.device(), "assigned grad has data located on a different device");
    AMPJIT_CHECK(g.sizes().size() == t.sizes().size() &&
                     std::equal(g.sizes().begin(), g.sizes().end(), t.sizes().begin()),
                 "assigned grad has data of a different size");
  }
  AutogradMeta& m = ensure_meta(t);
  std::lock_guard<std::mutex> lock(m.mutex);
  m.grad = g;
}

void HookHandle::remove() const {
  if (auto n = node.lock()) {
    std::lock_guard<std::mutex> lock(n->hooks_mutex);
    std::erase_if(n->pre_hooks, [&](const HookEntry& h) { return h.id == id; });
  }
  if (auto m = leaf.lock()) {
    std::lock_guard<std::mutex> lock(m->mutex);
    std::erase_if(m->hooks, [&](const HookEntry& h) { return h.id == id; });
  }
}

HookHandle register_hook(const Tensor& t, TensorHook fn) {
  AMPJIT_CHECK(t.requires_grad(),
               "cannot register a hook on a tensor that doesn't require gradient");
  const uint64_t id = g_next_hook_id.fetch_add(1, std::memory_order_relaxed);
  HookHandle h;
  h.id = id;
  if (std::shared_ptr<Node> fn_node = grad_fn(t)) {
    std::lock_guard<std::mutex> lock(fn_node->hooks_mutex);
    fn_node->pre_hooks.push_back(HookEntry{id, output_nr(t), std::move(fn)});
    h.node = fn_node;
  } else {
    AutogradMeta& m = ensure_meta(t);
    std::lock_guard<std::mutex> lock(m.mutex);
    m.hooks.push_back(HookEntry{id, 0, std::move(fn)});
    h.leaf = t.impl()->autograd;
  }
  return h;
}

// torch 1.13's retain_grad is a hook like any other, run in registration order: registered
// before a hook that changes the gradient, it keeps the gradient as it was.
void retain_grad(const Tensor& t) {
  AMPJIT_CHECK(t.requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  if (!grad_fn(t)) return;  // a leaf keeps its .grad anyway (a view may take its grad_fn first)
  AutogradMeta& m = ensure_meta(t);
  if (m.retains_grad) return;
  m.retains_grad = true;
  std::weak_ptr<AutogradMeta> weak = t.impl()->autograd;
  const uint64_t id = g_next_hook_id.fetch_add(1, std::memory_order_relaxed);
  m.retain_hook_id = id;
  std::lock_guard<std::mutex> lock(m.grad_fn->hooks_mutex);
  m.grad_fn->pre_hooks.push_back(HookEntry{id, m.output_nr, [weak](const Tensor& g) -> Tensor {
                                             auto meta = weak.lock();
                                             if (!meta) return Tensor();
                                             std::lock_guard<std::mutex> guard(meta->mutex);
                                             if (!meta->grad.defined())
                                               meta->grad = grad_enabled() ? g : g.clone();
                                             else
                                               meta->grad = ops::add(meta->grad, g);
                                             return Tensor();
                                           }});
}

bool retains_grad(const Tensor& t) {
  AutogradMeta* m = meta(t);
  return m && m->retains_grad;
}

uint32_t version(const Tensor& t) {
  return t.impl()->storage->version();
}

std::vector<Tensor> record_function(const std::shared_ptr<Node>& node,
                                    const std::vector<Tensor>& inputs, std::vector<Tensor> outputs,
                                    const std::vector<Tensor>& dirty,
                                    const std::vector<Tensor>& non_differentiable) {
  for (const Tensor& in : inputs)
    if (in.defined() && in.requires_grad()) node->next_edges.push_back(gradient_edge(in));
  auto contains = [](const std::vector<Tensor>& v, const Tensor& t) {
    for (const Tensor& x : v)
      if (x.is_same(t)) return true;
    return false;
  };
  for (Tensor& out : outputs) {
    if (!out.defined()) {
      node->out_meta.push_back(TensorMeta{});
      continue;
    }
    if (contains(non_differentiable, out)) {
      node->out_meta.push_back(TensorMeta{DimVector(out.sizes()), out.dtype(), out.device()});
      if (!contains(inputs, out)) out.impl()->requires_grad = false;
      continue;
    }
    if (contains(dirty, out)) {
      AMPJIT_CHECK(!(out.is_leaf() && out.requires_grad()),
                   "a leaf Variable that requires grad has been used in an in-place operation.");
    } else if (contains(inputs, out)) {
      out = Tensor::make_view(out, out.sizes(), out.strides(), out.storage_offset());
    }
    if (!is_floating(out.dtype())) {
      node->out_meta.push_back(TensorMeta{DimVector(out.sizes()), out.dtype(), out.device()});
      continue;
    }
    set_history(out, node, node->add_output(out));
  }
  return outputs;
}

// ---- AccumulateGrad --------------------------------------------------------------------------

namespace {
// Whether nothing but `g` holds its memory: its TensorImpl and its storage (a view's storage is
// held by its base too, when only the view holds the base).
bool sole_owner(const Tensor& g) {
  const TensorImpl* i = g.impl();
  if (i->use_count() != 1) return false;
  if (!i->view_base) return i->storage->use_count() == 1;
  return i->view_base->use_count() == 1 && i->storage->use_count() == 2;
}
}  // namespace

AccumulateGrad::AccumulateGrad(Tensor variable) : variable_(std::move(variable)) {
  sequence_nr = UINT64_MAX;  // run as soon as ready, as torch's
  add_output(variable_);
}

std::vector<Tensor> AccumulateGrad::apply(std::vector<Tensor>&& grads) {
  Tensor g = std::move(grads.at(0));
  if (!g.defined()) return {};
  AutogradMeta& m = ensure_meta(variable_);
  std::lock_guard<std::mutex> lock(m.mutex);
  if (!m.grad.defined()) {
    if (grad_enabled()) {
      m.grad = g;  // create_graph: keep the gradient's history
    } else if (sole_owner(g) && !g.requires_grad() && g.storage_offset() == 0 &&
               std::equal(g.strides().begin(), g.strides().end(), variable_.strides().begin()) &&
               g.strides().size() == variable_.strides().size()) {
      g.impl()->view_base = nullptr;  // a view of a base nothing else holds: no view any more
      m.grad = std::move(g);          // nothing else holds it: steal, as torch does
    } else {
      Tensor c = ops::empty_like(variable_);
      c.copy_(g);
      m.grad = c;
    }
  } else if (grad_enabled()) {
    m.grad = ops::add(m.grad, g);
  } else {
    ops::add_(m.grad, g);
  }
  return {};
}

std::vector<Tensor> NotImplementedNode::apply(std::vector<Tensor>&&) {
  throw NotImplementedError(fmt::format("the derivative for '{}' is not implemented.", op_));
}

}  // namespace ampjit::autograd
