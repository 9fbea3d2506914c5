// Indexing and joining kernels (runtime/ops/indexing.def): cat, stack, index_select, index_copy,
// gather, tril/triu and embedding.
//
// Note [Index ops move bytes]
// None of these ops computes on values, so none dispatches on the dtype. Gathers and scatters
// dispatch once on the element size (1, 2, 4 or 8 bytes: four instantiations serve all ten
// dtypes); cat and stack write each input into a slice of the result with Tensor::copy_, which
// also converts to the promoted dtype; tril and triu clone and then memset the other triangle
// (all-zero bytes are 0, +0.0 and false in every dtype).
#include <cstring>

#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/strided_loop.h"
#include "runtime/type_promotion.h"

namespace ampjit::cpu {
namespace {

// Calls f.template operator()<U>() with U the unsigned integer type of `nbytes` bytes.
template <typename F>
void dispatch_itemsize(size_t nbytes, F&& f) {
  switch (nbytes) {
    case 1:
      return f.template operator()<uint8_t>();
    case 2:
      return f.template operator()<uint16_t>();
    case 4:
      return f.template operator()<uint32_t>();
    case 8:
      return f.template operator()<uint64_t>();
    default:
      throw Error(fmt::format("internal error: no {}-byte element type", nbytes));
  }
}

DimVector byte_strides(const Tensor& t) {
  DimVector s(t.strides());
  for (auto& x : s) x *= static_cast<int64_t>(t.itemsize());
  return s;
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

// Checks every index against the size of the dimension it addresses (negative indices are out of
// bounds here, as in torch's gather/scatter family). Runs before any write, on one thread, so the
// copy loops never throw.
void check_bounds(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  const Tensor c = index.contiguous();
  const int64_t* p = c.data<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    AMPJIT_CHECK_T(IndexError, p[i] >= 0 && p[i] < size,
                   "{}(): index {} is out of bounds for dimension {} with size {}", op, p[i], dim,
                   size);
  }
}

// Walks `shape` and moves one element per position between `dense` (which has that shape) and
// `indexed`, whose coordinate along `dim` is taken from `index` (int64, viewed with `shape`):
//   gather  (Scatter = false): dense[i] = indexed[i with i[dim] := index[i]]
//   scatter (Scatter = true):  indexed[i with i[dim] := index[i]] = dense[i]
// Indices are already bounds-checked. `dense` and `indexed` have the same dtype.
void move_along_dim(IntArrayRef shape, const Tensor& dense, const Tensor& indexed, int64_t dim,
                    const Tensor& index, bool scatter) {
  const int64_t isz = static_cast<int64_t>(indexed.itemsize());
  const int64_t dim_stride = indexed.stride(dim) * isz;
  DimVector dense_bs = byte_strides(dense), indexed_bs = byte_strides(indexed),
            index_bs = byte_strides(index);
  indexed_bs[dim] = 0;  // the index supplies this coordinate
  StridedLoop<3> loop(shape,
                      {static_cast<char*>(dense.raw_data()), static_cast<char*>(indexed.raw_data()),
                       static_cast<char*>(index.raw_data())},
                      {std::span<const int64_t>(dense_bs), std::span<const int64_t>(indexed_bs),
                       std::span<const int64_t>(index_bs)});
  dispatch_itemsize(indexed.itemsize(), [&]<typename U>() {
    if (scatter) {
      loop.run([dim_stride](char* const* p, const int64_t* st, int64_t n) {
        const char* d = p[0];
        char* x = p[1];
        const char* ix = p[2];
        for (int64_t i = 0; i < n; ++i, d += st[0], x += st[1], ix += st[2]) {
          *reinterpret_cast<U*>(x + *reinterpret_cast<const int64_t*>(ix) * dim_stride) =
              *reinterpret_cast<const U*>(d);
        }
      });
    } else {
      loop.run([dim_stride](char* const* p, const int64_t* st, int64_t n) {
        char* d = p[0];
        const char* x = p[1];
        const char* ix = p[2];
        for (int64_t i = 0; i < n; ++i, d += st[0], x += st[1], ix += st[2]) {
          *reinterpret_cast<U*>(d) =
              *reinterpret_cast<const U*>(x + *reinterpret_cast<const int64_t*>(ix) * dim_stride);
        }
      });
    }
  });
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
  DimVector shape(ref->sizes());
  shape[dim] = total;
  Tensor out = Tensor::empty(shape, rt, ref->device());
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (skipped_in_cat(t) || t.size(dim) == 0) continue;
    out.narrow(dim, offset, t.size(dim)).copy_(t);
    offset += t.size(dim);
  }
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
  const Tensor idx = as_vector_if_scalar(index_as_int64(index, op, allow_int32));
  const Tensor src = as_vector_if_scalar(self);
  AMPJIT_CHECK_T(IndexError, self.dim() > 0 || idx.numel() == 1,
                 "{}(): Index to scalar can have only 1 value, got {} value(s)", op, idx.numel());
  check_bounds(idx, src.size(dim), dim, op);
  DimVector shape(src.sizes());
  shape[dim] = idx.numel();
  Tensor out = Tensor::empty(shape, self.dtype(), self.device());
  move_along_dim(shape, out, src, dim, index_along(idx, shape, dim), /*scatter=*/false);
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
  const Tensor idx = as_vector_if_scalar(index_as_int64(index, "gather", false));
  const Tensor src = as_vector_if_scalar(self);
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
  check_bounds(idx, src.size(dim), dim, "gather");
  Tensor out = Tensor::empty(idx.sizes(), self.dtype(), self.device());
  move_along_dim(idx.sizes(), out, src, dim, idx, /*scatter=*/false);
  return out.view(index.sizes());
}

Tensor index_copy_inplace_k(Tensor self, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy_";
  AMPJIT_CHECK_T(IndexError, index.dim() <= 1,
                 "index_copy_(): Index should have dimension 1 or 0 (got {})", index.dim());
  const Tensor idx = as_vector_if_scalar(index_as_int64(index, op, false));
  AMPJIT_CHECK(self.dtype() == source.dtype(),
               "index_copy_(): self and source expected to have the same dtype, but got (self) {} "
               "and (source) {}",
               dtype_name(self.dtype()), dtype_name(source.dtype()));
  dim = wrap_dim(dim, self.dim(), op);
  const Tensor dst = as_vector_if_scalar(self);
  const Tensor src = as_vector_if_scalar(source);
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
  check_bounds(idx, dst.size(dim), dim, op);
  move_along_dim(src.sizes(), src, dst, dim, index_along(idx, src.sizes(), dim), /*scatter=*/true);
  return self;
}

Tensor index_copy_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  return index_copy_inplace_k(self.clone(), dim, index, source);
}

