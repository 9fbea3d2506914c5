// Sorting and selection kernels (runtime/ops/sorting.def): sort, topk, kthvalue, median,
// nanmedian, mode, the uniques, searchsorted/bucketize, cummax/cummin and logcumsumexp. Checks,
// dtypes and shapes come from kernels/sort_meta.h; rows along a dim are planned as the reductions'
// (Note [Reduction rows] in kernels/cpu/reduce.h) and sorted in parallel, one row per task.
//
// Note [Torch's order of ties]
// Which of several equal elements comes first (sort without `stable`, topk, the index mode and
// kthvalue return) is not specified by torch, but it is observable, and op_db compares it. Each
// kernel here makes the very calls torch 1.13's CPU kernel makes, on the same sequence of
// (value, index) pairs in index order and with the same comparator: std::sort, std::nth_element
// and std::partial_sort from the same standard library permute identically, and kthvalue runs
// torch's own quickselect (Sedgewick's, from TH). Torch compares reduced-precision values as float,
// which is what the pairs here hold (opmath_t). Where torch's comparator is not a strict weak
// ordering once NaNs appear (mode's and unique's `<`), NaN is taken as the largest value instead,
// which changes nothing for inputs without NaN and keeps the standard algorithms within bounds.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <mutex>
#include <numeric>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "kernels/cpu/reduce.h"
#include "kernels/operands.h"
#include "kernels/sort_meta.h"
#include "runtime/boxing.h"
#include "runtime/diagnostic.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {

namespace {

// ---- rows -------------------------------------------------------------------------------------

// The element offsets of row `r` of plan `p` in its input and its output (a reduction's output
// offset is the row itself).
std::pair<int64_t, int64_t> row_offsets(const RowPlan& p, int64_t r) {
  int64_t in = 0, out = p.scan ? 0 : r;
  for (size_t d = p.outer_sizes.size(); d-- > 0;) {
    const int64_t i = r % p.outer_sizes[d];
    r /= p.outer_sizes[d];
    in += i * p.outer_strides[d];
    if (p.scan) out += i * p.out_strides[d];
  }
  return {in, out};
}

// Runs body(begin, end) over ranges of the rows of `p` in parallel; a range allocates its scratch
// once. body must not throw (it runs inside an OpenMP region).
template <typename F>
void for_row_ranges(const RowPlan& p, F&& body) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, p.row_len));
  parallel_for(p.n_out, grain, body);
}

// The rows of `self` along `dim` that reduce into one element each.
RowPlan rows_reduced_along(const Tensor& self, int64_t dim) {
  return plan_rows(self, self.dim() == 0 ? meta::DimMask{0} : meta::DimMask{1} << dim);
}

template <typename M>
using Pair = std::pair<M, int64_t>;

// torch's comparators: NaN is the largest value (KeyValueCompAsc, KeyValueCompDesc).
template <typename M>
bool less_nan_last(M a, M b) {
  return (!is_nan_value(a) && is_nan_value(b)) || a < b;
}
template <typename M>
bool greater_nan_first(M a, M b) {
  return (is_nan_value(a) && !is_nan_value(b)) || a > b;
}

// ---- sort -------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending,
                                     bool stable) {
  const int64_t d = wrap_dim(dim, self.dim());
  Tensor values = Tensor::empty(self.sizes(), self.dtype());
  Tensor indices = Tensor::empty(self.sizes(), ScalarType::Int64);
  const RowPlan p = plan_rows_along(self, d, values);
  dispatch_all(self.dtype(), "sort", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const int64_t n = p.row_len, is = p.row_stride, os = p.out_row_stride;
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      std::vector<Pair<M>> row(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const auto [io, oo] = row_offsets(p, r);
        for (int64_t i = 0; i < n; ++i) row[i] = {static_cast<M>(src[io + i * is]), i};
        auto asc = [](const Pair<M>& a, const Pair<M>& b) {
          return less_nan_last(a.first, b.first);
        };
        auto desc = [](const Pair<M>& a, const Pair<M>& b) {
          return greater_nan_first(a.first, b.first);
        };
        if (descending)
          stable ? std::stable_sort(row.begin(), row.end(), desc)
                 : std::sort(row.begin(), row.end(), desc);
        else
          stable ? std::stable_sort(row.begin(), row.end(), asc)
                 : std::sort(row.begin(), row.end(), asc);
        for (int64_t i = 0; i < n; ++i) {
          vout[oo + i * os] = static_cast<T>(row[i].first);
          iout[oo + i * os] = row[i].second;
        }
      }
    });
  });
  return {values, indices};
}

std::tuple<Tensor, Tensor> sort_k(const Tensor& self, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending, false);
}

std::tuple<Tensor, Tensor> sort_stable_k(const Tensor& self, std::optional<bool> stable,
                                         int64_t dim, bool descending) {
  AMPJIT_CHECK(stable.has_value(), "sort(): c10::optional<bool> for stable has to have value.");
  return sort_impl(self, dim, descending, *stable);
}

