// The derivatives of ops, one declaration each (Note [Derivatives as data] in derivatives.h).
// Formulas follow torch's tools/autograd/derivatives.yaml and FunctionsManual.cpp; they are written
// with ampjit's ops, so backward under create_graph is itself recorded.
#include "runtime/autograd/derivatives.h"
#include "runtime/autograd/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "runtime/dispatcher.h"
#include "runtime/error.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"

namespace ampjit::autograd {

namespace {

using B = BackwardContext;

std::vector<int64_t> vec(IntArrayRef a) {
  return {a.begin(), a.end()};
}
Tensor zeros(IntArrayRef sizes, ScalarType dtype, Device device) {
  return ops::zeros(vec(sizes), dtype, device);
}
Scalar scalar(const B& b, const char* name) {
  return b.arg(name).to_scalar();
}
Tensor scale(const Tensor& t, const Scalar& s) {
  if (!s.is_floating() && !s.is_bool() && s.to_int() == 1) return t;
  return ops::mul_Scalar(t, s);
}
int64_t wrap(int64_t d, size_t ndim) {
  const int64_t n = std::max<int64_t>(static_cast<int64_t>(ndim), 1);
  return d < 0 ? d + n : d;
}
// The reduced dimensions of an `int[1]? dim` argument: all of them when None or empty.
std::vector<int64_t> reduced_dims(const IValue& dim, size_t ndim) {
  std::vector<int64_t> dims;
  if (!dim.is_none()) dims = dim.is_int() ? std::vector<int64_t>{dim.to_int()} : dim.to_int_list();
  if (dims.empty()) {
    dims.resize(ndim);
    std::iota(dims.begin(), dims.end(), 0);
  }
  for (int64_t& d : dims) d = wrap(d, ndim);
  std::sort(dims.begin(), dims.end());
  return dims;
}
// A reduction's gradient back at the input's shape (unsqueezed where keepdim dropped dimensions).
Tensor expand_reduced(Tensor g, IntArrayRef sizes, const std::vector<int64_t>& dims, bool keepdim) {
  if (!keepdim && !sizes.empty())
    for (int64_t d : dims) g = ops::unsqueeze(g, d);
  return ops::expand(g, vec(sizes));
}
int64_t count(IntArrayRef sizes, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= sizes.empty() ? 1 : sizes[d];
  return n;
}
Tensor mask(const Tensor& g, const Tensor& m) {
  return ops::mul(g, m);
}

// ---- views --------------------------------------------------------------------------------

// The gradient of a view that takes [start, start+length) of `dim`: zeros around it.
Tensor narrow_backward(const Tensor& g, IntArrayRef sizes, int64_t dim, int64_t start,
                       int64_t length) {
  std::vector<Tensor> parts;
  auto zeros_len = [&](int64_t n) {
    std::vector<int64_t> s = vec(sizes);
    s[dim] = n;
    return zeros(s, g.dtype(), g.device());
  };
  if (start > 0) parts.push_back(zeros_len(start));
  parts.push_back(g);
  if (start + length < sizes[dim]) parts.push_back(zeros_len(sizes[dim] - start - length));
  return parts.size() == 1 ? g : Tensor(ops::cat(parts, dim));
}

void slice_formula(B& b) {
  IntArrayRef sizes = b.sizes("self");
  const int64_t dim = wrap(b.arg("dim").to_int(), sizes.size());
  const int64_t n = sizes[dim];
  auto bound = [&](const IValue& v, int64_t dflt) {
    if (v.is_none()) return dflt;
    int64_t x = v.to_int();
    if (x < 0) x += n;
    return std::clamp<int64_t>(x, 0, n);
  };
  const int64_t start = bound(b.arg("start"), 0);
  const int64_t end = std::max(start, bound(b.arg("end"), n));
  const int64_t step = b.arg("step").to_int();
  const Tensor& g = b.grad();
  if (step == 1) return b.set("self", narrow_backward(g, sizes, dim, start, end - start));
  // written through a view, so that under create_graph the write is recorded (CopySlices)
  Tensor z = zeros(sizes, g.dtype(), g.device());
  ops::copy_(ops::slice(z, dim, start, end, step), g);
  b.set("self", z);
}

// A list of output gradients joined back along `dim` (chunk, split, unbind).
std::vector<Tensor> output_grads(const B& b) {
  std::vector<Tensor> gs;
  for (size_t i = 0; i < b.num_grads(); ++i) gs.push_back(b.grad(i));
  return gs;
}

Tensor reshape_to(const Tensor& g, IntArrayRef sizes) {
  return ops::reshape(g, vec(sizes));
}

// ---- pointwise ----------------------------------------------------------------------------

Tensor gelu_backward(const Tensor& g, const Tensor& x, const std::string& approximate) {
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
    Tensor x2 = ops::mul(x, x);
    Tensor inner = ops::mul_Scalar(ops::add(x, ops::mul_Scalar(ops::mul(x2, x), c)), k);
    Tensor t = ops::tanh(inner);
    Tensor dinner = ops::mul_Scalar(ops::add_Scalar(ops::mul_Scalar(x2, 3 * c), 1.0), k);
    Tensor sech2 = ops::rsub_Scalar(ops::mul(t, t), 1.0);
    Tensor d = ops::add(ops::mul_Scalar(ops::add_Scalar(t, 1.0), 0.5),
                        ops::mul(ops::mul_Scalar(x, 0.5), ops::mul(sech2, dinner)));
    return ops::mul(g, d);
  }
  Tensor cdf = ops::mul_Scalar(ops::add_Scalar(ops::erf(ops::mul_Scalar(x, M_SQRT1_2)), 1.0), 0.5);
  Tensor pdf =
      ops::mul_Scalar(ops::exp(ops::mul_Scalar(ops::mul(x, x), -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
  return ops::mul(g, ops::add(cdf, ops::mul(x, pdf)));
}

// Between min and max (inclusive): where clamp passes the gradient.
Tensor in_range(const Tensor& x, const IValue& lo, const IValue& hi) {
  Tensor m;
  auto both = [&](Tensor c) { m = m.defined() ? Tensor(ops::logical_and(m, c)) : c; };
  if (!lo.is_none())
    both(lo.is_tensor() ? Tensor(ops::ge(x, lo.to_tensor()))
                        : Tensor(ops::ge_Scalar(x, lo.to_scalar())));
  if (!hi.is_none())
    both(hi.is_tensor() ? Tensor(ops::le(x, hi.to_tensor()))
                        : Tensor(ops::le_Scalar(x, hi.to_scalar())));
  return m;
}

// torch's i1_backward / i1e_backward: i0(x) - i1(x)/x (i0e(x) - i1e(x) (sgn(x) + 1/x)), 0.5 where
// |x| is below the dtype's epsilon (the limit, where the formula gives NaN).
void bessel_i1_formula(B& b, bool scaled) {
  const Tensor x = b.in("self"), r = b.result();
  const double eps = x.dtype() == ScalarType::Float64 ? std::numeric_limits<double>::epsilon()
                                                      : std::numeric_limits<float>::epsilon();
  const Tensor not_tiny = ops::gt_Scalar(ops::abs(x), eps);
  const Tensor safe = ops::where_ScalarOther(not_tiny, x, eps);
  const Tensor inv = ops::reciprocal(safe);
  const Tensor gx =
      scaled ? Tensor(ops::sub(ops::special_i0e(safe), ops::mul(r, ops::add(ops::sign(safe), inv))))
             : Tensor(ops::sub(ops::i0(safe), ops::mul(r, inv)));
  b.set("self", ops::mul(b.grad(), ops::where_ScalarOther(not_tiny, gx, 0.5)));
}

// torch's scatter_reduce_backward and index_reduce_backward (FunctionsManual.cpp), one formula:
// `pick` reads the result's positions each source element went to (gather / index_select), `add`
// scatters source-shaped values into a self-shaped tensor (scatter_add / index_add), `clear` zeros
// the positions the source wrote (scatter / index_fill), for include_self=False.
void reduce_into_formula(B& b, const char* src_name, bool by_index) {
  const Tensor self = b.in("self"), src = b.in(src_name), index = b.in("index"), r = b.result();
  const Tensor& g = b.grad();
  const int64_t dim = b.arg("dim").to_int();
  const std::string reduce = b.arg("reduce").to<std::string>();
  const bool include_self = b.arg("include_self").to_bool();
  auto pick = [&](const Tensor& t) -> Tensor {
    return by_index ? Tensor(ops::index_select(t, dim, index))
                    : Tensor(ops::gather(t, dim, index, false));
  };
  auto add = [&](const Tensor& into, const Tensor& v) -> Tensor {
    return by_index ? Tensor(ops::index_add(into, dim, index, v, 1))
                    : Tensor(ops::scatter_add(into, dim, index, v));
  };
  auto again = [&](const Tensor& s, const Tensor& v) -> Tensor {
    return by_index ? Tensor(ops::index_reduce(s, dim, index, v, reduce, include_self))
                    : Tensor(ops::scatter_reduce_two(s, dim, index, v, reduce, include_self));
  };
  Tensor gs, gsrc;
  if (reduce == "sum") {
    gs = g;
    gsrc = pick(g);
  } else if (reduce == "mean") {
    Tensor n = add(include_self ? Tensor(ops::ones_like(g)) : Tensor(ops::zeros_like(g)),
                   ops::ones_like(src));
    n = ops::masked_fill_Scalar(n, ops::eq_Scalar(n, 0), 1);
    gs = ops::div(g, n);
    gsrc = ops::div(pick(g), pick(n));
  } else if (reduce == "prod") {
    const Tensor masked_self = ops::masked_fill_Scalar(self, ops::eq_Scalar(self, 0), 1);
    gs = ops::div(ops::mul(g, again(masked_self, src)), masked_self);
    const Tensor src_zero = ops::eq_Scalar(src, 0);
    const Tensor zeros_at = pick(add(ops::zeros_like(self), ops::to_dtype(src_zero, self.dtype())));
    const Tensor single_zero = ops::logical_and(src_zero, ops::eq_Scalar(zeros_at, 1));
    const Tensor masked_src_result = again(self, ops::masked_fill_Scalar(src, single_zero, 1));
    gsrc = ops::where(single_zero, pick(ops::mul(g, masked_src_result)),
                      ops::div(pick(ops::mul(g, r)), ops::masked_fill_Scalar(src, src_zero, 1)));
  } else {  // amax, amin: the gradient shared evenly among the elements equal to the result
    const Tensor value = pick(r);
    const Tensor self_is = ops::to_dtype(ops::eq(self, r), self.dtype());
    const Tensor src_is = ops::to_dtype(ops::eq(src, value), self.dtype());
    const Tensor share = ops::div(g, add(self_is, src_is));
    gs = ops::mul(self_is, share);
    gsrc = ops::mul(src_is, pick(share));
  }
  if (!include_self)
    gs = by_index ? Tensor(ops::index_fill_int_Scalar(gs, dim, index, 0))
                  : Tensor(ops::scatter_value(gs, dim, index, 0));
  if (b.needs("self")) b.set("self", gs);
  if (b.needs(src_name)) b.set(src_name, gsrc);
}

void fmaxmin_formula(B& b, bool is_max) {
  const Tensor x = b.in("self"), y = b.in("other");
  const Tensor pick_self =
      ops::logical_or(is_max ? Tensor(ops::ge(x, y)) : Tensor(ops::le(x, y)), ops::isnan(y));
  if (b.needs("self")) b.set("self", mask(b.grad(), pick_self));
  if (b.needs("other")) b.set("other", mask(b.grad(), ops::logical_not(pick_self)));
}

Tensor copysign_self_grad(B& b) {
  const Tensor x = b.in("self");
  const Tensor ratio = ops::masked_fill_Scalar(ops::div(b.result(), x), ops::eq_Scalar(x, 0), 0);
  return ops::mul(b.grad(), ratio);
}

void pow_tensor_scalar(B& b) {
  const Scalar e = scalar(b, "exponent");
  const Tensor x = b.in("self");
  if (e.to_double() == 0.0) return b.set("self", ops::zeros_like(x));
  Tensor d = ops::mul_Scalar(ops::pow_Tensor_Scalar(x, Scalar(e.to_double() - 1.0)), e);
  b.set("self", ops::mul(b.grad(), d));
}

void maxmin_formula(B& b, bool is_max) {
  const Tensor x = b.in("self"), y = b.in("other");
  Tensor pick_self = is_max ? Tensor(ops::gt(x, y)) : Tensor(ops::lt(x, y));
  Tensor tie = ops::eq(x, y);
  Tensor w = ops::add(ops::to_dtype(pick_self, b.grad().dtype()),
                      ops::mul_Scalar(ops::to_dtype(tie, b.grad().dtype()), 0.5));
  if (b.needs("self")) b.set("self", ops::mul(b.grad(), w));
  if (b.needs("other")) b.set("other", ops::mul(b.grad(), ops::rsub_Scalar(w, 1.0)));
}

// fmod (quotient rounded toward zero) and remainder (rounded down): self - other * q, with q
// piecewise constant.
void rounded_quotient_formula(B& b, const char* rounding) {
  b.set("self", b.grad());
  if (b.needs("other")) {
    const Tensor q = ops::div_Tensor_mode(b.in("self"), b.in("other"), std::string(rounding));
    b.set("other", ops::neg(ops::mul(b.grad(), q)));
  }
}

// ---- reductions ---------------------------------------------------------------------------

void sum_dim_formula(B& b) {
  IntArrayRef sizes = b.sizes("self");
  b.set("self", expand_reduced(b.grad(), sizes, reduced_dims(b.arg("dim"), sizes.size()),
                               b.arg("keepdim").to_bool()));
}

void mean_dim_formula(B& b) {
  IntArrayRef sizes = b.sizes("self");
  const auto dims = reduced_dims(b.arg("dim"), sizes.size());
  Tensor g = expand_reduced(b.grad(), sizes, dims, b.arg("keepdim").to_bool());
  b.set("self", ops::div_Scalar(g, static_cast<double>(count(sizes, dims))));
}

// amax, amin, max(), min(): the gradient split evenly among the elements equal to the result.
void extremum_formula(B& b, const std::vector<int64_t>& dims, bool keepdim) {
  const Tensor x = b.in("self");
  Tensor r = expand_reduced(b.result(), x.sizes(), dims, keepdim);
  Tensor m = ops::to_dtype(ops::eq(x, r), b.grad().dtype());
  Tensor n = expand_reduced(ops::sum_dim_IntList(m, dims, true), x.sizes(), dims, true);
  b.set("self", ops::div(ops::mul(expand_reduced(b.grad(), x.sizes(), dims, keepdim), m), n));
}

// max.dim, min.dim: the gradient goes to the index the op returned.
void extremum_dim_formula(B& b) {
  IntArrayRef sizes = b.sizes("self");
  const int64_t dim = wrap(b.arg("dim").to_int(), sizes.size());
  const bool keepdim = b.arg("keepdim").to_bool();
  Tensor idx = b.result(1), g = b.grad(0);
  if (sizes.empty()) return b.set("self", g);
  if (!keepdim) {
    idx = ops::unsqueeze(idx, dim);
    g = ops::unsqueeze(g, dim);
  }
  std::vector<int64_t> shape(sizes.size(), 1);
  shape[dim] = sizes[dim];
  Tensor ar = ops::view(ops::arange(sizes[dim], ScalarType::Int64, b.device("self")), shape);
  Tensor onehot = ops::to_dtype(ops::eq(ar, idx), g.dtype());
  b.set("self", ops::mul(onehot, g));
}

// ---- sorting and selection ----

// torch's value_selecting_reduction_backward: zeros with the gradient scattered to the selected
// indices along `dim` (unsqueezed where the op dropped the dim).
void selected_backward(B& b, Tensor idx, bool keepdim) {
  IntArrayRef sizes = b.sizes("self");
  if (sizes.empty()) return b.set("self", b.grad(0));
  const int64_t dim = wrap(b.arg("dim").to_int(), sizes.size());
  Tensor g = b.grad(0);
  if (!keepdim) {
    idx = ops::unsqueeze(idx, dim);
    g = ops::unsqueeze(g, dim);
  }
  b.set("self", ops::scatter_add(zeros(sizes, g.dtype(), b.device("self")), dim, idx, g));
}

// median() and nanmedian(): torch's evenly_distribute_backward, the gradient shared by every
// element equal to the result (every NaN when the result is NaN).
void evenly_distribute_backward(B& b) {
  const Tensor x = b.in("self"), value = b.result();
  Tensor mask =
      ops::logical_or(ops::eq(x, value), ops::logical_and(ops::ne(x, x), ops::ne(value, value)));
  Tensor m = ops::to_dtype(mask, b.grad().dtype());
  b.set("self", ops::mul(m, ops::div(b.grad(), ops::sum(m))));
}

// cummax, cummin: torch's cummaxmin_backward, the gradients summed into the indices reported.
void cummaxmin_backward(B& b) {
  IntArrayRef sizes = b.sizes("self");
  if (sizes.empty() || b.grad().numel() == 0) return b.set("self", b.grad());
  const int64_t dim = wrap(b.arg("dim").to_int(), sizes.size());
  b.set("self", ops::scatter_add(zeros(sizes, b.grad().dtype(), b.device("self")), dim, b.result(1),
                                 b.grad()));
}

// torch's logcumsumexp_backward: the positive and negative parts of the gradient each through a
// reversed logcumsumexp in log space.
void logcumsumexp_backward(B& b) {
  const Tensor g = b.grad();
  if (g.dim() == 0 || g.numel() == 0) return b.set("self", g);
  const int64_t dim = wrap(b.arg("dim").to_int(), g.dim());
  const std::vector<int64_t> dims{dim};
  const double lowest = g.dtype() == ScalarType::Float64 ? -std::numeric_limits<double>::max()
                        : g.dtype() == ScalarType::BFloat16
                            ? -3.3895313892515355e38
                            : static_cast<double>(-std::numeric_limits<float>::max());
  Tensor floor = ops::full_like(g, lowest);
  Tensor log_abs = ops::log(ops::abs(g));
  auto reverse_lcse = [&](const Tensor& t) {
    return ops::flip(ops::logcumsumexp(ops::flip(t, dims), dim), dims);
  };
  const Tensor x = b.in("self"), r = b.result();
  Tensor pos = ops::where(ops::gt_Scalar(g, 0), log_abs, floor);
  Tensor neg = ops::where(ops::lt_Scalar(g, 0), log_abs, floor);
  b.set("self", ops::sub(ops::exp(ops::add(reverse_lcse(ops::sub(pos, r)), x)),
                         ops::exp(ops::add(reverse_lcse(ops::sub(neg, r)), x))));
}

void var_formula(B& b, const std::vector<int64_t>& dims, double correction, bool keepdim,
                 bool is_std) {
  const Tensor x = b.in("self");
  Tensor mean = ops::mean_dim(x, dims, true);
  const double n = static_cast<double>(count(x.sizes(), dims)) - correction;
  Tensor g = expand_reduced(b.grad(), x.sizes(), dims, keepdim);
  Tensor d = ops::mul_Scalar(ops::sub(x, mean), 2.0 / n);
  if (is_std) {
    Tensor s = expand_reduced(b.result(), x.sizes(), dims, keepdim);
    d = ops::div(d, ops::mul_Scalar(s, 2.0));
    d = ops::masked_fill_Scalar(d, ops::eq_Scalar(s, 0.0), 0.0);
  }
  b.set("self", ops::mul(g, d));
}

double correction_of(const B& b) {
  const IValue& c = b.arg("correction");
  return c.is_none() ? 1.0 : c.to_double();
}

// ---- matrices -----------------------------------------------------------------------------

Tensor mT(const Tensor& t) {
  return ops::transpose(t, -1, -2);
}

void matmul_formula(B& b) {
  const Tensor x = b.in("self"), y = b.in("other");
  const Tensor& g = b.grad();
  if (x.dim() == 1 && y.dim() == 1) {
    if (b.needs("self")) b.set("self", ops::mul(g, y));
    if (b.needs("other")) b.set("other", ops::mul(g, x));
    return;
  }
  if (y.dim() == 1) {
    Tensor g1 = ops::unsqueeze(g, -1);
    if (b.needs("self")) b.set("self", ops::mul(g1, y));
    if (b.needs("other")) b.set("other", ops::squeeze_dim(ops::matmul(mT(x), g1), -1));
    return;
  }
  if (x.dim() == 1) {
    Tensor g1 = ops::unsqueeze(g, -2);
    if (b.needs("self")) b.set("self", ops::squeeze_dim(ops::matmul(g1, mT(y)), -2));
    if (b.needs("other")) b.set("other", ops::mul(ops::unsqueeze(x, -1), g1));
    return;
  }
  if (b.needs("self")) b.set("self", ops::matmul(g, mT(y)));
  if (b.needs("other")) b.set("other", ops::matmul(mT(x), g));
}

void addmm_like(B& b, const char* m1, const char* m2, bool batched) {
  const Scalar beta = scalar(b, "beta"), alpha = scalar(b, "alpha");
  const Tensor& g = b.grad();
  if (b.needs("self")) b.set("self", scale(g, beta));
  if (b.needs(m1))
    b.set(m1, scale(batched ? ops::bmm(g, mT(b.in(m2))) : ops::mm(g, mT(b.in(m2))), alpha));
  if (b.needs(m2))
    b.set(m2, scale(batched ? ops::bmm(mT(b.in(m1)), g) : ops::mm(mT(b.in(m1)), g), alpha));
}

void linear_formula(B& b) {
  const Tensor& g = b.grad();
  const Tensor w = b.in("weight");
  if (b.needs("input")) b.set("input", ops::matmul(g, w));
  if (b.needs("weight")) {
    const Tensor x = b.in("input");
    const int64_t out = w.dim() == 2 ? w.size(0) : 1;
    Tensor g2 = ops::reshape(g, std::vector<int64_t>{-1, out});
    Tensor x2 = ops::reshape(x, std::vector<int64_t>{-1, x.size(-1)});
    Tensor gw = ops::mm(mT(g2), x2);
    b.set("weight", w.dim() == 1 ? Tensor(ops::view(gw, vec(w.sizes()))) : gw);
  }
  if (b.needs("bias")) b.set("bias", g);  // summed to bias's shape by the engine
}

// ---- convolution --------------------------------------------------------------------------

// Note [Convolution backward]
// The input's gradient is the transposed convolution of the output's gradient by the same weight
// (output_padding recovers the input size lost to the stride). The weight's gradient is itself a
// convolution: of the input, viewed with the batch as channels, by the output's gradient, viewed
// the same way, with stride and dilation swapped; groups stay groups (each group's weight sees its
// own input channels), so depthwise convolutions need no loop. The result is at least the kernel's
// size and is cut to it.
// Whether the CPU backward kernel serves: plain backward of float32 or reduced precision operands
// (Note [Convolution backward primitives] in kernels/cpu/onednn.cpp).
bool use_conv_kernel(const Tensor& x, const Tensor& w, const Tensor& g) {
  return !grad_enabled() && x.device().is_cpu() && is_floating(x.dtype()) &&
         x.dtype() != ScalarType::Float64 && w.dtype() == x.dtype() && g.dtype() == x.dtype();
}

struct ConvParamLists {
  std::vector<int64_t> stride, padding, dilation, output_padding;
  int64_t groups = 1;
};
ConvParamLists conv_params(const B& b, int nd, bool transposed) {
  auto list = [&](const char* name) {
    std::vector<int64_t> v = b.arg(name).to_int_list();
    if (v.size() == 1 && nd > 1) v.assign(nd, v[0]);
    return v;
  };
  ConvParamLists c{list("stride"), list("padding"), list("dilation"), {}, b.arg("groups").to_int()};
  if (transposed) c.output_padding = list("output_padding");
  return c;
}

Tensor conv_nd(int nd, const Tensor& x, const Tensor& w, const ConvParamLists& c) {
  if (nd == 1) return ops::conv1d(x, w, std::nullopt, c.stride, c.padding, c.dilation, c.groups);
  if (nd == 2) return ops::conv2d(x, w, std::nullopt, c.stride, c.padding, c.dilation, c.groups);
  return ops::conv3d(x, w, std::nullopt, c.stride, c.padding, c.dilation, c.groups);
}

Tensor conv_transpose_nd(int nd, const Tensor& x, const Tensor& w, const ConvParamLists& c,
                         const std::vector<int64_t>& out_pad) {
  if (nd == 1)
    return ops::conv_transpose1d(x, w, std::nullopt, c.stride, c.padding, out_pad, c.groups,
                                 c.dilation);
  if (nd == 2)
    return ops::conv_transpose2d(x, w, std::nullopt, c.stride, c.padding, out_pad, c.groups,
                                 c.dilation);
  return ops::conv_transpose3d(x, w, std::nullopt, c.stride, c.padding, out_pad, c.groups,
                               c.dilation);
}

// The weight's gradient of conv(xb, w) (batched) given the gradient gb of its output.
Tensor conv_weight_grad(int nd, const Tensor& xb, const Tensor& gb, const Tensor& w,
                        const ConvParamLists& c) {
  if (use_conv_kernel(xb, w, gb))
    return ops::convolution_backward(gb, xb, w, c.stride, c.padding, c.dilation, c.groups, false,
                                     true, false)
        .tensor(1);
  bool pointwise = c.groups == 1;  // a 1x1 kernel without padding: the weight's gradient is a GEMM
  for (int i = 0; i < nd; ++i) pointwise = pointwise && w.size(2 + i) == 1 && c.padding[i] == 0;
  if (pointwise) {
    // grad [N, O, *Out] and the input at the strided positions [N, C, *Out], both as [*, N*Out]
    Tensor xs = xb;
    for (int i = 0; i < nd; ++i)
      xs = ops::slice(xs, 2 + i, 0, (gb.size(2 + i) - 1) * c.stride[i] + 1, c.stride[i]);
    Tensor g2 = ops::reshape(ops::transpose(gb, 0, 1), std::vector<int64_t>{gb.size(1), -1});
    Tensor x2 = ops::reshape(ops::transpose(xs, 0, 1), std::vector<int64_t>{xs.size(1), -1});
    return ops::view(ops::mm(g2, ops::t(x2)), vec(w.sizes()));
  }
  const int64_t n = xb.size(0), cg = w.size(1), og = w.size(0) / c.groups;
  // input [N, G*Cg, *S] -> [Cg, G*N, *S]; grad [N, G*Og, *O] -> [G*Og, N, *O]
  std::vector<int64_t> xs{n, c.groups, cg}, gs{n, c.groups, og};
  std::vector<int64_t> xperm{2, 1, 0}, gperm{1, 2, 0};
  std::vector<int64_t> x2s{cg, c.groups * n}, g2s{c.groups * og, n};
  for (int i = 0; i < nd; ++i) {
    xs.push_back(xb.size(2 + i));
    gs.push_back(gb.size(2 + i));
    xperm.push_back(3 + i);
    gperm.push_back(3 + i);
    x2s.push_back(xb.size(2 + i));
    g2s.push_back(gb.size(2 + i));
  }
  Tensor x2 = ops::reshape(ops::permute(ops::view(ops::contiguous(xb), xs), xperm), x2s);
  Tensor g2 = ops::reshape(ops::permute(ops::view(ops::contiguous(gb), gs), gperm), g2s);
  // stride and dilation swap places
  const ConvParamLists swapped{c.dilation, c.padding, c.stride, {}, c.groups};
  Tensor gw = conv_nd(nd, x2, g2, swapped);
  for (int i = 0; i < nd; ++i) gw = ops::narrow(gw, 2 + i, 0, w.size(2 + i));
  // [Cg, G*Og, *K] -> [G*Og, Cg, *K]
  return ops::contiguous(ops::transpose(gw, 0, 1));
}

Tensor conv_bias_grad(int nd, const Tensor& gb) {
  std::vector<int64_t> dims{0};
  for (int i = 0; i < nd; ++i) dims.push_back(2 + i);
  return ops::sum_dim_IntList(gb, dims, false);
}

void convolution_formula(B& b, int nd) {
  const Tensor x = b.in("input"), w = b.in("weight");
  const Tensor& g = b.grad();
  const ConvParamLists c = conv_params(b, nd, false);
  if (use_conv_kernel(x, w, g)) {
    const OpResult r =
        ops::convolution_backward(g, x, w, c.stride, c.padding, c.dilation, c.groups,
                                  b.needs("input"), b.needs("weight"), b.needs("bias"));
    if (b.needs("input")) b.set("input", r.tensor(0));
    if (b.needs("weight")) b.set("weight", r.tensor(1));
    if (b.needs("bias")) b.set("bias", r.tensor(2));
    return;
  }
  const bool batched = x.dim() == nd + 2;
  Tensor xb = batched ? x : Tensor(ops::unsqueeze(x, 0));
  Tensor gb = batched ? g : Tensor(ops::unsqueeze(g, 0));
  if (b.needs("input")) {
    std::vector<int64_t> out_pad(nd);
    for (int i = 0; i < nd; ++i) {
      const int64_t k = w.size(2 + i), in = xb.size(2 + i), out = gb.size(2 + i);
      out_pad[i] = in - ((out - 1) * c.stride[i] - 2 * c.padding[i] + c.dilation[i] * (k - 1) + 1);
    }
    Tensor gi = conv_transpose_nd(nd, gb, w, c, out_pad);
    b.set("input", batched ? gi : Tensor(ops::squeeze_dim(gi, 0)));
  }
  if (b.needs("weight")) b.set("weight", conv_weight_grad(nd, xb, gb, w, c));
  if (b.needs("bias")) b.set("bias", conv_bias_grad(nd, gb));
}

// A transposed convolution is the input-gradient of a convolution by the same weight, so its own
// input's gradient is that convolution of the output's gradient, and its weight's gradient is that
// convolution's weight gradient with the roles of input and output's gradient exchanged.
void conv_transpose_formula(B& b, int nd) {
  const Tensor x = b.in("input"), w = b.in("weight");
  const Tensor& g = b.grad();
  const ConvParamLists c = conv_params(b, nd, true);
  const bool batched = x.dim() == nd + 2;
  Tensor xb = batched ? x : Tensor(ops::unsqueeze(x, 0));
  Tensor gb = batched ? g : Tensor(ops::unsqueeze(g, 0));
  if (b.needs("input")) {
    Tensor gi = conv_nd(nd, gb, w, c);
    // The convolution of the gradient can reach past the input where output_padding added rows
    // and columns no input element produced: those are cut off.
    for (int d = 0; d < nd; ++d)
      if (gi.size(2 + d) > xb.size(2 + d)) gi = ops::narrow(gi, 2 + d, 0, xb.size(2 + d));
    b.set("input", batched ? gi : Tensor(ops::squeeze_dim(gi, 0)));
  }
  if (b.needs("weight")) b.set("weight", conv_weight_grad(nd, gb, xb, w, c));
  if (b.needs("bias")) b.set("bias", conv_bias_grad(nd, gb));
}

// ---- pooling ------------------------------------------------------------------------------

std::vector<int64_t> pair_arg(const B& b, const char* name, std::vector<int64_t> dflt) {
  std::vector<int64_t> v = b.arg(name).to_int_list();
  if (v.empty()) return dflt;
  if (v.size() == 1) v.push_back(v[0]);
  return v;
}

// Note [Pooling backward]
// Average pooling: each kernel offset (kh, kw) reads a strided window of the padded input (the
// elements at oh*stride + kh), so backward adds grad / divisor into that strided window of a padded
// zero tensor, once per offset: K*K strided passes, no kernel of its own. The windows are views
// written in place through the dispatcher, so under create_graph the writes are recorded
// (CopySlices) and backward is itself differentiable. Max pooling records where its maxima are and
// scatters the gradient there (max_pool2d_with_indices, below).
Tensor avg_pool_backward(const Tensor& g, const Tensor& x, const std::vector<int64_t>& k,
                         const std::vector<int64_t>& s, const std::vector<int64_t>& p,
                         const Tensor& divisor) {
  const int64_t nd = x.dim();
  const int64_t H = x.size(nd - 2), W = x.size(nd - 1), OH = g.size(nd - 2), OW = g.size(nd - 1);
  const int64_t HP = std::max(H + 2 * p[0], (OH - 1) * s[0] + k[0]);
  const int64_t WP = std::max(W + 2 * p[1], (OW - 1) * s[1] + k[1]);
  std::vector<int64_t> padded = vec(x.sizes());
  padded[nd - 2] = HP;
  padded[nd - 1] = WP;
  Tensor gp = zeros(padded, g.dtype(), g.device());
  const Tensor share = ops::div(g, divisor);
  for (int64_t kh = 0; kh < k[0]; ++kh) {
    for (int64_t kw = 0; kw < k[1]; ++kw) {
      Tensor dst = ops::slice(ops::slice(gp, nd - 2, kh, kh + (OH - 1) * s[0] + 1, s[0]), nd - 1,
                              kw, kw + (OW - 1) * s[1] + 1, s[1]);
      ops::add_(dst, share);
    }
  }
  return ops::contiguous(ops::narrow(ops::narrow(gp, nd - 2, p[0], H), nd - 1, p[1], W));
}

// max_pool2d is recorded as max_pool2d_with_indices (as torch records it), whose backward
// scatters the gradient to the recorded maxima: one pass, and itself differentiable (scatter_add's
// derivative is a gather), so double backward works.
void max_pool2d_decompose(const OpEntry&, Stack& s) {
  const OpResult r = ops::max_pool2d_with_indices(s[0], s[1], s[2], s[3], s[4], s[5]);
  s.clear();
  s.emplace_back(r.tensor(0));
}

void max_pool2d_with_indices_formula(B& b) {
  IntArrayRef sizes = b.sizes("self");
  const Tensor& g = b.grad();
  const Tensor idx = b.result(1);
  // [..., OH, OW] -> [..., OH*OW] into a zero [..., H*W]
  const int64_t nd = static_cast<int64_t>(sizes.size());
  std::vector<int64_t> flat_out = vec(g.sizes()), flat_in = vec(sizes);
  flat_out.resize(nd - 1);
  flat_out[nd - 2] = g.size(nd - 2) * g.size(nd - 1);
  flat_in.resize(nd - 1);
  flat_in[nd - 2] = sizes[nd - 2] * sizes[nd - 1];
  Tensor gi = ops::scatter_add(zeros(flat_in, g.dtype(), g.device()), nd - 2,
                               ops::reshape(idx, flat_out), ops::reshape(g, flat_out));
  b.set("self", ops::view(gi, vec(sizes)));
}

void avg_pool2d_formula(B& b) {
  const Tensor x = b.in("self");
  const std::vector<int64_t> k = pair_arg(b, "kernel_size", {});
  const std::vector<int64_t> s = pair_arg(b, "stride", k), p = pair_arg(b, "padding", {0, 0});
  const bool ceil_mode = b.arg("ceil_mode").to_bool();
  const IValue& over = b.arg("divisor_override");
  Tensor divisor;
  if (!over.is_none()) {
    divisor = ops::full(std::vector<int64_t>{1}, over.to_double(), b.grad().dtype());
  } else {
    // the number of elements each window averaged: a window of ones, padded with ones when the
    // padding counts, summed over the same windows
    const int64_t nd = x.dim();
    Tensor ones = ops::ones_like(x);
    std::vector<int64_t> pad = p;
    if (b.arg("count_include_pad").to_bool())
      ones = ops::pad(ones, std::vector<int64_t>{p[1], p[1], p[0], p[0]}, std::string("constant"),
                      1.0);
    else
      ones = ops::pad(ones, std::vector<int64_t>{p[1], p[1], p[0], p[0]}, std::string("constant"),
                      0.0);
    (void)nd;
    divisor = ops::avg_pool2d(ones, k, s, std::vector<int64_t>{0, 0}, ceil_mode, true, 1);
  }
  b.set("self", avg_pool_backward(b.grad(), x, k, s, p, divisor));
}

// Row o of the [out, in] matrix that averages adaptive window o: 1/len on [floor(o*in/out),
// ceil((o+1)*in/out)), torch's adaptive windows.
Tensor adaptive_window_matrix(int64_t in, int64_t out, ScalarType dtype, Device device) {
  Tensor m = ops::zeros(std::vector<int64_t>{out, in}, ScalarType::Float64);
  double* d = m.data<double>();
  for (int64_t o = 0; o < out; ++o) {
    const int64_t start = (o * in) / out, end = ((o + 1) * in + out - 1) / out;
    for (int64_t i = start; i < end; ++i) d[o * in + i] = 1.0 / static_cast<double>(end - start);
  }
  return ops::to_device(m, device, dtype);
}

void adaptive_avg_pool2d_formula(B& b) {
  IntArrayRef sizes = b.sizes("self");
  const Tensor& g = b.grad();
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t H = sizes[nd - 2], W = sizes[nd - 1], OH = g.size(nd - 2), OW = g.size(nd - 1);
  if (H % OH != 0 || W % OW != 0) {
    // Windows of unequal sizes (or overlapping ones, when upsampling): the pooling is separable,
    // out = A_h x A_w^T with A the window-averaging matrices, so the gradient is A_h^T g A_w.
    const Tensor ah = adaptive_window_matrix(H, OH, g.dtype(), g.device());
    const Tensor aw = adaptive_window_matrix(W, OW, g.dtype(), g.device());
    return b.set("self", ops::matmul(ops::matmul(ops::t(ah), g), aw));
  }
  const int64_t kh = H / OH, kw = W / OW;
  if (kh == 1 && kw == 1) return b.set("self", g);
  // equal windows: each input element gets its window's gradient / window size
  Tensor up = ops::unsqueeze(ops::unsqueeze(g, nd), nd - 1);  // [..., OH, 1, OW, 1]
  std::vector<int64_t> shape = vec(g.sizes());
  shape.insert(shape.begin() + nd - 1, kh);
  shape.push_back(kw);
  Tensor e = ops::expand(up, shape);
  b.set("self", ops::div_Scalar(ops::reshape(e, vec(sizes)), static_cast<double>(kh * kw)));
}

// ---- products and norms -------------------------------------------------------------------

// The product of every other element along `dim`: exclusive cumulative products from both ends, so
// a zero needs no division (torch's prod_safe_zeros_backward), and twice differentiable.
Tensor product_of_others(const Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  if (n == 1) return ops::ones_like(x);
  const std::vector<int64_t> d{dim};
  const Tensor one = ops::ones_like(ops::narrow(x, dim, 0, 1));
  auto exclusive = [&](const Tensor& t) {
    return ops::cumprod(ops::cat(std::vector<Tensor>{one, ops::narrow(t, dim, 0, n - 1)}, dim),
                        dim);
  };
  return ops::mul(exclusive(x), ops::flip(exclusive(ops::flip(x, d)), d));
}

void prod_formula(B& b, std::optional<int64_t> dim, bool keepdim) {
  const Tensor x = b.in("self");
  IntArrayRef sizes = x.sizes();
  if (x.numel() == 0) return b.set("self", ops::zeros_like(x));
  if (!dim) {  // the whole tensor, as one line
    const Tensor flat = ops::reshape(x, std::vector<int64_t>{-1});
    Tensor g = ops::mul(ops::to_dtype(b.grad(), x.dtype()), product_of_others(flat, 0));
    return b.set("self", ops::reshape(g, vec(sizes)));
  }
  const int64_t d = wrap(*dim, sizes.size());
  const Tensor g =
      expand_reduced(ops::to_dtype(b.grad(), x.dtype()), sizes, std::vector<int64_t>{d}, keepdim);
  b.set("self", ops::mul(g, x.dim() == 0 ? ops::ones_like(x) : product_of_others(x, d)));
}

// cumprod: y_k = x_0 ... x_k. Without zeros, dx_i = sum_{k>=i} g_k y_k / x_i. With zeros, the
// recurrence S_i = g_i + x_{i+1} S_{i+1} (from the end) gives dx_i = (x_0 ... x_{i-1}) S_i.
void cumprod_formula(B& b) {
  const Tensor x = b.in("self");
  if (x.dim() == 0 || x.numel() == 0) return b.set("self", ops::to_dtype(b.grad(), x.dtype()));
  const int64_t dim = wrap(b.arg("dim").to_int(), x.sizes().size());
  const std::vector<int64_t> d{dim};
  const Tensor g = ops::to_dtype(b.grad(), x.dtype());
  const bool zeros = Tensor(ops::sum(ops::eq_Scalar(x, 0.0))).item().to_int() > 0;
  if (!zeros) {
    const Tensor gy = ops::mul(g, b.result());
    return b.set("self", ops::div(ops::flip(ops::cumsum(ops::flip(gy, d), dim), d), x));
  }
  const int64_t n = x.size(dim);
  std::vector<Tensor> S(static_cast<size_t>(n));
  S[n - 1] = ops::select(g, dim, n - 1);
  for (int64_t i = n - 2; i >= 0; --i)
    S[i] = ops::add(ops::select(g, dim, i), ops::mul(ops::select(x, dim, i + 1), S[i + 1]));
  const Tensor one = ops::ones_like(ops::narrow(x, dim, 0, 1));
  const Tensor left =
      ops::cumprod(ops::cat(std::vector<Tensor>{one, ops::narrow(x, dim, 0, n - 1)}, dim), dim);
  b.set("self", ops::mul(left, ops::stack(S, dim)));
}

// The gradient of a p-norm of x (norm and grad already broadcast to x's shape), torch's
// norm_backward: p = 0 has none (undefined, as torch's); p = inf goes to the elements of largest
// magnitude, shared among ties (`ties` counts them, per reduced slice); 1 and 2 as themselves; any
// other p through powers.
Tensor norm_backward(const Tensor& g, const Tensor& x, const Tensor& norm, double p,
                     const std::function<Tensor(const Tensor&)>& ties) {
  if (p == 0.0) return Tensor();
  if (p == 1.0) return ops::mul(ops::sign(x), g);
  const Tensor zero_norm = ops::eq_Scalar(norm, 0.0);
  if (p == 2.0) return ops::mul(g, ops::masked_fill_Scalar(ops::div(x, norm), zero_norm, 0.0));
  if (std::isinf(p)) {
    const Tensor ax = ops::abs(x);
    const Tensor mask =
        ops::to_dtype(ops::logical_or(ops::eq(ax, norm), ops::ne(ax, ax)), x.dtype());
    return ops::mul(ops::sign(x), ops::mul(ops::div(g, ties(mask)), mask));
  }
  const Tensor scaled = p < 2.0
                            ? ops::mul(ops::sign(x), ops::pow_Tensor_Scalar(ops::abs(x), p - 1.0))
                            : ops::mul(x, ops::pow_Tensor_Scalar(ops::abs(x), p - 2.0));
  const Tensor scale =
      ops::masked_fill_Scalar(ops::div(g, ops::pow_Tensor_Scalar(norm, p - 1.0)), zero_norm, 0.0);
  return ops::mul(scaled, scale);
}

void norm_formula(B& b, const IValue& pv, const IValue& dim, bool keepdim) {
  const Tensor x = b.in("self");
  const double p = pv.is_none() ? 2.0 : pv.to_double();
  const std::vector<int64_t> dims = reduced_dims(dim, x.sizes().size());
  auto back = [&](const Tensor& t) { return expand_reduced(t, x.sizes(), dims, keepdim); };
  const Tensor g = ops::to_dtype(back(b.grad()), x.dtype());
  const Tensor n = ops::to_dtype(back(b.result()), x.dtype());
  b.set("self", norm_backward(g, x, n, p, [&](const Tensor& mask) {
          return expand_reduced(ops::sum_dim_IntList(mask, dims, true), x.sizes(), dims, true);
        }));
}

// cdist: d_ij = ||x1_i - x2_j||_p over the last dim, for every pair; the gradient of each pair's
// norm, summed over the other side's points (x2's with the opposite sign).
void cdist_formula(B& b) {
  const Tensor x1 = b.in("x1"), x2 = b.in("x2");
  const double p = b.arg("p").to_double();
  const Tensor diff = ops::sub(ops::unsqueeze(x1, -2), ops::unsqueeze(x2, -3));  // [.., P, R, M]
  const Tensor dist = ops::unsqueeze(b.result(), -1);
  const Tensor g = ops::unsqueeze(b.grad(), -1);
  Tensor per;      // d d_ij / d diff, times g_ij
  if (p == 0.0) {  // counts of differing coordinates: zero gradients (torch's)
    if (b.needs("x1")) b.set("x1", ops::zeros_like(x1));
    if (b.needs("x2")) b.set("x2", ops::zeros_like(x2));
    return;
  }
  if (std::isinf(p)) {  // torch: every coordinate at the maximum takes the whole gradient
    per = ops::mul(ops::mul(ops::sign(diff), g),
                   ops::to_dtype(ops::eq(ops::abs(diff), dist), diff.dtype()));
  } else {
    per = norm_backward(ops::expand_as(g, diff), diff, ops::expand_as(dist, diff), p,
                        [](const Tensor& m) { return m; });
  }
  if (b.needs("x1")) b.set("x1", ops::sum_dim_IntList(per, std::vector<int64_t>{-2}, false));
  if (b.needs("x2"))
    b.set("x2", ops::neg(ops::sum_dim_IntList(per, std::vector<int64_t>{-3}, false)));
}

// ---- normalization ------------------------------------------------------------------------

// Statistics are computed in float32 for reduced-precision inputs, as torch's CPU kernels do.
Tensor widen(const Tensor& t) {
  return t.dtype() == ScalarType::Float16 || t.dtype() == ScalarType::BFloat16
             ? Tensor(ops::to_dtype(t, ScalarType::Float32))
             : t;
}

// The one-pass CPU kernels (Note [Normalization backward kernels]) serve when backward is not
// itself recorded; the composite formulas below them serve double backward and other devices.
bool use_norm_kernel(const B& b) {
  return !grad_enabled() && b.device("input").is_cpu();
}

void set_norm_grads(B& b, const OpResult& r) {
  if (b.needs("input")) b.set("input", r.tensor(0));
  if (b.needs("weight")) b.set("weight", r.tensor(1));
  if (b.needs("bias")) b.set("bias", r.tensor(2));
}

Tensor optional_in(const B& b, const char* name) {
  return b.defined(name) ? b.in(name) : Tensor();
}

IValue opt(const Tensor& t) {
  return t.defined() ? IValue(t) : IValue();
}

void batch_norm_formula(B& b) {
  if (use_norm_kernel(b))
    return set_norm_grads(
        b, ops::batch_norm_backward(b.grad(), b.in("input"), opt(optional_in(b, "weight")),
                                    opt(optional_in(b, "running_mean")),
                                    opt(optional_in(b, "running_var")), b.arg("training").to_bool(),
                                    b.arg("eps").to_double()));
  const Tensor x = widen(b.in("input"));
  const Tensor g = widen(b.grad());
  const Tensor w = b.in("weight");
  const double eps = b.arg("eps").to_double();
  const int64_t C = x.size(1);
  std::vector<int64_t> dims{0}, bshape(x.dim(), 1);
  bshape[1] = C;
  for (int64_t i = 2; i < x.dim(); ++i) dims.push_back(i);
  const bool training = b.arg("training").to_bool();
  Tensor mean, invstd;
  if (training || !b.defined("running_mean")) {
    mean = ops::mean_dim(x, dims, true);
    Tensor xc = ops::sub(x, mean);
    invstd = ops::rsqrt(ops::add_Scalar(ops::mean_dim(ops::mul(xc, xc), dims, true), eps));
  } else {
    mean = ops::view(widen(b.in("running_mean")), bshape);
    invstd = ops::view(ops::rsqrt(ops::add_Scalar(widen(b.in("running_var")), eps)), bshape);
  }
  Tensor xhat = ops::mul(ops::sub(x, mean), invstd);
  Tensor sum_g = ops::sum_dim_IntList(g, dims, true);
  Tensor sum_gx = ops::sum_dim_IntList(ops::mul(g, xhat), dims, true);
  if (b.needs("input")) {
    Tensor scale_t = w.defined() ? Tensor(ops::mul(ops::view(widen(w), bshape), invstd)) : invstd;
    Tensor gi;
    if (training || !b.defined("running_mean")) {
      const double n = static_cast<double>(x.numel() / C);
      gi = ops::sub(ops::sub(g, ops::div_Scalar(sum_g, n)),
                    ops::mul(xhat, ops::div_Scalar(sum_gx, n)));
      gi = ops::mul(gi, scale_t);
    } else {
      gi = ops::mul(g, scale_t);
    }
    b.set("input", gi);
  }
  if (b.needs("weight")) b.set("weight", ops::view(sum_gx, std::vector<int64_t>{C}));
  if (b.needs("bias")) b.set("bias", ops::view(sum_g, std::vector<int64_t>{C}));
}

void layer_norm_formula(B& b) {
  if (use_norm_kernel(b))
    return set_norm_grads(
        b, ops::layer_norm_backward(b.grad(), b.in("input"), b.arg("normalized_shape"),
                                    opt(optional_in(b, "weight")), b.arg("eps").to_double()));
  const Tensor x = widen(b.in("input"));
  const Tensor g = widen(b.grad());
  const Tensor w = b.in("weight");
  const double eps = b.arg("eps").to_double();
  const int64_t k = static_cast<int64_t>(b.arg("normalized_shape").to_int_list().size());
  std::vector<int64_t> dims;
  for (int64_t i = x.dim() - k; i < x.dim(); ++i) dims.push_back(i);
  Tensor mean = ops::mean_dim(x, dims, true);
  Tensor xc = ops::sub(x, mean);
  Tensor invstd = ops::rsqrt(ops::add_Scalar(ops::mean_dim(ops::mul(xc, xc), dims, true), eps));
  Tensor xhat = ops::mul(xc, invstd);
  if (b.needs("input")) {
    Tensor gx = w.defined() ? Tensor(ops::mul(g, widen(w))) : g;
    Tensor a = ops::mean_dim(gx, dims, true);
    Tensor c = ops::mean_dim(ops::mul(gx, xhat), dims, true);
    b.set("input", ops::mul(ops::sub(ops::sub(gx, a), ops::mul(xhat, c)), invstd));
  }
  if (b.needs("weight")) b.set("weight", ops::mul(g, xhat));  // summed to the weight's shape
  if (b.needs("bias")) b.set("bias", g);
}

void group_norm_formula(B& b) {
  const int64_t groups = b.arg("num_groups").to_int();
  const double eps = b.arg("eps").to_double();
  if (use_norm_kernel(b))
    return set_norm_grads(b, ops::group_norm_backward(b.grad(), b.in("input"), groups,
                                                      opt(optional_in(b, "weight")), eps));
  const Tensor x = widen(b.in("input"));
  const Tensor g = widen(b.grad());
  const Tensor w = b.in("weight");
  const int64_t N = x.size(0), C = x.size(1);
  std::vector<int64_t> pshape(x.dim(), 1), gshape{N, groups, -1};
  pshape[1] = C;
  auto grouped_mean = [&](const Tensor& t) {  // the mean over each group, broadcast back
    Tensor m = ops::mean_dim(ops::reshape(t, gshape), std::vector<int64_t>{2}, true);
    return ops::reshape(ops::expand(m, std::vector<int64_t>{N, groups, x.numel() / (N * groups)}),
                        vec(x.sizes()));
  };
  Tensor mean = grouped_mean(x);
  Tensor xc = ops::sub(x, mean);
  Tensor rstd = ops::rsqrt(ops::add_Scalar(grouped_mean(ops::mul(xc, xc)), eps));
  Tensor xhat = ops::mul(xc, rstd);
  if (b.needs("input")) {
    Tensor gw = w.defined() ? Tensor(ops::mul(g, ops::view(widen(w), pshape))) : g;
    Tensor dx =
        ops::sub(ops::sub(gw, grouped_mean(gw)), ops::mul(xhat, grouped_mean(ops::mul(gw, xhat))));
    b.set("input", ops::mul(dx, rstd));
  }
  std::vector<int64_t> dims{0};
  for (int64_t i = 2; i < x.dim(); ++i) dims.push_back(i);
  if (b.needs("weight")) b.set("weight", ops::sum_dim_IntList(ops::mul(g, xhat), dims, false));
  if (b.needs("bias")) b.set("bias", ops::sum_dim_IntList(g, dims, false));
  (void)C;
}

// ---- losses -------------------------------------------------------------------------------

// A loss's gradient before the reduction: grad broadcast for 'none', divided by the count for
// 'mean' (reduction: 0 none, 1 mean, 2 sum).
Tensor reduce_grad(const B& b, const Tensor& per_element) {
  const int64_t reduction = b.arg("reduction").to_int();
  Tensor r = ops::mul(b.grad(), per_element);
  if (reduction == 1)
    r = ops::div_Scalar(r, static_cast<double>(std::max<int64_t>(per_element.numel(), 1)));
  return r;
}

void nll_loss_formula(B& b) {
  const Tensor x = b.in("self"), t = b.in("target"), weight = b.in("weight");
  const int64_t ignore = b.arg("ignore_index").to_int();
  const int64_t reduction = b.arg("reduction").to_int();
  const bool unbatched = x.dim() == 1;
  Tensor xt = unbatched ? Tensor(ops::unsqueeze(x, 0)) : x;
  Tensor tt = unbatched ? Tensor(ops::unsqueeze(t, 0)) : t;
  const int64_t C = xt.size(1);
  Tensor valid = ops::ne_Scalar(tt, ignore);
  Tensor safe = ops::where_ScalarOther(valid, tt, 0);
  Tensor wt = ops::to_dtype(valid, x.dtype());
  if (weight.defined()) {
    Tensor picked =
        ops::view(ops::index_select(weight, 0, ops::reshape(safe, std::vector<int64_t>{-1})),
                  vec(safe.sizes()));
    wt = ops::mul(wt, picked);
  }
  Tensor g = b.grad();
  if (reduction == 1) g = ops::div(g, ops::sum(wt));
  Tensor per = ops::neg(ops::mul(wt, g));  // [N, d...]
  std::vector<int64_t> shape(xt.dim(), 1);
  shape[1] = C;
  Tensor ar = ops::view(ops::arange(C, ScalarType::Int64, x.device()), shape);
  Tensor onehot = ops::to_dtype(ops::eq(ops::unsqueeze(safe, 1), ar), x.dtype());
  Tensor gx = ops::mul(onehot, ops::unsqueeze(per, 1));
  b.set("self", unbatched ? Tensor(ops::squeeze_dim(gx, 0)) : gx);
}

// cross_entropy_loss is recorded as what it computes: log_softmax, then nll_loss (class indices)
// or the soft-target sum, with label smoothing as torch 1.13 mixes it in.
void cross_entropy_decompose(const OpEntry&, Stack& s) {
  const Tensor self = s[0].to_tensor(), target = s[1].to_tensor();
  const IValue weight = s[2];
  const int64_t reduction = s[3].to_int(), ignore = s[4].to_int();
  const double smoothing = s[5].to_double();
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  Tensor logp = ops::log_softmax_int(self, class_dim, std::nullopt);
  Tensor loss;
  if (is_floating(target.dtype())) {
    AMPJIT_CHECK(weight.is_none() && smoothing == 0.0,
                 "cross_entropy with class probabilities and a weight or label smoothing is not "
                 "recorded for autograd yet");
    Tensor per = ops::neg(
        ops::sum_dim_IntList(ops::mul(logp, target), std::vector<int64_t>{class_dim}, false));
    if (reduction == 0)
      loss = per;
    else if (reduction == 2)
      loss = ops::sum(per);
    else  // the mean over every position (batch and spatial), as torch
      loss =
          ops::div_Scalar(ops::sum(per), static_cast<double>(self.numel() / self.size(class_dim)));
  } else {
    loss = ops::nll_loss_nd(logp, target, weight, reduction, ignore);
    if (smoothing > 0.0) {
      AMPJIT_CHECK(
          weight.is_none(),
          "cross_entropy with a weight and label smoothing is not recorded for autograd yet");
      const double C = static_cast<double>(self.size(class_dim));
      Tensor valid = ops::ne_Scalar(target, ignore);
      Tensor smooth = ops::neg(ops::sum_dim_IntList(logp, std::vector<int64_t>{class_dim}, false));
      smooth = ops::mul(smooth, valid);
      if (reduction == 1)
        smooth = ops::div(ops::sum(smooth), ops::sum(ops::to_dtype(valid, smooth.dtype())));
      else if (reduction == 2)
        smooth = ops::sum(smooth);
      loss =
          ops::add(ops::mul_Scalar(loss, 1.0 - smoothing), ops::mul_Scalar(smooth, smoothing / C));
    }
  }
  s.clear();
  s.emplace_back(loss);
}

// dropout in training is recorded as the noise it multiplies by (torch's native_dropout): the noise
// is the dropout kernel applied to ones (0, or 1 / (1 - p) in the input's dtype), so the random
// stream and the result are the ones the unrecorded kernel gives.
void dropout_decompose(const OpEntry& op, Stack& s) {
  const Tensor input = s[0].to_tensor();
  const double p = s[1].to_double();
  const bool train = s[2].to_bool();
  Tensor out = input;
  if (train && p != 0.0) {
    Tensor noise;
    {
      NoGradGuard no_grad;
      noise = ops::dropout(ops::ones_like(input), p, true);
    }
    out = op.is_inplace ? Tensor(ops::mul_(input, noise)) : Tensor(ops::mul(input, noise));
  }
  s.clear();
  s.emplace_back(out);
}

// ---- nn: pooling beyond 2-D, unpooling, padding, patches, grid sampling ------------------
// The interpolation and non-constant padding ops are composites differentiated through the ops
// they call (Note [Separable interpolation], Note [Padding as a gather] in kernels/cpu/); these are
// the kernels' derivatives, as torch's derivatives.yaml declares them.

// The last `nsp` dimensions of t flattened into one.
Tensor flatten_spatial(const Tensor& t, int64_t nsp) {
  std::vector<int64_t> shape(t.sizes().begin(), t.sizes().end() - nsp);
  shape.push_back(-1);
  return ops::reshape(t, shape);
}

// The gradient of a max pool that returns indices (flat over the input's last `nsp` dimensions):
// the output gradient scattered to the maxima, added where a maximum serves several windows.
void pool_indices_formula(B& b, int64_t nsp) {
  IntArrayRef sizes = b.sizes("self");
  const Tensor& g = b.grad();
  const Tensor flat = flatten_spatial(zeros(sizes, g.dtype(), g.device()), nsp);
  const int64_t dim = flat.dim() - 1;
  const Tensor gi =
      ops::scatter_add(flat, dim, flatten_spatial(b.result(1), nsp), flatten_spatial(g, nsp));
  b.set("self", ops::view(gi, vec(sizes)));
}

// max_pool3d is recorded as max_pool3d_with_indices, as max_pool2d is.
void max_pool3d_decompose(const OpEntry&, Stack& s) {
  const OpResult r = ops::max_pool3d_with_indices(s[0], s[1], s[2], s[3], s[4], s[5]);
  s.clear();
  s.emplace_back(r.tensor(0));
}

// max_unpool's gradient: the output gradient read back at the indices (torch's
// max_pool_double_backward).
void max_unpool_formula(B& b, int64_t nsp) {
  const Tensor idx = flatten_spatial(b.in("indices"), nsp);
  const Tensor g = flatten_spatial(b.grad(), nsp);
  b.set("self", ops::view(ops::gather(g, g.dim() - 1, idx), vec(b.sizes("self"))));
}

void grid_sampler_formula(B& b, int nsp) {
  const Tensor input = b.in("input"), grid = b.in("grid");
  const int64_t mode = b.arg("interpolation_mode").to_int();
  const int64_t padding = b.arg("padding_mode").to_int();
  const bool align_corners = b.arg("align_corners").to_bool();
  const OpResult r = nsp == 2 ? ops::grid_sampler_2d_backward(b.grad(), input, grid, mode, padding,
                                                              align_corners, b.needs("input"))
                              : ops::grid_sampler_3d_backward(b.grad(), input, grid, mode, padding,
                                                              align_corners, b.needs("input"));
  if (b.needs("input")) b.set("input", r.tensor(0));
  if (b.needs("grid")) b.set("grid", r.tensor(1));
}

// ---- linalg ----
// torch's formulas (FunctionsManual.cpp) for the LAPACK-backed ops of ops/linalg_lapack.def; the
// composite linalg ops (det, inv, solve, pinv, ...) are decompositions, differentiated through
// these.

Tensor mH(const Tensor& t) {  // real matrices only: the adjoint is the transpose
  return mT(t);
}
Tensor diag_embed(const Tensor& t) {
  return call_op("aten::diag_embed", {IValue(t)}).tensor();
}
// Whether no gradient reached an output (the engine passes zeros for it). svdvals and eigvalsh
// differentiate through the eigenvectors' outputs they drop: their gradients take the short
// formulas torch uses when those are undefined, which stay finite for repeated values.
bool all_zero(const Tensor& g) {
  return g.numel() == 0 || !Tensor(ops::any(ops::ne_Scalar(g, Scalar(0.0)))).item<bool>();
}
Tensor solve_tri(const Tensor& A, const Tensor& B, bool upper, bool left, bool unit = false) {
  return ops::linalg_solve_triangular(A, B, upper, left, unit);
}

// linalg_lu_backward: the gradient of A = P L U from those of L [m, k] and U [k, n].
Tensor linalg_lu_backward(const Tensor& gL, const Tensor& gU, const Tensor& P, const Tensor& L,
                          const Tensor& U, bool pivot) {
  const int64_t m = L.size(-2), n = U.size(-1), k = std::min(m, n);
  Tensor gA;
  if (m == n) {
    // P L^{-H} [L^H gL o 1_L + gU U^H o 1_U] U^{-H}
    gA = ops::add(ops::tril(ops::matmul(mH(L), gL), -1), ops::triu(ops::matmul(gU, mH(U))));
    gA = solve_tri(mH(U), gA, false, false);
    gA = solve_tri(mH(L), gA, true, true, true);
  } else if (m < n) {
    const Tensor U1 = ops::narrow(U, -1, 0, k), gU1 = ops::narrow(gU, -1, 0, k);
    const Tensor gU2 = ops::narrow(gU, -1, k, n - k);
    gA = ops::sub(ops::matmul(mH(L), gL), ops::matmul(ops::triu(gU), mH(U)));
    gA = solve_tri(mH(U1), ops::tril(gA, -1), false, false);
    gA = ops::cat(std::vector<Tensor>{ops::add(gA, ops::triu(gU1)), gU2}, -1);
    gA = solve_tri(mH(L), gA, true, true, true);
  } else {
    const Tensor L1 = ops::narrow(L, -2, 0, k), gL1 = ops::narrow(gL, -2, 0, k);
    const Tensor gL2 = ops::narrow(gL, -2, k, m - k);
    gA = ops::sub(ops::matmul(gU, mH(U)), ops::matmul(mH(L), ops::tril(gL, -1)));
    gA = solve_tri(mH(L1), ops::triu(gA), true, true, true);
    gA = ops::cat(std::vector<Tensor>{ops::add(gA, ops::tril(gL1, -1)), gL2}, -2);
    gA = solve_tri(mH(U), gA, false, false);
  }
  return pivot ? Tensor(ops::matmul(P, gA)) : gA;
}

void lu_factor_ex_formula(B& b) {
  const Tensor LU = b.result(0), piv = b.result(1);
  const bool pivot = b.arg("pivot").to_bool();
  const OpResult plu = ops::lu_unpack(LU, piv, true, pivot);
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  const Tensor& g = b.grad(0);
  b.set("A", linalg_lu_backward(ops::narrow(g, -1, 0, k), ops::narrow(g, -2, 0, k), plu.tensor(0),
                                plu.tensor(1), plu.tensor(2), pivot));
}

// lu_unpack_backward: L's strict lower triangle and U's upper one, back into the packed LU.
void lu_unpack_formula(B& b) {
  IntArrayRef s = b.sizes("LU_data");
  const int64_t m = s[s.size() - 2], n = s[s.size() - 1], k = std::min(m, n);
  const Tensor gL = ops::tril(b.grad(1), -1), gU = ops::triu(b.grad(2));
  Tensor g;
  if (m == n) {
    g = ops::add(gL, gU);
  } else if (m < n) {  // L [m, m], U [m, n]
    g = ops::cat(
        std::vector<Tensor>{ops::add(ops::narrow(gU, -1, 0, k), gL), ops::narrow(gU, -1, k, n - k)},
        -1);
  } else {  // L [m, n], U [n, n]
    g = ops::cat(
        std::vector<Tensor>{ops::add(ops::narrow(gL, -2, 0, k), gU), ops::narrow(gL, -2, k, m - k)},
        -2);
  }
  b.set("LU_data", g);
}

void solve_triangular_formula(B& b) {
  const Tensor A = b.in("self"), X = b.result();
  const bool upper = b.arg("upper").to_bool(), left = b.arg("left").to_bool();
  const bool unit = b.arg("unitriangular").to_bool();
  const Tensor gB = solve_tri(mH(A), b.grad(), !upper, left, unit);
  if (b.needs("self")) {
    const Tensor gA = ops::neg(left ? ops::matmul(gB, mH(X)) : ops::matmul(mH(X), gB));
    b.set("self", upper ? ops::triu(gA, unit ? 1 : 0) : ops::tril(gA, unit ? -1 : 0));
  }
  if (b.needs("B")) b.set("B", gB);
}

// cholesky_backward (Iain Murray, arXiv 1602.07527).
void cholesky_formula(B& b) {
  Tensor L = b.result(0), gL = b.grad(0);
  if (b.arg("upper").to_bool()) {
    L = mH(L);
    gL = mH(gL);
  }
  Tensor gA = ops::tril(ops::matmul(mH(L), gL));
  gA = ops::mul_Scalar(ops::add(gA, mH(ops::tril(gA, -1))), 0.5);
  gA = solve_tri(mH(L), gA, true, true);
  gA = solve_tri(L, gA, false, false);
  b.set("self", gA);
}

// linalg_qr_backward, for mode 'reduced' and for 'complete' with m <= n.
void qr_formula(B& b) {
  const std::string mode = b.arg("mode").to<std::string>();
  const Tensor Q = b.result(0), R = b.result(1);
  const int64_t m = Q.size(-2), n = R.size(-1);
  AMPJIT_CHECK(mode != "r",
               "The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
               "Please use linalg.qr(A, mode='reduced') if you are going to differentiate through "
               "linalg.qr.");
  AMPJIT_CHECK(
      mode == "reduced" || m <= n,
      "The QR decomposition is not differentiable when mode='complete' and nrows > ncols.");
  Tensor gQ = b.grad(0), gR = b.grad(1);
  // copyltu(M) = tril(M) + tril(M, -1)^H, with M = R gR^H - gQ^H Q (on the square part of R).
  auto copyltu = [](const Tensor& M) { return ops::add(ops::tril(M), mH(ops::tril(M, -1))); };
  if (m >= n) {
    const Tensor M = ops::sub(ops::matmul(R, mH(gR)), ops::matmul(mH(gQ), Q));
    const Tensor gA = ops::add(gQ, ops::matmul(Q, copyltu(M)));
    b.set("A", solve_tri(mH(R), gA, false, false));
    return;
  }
  // A = [X | Y] with X = Q U square: Y's gradient is Q gV, X's the square case's with
  // gQ + Y gV^H for gQ.
  const Tensor U = ops::narrow(R, -1, 0, m), V = ops::narrow(R, -1, m, n - m);
  const Tensor gU = ops::narrow(gR, -1, 0, m), gV = ops::narrow(gR, -1, m, n - m);
  const Tensor Y = ops::matmul(Q, V);
  gQ = ops::add(gQ, ops::matmul(Y, mH(gV)));
  const Tensor M = ops::sub(ops::matmul(U, mH(gU)), ops::matmul(mH(gQ), Q));
  Tensor gX = ops::add(gQ, ops::matmul(Q, copyltu(M)));
  gX = solve_tri(mH(U), gX, false, false);
  b.set("A", ops::cat(std::vector<Tensor>{gX, ops::matmul(Q, gV)}, -1));
}

// svd_backward, on the first k columns of U and rows of V^H when full_matrices.
void svd_formula(B& b) {
  AMPJIT_CHECK(b.arg("compute_uv").to_bool(),
               "linalg.svd: the derivative needs U and V^H, which compute_uv=False does not "
               "compute");
  const Tensor S = b.result(1);
  const int64_t k = S.size(-1);
  Tensor U = b.result(0), Vh = b.result(2), gU = b.grad(0), gVh = b.grad(2);
  const Tensor gS = b.grad(1);
  if (b.arg("full_matrices").to_bool()) {
    U = ops::narrow(U, -1, 0, k);
    gU = ops::narrow(gU, -1, 0, k);
    Vh = ops::narrow(Vh, -2, 0, k);
    gVh = ops::narrow(gVh, -2, 0, k);
  }
  const int64_t m = U.size(-2), n = Vh.size(-1);
  if (all_zero(gU) && all_zero(gVh)) {  // svdvals: gA = U diag(gS) V^H
    b.set("A", ops::matmul(ops::mul(U, ops::unsqueeze(gS, -2)), Vh));
    return;
  }
  auto skew = [](const Tensor& A) { return ops::sub(A, mH(A)); };
  const Tensor UhgU = skew(ops::matmul(mH(U), gU));
  const Tensor VhgV = skew(ops::matmul(Vh, mH(gVh)));
  const Tensor S2 = ops::mul(S, S);
  // E[i, j] = S_j^2 - S_i^2 off the diagonal, 1 on it
  Tensor E = ops::sub(ops::unsqueeze(S2, -2), ops::unsqueeze(S2, -1));
  E = ops::add(E, diag_embed(ops::ones_like(S)));
  Tensor gA = ops::div(
      ops::add(ops::mul(UhgU, ops::unsqueeze(S, -2)), ops::mul(ops::unsqueeze(S, -1), VhgV)), E);
  gA = ops::add(gA, diag_embed(gS));
  if (m > n) {
    gA = ops::matmul(U, gA);
    const Tensor gUSinv = ops::div(gU, ops::unsqueeze(S, -2));
    gA = ops::sub(ops::add(gA, gUSinv), ops::matmul(U, ops::matmul(mH(U), gUSinv)));
    gA = ops::matmul(gA, Vh);
  } else if (m < n) {
    gA = ops::matmul(gA, Vh);
    const Tensor SinvgVh = ops::div(gVh, ops::unsqueeze(S, -1));
    gA = ops::sub(ops::add(gA, SinvgVh), ops::matmul(ops::matmul(SinvgVh, mH(Vh)), Vh));
    gA = ops::matmul(U, gA);
  } else {
    gA = ops::matmul(U, ops::matmul(gA, Vh));
  }
  b.set("A", gA);
}

// linalg_eig_backward: gA = V^{-H} (diag(gL) + P(V^H gV) / E) V^H, E[i, j] = L_j - L_i.
Tensor eig_backward(const Tensor& gL, const Tensor& gV, const Tensor& L, const Tensor& V,
                    bool hermitian) {
  if (hermitian && all_zero(gV))  // eigvalsh: gA = V diag(gL) V^H
    return ops::matmul(ops::mul(V, ops::unsqueeze(gL, -2)), mH(V));
  Tensor VhgV = ops::matmul(mH(V), gV);
  if (hermitian) {
    VhgV = ops::mul_Scalar(ops::sub(VhgV, mH(VhgV)), 0.5);
  } else {
    const Tensor d = call_op("aten::diagonal", {IValue(VhgV), IValue(int64_t{0}),
                                                IValue(int64_t{-2}), IValue(int64_t{-1})})
                         .tensor();
    VhgV = ops::sub(VhgV, ops::matmul(mH(V), ops::mul(V, ops::unsqueeze(d, -2))));
  }
  Tensor E = ops::sub(ops::unsqueeze(L, -2), ops::unsqueeze(L, -1));
  E = ops::add(E, diag_embed(ops::ones_like(L)));
  Tensor gA = ops::div(VhgV, E);
  // the diagonal: gL (VhgV / E has 0 there for the hermitian projection; the general one's
  // diagonal is replaced)
  const Tensor eye = diag_embed(ops::ones_like(L));
  gA = ops::add(ops::mul(gA, ops::rsub_Scalar(eye, 1.0)), diag_embed(gL));
  if (hermitian) return ops::matmul(V, ops::matmul(gA, mH(V)));
  return call_op("aten::linalg_solve", {IValue(mH(V)), IValue(Tensor(ops::matmul(gA, mH(V))))})
      .tensor();
}

// householder_product_backward: Q = (H_1 ... H_k) E, E the first n columns of the identity,
// H_i = I - tau_i v_i v_i^H with v_i the i-th column of `input` below the diagonal and 1 on it.
// With P_i = H_1 ... H_{i-1} and S_i = H_{i+1} ... H_k E, dQ = P_i dH_i S_i, so H_i's gradient is
// G_i = P_i^H G S_i^H, and then tau_i's is -v_i^H G_i v_i and v_i's -tau_i (G_i + G_i^H) v_i.
void householder_product_formula(B& b) {
  const Tensor input = b.in("input"), tau = b.in("tau"), G = b.grad();
  const int64_t m = input.size(-2), n = input.size(-1), k = tau.size(-1);
  const ScalarType dt = input.dtype();
  const Tensor V = ops::add(ops::tril(input, -1), ops::eye_m(m, n, dt));
  const Tensor I = ops::eye(m, dt);
  std::vector<Tensor> v(k), H(k), P(k), S(k);
  for (int64_t i = 0; i < k; ++i) {
    v[i] = ops::unsqueeze(ops::select(V, -1, i), -1);  // [..., m, 1]
    const Tensor t = ops::unsqueeze(ops::unsqueeze(ops::select(tau, -1, i), -1), -1);
    H[i] = ops::sub(I, ops::mul(t, ops::matmul(v[i], mH(v[i]))));
  }
  for (int64_t i = 0; i < k; ++i) P[i] = i == 0 ? I : Tensor(ops::matmul(P[i - 1], H[i - 1]));
  for (int64_t i = k; i-- > 0;)
    S[i] = i == k - 1 ? Tensor(ops::eye_m(m, n, dt)) : Tensor(ops::matmul(H[i + 1], S[i + 1]));
  std::vector<Tensor> g_tau(k), g_cols(n);
  const Tensor rows = ops::arange(m);
  for (int64_t i = 0; i < n; ++i) {
    if (i >= k) {
      g_cols[i] = ops::zeros_like(ops::select(input, -1, i));
      continue;
    }
    const Tensor Gi = ops::matmul(ops::matmul(mH(P[i]), G), mH(S[i]));
    const Tensor t = ops::unsqueeze(ops::unsqueeze(ops::select(tau, -1, i), -1), -1);
    g_tau[i] = ops::neg(
        ops::squeeze_dim(ops::squeeze_dim(ops::matmul(mH(v[i]), ops::matmul(Gi, v[i])), -1), -1));
    const Tensor gv = ops::neg(ops::mul(t, ops::matmul(ops::add(Gi, mH(Gi)), v[i])));
    // only the entries below the diagonal are inputs
    const Tensor below = ops::gt_Scalar(rows, Scalar(i));
    g_cols[i] = ops::mul(ops::squeeze_dim(gv, -1), below);
  }
  if (b.needs("input")) b.set("input", ops::stack(g_cols, -1));
  if (b.needs("tau") && k > 0) b.set("tau", ops::stack(g_tau, -1));
}

// pinv_backward: the gradient of pinv(A) (FunctionsManual.cpp), for lstsq.
Tensor pinv_backward(const Tensor& grad, const Tensor& pinvA, const Tensor& A) {
  const int64_t m = A.size(-2), n = A.size(-1);
  const Tensor pinvAh = mH(pinvA), gradh = mH(grad);
  if (m <= n) {
    const Tensor K = ops::matmul(gradh, pinvA);
    const Tensor KpinvAh = ops::matmul(K, pinvAh);
    return ops::add(ops::sub(ops::add(ops::neg(mH(ops::matmul(pinvA, K))), KpinvAh),
                             ops::matmul(ops::matmul(A, pinvA), KpinvAh)),
                    ops::matmul(ops::matmul(pinvAh, pinvA), ops::sub(gradh, ops::matmul(K, A))));
  }
  const Tensor K = ops::matmul(pinvA, gradh);
  const Tensor pinvAhK = ops::matmul(pinvAh, K);
  return ops::sub(
      ops::add(
          ops::add(ops::neg(mH(ops::matmul(K, pinvA))),
                   ops::matmul(ops::matmul(ops::sub(gradh, ops::matmul(A, K)), pinvA), pinvAh)),
          pinvAhK),
      ops::matmul(ops::matmul(pinvAhK, pinvA), A));
}

void lstsq_formula(B& b) {
  const Tensor A = b.in("self");
  Tensor B_ = b.in("b"), gX = b.grad(0);
  const bool vector_case = A.dim() - B_.dim() == 1;
  if (vector_case) {
    B_ = ops::unsqueeze(B_, -1);
    gX = ops::unsqueeze(gX, -1);
  }
  const Tensor pinvA = call_op("aten::linalg_pinv.atol_rtol_float", {IValue(A)}).tensor();
  if (b.needs("self")) b.set("self", pinv_backward(ops::matmul(gX, mH(B_)), pinvA, A));
  if (b.needs("b")) {
    const Tensor gB = ops::matmul(mH(pinvA), gX);
    b.set("b", vector_case ? Tensor(ops::squeeze_dim(gB, -1)) : gB);
  }
}

// ---- the table ----------------------------------------------------------------------------

#define D(ID, SAVES, ...)                           \
  Derivative {                                      \
    OpId::ID, SAVES, [](B & b) __VA_ARGS__, nullptr \
  }
#define NONDIFF(ID)                \
  Derivative {                     \
    OpId::ID, "", nullptr, nullptr \
  }
#define DECOMPOSE(ID, FN)     \
  Derivative {                \
    OpId::ID, "", nullptr, FN \
  }

// ---- fft ----
// _fft_r2c: the gradient of the kept half, zeros for the dropped one, transformed back; its real
// parts (torch's fft_r2c_backward).
void fft_r2c_formula(B& b) {
  Tensor g = b.grad();
  const IntArrayRef sizes = b.sizes("self");
  const std::vector<int64_t> dim = b.arg("dim").to_int_list();
  if (b.arg("onesided").to_bool()) {
    const int64_t d = wrap(dim.back(), sizes.size());
    const int64_t missing = sizes[static_cast<size_t>(d)] - g.size(d);
    if (missing > 0) {  // g has the pair dimension last
      std::vector<int64_t> pad(static_cast<size_t>(2 * (g.dim() - d)), 0);
      pad.back() = missing;
      g = ops::constant_pad_nd(g, pad, 0);
    }
  }
  b.set("self", ops::select(ops::fft_c2c_pairs(g, dim, b.arg("normalization"), false), -1, 0));
}

// _fft_c2r: the forward transform of the gradient, one-sided, its values doubled where the
// dropped half mirrors them (torch's fft_c2r_backward).
void fft_c2r_formula(B& b) {
  const std::vector<int64_t> dim = b.arg("dim").to_int_list();
  Tensor g = ops::fft_r2c_pairs(b.grad(), dim, b.arg("normalization"), true);
  const int64_t d = wrap(dim.back(), b.sizes("self").size() - 1);
  const int64_t half = g.size(d);
  const int64_t doubled = b.arg("last_dim_size").to_int() - half;
  if (doubled > 0) {
    std::vector<Tensor> parts = {ops::narrow(g, d, 0, 1),
                                 ops::mul_Scalar(ops::narrow(g, d, 1, doubled), 2)};
    if (half > 1 + doubled) parts.push_back(ops::narrow(g, d, 1 + doubled, half - 1 - doubled));
    g = ops::cat(parts, d);
  }
  b.set("self", g);
}
// ---- end fft ----

Derivative kDerivatives[] = {
    // -- arithmetic
    D(add, "",
      {
        b.set("self", b.grad());
        if (b.needs("other")) b.set("other", scale(b.grad(), scalar(b, "alpha")));
      }),
    D(add_Scalar, "", { b.set("self", b.grad()); }),
    D(sub, "",
      {
        b.set("self", b.grad());
        if (b.needs("other")) b.set("other", scale(ops::neg(b.grad()), scalar(b, "alpha")));
      }),
    D(sub_Scalar, "", { b.set("self", b.grad()); }),
    D(rsub, "",
      {
        if (b.needs("self")) b.set("self", scale(ops::neg(b.grad()), scalar(b, "alpha")));
        b.set("other", b.grad());
      }),
    D(rsub_Scalar, "", { b.set("self", scale(ops::neg(b.grad()), scalar(b, "alpha"))); }),
    D(mul, "self other",
      {
        if (b.needs("self")) b.set("self", ops::mul(b.grad(), b.in("other")));
        if (b.needs("other")) b.set("other", ops::mul(b.grad(), b.in("self")));
      }),
    D(mul_Scalar, "", { b.set("self", ops::mul_Scalar(b.grad(), scalar(b, "other"))); }),
    D(div, "self other",
      {
        const Tensor y = b.in("other");
        if (b.needs("self")) b.set("self", ops::div(b.grad(), y));
        if (b.needs("other"))
          b.set("other", ops::neg(ops::div(ops::mul(b.grad(), b.in("self")), ops::mul(y, y))));
      }),
    D(div_Scalar, "", { b.set("self", ops::div_Scalar(b.grad(), scalar(b, "other"))); }),
    D(div_Tensor_mode, "self other",
      {
        if (!b.arg("rounding_mode").is_none()) {  // rounded: zero almost everywhere
          if (b.needs("self")) b.set("self", ops::zeros_like(b.grad()));
          if (b.needs("other")) b.set("other", ops::zeros_like(b.grad()));
          return;
        }
        const Tensor y = b.in("other");
        if (b.needs("self")) b.set("self", ops::div(b.grad(), y));
        if (b.needs("other"))
          b.set("other", ops::neg(ops::div(ops::mul(b.grad(), b.in("self")), ops::mul(y, y))));
      }),
    D(div_Scalar_mode, "",
      {
        b.set("self", b.arg("rounding_mode").is_none()
                          ? Tensor(ops::div_Scalar(b.grad(), scalar(b, "other")))
                          : Tensor(ops::zeros_like(b.grad())));
      }),
    D(neg, "", { b.set("self", ops::neg(b.grad())); }),
    D(abs, "self", { b.set("self", ops::mul(b.grad(), ops::sign(b.in("self")))); }),
    D(sign, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(floor, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(ceil, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(round, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(round_decimals, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(pow_Tensor_Scalar, "self", { pow_tensor_scalar(b); }),
    D(pow, "self exponent result",
      {
        const Tensor x = b.in("self"), e = b.in("exponent");
        if (b.needs("self")) {
          Tensor d = ops::mul(e, ops::pow(x, ops::sub_Scalar(e, 1.0)));
          d = ops::masked_fill_Scalar(d, ops::eq_Scalar(e, 0.0), 0.0);
          b.set("self", ops::mul(b.grad(), d));
        }
        if (b.needs("exponent")) {
          Tensor d = ops::mul(b.result(), ops::log(x));
          d = ops::masked_fill_Scalar(
              d, ops::logical_and(ops::eq_Scalar(x, 0.0), ops::ge_Scalar(e, 0.0)), 0.0);
          b.set("exponent", ops::mul(b.grad(), d));
        }
      }),
    D(pow_Scalar, "result",
      {
        const double base = b.arg("self").to_double();
        b.set("exponent", base == 0.0 ? Tensor(ops::zeros_like(b.grad()))
                                      : Tensor(ops::mul_Scalar(ops::mul(b.grad(), b.result()),
                                                               std::log(base))));
      }),
    D(fmod_Scalar, "", { b.set("self", b.grad()); }),
    D(remainder_Scalar, "", { b.set("self", b.grad()); }),
    // fmod/remainder: self - other * q with q rounded (toward zero / down), piecewise constant
    D(fmod, "self other", { rounded_quotient_formula(b, "trunc"); }),
    D(remainder, "self other", { rounded_quotient_formula(b, "floor"); }),
    D(atan2, "self other",
      {
        const Tensor y = b.in("self"), x = b.in("other");
        const Tensor r = ops::div(b.grad(), ops::add(ops::mul(y, y), ops::mul(x, x)));
        if (b.needs("self")) b.set("self", ops::mul(r, x));
        if (b.needs("other")) b.set("other", ops::neg(ops::mul(r, y)));
      }),
    D(addcmul, "tensor1 tensor2",
      {
        const Scalar v = scalar(b, "value");
        b.set("self", b.grad());
        if (b.needs("tensor1")) b.set("tensor1", scale(ops::mul(b.grad(), b.in("tensor2")), v));
        if (b.needs("tensor2")) b.set("tensor2", scale(ops::mul(b.grad(), b.in("tensor1")), v));
      }),
    D(addcdiv, "tensor1 tensor2",
      {
        const Scalar v = scalar(b, "value");
        const Tensor t2 = b.in("tensor2");
        b.set("self", b.grad());
        if (b.needs("tensor1")) b.set("tensor1", scale(ops::div(b.grad(), t2), v));
        if (b.needs("tensor2"))
          b.set(
              "tensor2",
              scale(ops::neg(ops::div(ops::mul(b.grad(), b.in("tensor1")), ops::mul(t2, t2))), v));
      }),
    // torch's fmax/fmin: the gradient goes to the operand the result is, `self` also where
    // `other` is NaN
    D(scatter_reduce_two, "self index src result", { reduce_into_formula(b, "src", false); }),
    D(index_reduce, "self index source result", { reduce_into_formula(b, "source", true); }),
    D(fmax, "self other", { fmaxmin_formula(b, true); }),
    D(fmin, "self other", { fmaxmin_formula(b, false); }),
    // torch's copysign_tensor_self_backward: result / self, 0 where self is 0; `other` gets zeros
    D(copysign, "self other result",
      {
        if (b.needs("self")) b.set("self", copysign_self_grad(b));
        if (b.needs("other")) b.set("other", ops::zeros_like(b.in("other")));
      }),
    D(copysign_Scalar, "self result", { b.set("self", copysign_self_grad(b)); }),
    // the mantissa is self / 2^exponent; the exponent is an integer tensor
    D(frexp, "result", { b.set("self", ops::div(b.grad(0), ops::exp2(b.result(1)))); }),
    D(maximum, "self other", { maxmin_formula(b, true); }),
    D(minimum, "self other", { maxmin_formula(b, false); }),
    D(where, "condition",
      {
        const Tensor c = b.in("condition");
        if (b.needs("self")) b.set("self", ops::where_ScalarOther(c, b.grad(), 0.0));
        if (b.needs("other")) b.set("other", ops::where_ScalarSelf(c, 0.0, b.grad()));
      }),
    D(where_ScalarSelf, "condition",
      { b.set("other", ops::where_ScalarSelf(b.in("condition"), 0.0, b.grad())); }),
    D(where_ScalarOther, "condition",
      { b.set("self", ops::where_ScalarOther(b.in("condition"), b.grad(), 0.0)); }),
    D(masked_fill_Scalar, "mask",
      { b.set("self", ops::masked_fill_Scalar(b.grad(), b.in("mask"), 0.0)); }),
    D(masked_fill_Tensor, "mask",
      {
        const Tensor m = b.in("mask");
        if (b.needs("self")) b.set("self", ops::masked_fill_Scalar(b.grad(), m, 0.0));
        if (b.needs("value")) b.set("value", ops::sum(ops::mul(b.grad(), m)));
      }),
    // -- unary math
    D(exp, "result", { b.set("self", ops::mul(b.grad(), b.result())); }),
    D(log, "self", { b.set("self", ops::div(b.grad(), b.in("self"))); }),
    D(log1p, "self", { b.set("self", ops::div(b.grad(), ops::add_Scalar(b.in("self"), 1.0))); }),
    D(sqrt, "result", { b.set("self", ops::div(b.grad(), ops::mul_Scalar(b.result(), 2.0))); }),
    D(rsqrt, "result",
      {
        const Tensor y = b.result();
        b.set("self", ops::mul_Scalar(ops::mul(b.grad(), ops::mul(ops::mul(y, y), y)), -0.5));
      }),
    D(reciprocal, "result",
      {
        const Tensor y = b.result();
        b.set("self", ops::neg(ops::mul(b.grad(), ops::mul(y, y))));
      }),
    D(sin, "self", { b.set("self", ops::mul(b.grad(), ops::cos(b.in("self")))); }),
    D(cos, "self", { b.set("self", ops::neg(ops::mul(b.grad(), ops::sin(b.in("self"))))); }),
    D(tan, "result",
      {
        const Tensor y = b.result();
        b.set("self", ops::mul(b.grad(), ops::add_Scalar(ops::mul(y, y), 1.0)));
      }),
    D(tanh, "result",
      {
        const Tensor y = b.result();
        b.set("self", ops::mul(b.grad(), ops::rsub_Scalar(ops::mul(y, y), 1.0)));
      }),
    D(sigmoid, "result",
      {
        const Tensor y = b.result();
        b.set("self", ops::mul(b.grad(), ops::mul(y, ops::rsub_Scalar(y, 1.0))));
      }),
    D(erf, "self",
      {
        const Tensor x = b.in("self");
        b.set("self",
              ops::mul(b.grad(), ops::mul_Scalar(ops::exp(ops::neg(ops::mul(x, x))), M_2_SQRTPI)));
      }),
    // on the CPU one pass (aten::threshold_backward, itself differentiable); elsewhere the mask
    D(relu, "result",
      {
        const Tensor r = b.result();
        b.set("self", r.device().is_cpu() ? Tensor(ops::threshold_backward(b.grad(), r, 0))
                                          : mask(b.grad(), ops::gt_Scalar(r, 0)));
      }),
    D(threshold_backward, "self",
      {
        if (b.needs("grad_output"))
          b.set("grad_output",
                ops::threshold_backward(b.grad(), b.in("self"), scalar(b, "threshold")));
        if (b.needs("self")) b.set("self", ops::zeros_like(b.in("self")));
      }),
    D(relu6, "self",
      {
        b.set("self", mask(b.grad(), ops::logical_and(ops::gt_Scalar(b.in("self"), 0),
                                                      ops::lt_Scalar(b.in("self"), 6))));
      }),
    D(hardtanh, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", mask(b.grad(), ops::logical_and(ops::gt_Scalar(x, scalar(b, "min_val")),
                                                      ops::lt_Scalar(x, scalar(b, "max_val")))));
      }),
    D(leaky_relu, "self",
      {
        b.set("self", ops::where(ops::gt_Scalar(b.in("self"), 0), b.grad(),
                                 ops::mul_Scalar(b.grad(), scalar(b, "negative_slope"))));
      }),
    D(elu, "self result",
      {
        const double alpha = b.arg("alpha").to_double(), sc = b.arg("scale").to_double(),
                     is = b.arg("input_scale").to_double();
        Tensor neg = ops::mul_Scalar(ops::add_Scalar(b.result(), alpha * sc), is);
        b.set("self",
              ops::mul(b.grad(), ops::where_ScalarSelf(ops::gt_Scalar(b.in("self"), 0), sc, neg)));
      }),
    D(silu, "self",
      {
        const Tensor x = b.in("self");
        Tensor s = ops::sigmoid(x);
        b.set("self",
              ops::mul(b.grad(),
                       ops::mul(s, ops::add_Scalar(ops::mul(x, ops::rsub_Scalar(s, 1.0)), 1.0))));
      }),
    D(gelu, "self",
      {
        b.set("self", gelu_backward(b.grad(), b.in("self"), b.arg("approximate").to_string_ref()));
      }),
    D(hardswish, "self",
      {
        const Tensor x = b.in("self");
        Tensor mid = ops::add_Scalar(ops::div_Scalar(x, 3.0), 0.5);
        Tensor d = ops::where_ScalarSelf(ops::lt_Scalar(x, -3.0), 0.0,
                                         ops::where_ScalarOther(ops::le_Scalar(x, 3.0), mid, 1.0));
        b.set("self", ops::mul(b.grad(), d));
      }),
    D(hardsigmoid, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::mul_Scalar(mask(b.grad(), ops::logical_and(ops::gt_Scalar(x, -3.0),
                                                                      ops::lt_Scalar(x, 3.0))),
                                      1.0 / 6.0));
      }),
    D(softplus, "self",
      {
        const double beta = b.arg("beta").to_double(), threshold = b.arg("threshold").to_double();
        const Tensor x = b.in("self");
        Tensor bx = ops::mul_Scalar(x, beta);
        b.set("self", ops::mul(b.grad(), ops::where_ScalarOther(ops::le_Scalar(bx, threshold),
                                                                ops::sigmoid(bx), 1.0)));
      }),
    D(log_sigmoid, "self",
      { b.set("self", ops::mul(b.grad(), ops::sigmoid(ops::neg(b.in("self"))))); }),
    D(mish, "self",
      {
        const Tensor x = b.in("self");
        Tensor tsp = ops::tanh(ops::softplus(x));
        Tensor d = ops::add(
            tsp, ops::mul(ops::mul(x, ops::sigmoid(x)), ops::rsub_Scalar(ops::mul(tsp, tsp), 1.0)));
        b.set("self", ops::mul(b.grad(), d));
      }),
    D(clamp, "self",
      {
        const Tensor m = in_range(b.in("self"), b.arg("min"), b.arg("max"));
        b.set("self", m.defined() ? mask(b.grad(), m) : b.grad());
      }),
    D(clamp_Tensor, "self min max",
      {
        const Tensor x = b.in("self");
        const IValue lo = b.defined("min") ? IValue(b.in("min")) : IValue(),
                     hi = b.defined("max") ? IValue(b.in("max")) : IValue();
        const Tensor m = in_range(x, lo, hi);
        b.set("self", m.defined() ? mask(b.grad(), m) : b.grad());
        // torch's clamp_backward_min_max: where min > max the result is max, so max's
        if (b.needs("min")) {
          Tensor pred = ops::lt(x, lo.to_tensor());
          if (hi.is_tensor())
            pred = ops::logical_and(pred, ops::lt(lo.to_tensor(), hi.to_tensor()));
          b.set("min", mask(b.grad(), pred));
        }
        if (b.needs("max")) {
          Tensor pred = ops::gt(x, hi.to_tensor());
          if (lo.is_tensor()) pred = ops::logical_or(pred, ops::lt(hi.to_tensor(), lo.to_tensor()));
          b.set("max", mask(b.grad(), pred));
        }
      }),
    D(clamp_min, "self",
      { b.set("self", mask(b.grad(), ops::ge_Scalar(b.in("self"), scalar(b, "min")))); }),
    D(clamp_max, "self",
      { b.set("self", mask(b.grad(), ops::le_Scalar(b.in("self"), scalar(b, "max")))); }),
    D(clamp_min_Tensor, "self min",
      {
        const Tensor below = ops::lt(b.in("self"), b.in("min"));
        if (b.needs("self")) b.set("self", mask(b.grad(), ops::logical_not(below)));
        if (b.needs("min")) b.set("min", mask(b.grad(), below));
      }),
    D(clamp_max_Tensor, "self max",
      {
        const Tensor above = ops::gt(b.in("self"), b.in("max"));
        if (b.needs("self")) b.set("self", mask(b.grad(), ops::logical_not(above)));
        if (b.needs("max")) b.set("max", mask(b.grad(), above));
      }),
    // -- reductions
    D(sum, "", { b.set("self", ops::expand(b.grad(), vec(b.sizes("self")))); }),
    D(sum_dim_IntList, "", { sum_dim_formula(b); }),
    D(mean, "",
      {
        const double n = static_cast<double>(std::max<int64_t>(
            count(b.sizes("self"), reduced_dims(IValue(), b.sizes("self").size())), 1));
        b.set("self", ops::div_Scalar(ops::expand(b.grad(), vec(b.sizes("self"))), n));
      }),
    D(mean_dim, "", { mean_dim_formula(b); }),
    D(amax, "self result",
      {
        extremum_formula(b, reduced_dims(b.arg("dim"), b.sizes("self").size()),
                         b.arg("keepdim").to_bool());
      }),
    D(amin, "self result",
      {
        extremum_formula(b, reduced_dims(b.arg("dim"), b.sizes("self").size()),
                         b.arg("keepdim").to_bool());
      }),
    D(max, "self result",
      { extremum_formula(b, reduced_dims(IValue(), b.sizes("self").size()), false); }),
    D(min, "self result",
      { extremum_formula(b, reduced_dims(IValue(), b.sizes("self").size()), false); }),
    D(max_dim, "result", { extremum_dim_formula(b); }),
    D(min_dim, "result", { extremum_dim_formula(b); }),
    D(logsumexp, "self result",
      {
        const auto dims = reduced_dims(b.arg("dim"), b.sizes("self").size());
        const bool keep = b.arg("keepdim").to_bool();
        const Tensor x = b.in("self");
        Tensor r = expand_reduced(b.result(), x.sizes(), dims, keep);
        b.set("self",
              ops::mul(expand_reduced(b.grad(), x.sizes(), dims, keep), ops::exp(ops::sub(x, r))));
      }),
    D(cumsum, "",
      {
        b.set(
            "self",
            ops::flip(ops::cumsum(ops::flip(b.grad(), std::vector<int64_t>{b.arg("dim").to_int()}),
                                  b.arg("dim").to_int()),
                      std::vector<int64_t>{b.arg("dim").to_int()}));
      }),
    D(var, "self",
      {
        var_formula(b, reduced_dims(IValue(), b.sizes("self").size()),
                    b.arg("unbiased").to_bool() ? 1.0 : 0.0, false, false);
      }),
    D(var_dim, "self",
      {
        var_formula(b, reduced_dims(b.arg("dim"), b.sizes("self").size()),
                    b.arg("unbiased").to_bool() ? 1.0 : 0.0, b.arg("keepdim").to_bool(), false);
      }),
    D(var_correction, "self",
      {
        var_formula(b, reduced_dims(b.arg("dim"), b.sizes("self").size()), correction_of(b),
                    b.arg("keepdim").to_bool(), false);
      }),
    D(std, "self result",
      {
        var_formula(b, reduced_dims(IValue(), b.sizes("self").size()),
                    b.arg("unbiased").to_bool() ? 1.0 : 0.0, false, true);
      }),
    D(std_dim, "self result",
      {
        var_formula(b, reduced_dims(b.arg("dim"), b.sizes("self").size()),
                    b.arg("unbiased").to_bool() ? 1.0 : 0.0, b.arg("keepdim").to_bool(), true);
      }),
    D(std_correction, "self result",
      {
        var_formula(b, reduced_dims(b.arg("dim"), b.sizes("self").size()), correction_of(b),
                    b.arg("keepdim").to_bool(), true);
      }),
    D(norm_Scalar, "self result", { norm_formula(b, b.arg("p"), IValue(), false); }),
    D(norm_ScalarOpt_dim, "self result",
      { norm_formula(b, b.arg("p"), b.arg("dim"), b.arg("keepdim").to_bool()); }),
    D(norm_ScalarOpt_dtype, "self result", { norm_formula(b, b.arg("p"), IValue(), false); }),
    D(norm_ScalarOpt_dim_dtype, "self result",
      { norm_formula(b, b.arg("p"), b.arg("dim"), b.arg("keepdim").to_bool()); }),
    D(prod, "self", { prod_formula(b, std::nullopt, false); }),
    D(prod_dim_int, "self",
      { prod_formula(b, b.arg("dim").to_int(), b.arg("keepdim").to_bool()); }),
    D(cumprod, "self result", { cumprod_formula(b); }),
    D(cdist, "x1 x2 result", { cdist_formula(b); }),
    D(softmax_int, "result",
      {
        const Tensor y = b.result();
        const int64_t dim = b.arg("dim").to_int();
        Tensor g = ops::to_dtype(b.grad(), y.dtype());
        Tensor gy = ops::mul(g, y);
        b.set("self",
              ops::sub(gy, ops::mul(y, ops::sum_dim_IntList(gy, std::vector<int64_t>{dim}, true))));
      }),
    D(log_softmax_int, "result",
      {
        const Tensor y = b.result();
        const int64_t dim = b.arg("dim").to_int();
        Tensor g = ops::to_dtype(b.grad(), y.dtype());
        b.set("self", ops::sub(g, ops::mul(ops::exp(y), ops::sum_dim_IntList(
                                                            g, std::vector<int64_t>{dim}, true))));
      }),
    // -- matrices
    D(mm, "self mat2",
      {
        if (b.needs("self")) b.set("self", ops::mm(b.grad(), mT(b.in("mat2"))));
        if (b.needs("mat2")) b.set("mat2", ops::mm(mT(b.in("self")), b.grad()));
      }),
    D(bmm, "self mat2",
      {
        if (b.needs("self")) b.set("self", ops::bmm(b.grad(), mT(b.in("mat2"))));
        if (b.needs("mat2")) b.set("mat2", ops::bmm(mT(b.in("self")), b.grad()));
      }),
    D(mv, "self vec",
      {
        if (b.needs("self")) b.set("self", ops::mul(ops::unsqueeze(b.grad(), 1), b.in("vec")));
        if (b.needs("vec")) b.set("vec", ops::mv(mT(b.in("self")), b.grad()));
      }),
    D(dot, "self tensor",
      {
        if (b.needs("self")) b.set("self", ops::mul(b.grad(), b.in("tensor")));
        if (b.needs("tensor")) b.set("tensor", ops::mul(b.grad(), b.in("self")));
      }),
    D(matmul, "self other", { matmul_formula(b); }),
    D(addmm, "mat1 mat2", { addmm_like(b, "mat1", "mat2", false); }),
    D(baddbmm, "batch1 batch2", { addmm_like(b, "batch1", "batch2", true); }),
    D(addbmm, "batch1 batch2",
      {
        // beta * self + alpha * sum_b batch1[b] @ batch2[b]: each batch sees the same gradient
        const Scalar beta = scalar(b, "beta"), alpha = scalar(b, "alpha");
        if (b.needs("self")) b.set("self", scale(b.grad(), beta));
        const Tensor b1 = b.in("batch1"), b2 = b.in("batch2");
        const Tensor g =
            ops::expand(ops::unsqueeze(b.grad(), 0),
                        std::vector<int64_t>{b1.size(0), b.grad().size(0), b.grad().size(1)});
        if (b.needs("batch1")) b.set("batch1", scale(ops::bmm(g, mT(b2)), alpha));
        if (b.needs("batch2")) b.set("batch2", scale(ops::bmm(mT(b1), g), alpha));
      }),
    D(addmv, "mat vec",
      {
        const Scalar beta = scalar(b, "beta"), alpha = scalar(b, "alpha");
        if (b.needs("self")) b.set("self", scale(b.grad(), beta));
        if (b.needs("mat"))
          b.set("mat", scale(ops::mul(ops::unsqueeze(b.grad(), 1), b.in("vec")), alpha));
        if (b.needs("vec")) b.set("vec", scale(ops::mv(mT(b.in("mat")), b.grad()), alpha));
      }),
    D(linear, "input weight", { linear_formula(b); }),
    // -- convolution, pooling, normalization
    D(conv1d, "input weight", { convolution_formula(b, 1); }),
    D(conv2d, "input weight", { convolution_formula(b, 2); }),
    D(conv3d, "input weight", { convolution_formula(b, 3); }),
    D(conv_transpose1d, "input weight", { conv_transpose_formula(b, 1); }),
    D(conv_transpose2d, "input weight", { conv_transpose_formula(b, 2); }),
    D(conv_transpose3d, "input weight", { conv_transpose_formula(b, 3); }),
    DECOMPOSE(max_pool2d, max_pool2d_decompose), D(avg_pool2d, "self", { avg_pool2d_formula(b); }),
    D(adaptive_avg_pool2d, "", { adaptive_avg_pool2d_formula(b); }),
    D(batch_norm, "input weight running_mean running_var", { batch_norm_formula(b); }),
    D(layer_norm, "input weight", { layer_norm_formula(b); }),
    D(group_norm, "input weight", { group_norm_formula(b); }),
    DECOMPOSE(dropout, dropout_decompose), DECOMPOSE(dropout_, dropout_decompose),
    D(embedding, "indices",
      {
        const Tensor idx = b.in("indices");
        IntArrayRef ws = b.sizes("weight");
        const int64_t pad = b.arg("padding_idx").to_int();
        AMPJIT_CHECK_T(
            NotImplementedError, !b.arg("scale_grad_by_freq").to_bool(),
            "the derivative of embedding with scale_grad_by_freq=True is not implemented");
        Tensor g = ops::reshape(b.grad(), std::vector<int64_t>{-1, ws[1]});
        Tensor flat = ops::reshape(idx, std::vector<int64_t>{-1});
        if (pad >= 0) g = ops::mul(g, ops::unsqueeze(ops::ne_Scalar(flat, pad), 1));
        b.set("weight", ops::index_add(zeros(ws, g.dtype(), g.device()), 0, flat, g));
      }),
    // -- losses
    D(mse_loss, "self target",
      {
        Tensor d = ops::mul_Scalar(ops::sub(b.in("self"), b.in("target")), 2.0);
        Tensor g = reduce_grad(b, d);
        if (b.needs("self")) b.set("self", g);
        if (b.needs("target")) b.set("target", ops::neg(g));
      }),
    D(l1_loss, "self target",
      {
        Tensor g = reduce_grad(b, ops::sign(ops::sub(b.in("self"), b.in("target"))));
        if (b.needs("self")) b.set("self", g);
        if (b.needs("target")) b.set("target", ops::neg(g));
      }),
    D(binary_cross_entropy, "self target weight",
      {
        const Tensor x = b.in("self"), y = b.in("target");
        Tensor d =
            ops::div(ops::sub(x, y), ops::clamp_min(ops::mul(x, ops::rsub_Scalar(x, 1.0)), 1e-12));
        if (b.defined("weight")) d = ops::mul(d, b.in("weight"));
        if (b.needs("self")) b.set("self", reduce_grad(b, d));
        if (b.needs("target")) {  // torch's binary_cross_entropy_target_backward: -logit(self)
          Tensor t = ops::neg(ops::log(ops::div(x, ops::rsub_Scalar(x, 1.0))));
          if (b.defined("weight")) t = ops::mul(t, b.in("weight"));
          b.set("target", reduce_grad(b, t));
        }
      }),
    D(binary_cross_entropy_with_logits, "self target weight pos_weight",
      {
        const Tensor x = b.in("self"), y = b.in("target");
        Tensor s = ops::sigmoid(x);
        Tensor d;
        if (b.defined("pos_weight")) {
          Tensor pwy = ops::mul(b.in("pos_weight"), y);
          d = ops::sub(ops::mul(ops::add(ops::rsub_Scalar(y, 1.0), pwy), s), pwy);
        } else {
          d = ops::sub(s, y);
        }
        if (b.defined("weight")) d = ops::mul(d, b.in("weight"));
        if (b.needs("self")) b.set("self", reduce_grad(b, d));
        if (b.needs("target")) {
          Tensor dt = ops::neg(x);
          if (b.defined("pos_weight"))
            dt = ops::sub(dt,
                          ops::mul(ops::sub_Scalar(b.in("pos_weight"), 1.0), ops::log_sigmoid(x)));
          if (b.defined("weight")) dt = ops::mul(dt, b.in("weight"));
          b.set("target", reduce_grad(b, dt));
        }
      }),
    D(nll_loss, "self target weight", { nll_loss_formula(b); }),
    D(nll_loss_nd, "self target weight", { nll_loss_formula(b); }),
    D(nll_loss2d, "self target weight", { nll_loss_formula(b); }),
    DECOMPOSE(cross_entropy_loss, cross_entropy_decompose),
    // -- views and shapes
    D(view, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(view_as, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(reshape, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(reshape_as, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(flatten, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(squeeze, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(squeeze_dim, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(unsqueeze, "", { b.set("self", reshape_to(b.grad(), b.sizes("self"))); }),
    D(t, "", { b.set("self", b.sizes("self").size() < 2 ? b.grad() : Tensor(ops::t(b.grad()))); }),
    D(transpose, "",
      { b.set("self", ops::transpose(b.grad(), b.arg("dim0").to_int(), b.arg("dim1").to_int())); }),
    D(permute, "",
      {
        std::vector<int64_t> dims = b.arg("dims").to_int_list(), inv(dims.size());
        for (size_t i = 0; i < dims.size(); ++i)
          inv[wrap(dims[i], dims.size())] = static_cast<int64_t>(i);
        b.set("self", ops::permute(b.grad(), inv));
      }),
    D(expand, "", { b.set("self", b.grad()); }),  // summed back by the engine
    D(expand_as, "", { b.set("self", b.grad()); }), D(contiguous, "", { b.set("self", b.grad()); }),
    D(to_channels_last, "", { b.set("self", b.grad()); }),
    D(clone, "", { b.set("self", b.grad()); }),
    D(repeat, "",
      {
        // each repeat of the input adds its share: view the gradient as [r0, s0, r1, s1, ...] and
        // sum
        IntArrayRef sizes = b.sizes("self");
        std::vector<int64_t> reps = b.arg("repeats").to_int_list();
        const size_t lead = reps.size() - sizes.size();
        std::vector<int64_t> shape, dims;
        for (size_t i = 0; i < reps.size(); ++i) {
          const int64_t s = i < lead ? 1 : sizes[i - lead];
          dims.push_back(static_cast<int64_t>(shape.size()));
          shape.push_back(reps[i]);
          shape.push_back(s);
        }
        Tensor g = ops::sum_dim_IntList(ops::reshape(b.grad(), shape), dims, false);
        b.set("self", reshape_to(g, sizes));
      }),
    D(select, "",
      {
        IntArrayRef sizes = b.sizes("self");
        const int64_t dim = wrap(b.arg("dim").to_int(), sizes.size());
        int64_t index = b.arg("index").to_int();
        if (index < 0) index += sizes[dim];
        b.set("self", narrow_backward(ops::unsqueeze(b.grad(), dim), sizes, dim, index, 1));
      }),
    D(slice, "", { slice_formula(b); }),
    D(narrow, "",
      {
        IntArrayRef sizes = b.sizes("self");
        const int64_t dim = wrap(b.arg("dim").to_int(), sizes.size());
        int64_t start = b.arg("start").to_int();
        if (start < 0) start += sizes[dim];
        b.set("self", narrow_backward(b.grad(), sizes, dim, start, b.arg("length").to_int()));
      }),
    // AsStridedBackward0: the geometry of the input, not its values (Note [Views and in-place
    // changes] in views.h)
    DECOMPOSE(as_strided, record_as_strided),
    D(chunk, "", { b.set("self", ops::cat(output_grads(b), b.arg("dim").to_int())); }),
    D(split, "", { b.set("self", ops::cat(output_grads(b), b.arg("dim").to_int())); }),
    D(split_sizes, "", { b.set("self", ops::cat(output_grads(b), b.arg("dim").to_int())); }),
    D(split_with_sizes, "", { b.set("self", ops::cat(output_grads(b), b.arg("dim").to_int())); }),
    D(unbind, "", { b.set("self", ops::stack(output_grads(b), b.arg("dim").to_int())); }),
    D(cat, "",
      {
        const int64_t n = static_cast<int64_t>(b.list_size("tensors"));
        std::vector<Tensor> gs;
        int64_t dim = b.arg("dim").to_int(), offset = 0;
        for (int64_t i = 0; i < n; ++i) {
          IntArrayRef s = b.sizes("tensors", i);
          if (s.size() == 1 && s[0] == 0 && b.grad().dim() != 1) {  // torch's legacy empty tensor
            gs.emplace_back();
            continue;
          }
          const int64_t d = wrap(dim, s.size());
          gs.push_back(ops::narrow(b.grad(), d, offset, s[d]));
          offset += s[d];
        }
        b.set_list("tensors", gs);
      }),
    D(stack, "",
      {
        const int64_t n = static_cast<int64_t>(b.list_size("tensors"));
        const int64_t dim = wrap(b.arg("dim").to_int(), b.grad().dim());
        std::vector<Tensor> gs;
        for (int64_t i = 0; i < n; ++i) gs.push_back(ops::select(b.grad(), dim, i));
        b.set_list("tensors", gs);
      }),
    D(index_select, "index",
      {
        const Tensor idx = b.in("index");
        const int64_t dim = b.arg("dim").to_int();
        const Tensor& g = b.grad();
        b.set("self", ops::index_add(zeros(b.sizes("self"), g.dtype(), g.device()), dim, idx, g));
      }),
    D(index_add, "index",
      {
        b.set("self", b.grad());
        if (b.needs("source")) {
          Tensor g = ops::index_select(b.grad(), b.arg("dim").to_int(), b.in("index"));
          b.set("source", scale(g, scalar(b, "alpha")));
        }
      }),
    D(gather, "index",
      {
        const Tensor& g = b.grad();
        b.set("self", ops::scatter_add(zeros(b.sizes("self"), g.dtype(), g.device()),
                                       b.arg("dim").to_int(), b.in("index"), g));
      }),
    D(scatter_add, "index",
      {
        b.set("self", b.grad());
        if (b.needs("src")) {
          // src may be larger than index: its other elements are not read
          const Tensor idx = b.in("index");
          const Tensor got = ops::gather(b.grad(), b.arg("dim").to_int(), idx);
          IntArrayRef src = b.sizes("src");
          if (std::equal(src.begin(), src.end(), got.sizes().begin(), got.sizes().end()))
            return b.set("src", got);
          Tensor full = zeros(src, got.dtype(), got.device());
          Tensor part = full;
          for (int64_t d = 0; d < got.dim(); ++d) part = ops::narrow(part, d, 0, got.size(d));
          ops::copy_(part, got);
          b.set("src", full);
        }
      }),
    D(max_pool2d_with_indices, "self result", { max_pool2d_with_indices_formula(b); }),
    D(index_copy, "index",
      {
        // the copied rows come from source; the rest of self passes through
        const Tensor idx = b.in("index");
        const int64_t dim = b.arg("dim").to_int();
        const Tensor& g = b.grad();
        if (b.needs("self"))
          b.set("self",
                ops::index_copy(g, dim, idx, zeros(b.sizes("source"), g.dtype(), g.device())));
        if (b.needs("source")) b.set("source", ops::index_select(g, dim, idx));
      }),
    D(flip, "", { b.set("self", ops::flip(b.grad(), b.arg("dims").to_int_list())); }),
    D(roll, "",
      {
        std::vector<int64_t> shifts = b.arg("shifts").to_int_list();
        for (int64_t& s : shifts) s = -s;
        b.set("self", ops::roll(b.grad(), shifts, b.arg("dims").to_int_list()));
      }),
    D(tril, "", { b.set("self", ops::tril(b.grad(), b.arg("diagonal").to_int())); }),
    D(triu, "", { b.set("self", ops::triu(b.grad(), b.arg("diagonal").to_int())); }),
    // -- conversions and writes
    D(to_dtype, "", { b.set("self", b.grad()); }),  // cast back by the engine
    D(to_device, "",
      { b.set("self", ops::to_device(b.grad(), b.device("self"), b.dtype("self"))); }),
    D(to_other, "",
      { b.set("self", ops::to_device(b.grad(), b.device("self"), b.dtype("self"))); }),
    D(type_as, "", { b.set("self", b.grad()); }),
    D(_autocast_to_reduced_precision, "", { b.set("self", b.grad()); }),
    D(_autocast_to_full_precision, "", { b.set("self", b.grad()); }),
    D(copy_, "",
      {
        b.set("self", ops::zeros_like(b.grad()));
        if (b.needs("src")) b.set("src", ops::to_device(b.grad(), b.device("src"), b.dtype("src")));
      }),
    D(fill_, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(zero_, "", { b.set("self", ops::zeros_like(b.grad())); }),
    // -- trigonometric, exponential, error, gamma and Bessel functions (kernels/cpu/math_ops.cpp)
    D(acos, "self",
      {
        const Tensor x = b.in("self");
        b.set("self",
              ops::neg(ops::mul(b.grad(), ops::rsqrt(ops::rsub_Scalar(ops::mul(x, x), 1.0)))));
      }),
    D(asin, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::mul(b.grad(), ops::rsqrt(ops::rsub_Scalar(ops::mul(x, x), 1.0))));
      }),
    D(atan, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::div(b.grad(), ops::add_Scalar(ops::mul(x, x), 1.0)));
      }),
    D(acosh, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::mul(b.grad(), ops::rsqrt(ops::sub_Scalar(ops::mul(x, x), 1.0))));
      }),
    D(asinh, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::mul(b.grad(), ops::rsqrt(ops::add_Scalar(ops::mul(x, x), 1.0))));
      }),
    D(atanh, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::div(b.grad(), ops::rsub_Scalar(ops::mul(x, x), 1.0)));
      }),
    D(cosh, "self", { b.set("self", ops::mul(b.grad(), ops::sinh(b.in("self")))); }),
    D(sinh, "self", { b.set("self", ops::mul(b.grad(), ops::cosh(b.in("self")))); }),
    D(expm1, "result", { b.set("self", ops::mul(b.grad(), ops::add_Scalar(b.result(), 1.0))); }),
    D(exp2, "result", { b.set("self", ops::mul_Scalar(ops::mul(b.grad(), b.result()), M_LN2)); }),
    D(log2, "self", { b.set("self", ops::div(b.grad(), ops::mul_Scalar(b.in("self"), M_LN2))); }),
    D(log10, "self", { b.set("self", ops::div(b.grad(), ops::mul_Scalar(b.in("self"), M_LN10))); }),
    D(erfc, "self",
      {
        const Tensor x = b.in("self");
        b.set("self",
              ops::mul(b.grad(), ops::mul_Scalar(ops::exp(ops::neg(ops::mul(x, x))), -M_2_SQRTPI)));
      }),
    D(erfinv, "result",
      {
        const Tensor y = b.result();
        b.set("self",
              ops::mul(b.grad(), ops::mul_Scalar(ops::exp(ops::mul(y, y)), 0.5 * std::sqrt(M_PI))));
      }),
    D(lgamma, "self", { b.set("self", ops::mul(b.grad(), ops::digamma(b.in("self")))); }),
    D(digamma, "self", { b.set("self", ops::mul(b.grad(), ops::polygamma(1, b.in("self")))); }),
    D(polygamma, "self",
      {
        const int64_t n = b.arg("n").to_int();
        b.set("self", ops::mul(b.grad(), ops::polygamma(n + 1, b.in("self"))));
      }),
    D(i0, "self", { b.set("self", ops::mul(b.grad(), ops::special_i1(b.in("self")))); }),
    D(special_i0e, "self result",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::mul(b.grad(), ops::sub(ops::special_i1e(x),
                                                  ops::mul(ops::sign(x).tensor(), b.result()))));
      }),
    D(special_i1, "self result", { bessel_i1_formula(b, false); }),
    D(special_i1e, "self result", { bessel_i1_formula(b, true); }),
    // torch's xlog1py derivatives: log1p(other) where self is not 0 or other > -1; self / (1 +
    // other)
    D(special_xlog1py, "self other",
      {
        const Tensor x = b.in("self"), y = b.in("other");
        if (b.needs("self"))
          b.set("self",
                ops::masked_fill_Scalar(
                    ops::special_xlog1py(b.grad(), y),
                    ops::logical_and(ops::eq_Scalar(x, 0.0), ops::le_Scalar(y, -1.0)), 0.0));
        if (b.needs("other"))
          b.set("other", ops::div(ops::mul(b.grad(), x), ops::add_Scalar(y, 1.0)));
      }),
    D(special_xlog1py_other_scalar, "self",
      {
        const Tensor x = b.in("self");
        const Scalar y = b.arg("other").to_scalar();
        Tensor g = ops::special_xlog1py_other_scalar(b.grad(), y);
        if (y.to_double() <= -1.0) g = ops::masked_fill_Scalar(g, ops::eq_Scalar(x, 0.0), 0.0);
        b.set("self", g);
      }),
    D(special_xlog1py_self_scalar, "other",
      {
        const Tensor y = b.in("other");
        b.set("other", ops::div(ops::mul_Scalar(b.grad(), b.arg("self").to_scalar()),
                                ops::add_Scalar(y, 1.0)));
      }),
    D(sinc, "self",
      {
        // (pi x cos(pi x) - sin(pi x)) / (pi x^2), 0 at x = 0
        const Tensor x = b.in("self");
        const Tensor px = ops::mul_Scalar(x, M_PI);
        const Tensor d = ops::div(ops::sub(ops::mul(px, ops::cos(px)), ops::sin(px)),
                                  ops::mul_Scalar(ops::mul(x, x), M_PI));
        b.set("self",
              ops::mul(b.grad(), ops::masked_fill_Scalar(d, ops::eq_Scalar(x, 0.0), Scalar(0.0))));
      }),
    D(trunc, "", { b.set("self", ops::zeros_like(b.grad())); }),
    D(frac, "", { b.set("self", b.grad()); }),
    D(special_ndtr, "self",
      {
        const Tensor x = b.in("self");
        b.set("self",
              ops::mul(b.grad(), ops::mul_Scalar(ops::exp(ops::mul_Scalar(ops::mul(x, x), -0.5)),
                                                 0.5 * M_2_SQRTPI * M_SQRT1_2)));
      }),
    D(special_ndtri, "result",
      {
        const Tensor y = b.result();
        b.set("self",
              ops::mul(b.grad(), ops::mul_Scalar(ops::exp(ops::mul_Scalar(ops::mul(y, y), 0.5)),
                                                 std::sqrt(2 * M_PI))));
      }),
    D(special_log_ndtr, "self result",
      {
        const Tensor x = b.in("self");
        const Tensor pdf = ops::mul_Scalar(ops::exp(ops::mul_Scalar(ops::mul(x, x), -0.5)),
                                           0.5 * M_2_SQRTPI * M_SQRT1_2);
        b.set("self", ops::mul(b.grad(), ops::div(pdf, ops::exp(b.result()))));
      }),
    D(special_erfcx, "self result",
      {
        const Tensor x = b.in("self");
        b.set("self",
              ops::mul(b.grad(),
                       ops::sub_Scalar(ops::mul_Scalar(ops::mul(x, b.result()), 2.0), M_2_SQRTPI)));
      }),
    D(special_entr, "self",
      {
        const Tensor x = b.in("self");
        b.set("self", ops::mul(b.grad(), ops::neg(ops::add_Scalar(ops::log(x), 1.0))));
      }),
    D(hypot, "self other result",
      {
        if (b.needs("self")) b.set("self", ops::mul(b.grad(), ops::div(b.in("self"), b.result())));
        if (b.needs("other"))
          b.set("other", ops::mul(b.grad(), ops::div(b.in("other"), b.result())));
      }),
    D(logaddexp, "self other",
      {
        const Tensor x = b.in("self"), y = b.in("other");
        if (b.needs("self"))
          b.set("self", ops::div(b.grad(), ops::add_Scalar(ops::exp(ops::sub(y, x)), 1.0)));
        if (b.needs("other"))
          b.set("other", ops::div(b.grad(), ops::add_Scalar(ops::exp(ops::sub(x, y)), 1.0)));
      }),
    D(logaddexp2, "self other",
      {
        const Tensor x = b.in("self"), y = b.in("other");
        if (b.needs("self"))
          b.set("self", ops::div(b.grad(), ops::add_Scalar(ops::exp2(ops::sub(y, x)), 1.0)));
        if (b.needs("other"))
          b.set("other", ops::div(b.grad(), ops::add_Scalar(ops::exp2(ops::sub(x, y)), 1.0)));
      }),
    D(xlogy, "self other",
      {
        const Tensor x = b.in("self"), y = b.in("other");
        if (b.needs("self"))
          b.set("self",
                ops::mul(b.grad(), ops::xlogy(ops::ne_Scalar(x, 0.0).tensor().to(y.dtype()), y)));
        if (b.needs("other")) b.set("other", ops::div(ops::mul(b.grad(), x), y));
      }),
    D(xlogy_Scalar_Other, "self",
      {
        const Tensor nz = ops::ne_Scalar(b.in("self"), 0.0).tensor().to(b.grad().dtype());
        b.set("self", ops::mul(b.grad(), ops::xlogy_Scalar_Other(nz, b.arg("other").to_scalar())));
      }),
    D(xlogy_Scalar_Self, "other",
      {
        b.set("other",
              ops::div(ops::mul_Scalar(b.grad(), b.arg("self").to_scalar()), b.in("other")));
      }),
    D(lerp, "self end weight",
      {
        const Tensor w = b.in("weight");
        if (b.needs("self")) b.set("self", ops::mul(b.grad(), ops::rsub_Scalar(w, 1.0)));
        if (b.needs("end")) b.set("end", ops::mul(b.grad(), w));
        if (b.needs("weight"))
          b.set("weight", ops::mul(b.grad(), ops::sub(b.in("end"), b.in("self"))));
      }),
    D(lerp_Scalar, "",
      {
        const Scalar w = scalar(b, "weight");
        if (b.needs("self")) b.set("self", ops::mul_Scalar(b.grad(), 1.0 - w.to_double()));
        if (b.needs("end")) b.set("end", ops::mul_Scalar(b.grad(), w));
      }),
    D(nan_to_num, "self",
      {
        b.set("self",
              ops::mul(b.grad(), ops::isfinite(b.in("self")).tensor().to(b.grad().dtype())));
      }),
    D(igamma, "self other",
      {
        // d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); torch does not differentiate in a either
        const Tensor a = b.in("self"), x = b.in("other");
        if (b.needs("other")) {
          const Tensor e =
              ops::sub(ops::sub(ops::mul(ops::sub_Scalar(a, 1.0), ops::log(x)), x), ops::lgamma(a));
          b.set("other", ops::mul(b.grad(), ops::exp(e)));
        }
      }),
    D(igammac, "self other",
      {
        const Tensor a = b.in("self"), x = b.in("other");
        if (b.needs("other")) {
          const Tensor e =
              ops::sub(ops::sub(ops::mul(ops::sub_Scalar(a, 1.0), ops::log(x)), x), ops::lgamma(a));
          b.set("other", ops::neg(ops::mul(b.grad(), ops::exp(e))));
        }
      }),
    // -- advanced indexing (kernels/cpu/advanced_index_ops.cpp): the gradient goes back to the
    // indexed positions, repeated ones adding up
    D(index, "",
      {
        const Tensor& g = b.grad();
        b.set("self", ops::index_put(zeros(b.sizes("self"), g.dtype(), g.device()),
                                     b.arg("indices"), g, true));
      }),
    D(index_put, "",
      {
        const IValue& idx = b.arg("indices");
        const Tensor& g = b.grad();
        if (b.needs("self"))
          b.set("self",
                b.arg("accumulate").to_bool()
                    ? g
                    : ops::index_put(g, idx, zeros(b.sizes("values"), g.dtype(), g.device()), false)
                          .tensor());
        if (b.needs("values")) b.set("values", sum_to(ops::index(g, idx), b.sizes("values")));
      }),
    // -- scatters, masks and flat indices (kernels/cpu/scatter_ops.cpp)
    D(scatter_src, "index",
      {
        const int64_t dim = b.arg("dim").to_int();
        const Tensor idx = b.in("index");
        if (b.needs("self")) b.set("self", ops::scatter_value(b.grad(), dim, idx, Scalar(0.0)));
        if (b.needs("src")) b.set("src", ops::gather(b.grad(), dim, idx));
      }),
    D(scatter_value, "index",
      {
        b.set("self",
              ops::scatter_value(b.grad(), b.arg("dim").to_int(), b.in("index"), Scalar(0.0)));
      }),
    D(index_fill_int_Scalar, "index",
      {
        b.set("self", ops::index_fill_int_Scalar(b.grad(), b.arg("dim").to_int(), b.in("index"),
                                                 Scalar(0.0)));
      }),
    D(masked_select, "self mask",
      {
        // the gradient at the selected positions of self broadcast with mask, summed back to self
        const Tensor x = b.in("self"), mask = b.in("mask");
        const Tensor like =
            ops::add(ops::zeros_like(x, b.grad().dtype()), ops::zeros_like(mask, b.grad().dtype()));
        b.set("self", ops::masked_scatter(like, mask, b.grad()));
      }),
    D(masked_scatter, "mask source",
      {
        const Tensor mask = b.in("mask");
        if (b.needs("self")) b.set("self", ops::masked_fill_Scalar(b.grad(), mask, Scalar(0.0)));
        if (b.needs("source")) {
          const Tensor src = b.in("source");
          const Tensor picked = ops::masked_select(b.grad(), mask);
          Tensor full =
              ops::zeros(std::vector<int64_t>{src.numel()}, picked.dtype(), picked.device());
          ops::copy_(ops::narrow(full, 0, 0, picked.numel()).tensor(), picked);
          b.set("source", full.view(src.sizes()));
        }
      }),
    D(take, "self index",
      {
        const Tensor x = b.in("self");
        b.set("self",
              ops::put(ops::zeros_like(x, b.grad().dtype()), b.in("index"), b.grad(), true));
      }),
    D(put, "index source",
      {
        const Tensor idx = b.in("index");
        const bool acc = b.arg("accumulate").to_bool();
        if (b.needs("self"))
          b.set("self",
                acc ? b.grad()
                    : ops::put(b.grad(), idx, ops::zeros_like(b.in("source")), false).tensor());
        if (b.needs("source"))
          b.set("source", ops::take(b.grad(), idx).tensor().view(b.sizes("source")));
      }),
    // -- metadata-only in-place ops: not recorded (kernels/cpu/inplace_view_ops.cpp)
    NONDIFF(t_), NONDIFF(transpose_), NONDIFF(squeeze_), NONDIFF(squeeze__dim), NONDIFF(unsqueeze_),
    NONDIFF(as_strided_), NONDIFF(resize_), NONDIFF(resize_as_), NONDIFF(requires_grad_),
    // -- never differentiable: the outputs of these do not require grad
    NONDIFF(detach), NONDIFF(zeros_like), NONDIFF(ones_like), NONDIFF(empty_like),
    NONDIFF(full_like), NONDIFF(rand_like), NONDIFF(randn_like), NONDIFF(new_zeros),
    NONDIFF(new_ones), NONDIFF(new_empty), NONDIFF(new_full), NONDIFF(bernoulli), NONDIFF(argmax),
    NONDIFF(argmin),
    // ---- sorting and selection ----
    // torch's value_selecting_reduction_backward: the gradient goes back to the indices the op
    // selected (sort and topk keep the dim).
    D(sort, "result", { selected_backward(b, b.result(1), true); }),
    D(sort_stable, "result", { selected_backward(b, b.result(1), true); }),
    D(topk, "result", { selected_backward(b, b.result(1), true); }),
    D(kthvalue, "result", { selected_backward(b, b.result(1), b.arg("keepdim").to_bool()); }),
    D(median_dim, "result", { selected_backward(b, b.result(1), b.arg("keepdim").to_bool()); }),
    D(nanmedian_dim, "result", { selected_backward(b, b.result(1), b.arg("keepdim").to_bool()); }),
    D(mode, "result", { selected_backward(b, b.result(1), b.arg("keepdim").to_bool()); }),
    D(median, "self result", { evenly_distribute_backward(b); }),
    D(nanmedian, "self result", { evenly_distribute_backward(b); }),
    D(cummax, "result", { cummaxmin_backward(b); }),
    D(cummin, "result", { cummaxmin_backward(b); }),
    D(logcumsumexp, "self result", { logcumsumexp_backward(b); }),
    // ---- nn ----
    DECOMPOSE(max_pool3d, max_pool3d_decompose),
    D(max_pool3d_with_indices, "result", { pool_indices_formula(b, 3); }),
    D(adaptive_max_pool2d, "result", { pool_indices_formula(b, 2); }),
    D(adaptive_max_pool3d, "result", { pool_indices_formula(b, 3); }),
    D(avg_pool3d, "self",
      {
        b.set("self",
              ops::avg_pool3d_backward(b.grad(), b.in("self"), b.arg("kernel_size"),
                                       b.arg("stride"), b.arg("padding"), b.arg("ceil_mode"),
                                       b.arg("count_include_pad"), b.arg("divisor_override")));
      }),
    D(avg_pool3d_backward, "",
      {
        if (b.needs("grad_output"))
          b.set("grad_output",
                ops::avg_pool3d(b.grad(), b.arg("kernel_size"), b.arg("stride"), b.arg("padding"),
                                b.arg("ceil_mode"), b.arg("count_include_pad"),
                                b.arg("divisor_override")));
      }),
    D(adaptive_avg_pool3d, "self",
      { b.set("self", ops::_adaptive_avg_pool3d_backward(b.grad(), b.in("self"))); }),
    D(_adaptive_avg_pool3d_backward, "",
      {
        IntArrayRef go = b.sizes("grad_output");
        if (b.needs("grad_output"))
          b.set("grad_output", ops::adaptive_avg_pool3d(b.grad(), vec(go.last(3))));
      }),
    D(max_unpool2d, "indices", { max_unpool_formula(b, 2); }),
    D(max_unpool3d, "indices", { max_unpool_formula(b, 3); }),
    D(constant_pad_nd, "",
      {
        std::vector<int64_t> p = b.arg("pad").to_int_list();
        for (int64_t& x : p) x = -x;
        b.set("self", ops::constant_pad_nd(b.grad(), p, Scalar(0.0)));
      }),
    D(im2col, "",
      {
        IntArrayRef sizes = b.sizes("self");
        b.set("self", ops::col2im(b.grad(), vec(sizes.last(2)), b.arg("kernel_size"),
                                  b.arg("dilation"), b.arg("padding"), b.arg("stride")));
      }),
    D(col2im, "",
      {
        b.set("self", ops::im2col(b.grad(), b.arg("kernel_size"), b.arg("dilation"),
                                  b.arg("padding"), b.arg("stride")));
      }),
    D(grid_sampler_2d, "input grid", { grid_sampler_formula(b, 2); }),
    D(grid_sampler_3d, "input grid", { grid_sampler_formula(b, 3); }),
    // ---- end nn ----
    // ---- fft ----
    // The primitives' pairs stand for complex values (Note [FFTs without a complex dtype] in
    // kernels/fft_meta.h); each formula is torch's (FunctionsManual.cpp) on that layout.
    D(fft_c2c_pairs, "",
      {
        b.set("self", ops::fft_c2c_pairs(b.grad(), b.arg("dim"), b.arg("normalization"),
                                         !b.arg("forward").to_bool()));
      }),
    D(fft_r2c_pairs, "", { fft_r2c_formula(b); }), D(fft_c2r_pairs, "", { fft_c2r_formula(b); }),
    // ---- end fft ----
    // ---- linalg ----
    D(linalg_lu_factor_ex, "result", { lu_factor_ex_formula(b); }),
    D(lu_unpack, "", { lu_unpack_formula(b); }),
    D(linalg_solve_triangular, "self result", { solve_triangular_formula(b); }),
    D(linalg_cholesky_ex, "result", { cholesky_formula(b); }),
    D(linalg_qr, "result", { qr_formula(b); }), D(_linalg_svd, "result", { svd_formula(b); }),
    D(linalg_eigh, "result",
      { b.set("self", eig_backward(b.grad(0), b.grad(1), b.result(0), b.result(1), true)); }),
    D(linalg_eig, "result",
      { b.set("self", eig_backward(b.grad(0), b.grad(1), b.result(0), b.result(1), false)); }),
    D(linalg_lstsq, "self b", { lstsq_formula(b); }),
    D(linalg_householder_product, "input tau", { householder_product_formula(b); }),
    // ---- end linalg ----
    // ---- nn more ----
    // torch's derivatives.yaml; _ctc_loss_backward itself has no derivative, as in torch.
    D(_ctc_loss, "log_probs targets result",
      {
        b.set("log_probs",
              ops::_ctc_loss_backward(b.grad(0), b.in("log_probs"), b.in("targets"),
                                      b.arg("input_lengths"), b.arg("target_lengths"), b.result(0),
                                      b.result(1), b.arg("blank"), b.arg("zero_infinity")));
      }),
    // ---- end nn more ----
};

