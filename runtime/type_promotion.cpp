// See Note [Result type] in type_promotion.h.
#include "runtime/type_promotion.h"

#include "runtime/default_dtype.h"

namespace ampjit {

namespace {
int category(ScalarType t) {
  if (t == ScalarType::Undefined) return -1;
  if (t == ScalarType::Bool) return 0;
  if (is_integral(t)) return 1;
  return 2;
}

ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (is_floating(higher)) return higher;
  if (higher == ScalarType::Bool || is_floating(lower)) return promote_types(higher, lower);
  if (higher != ScalarType::Undefined) return higher;
  return lower;
}
}  // namespace

void ResultTypeState::add(ScalarType t, int64_t dim, bool wrapped) {
  if (wrapped) {
    if (is_floating(t)) t = default_float_dtype();
    wrapped_ = promote_types(wrapped_, t);
  } else if (dim == 0) {
    zero_ = promote_types(zero_, t);
  } else {
    dim_ = promote_types(dim_, t);
  }
}

void ResultTypeState::add(const Tensor& t) {
  add(t.dtype(), t.dim(), t.impl()->is_wrapped_number);
}

void ResultTypeState::add(const Scalar& s) {
  add(s.type(), 0, true);
}

ScalarType ResultTypeState::result() const {
  return combine_categories(dim_, combine_categories(zero_, wrapped_));
}

ScalarType result_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype() && !a.impl()->is_wrapped_number && !b.impl()->is_wrapped_number)
    return a.dtype();
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

ScalarType result_type(const Tensor& a, const Scalar& b) {
  ResultTypeState s;
  s.add(a);
  s.add(b);
  return s.result();
}

ScalarType result_type(std::span<const Tensor> tensors) {
  ResultTypeState s;
  for (const Tensor& t : tensors) s.add(t);
  return s.result();
}

bool can_cast(ScalarType from, ScalarType to) {
  return category(from) <= category(to);
}

}  // namespace ampjit
