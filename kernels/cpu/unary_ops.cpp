// Unary pointwise kernels (runtime/ops/pointwise.def): math functions (exp, log, ..., gelu), neg,
// abs, sign, rounding, and clamp with relu and clamp_min/clamp_max. Their in-place variants are
// derived (Note [Derived op variants] in runtime/op_table.h), except clamp_'s, whose messages name
// clamp_ from inside the loop.
//
// Note [Unary math table]
// The transcendental functions do not vectorize here (no -ffast-math, no vector libm), so calling
// them through a pointer costs little next to the function itself. Each is a row of kMath (a float
// and a double version) and all of them share ONE pointwise loop per dtype: 4 instantiations for
// 15 ops instead of 60 (Note [One dispatch per op] in kernels/cpu/elementwise.h). Ops that do
// vectorize (neg, abs, floor, clamp, ...) keep their own inlined lambda. The exp family (exp,
// sigmoid, silu, tanh, erf and both gelus) has vectorized float32 kernels per ISA (Note [Kernels
// per ISA] in kernels/cpu/vec/vec.h): dense float32 and bfloat16 tensors (row-major or
// channels-last) run them, and every other layout computes the same formula one value at a time, so
// the layout never changes a result.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec_unary.h"
#include "kernels/pointwise_meta.h"
#include "runtime/boxing.h"
#include "runtime/layout.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit::cpu {

std::optional<Tensor> vec_unary_dense(vec::Unary op, const Tensor& self, ScalarType rt) {
  if (self.dtype() != rt || !(self.is_contiguous() || is_channels_last(self)) ||
      (rt != ScalarType::Float32 && rt != ScalarType::BFloat16))
    return std::nullopt;
  Tensor out = empty_in_layout_of(self, self.sizes(), rt);  // the same dense layout
  const vec::Kernels& k = vec::kernels();
  const bool bf16 = rt == ScalarType::BFloat16;
  const int i = static_cast<int>(op);
  const char* x = static_cast<const char*>(self.raw_data());
  char* y = static_cast<char*>(out.raw_data());
  const int64_t width = bf16 ? 2 : 4;
  parallel_for(self.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
    if (bf16)
      k.unary_bf16[i](reinterpret_cast<const uint16_t*>(x + b * width),
                      reinterpret_cast<uint16_t*>(y + b * width), e - b);
    else
      k.unary_f32[i](reinterpret_cast<const float*>(x + b * width),
                     reinterpret_cast<float*>(y + b * width), e - b);
  });
  return out;
}

