// nn ops written with other ops, for every device (kComposite): conv_tbc, conv_transpose1d/3d and
// the losses of torch.nn beyond the common ones, each as torch 1.13 defines it (Convolution.cpp,
// Loss.cpp).
//
// Note [Composites that are one op to autocast]
// In torch these are native kernels (or CompositeExplicit), so autocast casts their arguments once,
// by their own policy (fp32 for the losses and conv_transpose*, lower precision for conv_tbc), and
// nothing inside is cast again. Here the inner ops would meet the autocast layer themselves (a
// conv3d inside conv_transpose3d would go back to bfloat16), so each kernel runs with autocast
// excluded: the result has the dtype the outer policy gave, as torch's.
#include <algorithm>
#include <cmath>

#include "runtime/boxing.h"
#include "runtime/dispatcher.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit {
namespace {

using IntList = std::vector<int64_t>;

struct NoAutocast {  // Note [Composites that are one op to autocast]
  LayerGuard guard{DispatchLayer::Autocast, LayerGuard::Exclude};
};

Tensor reduce(const Tensor& loss, int64_t reduction) {
  switch (reduction) {
    case 0:
      return loss;
    case 1:
      return ops::mean(loss);
    case 2:
      return ops::sum(loss);
  }
  AMPJIT_CHECK(false, "{} is not a valid value for reduction", reduction);
  return loss;
}

Tensor where(const Tensor& c, const Tensor& a, const Tensor& b) {
  return ops::where(c, a, b);
}
Tensor scalar_like(const Tensor& t, double v) {
  return ops::full_like(t, Scalar(v));
}

// ---- Convolutions and pooling ------------------------------------------------------------------

// conv_tbc: (time, batch, in) input, (kw, in, out) weight: a conv1d on (batch, in, time).
Tensor conv_tbc_k(const Tensor& self, const Tensor& weight, const Tensor& bias, int64_t pad) {
  NoAutocast no_autocast;
  AMPJIT_CHECK(self.dim() == 3, "Input must have 3 dims: time, batch, in_channel");
  AMPJIT_CHECK(weight.dim() == 3,
               "Weight tensor must have 3 dims: kernel_width, in_channels, out_channels.");
  AMPJIT_CHECK(bias.dim() == 1, "Bias must be 1-D");
  AMPJIT_CHECK(self.size(2) == weight.size(1),
               "Input dim 2 (input channels) is not == dim 1 in the weight tensor");
  AMPJIT_CHECK(weight.size(2) == bias.size(0),
               "Bias size must equal dim 2 in the weight tensor (output channels).");
  const Tensor out = ops::conv1d(self.permute(IntList{1, 2, 0}), weight.permute(IntList{2, 1, 0}),
                                 std::optional<Tensor>(bias), IntList{1}, IntList{pad});
  return out.permute(IntList{2, 0, 1}).contiguous();
}

// A transposed convolution as the convolution of the input spread out by the stride (zeros
// between), padded by dilation * (k - 1) - padding (output_padding more at the end), with the
// weight's spatial dims flipped and its in/out channels swapped per group.
Tensor conv_transpose_nd(const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntList stride, IntList padding,
                         IntList output_padding, int64_t groups, IntList dilation, size_t nd,
                         const char* op) {
  NoAutocast no_autocast;
  const bool batched = input.dim() == static_cast<int64_t>(nd) + 2;
  AMPJIT_CHECK(
      batched || input.dim() == static_cast<int64_t>(nd) + 1,
      "{}: Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}", op,
      nd + 1, nd + 2, op, input.shape_str());
  const Tensor x = batched ? input : input.unsqueeze(0);
  const auto expand = [&](IntList v) { return v.size() == 1 ? IntList(nd, v[0]) : v; };
  stride = expand(stride), padding = expand(padding), output_padding = expand(output_padding);
  dilation = expand(dilation);
  AMPJIT_CHECK(
      groups > 0 && x.size(1) % groups == 0 && weight.size(0) == x.size(1),
      "{}: expected weight of shape ({}, out_channels / groups, ...) for input channels {}", op,
      x.size(1), x.size(1));
  IntList spread(x.sizes().begin(), x.sizes().end());
  for (size_t d = 0; d < nd; ++d)
    spread[2 + d] = (x.size(2 + static_cast<int64_t>(d)) - 1) * stride[d] + 1;
  Tensor up = ops::zeros(spread, std::optional<ScalarType>(x.dtype()),
                         std::optional<Device>(x.device()), false);
  Tensor view = up;
  for (size_t d = 0; d < nd; ++d)
    view = view.slice(2 + static_cast<int64_t>(d), 0, std::nullopt, stride[d]);
  view.copy_(x);
  IntList pads;  // last dim first, as pad takes them
  for (size_t d = nd; d-- > 0;) {
    const int64_t k = weight.size(2 + static_cast<int64_t>(d));
    const int64_t lo = dilation[d] * (k - 1) - padding[d];
    pads.push_back(lo);
    pads.push_back(lo + output_padding[d]);
  }
  up = ops::pad(up, pads, std::string("constant"), std::optional<double>(0.0));
  // (in, out/g, k...) -> (g, in/g, out/g, k...) -> (g, out/g, in/g, k...) -> (out, in/g, k...)
  const int64_t in = weight.size(0), out_g = weight.size(1);
  IntList grouped{groups, in / groups, out_g}, merged{groups * out_g, in / groups};
  for (size_t d = 0; d < nd; ++d) {
    grouped.push_back(weight.size(2 + static_cast<int64_t>(d)));
    merged.push_back(weight.size(2 + static_cast<int64_t>(d)));
  }
  Tensor w = weight.reshape(grouped).transpose(1, 2).reshape(merged);
  IntList spatial;
  for (size_t d = 0; d < nd; ++d) spatial.push_back(2 + static_cast<int64_t>(d));
  w = ops::flip(w, spatial);
  const IntList ones(nd, 1), zeros(nd, 0);
  Tensor out = nd == 1   ? ops::conv1d(up, w, bias, ones, zeros, dilation, groups).tensor()
               : nd == 2 ? ops::conv2d(up, w, bias, ones, zeros, dilation, groups).tensor()
                         : ops::conv3d(up, w, bias, ones, zeros, dilation, groups).tensor();
  return batched ? out : out.squeeze(0);
}
Tensor conv_transpose1d_k(const Tensor& input, const Tensor& weight,
                          const std::optional<Tensor>& bias, IntList stride, IntList padding,
                          IntList output_padding, int64_t groups, IntList dilation) {
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           1, "conv_transpose1d");
}
Tensor conv_transpose3d_k(const Tensor& input, const Tensor& weight,
                          const std::optional<Tensor>& bias, IntList stride, IntList padding,
                          IntList output_padding, int64_t groups, IntList dilation) {
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           3, "conv_transpose3d");
}

