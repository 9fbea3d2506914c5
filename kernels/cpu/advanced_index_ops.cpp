// Advanced indexing (runtime/ops/indexing.def): aten::index and aten::index_put(_), what
// `x[idx]` and `x[idx] = v` do with tensor indices.
//
// Note [Advanced indexing]
// `indices` holds one entry per leading dim of self: a tensor, or None for a dim taken whole. Bool
// and uint8 masks stand for the long indices of their nonzero elements, one per dim they cover.
// The index tensors broadcast to one shape B; the result has B in place of the indexed dims when
// those are adjacent, else B first, then the other dims in order (NumPy's rule, torch's). Both ops
// reduce to element offsets: an indexed element's offset in self's storage is the sum of its
// index times the dim's stride over the indexed dims (the "advanced" part, one per position of B)
// plus the offset of its place in the other dims (the "rest" part), so one loop over (B, rest)
// gathers for index and scatters for index_put, for any strides. Every index is checked before
// anything is read or written. With accumulate=True, repeated positions add up (in the op-math
// type, rounded once); without, the last write wins, as in torch's sequential CPU loop.
// On devices other than the CPU the op is composed of index_select (integer indices only).
#include <algorithm>
#include <numeric>
#include <optional>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "kernels/index_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit::cpu {
namespace {

using Indices = std::vector<std::optional<Tensor>>;

struct IndexPlan {
  DimVector broadcast;                // B
  std::vector<int64_t> adv_dims;      // the indexed dims of self, in order
  std::vector<int64_t> rest_dims;     // the others, in order
  bool adjacent = true;               // the indexed dims are consecutive
  std::vector<int64_t> adv_offsets;   // per position of B, in elements of self's storage
  std::vector<int64_t> rest_offsets;  // per position of the rest, row-major
  DimVector rest_sizes;
  // The result's shape in the order the loops write it: B, then the rest.
  DimVector loop_shape() const {
    DimVector s = broadcast;
    for (int64_t r : rest_sizes) s.push_back(r);
    return s;
  }
  // The permutation from the loop order to torch's result order (adjacent: B in place).
  std::vector<int64_t> to_result_order() const {
    const int64_t nb = static_cast<int64_t>(broadcast.size());
    std::vector<int64_t> p;
    if (!adjacent || adv_dims.empty()) {
      for (int64_t i = 0; i < nb + static_cast<int64_t>(rest_dims.size()); ++i) p.push_back(i);
      return p;
    }
    const int64_t first = adv_dims.front();
    int64_t r = 0;  // rest dims before the indexed block
    while (r < static_cast<int64_t>(rest_dims.size()) && rest_dims[r] < first)
      p.push_back(nb + r++);
    for (int64_t i = 0; i < nb; ++i) p.push_back(i);
    for (; r < static_cast<int64_t>(rest_dims.size()); ++r) p.push_back(nb + r);
    return p;
  }
};

// Masks become their nonzero positions, one long tensor per dim they cover.
Indices expand_masks(const Tensor& self, const Indices& indices) {
  Indices out;
  for (const auto& idx : indices) {
    if (!idx || (idx->dtype() != ScalarType::Bool && idx->dtype() != ScalarType::UInt8)) {
      out.push_back(idx);
      continue;
    }
    const int64_t at = static_cast<int64_t>(out.size());
    for (int64_t j = 0; j < idx->dim(); ++j) {
      const int64_t d = at + j;
      if (d >= self.dim() || idx->size(j) != self.size(d))
        throw IndexError(
            fmt::format("The shape of the mask {} at index {} does not match the shape of the "
                        "indexed tensor {} "
                        "at index {}",
                        idx->shape_str(), j, self.shape_str(), d));
    }
    const Tensor nz = ops::nonzero(*idx);
    for (int64_t j = 0; j < idx->dim(); ++j) out.push_back(ops::select(nz, 1, j).tensor());
  }
  return out;
}

IndexPlan plan(const Tensor& self, const Indices& given, const char* op) {
  const Indices indices = expand_masks(self, given);
  AMPJIT_CHECK_T(IndexError, static_cast<int64_t>(indices.size()) <= self.dim(),
                 "too many indices for tensor of dimension {} (got {})", self.dim(),
                 indices.size());
  IndexPlan p;
  std::vector<Tensor> idx;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool indexed = d < static_cast<int64_t>(indices.size()) && indices[d];
    if (!indexed) {
      p.rest_dims.push_back(d);
      continue;
    }
    const Tensor& t = *indices[d];
    AMPJIT_CHECK_T(IndexError, t.dtype() == ScalarType::Int64 || t.dtype() == ScalarType::Int32,
                   "tensors used as indices must be long, int, byte or bool tensors");
    p.adv_dims.push_back(d);
    idx.push_back(t);
  }
  AMPJIT_CHECK(!idx.empty(), "{}: expected at least one index tensor", op);
  for (size_t k = 1; k < p.adv_dims.size(); ++k)
    p.adjacent = p.adjacent && p.adv_dims[k] == p.adv_dims[k - 1] + 1;
  // Broadcast the index tensors (torch's message names every shape).
  DimVector shape;
  for (const Tensor& t : idx) {
    DimVector s(t.sizes());
    const size_t n = std::max(shape.size(), s.size());
    DimVector out(n, 1);
    for (size_t i = 0; i < n; ++i) {
      const int64_t a = i + shape.size() >= n ? shape[i + shape.size() - n] : 1;
      const int64_t b = i + s.size() >= n ? s[i + s.size() - n] : 1;
      if (a != b && a != 1 && b != 1) {
        std::string shapes;
        for (const Tensor& u : idx) shapes += (shapes.empty() ? "" : ", ") + u.shape_str();
        throw IndexError(
            "shape mismatch: indexing tensors could not be broadcast together with "
            "shapes " +
            shapes);
      }
      out[i] = a == 1 ? b : a;
    }
    shape = out;
  }
  p.broadcast = shape;
  const int64_t nb = numel_of(shape);
  p.adv_offsets.assign(static_cast<size_t>(nb), self.storage_offset());
  for (size_t k = 0; k < idx.size(); ++k) {
    const int64_t d = p.adv_dims[k], size = self.size(d), stride = self.stride(d);
    const Tensor e = idx[k].to(ScalarType::Int64).expand(shape).contiguous();
    const int64_t* v = e.data<int64_t>();
    for (int64_t i = 0; i < nb; ++i) {
      int64_t j = v[i];
      if (j < -size || j >= size) [[unlikely]]
        throw IndexError(
            fmt::format("index {} is out of bounds for dimension {} with size {}", j, d, size));
      if (j < 0) j += size;
      p.adv_offsets[static_cast<size_t>(i)] += j * stride;
    }
  }
  for (int64_t d : p.rest_dims) p.rest_sizes.push_back(self.size(d));
  const int64_t nr = numel_of(p.rest_sizes);
  p.rest_offsets.assign(static_cast<size_t>(nr), 0);
  std::vector<int64_t> coord(p.rest_dims.size(), 0);
  for (int64_t i = 0; i < nr; ++i) {
    int64_t off = 0;
    for (size_t k = 0; k < coord.size(); ++k) off += coord[k] * self.stride(p.rest_dims[k]);
    p.rest_offsets[static_cast<size_t>(i)] = off;
    for (int64_t k = static_cast<int64_t>(coord.size()) - 1; k >= 0; --k) {
      if (++coord[k] < p.rest_sizes[k]) break;
      coord[k] = 0;
    }
  }
  return p;
}