namespace {

// ---- Math functions ----------------------------------------------------------------------------

struct MathFn {
  const char* name;
  bool int_to_float;  // integer and bool inputs compute in float32 (torch's "int-to-float" ops)
  float (*f32)(float);
  double (*f64)(double);
  int vec = -1;  // the vec::Unary of its vectorized float32 kernel, or -1
};

// A row from one generic lambda `g`, instantiated for float and double.
template <typename G>
constexpr MathFn math_fn(const char* name, bool int_to_float, G) {
  return {name, int_to_float, [](float x) -> float { return G{}(x); },
          [](double x) -> double { return G{}(x); }};
}

// A row whose float32 version is the vectorized kernel's formula, `g` its double version.
template <vec::Unary U, typename G>
constexpr MathFn vec_fn(const char* name, bool int_to_float, G) {
  return {name, int_to_float, [](float x) -> float { return vec::unary_scalar(U, x); },
          [](double x) -> double { return G{}(x); }, static_cast<int>(U)};
}

enum class Math {
  Exp,
  Log,
  Log1p,
  Sqrt,
  Rsqrt,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sigmoid,
  Erf,
  Reciprocal,
  Silu,
  Gelu,
  GeluTanh
};

// The formulas of torch's CPU kernels.
constexpr MathFn kMath[] = {
    vec_fn<vec::Unary::kExp>("exp", true, [](auto x) { return std::exp(x); }),
    math_fn("log", true, [](auto x) { return std::log(x); }),
    math_fn("log1p", true, [](auto x) { return std::log1p(x); }),
    math_fn("sqrt", true, [](auto x) { return std::sqrt(x); }),
    math_fn("rsqrt", true, [](auto x) { return decltype(x)(1) / std::sqrt(x); }),
    math_fn("sin", true, [](auto x) { return std::sin(x); }),
    math_fn("cos", true, [](auto x) { return std::cos(x); }),
    math_fn("tan", true, [](auto x) { return std::tan(x); }),
    vec_fn<vec::Unary::kTanh>("tanh", true, [](auto x) { return std::tanh(x); }),
    vec_fn<vec::Unary::kSigmoid>(
        "sigmoid", true, [](auto x) { return decltype(x)(1) / (decltype(x)(1) + std::exp(-x)); }),
    vec_fn<vec::Unary::kErf>("erf", true, [](auto x) { return std::erf(x); }),
    math_fn("reciprocal", true, [](auto x) { return decltype(x)(1) / x; }),
    vec_fn<vec::Unary::kSilu>("silu", false,
                              [](auto x) { return x / (decltype(x)(1) + std::exp(-x)); }),
    vec_fn<vec::Unary::kGelu>("gelu", false,
                              [](auto x) {
                                using M = decltype(x);
                                return x * M(0.5) * (M(1) + std::erf(x * M(M_SQRT1_2)));
                              }),
    vec_fn<vec::Unary::kGeluTanh>("gelu", false,
                                  [](auto x) {
                                    using M = decltype(x);
                                    const M beta = M(M_SQRT2 * M_2_SQRTPI * 0.5),
                                            kappa = M(0.044715);
                                    const M inner = beta * (x + kappa * x * x * x);
                                    return M(0.5) * x * (M(1) + std::tanh(inner));
                                  }),
};

static_assert(std::size(kMath) == static_cast<size_t>(Math::GeluTanh) + 1, "one row per Math");

Tensor math(Math m, const Tensor& self) {
  const MathFn& fn = kMath[static_cast<int>(m)];
  ScalarType rt = self.dtype();
  if (!is_floating(rt)) {
    if (!fn.int_to_float) throw_unsupported_dtype(fn.name, rt);
    rt = ScalarType::Float32;
  }
  if (fn.vec >= 0)
    if (std::optional<Tensor> out = vec_unary_dense(static_cast<vec::Unary>(fn.vec), self, rt))
      return *out;
  return dispatch_floating(rt, fn.name, [&]<typename T>() {
    using M = opmath_t<T>;
    M (*f)(M);
    if constexpr (std::is_same_v<M, float>)
      f = fn.f32;
    else
      f = fn.f64;
    return map<T>(fn.name, std::array{self}, rt, [f](M x) { return f(x); });
  });
}
template <Math m>
Tensor math_k(const Tensor& self) {
  return math(m, self);
}

Math gelu_kind(const std::string& approximate) {
  return meta::gelu_is_tanh(approximate) ? Math::GeluTanh : Math::Gelu;
}
Tensor gelu_k(const Tensor& self, std::string approximate) {
  return math(gelu_kind(approximate), self);
}

// ---- neg, abs, sign ----------------------------------------------------------------------------

// One loop per numeric dtype, the result in self's dtype; f is a generic lambda over op math.
template <typename F>
Tensor numeric_unary(const char* op, const Tensor& self, F f) {
  return dispatch_numeric(self.dtype(), op, [&]<typename T>() {
    return map<T>(op, std::array{self}, self.dtype(), f);
  });
}

Tensor neg_k(const Tensor& self) {
  meta::check_neg(self.dtype());
  return numeric_unary("neg", self, [](auto x) {
    if constexpr (std::is_integral_v<decltype(x)>)
      return wrapping_neg(x);
    else
      return -x;
  });
}
Tensor abs_k(const Tensor& self) {
  return numeric_unary("abs", self, [](auto x) {
    using M = decltype(x);
    if constexpr (std::is_unsigned_v<M>)
      return x;
    else if constexpr (std::is_integral_v<M>)
      return x < 0 ? wrapping_neg(x) : x;
    else
      return std::abs(x);
  });
}
// sign(NaN) is 0, as torch's (0 < x) - (x < 0); bool stays bool.
Tensor sign_k(const Tensor& self) {
  if (self.dtype() == ScalarType::Bool) return self.clone();
  return numeric_unary("sign", self, [](auto x) {
    using M = decltype(x);
    if constexpr (std::is_unsigned_v<M>)
      return static_cast<M>(x != 0);
    else
      return static_cast<M>((M(0) < x) - (x < M(0)));
  });
}

// ---- floor, ceil, round ------------------------------------------------------------------------

// Integer inputs are already integral: a copy, as in torch; bool is not supported.
template <typename F>
Tensor rounding_unary(const char* op, const Tensor& self, F f) {
  if (is_integral(self.dtype())) return self.clone();
  return dispatch_floating(self.dtype(), op, [&]<typename T>() {
    return map<T>(op, std::array{self}, self.dtype(), f);
  });
}
Tensor floor_k(const Tensor& self) {
  return rounding_unary("floor", self, [](auto x) { return std::floor(x); });
}
Tensor ceil_k(const Tensor& self) {
  return rounding_unary("ceil", self, [](auto x) { return std::ceil(x); });
}
// Half to even.
Tensor round_k(const Tensor& self) {
  return rounding_unary("round", self, [](auto x) { return std::nearbyint(x); });
}
// torch's round_decimals kernel: scale by 10^|decimals|, round half to even, scale back. Unlike
// round, it refuses integer inputs (even with decimals=0), as torch does.
Tensor round_decimals_k(const Tensor& self, int64_t decimals) {
  if (!is_floating(self.dtype())) throw_unsupported_dtype("round", self.dtype());
  if (decimals == 0) return round_k(self);
  const bool neg = decimals < 0;
  const double scale = std::pow(10.0, static_cast<double>(neg ? -decimals : decimals));
  return dispatch_floating(self.dtype(), "round", [&]<typename T>() {
    using M = opmath_t<T>;
    const M s = static_cast<M>(scale);
    return map<T>("round", std::array{self}, self.dtype(), [neg, s](M x) {
      return neg ? std::nearbyint(x / s) * s : std::nearbyint(x * s) / s;
    });
  });
}

// ---- clamp, clamp_min, clamp_max, relu ---------------------------------------------------------

// Note [Clamp and NaN]
// As torch: min(max(x, lo), hi), so a NaN input stays NaN and lo > hi gives hi. A NaN Scalar bound
// makes the whole result NaN, except that clamp ignores it when it is its only bound (torch's
// clamp kernel; clamp_min and clamp_max do not); a NaN in a Tensor bound gives NaN at that element.
// A missing bound is the dtype's extreme (-inf, +inf for floats), so one loop per dtype serves
// clamp, clamp_min, clamp_max and relu.
template <typename M>
M lowest_or_neg_inf() {
  if constexpr (std::numeric_limits<M>::has_infinity)
    return -std::numeric_limits<M>::infinity();
  else
    return std::numeric_limits<M>::lowest();
}
template <typename M>
M highest_or_inf() {
  if constexpr (std::numeric_limits<M>::has_infinity)
    return std::numeric_limits<M>::infinity();
  else
    return std::numeric_limits<M>::max();
}

using meta::LoneNaNBound;

Tensor clamp_scalar(const char* op, const Tensor& self, const std::optional<Scalar>& lo,
                    const std::optional<Scalar>& hi,
                    LoneNaNBound lone_nan = LoneNaNBound::Ignored) {
  const ScalarType rt = meta::clamp_result_type(self, lo, hi);
  if (meta::clamp_gives_nan(lo, hi, lone_nan)) {
    Tensor out = Tensor::empty(self.sizes(), rt, self.device());
    out.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    return out;
  }
  return dispatch_numeric(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    // Bounds are rounded to the dtype first, as torch's Scalar::to<scalar_t>.
    const M l = lo ? static_cast<M>(lo->to<T>()) : lowest_or_neg_inf<M>();
    const M h = hi ? static_cast<M>(hi->to<T>()) : highest_or_inf<M>();
    return map<T>(op, std::array{self}, rt, [l, h](M x) { return std::min(std::max(x, l), h); });
  });
}

