// Building blocks for CPU reductions, scans, softmax and losses: the row plan every reduction runs
// on, the generic reduction driver, accumulator types, and the internal sum/mean the loss kernels
// reduce with. Dims, shapes, dtypes and checks are decided in kernels/reduce_meta.h.
//
// Note [Reduction rows]
// A reduction over a set of dims reads its input as rows: one row per output element, holding the
// elements that reduce into it. plan_rows() describes the rows by the kept ("outer") dims' sizes
// and strides plus one (row_len, row_stride) pair. When the reduced dims do not merge into a single
// strided run (reducing dims 0 and 2 of a [a, b, c] tensor), the input is first copied with the
// reduced dims moved last, which makes every row contiguous. Rows keep the reduced dims in logical
// (row-major) order, so a position found in a row is the flat index torch reports (argmax with
// dim=None). Rows are walked in one of two ways:
//  - row by row (for_each_row, parallel over rows) when a row's elements are close together;
//  - Note [Column blocks]: when the rows are strided but neighbouring rows start at neighbouring
//    addresses (reducing dim 0 of a contiguous [R, K] tensor), reading a whole row per output
//    would touch a new page per element. for_each_column_block hands out blocks of up to
//    kColumnBlock adjacent rows instead, which the kernel walks together, element position by
//    element position, so every read is a contiguous run of the block's width.
//
// Note [Reducers]
// reduce_rows() runs a Reducer over the rows in whichever order the plan calls for, so each
// reduction states only its arithmetic, over op-math values M:
//   using Acc = ...;                            // the running state
//   Acc init(int64_t row) const;                // the row's starting state (may read per-row data)
//   void add(Acc& a, M v, int64_t i) const;     // element v at position i of the row
//   void combine(Acc& a, const Acc& b) const;   // merge a partial result over other positions
// combine must not depend on which side saw the earlier positions (ties keep the lower position
// explicitly): a row is reduced in four interleaved partial states so the adds pipeline, and one
// very long row (a full reduction) in fixed-size chunks across threads, combined in order, so the
// result does not depend on the thread count.
//
// Note [Reduction accumulators]
// Sums, means, products, variances and norms of floating types accumulate in double and round once
// to the result dtype: float16/bfloat16 (torch: float32) and float32 (torch: a float32 cascade sum)
// are then at least as accurate as torch, and a float32 result is the correctly rounded sum in all
// but rare ties. Integer sums and products accumulate in uint64_t, which wraps exactly like torch's
// int64 arithmetic without signed-overflow UB.
#pragma once
#include <cmath>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/reduce_meta.h"
#include "runtime/error.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor.h"

namespace ampjit::cpu {

// The row plan (Note [Reduction rows]). `in` may be a contiguous permuted copy of the input.
// Kept dims of size 1 are left out of the outer dims: they never move an offset.
struct RowPlan {
  Tensor in;
  DimVector outer_sizes;       // kept dims, outermost first
  DimVector outer_strides;     // their element strides in `in`
  DimVector out_strides;       // their element strides in the output (scans only)
  int64_t n_out = 1;           // number of rows
  int64_t row_len = 1;         // elements per row
  int64_t row_stride = 1;      // element stride within a row
  int64_t out_row_stride = 1;  // element stride of a row in the output (scans)
  bool scan = false;           // the output has the input's shape (plan_rows_along)
};

// Rows of `in` over the dims in `mask`; the output is a contiguous tensor of the kept dims.
RowPlan plan_rows(const Tensor& in, meta::DimMask mask);
// Rows of `in` along one dim, for ops whose output `out` has `in`'s shape (scans, softmax).
RowPlan plan_rows_along(const Tensor& in, int64_t dim, const Tensor& out);

// Calls f(row, in_offset, out_offset) for every row (element offsets into plan.in and the output;
// for reductions out_offset == row), in parallel chunks of rows.
template <typename F>
void for_each_row(const RowPlan& p, F&& f) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, p.row_len));
  const bool scan = p.scan;
  parallel_for(p.n_out, grain, [&](int64_t begin, int64_t end) {
    const int nd = static_cast<int>(p.outer_sizes.size());
    DimVector idx(nd, 0);
    int64_t in_off = 0, out_off = scan ? 0 : begin, rem = begin;
    for (int d = nd - 1; d >= 0; --d) {
      idx[d] = rem % p.outer_sizes[d];
      rem /= p.outer_sizes[d];
      in_off += idx[d] * p.outer_strides[d];
      if (scan) out_off += idx[d] * p.out_strides[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      f(r, in_off, out_off);
      if (!scan) ++out_off;
      for (int d = nd - 1; d >= 0; --d) {  // odometer step, innermost dim first
        in_off += p.outer_strides[d];
        if (scan) out_off += p.out_strides[d];
        if (++idx[d] < p.outer_sizes[d]) break;
        in_off -= idx[d] * p.outer_strides[d];
        if (scan) out_off -= idx[d] * p.out_strides[d];
        idx[d] = 0;
      }
    }
  });
}

// Note [Column blocks]: the widest block of adjacent rows walked together.
constexpr int64_t kColumnBlock = 64;

// Whether the plan's rows should be walked in column blocks: rows are strided, and the innermost
// kept dim is contiguous in the input (and in the output, for scans).
inline bool use_column_blocks(const RowPlan& p) {
  return p.row_len > 1 && p.row_stride != 1 && !p.outer_sizes.empty() &&
         p.outer_strides.back() == 1 && (!p.scan || p.out_strides.back() == 1);
}