#undef D
#undef NONDIFF
#undef DECOMPOSE

// Resolves a declaration's `saves` against its op's schema.
void resolve_saves(Derivative& d) {
  const std::vector<Argument>& args = op_entry(d.op).schema.args;
  std::string_view list = d.saves;
  while (!list.empty()) {
    const size_t end = std::min(list.find(' '), list.size());
    const std::string_view name = list.substr(0, end);
    list.remove_prefix(std::min(end + 1, list.size()));
    if (name.empty()) continue;
    if (name == "result") {
      d.saves_result = true;
      continue;
    }
    auto it =
        std::find_if(args.begin(), args.end(), [&](const Argument& a) { return a.name == name; });
    AMPJIT_CHECK(it != args.end() && it - args.begin() < 64,
                 "derivative of {}: it saves '{}', which is not an argument", op_entry(d.op).name,
                 name);
    d.saved_args |= uint64_t{1} << (it - args.begin());
  }
}

struct Table {
  std::vector<const Derivative*> by_op = std::vector<const Derivative*>(all_ops().size(), nullptr);
  Table() {
    for (Derivative& d : kDerivatives) {
      resolve_saves(d);
      by_op[static_cast<size_t>(d.op)] = &d;
    }
  }
};

const Table& table() {
  static const Table t;
  return t;
}

}  // namespace

const Derivative* derivative_for(const OpEntry& op) {
  const Table& t = table();
  if (const Derivative* d = t.by_op[static_cast<size_t>(op.id)]) return d;
  if (op.is_inplace && op.functional) return t.by_op[static_cast<size_t>(op.functional->id)];
  return nullptr;
}

std::vector<const OpEntry*> ops_with_derivatives() {
  table();  // resolves (and so checks) every declaration
  std::vector<const OpEntry*> out;
  for (const Derivative& d : kDerivatives) out.push_back(&op_entry(d.op));
  return out;
}

}  // namespace ampjit::autograd
