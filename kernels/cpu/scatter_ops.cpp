// Scatters, selections by mask and by flat index (runtime/ops/indexing.def): scatter (with a
// tensor, a value, or the `add`/`multiply` reduction), scatter_reduce (sum, prod, mean, amax,
// amin, with or without self), index_reduce, index_fill, masked_select, masked_scatter, nonzero,
// take and put. Their in-place and out= forms derive from these (Note [Derived op variants]).
//
// Note [Scatter reductions]
// A scatter visits index's positions in row-major order, as torch's CPU kernels do, so repeated
// indices meet in that order (the last write wins for scatter). Reductions accumulate in the op
// math type (float32 for float16, bfloat16 and float32; float64; int64 for the integers) and round
// once into self's dtype. Without self (include_self=False) a destination that receives any value
// starts from the reduction's identity; one that receives none keeps self's value. `mean` divides
// by the number of values received (plus one with self), flooring for integer dtypes, as torch.
// Every index is checked before anything is written, so a bad index leaves no partial result.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/index_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit::cpu {
namespace {

enum class Reduce { Assign, Sum, Prod, Mean, Amax, Amin };

Reduce scatter_reduce_of(const std::string& r, const char* op) {
  if (r == "sum") return Reduce::Sum;
  if (r == "prod") return Reduce::Prod;
  if (r == "mean") return Reduce::Mean;
  if (r == "amax") return Reduce::Amax;
  if (r == "amin") return Reduce::Amin;
  throw Error(
      fmt::format("{}(): reduce argument must be either sum, prod, mean, amax or amin, "
                  "got {}",
                  op, r));
}

// The op-math type a reduction accumulates in (Note [Scatter reductions]).
ScalarType accumulate_type(ScalarType t) {
  if (t == ScalarType::Float64) return t;
  if (is_floating(t)) return ScalarType::Float32;
  return ScalarType::Int64;
}

// Every index checked first: 0 <= index < size, torch's error for the first that is not.
void check_scatter_indices(const int64_t* ip, int64_t n, int64_t dim, int64_t size,
                           const char* op) {
  int64_t bad = 0;  // a count, so that the loop vectorizes
  for (int64_t i = 0; i < n; ++i) bad += (ip[i] < 0) | (ip[i] >= size);
  if (bad == 0) [[likely]]
    return;
  for (int64_t i = 0; i < n; ++i)
    if (ip[i] < 0 || ip[i] >= size) meta::throw_index_out_of_bounds(op, ip[i], dim, size);
}

// Where a scatter along `dim` writes (Note [Scatter reductions]): position i of the contiguous
// `index` goes to the offset, in a contiguous tensor of `sizes`, of i with i[dim] replaced by
// index[i]. Positions that differ outside `dim` never meet, so the walk runs in parallel over
// the fibers along `dim` (index's positions with the same coordinates but dim's), each fiber
// in row-major order: the same writes in the same order per destination as a serial walk.
struct ScatterWalk {
  const int64_t* ip;
  int64_t outer = 1, len = 1, trail = 1;      // index's sizes before dim, at dim, after dim
  int64_t dim_stride = 1;                     // sizes' stride of dim
  std::vector<int64_t> outer_off, trail_off;  // sizes' offsets of the coordinates before and after

  ScatterWalk(IntArrayRef sizes, int64_t dim, const Tensor& idx) : ip(idx.data<int64_t>()) {
    const int64_t nd = idx.dim();
    if (nd == 0) {
      outer_off = trail_off = {0};
      return;
    }
    std::vector<int64_t> stride(static_cast<size_t>(nd), 1);
    for (int64_t d = nd - 2; d >= 0; --d) stride[d] = stride[d + 1] * sizes[d + 1];
    dim_stride = stride[dim];
    len = idx.size(dim);
    // offsets of every coordinate tuple of index's dims [b, e), row-major
    auto offsets = [&](int64_t b, int64_t e) {
      int64_t count = 1;
      for (int64_t d = b; d < e; ++d) count *= idx.size(d);
      std::vector<int64_t> out(static_cast<size_t>(count));
      std::vector<int64_t> coord(static_cast<size_t>(nd), 0);
      int64_t off = 0;
      for (int64_t k = 0; k < count; ++k) {
        out[static_cast<size_t>(k)] = off;
        for (int64_t d = e - 1; d >= b; --d) {
          off += stride[d];
          if (++coord[d] < idx.size(d)) break;
          off -= coord[d] * stride[d];
          coord[d] = 0;
        }
      }
      return out;
    };
    outer_off = offsets(0, dim);
    trail_off = offsets(dim + 1, nd);
    outer = static_cast<int64_t>(outer_off.size());
    trail = static_cast<int64_t>(trail_off.size());
  }

