// What the indexing ops (runtime/ops/indexing.def) decide before moving any element, shared by the
// CPU kernels (kernels/cpu/index_ops.cpp) and the CUDA kernels (kernels/cuda/index_ops.cpp):
// torch's argument checks with its messages, the index dtypes taken, result shapes and dtypes, the
// message naming an out-of-range index, and the element-size dispatch. A backend supplies only the
// moves and the scan for bad indices, so the two cannot drift apart in what they accept or return.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/error.h"
#include "runtime/tensor.h"
#include "runtime/type_promotion.h"

namespace ampjit::meta {

// Calls f.template operator()<U>() with U the unsigned integer type of `nbytes` bytes (Note [Index
// ops move bytes] in kernels/cpu/index_ops.cpp).
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

// The index argument as an int64 tensor. torch takes int32 indices where `allow_int32` says so
// (index_select, embedding) and only int64 elsewhere (gather, index_copy).
inline Tensor index_as_int64(const Tensor& index, const char* op, bool allow_int32) {
  if (index.dtype() == ScalarType::Int64) return index;
  if (allow_int32 && index.dtype() == ScalarType::Int32) return index.to(ScalarType::Int64);
  throw IndexError(fmt::format("{}(): Expected dtype {} for index, but got {}", op,
                               allow_int32 ? "int32 or int64" : "int64",
                               dtype_name(index.dtype())));
}

// The error for `index`, outside [0, size) of dimension `dim`. Negative indices are out of bounds
// here, as in torch's gather/scatter family. Each backend checks every index before it writes
// anything and names the first bad one (the lowest position).
// torch's gather and scatter family (cpu_scatter_gather_base_kernel) raise a RuntimeError without
// the op's name; the others an IndexError naming it.
[[noreturn]] inline void throw_index_out_of_bounds(const char* op, int64_t index, int64_t dim,
                                                   int64_t size) {
  const std::string_view name(op);
  if (name == "gather" || name.rfind("scatter", 0) == 0)
    throw Error(
        fmt::format("index {} is out of bounds for dimension {} with size {}", index, dim, size));
  throw IndexError(fmt::format("{}(): index {} is out of bounds for dimension {} with size {}", op,
                               index, dim, size));
}

// A 0-dim tensor takes part in dim-wise indexing as a 1-element vector (torch's convention).
inline Tensor as_vector_if_scalar(const Tensor& t) {
  return t.dim() == 0 ? t.reshape(std::vector<int64_t>{1}) : t;
}

// A 1-D index viewed over `shape`: it varies along `dim` and repeats along every other dim.
inline Tensor index_along(const Tensor& index1d, IntArrayRef shape, int64_t dim) {
  DimVector strides(shape.size(), 0);
  strides[dim] = index1d.stride(0);
  return index1d.as_strided(shape, strides, index1d.storage_offset());
}

// ---- cat, stack --------------------------------------------------------------------------------

// torch's legacy rule: a 1-D empty tensor joins any concatenation (it is skipped).
inline bool skipped_in_cat(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

// The result of cat: its dtype (the inputs' promoted type), the wrapped dim, its shape and its
// device, those of the first input that is not skipped. When every input is skipped the result is
// an empty 1-D tensor on the first input's device (and dim is 0).
struct CatMeta {
  ScalarType dtype = ScalarType::Float32;
  int64_t dim = 0;
  DimVector shape;
  Device device;
};
inline CatMeta cat_meta(std::span<const Tensor> tensors, int64_t dim) {
  AMPJIT_CHECK(!tensors.empty(), "torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    AMPJIT_CHECK(tensors[i].dim() > 0,
                 "zero-dimensional tensor (at position {}) cannot be concatenated", i);
  }
  CatMeta m;
  m.dtype = result_type(tensors);
  const auto ref = std::find_if_not(tensors.begin(), tensors.end(), skipped_in_cat);
  if (ref == tensors.end()) {
    m.shape = DimVector{0};
    m.device = tensors[0].device();
    return m;
  }
  m.dim = wrap_dim(dim, ref->dim(), "cat");
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (skipped_in_cat(t)) continue;
    AMPJIT_CHECK(t.dim() == ref->dim(),
                 "Tensors must have same number of dimensions: got {} and {}", ref->dim(), t.dim());
    for (int64_t d = 0; d < t.dim(); ++d) {
      AMPJIT_CHECK(d == m.dim || t.size(d) == ref->size(d),
                   "Sizes of tensors must match except in dimension {}. Expected size {} but got "
                   "size {} for tensor number {} in the list.",
                   m.dim, ref->size(d), t.size(d), i);
    }
    total += t.size(m.dim);
  }
  m.shape = DimVector(ref->sizes());
  m.shape[m.dim] = total;
  m.device = ref->device();
  return m;
}
// Whether `t` has elements to write into cat's result (at its running offset along m.dim).
inline bool writes_in_cat(const Tensor& t, const CatMeta& m) {
  return !skipped_in_cat(t) && t.size(m.dim) != 0;
}

