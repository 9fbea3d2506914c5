// Indexing and joining kernels (runtime/ops/indexing.def): cat, stack, index_select, index_copy,
// gather, tril/triu and embedding. Their argument checks, messages, shapes and dtypes are shared
// with the CUDA kernels (kernels/index_meta.h); this file holds the moves.
//
// Note [Index ops move bytes]
// None of these ops computes on values, so none dispatches on the dtype. Gathers and scatters
// dispatch once on the element size (1, 2, 4 or 8 bytes: four instantiations serve all ten
// dtypes); cat and stack write each input into a slice of the result with Tensor::copy_, which
// also converts to the promoted dtype; tril and triu clone and then memset the other triangle
// (all-zero bytes are 0, +0.0 and false in every dtype).
#include <algorithm>
#include <cstring>

#include "kernels/index_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"
#include "runtime/strided_loop.h"

namespace ampjit::cpu {
namespace {

DimVector byte_strides(const Tensor& t) {
  DimVector s(t.strides());
  for (auto& x : s) x *= static_cast<int64_t>(t.itemsize());
  return s;
}

// Checks every index against the size of the dimension it addresses. Runs before any write, on
// one thread, so the copy loops never throw.
void check_bounds(const Tensor& index, int64_t size, int64_t dim, const char* op) {
  const Tensor c = index.contiguous();
  const int64_t* p = c.data<int64_t>();
  for (int64_t i = 0; i < c.numel(); ++i) {
    if (p[i] < 0 || p[i] >= size) [[unlikely]]
      meta::throw_index_out_of_bounds(op, p[i], dim, size);
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
  meta::dispatch_itemsize(indexed.itemsize(), [&]<typename U>() {
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

// --- cat, stack ------------------------------------------------------------------------------

Tensor cat_k(std::vector<Tensor> tensors, int64_t dim) {
  const meta::CatMeta m = meta::cat_meta(tensors, dim);
  Tensor out = Tensor::empty(m.shape, m.dtype, m.device);
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    if (!meta::writes_in_cat(t, m)) continue;
    out.narrow(m.dim, offset, t.size(m.dim)).copy_(t);
    offset += t.size(m.dim);
  }
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
  const meta::IndexSelectMeta m = meta::index_select_meta(self, dim, index, op, allow_int32);
  check_bounds(m.index, m.self.size(m.dim), m.dim, op);
  Tensor out = Tensor::empty(m.shape, self.dtype(), self.device());
  move_along_dim(m.shape, out, m.self, m.dim, meta::index_along(m.index, m.shape, m.dim),
                 /*scatter=*/false);
  return self.dim() == 0 ? out.view(self.sizes()) : out;
}

// torch.index_add: self with alpha * source's slices added at `index` along dim; repeated indices
// accumulate. The embedding and index_select derivatives are made of it. Computed in float64 for
// float64 and integer tensors, float32 otherwise, and rounded once to self's dtype.
Tensor index_add_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha) {
  const meta::IndexSelectMeta m = meta::index_select_meta(self, dim, index, "index_add", true);
  check_bounds(m.index, m.self.size(m.dim), m.dim, "index_add");
  const Tensor src0 = source.dim() == 0 ? source.reshape(std::vector<int64_t>{1}) : source;
  AMPJIT_CHECK_T(IndexError, src0.dim() == m.self.dim(),
                 "index_add_(): Source/destination tensor must have same slice shapes. Destination "
                 "slice shape: {} and source slice shape: {}",
                 m.self.shape_str(), src0.shape_str());
  AMPJIT_CHECK_T(IndexError, src0.size(m.dim) == m.index.numel(),
                 "index_add_(): Number of indices ({}) should be equal to source.size(dim) ({})",
                 m.index.numel(), src0.size(m.dim));
  for (int64_t d = 0; d < m.self.dim(); ++d)
    AMPJIT_CHECK_T(IndexError, d == m.dim || src0.size(d) == m.self.size(d),
                   "index_add_(): Source/destination tensor must have same slice shapes. "
                   "Destination slice shape: {} and source slice shape: {}",
                   m.self.shape_str(), src0.shape_str());
  const ScalarType ct = self.dtype() == ScalarType::Float32 ||
                                self.dtype() == ScalarType::Float16 ||
                                self.dtype() == ScalarType::BFloat16
                            ? ScalarType::Float32
                            : ScalarType::Float64;
  Tensor out = m.self.to(ct, /*copy=*/true).transpose(0, m.dim).contiguous();
  const Tensor src = src0.to(ct).transpose(0, m.dim).contiguous();
  const Tensor idx = m.index.contiguous();
  const int64_t* ix = idx.data<int64_t>();
  const int64_t n = idx.numel();
  const int64_t row = out.size(0) == 0 ? 0 : out.numel() / out.size(0);
  const double a = alpha.to_double();
  auto run = [&](auto* o, const auto* x) {
    using T = std::remove_pointer_t<decltype(o)>;
    for (int64_t i = 0; i < n; ++i) {
      T* dst = o + ix[i] * row;
      const T* s = x + i * row;
      for (int64_t j = 0; j < row; ++j) dst[j] += static_cast<T>(a) * s[j];
    }
  };
  if (ct == ScalarType::Float32)
    run(out.data<float>(), src.data<float>());
  else
    run(out.data<double>(), src.data<double>());
  Tensor r = out.transpose(0, m.dim).to(self.dtype(), /*copy=*/true).contiguous();
  return r.view(self.sizes());
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

// torch.embedding_renorm_ (F.embedding's max_norm): each row `indices` names, once, is scaled in
// place to max_norm when its norm_type-norm exceeds it (by max_norm / (norm + 1e-7) in self's
// dtype, as torch).
// A composite over ops, so it serves every device.
Tensor embedding_renorm_k(Tensor self, const Tensor& indices, double max_norm, double norm_type) {
  AMPJIT_CHECK(self.dim() == 2,
               "Expected 2-dimensional tensor, but got {}-dimensional tensor for argument #1 "
               "'self' (while checking arguments for embedding_renorm_)",
               self.dim());
  AMPJIT_CHECK(indices.dtype() == ScalarType::Int64 || indices.dtype() == ScalarType::Int32,
               "Expected tensor for argument #2 'indices' to have one of the following scalar "
               "types: Long, Int; but got torch.{}Tensor instead (while checking arguments for "
               "embedding_renorm_)",
               torch_type_name(indices.dtype()));
  const Tensor idx =
      ops::to_device(indices, Device(), ScalarType::Int64, false, true).tensor().contiguous();
  const auto* p = static_cast<const int64_t*>(idx.raw_data());
  std::vector<int64_t> rows(p, p + idx.numel());
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  for (int64_t r : rows) {
    Tensor row = ops::select(self, int64_t{0}, r);
    const double norm = ops::norm_Scalar(row, norm_type).tensor().item().to_double();
    if (norm > max_norm) {
      // the factor in self's dtype, as torch's `row *= scale` converts its scalar operand
      Tensor scale = Tensor::empty(std::vector<int64_t>{}, self.dtype(), self.device());
      scale.fill_(Scalar(max_norm / (norm + 1e-7)));
      ops::mul_(row, scale);
    }
  }
  return self;
}

Tensor gather_k(const Tensor& self, int64_t dim, const Tensor& index, bool /*sparse_grad*/) {
  const meta::GatherMeta m = meta::gather_meta(self, dim, index);
  check_bounds(m.index, m.self.size(m.dim), m.dim, "gather");
  Tensor out = Tensor::empty(m.index.sizes(), self.dtype(), self.device());
  move_along_dim(m.index.sizes(), out, m.self, m.dim, m.index, /*scatter=*/false);
  return out.view(index.sizes());
}

// torch.scatter_add. Positions that differ outside `dim` never meet, so the loop runs in parallel
// over them, each adding its line along `dim` in order (repeated indices accumulate as in torch's
// sequential loop). Computed in float32 for float32 and reduced precision, in float64 for float64,
// exactly for integers, and rounded once to self's dtype.
Tensor scatter_add_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  const meta::ScatterAddMeta m = meta::scatter_add_meta(self, dim, index, src);
  check_bounds(m.index, m.self.size(m.dim), m.dim, "scatter_add");
  const ScalarType dt = self.dtype();
  // bool adds as an integer and reads back as whether it is nonzero ("or"), as torch's
  const ScalarType ct = dt == ScalarType::Float64 ? dt
                        : is_floating(dt)         ? ScalarType::Float32
                                                  : ScalarType::Int64;
  Tensor out = m.self.to(ct, /*copy=*/true);
  const Tensor s = m.src.to(ct);
  const int64_t line = m.index.size(m.dim);
  if (m.index.numel() == 0) return out.to(dt).view(self.sizes());
  const int64_t isz = static_cast<int64_t>(out.itemsize());
  const int64_t out_step = out.stride(m.dim) * isz, src_step = s.stride(m.dim) * isz,
                idx_step = m.index.stride(m.dim) * 8;
  DimVector outer(m.index.sizes());
  outer[m.dim] = 1;  // one position per line along dim
  const DimVector out_bs = byte_strides(out), src_bs = byte_strides(s),
                  index_bs = byte_strides(m.index);
  StridedLoop<3> loop(outer,
                      {static_cast<char*>(s.raw_data()), static_cast<char*>(out.raw_data()),
                       static_cast<char*>(m.index.raw_data())},
                      {std::span<const int64_t>(src_bs), std::span<const int64_t>(out_bs),
                       std::span<const int64_t>(index_bs)});
  auto add = [&]<typename U>() {
    loop.run(
        [=](char* const* p, const int64_t* st, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const char* d = p[0] + i * st[0];
            char* x = p[1] + i * st[1];
            const char* ix = p[2] + i * st[2];
            for (int64_t k = 0; k < line; ++k)
              *reinterpret_cast<U*>(x + *reinterpret_cast<const int64_t*>(ix + k * idx_step) *
                                            out_step) +=
                  *reinterpret_cast<const U*>(d + k * src_step);
          }
        },
        std::max<int64_t>(1, kParallelGrain / line));
  };
  if (ct == ScalarType::Float32)
    add.template operator()<float>();
  else if (ct == ScalarType::Float64)
    add.template operator()<double>();
  else
    add.template operator()<int64_t>();
  return out.to(dt).view(self.sizes());
}

Tensor index_copy_inplace_k(Tensor self, int64_t dim, const Tensor& index, const Tensor& source) {
  const meta::IndexCopyMeta m = meta::index_copy_meta(self, dim, index, source);
  check_bounds(m.index, m.self.size(m.dim), m.dim, "index_copy_");
  move_along_dim(m.source.sizes(), m.source, m.self, m.dim,
                 meta::index_along(m.index, m.source.sizes(), m.dim), /*scatter=*/true);
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
  k = meta::clamp_diagonal(k, rows, cols);
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
  meta::check_triangle(self, lower);
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
AMPJIT_KERNEL(index_add, cpu::index_add_k)
AMPJIT_KERNEL(index_select, cpu::index_select_k)
AMPJIT_KERNEL(index_copy, cpu::index_copy_k)
AMPJIT_KERNEL(index_copy_, cpu::index_copy_inplace_k)
AMPJIT_KERNEL(gather, cpu::gather_k)
AMPJIT_KERNEL(scatter_add, cpu::scatter_add_k)
AMPJIT_KERNEL(tril, cpu::tril_k)
AMPJIT_KERNEL(tril_, cpu::tril_inplace_k)
AMPJIT_KERNEL(triu, cpu::triu_k)
AMPJIT_KERNEL(triu_, cpu::triu_inplace_k)
AMPJIT_KERNEL(embedding, cpu::embedding_k)
AMPJIT_KERNEL(embedding_renorm_, cpu::embedding_renorm_k)