  // f(i, offset) for every position i; each fiber's positions in order.
  template <typename F>
  void run(F f) const {
    const int64_t units = outer * trail;  // fibers
    parallel_for(units, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(len, 1)),
                 [&](int64_t b, int64_t e) {
                   if (trail == 1) {  // dim is index's last: each fiber is a row
                     for (int64_t u = b; u < e; ++u) {
                       const int64_t base = outer_off[static_cast<size_t>(u)];
                       for (int64_t i = u * len; i < (u + 1) * len; ++i)
                         f(i, base + ip[i] * dim_stride);
                     }
                     return;
                   }
                   for (int64_t u = b; u < e;) {
                     const int64_t o = u / trail, t0 = u % trail;
                     const int64_t t1 = std::min(trail, t0 + (e - u));
                     const int64_t base = outer_off[static_cast<size_t>(o)];
                     for (int64_t j = 0; j < len; ++j) {
                       const int64_t row = (o * len + j) * trail;
                       for (int64_t t = t0; t < t1; ++t) {
                         const int64_t i = row + t;
                         f(i, base + trail_off[static_cast<size_t>(t)] + ip[i] * dim_stride);
                       }
                     }
                     u += t1 - t0;
                   }
                 });
  }
};

// The element offsets of every position of index (ScatterWalk), checked first.
std::vector<int64_t> scatter_offsets(IntArrayRef sizes, int64_t dim, const Tensor& idx,
                                     const char* op) {
  check_scatter_indices(idx.data<int64_t>(), idx.numel(), dim, sizes.empty() ? 1 : sizes[dim], op);
  std::vector<int64_t> out(static_cast<size_t>(idx.numel()));
  ScatterWalk(sizes, dim, idx).run([&](int64_t i, int64_t off) {
    out[static_cast<size_t>(i)] = off;
  });
  return out;
}

// torch's scatter checks (aten/src/ATen/native/ScatterGatherChecks.h), with `src` optional.
int64_t check_scatter(const char* op, const Tensor& self, int64_t dim, const Tensor& index,
                      const Tensor* src) {
  const int64_t d = wrap_dim(dim, self.dim(), op);
  AMPJIT_CHECK(index.dtype() == ScalarType::Int64, "{}(): Expected dtype int64 for index", op);
  if (src)
    AMPJIT_CHECK(self.dtype() == src->dtype(), "{}(): Expected self.dtype to be equal to src.dtype",
                 op);
  const int64_t sd = std::max<int64_t>(self.dim(), 1), id = std::max<int64_t>(index.dim(), 1);
  if (index.numel() == 0) return d;
  AMPJIT_CHECK(sd == id, "Index tensor must have the same number of dimensions as self tensor");
  if (src)
    AMPJIT_CHECK(std::max<int64_t>(src->dim(), 1) == id,
                 "Index tensor must have the same number of dimensions as src tensor");
  for (int64_t k = 0; k < index.dim(); ++k) {
    const bool ok =
        (k == d || index.size(k) <= self.size(k)) && (!src || index.size(k) <= src->size(k));
    AMPJIT_CHECK(ok, "Expected index {} to be smaller than self {} apart from dimension {}{}",
                 index.shape_str(), self.shape_str(), d,
                 src ? " and to be smaller size than src " + src->shape_str() : std::string());
  }
  return d;
}

// src cut to index's shape, contiguous.
Tensor cut_to(const Tensor& src, const Tensor& index) {
  if (src.dim() == 0)
    return src.reshape(std::vector<int64_t>(index.dim(), 1)).expand(index.sizes());
  return src.as_strided(index.sizes(), src.strides(), src.storage_offset()).contiguous();
}

