// Boxed CUDA kernels for the normalization and dropout ops of runtime/ops/nn.def: layer_norm,
// batch_norm, group_norm, dropout and dropout_. Argument checks, messages, shapes and dtypes are
// the CPU kernels' own (kernels/norm_meta.h); the device work is in nn.cu (Note [Normalization on
// CUDA], Note [Dropout draws]).
#include <cmath>
#include <mutex>
#include <optional>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/nn.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "kernels/norm_meta.h"
#include "runtime/random.h"

namespace ampjit::cuda {
namespace {

// Where statistics and per-channel parameters live: float32 for float16, bfloat16 and float32
// inputs, float64 for float64 (Note [Normalization on CUDA] in nn.cu).
ScalarType opmath_dtype(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

// An optional per-channel (or per-element) tensor as `n` contiguous values of `dtype` on
// `device`; undefined when absent (the launchers take nullptr for "absent").
Tensor param(const std::optional<Tensor>& p, int64_t n, ScalarType dtype, Device device) {
  if (!meta::has(p)) return Tensor();
  return cast(on_device(*p, device), dtype).contiguous().reshape(std::vector<int64_t>{n});
}

const void* data_or_null(const Tensor& t) {
  return t.defined() ? t.raw_data() : nullptr;
}

// --- layer_norm, group_norm ------------------------------------------------------------------

// layer_norm and group_norm: input, viewed as `s`, normalized over each of `groups` groups of
// channels in every batch entry (layer_norm: one group of its normalized elements, inner = 1).
Tensor normalize_in_groups(const Tensor& input, const meta::NormShape& s, int64_t groups,
                           const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                           double eps, const char* op) {
  const Device device = input.device();
  DeviceGuard guard(device);
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), device);
  if (out.numel() == 0) return out;
  if (!is_floating(input.dtype())) throw_unsupported_dtype(op, input.dtype());
  const ScalarType at = opmath_dtype(input.dtype());
  const Tensor w = param(weight, s.channels, at, device), b = param(bias, s.channels, at, device);
  launch_group_norm(x.raw_data(), out.raw_data(), dt(input.dtype()), s.batch * groups, groups,
                    s.channels / groups, s.inner, data_or_null(w), data_or_null(b), eps);
  return out;
}

Tensor layer_norm_k(const Tensor& input, std::vector<int64_t> normalized_shape,
                    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                    double eps, bool /*cudnn_enable*/) {
  const meta::NormShape s = meta::layer_norm_shape(input, normalized_shape, weight, bias);
  return normalize_in_groups(input, s, 1, weight, bias, eps, "layer_norm");
}

Tensor group_norm_k(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, double eps, bool /*cudnn_enabled*/) {
  const meta::NormShape s = meta::group_norm_shape(input, num_groups, weight, bias);
  return normalize_in_groups(input, s, num_groups, weight, bias, eps, "group_norm");
}

// --- batch_norm ------------------------------------------------------------------------------

Tensor batch_norm_k(const Tensor& input, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                    const std::optional<Tensor>& running_var, bool training, double momentum,
                    double eps, bool /*cudnn_enabled*/) {
  const meta::NormShape s =
      meta::batch_norm_shape(input, weight, bias, running_mean, running_var, training);
  const Device device = input.device();
  DeviceGuard guard(device);
  // torch returns a copy of an empty input and leaves the running statistics alone.
  if (input.numel() == 0) return input.clone();
  const int64_t C = s.channels;
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), device);
  if (!is_floating(input.dtype())) throw_unsupported_dtype("batch_norm", input.dtype());
  const ScalarType at = opmath_dtype(input.dtype());
  const std::vector<int64_t> channel_shape{C};
  const Tensor w = param(weight, C, at, device), b = param(bias, C, at, device);
  const Tensor rstd = Tensor::empty(channel_shape, at, device);
  BatchNormArgs args;
  args.x = x.raw_data();
  args.y = out.raw_data();
  args.dtype = dt(input.dtype());
  args.batch = s.batch;
  args.channels = C;
  args.inner = s.inner;
  args.eps = eps;
  args.weight = data_or_null(w);
  args.bias = data_or_null(b);
  args.training = training;
  args.rstd = rstd.raw_data();
  if (!training) {
    const Tensor rm = param(running_mean, C, at, device), rv = param(running_var, C, at, device);
    args.running_mean = rm.raw_data();
    args.running_var = rv.raw_data();
    launch_batch_norm(args);
    return out;
  }
  // The running statistics are updated as torch does (in double, with the unbiased variance), in
  // float64 copies written back into the running tensors' dtype and layout.
  auto f64_copy = [&](const std::optional<Tensor>& running) {
    if (!meta::has(running)) return Tensor();
    return on_device(*running, device)
        .to(ScalarType::Float64, /*copy=*/true)
        .reshape(channel_shape);
  };
  const Tensor mean = Tensor::empty(channel_shape, at, device);
  const Tensor rm = f64_copy(running_mean), rv = f64_copy(running_var);
  args.mean = mean.raw_data();
  args.running_mean_f64 = rm.defined() ? rm.data<double>() : nullptr;
  args.running_var_f64 = rv.defined() ? rv.data<double>() : nullptr;
  args.momentum = momentum;
  launch_batch_norm(args);
  auto write_back = [](const std::optional<Tensor>& running, const Tensor& updated) {
    if (!meta::has(running)) return;
    Tensor target = *running;
    target.copy_(updated.view(running->sizes()));
  };
  write_back(running_mean, rm);
  write_back(running_var, rv);
  return out;
}