// --- tril, triu ------------------------------------------------------------------------------

// Zeroes, in a contiguous tensor, the elements outside the lower (tril) or upper (triu) triangle
// of every matrix in the last two dims: tril keeps j <= i + k, triu keeps j >= i + k.
void zero_outside_triangle(const Tensor& t, int64_t k, bool lower) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  if (t.numel() == 0) return;
  k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond these every row is kept or zeroed
  const size_t isz = t.itemsize();
  char* base = static_cast<char*>(t.raw_data());
  const int64_t nrows = t.numel() / cols;
  parallel_for(nrows, std::max<int64_t>(1, kParallelGrain / cols), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t i = r % rows;
      const int64_t lo = lower ? std::clamp<int64_t>(i + k + 1, 0, cols) : 0;
      const int64_t hi = lower ? cols : std::clamp<int64_t>(i + k, 0, cols);
      if (hi > lo) std::memset(base + (r * cols + lo) * isz, 0, (hi - lo) * isz);
    }
  });
}

Tensor triangle(const Tensor& self, int64_t k, bool lower) {
  AMPJIT_CHECK(self.dim() >= 2, "{}: input tensor must have at least 2 dimensions, but got {}",
               lower ? "tril" : "triu", self.shape_str());
  Tensor out = self.clone();
  zero_outside_triangle(out, k, lower);
  return out;
}

Tensor triangle_inplace(Tensor self, int64_t k, bool lower) {
  if (self.is_contiguous() && self.dim() >= 2)
    zero_outside_triangle(self, k, lower);
  else
    self.copy_(triangle(self, k, lower));
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
}  // namespace ampjit::cpu

AMPJIT_KERNEL(cat, cpu::cat_k)
AMPJIT_KERNEL(stack, cpu::stack_k)
AMPJIT_KERNEL(index_select, cpu::index_select_k)
AMPJIT_KERNEL(index_copy, cpu::index_copy_k)
AMPJIT_KERNEL(index_copy_, cpu::index_copy_inplace_k)
AMPJIT_KERNEL(gather, cpu::gather_k)
AMPJIT_KERNEL(tril, cpu::tril_k)
AMPJIT_KERNEL(tril_, cpu::tril_inplace_k)
AMPJIT_KERNEL(triu, cpu::triu_k)
AMPJIT_KERNEL(triu_, cpu::triu_inplace_k)
AMPJIT_KERNEL(embedding, cpu::embedding_k)
