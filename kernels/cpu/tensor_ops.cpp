// Kernels for views, copies and conversions (runtime/ops/tensor.def).
#include <fmt/ranges.h>

#include <algorithm>

#include "runtime/boxing.h"
#include "runtime/layout.h"
#include "runtime/mem_overlap.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit {
namespace {

Tensor view_k(const Tensor& s, std::vector<int64_t> size) {
  return s.view(size);
}
Tensor view_as_k(const Tensor& s, const Tensor& o) {
  return s.view(o.sizes());
}
Tensor reshape_k(const Tensor& s, std::vector<int64_t> shape) {
  return s.reshape(shape);
}
Tensor reshape_as_k(const Tensor& s, const Tensor& o) {
  return s.reshape(o.sizes());
}
Tensor t_k(const Tensor& s) {
  return s.t();
}
Tensor transpose_k(const Tensor& s, int64_t a, int64_t b) {
  return s.transpose(a, b);
}
Tensor permute_k(const Tensor& s, std::vector<int64_t> dims) {
  return s.permute(dims);
}
Tensor select_k(const Tensor& s, int64_t d, int64_t i) {
  return s.select(d, i);
}
Tensor slice_k(const Tensor& s, int64_t d, std::optional<int64_t> b, std::optional<int64_t> e,
               int64_t step) {
  return s.slice(d, b, e, step);
}
Tensor narrow_k(const Tensor& s, int64_t d, int64_t b, int64_t n) {
  return s.narrow(d, b, n);
}
// Any geometry inside the storage, with torch's checks (checked arithmetic: a hostile geometry is
// an error, never a view of memory outside the storage).
Tensor as_strided_k(const Tensor& s, std::vector<int64_t> size, std::vector<int64_t> stride,
                    std::optional<int64_t> storage_offset) {
  AMPJIT_CHECK(size.size() == stride.size(), "mismatch in length of strides and shape");
  for (int64_t st : stride)
    AMPJIT_CHECK(st >= 0,
                 "as_strided: Negative strides are not supported at the moment, got "
                 "strides: [{}]",
                 fmt::join(stride, ", "));
  for (int64_t sz : size)
    AMPJIT_CHECK(sz >= 0, "Trying to create tensor with negative dimension {}: [{}]", sz,
                 fmt::join(size, ", "));
  const int64_t offset = storage_offset.value_or(s.storage_offset());
  AMPJIT_CHECK(offset >= 0, "Tensor: invalid storage offset {}", offset);
  // The storage the view needs: (offset + 1 + sum (size-1)*stride) elements, 0 when empty.
  int64_t need = 0;
  bool overflow = false;
  if (std::find(size.begin(), size.end(), 0) == size.end()) {
    need = 1;
    for (size_t i = 0; i < size.size(); ++i) {
      int64_t step = 0;
      overflow |= __builtin_mul_overflow(size[i] - 1, stride[i], &step);
      overflow |= __builtin_add_overflow(need, step, &need);
    }
    overflow |= __builtin_add_overflow(need, offset, &need);
    overflow |= __builtin_mul_overflow(need, static_cast<int64_t>(s.itemsize()), &need);
  }
  AMPJIT_CHECK(!overflow, "Storage size calculation overflowed with sizes=[{}] and strides=[{}]",
               fmt::join(size, ", "), fmt::join(stride, ", "));
  const int64_t have = static_cast<int64_t>(s.storage()->nbytes());
  AMPJIT_CHECK(need <= have,
               "setStorage: sizes [{}], strides [{}], storage offset {}, and itemsize {} requiring "
               "a storage size of {} are out of bounds for storage of size {}",
               fmt::join(size, ", "), fmt::join(stride, ", "), offset, s.itemsize(), need, have);
  return s.as_strided(size, stride, offset);
}
Tensor expand_k(const Tensor& s, std::vector<int64_t> size, bool) {
  return s.expand(size);
}
Tensor expand_as_k(const Tensor& s, const Tensor& o) {
  return s.expand(o.sizes());
}
Tensor squeeze_k(const Tensor& s) {
  return s.squeeze();
}
Tensor squeeze_dim_k(const Tensor& s, int64_t d) {
  return s.squeeze(d);
}
Tensor unsqueeze_k(const Tensor& s, int64_t d) {
  return s.unsqueeze(d);
}
Tensor flatten_k(const Tensor& s, int64_t a, int64_t b) {
  return s.flatten(a, b);
}
// memory_format is c10::MemoryFormat's value: Contiguous 0, Preserve 1, ChannelsLast 2,
// ChannelsLast3d 3 (Note [Channels-last tensors]; the 3-D layout is computed row-major).
Tensor contiguous_k(const Tensor& s, int64_t memory_format) {
  AMPJIT_CHECK(memory_format != 1 || s.is_contiguous(),
               "preserve memory format is unsupported by the contiguous operator");
  AMPJIT_CHECK(memory_format >= 0 && memory_format <= 3, "invalid memory format {}", memory_format);
  if (memory_format >= 2) {
    const int64_t rank = memory_format == 2 ? 4 : 5;
    AMPJIT_CHECK(s.dim() == rank, "required rank {} tensor to use {} format", rank,
                 memory_format == 2 ? "channels_last" : "channels_last_3d");
    if (memory_format == 2 && !is_channels_last_contiguous(s)) return to_channels_last(s);
    if (memory_format == 2) return s;
  }
  return s.contiguous();
}
Tensor to_channels_last_k(const Tensor& s) {
  return s.dim() == 4 ? contiguous_k(s, 2) : s;
}
Tensor clone_k(const Tensor& s) {
  Tensor out = empty_in_layout_of(s, s.sizes(), s.dtype());  // Note [Channels-last tensors]
  out.copy_(s);
  return out;
}
Tensor detach_k(const Tensor& s) {
  Tensor v = Tensor::make_view(s, s.sizes(), s.strides(), s.storage_offset());
  v.impl()->requires_grad = false;
  v.impl()->is_leaf = true;
  return v;
}
Tensor copy_k(Tensor self, const Tensor& src, bool) {
  assert_no_partial_overlap(*self.impl(), *src.impl());  // Note [Overlapping writes]
  self.copy_(src);
  return self;
}
Tensor fill_k(Tensor self, const Scalar& v) {
  self.fill_(v);
  return self;
}
Tensor zero_k(Tensor self) {
  self.fill_(Scalar(int64_t{0}));
  return self;
}
Tensor to_dtype_k(const Tensor& s, ScalarType dt, bool, bool copy) {
  return s.to(dt, copy);
}
// Device-generic: a copy to another device goes through Tensor::copy_ and so the device backend
// (which raises a clear error where the device is unavailable). "cuda" without an index means the
// tensor's own CUDA device when it is on one, as torch's to() treats the current device.
Tensor to_device_k(const Tensor& s, Device d, std::optional<ScalarType> dt, bool, bool copy) {
  const ScalarType type = dt.value_or(s.dtype());
  const bool same_device =
      d.type == s.device().type && (d.is_cpu() || d.index < 0 || d.index == s.device().index);
  if (same_device) return s.to(type, copy);
  Tensor out = Tensor::empty(s.sizes(), type, d);
  out.copy_(s);
  return out;
}
Tensor to_other_k(const Tensor& s, const Tensor& o, bool nb, bool copy) {
  return to_device_k(s, o.device(), o.dtype(), nb, copy);
}
Tensor type_as_k(const Tensor& s, const Tensor& o) {
  return to_other_k(s, o, false, false);
}
int64_t size_int_k(const Tensor& s, int64_t d) {
  return s.size(d);
}
int64_t dim_k(const Tensor& s) {
  return s.dim();
}
int64_t numel_k(const Tensor& s) {
  return s.numel();
}
// torch.equal: the same sizes and every element equal (compared after type promotion, so NaN is
// never equal), on whichever device the two share.
bool equal_k(const Tensor& s, const Tensor& o) {
  if (!std::ranges::equal(s.sizes(), o.sizes())) return false;
  return ops::sum(ops::eq(s, o)).tensor().item().to_int() == s.numel();
}

// ---- chunk, split, unbind (views) and diff, as torch's TensorShape.cpp and ReduceOps.cpp ------

std::vector<Tensor> split_k(const Tensor& self, int64_t split_size, int64_t dim) {
  AMPJIT_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  AMPJIT_CHECK(split_size >= 0, "split expects split_size be non-negative, but got split_size={}",
               split_size);
  dim = wrap_dim(dim, self.dim());
  const int64_t size = self.size(dim);
  int64_t n = 1;
  if (split_size != 0)
    n = std::max<int64_t>((size + split_size - 1) / split_size, 1);
  else
    AMPJIT_CHECK(size == 0,
                 "split_size can only be 0 if dimension size is 0, but got dimension size of {}",
                 size);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t length = i + 1 < n ? split_size : size - split_size * (n - 1);
    out.push_back(self.narrow(dim, i * split_size, length));
  }
  return out;
}