// aten::_convolution: the convolution of the weight's rank; the backend flags are hints torch's
// kernels take and ampjit's do not need. As torch's kernel calls its backends directly, the
// convolution inside is not autocast: torch 1.13 autocasts only the deprecated overload of
// _convolution, so a traced convolution runs in its inputs' dtype under autocast
// (test_autocast.cpp).
Tensor convolution_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                     IntList stride, IntList padding, IntList dilation, bool transposed,
                     IntList output_padding, int64_t groups, bool, bool, bool, bool) {
  LayerGuard no_autocast(DispatchLayer::Autocast, LayerGuard::Exclude);
  const int64_t nd = weight.dim() - 2;
  AMPJIT_CHECK(nd >= 1 && nd <= 3, "_convolution: expected a 3-D, 4-D or 5-D weight, got {}-D",
               weight.dim());
  if (transposed) {
    if (nd == 1)
      return ops::conv_transpose1d(input, weight, bias, stride, padding, output_padding, groups,
                                   dilation);
    if (nd == 2)
      return ops::conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                                   dilation);
    return ops::conv_transpose3d(input, weight, bias, stride, padding, output_padding, groups,
                                 dilation);
  }
  if (nd == 1) return ops::conv1d(input, weight, bias, stride, padding, dilation, groups);
  if (nd == 2) return ops::conv2d(input, weight, bias, stride, padding, dilation, groups);
  return ops::conv3d(input, weight, bias, stride, padding, dilation, groups);
}