// Off the CPU: the integer indices on the leading dims, through index_select (as before the
// general kernel), or an error naming what is missing.
Tensor index_composite(const Tensor& self, const Indices& indices) {
  std::vector<Tensor> idx;
  for (size_t k = 0; k < indices.size(); ++k) {
    AMPJIT_CHECK_T(NotImplementedError, indices[k].has_value(),
                   "index: on {}, ampjit indexes with tensors on the leading dims only",
                   self.device().str());
    AMPJIT_CHECK_T(
        NotImplementedError,
        indices[k]->dtype() != ScalarType::Bool && indices[k]->dtype() != ScalarType::UInt8,
        "index: on {}, ampjit does not index with masks yet", self.device().str());
    idx.push_back(indices[k]->to(ScalarType::Int64));
  }
  DimVector shape;
  for (const Tensor& i : idx) shape = broadcast_shapes(shape, i.sizes(), "index");
  Tensor linear;
  int64_t rows = 1;
  for (size_t k = 0; k < idx.size(); ++k) {
    const int64_t size = self.size(static_cast<int64_t>(k));
    Tensor i = idx[k].expand(shape);
    i = ops::where(ops::lt_Scalar(i, Scalar(int64_t{0})), ops::add_Scalar(i, Scalar(size)), i);
    linear = linear.defined() ? ops::add(ops::mul_Scalar(linear, Scalar(size)), i).tensor() : i;
    rows *= size;
  }
  std::vector<int64_t> flat{rows};
  for (int64_t d = static_cast<int64_t>(idx.size()); d < self.dim(); ++d)
    flat.push_back(self.size(d));
  const Tensor picked =
      ops::index_select(self.reshape(flat), 0, linear.reshape(std::vector<int64_t>{-1}));
  std::vector<int64_t> out(shape.begin(), shape.end());
  for (int64_t d = static_cast<int64_t>(idx.size()); d < self.dim(); ++d)
    out.push_back(self.size(d));
  return picked.reshape(out);
}

