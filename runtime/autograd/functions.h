// The engine's own nodes: AccumulateGrad (a leaf's .grad) and the node of an op without a
// derivative (an error when reached). The ops' nodes are in autograd_layer.cpp.
#pragma once
#include <string>

#include "runtime/autograd/autograd.h"

namespace ampjit::autograd {

// Adds the gradient into the leaf's .grad (torch's AccumulateGrad): the first gradient is kept
// (stolen when nothing else holds it, else copied in the leaf's layout), later ones are added in
// place, or out of place under create_graph so the sum keeps its history.
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(Tensor variable);
  std::string name() const override { return "torch::autograd::AccumulateGrad"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;
  const Tensor& variable() const { return variable_; }

 private:
  Tensor variable_;
};

// Where an op that has no derivative was recorded: backward through it raises torch's error.
class NotImplementedNode : public Node {
 public:
  explicit NotImplementedNode(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "NotImplemented"; }
  std::vector<Tensor> apply(std::vector<Tensor>&& grads) override;

 private:
  std::string op_;
};

}  // namespace ampjit::autograd
