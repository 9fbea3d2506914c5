// What the normalization and dropout ops (runtime/ops/nn.def) decide before computing, shared by
// the CPU kernels (kernels/cpu/norm_ops.cpp) and the CUDA kernels (kernels/cuda/nn_ops.cpp):
// torch's argument checks with its messages, the layout each normalization works on, and dropout's
// noise value. A backend supplies only the statistics and the arithmetic, so the two cannot drift
// apart in what they accept or return.
#pragma once
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/error.h"
#include "runtime/half.h"
#include "runtime/tensor.h"

namespace ampjit::meta {

// Whether an optional tensor argument (weight, bias, a running statistic) was given.
inline bool has(const std::optional<Tensor>& t) {
  return t && t->defined();
}

// A normalization's input viewed as contiguous [batch, channels, inner]: every channel has its own
// weight and bias (and, in batch_norm, its own statistics) and `inner` values per batch entry. The
// result has the input's shape and dtype.
struct NormShape {
  int64_t batch = 0, channels = 0, inner = 0;
};

// layer_norm normalizes each batch entry over its trailing `normalized_shape` elements, which are
// its channels (inner = 1).
inline NormShape layer_norm_shape(const Tensor& input, IntArrayRef normalized_shape,
                                  const std::optional<Tensor>& weight,
                                  const std::optional<Tensor>& bias) {
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
  return {numel_of(input.sizes().first(lead)), numel_of(normalized_shape), 1};
}

// group_norm normalizes each batch entry's channels in num_groups groups of channels / num_groups
// consecutive channels; inner is the product of the sizes after the channel dim.
inline NormShape group_norm_shape(const Tensor& input, int64_t num_groups,
                                  const std::optional<Tensor>& weight,
                                  const std::optional<Tensor>& bias) {
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
  return {N, C, numel_of(input.sizes().subspan(2))};
}

// batch_norm normalizes each channel over its batch * inner values (in training, with their own
// statistics, which also update the running ones; in evaluation, with the running statistics).
// The last check does not apply to an empty input, of which the kernels return a copy.
inline NormShape batch_norm_shape(const Tensor& input, const std::optional<Tensor>& weight,
                                  const std::optional<Tensor>& bias,
                                  const std::optional<Tensor>& running_mean,
                                  const std::optional<Tensor>& running_var, bool training) {
  AMPJIT_CHECK(input.dim() >= 2,
               "batch_norm: expected an input of at least 2 dimensions (N, C, ...), but got input "
               "of size {}",
               input.shape_str());
  const NormShape s{input.size(0), input.size(1), numel_of(input.sizes().subspan(2))};
  auto check_param = [&](const std::optional<Tensor>& p, const char* name) {
    AMPJIT_CHECK(!has(p) || p->numel() == s.channels, "{} should contain {} elements not {}", name,
                 s.channels, p->numel());
  };
  check_param(weight, "weight");
  check_param(bias, "bias");
  check_param(running_mean, "running_mean");
  check_param(running_var, "running_var");
  if (!training) {
    AMPJIT_CHECK(has(running_mean), "running_mean must be defined in evaluation mode");
    AMPJIT_CHECK(has(running_var), "running_var must be defined in evaluation mode");
  }
  AMPJIT_CHECK_T(ValueError, !training || input.numel() == 0 || s.batch * s.inner > 1,
                 "Expected more than 1 value per channel when training, got input size {}",
                 input.shape_str());
  return s;
}

// dropout's p check; true when the op returns its input itself: train=False, p=0 and empty inputs,
// as torch does.
inline bool dropout_returns_input(const Tensor& input, double p, bool train) {
  AMPJIT_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got {}", p);
  return p == 0 || !train || input.numel() == 0;
}

// What dropout multiplies a kept element of dtype T by (p < 1), in T's op-math type: 1 / (1 - p)
// rounded to T, as torch's noise is a tensor of the input's dtype.
template <typename T>
opmath_t<T> dropout_scale(double p) {
  using M = opmath_t<T>;
  return static_cast<M>(static_cast<T>(M(1) / static_cast<M>(1 - p)));
}

}  // namespace ampjit::meta