// The scatter engine: `out` (contiguous, accumulate or self dtype) receives src (or `value`) at
// the offsets, reduced by `r`.
template <typename M>
void scatter_into(M* out, const std::vector<int64_t>& offsets, const M* src, M value, Reduce r,
                  bool include_self, int64_t out_numel) {
  const size_t n = offsets.size();
  auto v = [&](size_t i) { return src ? src[i] : value; };
  std::vector<int64_t> count;
  if (r == Reduce::Mean) count.assign(static_cast<size_t>(out_numel), include_self ? 1 : 0);
  if (!include_self) {
    M id{};
    if (r == Reduce::Prod) id = M(1);
    if (r == Reduce::Amax) {
      id = std::numeric_limits<M>::has_infinity ? -std::numeric_limits<M>::infinity()
                                                : std::numeric_limits<M>::lowest();
    }
    if (r == Reduce::Amin) {
      id = std::numeric_limits<M>::has_infinity ? std::numeric_limits<M>::infinity()
                                                : std::numeric_limits<M>::max();
    }
    for (size_t i = 0; i < n; ++i) out[offsets[i]] = id;
  }
  for (size_t i = 0; i < n; ++i) {
    M& o = out[offsets[i]];
    const M x = v(i);
    switch (r) {
      case Reduce::Sum:
      case Reduce::Mean:
        o += x;
        break;
      case Reduce::Prod:
        o *= x;
        break;
      case Reduce::Amax:
        if constexpr (std::is_floating_point_v<M>) {
          o = (std::isnan(x) || x > o) ? x : o;
        } else {
          o = std::max(o, x);
        }
        break;
      case Reduce::Amin:
        if constexpr (std::is_floating_point_v<M>) {
          o = (std::isnan(x) || x < o) ? x : o;
        } else {
          o = std::min(o, x);
        }
        break;
      case Reduce::Assign:
        break;
    }
    if (r == Reduce::Mean) ++count[static_cast<size_t>(offsets[i])];
  }
  if (r == Reduce::Mean) {
    for (int64_t k = 0; k < out_numel; ++k) {
      const int64_t c = count[static_cast<size_t>(k)];
      if (c == 0) continue;
      if constexpr (std::is_floating_point_v<M>)
        out[k] /= static_cast<M>(c);
      else
        out[k] = static_cast<M>(std::floor(static_cast<double>(out[k]) / static_cast<double>(c)));
    }
  }
}

// scatter with a tensor or a value, plain or reduced.
Tensor scatter_impl(const char* op, const Tensor& self, int64_t dim, const Tensor& index,
                    const Tensor* src, const Scalar* value, Reduce r, bool include_self = true) {
  const int64_t d = check_scatter(op, self, dim, index, src);
  if (index.numel() == 0) return self.clone();
  const Tensor idx = index.contiguous();
  if (r == Reduce::Assign) {  // a move: in self's own dtype, the offsets computed as it goes
    check_scatter_indices(idx.data<int64_t>(), idx.numel(), d, self.dim() ? self.size(d) : 1, op);
    Tensor out = self.contiguous().clone();
    const Tensor s = src ? cut_to(*src, index) : Tensor();
    const ScatterWalk walk(self.sizes(), d, idx);
    dispatch_all(self.dtype(), op, [&]<typename T>() {
      T* o = out.data<T>();
      if (src) {
        const T* sp = s.data<T>();
        walk.run([o, sp](int64_t i, int64_t off) { o[off] = sp[i]; });
      } else {
        const T v = value->to<T>();
        walk.run([o, v](int64_t, int64_t off) { o[off] = v; });
      }
    });
    return out;
  }
  const std::vector<int64_t> offsets = scatter_offsets(self.sizes(), d, idx, op);
  // bool reduces as integers: sum and amax are "or", prod and amin "and", once cast back
  const ScalarType ct = accumulate_type(self.dtype());
  Tensor out = self.to(ct, /*copy=*/true).contiguous();
  const Tensor s = src ? cut_to(*src, index).to(ct).contiguous() : Tensor();
  dispatch_numeric(ct, op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int64_t>) {
      scatter_into<T>(out.data<T>(), offsets, src ? s.data<T>() : nullptr,
                      value ? value->to<T>() : T{}, r, include_self, out.numel());
    }
  });
  return out.to(self.dtype()).view(self.sizes());
}