// stack's checks; returns the wrapped dim at which the inputs, each unsqueezed there, are
// concatenated.
inline int64_t stack_dim(std::span<const Tensor> tensors, int64_t dim) {
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
  return wrap_dim(dim, first.dim() + 1, "stack");
}

// ---- index_select, embedding, gather, index_copy -----------------------------------------------
// Each returns its operands as the moves take them: dim wrapped, the index in int64 and 0-dim
// tensors as 1-element vectors. The indices themselves are not yet checked against the size they
// address (index_out_of_bounds).

// index_select (and embedding through it): result = self with `index.numel()` slices along `dim`,
// of `shape`; a 0-dim self gets its own (empty) sizes back.
struct IndexSelectMeta {
  int64_t dim = 0;
  Tensor index, self;
  DimVector shape;
};
inline IndexSelectMeta index_select_meta(const Tensor& self, int64_t dim, const Tensor& index,
                                         const char* op, bool allow_int32) {
  AMPJIT_CHECK_T(IndexError, index.dim() <= 1,
                 "{}(): Index is supposed to be a vector, but got "
                 "index of size {}",
                 op, index.shape_str());
  IndexSelectMeta m;
  m.dim = wrap_dim(dim, self.dim(), op);
  m.index = as_vector_if_scalar(index_as_int64(index, op, allow_int32));
  m.self = as_vector_if_scalar(self);
  AMPJIT_CHECK_T(IndexError, self.dim() > 0 || m.index.numel() == 1,
                 "{}(): Index to scalar can have only 1 value, got {} value(s)", op,
                 m.index.numel());
  m.shape = DimVector(m.self.sizes());
  m.shape[m.dim] = m.index.numel();
  return m;
}

// embedding(weight, indices) = index_select(weight, 0, indices.flatten()) viewed as
// embedding_shape; padding_idx, scale_grad_by_freq and sparse only change the gradient.
inline void check_embedding(const Tensor& weight) {
  AMPJIT_CHECK(weight.dim() == 2, "embedding(): 'weight' must be 2-D, but got weight of size {}",
               weight.shape_str());
}
inline DimVector embedding_shape(const Tensor& weight, const Tensor& indices) {
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return shape;
}

// gather: result[i] = self[i with i[dim] := index[i]], of index's shape (as a vector here; the
// result is viewed back to index's sizes).
struct GatherMeta {
  int64_t dim = 0;
  Tensor index, self;
};
inline GatherMeta gather_meta(const Tensor& self, int64_t dim, const Tensor& index) {
  GatherMeta m;
  m.dim = wrap_dim(dim, self.dim(), "gather");
  m.self = as_vector_if_scalar(self);
  // torch's gather meta checks the index's dtype and shape only when it has elements
  if (index.numel() == 0) {
    m.index = as_vector_if_scalar(index.to(ScalarType::Int64));
    return m;
  }
  AMPJIT_CHECK(index.dtype() == ScalarType::Int64, "gather(): Expected dtype int64 for index");
  m.index = as_vector_if_scalar(index);
  AMPJIT_CHECK(m.index.dim() == m.self.dim(),
               "gather(): Index tensor must have the same number of dimensions as input tensor "
               "({} vs {})",
               index.dim(), self.dim());
  for (int64_t d = 0; d < m.self.dim(); ++d) {
    AMPJIT_CHECK(d == m.dim || m.index.size(d) <= m.self.size(d),
                 "gather(): Size does not match at dimension {} expected index {} to be smaller "
                 "than self {} apart from dimension {}",
                 d, index.shape_str(), self.shape_str(), m.dim);
  }
  return m;
}

