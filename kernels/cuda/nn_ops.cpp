// Boxed CUDA kernels for the normalization and dropout ops of runtime/ops/nn.def: layer_norm,
// batch_norm, group_norm, dropout and dropout_. Argument checks, messages, shapes and dtypes
// mirror kernels/cpu/norm_ops.cpp; the device work is in nn.cu (Note [Normalization on CUDA],
// Note [Dropout draws]).
#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/nn.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "runtime/error.h"
#include "runtime/random.h"

namespace ampjit::cuda {
namespace {

bool has(const std::optional<Tensor>& t) {
  return t && t->defined();
}

// Where statistics and per-channel parameters live: float32 for float16, bfloat16 and float32
// inputs, float64 for float64 (Note [Normalization on CUDA] in nn.cu).
ScalarType opmath_dtype(ScalarType t) {
  return t == ScalarType::Float64 ? ScalarType::Float64 : ScalarType::Float32;
}

// An optional per-channel (or per-element) tensor as `n` contiguous values of `dtype` on
// `device`; undefined when absent (the launchers take nullptr for "absent").
Tensor param(const std::optional<Tensor>& p, int64_t n, ScalarType dtype, Device device) {
  if (!has(p)) return Tensor();
  return cast(on_device(*p, device), dtype).contiguous().reshape(std::vector<int64_t>{n});
}

const void* data_or_null(const Tensor& t) {
  return t.defined() ? t.raw_data() : nullptr;
}

// --- layer_norm, group_norm ------------------------------------------------------------------

Tensor layer_norm_k(const Tensor& input, std::vector<int64_t> normalized_shape,
                    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                    double eps, bool /*cudnn_enable*/) {
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  AMPJIT_CHECK(nd >= 1,
               "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least "
               "one element, but got normalized_shape = {}",
               shape_str(normalized_shape));
  auto check_param = [&](const std::optional<Tensor>& p, const char* name) {
    AMPJIT_CHECK(!has(p) || std::equal(p->sizes().begin(), p->sizes().end(),
                                       normalized_shape.begin(), normalized_shape.end()),
                 "Expected {} to be of same shape as normalized_shape, but got {} of shape {} and "
                 "normalized_shape = {}",
                 name, name, p->shape_str(), shape_str(normalized_shape));
  };
  check_param(weight, "weight");
  check_param(bias, "bias");
  const int64_t lead = input.dim() - nd;
  const bool matches = lead >= 0 && std::equal(normalized_shape.begin(), normalized_shape.end(),
                                               input.sizes().begin() + std::max<int64_t>(lead, 0));
  if (!matches) {
    std::string dims;
    for (int64_t s : normalized_shape) dims += fmt::format(", {}", s);
    throw Error(
        fmt::format("Given normalized_shape={}, expected input with shape [*{}], but got "
                    "input of size{}",
                    shape_str(normalized_shape), dims, input.shape_str()));
  }
  const Device device = input.device();
  DeviceGuard guard(device);
  const int64_t N = numel_of(normalized_shape);
  const int64_t M = numel_of(input.sizes().first(lead));
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), device);
  if (out.numel() == 0) return out;
  if (!is_floating(input.dtype())) throw_unsupported_dtype("layer_norm", input.dtype());
  const ScalarType at = opmath_dtype(input.dtype());
  const Tensor w = param(weight, N, at, device), b = param(bias, N, at, device);
  launch_group_norm(x.raw_data(), out.raw_data(), dt(input.dtype()), M, /*groups=*/1,
                    /*channels_per_group=*/N, /*inner=*/1, data_or_null(w), data_or_null(b), eps);
  return out;
}

