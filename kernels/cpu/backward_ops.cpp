// Pointwise backward kernels autograd's formulas call on the CPU when backward is not itself
// recorded (runtime/autograd/derivatives.cpp): one pass where the composite formula takes several
// ops (ReLU's two, GELU's ten). Double backward and other devices use the composite formulas,
// which the tests compare with these (and both with torch).
#include <cmath>

#include "kernels/cpu/elementwise.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// grad where self > threshold, else 0 (ReLU's backward, from its result: torch's
// threshold_backward).
Tensor threshold_backward_k(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  const ScalarType rt = grad.dtype();
  return dispatch_floating(rt, "threshold_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    const M th = static_cast<M>(threshold.to_double());
    return map<T>("threshold_backward", std::array{grad, self}, rt,
                  [th](M g, M x) { return x > th ? g : M(0); });
  });
}

// GELU's derivative times grad: Phi(x) + x phi(x), or the tanh approximation's.
Tensor gelu_backward_k(const Tensor& grad, const Tensor& self, const std::string& approximate) {
  const ScalarType rt = grad.dtype();
  const bool tanh_form = approximate == "tanh";
  return dispatch_floating(rt, "gelu_backward", [&]<typename T>() {
    using M = opmath_t<T>;
    if (tanh_form) {
      const M k = static_cast<M>(std::sqrt(2.0 / M_PI)), c = M(0.044715);
      return map<T>("gelu_backward", std::array{grad, self}, rt, [k, c](M g, M x) {
        const M x2 = x * x;
        const M t = std::tanh(k * (x + c * x2 * x));
        const M dinner = k * (M(1) + M(3) * c * x2);
        return g * (M(0.5) * (M(1) + t) + M(0.5) * x * (M(1) - t * t) * dinner);
      });
    }
    const M inv_sqrt2 = static_cast<M>(M_SQRT1_2),
            inv_sqrt2pi = static_cast<M>(0.5 * M_2_SQRTPI * M_SQRT1_2);
    return map<T>("gelu_backward", std::array{grad, self}, rt, [=](M g, M x) {
      const M cdf = M(0.5) * (M(1) + std::erf(x * inv_sqrt2));
      const M pdf = inv_sqrt2pi * std::exp(M(-0.5) * x * x);
      return g * (cdf + x * pdf);
    });
  });
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(threshold_backward, cpu::threshold_backward_k)
AMPJIT_KERNEL(gelu_backward, cpu::gelu_backward_k)