// ---- topk -------------------------------------------------------------------------------------

// torch's topk_impl_loop: a partial sort when k is small against the row, else nth_element and
// a sort of the first k - 1 (the k-th is in place), both with the NaN-largest comparators.
std::tuple<Tensor, Tensor> topk_k(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                  bool sorted) {
  const int64_t d = wrap_dim(dim, self.dim());
  const DimVector sizes = meta::topk_sizes(self, k, d);
  Tensor values = Tensor::empty(sizes, self.dtype());
  Tensor indices = Tensor::empty(sizes, ScalarType::Int64);
  if (self.dim() == 0 && self.numel() == 1) {
    values.copy_(self);
    indices.fill_(Scalar(int64_t{0}));
    return {values, indices};
  }
  meta::check_dtype(self.dtype(), meta::kTopkDtypes);
  if (k == 0) return {values, indices};
  const RowPlan p = plan_rows_along(self, d, values);
  dispatch_numeric(self.dtype(), "topk", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const int64_t n = p.row_len, is = p.row_stride, os = p.out_row_stride;
    auto big = [](const Pair<M>& x, const Pair<M>& y) {
      return greater_nan_first(x.first, y.first);
    };
    auto small = [](const Pair<M>& x, const Pair<M>& y) { return less_nan_last(x.first, y.first); };
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      std::vector<Pair<M>> queue(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const auto [io, oo] = row_offsets(p, r);
        for (int64_t i = 0; i < n; ++i) queue[i] = {static_cast<M>(src[io + i * is]), i};
        const auto first = queue.begin(), kth = first + k, last = queue.end();
        if (k * 64 <= n) {
          largest ? std::partial_sort(first, kth, last, big)
                  : std::partial_sort(first, kth, last, small);
        } else if (largest) {
          std::nth_element(first, kth - 1, last, big);
          if (sorted) std::sort(first, kth - 1, big);
        } else {
          std::nth_element(first, kth - 1, last, small);
          if (sorted) std::sort(first, kth - 1, small);
        }
        for (int64_t j = 0; j < k; ++j) {
          vout[oo + j * os] = static_cast<T>(queue[j].first);
          iout[oo + j * os] = queue[j].second;
        }
      }
    });
  });
  return {values, indices};
}

// ---- kthvalue ---------------------------------------------------------------------------------

// torch's quick_select_template (Sedgewick's partitioning, median-of-three pivot): moves the
// k-th smallest of vals[0, n) (NaN largest) to position k, permuting idx alongside.
template <typename M>
void quick_select(M* vals, int64_t* idx, int64_t n, int64_t k) {
  auto gt = [](M x, M y) { return greater_nan_first(x, y); };
  auto swap = [&](int64_t i, int64_t j) {
    std::swap(vals[i], vals[j]);
    std::swap(idx[i], idx[j]);
  };
  int64_t lo = 0, hi = n - 1;
  for (;;) {
    if (hi <= lo) return;
    if (hi == lo + 1) {
      if (gt(vals[lo], vals[hi])) swap(lo, hi);
      return;
    }
    swap(lo + ((hi - lo) >> 1), lo + 1);
    if (gt(vals[lo + 1], vals[hi])) swap(lo + 1, hi);
    if (gt(vals[lo], vals[hi])) swap(lo, hi);
    if (gt(vals[lo + 1], vals[lo])) swap(lo + 1, lo);
    int64_t i = lo + 1, j = hi;
    const M pivot = vals[lo];
    for (;;) {
      do ++i;
      while (gt(pivot, vals[i]));
      do --j;
      while (gt(vals[j], pivot));
      if (j < i) break;
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

std::tuple<Tensor, Tensor> kthvalue_k(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, self.dim());
  meta::check_kthvalue(self, k, d);
  const DimVector sizes = meta::reduced_along(self, d, keepdim);
  Tensor values = Tensor::empty(sizes, self.dtype());
  Tensor indices = Tensor::empty(sizes, ScalarType::Int64);
  if (self.dim() == 0) {
    values.copy_(self);
    indices.fill_(Scalar(int64_t{0}));
    return {values, indices};
  }
  meta::check_dtype(self.dtype(), meta::kKthvalueDtypes);
  const RowPlan p = rows_reduced_along(self, d);
  dispatch_numeric(self.dtype(), "kthvalue", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const int64_t n = p.row_len, is = p.row_stride;
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      std::vector<M> vals(static_cast<size_t>(n));
      std::vector<int64_t> idx(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t io = row_offsets(p, r).first;
        for (int64_t i = 0; i < n; ++i) vals[i] = static_cast<M>(src[io + i * is]);
        std::iota(idx.begin(), idx.end(), int64_t{0});
        quick_select(vals.data(), idx.data(), n, k - 1);
        vout[r] = static_cast<T>(vals[k - 1]);
        iout[r] = idx[k - 1];
      }
    });
  });
  return {values, indices};
}