Reduce scatter_mode_of(const std::string& r) {
  if (r == "add") return Reduce::Sum;
  if (r == "multiply") return Reduce::Prod;
  throw Error(fmt::format("reduce argument must be either add or multiply, got {}", r));
}

Tensor scatter_src_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  return scatter_impl("scatter", self, dim, index, &src, nullptr, Reduce::Assign);
}
Tensor scatter_value_k(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return scatter_impl("scatter", self, dim, index, nullptr, &value, Reduce::Assign);
}
Tensor scatter_reduce_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        std::string reduce) {
  return scatter_impl("scatter", self, dim, index, &src, nullptr, scatter_mode_of(reduce));
}
Tensor scatter_value_reduce_k(const Tensor& self, int64_t dim, const Tensor& index,
                              const Scalar& value, std::string reduce) {
  return scatter_impl("scatter", self, dim, index, nullptr, &value, scatter_mode_of(reduce));
}
Tensor scatter_reduce_two_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                            std::string reduce, bool include_self) {
  return scatter_impl("scatter_reduce", self, dim, index, &src, nullptr,
                      scatter_reduce_of(reduce, "scatter_reduce"), include_self);
}

// ---- index_reduce, index_fill
// --------------------------------------------------------------------

Tensor index_reduce_k(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                      std::string reduce, bool include_self) {
  const char* op = "index_reduce";
  const int64_t d = wrap_dim(dim, self.dim(), op);
  AMPJIT_CHECK(reduce == "prod" || reduce == "mean" || reduce == "amax" || reduce == "amin",
               "index_reduce(): Expected reduce to be one of prod, mean, amax or amin but got {}.",
               reduce);
  AMPJIT_CHECK(index.dim() <= 1, "index_reduce_(): Index is supposed to be a vector");
  AMPJIT_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32,
               "index_reduce_(): Expected dtype int32/int64 for index but got: {}",
               dtype_name(index.dtype()));
  AMPJIT_CHECK(self.dtype() == source.dtype(),
               "index_reduce_(): self ({}) and source ({}) must have the same scalar type",
               dtype_name(self.dtype()), dtype_name(source.dtype()));
  const Tensor idx = index.to(ScalarType::Int64).reshape(std::vector<int64_t>{-1});
  const int64_t n = idx.numel();
  const int64_t size = self.dim() ? self.size(d) : 1;
  AMPJIT_CHECK((source.dim() ? source.size(d) : 1) == n,
               "index_reduce_(): Number of indices ({}) should be equal to source.size(dim) ({})",
               n, source.dim() ? source.size(d) : 1);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t k = idx.data<int64_t>()[i];
    if (k < -size || k >= size) [[unlikely]]
      throw IndexError(fmt::format("index out of range in self"));
  }
  // As a scatter along dim: index broadcast over source's shape.
  std::vector<int64_t> view(static_cast<size_t>(std::max<int64_t>(source.dim(), 1)), 1);
  if (source.dim()) view[static_cast<size_t>(d)] = n;
  Tensor wrapped = ops::remainder_Scalar(idx, Scalar(size)).tensor();
  Tensor full = source.dim() ? wrapped.reshape(view).expand(source.sizes()).contiguous() : wrapped;
  const Tensor s = source.dim() ? source : source.reshape(std::vector<int64_t>{1});
  const Tensor t = self.dim() ? self : self.reshape(std::vector<int64_t>{1});
  Tensor out =
      scatter_impl(op, t, d, full, &s, nullptr, scatter_reduce_of(reduce, op), include_self);
  return out.view(self.sizes());
}

