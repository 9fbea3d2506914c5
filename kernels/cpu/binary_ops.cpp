// Binary arithmetic kernels (runtime/ops/pointwise.def): add, ... with broadcasting, type
// promotion (runtime/type_promotion.h) and Python-scalar overloads.
#include "kernels/cpu/elementwise.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

Tensor add_k(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  AMPJIT_CHECK(!alpha.is_floating() || is_floating(rt),
               "For integral input tensors, argument alpha must not be a floating point number.");
  return dispatch_numeric(rt, "add", [&]<typename T>() {
    using M = opmath_t<T>;
    const M al = alpha.to<M>();
    if (al == M(1)) return map<T>("add", std::array{a, b}, rt, [](M x, M y) { return x + y; });
    return map<T>("add", std::array{a, b}, rt, [al](M x, M y) { return x + al * y; });
  });
}
Tensor add_scalar_k(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  const ScalarType rt = result_type(a, b);
  return dispatch_numeric(rt, "add", [&]<typename T>() {
    using M = opmath_t<T>;
    const M v = b.to<M>() * alpha.to<M>();
    return map<T>("add", std::array{a}, rt, [v](M x) { return x + v; });
  });
}
Tensor add_inplace_k(Tensor self, const Tensor& b, const Scalar& alpha) {
  return write_result(self, add_k(self, b, alpha), "add_", true);
}
Tensor add_out_k(const Tensor& a, const Tensor& b, const Scalar& alpha, Tensor out) {
  return write_result(out, add_k(a, b, alpha), "add", false);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(add, cpu::add_k)
AMPJIT_KERNEL(add_Scalar, cpu::add_scalar_k)
AMPJIT_KERNEL(add_, cpu::add_inplace_k)
AMPJIT_KERNEL(add_out, cpu::add_out_k)