// kthvalue's out= form refuses values that share memory with the input, as torch does.
std::tuple<Tensor, Tensor> kthvalue_values_k(const Tensor& self, int64_t k, int64_t dim,
                                             bool keepdim, Tensor values, Tensor indices) {
  const int64_t d = wrap_dim(dim, self.dim());
  meta::check_kthvalue(self, k, d);
  meta::check_no_overlap(self, values);
  auto [v, i] = kthvalue_k(self, k, dim, keepdim);
  kernels::write_result(values, v, "kthvalue", false);
  kernels::write_result(indices, i, "kthvalue", false);
  values.storage()->bump_version();  // the dispatcher versions `indices`, the last written
  return {values, indices};
}

// ---- median, nanmedian ------------------------------------------------------------------------

// The median of all elements (the lower one of an even count): NaN when there is one, unless
// NaNs are ignored; an empty input gives NaN converted to the dtype, as torch's does.
Tensor median_all(const Tensor& self, bool ignore_nan) {
  Tensor out = Tensor::empty(IntArrayRef{}, self.dtype());
  if (self.numel() == 0) {
    Tensor nan = Tensor::empty(IntArrayRef{}, ScalarType::Float32);
    nan.fill_(Scalar(std::numeric_limits<double>::quiet_NaN()));
    out.copy_(nan);
    return out;
  }
  meta::check_dtype(self.dtype(), meta::kMedianDtypes);
  const Tensor in = self.contiguous();
  dispatch_numeric(self.dtype(), "median", [&]<typename T>() {
    using M = opmath_t<T>;
    std::vector<M> vals(static_cast<size_t>(in.numel()));
    const T* src = in.data<T>();
    for (size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<M>(src[i]);
    T* dst = out.data<T>();
    const auto nans = std::count_if(vals.begin(), vals.end(), [](M v) { return is_nan_value(v); });
    if (!ignore_nan && nans > 0) {
      *dst = static_cast<T>(std::numeric_limits<M>::quiet_NaN());
      return;
    }
    const auto nth = vals.begin() + (static_cast<int64_t>(vals.size()) - nans - 1) / 2;
    std::nth_element(vals.begin(), nth, vals.end(),
                     [](M a, M b) { return a < b || (is_nan_value(b) && !is_nan_value(a)); });
    *dst = static_cast<T>(*nth);
  });
  return out;
}

Tensor median_k(const Tensor& self) {
  return median_all(self, false);
}
Tensor nanmedian_k(const Tensor& self) {
  return median_all(self, true);
}

// torch's median_with_indices_impl: the median's index is found with nth_element over indices
// ordered by (value, index); median returns a row's first NaN when it has one.
std::tuple<Tensor, Tensor> median_along(const Tensor& self, int64_t dim, bool keepdim,
                                        bool ignore_nan) {
  const int64_t d = wrap_dim(dim, self.dim());
  meta::check_reduced_dim_nonempty(self, d, "median()");
  const DimVector sizes = meta::reduced_along(self, d, keepdim);
  Tensor values = Tensor::empty(sizes, self.dtype());
  Tensor indices = Tensor::empty(sizes, ScalarType::Int64);
  meta::check_dtype(self.dtype(), meta::kMedianDimDtypes);
  const RowPlan p = rows_reduced_along(self, d);
  dispatch_numeric(self.dtype(), "median", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const int64_t n = p.row_len, is = p.row_stride;
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      std::vector<M> vals(static_cast<size_t>(n));
      std::vector<int64_t> idx(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t io = row_offsets(p, r).first;
        for (int64_t i = 0; i < n; ++i) vals[i] = static_cast<M>(src[io + i * is]);
        if (!ignore_nan) {
          const auto nan =
              std::find_if(vals.begin(), vals.end(), [](M v) { return is_nan_value(v); });
          if (nan != vals.end()) {
            vout[r] = static_cast<T>(*nan);
            iout[r] = nan - vals.begin();
            continue;
          }
        }
        std::iota(idx.begin(), idx.end(), int64_t{0});
        const M* v = vals.data();
        auto nth = idx.begin();
        if (!ignore_nan) {
          nth += (n - 1) / 2;
          std::nth_element(idx.begin(), nth, idx.end(), [v](int64_t i, int64_t j) {
            return v[i] < v[j] || (v[i] == v[j] && i < j);
          });
        } else {
          const int64_t nans =
              std::count_if(vals.begin(), vals.end(), [](M x) { return is_nan_value(x); });
          nth += (n - nans - 1) / 2;
          std::nth_element(idx.begin(), nth, idx.end(), [v](int64_t i, int64_t j) {
            return v[i] < v[j] || (v[i] == v[j] && i < j) ||
                   (is_nan_value(v[j]) && !is_nan_value(v[i]));
          });
        }
        vout[r] = static_cast<T>(v[*nth]);
        iout[r] = *nth;
      }
    });
  });
  return {values, indices};
}

