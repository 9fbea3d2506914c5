// Launchers for the CUDA normalization and dropout kernels (kernels/cuda/nn.cu), called by the
// boxed kernels of kernels/cuda/nn_ops.cpp. Tensors arrive as contiguous device pointers with a
// dtype code (launch.h); per-channel parameters and statistics are in the input's op-math dtype
// (float32 for float16/bfloat16/float32 inputs, float64 for float64; Note [Normalization on CUDA]
// in nn.cu).
#pragma once
#include <cstdint>

namespace ampjit::cuda {

// group_norm over x of `rows` rows of channels_per_group * inner contiguous values each: row r
// holds channels (r % groups) * channels_per_group + cg for cg in [0, channels_per_group), each a
// run of `inner` values, and y = (x - mean_r) * rstd_r * weight[c] + bias[c]. layer_norm is
// groups = 1, inner = 1. `weight` and `bias` are nullptr when absent (1 and 0).
void launch_group_norm(const void* x, void* y, int dtype, int64_t rows, int64_t groups,
                       int64_t channels_per_group, int64_t inner, const void* weight,
                       const void* bias, double eps);

// batch_norm over x of shape [batch, channels, inner] (contiguous), into y of the same shape.
struct BatchNormArgs {
  const void* x = nullptr;
  void* y = nullptr;
  int dtype = 0;
  int64_t batch = 0, channels = 0, inner = 0;
  double eps = 0;
  const void* weight = nullptr;  // [channels] or nullptr
  const void* bias = nullptr;    // [channels] or nullptr
  bool training = false;
  // Evaluation: the running statistics (required). Training: the running statistics to update
  // in place as float64 copies (either may be nullptr), running = (1 - momentum) * running +
  // momentum * batch statistic, with the unbiased batch variance.
  const void* running_mean = nullptr;
  const void* running_var = nullptr;
  double* running_mean_f64 = nullptr;
  double* running_var_f64 = nullptr;
  double momentum = 0;
  // Scratch of `channels` op-math values: the batch mean (training only) and the
  // 1 / sqrt(var + eps) used.
  void* mean = nullptr;
  void* rstd = nullptr;
};
void launch_batch_norm(const BatchNormArgs& a);

// Dropout: y = x * noise over n contiguous values (x and y may be the same memory), where noise is
// `scale` for an element whose 32-bit Philox draw is below `keep_below` and 0 otherwise (Note
// [Dropout draws] in nn.cu). Element i takes draw offset + i of the stream keyed by `seed`;
// `offset` is a multiple of 4. keep_below = 0 keeps nothing and draws nothing.
void launch_dropout(const void* x, void* y, int dtype, int64_t n, double scale, uint64_t keep_below,
                    uint64_t seed, uint64_t offset);

}  // namespace ampjit::cuda
