// A tensor an op's backward needs, kept from its forward (torch's SavedVariable).
#pragma once
#include <memory>

#include "runtime/tensor.h"

namespace ampjit::autograd {

class Node;

class SavedVariable {
 public:
  SavedVariable() = default;
  // `is_output`: t is an output of the node that saves it. The node keeps an alias without its
  // history then (a tensor holding its own grad_fn would never be freed) and gives the history back
  // on unpack.
  SavedVariable(const Tensor& t, bool is_output);

  // The saved tensor; torch's errors when it was freed (backward ran without retain_graph) or its
  // storage was written since it was saved (Note [Version counter]). `owner` is the node that
  // saved it, for outputs.
  Tensor unpack(const std::shared_ptr<Node>& owner = nullptr) const;
  void reset();
  bool was_defined() const { return was_defined_; }

 private:
  Tensor data_;
  uint32_t saved_version_ = 0;
  uint32_t output_nr_ = 0;
  bool is_output_ = false;
  bool was_defined_ = false;
  bool freed_ = false;
};

// torch's legacy type string of a tensor, as its messages print it: "torch.FloatTensor".
std::string legacy_type_name(const Tensor& t);

}  // namespace ampjit::autograd