std::tuple<Tensor, Tensor> median_dim_k(const Tensor& self, int64_t dim, bool keepdim) {
  return median_along(self, dim, keepdim, false);
}
std::tuple<Tensor, Tensor> nanmedian_dim_k(const Tensor& self, int64_t dim, bool keepdim) {
  return median_along(self, dim, keepdim, true);
}

// ---- mode -------------------------------------------------------------------------------------

// torch's mode kernel: a row sorted by value (std::sort), its longest run of equal values (the
// first longest), reported with the index of the run's last element in that order.
std::tuple<Tensor, Tensor> mode_k(const Tensor& self, int64_t dim, bool keepdim) {
  const int64_t d = wrap_dim(dim, self.dim());
  const DimVector sizes = meta::reduced_along(self, d, keepdim);
  Tensor values = Tensor::empty(sizes, self.dtype());
  Tensor indices = Tensor::empty(sizes, ScalarType::Int64);
  if (self.dim() == 0 && self.numel() == 1) {
    values.copy_(self);
    indices.fill_(Scalar(int64_t{0}));
    return {values, indices};
  }
  meta::check_reduced_dim_nonempty(self, d, "mode()");
  meta::check_dtype(self.dtype(), meta::kModeDtypes);
  const RowPlan p = rows_reduced_along(self, d);
  dispatch_all(self.dtype(), "mode", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const int64_t n = p.row_len, is = p.row_stride;
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      std::vector<Pair<M>> elems(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        const int64_t io = row_offsets(p, r).first;
        for (int64_t i = 0; i < n; ++i) elems[i] = {static_cast<M>(src[io + i * is]), i};
        std::sort(elems.begin(), elems.end(), [](const Pair<M>& a, const Pair<M>& b) {
          return less_nan_last(a.first, b.first);
        });
        M mode = M(0);
        int64_t mode_index = 0, run = 0, best = 0;
        for (int64_t i = 0; i < n; ++i) {
          ++run;
          if (i == n - 1 || elems[i].first != elems[i + 1].first) {
            if (run > best) {
              mode = elems[i].first;
              mode_index = elems[i].second;
              best = run;
            }
            run = 0;
          }
        }
        vout[r] = static_cast<T>(mode);
        iout[r] = mode_index;
      }
    });
  });
  return {values, indices};
}

// ---- unique, unique_dim, unique_consecutive ---------------------------------------------------

// The hash and equality torch's std::unordered_set<scalar_t> uses: std::hash of the value for the
// standard types, of the bits for float16 and bfloat16 (whose == compares as float, so 0.0 and -0.0
// are equal but may land in different buckets, as in torch).
template <typename T>
struct ValueHash {
  size_t operator()(const T& v) const noexcept {
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      return std::hash<uint16_t>()(v.x);
    else
      return std::hash<T>()(v);
  }
};
template <typename T>
struct ValueEq {
  bool operator()(const T& a, const T& b) const noexcept {
    return static_cast<opmath_t<T>>(a) == static_cast<opmath_t<T>>(b);
  }
};