// Tensor bounds promote with self and broadcast.
Tensor clamp_tensor(const char* op, const Tensor& self, const std::optional<Tensor>& lo,
                    const std::optional<Tensor>& hi) {
  const ScalarType rt = meta::clamp_tensor_result_type(self, lo, hi);
  // bool too for one bound (and/or), as torch's Tensor-bound clamp_min/clamp_max (its
  // maximum/minimum kernels); torch's clamp kernel of two bounds takes no bool
  AMPJIT_CHECK(rt != ScalarType::Bool || !lo || !hi, "{}: not implemented for dtype bool", op);
  return dispatch_all(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    auto bound = [&](const std::optional<Tensor>& b, M missing) {
      if (b) return *b;
      Tensor t = Tensor::empty(IntArrayRef{}, rt, self.device());
      *t.data<T>() = static_cast<T>(missing);
      return t;
    };
    const std::array ins{self, bound(lo, lowest_or_neg_inf<M>()), bound(hi, highest_or_inf<M>())};
    return map<T>(op, ins, rt, [](M x, M l, M h) -> M {
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(l) || std::isnan(h)) return std::numeric_limits<M>::quiet_NaN();
      }
      return std::min(std::max(x, l), h);
    });
  });
}

Tensor clamp_k(const Tensor& self, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return clamp_scalar("clamp", self, lo, hi);
}
Tensor clamp_tensor_k(const Tensor& self, std::optional<Tensor> lo, std::optional<Tensor> hi) {
  return clamp_tensor("clamp", self, lo, hi);
}
Tensor clamp_inplace_k(Tensor self, std::optional<Scalar> lo, std::optional<Scalar> hi) {
  return write_result(self, clamp_scalar("clamp_", self, lo, hi), "clamp_", true);
}
Tensor clamp_tensor_inplace_k(Tensor self, std::optional<Tensor> lo, std::optional<Tensor> hi) {
  return write_result(self, clamp_tensor("clamp_", self, lo, hi), "clamp_", true);
}
Tensor clamp_min_k(const Tensor& self, const Scalar& lo) {
  return clamp_scalar("clamp_min", self, lo, std::nullopt, LoneNaNBound::PropagatesNaN);
}
Tensor clamp_min_tensor_k(const Tensor& self, const Tensor& lo) {
  return clamp_tensor("clamp_min", self, lo, std::nullopt);
}
Tensor clamp_max_k(const Tensor& self, const Scalar& hi) {
  return clamp_scalar("clamp_max", self, std::nullopt, hi, LoneNaNBound::PropagatesNaN);
}
Tensor clamp_max_tensor_k(const Tensor& self, const Tensor& hi) {
  return clamp_tensor("clamp_max", self, std::nullopt, hi);
}