// ---- Losses ------------------------------------------------------------------------------------

Tensor huber_loss_k(const Tensor& self, const Tensor& target, int64_t reduction, double delta) {
  NoAutocast no_autocast;
  AMPJIT_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  const Tensor z = ops::abs(ops::sub(self, target));
  const Tensor quadratic = ops::mul_Scalar(ops::mul(z, z), Scalar(0.5));
  const Tensor linear = ops::mul_Scalar(ops::sub_Scalar(z, Scalar(0.5 * delta)), Scalar(delta));
  return reduce(where(ops::lt_Scalar(z, Scalar(delta)), quadratic, linear), reduction);
}

Tensor smooth_l1_loss_k(const Tensor& self, const Tensor& target, int64_t reduction, double beta) {
  NoAutocast no_autocast;
  AMPJIT_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  const Tensor z = ops::abs(ops::sub(self, target));
  if (beta == 0) return reduce(z, reduction);
  const Tensor quadratic =
      ops::div_Scalar(ops::mul_Scalar(ops::mul(z, z), Scalar(0.5)), Scalar(beta));
  const Tensor linear = ops::sub_Scalar(z, Scalar(0.5 * beta));
  return reduce(where(ops::lt_Scalar(z, Scalar(beta)), quadratic, linear), reduction);
}

Tensor soft_margin_loss_k(const Tensor& self, const Tensor& target, int64_t reduction) {
  NoAutocast no_autocast;
  const Tensor loss = ops::log1p(ops::exp(ops::mul(ops::neg(target), self)));
  return reduce(loss, reduction);
}

Tensor margin_ranking_loss_k(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, int64_t reduction) {
  NoAutocast no_autocast;
  const Tensor loss = ops::clamp_min(
      ops::add_Scalar(ops::mul(ops::neg(target), ops::sub(input1, input2)), Scalar(margin)),
      Scalar(0.0));
  return reduce(loss, reduction);
}

Tensor hinge_embedding_loss_k(const Tensor& self, const Tensor& target, double margin,
                              int64_t reduction) {
  NoAutocast no_autocast;
  const Tensor zeros = ops::zeros_like(self);
  const Tensor margin_clamp = ops::clamp_min(ops::rsub_Scalar(self, Scalar(margin)), Scalar(0.0));
  const Tensor output_margin =
      where(ops::ne_Scalar(target, Scalar(int64_t{1})), margin_clamp, zeros);
  const Tensor output_self = where(ops::ne_Scalar(target, Scalar(int64_t{-1})), self, zeros);
  return reduce(ops::add(output_margin, output_self), reduction);
}