// torch's unique_cpu_template: the distinct values in hash-set order, sorted when asked; the
// inverse (the input's shape) when the inverse or the counts are asked, the counts when asked.
template <typename T>
std::tuple<Tensor, Tensor, Tensor> unique_hashed(const Tensor& self, bool sorted,
                                                 bool return_inverse, bool return_counts) {
  using M = opmath_t<T>;
  const Tensor input = self.contiguous();
  const T* in = input.data<T>();
  const int64_t n = input.numel();
  Tensor output, inverse = Tensor::empty(DimVector{0}, ScalarType::Int64),
                 counts = Tensor::empty(DimVector{0}, ScalarType::Int64);
  if constexpr (std::is_same_v<T, bool>) {
    std::array<bool, 2> seen{false, false};
    for (int64_t i = 0; i < n && !(seen[0] && seen[1]); ++i) seen[in[i] ? 1 : 0] = true;
    output = Tensor::empty(DimVector{seen[0] + seen[1]}, ScalarType::Bool);
    bool* o = output.data<bool>();
    if (seen[0]) *o++ = false;
    if (seen[1]) *o++ = true;
  } else {
    const std::unordered_set<T, ValueHash<T>, ValueEq<T>> set(in, in + n);
    output = Tensor::empty(DimVector{static_cast<int64_t>(set.size())}, self.dtype());
    T* o = output.data<T>();
    std::copy(set.begin(), set.end(), o);
    if (sorted) {
      std::sort(o, o + set.size(), [](const T& a, const T& b) {
        return less_nan_last(static_cast<M>(a), static_cast<M>(b));
      });
    }
  }
  if (!return_inverse && !return_counts) return {output, inverse, counts};
  const T* o = output.data<T>();
  const int64_t m = output.numel();
  inverse = Tensor::empty(input.sizes(), ScalarType::Int64);
  int64_t* inv = inverse.data<int64_t>();
  std::unordered_map<T, int64_t, ValueHash<T>, ValueEq<T>> positions;
  positions.reserve(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) positions[o[i]] = i;
  for (int64_t i = 0; i < n; ++i) inv[i] = positions[in[i]];  // a NaN finds none: 0, as in torch
  if (return_counts) {
    std::unordered_map<T, int64_t, ValueHash<T>, ValueEq<T>> tally;
    tally.reserve(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) tally[o[i]] = 0;
    for (int64_t i = 0; i < n; ++i) tally[in[i]] += 1;
    counts = Tensor::empty(DimVector{m}, ScalarType::Int64);
    for (int64_t i = 0; i < m; ++i) counts.data<int64_t>()[i] = tally[o[i]];
  }
  return {output, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique2_k(const Tensor& self, bool sorted, bool return_inverse,
                                             bool return_counts) {
  meta::check_dtype(self.dtype(), meta::kUniqueDtypes);
  return dispatch_all(self.dtype(), "unique", [&]<typename T>() {
    return unique_hashed<T>(self, sorted, return_inverse, return_counts);
  });
}

// torch's unique_consecutive_cpu_template: runs of equal values (NaN equals nothing).
template <typename T>
std::tuple<Tensor, Tensor, Tensor> unique_runs(const Tensor& self, bool return_inverse,
                                               bool return_counts) {
  using M = opmath_t<T>;
  const Tensor input = self.contiguous();
  const T* in = input.data<T>();
  const int64_t n = input.numel();
  const DimVector inverse_sizes = return_inverse ? DimVector(input.sizes()) : DimVector{0};
  Tensor inverse = Tensor::empty(inverse_sizes, ScalarType::Int64);
  std::vector<T> values;
  std::vector<int64_t> counts;
  if (n > 0) {
    int64_t* inv = return_inverse ? inverse.data<int64_t>() : nullptr;
    values.push_back(in[0]);
    int64_t last = 0;
    if (inv) inv[0] = 0;
    for (int64_t i = 1; i < n; ++i) {
      if (static_cast<M>(in[i]) != static_cast<M>(values.back())) {
        values.push_back(in[i]);
        counts.push_back(i - last);
        last = i;
      }
      if (inv) inv[i] = static_cast<int64_t>(values.size()) - 1;
    }
    counts.push_back(n - last);
  }
  Tensor output = Tensor::empty(DimVector{static_cast<int64_t>(values.size())}, self.dtype());
  std::copy(values.begin(), values.end(), output.data<T>());
  Tensor count_t = Tensor::empty(DimVector{return_counts ? static_cast<int64_t>(counts.size()) : 0},
                                 ScalarType::Int64);
  if (return_counts) std::copy(counts.begin(), counts.end(), count_t.data<int64_t>());
  return {output, inverse, count_t};
}

// torch's _unique_dim_cpu_template: the slices along `dim` (wrapped and checked) sorted
// lexicographically (std::sort over their indices), unless consecutive, then runs of equal slices;
// the inverse and counts are always computed.
template <typename T>
std::tuple<Tensor, Tensor, Tensor> unique_slices(const Tensor& self, int64_t dim,
                                                 bool consecutive) {
  using M = opmath_t<T>;
  if (self.size(dim) == 0) {
    return {Tensor::empty(self.sizes(), self.dtype()),
            Tensor::empty(DimVector{0}, ScalarType::Int64),
            Tensor::empty(DimVector{0}, ScalarType::Int64)};
  }
  // torch 1.13 brings the dim first with transpose(0, dim), which orders the slices' elements (and
  // so the lexicographic order) with dims 0 and `dim` swapped.
  const Tensor flat = self.transpose(0, dim).contiguous();
  const int64_t n = flat.size(0), width = flat.numel() / n;
  const T* data = flat.data<T>();
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!consecutive) {
    std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      for (int64_t i = 0; i < width; ++i) {
        const M l = static_cast<M>(data[a * width + i]), r = static_cast<M>(data[b * width + i]);
        if (less_nan_last(l, r)) return true;
        if (less_nan_last(r, l)) return false;
      }
      return false;
    });
  }
  auto equal = [&](int64_t a, int64_t b) {
    for (int64_t i = 0; i < width; ++i)
      if (!(static_cast<M>(data[a * width + i]) == static_cast<M>(data[b * width + i])))
        return false;
    return true;
  };
  Tensor inverse = Tensor::empty(DimVector{n}, ScalarType::Int64);
  int64_t* inv = inverse.data<int64_t>();
  std::vector<int64_t> kept{order[0]}, counts;
  inv[order[0]] = 0;
  int64_t previous = 0;
  for (int64_t cur = 1; cur < n; ++cur) {
    if (!equal(order[cur], kept.back())) {
      kept.push_back(order[cur]);
      counts.push_back(cur - previous);
      previous = cur;
    }
    inv[order[cur]] = static_cast<int64_t>(kept.size()) - 1;
  }
  counts.push_back(n - previous);
  DimVector out_sizes(flat.sizes().begin(), flat.sizes().end());
  out_sizes[0] = static_cast<int64_t>(kept.size());
  Tensor out = Tensor::empty(out_sizes, self.dtype());
  T* o = out.data<T>();
  for (size_t k = 0; k < kept.size(); ++k)
    std::copy(data + kept[k] * width, data + (kept[k] + 1) * width, o + k * width);
  Tensor count_t = Tensor::empty(DimVector{static_cast<int64_t>(counts.size())}, ScalarType::Int64);
  std::copy(counts.begin(), counts.end(), count_t.data<int64_t>());
  return {out.transpose(0, dim).contiguous(), inverse, count_t};
}