Tensor index_fill_impl(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  const char* op = "index_fill_";
  const int64_t d = wrap_dim(dim, self.dim(), op);
  AMPJIT_CHECK(index.dtype() == ScalarType::Int64,
               "index_fill_(): Expected dtype int64 for index.");
  AMPJIT_CHECK(index.dim() <= 1, "Index has to be a vector/scalar");
  Tensor out = self.clone();
  const Tensor idx = index.contiguous();
  const int64_t size = self.dim() ? self.size(d) : 1;
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t k = idx.data<int64_t>()[i];
    AMPJIT_CHECK_T(IndexError, k >= -size && k < size,
                   "index {} is out of bounds for dimension {} with size {}", k, d, size);
    if (k < 0) k += size;
    if (self.dim() == 0)
      out.fill_(value);
    else
      out.select(d, k).fill_(value);
  }
  return out;
}
Tensor index_fill_scalar_k(const Tensor& self, int64_t dim, const Tensor& index,
                           const Scalar& value) {
  return index_fill_impl(self, dim, index, value);
}
Tensor index_fill_tensor_k(const Tensor& self, int64_t dim, const Tensor& index,
                           const Tensor& value) {
  AMPJIT_CHECK(value.dim() == 0,
               "index_fill_ only supports a 0-dimensional value tensor, but got tensor with {} "
               "dimension(s).",
               value.dim());
  return index_fill_impl(self, dim, index, value.item());
}

// ---- masked_select, masked_scatter, nonzero
// ------------------------------------------------------

void check_mask(const Tensor& mask, const char* op) {
  AMPJIT_CHECK(mask.dtype() == ScalarType::Bool || mask.dtype() == ScalarType::UInt8,
               "{}: expected BoolTensor or ByteTensor for mask", op);
}

// The positions (flat, row-major over `shape`) where mask (broadcast to shape) is set.
std::vector<int64_t> mask_positions(const Tensor& mask, IntArrayRef shape) {
  const Tensor m = mask.expand(shape).contiguous().to(ScalarType::Bool);
  const bool* p = m.data<bool>();
  std::vector<int64_t> out;
  for (int64_t i = 0; i < m.numel(); ++i)
    if (p[i]) out.push_back(i);
  return out;
}

// Note [Selections in parallel]
// masked_select and nonzero write the set positions of a mask in order. They count the positions
// per chunk (a loop that vectorizes), take a prefix sum for each chunk's first rank, and fill the
// chunks in parallel, each writing only its own ranks: the result is the serial one. The fill is
// branch-free (write, then advance by the mask bit) until the chunk's last rank is written.
struct SetChunks {
  std::vector<int64_t> begin;  // chunk c covers positions [begin[c], begin[c + 1])
  std::vector<int64_t> first;  // and ranks [first[c], first[c + 1])
  int64_t count() const { return static_cast<int64_t>(begin.size()) - 1; }
};

// is_set(b, e) -> how many positions of [b, e) are set.
template <typename CountFn>
SetChunks count_set(int64_t n, CountFn count_range) {
  const int64_t chunks = std::clamp<int64_t>(n / kParallelGrain, 1, max_threads());
  SetChunks c;
  c.begin.resize(static_cast<size_t>(chunks) + 1);
  c.first.assign(static_cast<size_t>(chunks) + 1, 0);
  for (int64_t k = 0; k <= chunks; ++k) c.begin[k] = n * k / chunks;
  parallel_for(chunks, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) c.first[k + 1] = count_range(c.begin[k], c.begin[k + 1]);
  });
  for (int64_t k = 0; k < chunks; ++k) c.first[k + 1] += c.first[k];
  return c;
}

int64_t count_true(const bool* m, int64_t b, int64_t e) {
  int64_t n = 0;
  for (int64_t i = b; i < e; ++i) n += m[i];
  return n;
}