Tensor index_k(const Tensor& self, Indices indices) {
  if (!self.device().is_cpu()) return index_composite(self, indices);
  const IndexPlan p = plan(self, indices, "index");
  Tensor out = Tensor::empty(p.loop_shape(), self.dtype(), self.device());
  const size_t nr = p.rest_offsets.size();
  meta::dispatch_itemsize(self.itemsize(), [&]<typename U>() {
    const U* base = static_cast<const U*>(self.storage()->data());
    U* o = static_cast<U*>(out.raw_data());
    for (size_t b = 0; b < p.adv_offsets.size(); ++b)
      for (size_t r = 0; r < nr; ++r) o[b * nr + r] = base[p.adv_offsets[b] + p.rest_offsets[r]];
  });
  const std::vector<int64_t> order = p.to_result_order();
  if (std::is_sorted(order.begin(), order.end())) return out;
  return out.permute(order).contiguous();
}

// index_put_: values, broadcast to the result of indexing, written (or added) in place.
Tensor index_put_inplace_k(Tensor self, Indices indices, const Tensor& values, bool accumulate) {
  AMPJIT_CHECK(self.dtype() == values.dtype(),
               "Index put requires the source and destination dtypes match, got {} for the "
               "destination and {} for the source.",
               dtype_name(self.dtype()), dtype_name(values.dtype()));
  AMPJIT_CHECK_T(NotImplementedError, self.device().is_cpu(),
                 "index_put_: ampjit's {} backend does not implement this op", self.device().str());
  const IndexPlan p = plan(self, indices, "index_put_");
  // values in the loop order: broadcast to the result's shape, then permuted back.
  const std::vector<int64_t> order = p.to_result_order();
  DimVector result_shape;
  const DimVector loop = p.loop_shape();
  for (int64_t i : order) result_shape.push_back(loop[i]);
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
  Tensor v =
      ops::expand(values, std::vector<int64_t>(result_shape.begin(), result_shape.end())).tensor();
  if (!order.empty()) v = v.permute(inverse);
  const size_t nr = p.rest_offsets.size();
  if (!accumulate) {
    const Tensor vc = v.contiguous();
    meta::dispatch_itemsize(self.itemsize(), [&]<typename U>() {
      U* base = static_cast<U*>(self.storage()->data());
      const U* s = static_cast<const U*>(vc.raw_data());
      for (size_t b = 0; b < p.adv_offsets.size(); ++b)
        for (size_t r = 0; r < nr; ++r) base[p.adv_offsets[b] + p.rest_offsets[r]] = s[b * nr + r];
    });
    return self;
  }
  if (self.dtype() == ScalarType::Bool) {  // or
    const Tensor vc = v.contiguous();
    bool* base = static_cast<bool*>(self.storage()->data());
    const bool* s = vc.data<bool>();
    for (size_t b = 0; b < p.adv_offsets.size(); ++b)
      for (size_t r = 0; r < nr; ++r) base[p.adv_offsets[b] + p.rest_offsets[r]] |= s[b * nr + r];
    return self;
  }
  dispatch_numeric(self.dtype(), "index_put_", [&]<typename T>() {
    using M = opmath_t<T>;
    const Tensor vc = v.contiguous();
    T* base = static_cast<T*>(self.storage()->data());
    const T* s = vc.data<T>();
    for (size_t b = 0; b < p.adv_offsets.size(); ++b) {
      for (size_t r = 0; r < nr; ++r) {
        T& d = base[p.adv_offsets[b] + p.rest_offsets[r]];
        d = static_cast<T>(static_cast<M>(d) + static_cast<M>(s[b * nr + r]));
      }
    }
  });
  return self;
}

Tensor index_put_k(const Tensor& self, Indices indices, const Tensor& values, bool accumulate) {
  Tensor out = self.clone();
  return index_put_inplace_k(out, std::move(indices), values, accumulate);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(index, cpu::index_k)
AMPJIT_KERNEL(index_put, cpu::index_put_k)
AMPJIT_KERNEL(index_put_, cpu::index_put_inplace_k)