std::tuple<Tensor, Tensor, Tensor> unique_along(const Tensor& self, int64_t dim, bool consecutive) {
  meta::check_dtype(self.dtype(), meta::kUniqueDimDtypes);
  const int64_t d = meta::check_unique_dim(self, dim);
  return dispatch_all(self.dtype(), "unique_dim",
                      [&]<typename T>() { return unique_slices<T>(self, d, consecutive); });
}

std::tuple<Tensor, Tensor, Tensor> unique_dim_k(const Tensor& self, int64_t dim, bool sorted,
                                                bool return_inverse, bool return_counts) {
  (void)sorted, (void)return_inverse, (void)return_counts;  // always sorted, always all three
  return unique_along(self, dim, false);
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive_k(const Tensor& self, bool return_inverse,
                                                        bool return_counts,
                                                        std::optional<int64_t> dim) {
  if (!dim || (*dim == 0 && self.dim() == 1)) {
    meta::check_dtype(self.dtype(), meta::kUniqueDtypes);
    return dispatch_all(self.dtype(), "unique", [&]<typename T>() {
      return unique_runs<T>(self, return_inverse, return_counts);
    });
  }
  return unique_along(self, *dim, true);
}

// ---- searchsorted, bucketize ------------------------------------------------------------------

// torch's cus_lower_bound / cus_upper_bound over bd[start, end), through `sorter` when given.
template <typename M, typename T>
int64_t bound(int64_t start, int64_t end, M val, const T* bd, const int64_t* sorter, bool right) {
  const int64_t base = sorter ? start : 0;
  while (start < end) {
    const int64_t mid = start + ((end - start) >> 1);
    const M mid_val = static_cast<M>(sorter ? bd[sorter[mid] + base] : bd[mid]);
    if (right ? !(mid_val > val) : !(mid_val >= val))
      start = mid + 1;
    else
      end = mid;
  }
  return start;
}

// torch 1.13 warns, once per process for each, that it copies a non-contiguous operand.
void warn_noncontiguous(const Tensor& t, const char* what, std::once_flag& once) {
  if (t.is_contiguous()) return;
  std::call_once(once, [what] {
    warn(WarningCategory::User,
         fmt::format("torch.searchsorted(): {0} tensor is non-contiguous, this will lower the "
                     "performance due to extra data copy when converting non-contiguous tensor "
                     "to contiguous, please use contiguous {0} tensor if possible. This message "
                     "will only appear once per program.",
                     what));
  });
}

Tensor searchsorted_impl(const Tensor& boundaries, const Tensor& input, bool out_int32, bool right,
                         const std::optional<std::string>& side,
                         const std::optional<Tensor>& sorter) {
  const bool is_right = meta::check_searchsorted(boundaries, input, out_int32, right, side, sorter);
  Tensor result = Tensor::empty(input.sizes(), out_int32 ? ScalarType::Int32 : ScalarType::Int64);
  if (input.numel() == 0) return result;
  static std::once_flag input_once, boundary_once, sorter_once;
  warn_noncontiguous(input, "input value", input_once);
  warn_noncontiguous(boundaries, "boundary", boundary_once);
  if (sorter && sorter->defined()) warn_noncontiguous(*sorter, "sorter", sorter_once);
  const ScalarType ct = meta::searchsorted_compute_type(boundaries, input);
  meta::check_dtype(ct, meta::kSearchsortedDtypes);
  const Tensor in = kernels::cast_to(input, ct).contiguous();
  const Tensor bd = kernels::cast_to(boundaries, ct).contiguous();
  const int64_t inner_bd = bd.size(-1);
  Tensor st;
  if (sorter && sorter->defined()) {
    // Stricter than torch 1.13, which reads outside the boundaries for such a sorter.
    st = sorter->contiguous();
    const int64_t* s = st.data<int64_t>();
    AMPJIT_CHECK(std::all_of(s, s + st.numel(), [&](int64_t i) { return i >= 0 && i < inner_bd; }),
                 "torch.searchsorted(): sorter index out of range");
  }
  const int64_t inner_in = input.dim() == 0 ? 1 : input.size(-1);
  const bool one_row = bd.dim() == 1;
  dispatch_numeric(ct, "searchsorted", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* x = in.data<T>();
    const T* b = bd.data<T>();
    const int64_t* s = st.defined() ? st.data<int64_t>() : nullptr;
    auto run = [&]<typename O>(O* out) {
      parallel_for(in.numel(), kParallelGrain / 16, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t start = one_row ? 0 : i / inner_in * inner_bd;
          out[i] = static_cast<O>(
              bound(start, start + inner_bd, static_cast<M>(x[i]), b, s, is_right) - start);
        }
      });
    };
    if (out_int32)
      run(result.data<int32_t>());
    else
      run(result.data<int64_t>());
  });
  return result;
}