Tensor masked_select_k(const Tensor& self, const Tensor& mask) {
  check_mask(mask, "masked_select");
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_select");
  const Tensor m = mask.expand(shape).contiguous().to(ScalarType::Bool);
  const bool* mp = m.data<bool>();
  const SetChunks c =
      count_set(m.numel(), [mp](int64_t b, int64_t e) { return count_true(mp, b, e); });
  const Tensor src = self.expand(shape).contiguous();
  Tensor out = Tensor::empty(std::vector<int64_t>{c.first.back()}, self.dtype(), self.device());
  meta::dispatch_itemsize(self.itemsize(), [&]<typename U>() {
    const U* s = static_cast<const U*>(src.raw_data());
    U* o = static_cast<U*>(out.raw_data());
    parallel_for(c.count(), 1, [&](int64_t cb, int64_t ce) {
      for (int64_t k = cb; k < ce; ++k) {
        int64_t r = c.first[k];
        const int64_t end = c.first[k + 1];
        for (int64_t i = c.begin[k]; i < c.begin[k + 1] && r < end; ++i) {
          o[r] = s[i];
          r += mp[i];
        }
      }
    });
  });
  return out;
}

Tensor masked_scatter_k(const Tensor& self, const Tensor& mask, const Tensor& source) {
  check_mask(mask, "masked_scatter_");
  AMPJIT_CHECK(self.dtype() == source.dtype(),
               "masked_scatter: expected self and source to have same dtypes but got{} and {}",
               dtype_name(self.dtype()), dtype_name(source.dtype()));
  const DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter");
  const std::vector<int64_t> pos = mask_positions(mask, shape);
  const Tensor src = source.contiguous();
  AMPJIT_CHECK(static_cast<int64_t>(pos.size()) <= src.numel(),
               "masked_scatter: expected source to have at least {} elements, got {}", pos.size(),
               src.numel());
  Tensor out = self.expand(shape).contiguous().clone();
  meta::dispatch_itemsize(self.itemsize(), [&]<typename U>() {
    const U* s = static_cast<const U*>(src.raw_data());
    U* o = static_cast<U*>(out.raw_data());
    for (size_t i = 0; i < pos.size(); ++i) o[pos[i]] = s[i];
  });
  return out;
}

// (Note [Selections in parallel]) Each chunk steps its coordinates from its first position.
Tensor nonzero_k(const Tensor& self) {
  const Tensor c = self.contiguous();
  const int64_t nd = self.dim(), n = c.numel();
  Tensor out;
  dispatch_all(self.dtype(), "nonzero", [&]<typename T>() {
    const T* p = c.data<T>();
    auto set = [](T x) -> bool {
      if constexpr (std::is_arithmetic_v<T>)
        return x != T(0);
      else
        return static_cast<double>(x) != 0.0;
    };
    const SetChunks chunks = count_set(n, [p, set](int64_t b, int64_t e) {
      int64_t k = 0;
      for (int64_t i = b; i < e; ++i) k += set(p[i]);
      return k;
    });
    out = Tensor::empty(std::vector<int64_t>{chunks.first.back(), nd}, ScalarType::Int64,
                        self.device());
    if (nd == 0 || n == 0) return;
    int64_t* o = out.data<int64_t>();
    const IntArrayRef sizes = self.sizes();
    parallel_for(chunks.count(), 1, [&](int64_t cb, int64_t ce) {
      DimVector coord(static_cast<size_t>(nd), 0);
      for (int64_t k = cb; k < ce; ++k) {
        int64_t rest = chunks.begin[k];
        for (int64_t d = nd - 1; d >= 0; --d) {
          coord[d] = rest % sizes[d];
          rest /= sizes[d];
        }
        int64_t r = chunks.first[k];
        const int64_t end = chunks.first[k + 1], last = nd - 1, inner = sizes[last];
        for (int64_t i = chunks.begin[k]; i < chunks.begin[k + 1] && r < end; ++i) {
          int64_t* row = o + r * nd;
          for (int64_t d = 0; d < nd; ++d) row[d] = coord[d];
          r += set(p[i]);
          if (++coord[last] < inner) continue;
          for (int64_t d = last; d > 0 && coord[d] == sizes[d]; --d) {
            coord[d] = 0;
            ++coord[d - 1];
          }
        }
      }
    });
  });
  return out;
}

// ---- take, put
// -----------------------------------------------------------------------------------