// --- dropout ---------------------------------------------------------------------------------

// Writes x * noise into y (both contiguous on the current device, possibly the same memory) with
// the CPU kernel's noise: 0 with probability p, else 1 / (1 - p) rounded to x's dtype; drawn from
// the CUDA generator (Note [Dropout draws] in nn.cu).
void dropout_into(const Tensor& x, const Tensor& y, double p) {
  if (!is_floating(x.dtype())) throw_unsupported_dtype("dropout", x.dtype());
  double scale = 0;
  uint64_t keep_below = 0, seed = 0, offset = 0;
  if (p < 1) {
    dispatch_floating(x.dtype(), "dropout", [&]<typename T>() {
      scale = static_cast<double>(meta::dropout_scale<T>(p));
    });
    keep_below = static_cast<uint64_t>(std::ceil(std::ldexp(1 - p, 32)));
    Generator& gen = default_generator(DeviceType::CUDA);
    std::lock_guard<std::mutex> lock(gen.mutex());
    seed = gen.seed();
    offset = gen.reserve(static_cast<uint64_t>(x.numel() + 3) / 4 * 4);  // whole Philox blocks
  }
  launch_dropout(x.raw_data(), y.raw_data(), dt(x.dtype()), x.numel(), scale, keep_below, seed,
                 offset);
}

Tensor dropout_k(const Tensor& input, double p, bool train) {
  if (meta::dropout_returns_input(input, p, train)) return input;
  DeviceGuard guard(input.device());
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), input.device());
  dropout_into(x, out, p);
  return out;
}

Tensor dropout_inplace_k(Tensor self, double p, bool train) {
  if (meta::dropout_returns_input(self, p, train)) return self;
  DeviceGuard guard(self.device());
  if (self.is_contiguous()) {
    dropout_into(self, self, p);
  } else {
    Tensor out = Tensor::empty(self.sizes(), self.dtype(), self.device());
    dropout_into(self.contiguous(), out, p);
    self.copy_(out);
  }
  return self;
}

}  // namespace

void register_nn_kernels() {
  AMPJIT_CUDA_KERNEL(layer_norm, layer_norm_k);
  AMPJIT_CUDA_KERNEL(batch_norm, batch_norm_k);
  AMPJIT_CUDA_KERNEL(group_norm, group_norm_k);
  AMPJIT_CUDA_KERNEL(dropout, dropout_k);
  AMPJIT_CUDA_KERNEL(dropout_, dropout_inplace_k);
}

}  // namespace ampjit::cuda
