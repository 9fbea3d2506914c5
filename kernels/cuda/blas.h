// The device code behind the CUDA matrix products and convolutions (kernels/cuda/blas.cu): the
// column matrix of a convolution (im2col) and the scaling that stands in for an empty
// contraction. The products themselves are cuBLAS calls made by the boxed kernels in
// blas_ops.cpp.
#pragma once
#include <cstdint>

#include "kernels/cuda/launch.h"

namespace ampjit::cuda {

// Operand 0 = operand 1 * factor, both of one floating dtype: beta * addend, the result of a
// GEMM whose contraction is empty (cuBLAS is not asked to do that).
void launch_scale(const ElementwiseIter& it, double factor);

// The column matrix of a 2-D convolution for a batch of images: input is a dense
// [batch, channels, height, width] tensor and columns a dense
// [batch, channels * kernel_h * kernel_w, out_h * out_w] one whose row (c, kh, kw) holds, for every
// output position, the input pixel that kernel tap sees (zero in the padding). A convolution is
// then weight [out_channels, channels * kernel_h * kernel_w] @ columns, one group's rows at a
// time. Floating dtypes; values are copied bit for bit.
struct Im2colArgs {
  const void* input = nullptr;
  void* columns = nullptr;
  int dtype = kFloat32;
  int64_t batch = 0, channels = 0, height = 0, width = 0;
  int64_t kernel_h = 1, kernel_w = 1, out_h = 0, out_w = 0;
  int64_t stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0, dilation_h = 1, dilation_w = 1;
};
void launch_im2col(const Im2colArgs& args);

}  // namespace ampjit::cuda
