// torch.result_type: the dtype an op computes in, from its tensor and scalar operands.
//
// Note [Result type]
// Operands fall into three priority groups: tensors with dimensions, zero-dim tensors, and
// wrapped numbers (Python scalars). Each group is promoted on its own; then a lower group only
// matters when it is of a higher *category* (bool < integral < floating) than the higher group:
// int32 tensor + 2.5 -> float32 (default float dtype), float16 tensor + 2.5 -> float16,
// uint8 tensor + 1000 -> uint8, int64 zero-dim tensor + float16 tensor -> float16.
// A wrapped Python float counts as the default dtype (float32), a Python int as int64.
#pragma once
#include <span>

#include "runtime/scalar.h"
#include "runtime/tensor.h"

namespace ampjit {

class ResultTypeState {
 public:
  void add(const Tensor& t);
  void add(const Scalar& s);
  void add(ScalarType dtype, int64_t dim, bool wrapped_number);
  ScalarType result() const;

 private:
  ScalarType dim_ = ScalarType::Undefined;
  ScalarType zero_ = ScalarType::Undefined;
  ScalarType wrapped_ = ScalarType::Undefined;
};

ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
ScalarType result_type(std::span<const Tensor> tensors);
// Whether a value of dtype `from` may be written to an output of dtype `to` (torch.can_cast).
bool can_cast(ScalarType from, ScalarType to);

}  // namespace ampjit