// split(self, [sizes], dim) (torch's split.sizes and split_with_sizes): pieces of those sizes,
// which must add up to the dimension's size.
std::vector<Tensor> split_with_sizes_k(const Tensor& self, std::vector<int64_t> sizes,
                                       int64_t dim) {
  AMPJIT_CHECK(self.dim() != 0, "split expects at least a 1-dimensional tensor");
  dim = wrap_dim(dim, self.dim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    AMPJIT_CHECK(s >= 0,
                 "split_with_sizes expects split_sizes have only non-negative entries, "
                 "but got split_sizes={}",
                 fmt::join(sizes, ", "));
    total += s;
  }
  AMPJIT_CHECK(total == self.size(dim),
               "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at "
               "dimension {}), but got split_sizes=[{}]",
               self.size(dim), dim, fmt::join(sizes, ", "));
  std::vector<Tensor> out;
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(self.narrow(dim, at, s));
    at += s;
  }
  return out;
}

std::vector<Tensor> chunk_k(const Tensor& self, int64_t chunks, int64_t dim) {
  AMPJIT_CHECK(self.dim() > 0, "chunk expects at least a 1-dimensional tensor");
  AMPJIT_CHECK(chunks > 0, "chunk expects `chunks` to be greater than 0, got: {}", chunks);
  dim = wrap_dim(dim, self.dim());
  const int64_t size = self.size(dim);
  const int64_t split_size = (size + chunks - 1) / chunks;
  if (split_size == 0 && size == 0)  // `chunks` empty pieces, as torch's split_with_sizes
    return std::vector<Tensor>(static_cast<size_t>(chunks), self.narrow(dim, 0, 0));
  return split_k(self, split_size, dim);
}

