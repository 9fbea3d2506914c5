// The derivatives of ops, as data (Note [Derivatives as data]).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/autograd/autograd.h"
#include "runtime/autograd/saved_variable.h"
#include "runtime/op_table.h"

namespace ampjit::autograd {

class BackwardContext;

// Note [Derivatives as data]
// One declaration per op, in derivatives.cpp, in the shape of torch's derivatives.yaml:
//   {OpId::mul, "self other", [](BackwardContext& b) {
//      b.set("self", ops::mul(b.grad(), b.in("other")));
//      b.set("other", ops::mul(b.grad(), b.in("self"))); }},
// - the op (its in-place variant, mul_, shares it: Note [Derived op variants]);
// - `saves`: the arguments (by schema name) and "result" the formula reads as tensors; the
//   others are not kept alive by the graph. Every argument that is not a tensor is kept, and the
//   sizes and dtype of every tensor argument, so a formula can always ask for them;
// - the formula: from the gradients of the outputs (`grad(i)`) it sets the gradient of each
//   differentiable argument that needs one (`needs(name)`), written with ops, so that under
//   create_graph backward is itself recorded.
// Broadcasting and dtypes are the engine's (validate in engine.cpp): a formula may return the
// gradient at the output's shape and dtype, and it is summed and cast to the argument's.
//
// Two other kinds of declaration: a formula of nullptr marks an op whose outputs never require
// grad (detach, the *_like factories, random draws); and an op may instead be decomposed while it
// is recorded (`decompose`: cross_entropy_loss is recorded as log_softmax and nll_loss), as
// torch's CompositeImplicitAutograd ops are. An op with no declaration is still recorded: a
// composite op through the ops it calls, any other op as a node that raises "the derivative for
// 'aten::x' is not implemented." when backward reaches it, never as silently missing gradients.
using Formula = void (*)(BackwardContext&);
using Decomposition = void (*)(const OpEntry& op, Stack& stack);

struct Derivative {
  OpId op;
  const char* saves = "";
  Formula formula = nullptr;
  Decomposition decompose = nullptr;
  // `saves` resolved against the op's schema when the table is first used (an unknown name is an
  // error then): bit i set when argument i is saved.
  uint64_t saved_args = 0;
  bool saves_result = false;
};

// The declaration for an op (an in-place variant's is its functional sibling's); nullptr when none.
const Derivative* derivative_for(const OpEntry& op);
// The ops that have declarations (tests enumerate them for the gradient checks).
std::vector<const OpEntry*> ops_with_derivatives();

// What a formula sees (see Note [Derivatives as data]).
class BackwardContext {
 public:
  // The gradient of output i (zeros where none arrived, at the output's metadata).
  const Tensor& grad(size_t i = 0) const { return grads_.at(i); }
  size_t num_grads() const { return grads_.size(); }
  // A saved tensor argument (declared in `saves`); undefined for a None Tensor?.
  Tensor in(const char* name) const;
  std::vector<Tensor> in_list(const char* name) const;
  // Output i, when "result" is declared.
  Tensor result(size_t i = 0) const;
  // Any non-tensor argument.
  const IValue& arg(const char* name) const;
  // The sizes / dtype of a tensor argument (element `i` of a Tensor[]).
  IntArrayRef sizes(const char* name, size_t i = 0) const;
  ScalarType dtype(const char* name, size_t i = 0) const;
  Device device(const char* name, size_t i = 0) const;
  size_t list_size(const char* name) const;
  bool defined(const char* name) const;
  // Whether argument `name` (any element of a Tensor[]) needs a gradient.
  bool needs(const char* name) const;
  void set(const char* name, Tensor g);
  void set_list(const char* name, std::vector<Tensor> gs);

 private:
  friend class OpNode;
  BackwardContext(class OpNode& node, std::vector<Tensor> grads);
  size_t index(const char* name) const;
  class OpNode& node_;
  std::vector<Tensor> grads_;
  std::vector<Tensor> edge_grads_;  // one per next edge of the node: what set() fills
};

// Sums `g` over the dimensions it was broadcast along, to `sizes` (torch's at::sum_to).
Tensor sum_to(const Tensor& g, IntArrayRef sizes);

}  // namespace ampjit::autograd