Tensor searchsorted_Tensor_k(const Tensor& sorted_sequence, const Tensor& self, bool out_int32,
                             bool right, std::optional<std::string> side,
                             std::optional<Tensor> sorter) {
  return searchsorted_impl(sorted_sequence, self, out_int32, right, side, sorter);
}
Tensor searchsorted_Scalar_k(const Tensor& sorted_sequence, const Scalar& self, bool out_int32,
                             bool right, std::optional<std::string> side,
                             std::optional<Tensor> sorter) {
  return searchsorted_impl(sorted_sequence, kernels::wrap_scalar(self), out_int32, right, side,
                           sorter);
}
Tensor bucketize_Tensor_k(const Tensor& self, const Tensor& boundaries, bool out_int32,
                          bool right) {
  meta::check_bucketize(boundaries);
  return searchsorted_impl(boundaries, self, out_int32, right, std::nullopt, std::nullopt);
}
Tensor bucketize_Scalar_k(const Scalar& self, const Tensor& boundaries, bool out_int32,
                          bool right) {
  meta::check_bucketize(boundaries);
  return searchsorted_impl(boundaries, kernels::wrap_scalar(self), out_int32, right, std::nullopt,
                           std::nullopt);
}

// The out= forms check out's dtype as torch does (after the other checks), then write into it.
Tensor searchsorted_into(Tensor out, const Tensor& boundaries, const Tensor& input, bool out_int32,
                         bool right, const std::optional<std::string>& side,
                         const std::optional<Tensor>& sorter) {
  meta::check_searchsorted(boundaries, input, out_int32, right, side, sorter);
  meta::check_searchsorted_out(out, out_int32);
  const Tensor result = searchsorted_impl(boundaries, input, out_int32, right, side, sorter);
  return kernels::write_result(out, result, "searchsorted", false);
}
Tensor searchsorted_Tensor_out_k(const Tensor& sorted_sequence, const Tensor& self, bool out_int32,
                                 bool right, std::optional<std::string> side,
                                 std::optional<Tensor> sorter, Tensor out) {
  return searchsorted_into(out, sorted_sequence, self, out_int32, right, side, sorter);
}
Tensor searchsorted_Scalar_out_k(const Tensor& sorted_sequence, const Scalar& self, bool out_int32,
                                 bool right, std::optional<std::string> side,
                                 std::optional<Tensor> sorter, Tensor out) {
  return searchsorted_into(out, sorted_sequence, kernels::wrap_scalar(self), out_int32, right, side,
                           sorter);
}
Tensor bucketize_Tensor_out_k(const Tensor& self, const Tensor& boundaries, bool out_int32,
                              bool right, Tensor out) {
  meta::check_bucketize(boundaries);
  return searchsorted_into(out, boundaries, self, out_int32, right, std::nullopt, std::nullopt);
}
Tensor bucketize_Scalar_out_k(const Scalar& self, const Tensor& boundaries, bool out_int32,
                              bool right, Tensor out) {
  meta::check_bucketize(boundaries);
  return searchsorted_into(out, boundaries, kernels::wrap_scalar(self), out_int32, right,
                           std::nullopt, std::nullopt);
}

// ---- cummax, cummin, logcumsumexp -------------------------------------------------------------

