// What the sorting and selection ops (runtime/ops/sorting.def) decide before any element is read,
// for every backend: torch 1.13's argument checks with its messages, the dtypes each op takes, and
// the shapes of the results. kernels/cpu/sort_ops.cpp supplies the loops.
#pragma once
#include <cstdint>
#include <string_view>

#include "runtime/error.h"
#include "runtime/tensor.h"
#include "runtime/type_promotion.h"

namespace ampjit::meta {

// The dtypes an op's kernel takes beyond the integer and float32/float64 types every one of them
// takes (torch's AT_DISPATCH_ALL_TYPES_AND...). `kernel` is the name torch's message gives it:
// "\"topk_cpu\" not implemented for 'Half'".
struct SortDtypes {
  const char* kernel;
  bool bfloat16 = true;
  bool half = false;
  bool boolean = false;
  bool integers = true;
};

inline void check_dtype(ScalarType t, const SortDtypes& d) {
  const bool ok = t == ScalarType::Float32 || t == ScalarType::Float64 ||
                  (t == ScalarType::BFloat16 && d.bfloat16) ||
                  (t == ScalarType::Float16 && d.half) || (t == ScalarType::Bool && d.boolean) ||
                  (is_integral(t) && d.integers);
  AMPJIT_CHECK(ok, "\"{}\" not implemented for '{}'", d.kernel, torch_type_name(t));
}

// sort, argsort, msort: every dtype.
inline constexpr SortDtypes kSortDtypes{"sort", true, true, true};
inline constexpr SortDtypes kTopkDtypes{"topk_cpu"};
inline constexpr SortDtypes kKthvalueDtypes{"kthvalue_cpu"};
// median and nanmedian share torch's kernels and their names.
inline constexpr SortDtypes kMedianDtypes{"median_cpu"};
inline constexpr SortDtypes kMedianDimDtypes{"median_out"};
inline constexpr SortDtypes kModeDtypes{"mode_cpu", true, true, true};
inline constexpr SortDtypes kUniqueDtypes{"unique", true, false, true};
inline constexpr SortDtypes kUniqueDimDtypes{"unique_dim", true, false, true};
inline constexpr SortDtypes kSearchsortedDtypes{"searchsorted_out_cpu", true, true, false};
inline constexpr SortDtypes kCummaxDtypes{"cummax_cpu", true, false, true};
inline constexpr SortDtypes kCumminDtypes{"cummin_cpu", true, false, true};
inline constexpr SortDtypes kLogcumsumexpDtypes{"logcumsumexp_out_cpu", true, false, false, false};

// torch's zero_numel_check_dims for a reduction along one (wrapped) dim: a 0-dim tensor takes
// dims -1 and 0, any other tensor must not reduce an empty dim.
inline void check_reduced_dim_nonempty(const Tensor& self, int64_t dim, const char* fn) {
  if (self.dim() == 0) {
    AMPJIT_CHECK_T(IndexError, dim == 0 || dim == -1,
                   "{}: Expected reduction dim -1 or 0 for scalar but got {}", fn, dim);
  } else {
    AMPJIT_CHECK_T(IndexError, self.size(dim) != 0,
                   "{}: Expected reduction dim {} to have non-zero size.", fn, dim);
  }
}

// The size of `dim` (wrapped), 1 for a 0-dim tensor (torch's ensure_nonempty_size).
inline int64_t slice_size(const Tensor& self, int64_t dim) {
  return self.dim() == 0 ? 1 : self.size(dim);
}

// The shape of a reduction along `dim`: the dim dropped, or kept as size 1.
inline DimVector reduced_along(const Tensor& self, int64_t dim, bool keepdim) {
  DimVector out;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (d != dim)
      out.push_back(self.size(d));
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// topk: k in [0, size of dim]; the results have k along dim.
inline DimVector topk_sizes(const Tensor& self, int64_t k, int64_t dim) {
  AMPJIT_CHECK(k >= 0 && k <= slice_size(self, dim), "selected index k out of range");
  DimVector out(self.sizes().begin(), self.sizes().end());
  if (!out.empty()) out[static_cast<size_t>(dim)] = k;
  return out;
}

// kthvalue: a non-empty dim and k in [1, size of dim].
inline void check_kthvalue(const Tensor& self, int64_t k, int64_t dim) {
  check_reduced_dim_nonempty(self, dim, "kthvalue()");
  AMPJIT_CHECK(k >= 1 && k <= slice_size(self, dim),
               "kthvalue(): selected number k out of range for dimension {}", dim);
}

// torch's assert_no_overlap(self, out): the out= tensors of kthvalue may not share memory with
// the input. Conservative, as torch's is: any common byte of the two spans counts.
inline void check_no_overlap(const Tensor& input, const Tensor& written) {
  if (input.numel() == 0 || written.numel() == 0 || !input.storage().get() ||
      input.storage().get() != written.storage().get())
    return;
  auto span = [](const Tensor& t) {
    int64_t lo = t.storage_offset(), hi = t.storage_offset();
    for (int64_t d = 0; d < t.dim(); ++d) {
      const int64_t extent = (t.size(d) - 1) * t.stride(d);
      (extent < 0 ? lo : hi) += extent;
    }
    return std::pair<int64_t, int64_t>{lo, hi};
  };
  const auto [a0, a1] = span(input);
  const auto [b0, b1] = span(written);
  AMPJIT_CHECK(a1 < b0 || b1 < a0,
               "unsupported operation: some elements of the input tensor and the written-to tensor "
               "refer to a single memory location. Please clone() the tensor before performing the "
               "operation.");
}

// searchsorted (and bucketize, which calls it): torch's searchsorted_pre_check, in its order.
// `side` is "left", "right" or absent; the result is whether the search is for the right bound.
inline bool check_searchsorted(const Tensor& boundaries, const Tensor& input, bool out_int32,
                               bool right, const std::optional<std::string>& side,
                               const std::optional<Tensor>& sorter) {
  if (side) {
    AMPJIT_CHECK(*side == "left" || *side == "right",
                 "torch.searchsorted(): side can only be 'left' or 'right' but got {}", *side);
    AMPJIT_CHECK(!right || *side == "right",
                 "torch.searchsorted(): side and right can't be set to opposites, got side of {} "
                 "while right was True",
                 *side);
  }
  if (sorter && sorter->defined()) {
    AMPJIT_CHECK(std::equal(sorter->sizes().begin(), sorter->sizes().end(),
                            boundaries.sizes().begin(), boundaries.sizes().end()),
                 "torch.searchsorted(): boundary and sorter must have the same size, but got "
                 "boundary tensor {}and got sorter tensor {}",
                 boundaries.shape_str(), sorter->shape_str());
    AMPJIT_CHECK(sorter->dtype() == ScalarType::Int64,
                 "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype {}",
                 torch_type_name(sorter->dtype()));
  }
  AMPJIT_CHECK(boundaries.dim() != 0,
               "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
               "dimension");
  AMPJIT_CHECK(input.dim() > 0 || boundaries.dim() == 1,
               "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
               "dimension is 1, but we got boundaries tensor dim({}) and input value's dim({}) "
               "numel({})",
               boundaries.dim(), input.dim(), input.numel());
  bool leading_match = boundaries.dim() == input.dim();
  for (int64_t d = 0; leading_match && d + 1 < boundaries.dim(); ++d)
    leading_match = boundaries.size(d) == input.size(d);
  AMPJIT_CHECK(boundaries.dim() == 1 || leading_match,
               "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
               "dimensions of boundaries tensor and input value tensor must match, but we got "
               "boundaries tensor {} and input value tensor {}",
               boundaries.shape_str(), input.shape_str());
  if (out_int32) {
    const int64_t last = boundaries.size(-1);
    AMPJIT_CHECK(last < INT32_MAX,
                 "torch.searchsorted(): the size of boundaries' last dimension should be less "
                 "than {}, but we got {}",
                 INT32_MAX, last);
  }
  return side ? *side == "right" : right;
}

// searchsorted's out= tensor: int32 exactly when out_int32, else int64 (no cast, unlike other
// out= forms).
inline void check_searchsorted_out(const Tensor& out, bool out_int32) {
  const ScalarType t = out.dtype();
  AMPJIT_CHECK((t == ScalarType::Int64 && !out_int32) || (t == ScalarType::Int32 && out_int32),
               "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
               "Long(int64) depending on whether out_int32 flag is True, but we got output "
               "tensor's dtype {} and out_int32 flag is {}",
               torch_type_name(t), out_int32 ? "True" : "False");
}

// bucketize: 1-dimensional boundaries, then searchsorted's checks.
inline void check_bucketize(const Tensor& boundaries) {
  AMPJIT_CHECK(boundaries.dim() == 1, "boundaries tensor must be 1 dimension, but got dim({})",
               boundaries.dim());
}

// The dtype searchsorted compares in: the input's when both agree, else their result type.
inline ScalarType searchsorted_compute_type(const Tensor& boundaries, const Tensor& input) {
  return boundaries.dtype() == input.dtype() ? input.dtype() : result_type(boundaries, input);
}

// unique_dim and unique_consecutive along a dim: the dim must exist (torch's message for a 0-dim
// tensor comes from its size(dim)), and only the selected dim may be empty.
inline int64_t check_unique_dim(const Tensor& self, int64_t dim) {
  AMPJIT_CHECK_T(IndexError, self.dim() > 0,
                 "Dimension specified as {} but tensor has no dimensions", dim);
  const int64_t d = wrap_dim(dim, self.dim());
  int64_t zero_dims = 0;
  for (int64_t s : self.sizes()) zero_dims += s == 0;
  if (self.size(d) == 0) {
    AMPJIT_CHECK(zero_dims == 1,
                 "Number of zero sized dimensions is more than one, so unique cannot be applied ");
  } else {
    AMPJIT_CHECK(zero_dims == 0,
                 "There are 0 sized dimensions, and they aren't selected, so unique cannot be "
                 "applied");
  }
  return d;
}

}  // namespace ampjit::meta