// scatter_add: self[i with i[dim] := index[i]] += src[i] for every position i of index (so src may
// be larger than index); torch's checks, in its order and with its messages.
struct ScatterAddMeta {
  int64_t dim = 0;
  Tensor index, self, src;  // src cut to index's shape
};
inline ScatterAddMeta scatter_add_meta(const Tensor& self, int64_t dim, const Tensor& index,
                                       const Tensor& src) {
  ScatterAddMeta m;
  m.dim = wrap_dim(dim, self.dim(), "scatter_add");
  AMPJIT_CHECK(index.dtype() == ScalarType::Int64, "scatter(): Expected dtype int64 for index");
  AMPJIT_CHECK(self.dtype() == src.dtype(),
               "scatter(): Expected self.dtype to be equal to src.dtype");
  m.index = as_vector_if_scalar(index);
  m.self = as_vector_if_scalar(self);
  const Tensor s = as_vector_if_scalar(src);
  AMPJIT_CHECK(m.index.dim() == m.self.dim() && m.index.dim() == s.dim(),
               "Index tensor must have the same number of dimensions as self tensor");
  for (int64_t d = 0; d < m.self.dim(); ++d) {
    AMPJIT_CHECK((d == m.dim || m.index.size(d) <= m.self.size(d)) && m.index.size(d) <= s.size(d),
                 "Expected index {} to be smaller than self {} apart from dimension {} and to be "
                 "smaller size than src {}",
                 index.shape_str(), self.shape_str(), m.dim, src.shape_str());
  }
  m.src = s.as_strided(m.index.sizes(), s.strides(), s.storage_offset());
  return m;
}

// index_copy_: self[i with i[dim] := index[i[dim]]] = source[i] for every position i of source.
// `place` brings index and source to self's device before they are converted or read (the CUDA
// kernel's on_device, which raises the device-mismatch error for a CPU self; the identity on CPU),
// at the points where that kernel always has, so the errors keep their order.
struct IndexCopyMeta {
  int64_t dim = 0;
  Tensor index, self, source;
};
template <typename Place = std::identity>
IndexCopyMeta index_copy_meta(const Tensor& self, int64_t dim, const Tensor& index,
                              const Tensor& source, Place place = {}) {
  const char* op = "index_copy_";
  AMPJIT_CHECK_T(IndexError, index.dim() <= 1,
                 "index_copy_(): Index should have dimension 1 or 0 (got {})", index.dim());
  IndexCopyMeta m;
  m.index = as_vector_if_scalar(index_as_int64(place(index), op, false));
  AMPJIT_CHECK(self.dtype() == source.dtype(),
               "index_copy_(): self and source expected to have the same dtype, but got (self) {} "
               "and (source) {}",
               dtype_name(self.dtype()), dtype_name(source.dtype()));
  m.dim = wrap_dim(dim, self.dim(), op);
  m.self = as_vector_if_scalar(self);
  m.source = as_vector_if_scalar(place(source));
  AMPJIT_CHECK_T(IndexError, m.index.numel() == m.source.size(m.dim),
                 "index_copy_(): Number of indices ({}) should be equal to source.size(dim) ({})",
                 m.index.numel(), m.source.size(m.dim));
  bool same_slices = m.source.dim() == m.self.dim();
  for (int64_t d = 0; same_slices && d < m.self.dim(); ++d) {
    same_slices = d == m.dim || m.source.size(d) == m.self.size(d);
  }
  AMPJIT_CHECK(same_slices,
               "index_copy_(): self and source must have the same shape except in dimension {}, "
               "but got self {} and source {}",
               m.dim, self.shape_str(), source.shape_str());
  return m;
}

// ---- tril, triu --------------------------------------------------------------------------------

inline void check_triangle(const Tensor& self, bool lower) {
  AMPJIT_CHECK(self.dim() >= 2, "{}: input tensor must have at least 2 dimensions, but got {}",
               lower ? "tril" : "triu", self.shape_str());
}
// The diagonal offset k of tril (keeps j <= i + k) or triu (keeps j >= i + k) on [rows, cols]
// matrices, clamped to [-rows - 1, cols + 1]: beyond these every row is kept or zeroed.
inline int64_t clamp_diagonal(int64_t k, int64_t rows, int64_t cols) {
  return std::clamp<int64_t>(k, -rows - 1, cols + 1);
}

}  // namespace ampjit::meta