// relu is clamp_min(self, 0), as in torch.
Tensor relu_k(const Tensor& self) {
  meta::check_relu(self.dtype());
  return clamp_scalar("relu", self, Scalar(int64_t{0}), std::nullopt);
}

// torch's threshold_backward: grad where self > threshold, 0 elsewhere. Operands of one dtype and
// one dense layout (row-major or channels-last, as ReLU's gradient and result have) run as one flat
// loop the compiler vectorizes (bfloat16 compared in float32, its gradient bits passed through);
// anything else is the mask product, with torch's promotion.
template <typename T, typename Cmp>
void threshold_backward_loop(const Tensor& grad, const Tensor& self, Tensor& out, Cmp above) {
  const T* __restrict g = grad.data<T>();
  const T* __restrict x = self.data<T>();
  T* __restrict o = out.data<T>();
  parallel_for(out.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const T gv = g[i];  // read whatever the test says: a select, not a branch (it vectorizes)
      o[i] = above(x[i]) ? gv : T(0);
    }
  });
}

Tensor threshold_backward_k(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  const bool same = grad.dtype() == self.dtype() &&
                    std::equal(grad.sizes().begin(), grad.sizes().end(), self.sizes().begin(),
                               self.sizes().end()) &&
                    std::equal(grad.strides().begin(), grad.strides().end(), self.strides().begin(),
                               self.strides().end()) &&
                    (grad.is_contiguous() || is_channels_last(grad));
  const ScalarType dt = grad.dtype();
  if (!same ||
      !(dt == ScalarType::Float32 || dt == ScalarType::BFloat16 || dt == ScalarType::Float64))
    return ops::mul(grad, ops::gt_Scalar(self, threshold));
  Tensor out = empty_in_layout_of(grad, grad.sizes(), dt);
  const double th = threshold.to_double();
  if (dt == ScalarType::Float32) {
    const float t = static_cast<float>(th);
    threshold_backward_loop<float>(grad, self, out, [t](float v) { return v > t; });
  } else if (dt == ScalarType::Float64) {
    threshold_backward_loop<double>(grad, self, out, [th](double v) { return v > th; });
  } else {  // bfloat16 as its bits: widened exactly to float32 to compare
    const float t = static_cast<float>(th);
    threshold_backward_loop<uint16_t>(grad, self, out, [t](uint16_t v) {
      return std::bit_cast<float>(static_cast<uint32_t>(v) << 16) > t;
    });
  }
  return out;
}