// torch's cummax_cummin_helper: an element at least as large (cummax) or small (cummin) as the
// running one takes its place, so ties report the last index; NaN takes over and stays.
std::tuple<Tensor, Tensor> cumulative_extreme(const Tensor& self, int64_t dim, bool is_max) {
  Tensor values = Tensor::empty(self.sizes(), self.dtype());
  Tensor indices = Tensor::empty(self.sizes(), ScalarType::Int64);
  if (self.dim() == 0) {
    values.copy_(self);
    indices.fill_(Scalar(int64_t{0}));
    return {values, indices};
  }
  if (self.numel() == 0) return {values, indices};
  const int64_t d = wrap_dim(dim, self.dim());
  meta::check_dtype(self.dtype(), is_max ? meta::kCummaxDtypes : meta::kCumminDtypes);
  const RowPlan p = plan_rows_along(self, d, values);
  dispatch_all(self.dtype(), is_max ? "cummax" : "cummin", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* vout = values.data<T>();
    int64_t* iout = indices.data<int64_t>();
    const int64_t n = p.row_len, is = p.row_stride, os = p.out_row_stride;
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const auto [io, oo] = row_offsets(p, r);
        T best = src[io];
        int64_t at = 0;
        for (int64_t i = 0; i < n; ++i) {
          const T x = src[io + i * is];
          const M xm = static_cast<M>(x), bm = static_cast<M>(best);
          if (is_nan_value(xm) || (!is_nan_value(bm) && (is_max ? xm >= bm : xm <= bm))) {
            best = x;
            at = i;
          }
          vout[oo + i * os] = best;
          iout[oo + i * os] = at;
        }
      }
    });
  });
  return {values, indices};
}

std::tuple<Tensor, Tensor> cummax_k(const Tensor& self, int64_t dim) {
  return cumulative_extreme(self, dim, true);
}
std::tuple<Tensor, Tensor> cummin_k(const Tensor& self, int64_t dim) {
  return cumulative_extreme(self, dim, false);
}

// torch's logcumsumexp kernel: log(exp(x) + exp(acc)) as log1p(exp(min - max)) + max in double
// (float for bfloat16), with two equal infinities kept as they are.
Tensor logcumsumexp_k(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim());
  meta::check_dtype(self.dtype(), meta::kLogcumsumexpDtypes);
  Tensor out = Tensor::empty(self.sizes(), self.dtype());
  const RowPlan p = plan_rows_along(self, d, out);
  dispatch_floating(self.dtype(), "logcumsumexp", [&]<typename T>() {
    using A = std::conditional_t<std::is_same_v<T, BFloat16>, float, double>;
    const T* src = p.in.data<T>();
    T* dst = out.data<T>();
    const int64_t n = p.row_len, is = p.row_stride, os = p.out_row_stride;
    for_row_ranges(p, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const auto [io, oo] = row_offsets(p, r);
        A acc = -std::numeric_limits<A>::infinity();
        for (int64_t i = 0; i < n; ++i) {
          const A x = static_cast<A>(static_cast<opmath_t<T>>(src[io + i * is]));
          const A lo = std::isnan(acc) ? acc : std::min(x, acc);
          const A hi = std::isnan(acc) ? acc : std::max(x, acc);
          acc = lo != hi || std::isfinite(lo) ? std::log1p(std::exp(lo - hi)) + hi : x;
          dst[oo + i * os] = static_cast<T>(acc);
        }
      }
    });
  });
  return out;
}

}  // namespace

}  // namespace ampjit::cpu

AMPJIT_KERNEL(sort, cpu::sort_k)
AMPJIT_KERNEL(sort_stable, cpu::sort_stable_k)
AMPJIT_KERNEL(topk, cpu::topk_k)
AMPJIT_KERNEL(kthvalue, cpu::kthvalue_k)
AMPJIT_KERNEL(kthvalue_values, cpu::kthvalue_values_k)
AMPJIT_KERNEL(median, cpu::median_k)
AMPJIT_KERNEL(median_dim, cpu::median_dim_k)
AMPJIT_KERNEL(nanmedian, cpu::nanmedian_k)
AMPJIT_KERNEL(nanmedian_dim, cpu::nanmedian_dim_k)
AMPJIT_KERNEL(mode, cpu::mode_k)
AMPJIT_KERNEL(_unique2, cpu::unique2_k)
AMPJIT_KERNEL(unique_dim, cpu::unique_dim_k)
AMPJIT_KERNEL(unique_consecutive, cpu::unique_consecutive_k)
AMPJIT_KERNEL(searchsorted_Tensor, cpu::searchsorted_Tensor_k)
AMPJIT_KERNEL(searchsorted_Scalar, cpu::searchsorted_Scalar_k)
AMPJIT_KERNEL(bucketize_Tensor, cpu::bucketize_Tensor_k)
AMPJIT_KERNEL(bucketize_Scalar, cpu::bucketize_Scalar_k)
AMPJIT_KERNEL(searchsorted_Tensor_out, cpu::searchsorted_Tensor_out_k)
AMPJIT_KERNEL(searchsorted_Scalar_out, cpu::searchsorted_Scalar_out_k)
AMPJIT_KERNEL(bucketize_Tensor_out, cpu::bucketize_Tensor_out_k)
AMPJIT_KERNEL(bucketize_Scalar_out, cpu::bucketize_Scalar_out_k)
AMPJIT_KERNEL(cummax, cpu::cummax_k)
AMPJIT_KERNEL(cummin, cpu::cummin_k)
AMPJIT_KERNEL(logcumsumexp, cpu::logcumsumexp_k)
