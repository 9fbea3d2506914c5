// softmax and log_softmax along one dim (runtime/ops/reduction.def). Each row is shifted by its
// max before exponentiating, so large inputs do not overflow; the sum of exponentials accumulates
// in double and every output rounds once (Note [Reduction accumulators] in kernels/cpu/reduce.h).
#include <limits>

#include "kernels/cpu/reduce.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// The input cast to along.compute (meta::softmax_along: the dtype= argument); a row of all -inf
// gives nan, as in torch (-inf - -inf).
Tensor softmax(const Tensor& self, const meta::AlongDim& along, bool log) {
  const Tensor in = self.dtype() == along.compute ? self : self.to(along.compute);
  Tensor out = Tensor::empty(in.sizes(), along.compute);
  const RowPlan p = plan_rows_along(in, along.dim, out);
  dispatch_floating(along.compute, log ? "log_softmax" : "softmax", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.in.data<T>();
    T* dst = out.data<T>();
    const int64_t n = p.row_len, is = p.row_stride, os = p.out_row_stride;
    // `cnt` adjacent rows starting at offsets io / oo (Note [Column blocks]), or one row (cnt 1).
    // Three passes: the max, the sum of exponentials, the output. softmax of float and double
    // keeps the exponentials in the output between the last two.
    auto rows = [&](int64_t cnt, int64_t io, int64_t oo) {
      M mx[kColumnBlock];
      double sum[kColumnBlock];
      std::fill(mx, mx + cnt, -std::numeric_limits<M>::infinity());
      std::fill(sum, sum + cnt, 0.0);
      for (int64_t i = 0; i < n; ++i) {
        const T* x = src + io + i * is;
        for (int64_t b = 0; b < cnt; ++b) mx[b] = std::max(mx[b], static_cast<M>(x[b]));
      }
      constexpr bool keep_exp = std::is_same_v<T, M>;
      for (int64_t i = 0; i < n; ++i) {
        const T* x = src + io + i * is;
        T* y = dst + oo + i * os;
        for (int64_t b = 0; b < cnt; ++b) {
          const M e = std::exp(static_cast<M>(x[b]) - mx[b]);
          sum[b] += e;
          if (keep_exp && !log) y[b] = static_cast<T>(e);
        }
      }
      for (int64_t i = 0; i < n; ++i) {
        const T* x = src + io + i * is;
        T* y = dst + oo + i * os;
        for (int64_t b = 0; b < cnt; ++b) {
          const M shifted = static_cast<M>(x[b]) - mx[b];
          if (log)
            y[b] = static_cast<T>(static_cast<double>(shifted) - std::log(sum[b]));
          else if (keep_exp)
            y[b] = static_cast<T>(static_cast<double>(y[b]) / sum[b]);
          else
            y[b] = static_cast<T>(static_cast<double>(std::exp(shifted)) / sum[b]);
        }
      }
    };
    if (use_column_blocks(p)) {
      for_each_column_block(
          p, [&](int64_t, int64_t cnt, int64_t io, int64_t oo) { rows(cnt, io, oo); });
    } else {
      for_each_row(p, [&](int64_t, int64_t io, int64_t oo) { rows(1, io, oo); });
    }
  });
  return out;  // along.result == along.compute
}

// The entry point of Note [Reduction forms] in kernels/reduce_meta.h.
struct RowLoops {
  static constexpr auto softmax = cpu::softmax;
};
using Forms = meta::ReductionForms<RowLoops>;

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(softmax_int, cpu::Forms::softmax_k)
AMPJIT_KERNEL(log_softmax_int, cpu::Forms::log_softmax_k)
