// Convolutions (runtime/ops/conv.def): conv1d, conv2d, conv3d and conv_transpose2d, batched or
// unbatched as in torch. One path (`convolution`), its checks and output size from
// meta::plan_conv (kernels/linalg_meta.h, shared with the CUDA kernels), serves them all:
//  - float32 runs oneDNN's (de)convolution (kernels/cpu/onednn.h);
//  - float16 and bfloat16 are widened to float32 for it and rounded once (Note [oneDNN computes
//    in float32 only] in onednn.h);
//  - float64 runs a direct loop (oneDNN has no float64);
//  - other dtypes are errors, as on torch's CPU.
// The `padding="same"/"valid"` overloads are composites over the int-padding ones.
#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/onednn.h"
#include "kernels/linalg_meta.h"
#include "runtime/boxing.h"
#include "runtime/diagnostic.h"
#include "runtime/layout.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

#include <mutex>

namespace ampjit::cpu {
namespace {

using meta::ConvParams;

// The float64 direct convolution: one gather per output element, so threads never share an
// output. Spatial dims are padded to three (leading size-1 dims) by the caller.
void conv_f64(const ConvParams& p, const double* x, const double* w, const double* bias, double* y,
              int64_t n, int64_t ic, int64_t oc, const int64_t* in, const int64_t* out,
              const int64_t* k) {
  const int64_t g = p.groups, icg = ic / g, ocg = oc / g;
  const int64_t in_sz = in[0] * in[1] * in[2], out_sz = out[0] * out[1] * out[2],
                k_sz = k[0] * k[1] * k[2];
  const int64_t* s = p.stride;
  const int64_t* pd = p.padding;
  const int64_t* d = p.dilation;
  parallel_for(n * oc, 1, [&](int64_t b, int64_t e) {
    for (int64_t no = b; no < e; ++no) {
      const int64_t ni = no / oc, o = no % oc, gi = o / ocg, ol = o % ocg;
      double* yp = y + no * out_sz;
      for (int64_t z = 0; z < out[0]; ++z)
        for (int64_t r = 0; r < out[1]; ++r)
          for (int64_t c = 0; c < out[2]; ++c) {
            double acc = bias ? bias[o] : 0.0;
            for (int64_t il = 0; il < icg; ++il) {
              // Convolution weight [OC, IC/G, k]; transposed weight [IC, OC/G, k].
              const int64_t ci = gi * icg + il;
              const double* xp = x + (ni * ic + ci) * in_sz;
              const double* wp =
                  p.transposed ? w + (ci * ocg + ol) * k_sz : w + (o * icg + il) * k_sz;
              for (int64_t kz = 0; kz < k[0]; ++kz)
                for (int64_t kr = 0; kr < k[1]; ++kr)
                  for (int64_t kc = 0; kc < k[2]; ++kc) {
                    const int64_t pos[3] = {z, r, c}, kk[3] = {kz, kr, kc};
                    int64_t src[3];
                    bool inside = true;
                    for (int a = 0; a < 3 && inside; ++a) {
                      if (!p.transposed) {
                        src[a] = pos[a] * s[a] - pd[a] + kk[a] * d[a];
                      } else {  // out = src * stride - pad + k * dilation, solved for src
                        const int64_t t = pos[a] + pd[a] - kk[a] * d[a];
                        inside = t >= 0 && t % s[a] == 0;
                        src[a] = t / s[a];
                      }
                      inside = inside && src[a] >= 0 && src[a] < in[a];
                    }
                    if (inside)
                      acc += xp[(src[0] * in[1] + src[1]) * in[2] + src[2]] *
                             wp[(kz * k[1] + kr) * k[2] + kc];
                  }
            }
            yp[(z * out[1] + r) * out[2] + c] = acc;
          }
    }
  });
}

// oneDNN's description of a planned convolution's shapes (the operands are the caller's).
onednn::ConvArgs conv_args(const meta::ConvPlan& c) {
  const ConvParams& p = c.params;
  onednn::ConvArgs a;
  a.nsp = p.nsp;
  a.transposed = p.transposed;
  a.n = c.n;
  a.ic = c.ic;
  a.oc = c.oc;
  a.groups = p.groups;
  for (int i = 0; i < p.nsp; ++i) {
    a.in[i] = c.in[i];
    a.out[i] = c.out[i];
    a.kernel[i] = c.k[i];
    a.stride[i] = p.stride[i];
    a.padding[i] = p.padding[i];
    a.dilation[i] = p.dilation[i];
    a.output_padding[i] = p.output_padding[i];
  }
  return a;
}

Tensor convolution(const char* op, int nsp, bool transposed, const Tensor& input_,
                   const Tensor& weight, const std::optional<Tensor>& bias,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                   const std::vector<int64_t>& dilation, const std::vector<int64_t>& output_padding,
                   int64_t groups, bool relu = false) {
  const meta::ConvPlan c = meta::plan_conv(op, nsp, transposed, input_, weight, bias, stride,
                                           padding, dilation, output_padding, groups);
  const ConvParams& p = c.params;
  const int64_t n = c.n, ic = c.ic, oc = c.oc;
  const int64_t *in = c.in, *k = c.k, *out = c.out;
  const ScalarType dt = c.input.dtype();
  // A channels-last input gives a channels-last result (Note [Channels-last tensors]); oneDNN reads
  // and writes that layout directly, other paths compute row-major and convert.
  const bool channels_last = nsp == 2 && !transposed && is_channels_last(c.input);
  const bool direct =
      dt == ScalarType::Float32 || (dt == ScalarType::BFloat16 && onednn::native_bf16());
  if (channels_last && !direct) {
    const Tensor rows = convolution(op, nsp, transposed, c.input.contiguous(), weight, bias, stride,
                                    padding, dilation, output_padding, groups, relu);
    return to_channels_last(rows);
  }
  Tensor y = channels_last ? empty_channels_last(c.out_shape, dt) : Tensor::empty(c.out_shape, dt);
  if (y.numel() > 0 && c.nothing_to_convolve()) {
    // Nothing to convolve (oneDNN cannot take empty dims): the bias, or zeros.
    if (bias)
      y.copy_(bias->reshape(c.bias_shape()));
    else
      y.fill_(0);
    if (relu) ops::relu_(y);
  } else if (y.numel() > 0) {
    // oneDNN reads a channels-last weight as it is (module.to(memory_format=channels_last)).
    const bool w_cl = channels_last && direct && is_channels_last(weight);
    const Tensor x = channels_last ? c.input : c.input.contiguous();
    const Tensor w = w_cl ? weight : weight.contiguous();
    const Tensor b = bias ? bias->contiguous() : Tensor();
    if (dt == ScalarType::Float64) {
      int64_t in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1}, k3[3] = {1, 1, 1};
      ConvParams p3 = p;
      for (int a = 0; a < 3; ++a) {
        const int i = a - (3 - nsp);
        const bool real = i >= 0;
        p3.stride[a] = real ? p.stride[i] : 1;
        p3.padding[a] = real ? p.padding[i] : 0;
        p3.dilation[a] = real ? p.dilation[i] : 1;
        in3[a] = real ? in[i] : 1;
        out3[a] = real ? out[i] : 1;
        k3[a] = real ? k[i] : 1;
      }
      conv_f64(p3, x.data<double>(), w.data<double>(), b.defined() ? b.data<double>() : nullptr,
               y.data<double>(), n, ic, oc, in3, out3, k3);
      if (relu) ops::relu_(y);
    } else {
      AMPJIT_CHECK(dt == ScalarType::Float32 || is_reduced_floating(dt),
                   "{}: not implemented for dtype {}", op, dtype_name(dt));
      onednn::ConvArgs a = conv_args(c);
      a.relu = relu;  // before rounding, as after: rounding keeps the sign
      if (direct) {   // Note [Native bf16 gemm]
        a.type = dt;
        a.channels_last = channels_last;
        a.weight_channels_last = w_cl;
        a.src = x.raw_data();
        a.weight = w.raw_data();
        a.weight_storage = w.storage().get();
        a.bias = b.defined() ? b.raw_data() : nullptr;
        a.dst = y.raw_data();
        onednn::convolution(a, op);
      } else {
        const int64_t nx = onednn::scratch_floats(x.numel()),
                      nw = onednn::scratch_floats(w.numel());
        const int64_t nb = b.defined() ? onednn::scratch_floats(oc) : 0, ny = y.numel();
        onednn::Scratch scratch(nx + nw + nb + ny);
        float* buf = scratch.data();
        onednn::widen_to_float(x.raw_data(), dt, buf, x.numel());
        onednn::widen_to_float(w.raw_data(), dt, buf + nx, w.numel());
        if (nb) onednn::widen_to_float(b.raw_data(), dt, buf + nx + nw, oc);
        float* const y32 = buf + nx + nw + nb;
        a.src = buf;
        a.weight = buf + nx;
        a.bias = nb ? buf + nx + nw : nullptr;
        a.dst = y32;
        onednn::convolution(a, op);
        onednn::round_from_float(y32, y.raw_data(), dt, ny);
      }
    }
  }
  return c.unbatched ? y.squeeze(0) : y;
}

// Plain backward of conv1d/2d/3d (Note [Convolution backward primitives] in onednn.cpp): oneDNN's
// backward primitives on float32 operands, or on bfloat16 ones where native_bf16(); other reduced
// precision operands are widened to float32 and the results rounded once.
std::tuple<Tensor, Tensor, Tensor> convolution_backward_k(
    const Tensor& grad, const Tensor& input, const Tensor& weight, std::vector<int64_t> stride,
    std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups, bool input_grad,
    bool weight_grad, bool bias_grad) {
  const int nsp = static_cast<int>(weight.dim()) - 2;
  const char* op = nsp == 1 ? "conv1d" : nsp == 2 ? "conv2d" : "conv3d";
  const meta::ConvPlan c = meta::plan_conv(op, nsp, false, input, weight, std::nullopt, stride,
                                           padding, dilation, {0}, groups);
  const ScalarType dt = c.input.dtype();
  AMPJIT_CHECK(
      grad.dtype() == dt && weight.dtype() == dt && is_floating(dt) && dt != ScalarType::Float64,
      "{} backward: expected float32 or reduced precision operands of one dtype", op);
  const bool direct =
      dt == ScalarType::Float32 || (dt == ScalarType::BFloat16 && onednn::native_bf16());
  const Tensor g_in = c.unbatched ? grad.unsqueeze(0) : grad;
  if (!direct) {  // widened to float32, computed there, rounded once
    auto f32 = [](const Tensor& t) { return t.to(ScalarType::Float32); };
    auto [dx, dw, db] =
        convolution_backward_k(f32(g_in), f32(c.input), f32(weight), stride, padding, dilation,
                               groups, input_grad, weight_grad, bias_grad);
    auto back = [&](const Tensor& t) { return t.numel() ? t.to(dt) : t; };
    return {c.unbatched && input_grad ? back(dx).squeeze(0) : back(dx), back(dw), back(db)};
  }
  const bool channels_last = nsp == 2 && is_channels_last(c.input);
  const Tensor x = channels_last ? c.input : c.input.contiguous();
  const Tensor g = channels_last ? to_channels_last(g_in) : g_in.contiguous();
  const bool w_cl = channels_last && is_channels_last(weight);
  const Tensor w = w_cl ? weight : weight.contiguous();
  const Tensor none = Tensor::empty(std::vector<int64_t>{0}, dt);
  Tensor dx = !input_grad     ? none
              : channels_last ? empty_channels_last(x.sizes(), dt)
                              : Tensor::empty(x.sizes(), dt);
  Tensor dw = weight_grad ? Tensor::empty(weight.sizes(), dt) : none;
  Tensor db = none;
  const bool fused_bias = bias_grad && dt == ScalarType::Float32;
  if (fused_bias) db = Tensor::empty(std::vector<int64_t>{c.oc}, dt);
  if (c.nothing_to_convolve() || g.numel() == 0) {
    if (input_grad) dx.fill_(0);
    if (weight_grad) dw.fill_(0);
    if (fused_bias) db.fill_(0);
  } else if (input_grad || weight_grad || fused_bias) {
    onednn::ConvBackwardArgs a;
    onednn::ConvArgs& f = a.fwd;
    f = conv_args(c);
    f.type = dt;
    f.channels_last = channels_last;
    f.weight_channels_last = w_cl;
    f.src = x.raw_data();
    f.weight = w.raw_data();
    a.diff_dst = g.raw_data();
    a.diff_src = input_grad ? dx.raw_data() : nullptr;
    a.diff_weight = weight_grad ? dw.raw_data() : nullptr;
    a.diff_bias = fused_bias ? db.raw_data() : nullptr;
    onednn::convolution_backward(a, op);
  }
  if (bias_grad && !fused_bias) {
    std::vector<int64_t> dims{0};
    for (int i = 0; i < nsp; ++i) dims.push_back(2 + i);
    db = ops::sum_dim_IntList(g, dims, false);
  }
  return {c.unbatched && input_grad ? dx.squeeze(0) : dx, dw, db};
}

Tensor conv1d_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                const std::vector<int64_t>& dilation, int64_t groups) {
  return convolution("conv1d", 1, false, input, weight, bias, stride, padding, dilation, {0},
                     groups);
}
Tensor conv2d_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                const std::vector<int64_t>& dilation, int64_t groups) {
  return convolution("conv2d", 2, false, input, weight, bias, stride, padding, dilation, {0},
                     groups);
}
Tensor conv2d_relu_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                     const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                     const std::vector<int64_t>& dilation, int64_t groups) {
  return convolution("conv2d", 2, false, input, weight, bias, stride, padding, dilation, {0},
                     groups, /*relu=*/true);
}
Tensor conv3d_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                const std::vector<int64_t>& dilation, int64_t groups) {
  return convolution("conv3d", 3, false, input, weight, bias, stride, padding, dilation, {0},
                     groups);
}
Tensor conv_transpose2d_k(const Tensor& input, const Tensor& weight,
                          const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                          const std::vector<int64_t>& padding,
                          const std::vector<int64_t>& output_padding, int64_t groups,
                          const std::vector<int64_t>& dilation) {
  return convolution("conv_transpose2d", 2, true, input, weight, bias, stride, padding, dilation,
                     output_padding, groups);
}