Tensor cosine_embedding_loss_k(const Tensor& input1, const Tensor& input2, const Tensor& target,
                               double margin, int64_t reduction) {
  NoAutocast no_autocast;
  const int64_t targ_dim = target.dim();
  AMPJIT_CHECK(targ_dim == 1 || targ_dim == 0,
               "0D or 1D target tensor expected, multi-target not supported");
  AMPJIT_CHECK(input1.sizes().size() == input2.sizes().size(),
               "cosine_embedding_loss : input1 and input2 must have the same number of dimensions");
  const double eps = 1e-12;
  const IntList dim{targ_dim};
  const Tensor prod_sum = ops::sum_dim_IntList(ops::mul(input1, input2), dim, false);
  const Tensor mag1 =
      ops::add_Scalar(ops::sum_dim_IntList(ops::mul(input1, input1), dim, false), Scalar(eps));
  const Tensor mag2 =
      ops::add_Scalar(ops::sum_dim_IntList(ops::mul(input2, input2), dim, false), Scalar(eps));
  const Tensor cos = ops::div(prod_sum, ops::sqrt(ops::mul(mag1, mag2)));
  const Tensor zeros = ops::zeros_like(cos);
  const Tensor pos = ops::rsub_Scalar(cos, Scalar(1.0));
  const Tensor neg = ops::clamp_min(ops::sub_Scalar(cos, Scalar(margin)), Scalar(0.0));
  const Tensor output = ops::add(where(ops::eq_Scalar(target, Scalar(int64_t{1})), pos, zeros),
                                 where(ops::eq_Scalar(target, Scalar(int64_t{-1})), neg, zeros));
  return reduce(output, reduction);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps) {
  return ops::norm_ScalarOpt_dim(ops::add_Scalar(ops::sub(x1, x2), Scalar(eps)),
                                 std::optional<Scalar>(Scalar(p)), IntList{-1}, false);
}
Tensor triplet_margin_loss_k(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                             double margin, double p, double eps, bool swap, int64_t reduction) {
  NoAutocast no_autocast;
  const Tensor dist_pos = pairwise_distance(anchor, positive, p, eps);
  Tensor dist_neg = pairwise_distance(anchor, negative, p, eps);
  if (swap) dist_neg = ops::minimum(dist_neg, pairwise_distance(positive, negative, p, eps));
  const Tensor loss =
      ops::clamp_min(ops::sub(ops::add_Scalar(dist_pos, Scalar(margin)), dist_neg), Scalar(0.0));
  return reduce(loss, reduction);
}

Tensor poisson_nll_loss_k(const Tensor& input, const Tensor& target, bool log_input, bool full,
                          double eps, int64_t reduction) {
  NoAutocast no_autocast;
  Tensor loss =
      log_input ? ops::sub(ops::exp(input), ops::mul(target, input)).tensor()
                : ops::sub(input, ops::mul(target, ops::log(ops::add_Scalar(input, Scalar(eps)))))
                      .tensor();
  if (full) {
    // Stirling's term target*log(target) - target + 0.5*log(2*pi*target), where target > 1.
    const Tensor stirling =
        ops::add(ops::sub(ops::mul(target, ops::log(target)), target),
                 ops::mul_Scalar(ops::log(ops::mul_Scalar(target, Scalar(2 * M_PI))), Scalar(0.5)));
    loss = ops::add(
        loss, ops::masked_fill_Scalar(stirling, ops::le_Scalar(target, Scalar(1.0)), Scalar(0.0)));
  }
  return reduce(loss, reduction);
}

// sum over classes i != y of max(0, margin - x[y] + x[i])^p, times weight[y], over the classes.
Tensor multi_margin_loss_k(const Tensor& self, const Tensor& target, const Scalar& p,
                           const Scalar& margin, const std::optional<Tensor>& weight,
                           int64_t reduction) {
  NoAutocast no_autocast;
  const double pv = p.to_double();
  AMPJIT_CHECK(pv == 1 || pv == 2, "only p == 1 and p == 2 supported");
  // ops, not Tensor's raw views, on what is differentiated: autograd records them (kComposite)
  const Tensor x = self.dim() <= 1 ? Tensor(ops::reshape(self, IntList{1, -1})) : self;
  AMPJIT_CHECK(x.dim() == 2,
               "Expected non-empty vector or matrix with optional 0-dim batch size, but got: {}",
               self.shape_str());
  const int64_t C = x.size(1);
  const Tensor y = target.reshape(IntList{-1, 1});
  const Tensor picked = ops::gather(x, 1, y);
  Tensor z = ops::clamp_min(ops::add(ops::rsub_Scalar(picked, margin), x), Scalar(0.0));
  if (pv == 2) z = ops::mul(z, z);
  if (weight && weight->defined())
    z = ops::mul(z, ops::index_select(*weight, 0, y.reshape(IntList{-1})).tensor().unsqueeze(1));
  const Tensor is_target =
      ops::eq(ops::arange(Scalar(C), std::optional<ScalarType>(ScalarType::Int64),
                          std::optional<Device>(x.device()), false)
                  .tensor()
                  .unsqueeze(0),
              y);
  z = ops::masked_fill_Scalar(z, is_target, Scalar(0.0));
  Tensor loss = ops::div_Scalar(ops::sum_dim_IntList(z, IntList{1}, false), Scalar(C));
  if (self.dim() <= 1) loss = ops::squeeze_dim(loss, 0);
  return reduce(loss, reduction);
}