// ---- torch.nn's activations ------------------------------------------------------------------
// hardtanh and relu6 are clamps, as in torch (so integer tensors are accepted); the others have
// torch's CPU formulas (aten/src/ATen/native/cpu/Activation.cpp), floating types only, computed in
// the op-math type and rounded once.

// An integer tensor keeps its dtype, the bounds truncated to it (torch writes clamp into a result
// of self's dtype).
Tensor hardtanh_k(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  if (is_integral(self.dtype()) && self.dtype() != ScalarType::Bool)
    return clamp_scalar("hardtanh", self, Scalar(static_cast<int64_t>(min_val.to_double())),
                        Scalar(static_cast<int64_t>(max_val.to_double())));
  return clamp_scalar("hardtanh", self, min_val, max_val);
}
Tensor relu6_k(const Tensor& self) {
  return clamp_scalar("relu6", self, Scalar(int64_t{0}), Scalar(int64_t{6}));
}

// A floating-only activation: `make(M)` builds the per-element function for op-math type M.
template <typename Make>
Tensor activation(const char* op, const Tensor& self, Make make) {
  return dispatch_floating(self.dtype(), op, [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>(op, std::array{self}, self.dtype(), make(M{}));
  });
}

Tensor hardswish_k(const Tensor& self) {
  return activation("hardswish", self, []<typename M>(M) {
    return [](M x) { return x * std::min(std::max(x + M(3), M(0)), M(6)) / M(6); };
  });
}
Tensor hardsigmoid_k(const Tensor& self) {
  return activation("hardsigmoid", self, []<typename M>(M) {
    return [](M x) { return std::min(std::max(x + M(3), M(0)), M(6)) / M(6); };
  });
}
Tensor leaky_relu_k(const Tensor& self, const Scalar& negative_slope) {
  const double slope = negative_slope.to_double();
  return activation("leaky_relu", self, [slope]<typename M>(M) {
    return [s = M(slope)](M x) { return x > M(0) ? x : x * s; };
  });
}
Tensor elu_k(const Tensor& self, const Scalar& alpha, const Scalar& scale,
             const Scalar& input_scale) {
  const double a = alpha.to_double(), sc = scale.to_double(), in = input_scale.to_double();
  return activation("elu", self, [a, sc, in]<typename M>(M) {
    return [neg = M(a * sc), pos = M(sc), ins = M(in)](M x) {
      return x <= M(0) ? (std::exp(x * ins) - M(1)) * neg : x * pos;
    };
  });
}
Tensor mish_k(const Tensor& self) {
  return activation("mish", self, []<typename M>(M) {
    return [](M x) { return x * std::tanh(std::log1p(std::exp(x))); };
  });
}
Tensor softplus_k(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  const double b = beta.to_double(), t = threshold.to_double();
  return activation("softplus", self, [b, t]<typename M>(M) {
    return [b = M(b), t = M(t)](M x) { return x * b > t ? x : std::log1p(std::exp(x * b)) / b; };
  });
}
Tensor log_sigmoid_k(const Tensor& self) {
  return activation("log_sigmoid", self, []<typename M>(M) {
    return [](M x) {
      const M m = std::max(M(0), -x);
      return -(m + std::log(std::exp(-m) + std::exp(-x - m)));
    };
  });
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(hardtanh, cpu::hardtanh_k)
AMPJIT_KERNEL(relu6, cpu::relu6_k)
AMPJIT_KERNEL(threshold_backward, cpu::threshold_backward_k)
AMPJIT_KERNEL(hardswish, cpu::hardswish_k)
AMPJIT_KERNEL(hardsigmoid, cpu::hardsigmoid_k)
AMPJIT_KERNEL(leaky_relu, cpu::leaky_relu_k)
AMPJIT_KERNEL(elu, cpu::elu_k)
AMPJIT_KERNEL(mish, cpu::mish_k)
AMPJIT_KERNEL(softplus, cpu::softplus_k)
AMPJIT_KERNEL(log_sigmoid, cpu::log_sigmoid_k)
AMPJIT_KERNEL(neg, cpu::neg_k)
AMPJIT_KERNEL(abs, cpu::abs_k)
AMPJIT_KERNEL(sign, cpu::sign_k)
AMPJIT_KERNEL(exp, cpu::math_k<cpu::Math::Exp>)
AMPJIT_KERNEL(log, cpu::math_k<cpu::Math::Log>)
AMPJIT_KERNEL(log1p, cpu::math_k<cpu::Math::Log1p>)
AMPJIT_KERNEL(sqrt, cpu::math_k<cpu::Math::Sqrt>)
AMPJIT_KERNEL(rsqrt, cpu::math_k<cpu::Math::Rsqrt>)
AMPJIT_KERNEL(sin, cpu::math_k<cpu::Math::Sin>)
AMPJIT_KERNEL(cos, cpu::math_k<cpu::Math::Cos>)
AMPJIT_KERNEL(tan, cpu::math_k<cpu::Math::Tan>)
AMPJIT_KERNEL(tanh, cpu::math_k<cpu::Math::Tanh>)
AMPJIT_KERNEL(sigmoid, cpu::math_k<cpu::Math::Sigmoid>)
AMPJIT_KERNEL(erf, cpu::math_k<cpu::Math::Erf>)
AMPJIT_KERNEL(reciprocal, cpu::math_k<cpu::Math::Reciprocal>)
AMPJIT_KERNEL(silu, cpu::math_k<cpu::Math::Silu>)
AMPJIT_KERNEL(gelu, cpu::gelu_k)
AMPJIT_KERNEL(floor, cpu::floor_k)
AMPJIT_KERNEL(ceil, cpu::ceil_k)
AMPJIT_KERNEL(round, cpu::round_k)
AMPJIT_KERNEL(round_decimals, cpu::round_decimals_k)
AMPJIT_KERNEL(relu, cpu::relu_k)
AMPJIT_KERNEL(clamp, cpu::clamp_k)
AMPJIT_KERNEL(clamp_Tensor, cpu::clamp_tensor_k)
AMPJIT_KERNEL(clamp_, cpu::clamp_inplace_k)
AMPJIT_KERNEL(clamp__Tensor, cpu::clamp_tensor_inplace_k)
AMPJIT_KERNEL(clamp_min, cpu::clamp_min_k)
AMPJIT_KERNEL(clamp_min_Tensor, cpu::clamp_min_tensor_k)
AMPJIT_KERNEL(clamp_max, cpu::clamp_max_k)
AMPJIT_KERNEL(clamp_max_Tensor, cpu::clamp_max_tensor_k)