// conv{1,2,3}d.padding, as torch's _convolution_mode: "valid" is no padding; "same" keeps each
// spatial size (stride 1 only), padding dilation * (kernel - 1) in total with the odd element at
// the end, which the int overloads cannot say, so an uneven split zero-pads the input first.
Tensor conv_padding(int dims, const Tensor& input, const Tensor& weight,
                    const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                    const std::string& padding, const std::vector<int64_t>& dilation,
                    int64_t groups) {
  auto run = [&](const Tensor& x, std::vector<int64_t> pad) -> Tensor {
    IValue b = bias ? IValue(*bias) : IValue();
    if (dims == 1) return ops::conv1d(x, weight, b, stride, std::move(pad), dilation, groups);
    if (dims == 2) return ops::conv2d(x, weight, b, stride, std::move(pad), dilation, groups);
    return ops::conv3d(x, weight, b, stride, std::move(pad), dilation, groups);
  };
  const auto d = static_cast<size_t>(dims);
  if (padding == "valid") return run(input, std::vector<int64_t>(d, 0));
  AMPJIT_CHECK(padding == "same", "Invalid padding string: '{}'", padding);
  for (int64_t s : stride)
    AMPJIT_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  // A weight of the wrong rank gets the convolution's own error.
  if (weight.dim() != dims + 2 || (dilation.size() != 1 && dilation.size() != d))
    return run(input, std::vector<int64_t>(d, 0));
  std::vector<int64_t> left(d), pad_nd(2 * d, 0);
  bool symmetric = true;
  for (size_t i = 0; i < d; ++i) {
    const int64_t total = (dilation.size() == 1 ? dilation[0] : dilation[i]) *
                          (weight.size(static_cast<int64_t>(i) + 2) - 1);
    left[i] = total / 2;
    if (total % 2) {
      symmetric = false;
      pad_nd[2 * (d - 1 - i) + 1] = 1;  // F.pad order: the last dim first
    }
  }
  if (symmetric) return run(input, left);
  static std::once_flag once;
  std::call_once(once, [] {
    warn(WarningCategory::User,
         "Using padding='same' with even kernel lengths and odd dilation may require a "
         "zero-padded copy of the input be created");
  });
  return run(ops::pad(input, pad_nd, std::string("constant"), 0.0), left);
}

Tensor conv1d_padding_k(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                        const std::string& padding, const std::vector<int64_t>& dilation,
                        int64_t groups) {
  return conv_padding(1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_padding_k(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                        const std::string& padding, const std::vector<int64_t>& dilation,
                        int64_t groups) {
  return conv_padding(2, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv3d_padding_k(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, const std::vector<int64_t>& stride,
                        const std::string& padding, const std::vector<int64_t>& dilation,
                        int64_t groups) {
  return conv_padding(3, input, weight, bias, stride, padding, dilation, groups);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(conv1d_padding, cpu::conv1d_padding_k)
AMPJIT_KERNEL(conv2d_padding, cpu::conv2d_padding_k)
AMPJIT_KERNEL(conv3d_padding, cpu::conv3d_padding_k)
AMPJIT_KERNEL(conv1d, cpu::conv1d_k)
AMPJIT_KERNEL(conv2d, cpu::conv2d_k)
AMPJIT_KERNEL(convolution_backward, cpu::convolution_backward_k)
AMPJIT_KERNEL(conv2d_relu, cpu::conv2d_relu_k)
AMPJIT_KERNEL(conv3d, cpu::conv3d_k)
AMPJIT_KERNEL(conv_transpose2d, cpu::conv_transpose2d_k)
