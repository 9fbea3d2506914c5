// Boxed CUDA kernels for the indexing ops of runtime/ops/indexing.def: cat, stack, index_select,
// index_copy(_), gather, tril(_), triu(_) and embedding. Argument checks, messages, shapes and
// dtypes mirror kernels/cpu/index_ops.cpp; out-of-range indices raise the CPU kernel's IndexError
// (Note [Index bounds on CUDA] in index.cu). The device work is in index.cu.
#include <algorithm>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/index.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "runtime/error.h"
#include "runtime/type_promotion.h"

namespace ampjit::cuda {
namespace {

int itemsize_of(const Tensor& t) {
  return static_cast<int>(t.itemsize());
}

// The index argument as an int64 tensor. torch takes int32 indices where `allow_int32` says so
// (index_select, embedding) and only int64 elsewhere (gather, index_copy).
Tensor index_as_int64(const Tensor& index, const char* op, bool allow_int32) {
  if (index.dtype() == ScalarType::Int64) return index;
  if (allow_int32 && index.dtype() == ScalarType::Int32) return index.to(ScalarType::Int64);
  throw IndexError(fmt::format("{}(): Expected dtype {} for index, but got {}", op,
                               allow_int32 ? "int32 or int64" : "int64",
                               dtype_name(index.dtype())));
}

// `index` (int64, on the device) made contiguous, after checking every index against the size of
// the dimension it addresses (negative indices are out of bounds here, as in torch's
// gather/scatter family), with the CPU kernel's message naming the first bad index.
Tensor bounds_checked(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  const Tensor c = index.contiguous();
  const Tensor scratch = Tensor::empty(std::vector<int64_t>{1}, ScalarType::Int64, c.device());
  const OutOfRange bad = find_out_of_range(c.data<int64_t>(), c.numel(), size, scratch.raw_data());
  AMPJIT_CHECK_T(IndexError, bad.position < 0,
                 "{}(): index {} is out of bounds for dimension {} with size {}", op, bad.value,
                 dim, size);
  return c;
}

// Moves one element per position of dense's shape between `dense` and `indexed` (same dtype),
// whose coordinate along `dim` is taken from `index` (int64, bounds-checked, viewed with dense's
// shape):
//   gather  (scatter = false): dense[i] = indexed[i with i[dim] := index[i]]
//   scatter (scatter = true):  indexed[i with i[dim] := index[i]] = dense[i]
void move_along_dim(const Tensor& dense, const Tensor& indexed, int64_t dim, const Tensor& index,
                    bool scatter) {
  if (dense.numel() == 0) return;
  // `indexed` viewed with dense's shape and stride 0 along `dim`: the index supplies that
  // coordinate. Along the other dims dense's sizes are within indexed's, so the view stays inside.
  DimVector strides(indexed.strides());
  strides[dim] = 0;
  const Tensor indexed_view = indexed.as_strided(dense.sizes(), strides, indexed.storage_offset());
  const int64_t dim_stride = indexed.stride(dim) * static_cast<int64_t>(indexed.itemsize());
  launch_index_move(make_iter(dense, {indexed_view, index}), dim_stride, scatter,
                    itemsize_of(indexed));
}

// A 1-D index viewed over `shape`: it varies along `dim` and repeats along every other dim.
Tensor index_along(const Tensor& index1d, IntArrayRef shape, int64_t dim) {
  DimVector strides(shape.size(), 0);
  strides[dim] = index1d.stride(0);
  return index1d.as_strided(shape, strides, index1d.storage_offset());
}

// A 0-dim tensor takes part in dim-wise indexing as a 1-element vector (torch's convention).
Tensor as_vector_if_scalar(const Tensor& t) {
  return t.dim() == 0 ? t.reshape(std::vector<int64_t>{1}) : t;
}

// --- cat, stack ------------------------------------------------------------------------------

// torch's legacy rule: a 1-D empty tensor joins any concatenation (it is skipped).
bool skipped_in_cat(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

Tensor cat_k(std::vector<Tensor> tensors, int64_t dim) {
  AMPJIT_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    AMPJIT_CHECK(tensors[i].dim() > 0,
                 "zero-dimensional tensor (at position {}) cannot be concatenated", i);
  }
  const ScalarType rt = result_type(tensors);
  const Tensor* ref = nullptr;
  for (const Tensor& t : tensors) {
    if (!skipped_in_cat(t)) {
      ref = &t;
      break;
    }
  }
  if (!ref) return Tensor::empty(std::vector<int64_t>{0}, rt, tensors[0].device());
  dim = wrap_dim(dim, ref->dim(), "cat");
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_in_cat(t)) continue;
    AMPJIT_CHECK(t.dim() == ref->dim(),
                 "Tensors must have same number of dimensions: got {} and {}", ref->dim(), t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      AMPJIT_CHECK(d == dim || t.size(d) == ref->size(d),
                   "Sizes of tensors must match except in dimension {}. Expected size {} but got "
                   "size {} for tensor number {} in the list.",
                   dim, ref->size(d), t.size(d), i);
    }
    total += t.size(dim);
  }
  // No tensor here is 0-dim, so the dispatcher has checked they share one device.
  const Device device = ref->device();
  DeviceGuard guard(device);
  DimVector shape(ref->sizes());
  shape[dim] = total;
  Tensor out = Tensor::empty(shape, rt, device);
  if (out.numel() == 0) return out;
  // Each input, converted to the result dtype and made contiguous where it is not already, is a
  // [outer, size(dim) * inner] matrix copied into its columns of out viewed as [outer, total *
  // inner]. `converted` keeps those copies alive until the launch is queued (later reuse of their
  // memory is ordered after it, Note [One stream per device]).
  const int64_t inner = numel_of(IntArrayRef(shape).subspan(dim + 1));
  const int64_t outer = numel_of(IntArrayRef(shape).first(dim));
  std::vector<Tensor> converted;
  std::vector<CatInput> inputs;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t) || t.size(dim) == 0) continue;
    converted.push_back(cast(t, rt).contiguous());
    inputs.push_back(CatInput{converted.back().raw_data(), t.size(dim) * inner, offset * inner});
    offset += t.size(dim);
  }
  launch_cat(out.raw_data(), outer, total * inner, inputs.data(),
             static_cast<int64_t>(inputs.size()), itemsize_of(out));
  return out;
}