// Calls f(first_row, count, in_offset, out_offset) for blocks of `count` <= kColumnBlock adjacent
// rows: row first_row + b starts at in_offset + b in plan.in and writes out_offset + b in the
// output (for reductions out_offset == first_row). Requires use_column_blocks(p).
template <typename F>
void for_each_column_block(const RowPlan& p, F&& f) {
  if (p.n_out == 0) return;
  const int nd = static_cast<int>(p.outer_sizes.size());
  const int64_t cols = p.outer_sizes[nd - 1];
  const int64_t nblocks = (cols + kColumnBlock - 1) / kColumnBlock;
  const int64_t units = p.n_out / cols * nblocks;
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / (p.row_len * kColumnBlock));
  parallel_for(units, grain, [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t c0 = (u % nblocks) * kColumnBlock;
      int64_t rem = u / nblocks, in_off = c0, out_off = c0;
      const int64_t r0 = rem * cols + c0;
      for (int d = nd - 2; d >= 0; --d) {
        const int64_t i = rem % p.outer_sizes[d];
        rem /= p.outer_sizes[d];
        in_off += i * p.outer_strides[d];
        if (p.scan) out_off += i * p.out_strides[d];
      }
      f(r0, std::min(kColumnBlock, cols - c0), in_off, p.scan ? out_off : r0);
    }
  });
}

// Rows longer than twice this, when there is only one, are split into chunks of this many
// elements reduced in parallel (Note [Reducers]).
constexpr int64_t kSplitChunk = 32768;

// One run of a row with four interleaved partial states (Note [Reducers]); positions start at i0.
template <typename M, typename T, typename R>
typename R::Acc reduce_run(const R& red, const T* x, int64_t n, int64_t s, int64_t row,
                           int64_t i0 = 0) {
  using Acc = typename R::Acc;
  Acc a0 = red.init(row), a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    red.add(a0, static_cast<M>(x[i * s]), i0 + i);
    red.add(a1, static_cast<M>(x[(i + 1) * s]), i0 + i + 1);
    red.add(a2, static_cast<M>(x[(i + 2) * s]), i0 + i + 2);
    red.add(a3, static_cast<M>(x[(i + 3) * s]), i0 + i + 3);
  }
  for (; i < n; ++i) red.add(a0, static_cast<M>(x[i * s]), i0 + i);
  red.combine(a0, a1);
  red.combine(a2, a3);
  red.combine(a0, a2);
  return a0;
}

// Runs reducer `red` (Note [Reducers]) over every row of `p` (whose input has dtype T) and calls
// emit(row, acc) once per row with its final state.
template <typename T, typename R, typename Emit>
void reduce_rows(const RowPlan& p, const R& red, Emit&& emit) {
  using M = opmath_t<T>;
  using Acc = typename R::Acc;
  const T* src = p.in.template data<T>();
  const int64_t n = p.row_len, s = p.row_stride;
  if (use_column_blocks(p)) {
    for_each_column_block(p, [&](int64_t r0, int64_t cnt, int64_t off, int64_t) {
      Acc acc[kColumnBlock];
      for (int64_t b = 0; b < cnt; ++b) acc[b] = red.init(r0 + b);
      for (int64_t i = 0; i < n; ++i) {
        const T* x = src + off + i * s;
        for (int64_t b = 0; b < cnt; ++b) red.add(acc[b], static_cast<M>(x[b]), i);
      }
      for (int64_t b = 0; b < cnt; ++b) emit(r0 + b, acc[b]);
    });
    return;
  }
  if (p.n_out == 1 && n >= 2 * kSplitChunk && max_threads() > 1) {
    const int64_t chunks = (n + kSplitChunk - 1) / kSplitChunk;
    std::vector<Acc> parts(static_cast<size_t>(chunks));
    parallel_for(chunks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const int64_t i0 = c * kSplitChunk;
        parts[static_cast<size_t>(c)] =
            reduce_run<M>(red, src + i0 * s, std::min(kSplitChunk, n - i0), s, 0, i0);
      }
    });
    for (int64_t c = 1; c < chunks; ++c) red.combine(parts[0], parts[static_cast<size_t>(c)]);
    emit(int64_t{0}, parts[0]);
    return;
  }
  for_each_row(
      p, [&](int64_t r, int64_t off, int64_t) { emit(r, reduce_run<M>(red, src + off, n, s, r)); });
}

// Note [Reduction accumulators]: the accumulator of a sum-like reduction over values of type M.
template <typename M>
using acc_t = std::conditional_t<std::is_integral_v<M>, uint64_t, double>;

template <typename T>
constexpr bool is_nan_value(T v) {
  if constexpr (std::is_integral_v<T>) {
    (void)v;
    return false;
  } else {
    return std::isnan(v);
  }
}

// Internal entry points shared with the loss kernels (no dispatcher round trip).
// `dims` empty means every dim.
Tensor sum_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                std::optional<ScalarType> dtype);
Tensor mean_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                 std::optional<ScalarType> dtype);
// ATen's loss reduction enum: 0 none, 1 mean, 2 sum (anything else: none, as apply_loss_reduction).
Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction);

}  // namespace ampjit::cpu
