// Autograd: reverse-mode differentiation of eager, scripted and traced code.
//
// Note [Autograd]
// The shape is torch's. A tensor that requires grad is either a leaf (made by the user, with
// requires_grad set) or the output of a recorded op, whose `grad_fn` is the Node that turns the
// gradient of the op's outputs into gradients of its inputs. Each Node holds `next_edges`, one per
// differentiable input: the grad_fn of that input (and which of its outputs the input was), or,
// for a leaf, the leaf's AccumulateGrad, which adds the gradient into `.grad`.
//
// Recording is a dispatcher layer (autograd_layer.cpp), below the autocast layer and the tracer,
// so every op -- called from Python, from C++ (`ampjit::ops`), or by the interpreter running a
// scripted or traced graph -- is recorded the same way, and the casts autocast inserts are
// recorded like any other op (their gradient is cast back: a float32 weight gets a float32
// gradient). What an op's backward computes is data: one declaration per op in derivatives.cpp
// (Note [Derivatives as data]), written in terms of ops, so backward itself is recorded when
// create_graph asks for it (double backward).
//
// The engine (engine.cpp) runs a backward pass on the calling thread: it counts the dependencies
// of every node reachable from the roots, runs the ready nodes latest-created first (torch's
// order), sums the gradients arriving at each node input, checks each one against the metadata of
// the tensor it is the gradient of (dtype cast, broadcast summed back, as torch's
// validate_outputs), and frees each node's saved tensors after it ran unless retain_graph.
// Saved tensors (saved_variable.h) remember the version of their storage (Note [Version counter]
// in runtime/tensor.h) and refuse, with torch's message, to be used after an in-place change.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace ampjit::autograd {

class Node;

// Where a gradient goes: input `input_nr` of `fn` (a forward output of the op fn records).
struct Edge {
  std::shared_ptr<Node> fn;
  uint32_t input_nr = 0;
  bool valid() const { return fn != nullptr; }
};

// What a gradient must look like: the tensor it is the gradient of (torch's InputMetadata).
struct TensorMeta {
  DimVector sizes;
  ScalarType dtype = ScalarType::Float32;
  Device device;
};

// A tensor hook: sees the gradient, may return a replacement (an undefined Tensor keeps it).
using TensorHook = std::function<Tensor(const Tensor&)>;
struct HookEntry {
  uint64_t id;
  uint32_t output_nr;
  TensorHook fn;
};

class Node : public std::enable_shared_from_this<Node> {
 public:
  Node();
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // torch's grad_fn name: "MulBackward0", "AccumulateGrad".
  virtual std::string name() const = 0;
  // The gradients of the forward outputs (undefined where none arrived) -> one per next edge.
  virtual std::vector<Tensor> apply(std::vector<Tensor>&& grads) = 0;
  // Drops the saved tensors (after a backward without retain_graph).
  virtual void release_saved() {}

  // Records the metadata of a forward output; returns its number.
  uint32_t add_output(const Tensor& t);
  size_t num_outputs() const { return out_meta.size(); }

  std::vector<Edge> next_edges;
  std::vector<TensorMeta> out_meta;
  // Hooks of non-leaf outputs (retain_grad's among them), run in registration order on the
  // gradient of their output before apply.
  std::vector<HookEntry> pre_hooks;
  uint64_t sequence_nr;
  std::mutex hooks_mutex;
};

// Per tensor, made when a tensor first needs one (requires_grad set, an op recorded, a hook).
struct AutogradMeta {
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  std::weak_ptr<Node> grad_accumulator;  // a leaf's AccumulateGrad while a graph holds it
  uint32_t output_nr = 0;
  bool retains_grad = false;
  uint64_t retain_hook_id = 0;   // retain_grad's hook, on grad_fn: it follows grad_fn (set_history)
  std::vector<HookEntry> hooks;  // a leaf's hooks (AccumulateGrad runs them)
  std::mutex mutex;              // .grad accumulation
  std::mutex view_mutex;         // a view's grad_fn derived afresh (views.cpp)
};

AutogradMeta* meta(const Tensor& t);  // null when the tensor has none
AutogradMeta& ensure_meta(const Tensor& t);
std::shared_ptr<Node> grad_fn(const Tensor& t);
uint32_t output_nr(const Tensor& t);
// requires_grad_ with torch's checks (non-leaf, non-floating).
void set_requires_grad(const Tensor& t, bool requires_grad);
// Makes `t` output `nr` of `fn` (a non-leaf that requires grad).
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn, uint32_t nr);
// The edge a gradient of `t` flows along: its grad_fn, or its AccumulateGrad when a leaf that
// requires grad; invalid when it does not require grad.
Edge gradient_edge(const Tensor& t);

// .grad: undefined when none; setting checks dtype, device and shape as torch does.
Tensor grad(const Tensor& t);
void set_grad(const Tensor& t, const Tensor& g);

// register_hook / retain_grad. A hook is removed through its handle (remove() is idempotent).
struct HookHandle {
  std::weak_ptr<Node> node;
  std::weak_ptr<AutogradMeta> leaf;
  uint64_t id = 0;
  void remove() const;
};
HookHandle register_hook(const Tensor& t, TensorHook fn);
void retain_grad(const Tensor& t);
bool retains_grad(const Tensor& t);

// The engine. `backward`: tensor.backward / torch.autograd.backward (gradients accumulate into
// the leaves' .grad, or only those of `inputs` when given). `grad`: torch.autograd.grad (the
// gradients of `outputs` with respect to `inputs`, returned; no .grad changes).
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph,
              const std::vector<Tensor>& inputs = {});
std::vector<Tensor> grad(const std::vector<Tensor>& outputs,
                         const std::vector<Tensor>& grad_outputs, const std::vector<Tensor>& inputs,
                         std::optional<bool> retain_graph, bool create_graph, bool allow_unused);

// Node for a user function (torch.autograd.Function): `backward` gets the output gradients and
// returns one gradient per differentiable input, in next_edges order.
class FunctionNode : public Node {
 public:
  using Backward = std::function<std::vector<Tensor>(std::vector<Tensor>&&)>;
  FunctionNode(std::string name, Backward backward, std::function<void()> release)
      : name_(std::move(name)), backward_(std::move(backward)), release_(std::move(release)) {}
  std::string name() const override { return name_; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override {
    return backward_(std::move(grads));
  }
  void release_saved() override {
    if (release_) release_();
  }

 private:
  std::string name_;
  Backward backward_;
  std::function<void()> release_;
};

// Connects a user function's outputs to `node`: edges from `inputs` (those that require grad),
// outputs made outputs of the node, except the non-differentiable ones. An output that is one of
// the inputs unchanged (not marked dirty) becomes a new alias first, as in torch. Returns the
// outputs to hand back.
std::vector<Tensor> record_function(const std::shared_ptr<Node>& node,
                                    const std::vector<Tensor>& inputs, std::vector<Tensor> outputs,
                                    const std::vector<Tensor>& dirty,
                                    const std::vector<Tensor>& non_differentiable);

// The storage version of t (Note [Version counter]); torch's `Tensor._version`.
uint32_t version(const Tensor& t);

// Installs the autograd dispatcher layer (idempotent; the library does it at load time).
void install_autograd_layer();

}  // namespace ampjit::autograd
