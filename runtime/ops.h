// The C++ eager API: one function per op-table entry, generated from the .def files.
//   Tensor y = ampjit::ops::add(x, w);           // aten::add.Tensor, alpha defaulted
//   auto r = ampjit::ops::max_dim(x, 1);         // r.tensor(0), r.tensor(1)
// Arguments are positional in schema order; trailing arguments take their defaults. Every call
// goes through the dispatcher (autocast, tracer, kernel), like a torch call.
#pragma once
#include "runtime/dispatcher.h"

namespace ampjit {

class OpResult {
 public:
  explicit OpResult(Stack s) : s_(std::move(s)) {}
  operator Tensor() const { return s_.at(0).to_tensor(); }
  Tensor tensor(size_t i = 0) const { return s_.at(i).to_tensor(); }
  const IValue& value(size_t i = 0) const { return s_.at(i); }
  size_t size() const { return s_.size(); }
  Stack& stack() { return s_; }

 private:
  Stack s_;
};

// Fills the defaults of trailing arguments and dispatches.
OpResult call_op(const OpEntry& op, Stack stack);
// By name, with Python-style binding (keyword arguments, conversions, type checks).
OpResult call_op(std::string_view full_name, std::vector<IValue> args,
                 std::vector<Kwarg> kwargs = {});

namespace ops {
#define AMPJIT_OP(ID, FLAGS, SCHEMA)                  \
  template <typename... A>                            \
  inline OpResult ID(A&&... args) {                   \
    Stack s;                                          \
    s.reserve(sizeof...(A) + 2);                      \
    (s.emplace_back(std::forward<A>(args)), ...);     \
    return call_op(op_entry(OpId::ID), std::move(s)); \
  }
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
}  // namespace ops

}  // namespace ampjit