// Flat positions of `index` into a tensor of n elements, negative ones counted from the end.
std::vector<int64_t> flat_positions(const Tensor& index, int64_t n, const char* op) {
  AMPJIT_CHECK(index.dtype() == ScalarType::Int64,
               "{}(): Expected a long tensor for index, but "
               "got {}",
               op, dtype_name(index.dtype()));
  const Tensor idx = index.contiguous();
  std::vector<int64_t> out(static_cast<size_t>(idx.numel()));
  for (int64_t i = 0; i < idx.numel(); ++i) {
    const int64_t k = idx.data<int64_t>()[i];
    AMPJIT_CHECK_T(IndexError, k >= -n && k < n,
                   "out of range: tried to access index {} on a tensor of {} elements.", k, n);
    out[static_cast<size_t>(i)] = k < 0 ? k + n : k;
  }
  return out;
}

Tensor take_k(const Tensor& self, const Tensor& index) {
  AMPJIT_CHECK_T(IndexError, self.numel() > 0 || index.numel() == 0,
                 "take(): tried to take from an empty tensor");
  const std::vector<int64_t> pos = flat_positions(index, self.numel(), "take");
  const Tensor src = self.contiguous();
  Tensor out = Tensor::empty(index.sizes(), self.dtype(), self.device());
  meta::dispatch_itemsize(self.itemsize(), [&]<typename U>() {
    const U* s = static_cast<const U*>(src.raw_data());
    U* o = static_cast<U*>(out.raw_data());
    for (size_t i = 0; i < pos.size(); ++i) o[i] = s[pos[i]];
  });
  return out;
}

Tensor put_k(const Tensor& self, const Tensor& index, const Tensor& source, bool accumulate) {
  AMPJIT_CHECK(source.numel() == index.numel(),
               "put_(): Expected source and index to have the same number of elements, but got "
               "source.numel() = {}, index.numel() = {}",
               source.numel(), index.numel());
  AMPJIT_CHECK(self.dtype() == source.dtype(),
               "put_(): self and source expected to have the same dtype, but got self.dtype = {} "
               "and source.dtype = {}",
               dtype_name(self.dtype()), dtype_name(source.dtype()));
  AMPJIT_CHECK_T(IndexError, self.numel() > 0 || index.numel() == 0,
                 "put_(): Tried to put elements into an empty tensor");
  const std::vector<int64_t> pos = flat_positions(index, self.numel(), "put_");
  if (!accumulate) {
    Tensor out = self.contiguous().clone();
    const Tensor src = source.contiguous();
    meta::dispatch_itemsize(self.itemsize(), [&]<typename U>() {
      const U* s = static_cast<const U*>(src.raw_data());
      U* o = static_cast<U*>(out.raw_data());
      for (size_t i = 0; i < pos.size(); ++i) o[pos[i]] = s[i];
    });
    return out.view(self.sizes());
  }
  const ScalarType ct = accumulate_type(self.dtype());
  Tensor out = self.to(ct, /*copy=*/true).contiguous();
  const Tensor src = source.to(ct).contiguous();
  dispatch_numeric(ct, "put_", [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double> ||
                  std::is_same_v<T, int64_t>) {
      const T* s = src.data<T>();
      T* o = out.data<T>();
      for (size_t i = 0; i < pos.size(); ++i) o[pos[i]] += s[i];
    }
  });
  return out.to(self.dtype()).view(self.sizes());
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(scatter_src, cpu::scatter_src_k)
AMPJIT_KERNEL(scatter_value, cpu::scatter_value_k)
AMPJIT_KERNEL(scatter_reduce, cpu::scatter_reduce_k)
AMPJIT_KERNEL(scatter_value_reduce, cpu::scatter_value_reduce_k)
AMPJIT_KERNEL(scatter_reduce_two, cpu::scatter_reduce_two_k)
AMPJIT_KERNEL(index_reduce, cpu::index_reduce_k)
AMPJIT_KERNEL(index_fill_int_Scalar, cpu::index_fill_scalar_k)
AMPJIT_KERNEL(index_fill_int_Tensor, cpu::index_fill_tensor_k)
AMPJIT_KERNEL(masked_select, cpu::masked_select_k)
AMPJIT_KERNEL(masked_scatter, cpu::masked_scatter_k)
AMPJIT_KERNEL(nonzero, cpu::nonzero_k)
AMPJIT_KERNEL(take, cpu::take_k)
AMPJIT_KERNEL(put, cpu::put_k)