// For each sample, target lists class indices until the first -1; the loss is the sum over listed
// j and unlisted i of max(0, 1 - (x[j] - x[i])), over the classes. A class listed twice counts
// twice, as in torch's loop over the list (MultiLabelMarginCriterion.cpp).
Tensor multilabel_margin_loss_k(const Tensor& self, const Tensor& target, int64_t reduction) {
  NoAutocast no_autocast;
  // ops, not Tensor's raw views, on what is differentiated: autograd records them (kComposite)
  const Tensor x = self.dim() <= 1 ? Tensor(ops::reshape(self, IntList{1, -1})) : self;
  const Tensor t = (self.dim() <= 1 ? target.reshape(IntList{1, -1}) : target)
                       .to(ScalarType::Int64)
                       .contiguous();
  AMPJIT_CHECK(
      x.dim() == 2 && t.sizes().size() == 2 && t.size(0) == x.size(0) && t.size(1) == x.size(1),
      "inconsistent target size: {} for input of size: {}", target.shape_str(), self.shape_str());
  const int64_t N = x.size(0), C = x.size(1);
  // How often each sample lists each class, from the (small) target on the host.
  const Tensor tcpu = ops::to_device(t, Device(), std::nullopt, false, false).tensor().contiguous();
  const int64_t* tp = tcpu.data<int64_t>();
  Tensor times = Tensor::empty(IntList{N, C}, ScalarType::Float64);
  double* lp = times.data<double>();
  std::fill(lp, lp + N * C, 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < C; ++k) {
      const int64_t j = tp[n * C + k];
      if (j < 0) break;
      AMPJIT_CHECK(j < C, "target index {} is out of bounds for {} classes", j, C);
      lp[n * C + j] += 1.0;
    }
  times = ops::to_device(times, x.device(), std::optional<ScalarType>(x.dtype()), false, false);
  const Tensor listed = ops::gt_Scalar(times, Scalar(0.0));
  // pairs (j listed, i not): max(0, 1 - (x[j] - x[i])), once per listing of j
  const Tensor margins = ops::clamp_min(
      ops::rsub_Scalar(ops::sub(ops::unsqueeze(x, 2), ops::unsqueeze(x, 1)), Scalar(1.0)),
      Scalar(0.0));
  const Tensor pairs = ops::mul(times.unsqueeze(2), ops::logical_not(listed).tensor().unsqueeze(1));
  Tensor loss = ops::div_Scalar(
      ops::sum_dim_IntList(ops::mul(margins, pairs), IntList{1, 2}, false), Scalar(C));
  if (self.dim() <= 1) loss = ops::squeeze_dim(loss, 0);
  return reduce(loss, reduction);
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(_convolution, convolution_k)
AMPJIT_KERNEL(conv_tbc, conv_tbc_k)
AMPJIT_KERNEL(conv_transpose1d, conv_transpose1d_k)
AMPJIT_KERNEL(conv_transpose3d, conv_transpose3d_k)
AMPJIT_KERNEL(huber_loss, huber_loss_k)
AMPJIT_KERNEL(smooth_l1_loss, smooth_l1_loss_k)
AMPJIT_KERNEL(soft_margin_loss, soft_margin_loss_k)
AMPJIT_KERNEL(margin_ranking_loss, margin_ranking_loss_k)
AMPJIT_KERNEL(hinge_embedding_loss, hinge_embedding_loss_k)
AMPJIT_KERNEL(cosine_embedding_loss, cosine_embedding_loss_k)
AMPJIT_KERNEL(triplet_margin_loss, triplet_margin_loss_k)
AMPJIT_KERNEL(poisson_nll_loss, poisson_nll_loss_k)
AMPJIT_KERNEL(multi_margin_loss, multi_margin_loss_k)
AMPJIT_KERNEL(multilabel_margin_loss, multilabel_margin_loss_k)
