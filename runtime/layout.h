// Channels-last tensors: recognizing them and allocating like them.
//
// Note [Channels-last tensors]
// A 4-D tensor whose strides are those of a dense N x H x W x C array (torch.channels_last) is the
// layout oneDNN's convolutions compute in, so a network kept in it runs from one convolution to
// the next without reordering its activations (they were reordered in and out of every
// convolution: a fifth of a frozen resnet50's time). ampjit keeps the layout where torch does:
// x.contiguous(memory_format=torch.channels_last) and module.to(memory_format=...) make it, a
// convolution of a channels-last input gives a channels-last result, and pointwise ops give their
// first operand's layout to their result (torch's TensorIterator rule for a dense operand of the
// output's shape); their loops then run in memory order (StridedLoop's in_memory_order). Other
// ops that torch keeps channels-last give a channels-last result too (max_pool2d, batch_norm),
// computed in row-major order and converted once. Everything else computes in row-major order,
// with torch's values.
#pragma once
#include "runtime/tensor.h"

namespace ampjit {

// Whether t is 4-D with channels-last strides (c10's compute_channels_last_contiguous_2d) and is
// not also row-major (a tensor with C == 1, or H == W == 1, is both: it stays row-major).
bool is_channels_last(const Tensor& t);
// c10's is_contiguous(memory_format=channels_last): 4-D, and every dim of size != 1 has the stride
// of a dense channels-last tensor (true of a tensor that is also row-major).
bool is_channels_last_contiguous(const Tensor& t);
// A new channels-last tensor of NCHW `sizes`, uninitialized.
Tensor empty_channels_last(IntArrayRef sizes, ScalarType dtype, Device device = Device());
// A new tensor of `sizes` in `like`'s layout: channels-last when `like` is and has these sizes,
// else row-major.
Tensor empty_in_layout_of(const Tensor& like, IntArrayRef sizes, ScalarType dtype);
// `t` (4-D) with the strides of a new channels-last tensor (torch's, size-1 dims included): t
// itself when it has them, else a copy.
Tensor to_channels_last(const Tensor& t);

}  // namespace ampjit
