// Launchers for the CUDA indexing kernels (kernels/cuda/index.cu), called by the boxed kernels of
// kernels/cuda/index_ops.cpp. As on CPU (Note [Index ops move bytes] in kernels/cpu/index_ops.cpp)
// they move elements without looking at the dtype: the moving launchers are templates on U, the
// unsigned integer type of the element size, which the boxed kernels pick with
// meta::dispatch_itemsize (kernels/index_meta.h); index.cu instantiates the four.
#pragma once
#include <cstdint>

#include "kernels/cuda/launch.h"

namespace ampjit::cuda {

// One input of a concatenation, viewed as a contiguous [outer, cols] matrix whose columns land at
// out[:, offset : offset + cols] (cols = the input's size along the cat dimension times the
// product of the sizes after it; cols > 0).
struct CatInput {
  const void* data = nullptr;
  int64_t cols = 0;
  int64_t offset = 0;
};
// Writes every input into its columns of the contiguous out [outer, out_cols].
template <typename U>
void launch_cat(void* out, int64_t outer, int64_t out_cols, const CatInput* inputs, int64_t count);

// Moves one element per position of the iteration `it` between operand 0 (the dense side) and
// operand 1 (the indexed side), whose coordinate along the indexed dimension is operand 2 (int64
// indices, already bounds-checked); operand 1 has stride 0 along that dimension in `it`, and
// `dim_stride` is its real byte stride there:
//   gather  (scatter = false): dense = *(indexed + index * dim_stride)
//   scatter (scatter = true):  *(indexed + index * dim_stride) = dense
template <typename U>
void launch_index_move(const ElementwiseIter& it, int64_t dim_stride, bool scatter);

// The first (lowest position) of n contiguous int64 indices outside [0, size) and its value;
// position -1 when every index is in range. `scratch` is 8 bytes of device memory. Waits for the
// device (the answer decides whether the op raises).
struct OutOfRange {
  int64_t position = -1;
  int64_t value = 0;
};
OutOfRange find_out_of_range(const int64_t* index, int64_t n, int64_t size, void* scratch);

// out = in inside the triangle of every [rows, cols] matrix of the contiguous `in` (lower: column
// j <= row i + k, as tril keeps; upper: j >= i + k, as triu keeps) and zero outside. `in` and
// `out` may be the same memory; k lies in [-rows - 1, cols + 1] (the caller clamps it).
template <typename U>
void launch_triangle(const void* in, void* out, int64_t numel, int64_t rows, int64_t cols,
                     int64_t k, bool lower);

}  // namespace ampjit::cuda