Tensor stack_k(std::vector<Tensor> tensors, int64_t dim) {
  AMPJIT_CHECK(!tensors.empty(), "stack expects a non-empty TensorList");
  const Tensor& first = tensors[0];
  for (size_t i = 1; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    const bool same = t.dim() == first.dim() &&
                      std::equal(t.sizes().begin(), t.sizes().end(), first.sizes().begin());
    AMPJIT_CHECK(same,
                 "stack expects each tensor to be equal size, but got {} at entry 0 and {} at "
                 "entry {}",
                 first.shape_str(), t.shape_str(), i);
  }
  dim = wrap_dim(dim, first.dim() + 1, "stack");
  for (Tensor& t : tensors) t = t.unsqueeze(dim);
  return cat_k(std::move(tensors), dim);
}

// --- index_select, embedding, gather, index_copy ---------------------------------------------

Tensor index_select_impl(const Tensor& self, int64_t dim, const Tensor& index, const char* op,
                         bool allow_int32) {
  AMPJIT_CHECK_T(IndexError, index.dim() <= 1,
                 "{}(): Index is supposed to be a vector, but got "
                 "index of size {}",
                 op, index.shape_str());
  dim = wrap_dim(dim, self.dim(), op);
  const Device device = device_of({self, index});
  DeviceGuard guard(device);
  const Tensor idx = as_vector_if_scalar(index_as_int64(on_device(index, device), op, allow_int32));
  const Tensor src = as_vector_if_scalar(on_device(self, device));
  AMPJIT_CHECK_T(IndexError, self.dim() > 0 || idx.numel() == 1,
                 "{}(): Index to scalar can have only 1 value, got {} value(s)", op, idx.numel());
  const Tensor checked = bounds_checked(idx, src.size(dim), dim, op);
  DimVector shape(src.sizes());
  shape[dim] = checked.numel();
  Tensor out = Tensor::empty(shape, self.dtype(), device);
  move_along_dim(out, src, dim, index_along(checked, shape, dim), /*scatter=*/false);
  return self.dim() == 0 ? out.view(self.sizes()) : out;
}

Tensor index_select_k(const Tensor& self, int64_t dim, const Tensor& index) {
  return index_select_impl(self, dim, index, "index_select", /*allow_int32=*/true);
}

Tensor embedding_k(const Tensor& weight, const Tensor& indices, int64_t /*padding_idx*/,
                   bool /*scale_grad_by_freq*/, bool /*sparse*/) {
  // padding_idx, scale_grad_by_freq and sparse only change the gradient.
  AMPJIT_CHECK(weight.dim() == 2, "embedding(): 'weight' must be 2-D, but got weight of size {}",
               weight.shape_str());
  const Tensor rows = index_select_impl(weight, 0, indices.reshape(std::vector<int64_t>{-1}),
                                        "embedding", /*allow_int32=*/true);
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return rows.view(shape);
}

Tensor gather_k(const Tensor& self, int64_t dim, const Tensor& index, bool /*sparse_grad*/) {
  const Device device = device_of({self, index});
  DeviceGuard guard(device);
  const Tensor idx = as_vector_if_scalar(index_as_int64(on_device(index, device), "gather", false));
  const Tensor src = as_vector_if_scalar(on_device(self, device));
  dim = wrap_dim(dim, self.dim(), "gather");
  AMPJIT_CHECK(idx.dim() == src.dim(),
               "gather(): Index tensor must have the same number of dimensions as input tensor "
               "({} vs {})",
               index.dim(), self.dim());
  for (int64_t d = 0; d < src.dim(); ++d) {
    AMPJIT_CHECK(d == dim || idx.size(d) <= src.size(d),
                 "gather(): Size does not match at dimension {} expected index {} to be smaller "
                 "than self {} apart from dimension {}",
                 d, index.shape_str(), self.shape_str(), dim);
  }
  const Tensor checked = bounds_checked(idx, src.size(dim), dim, "gather");
  Tensor out = Tensor::empty(checked.sizes(), self.dtype(), device);
  move_along_dim(out, src, dim, checked, /*scatter=*/false);
  return out.view(index.sizes());
}