Tensor group_norm_k(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, double eps, bool /*cudnn_enabled*/) {
  AMPJIT_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received {}",
               input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  AMPJIT_CHECK(num_groups > 0, "Expected num groups to be greater than 0, got {}", num_groups);
  AMPJIT_CHECK(C % num_groups == 0,
               "Expected number of channels in input to be divisible by num_groups, but got input "
               "of shape {} and num_groups={}",
               input.shape_str(), num_groups);
  auto check_param = [&](const std::optional<Tensor>& p, const char* name) {
    AMPJIT_CHECK(!has(p) || (p->dim() == 1 && p->numel() == C),
                 "Expected {} to be a vector of size equal to the number of channels in input, but "
                 "got {} of shape {} and input of shape {}",
                 name, name, p->shape_str(), input.shape_str());
  };
  check_param(weight, "weight");
  check_param(bias, "bias");
  const Device device = input.device();
  DeviceGuard guard(device);
  const int64_t S = numel_of(input.sizes().subspan(2));
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), device);
  if (out.numel() == 0) return out;
  if (!is_floating(input.dtype())) throw_unsupported_dtype("group_norm", input.dtype());
  const ScalarType at = opmath_dtype(input.dtype());
  const Tensor w = param(weight, C, at, device), b = param(bias, C, at, device);
  launch_group_norm(x.raw_data(), out.raw_data(), dt(input.dtype()), N * num_groups, num_groups,
                    C / num_groups, S, data_or_null(w), data_or_null(b), eps);
  return out;
}

// --- batch_norm ------------------------------------------------------------------------------

Tensor batch_norm_k(const Tensor& input, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                    const std::optional<Tensor>& running_var, bool training, double momentum,
                    double eps, bool /*cudnn_enabled*/) {
  AMPJIT_CHECK(input.dim() >= 2,
               "batch_norm: expected an input of at least 2 dimensions (N, C, ...), but got input "
               "of size {}",
               input.shape_str());
  const int64_t N = input.size(0), C = input.size(1), S = numel_of(input.sizes().subspan(2));
  auto check_param = [&](const std::optional<Tensor>& p, const char* name) {
    AMPJIT_CHECK(!has(p) || p->numel() == C, "{} should contain {} elements not {}", name, C,
                 p->numel());
  };
  check_param(weight, "weight");
  check_param(bias, "bias");
  check_param(running_mean, "running_mean");
  check_param(running_var, "running_var");
  if (!training) {
    AMPJIT_CHECK(has(running_mean), "running_mean must be defined in evaluation mode");
    AMPJIT_CHECK(has(running_var), "running_var must be defined in evaluation mode");
  }
  const Device device = input.device();
  DeviceGuard guard(device);
  // torch returns a copy of an empty input and leaves the running statistics alone.
  if (input.numel() == 0) return input.clone();
  const int64_t count = N * S;  // values per channel
  AMPJIT_CHECK_T(ValueError, !training || count > 1,
                 "Expected more than 1 value per channel when training, got input size {}",
                 input.shape_str());

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
  args.batch = N;
  args.channels = C;
  args.inner = S;
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
    if (!has(running)) return Tensor();
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
    if (!has(running)) return;
    Tensor target = *running;
    target.copy_(updated.view(running->sizes()));
  };
  write_back(running_mean, rm);
  write_back(running_var, rv);
  return out;
}

// --- dropout ---------------------------------------------------------------------------------

void check_dropout_p(double p) {
  AMPJIT_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got {}", p);
}

// Writes x * noise into y (both contiguous on the current device, possibly the same memory) with
// the CPU kernel's noise: 0 with probability p, else 1 / (1 - p) rounded to x's dtype; drawn from
// the CUDA generator (Note [Dropout draws] in nn.cu).
void dropout_into(const Tensor& x, const Tensor& y, double p) {
  if (!is_floating(x.dtype())) throw_unsupported_dtype("dropout", x.dtype());
  double scale = 0;
  uint64_t keep_below = 0, seed = 0, offset = 0;
  if (p < 1) {
    dispatch_floating(x.dtype(), "dropout", [&]<typename T>() {
      using M = opmath_t<T>;
      scale = static_cast<double>(static_cast<M>(static_cast<T>(M(1) / static_cast<M>(1 - p))));
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

// train=False, p=0 and empty inputs return the input itself, as torch does.
Tensor dropout_k(const Tensor& input, double p, bool train) {
  check_dropout_p(p);
  if (p == 0 || !train || input.numel() == 0) return input;
  DeviceGuard guard(input.device());
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), input.device());
  dropout_into(x, out, p);
  return out;
}

Tensor dropout_inplace_k(Tensor self, double p, bool train) {
  check_dropout_p(p);
  if (p == 0 || !train || self.numel() == 0) return self;
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