std::vector<Tensor> unbind_k(const Tensor& self, int64_t dim) {
  AMPJIT_CHECK(self.dim() > 0, "Dimension specified as 0 but tensor has no dimensions");
  dim = wrap_dim(dim, self.dim());
  std::vector<Tensor> out;
  for (int64_t i = 0; i < self.size(dim); ++i) out.push_back(self.select(dim, i));
  return out;
}

// torch.diff: the n-th forward difference along dim (logical xor for bool), after concatenating
// prepend and append.
Tensor diff_k(const Tensor& self, int64_t n, int64_t dim, const std::optional<Tensor>& prepend,
              const std::optional<Tensor>& append) {
  AMPJIT_CHECK(self.dim() >= 1, "diff expects input to be at least one-dimensional");
  AMPJIT_CHECK(n >= 0, "order must be non-negative but got {}", n);
  dim = wrap_dim(dim, self.dim());
  if (n == 0) return ops::clone(self);  // torch: no prepend or append for n = 0
  Tensor x = self;
  if (prepend || append) {
    // a 0-dim prepend or append stands for a slice of self's shape along dim, as in torch
    auto as_slice = [&](const Tensor& t) {
      if (t.dim() != 0) return t;
      std::vector<int64_t> shape(self.sizes().begin(), self.sizes().end());
      shape[static_cast<size_t>(dim)] = 1;
      return Tensor(ops::expand(t, shape, false));
    };
    std::vector<Tensor> parts;
    if (prepend) parts.push_back(as_slice(*prepend));
    parts.push_back(self);
    if (append) parts.push_back(as_slice(*append));
    x = ops::cat(parts, dim);
  }
  for (int64_t i = 0; i < n && x.size(dim) > 0; ++i) {
    const int64_t len = x.size(dim) - 1;
    // through the dispatcher, so that autograd records the slices (diff is kComposite)
    const Tensor hi = ops::narrow(x, dim, 1, len), lo = ops::narrow(x, dim, 0, len);
    x = x.dtype() == ScalarType::Bool ? Tensor(ops::logical_xor(hi, lo)) : Tensor(ops::sub(hi, lo));
  }
  return x;
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(chunk, chunk_k)
AMPJIT_KERNEL(split, split_k)
AMPJIT_KERNEL(split_sizes, split_with_sizes_k)
AMPJIT_KERNEL(split_with_sizes, split_with_sizes_k)
AMPJIT_KERNEL(unbind, unbind_k)
AMPJIT_KERNEL(diff, diff_k)
AMPJIT_KERNEL(view, view_k)
AMPJIT_KERNEL(view_as, view_as_k)
AMPJIT_KERNEL(reshape, reshape_k)
AMPJIT_KERNEL(reshape_as, reshape_as_k)
AMPJIT_KERNEL(t, t_k)
AMPJIT_KERNEL(transpose, transpose_k)
AMPJIT_KERNEL(permute, permute_k)
AMPJIT_KERNEL(select, select_k)
AMPJIT_KERNEL(slice, slice_k)
AMPJIT_KERNEL(narrow, narrow_k)
AMPJIT_KERNEL(as_strided, as_strided_k)
AMPJIT_KERNEL(expand, expand_k)
AMPJIT_KERNEL(expand_as, expand_as_k)
AMPJIT_KERNEL(squeeze, squeeze_k)
AMPJIT_KERNEL(squeeze_dim, squeeze_dim_k)
AMPJIT_KERNEL(unsqueeze, unsqueeze_k)
AMPJIT_KERNEL(flatten, flatten_k)
AMPJIT_KERNEL(contiguous, contiguous_k)
AMPJIT_KERNEL(to_channels_last, to_channels_last_k)
AMPJIT_KERNEL(clone, clone_k)
AMPJIT_KERNEL(detach, detach_k)
AMPJIT_KERNEL(copy_, copy_k)
AMPJIT_KERNEL(fill_, fill_k)
AMPJIT_KERNEL(zero_, zero_k)
AMPJIT_KERNEL(to_dtype, to_dtype_k)
AMPJIT_KERNEL(to_device, to_device_k)
AMPJIT_KERNEL(to_other, to_other_k)
AMPJIT_KERNEL(type_as, type_as_k)
AMPJIT_KERNEL(equal, equal_k)
AMPJIT_KERNEL(size_int, size_int_k)
AMPJIT_KERNEL(dim, dim_k)
AMPJIT_KERNEL(numel, numel_k)