Tensor index_copy_inplace_k(Tensor self, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy_";
  AMPJIT_CHECK_T(IndexError, index.dim() <= 1,
                 "index_copy_(): Index should have dimension 1 or 0 (got {})", index.dim());
  // self is written, so the op runs on its device (a CPU self gets the device mismatch error).
  const Device device = self.device();
  DeviceGuard guard(device);
  const Tensor idx = as_vector_if_scalar(index_as_int64(on_device(index, device), op, false));
  AMPJIT_CHECK(self.dtype() == source.dtype(),
               "index_copy_(): self and source expected to have the same dtype, but got (self) {} "
               "and (source) {}",
               dtype_name(self.dtype()), dtype_name(source.dtype()));
  dim = wrap_dim(dim, self.dim(), op);
  const Tensor dst = as_vector_if_scalar(self);
  const Tensor src = as_vector_if_scalar(on_device(source, device));
  AMPJIT_CHECK_T(IndexError, idx.numel() == src.size(dim),
                 "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})",
                 idx.numel(), src.size(dim));
  bool same_slices = src.dim() == dst.dim();
  for (int64_t d = 0; same_slices && d < dst.dim(); ++d) {
    same_slices = d == dim || src.size(d) == dst.size(d);
  }
  AMPJIT_CHECK(same_slices,
               "index_copy_(): self and source must have the same shape except in dimension {}, "
               "but got self {} and source {}",
               dim, self.shape_str(), source.shape_str());
  const Tensor checked = bounds_checked(idx, dst.size(dim), dim, op);
  // With repeated indices the last write wins on CPU; here which one wins is unspecified, as in
  // torch's CUDA kernel.
  move_along_dim(src, dst, dim, index_along(checked, src.sizes(), dim), /*scatter=*/true);
  return self;
}

Tensor index_copy_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return index_copy_inplace_k(self.clone(), dim, index, source);
}

// --- tril, triu ------------------------------------------------------------------------------

// out = the elements of `in` (contiguous, at least 2-D) inside the lower (tril: j <= i + k) or
// upper (triu: j >= i + k) triangle of every matrix in the last two dims, zero elsewhere; `out`
// is contiguous with in's shape and may be `in` itself.
void keep_triangle(const Tensor& in, const Tensor& out, int64_t k, bool lower) {
  const int64_t rows = in.size(-2), cols = in.size(-1);
  if (in.numel() == 0) return;
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond these every row is kept or zeroed
  launch_triangle(in.raw_data(), out.raw_data(), in.numel(), rows, cols, k, lower, itemsize_of(in));
}

Tensor triangle(const Tensor& self, int64_t k, bool lower) {
  AMPJIT_CHECK(self.dim() >= 2, "{}: input tensor must have at least 2 dimensions, but got {}",
               lower ? "tril" : "triu", self.shape_str());
  DeviceGuard guard(self.device());
  const Tensor x = self.contiguous();
  Tensor out = Tensor::empty(self.sizes(), self.dtype(), self.device());
  keep_triangle(x, out, k, lower);
  return out;
}

Tensor triangle_inplace(Tensor self, int64_t k, bool lower) {
  if (self.is_contiguous() && self.dim() >= 2) {
    DeviceGuard guard(self.device());
    keep_triangle(self, self, k, lower);
  } else {
    self.copy_(triangle(self, k, lower));
  }
  return self;
}

Tensor tril_k(const Tensor& self, int64_t k) {
  return triangle(self, k, true);
}
Tensor triu_k(const Tensor& self, int64_t k) {
  return triangle(self, k, false);
}
Tensor tril_inplace_k(Tensor self, int64_t k) {
  return triangle_inplace(std::move(self), k, true);
}
Tensor triu_inplace_k(Tensor self, int64_t k) {
  return triangle_inplace(std::move(self), k, false);
}

}  // namespace

void register_index_kernels() {
  AMPJIT_CUDA_KERNEL(cat, cat_k);
  AMPJIT_CUDA_KERNEL(stack, stack_k);
  AMPJIT_CUDA_KERNEL(index_select, index_select_k);
  AMPJIT_CUDA_KERNEL(index_copy, index_copy_k);
  AMPJIT_CUDA_KERNEL(index_copy_, index_copy_inplace_k);
  AMPJIT_CUDA_KERNEL(gather, gather_k);
  AMPJIT_CUDA_KERNEL(tril, tril_k);
  AMPJIT_CUDA_KERNEL(tril_, tril_inplace_k);
  AMPJIT_CUDA_KERNEL(triu, triu_k);
  AMPJIT_CUDA_KERNEL(triu_, triu_inplace_k);
  AMPJIT_CUDA_KERNEL(embedding, embedding_k);
}

}  // namespace ampjit::cuda
