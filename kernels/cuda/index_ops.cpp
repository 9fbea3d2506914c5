// Boxed CUDA kernels for the indexing ops of runtime/ops/indexing.def: cat, stack, index_select,
// index_copy(_), gather, tril(_), triu(_) and embedding. Argument checks, messages, shapes and
// dtypes are the CPU kernels' own (kernels/index_meta.h); out-of-range indices raise the CPU
// kernel's IndexError (Note [Index bounds on CUDA] in index.cu). The device work is in index.cu.
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/index.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "kernels/index_meta.h"

namespace ampjit::cuda {
namespace {

// `index` (int64, on the device) made contiguous, after checking every index against the size of
// the dimension it addresses; the error names the first bad index, as on CPU.
Tensor bounds_checked(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  const Tensor c = index.contiguous();
  const Tensor scratch = Tensor::empty(std::vector<int64_t>{1}, ScalarType::Int64, c.device());
  const OutOfRange bad = find_out_of_range(c.data<int64_t>(), c.numel(), size, scratch.raw_data());
  if (bad.position >= 0) [[unlikely]]
    meta::throw_index_out_of_bounds(op, bad.value, dim, size);
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
  const ElementwiseIter it = make_iter(dense, {indexed_view, index});
  meta::dispatch_itemsize(indexed.itemsize(),
                          [&]<typename U>() { launch_index_move<U>(it, dim_stride, scatter); });
}

// --- cat, stack ------------------------------------------------------------------------------

Tensor cat_k(std::vector<Tensor> tensors, int64_t dim) {
  const meta::CatMeta m = meta::cat_meta(tensors, dim);
  // No tensor here is 0-dim, so the dispatcher has checked they share one device.
  DeviceGuard guard(m.device);
  Tensor out = Tensor::empty(m.shape, m.dtype, m.device);
  if (out.numel() == 0) return out;
  // Each input, converted to the result dtype and made contiguous where it is not already, is a
  // [outer, size(dim) * inner] matrix copied into its columns of out viewed as [outer, total *
  // inner]. `converted` keeps those copies alive until the launch is queued (later reuse of their
  // memory is ordered after it, Note [One stream per device]).
  const IntArrayRef shape(m.shape);
  const int64_t inner = numel_of(shape.subspan(m.dim + 1));
  const int64_t outer = numel_of(shape.first(m.dim));
  std::vector<Tensor> converted;
  std::vector<CatInput> inputs;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (!meta::writes_in_cat(t, m)) continue;
    converted.push_back(cast(t, m.dtype).contiguous());
    inputs.push_back(CatInput{converted.back().raw_data(), t.size(m.dim) * inner, offset * inner});
    offset += t.size(m.dim);
  }
  meta::dispatch_itemsize(out.itemsize(), [&]<typename U>() {
    launch_cat<U>(out.raw_data(), outer, shape[m.dim] * inner, inputs.data(),
                  static_cast<int64_t>(inputs.size()));
  });
  return out;
}

Tensor stack_k(std::vector<Tensor> tensors, int64_t dim) {
  dim = meta::stack_dim(tensors, dim);
  for (Tensor& t : tensors) t = t.unsqueeze(dim);
  return cat_k(std::move(tensors), dim);
}

// --- index_select, embedding, gather, index_copy ---------------------------------------------

Tensor index_select_impl(const Tensor& self, int64_t dim, const Tensor& index, const char* op,
                         bool allow_int32) {
  const Device device = device_of({self, index});
  DeviceGuard guard(device);
  const meta::IndexSelectMeta m = meta::index_select_meta(
      on_device(self, device), dim, on_device(index, device), op, allow_int32);
  const Tensor checked = bounds_checked(m.index, m.self.size(m.dim), m.dim, op);
  Tensor out = Tensor::empty(m.shape, self.dtype(), device);
  move_along_dim(out, m.self, m.dim, meta::index_along(checked, m.shape, m.dim),
                 /*scatter=*/false);
  return self.dim() == 0 ? out.view(self.sizes()) : out;
}

Tensor index_select_k(const Tensor& self, int64_t dim, const Tensor& index) {
  return index_select_impl(self, dim, index, "index_select", /*allow_int32=*/true);
}

Tensor embedding_k(const Tensor& weight, const Tensor& indices, int64_t /*padding_idx*/,
                   bool /*scale_grad_by_freq*/, bool /*sparse*/) {
  meta::check_embedding(weight);
  const Tensor rows = index_select_impl(weight, 0, indices.reshape(std::vector<int64_t>{-1}),
                                        "embedding", /*allow_int32=*/true);
  return rows.view(meta::embedding_shape(weight, indices));
}

Tensor gather_k(const Tensor& self, int64_t dim, const Tensor& index, bool /*sparse_grad*/) {
  const Device device = device_of({self, index});
  DeviceGuard guard(device);
  const meta::GatherMeta m =
      meta::gather_meta(on_device(self, device), dim, on_device(index, device));
  const Tensor checked = bounds_checked(m.index, m.self.size(m.dim), m.dim, "gather");
  Tensor out = Tensor::empty(checked.sizes(), self.dtype(), device);
  move_along_dim(out, m.self, m.dim, checked, /*scatter=*/false);
  return out.view(index.sizes());
}

Tensor index_copy_inplace_k(Tensor self, int64_t dim, const Tensor& index, const Tensor& source) {
  // self is written, so the op runs on its device (a CPU self gets the device mismatch error).
  const Device device = self.device();
  DeviceGuard guard(device);
  const meta::IndexCopyMeta m = meta::index_copy_meta(
      self, dim, index, source, [device](const Tensor& t) { return on_device(t, device); });
  const Tensor checked = bounds_checked(m.index, m.self.size(m.dim), m.dim, "index_copy_");
  // With repeated indices the last write wins on CPU; here which one wins is unspecified, as in
  // torch's CUDA kernel.
  move_along_dim(m.source, m.self, m.dim, meta::index_along(checked, m.source.sizes(), m.dim),
                 /*scatter=*/true);
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
  k = meta::clamp_diagonal(k, rows, cols);
  meta::dispatch_itemsize(in.itemsize(), [&]<typename U>() {
    launch_triangle<U>(in.raw_data(), out.raw_data(), in.numel(), rows, cols, k, lower);
  });
}

Tensor triangle(const Tensor& self, int64_t k, bool lower) {
  meta::check_triangle(self, lower);
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
