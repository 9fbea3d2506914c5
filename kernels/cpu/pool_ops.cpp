// 2-D pooling (runtime/ops/conv.def): max_pool2d, avg_pool2d, adaptive_avg_pool2d, batched or
// not, for float32/float64/float16/bfloat16 and int64 (torch's CPU set).
//
// Note [Pooling does not use oneDNN]
// oneDNN's pooling differs from torch's at the edges, and torch's edges are the semantics:
//  - max pooling: torch propagates NaN (a NaN anywhere in a window is the result); oneDNN's
//    vector max drops it;
//  - ceil_mode with count_include_pad: torch divides by the window clipped to the padded input
//    (a window hanging past the right padding counts only up to it); oneDNN would express
//    ceil_mode as extra right padding and count that too;
//  - divisor_override, float64 and int64 have no oneDNN counterpart.
// Pooling is memory-bound, so the direct loops below (one plane per task, each output a small
// window reduction in the op-math type, rounded once) lose little against a primitive.
#include <algorithm>
#include <limits>
#include <tuple>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "runtime/boxing.h"
#include "runtime/layout.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// The dtypes torch's CPU pooling kernels take; one dispatch per op.
template <typename F>
decltype(auto) dispatch_pool(ScalarType t, const char* op, F&& f) {
  if (t == ScalarType::Int64) return f.template operator()<int64_t>();
  return dispatch_floating(t, op, std::forward<F>(f));
}

// A 2-element parameter from torch's int[2] (one value means both dims).
struct Pair {
  int64_t h, w;
};
Pair pair_of(const std::vector<int64_t>& v, const char* what) {
  AMPJIT_CHECK(v.size() == 1 || v.size() == 2, "{}", what);
  return v.size() == 1 ? Pair{v[0], v[0]} : Pair{v[0], v[1]};
}

// torch's pooling_output_shape: floor (or ceil) division, where with ceil_mode the last window
// must start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                    bool ceil_mode) {
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// The shape checks torch's pool2d_shape_check makes, and the 4-D contiguous input.
Tensor check_pool_input(const Tensor& self, const char* op) {
  const bool ok_dims = self.dim() == 3 || self.dim() == 4;
  bool nonempty = ok_dims;
  for (int64_t d = self.dim() == 4 ? 1 : 0; ok_dims && d < self.dim(); ++d)
    nonempty &= self.size(d) != 0;
  AMPJIT_CHECK(
      ok_dims && nonempty,
      "{}: Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but "
      "got: {}",
      op, self.shape_str());
  return (self.dim() == 3 ? self.unsqueeze(0) : self).contiguous();
}

// torch's pooling_output_shape checks its arguments before pool2d_shape_check runs, so these
// messages come first (and pool2d_shape_check's own padding check never fails after them).
void check_output_shape_args(Pair k, Pair s, Pair pad) {
  for (const auto& [kk, ss, pp] : {std::tuple{k.h, s.h, pad.h}, std::tuple{k.w, s.w, pad.w}}) {
    AMPJIT_CHECK(ss != 0, "stride should not be zero");
    AMPJIT_CHECK(pp >= 0, "pad must be non-negative, but got pad: {}", pp);
    AMPJIT_CHECK(pp <= kk / 2,
                 "pad should be at most half of kernel size, but got pad={} and kernel_size={}", pp,
                 kk);
  }
}

void check_window(Pair k, Pair s, Pair pad, Pair dil) {
  check_output_shape_args(k, s, pad);
  AMPJIT_CHECK(k.w > 0 && k.h > 0, "kernel size should be greater than zero, but got kH: {} kW: {}",
               k.h, k.w);
  AMPJIT_CHECK(s.w > 0 && s.h > 0, "stride should be greater than zero, but got dH: {} dW: {}", s.h,
               s.w);
  AMPJIT_CHECK(dil.w > 0 && dil.h > 0,
               "dilation should be greater than zero, but got dilationH: {} dilationW: {}", dil.h,
               dil.w);
}

void check_output(const Tensor& x4, int64_t oh, int64_t ow) {
  AMPJIT_CHECK(
      oh >= 1 && ow >= 1,
      "Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is too small",
      x4.size(1), x4.size(2), x4.size(3), x4.size(1), oh, ow);
}

// Output [N, C, oh, ow] for a 4-D input, viewed back to 3-D for an unbatched one.
Tensor shaped_result(const Tensor& result, const Tensor& self) {
  return self.dim() == 3 ? result.squeeze(0) : result;
}

// Runs body(in_plane, out_plane) for every (n, c) plane, in parallel.
template <typename T, typename Body>
void for_each_plane(const Tensor& x4, const Tensor& out, Body body) {
  const int64_t planes = x4.size(0) * x4.size(1);
  const int64_t in_sz = x4.size(2) * x4.size(3), out_sz = out.size(2) * out.size(3);
  const T* in = x4.data<T>();
  T* o = out.data<T>();
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(in_sz + out_sz, 1));
  parallel_for(planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) body(in + pl * in_sz, o + pl * out_sz);
  });
}

// The taps of one output position's window that land inside the input: the window starts at
// input index `start` (negative in the left padding), and taps [lo, hi) are inside.
struct Taps {
  int64_t start, lo, hi;
};
Taps window_taps(int64_t out, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t size) {
  const int64_t start = out * stride - pad;
  return {start, start >= 0 ? 0 : (-start + dil - 1) / dil,
          std::min(k, (size - start + dil - 1) / dil)};
}

// max_pool2d of a channels-last x into a channels-last result: each output pixel's C channels are
// one contiguous row, reduced over the window's rows of C with the row-major loop's rule (a larger
// value or a NaN wins), vectorized across channels. Parallel over the output rows of the batch.
Tensor max_pool2d_nhwc(const Tensor& x, Pair k, Pair s, Pair pad, Pair dil, int64_t oh,
                       int64_t ow) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  Tensor out = empty_channels_last(std::vector<int64_t>{N, C, oh, ow}, x.dtype());
  dispatch_pool(x.dtype(), "max_pool2d", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* in = x.data<T>();
    T* o = out.data<T>();
    const int64_t grain =
        std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(ow * C * k.h * k.w, 1));
    parallel_for(N * oh, grain, [&](int64_t rb, int64_t re) {
      std::vector<M> best(static_cast<size_t>(C));
      std::vector<unsigned char> nan(static_cast<size_t>(C));
      for (int64_t row = rb; row < re; ++row) {
        const int64_t n = row / oh, i = row % oh;
        const Taps r = window_taps(i, k.h, s.h, pad.h, dil.h, H);
        for (int64_t j = 0; j < ow; ++j) {
          const Taps c = window_taps(j, k.w, s.w, pad.w, dil.w, W);
          M lowest = std::numeric_limits<M>::lowest();
          if constexpr (std::is_floating_point_v<M>) lowest = -std::numeric_limits<M>::infinity();
          std::fill(best.begin(), best.end(), lowest);
          std::fill(nan.begin(), nan.end(), 0);
          M* bp = best.data();
          unsigned char* np = nan.data();
          for (int64_t a = r.lo; a < r.hi; ++a)
            for (int64_t b = c.lo; b < c.hi; ++b) {
              const T* px = in + ((n * H + r.start + a * dil.h) * W + c.start + b * dil.w) * C;
              for (int64_t c = 0; c < C; ++c) {
                const M v = static_cast<M>(px[c]);
                bp[c] = v > bp[c] ? v : bp[c];
                np[c] |= v != v;
              }
            }
          T* dst = o + ((n * oh + i) * ow + j) * C;
          for (int64_t c = 0; c < C; ++c) {
            M v = bp[c];
            if constexpr (std::is_floating_point_v<M>) {
              if (np[c]) v = std::numeric_limits<M>::quiet_NaN();
            }
            dst[c] = static_cast<T>(v);
          }
        }
      }
    });
  });
  return out;
}

// max_pool2d's window from its int[2] arguments, with torch's checks and messages.
struct MaxPoolWindow {
  Pair k, s, pad, dil;
};
MaxPoolWindow max_pool_window(const std::vector<int64_t>& kernel_size,
                              const std::vector<int64_t>& stride,
                              const std::vector<int64_t>& padding,
                              const std::vector<int64_t>& dilation) {
  const Pair k = pair_of(
      kernel_size, "max_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  AMPJIT_CHECK(stride.size() <= 2,
               "max_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  const Pair s = stride.empty() ? k : pair_of(stride, "");
  const Pair pad =
      pair_of(padding, "max_pool2d: padding must either be a single int, or a tuple of two ints");
  const Pair dil =
      pair_of(dilation, "max_pool2d: dilation must be either a single int, or a tuple of two ints");
  check_window(k, s, pad, dil);
  return {k, s, pad, dil};
}

Tensor max_pool2d_k(const Tensor& self, const std::vector<int64_t>& kernel_size,
                    const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                    const std::vector<int64_t>& dilation, bool ceil_mode) {
  // plain variables, not a structured binding: the loops' lambdas capture them (clang 14)
  const MaxPoolWindow win = max_pool_window(kernel_size, stride, padding, dilation);
  const Pair k = win.k, s = win.s, pad = win.pad, dil = win.dil;
  // Note [Channels-last tensors]: a channels-last input pools in its own layout.
  const bool nhwc = is_channels_last(self);
  const Tensor x = nhwc ? self : check_pool_input(self, "max_pool2d");
  const int64_t H = x.size(2), W = x.size(3);
  const int64_t oh = pooled_size(H, k.h, pad.h, s.h, dil.h, ceil_mode);
  const int64_t ow = pooled_size(W, k.w, pad.w, s.w, dil.w, ceil_mode);
  check_output(x, oh, ow);
  if (nhwc) return max_pool2d_nhwc(x, k, s, pad, dil, oh, ow);
  Tensor out = Tensor::empty(std::vector<int64_t>{x.size(0), x.size(1), oh, ow}, x.dtype());
  dispatch_pool(x.dtype(), "max_pool2d", [&]<typename T>() {
    using M = opmath_t<T>;
    // The windows' taps, the same for every plane (window_taps divides).
    std::vector<Taps> rows(static_cast<size_t>(oh)), cols(static_cast<size_t>(ow));
    for (int64_t i = 0; i < oh; ++i) rows[i] = window_taps(i, k.h, s.h, pad.h, dil.h, H);
    for (int64_t j = 0; j < ow; ++j) cols[j] = window_taps(j, k.w, s.w, pad.w, dil.w, W);
    // The columns whose windows lie inside the input: [j0, j1) (cols are monotonic).
    int64_t j0 = 0, j1 = ow;
    while (j0 < ow && cols[j0].lo != 0) ++j0;
    while (j1 > j0 && cols[j1 - 1].hi != k.w) --j1;
    for_each_plane<T>(x, out, [&](const T* in, T* o) {
      std::vector<M> best(static_cast<size_t>(j1 - j0));
      std::vector<unsigned char> nans(static_cast<size_t>(j1 - j0));
      for (int64_t i = 0; i < oh; ++i) {
        const Taps r = rows[i];  // the rows inside the input
        // Interior columns tap by tap, each tap a loop over the columns with no dependence
        // between them: the same compares in the same order per output as the loop below.
        if (j1 > j0) {
          M lowest = std::numeric_limits<M>::lowest();
          if constexpr (std::is_floating_point_v<M>) lowest = -std::numeric_limits<M>::infinity();
          const int64_t n = j1 - j0, sw = s.w;
          M* bp = best.data();
          unsigned char* np = nans.data();
          std::fill_n(bp, n, lowest);
          std::fill_n(np, n, 0);
          // strides 1 and 2 as constants, so that the loads vectorize
          auto taps = [&]<int64_t kStride>(std::integral_constant<int64_t, kStride>) {
            const int64_t step = kStride ? kStride : sw;
            for (int64_t a = r.lo; a < r.hi; ++a)
              for (int64_t b = 0; b < k.w; ++b) {
                const T* p = in + (r.start + a * dil.h) * W + cols[j0].start + b * dil.w;
                for (int64_t j = 0; j < n; ++j) {
                  const M v = static_cast<M>(p[j * step]);
                  bp[j] = v > bp[j] ? v : bp[j];
                  np[j] |= v != v;
                }
              }
          };
          if (sw == 1)
            taps(std::integral_constant<int64_t, 1>{});
          else if (sw == 2)
            taps(std::integral_constant<int64_t, 2>{});
          else
            taps(std::integral_constant<int64_t, 0>{});
          for (int64_t j = 0; j < n; ++j) {
            M v = bp[j];
            if constexpr (std::is_floating_point_v<M>) {
              if (np[j]) v = std::numeric_limits<M>::quiet_NaN();
            }
            o[i * ow + j0 + j] = static_cast<T>(v);
          }
        }
        for (int64_t j = 0; j < ow; ++j) {
          if (j == j0 && j1 > j0) j = j1;  // the interior is done above
          if (j >= ow) break;
          const Taps c = cols[j];
          // torch's rule: a value replaces the maximum when larger or NaN, so any NaN in the
          // window is the result. Kept branch-free (a max, and a NaN flag on the side): random
          // data mispredicts a compare-and-branch half the time. Windows are never empty
          // (padding is at most half the kernel).
          M best = std::numeric_limits<M>::lowest();
          if constexpr (std::is_floating_point_v<M>) best = -std::numeric_limits<M>::infinity();
          bool nan = false;
          for (int64_t a = r.lo; a < r.hi; ++a) {
            const T* row = in + (r.start + a * dil.h) * W + c.start;
            for (int64_t b = c.lo; b < c.hi; ++b) {
              const M v = static_cast<M>(row[b * dil.w]);
              best = v > best ? v : best;
              nan |= v != v;
            }
          }
          if constexpr (std::is_floating_point_v<M>) {
            if (nan) best = std::numeric_limits<M>::quiet_NaN();
          }
          o[i * ow + j] = static_cast<T>(best);
        }
      }
    });
  });
  return shaped_result(out, self);
}

// max_pool2d_with_indices: the maxima and where they are (the flat index into the input's H x W
// plane), torch's CPU rule exactly: scanning the window row by row, a value replaces the maximum
// when larger or NaN, starting from the window's first element inside the input. What autograd
// records for max_pool2d, so that backward scatters the gradient by the indices in one pass.
// Computed row-major; a channels-last input gets channels-last results.
std::tuple<Tensor, Tensor> max_pool2d_with_indices_k(
    const Tensor& self, const std::vector<int64_t>& kernel_size, const std::vector<int64_t>& stride,
    const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, bool ceil_mode) {
  // plain variables, not a structured binding: the loops' lambdas capture them (clang 14)
  const MaxPoolWindow win = max_pool_window(kernel_size, stride, padding, dilation);
  const Pair k = win.k, s = win.s, pad = win.pad, dil = win.dil;
  const Tensor x = check_pool_input(self, "max_pool2d_with_indices");
  const int64_t H = x.size(2), W = x.size(3);
  const int64_t oh = pooled_size(H, k.h, pad.h, s.h, dil.h, ceil_mode);
  const int64_t ow = pooled_size(W, k.w, pad.w, s.w, dil.w, ceil_mode);
  check_output(x, oh, ow);
  const std::vector<int64_t> shape{x.size(0), x.size(1), oh, ow};
  Tensor out = Tensor::empty(shape, x.dtype());
  Tensor idx = Tensor::empty(shape, ScalarType::Int64);
  int64_t* const ip = idx.data<int64_t>();
  dispatch_pool(x.dtype(), "max_pool2d_with_indices", [&]<typename T>() {
    using M = opmath_t<T>;
    // The windows' taps, the same for every plane (window_taps divides).
    std::vector<Taps> rows(static_cast<size_t>(oh)), cols(static_cast<size_t>(ow));
    for (int64_t i = 0; i < oh; ++i) rows[i] = window_taps(i, k.h, s.h, pad.h, dil.h, H);
    for (int64_t j = 0; j < ow; ++j) cols[j] = window_taps(j, k.w, s.w, pad.w, dil.w, W);
    for_each_plane<T>(x, out, [&](const T* in, T* o) {
      int64_t* ix = ip + (o - out.data<T>());
      for (int64_t i = 0; i < oh; ++i) {
        const Taps r = rows[i];
        for (int64_t j = 0; j < ow; ++j) {
          const Taps c = cols[j];
          int64_t where = (r.start + r.lo * dil.h) * W + c.start + c.lo * dil.w;
          int64_t nan_at = -1;
          M best = std::numeric_limits<M>::lowest();
          if constexpr (std::is_floating_point_v<M>) best = -std::numeric_limits<M>::infinity();
          // Branch-free (selects and a max: on random data a branch mispredicts half the time).
          // A NaN is the result, at the last NaN's place, as torch's "larger or NaN" rule gives.
          for (int64_t a = r.lo; a < r.hi; ++a) {
            const int64_t row = (r.start + a * dil.h) * W + c.start;
            for (int64_t b = c.lo; b < c.hi; ++b) {
              const int64_t at = row + b * dil.w;
              const M v = static_cast<M>(in[at]);
              // integer masks: the compiler turns a select on a float compare into a branch
              const int64_t gt = -static_cast<int64_t>(v > best);
              const int64_t nan = -static_cast<int64_t>(v != v);
              where ^= (where ^ at) & gt;
              nan_at ^= (nan_at ^ at) & nan;
              best = std::max(best, v);
            }
          }
          if constexpr (std::is_floating_point_v<M>) {
            if (nan_at >= 0) {
              best = std::numeric_limits<M>::quiet_NaN();
              where = nan_at;
            }
          }
          o[i * ow + j] = static_cast<T>(best);
          ix[i * ow + j] = where;
        }
      }
    });
  });
  if (is_channels_last(self)) return {to_channels_last(out), to_channels_last(idx)};
  return {shaped_result(out, self), shaped_result(idx, self)};
}

Tensor avg_pool2d_k(const Tensor& self, const std::vector<int64_t>& kernel_size,
                    const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                    bool ceil_mode, bool count_include_pad,
                    std::optional<int64_t> divisor_override) {
  const Pair k = pair_of(
      kernel_size, "avg_pool2d: kernel_size must either be a single int, or a tuple of two ints");
  AMPJIT_CHECK(stride.size() <= 2,
               "avg_pool2d: stride must either be omitted, a single int, or a tuple of two ints");
  const Pair s = stride.empty() ? k : pair_of(stride, "");
  const Pair pad =
      pair_of(padding, "avg_pool2d: padding must either be a single int, or a tuple of two ints");
  AMPJIT_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  check_window(k, s, pad, Pair{1, 1});
  const Tensor x = check_pool_input(self, "avg_pool2d");
  const int64_t H = x.size(2), W = x.size(3);
  const int64_t oh = pooled_size(H, k.h, pad.h, s.h, 1, ceil_mode);
  const int64_t ow = pooled_size(W, k.w, pad.w, s.w, 1, ceil_mode);
  check_output(x, oh, ow);
  Tensor out = Tensor::empty(std::vector<int64_t>{x.size(0), x.size(1), oh, ow}, x.dtype());
  dispatch_pool(x.dtype(), "avg_pool2d", [&]<typename T>() {
    using M = opmath_t<T>;
    for_each_plane<T>(x, out, [&](const T* in, T* o) {
      for (int64_t i = 0; i < oh; ++i) {
        for (int64_t j = 0; j < ow; ++j) {
          // torch's divisor: the window clipped to the padded input (count_include_pad), or to the
          // input itself.
          int64_t r0 = i * s.h - pad.h, c0 = j * s.w - pad.w;
          int64_t r1 = std::min(r0 + k.h, H + pad.h), c1 = std::min(c0 + k.w, W + pad.w);
          const int64_t padded_count = (r1 - r0) * (c1 - c0);
          r0 = std::max<int64_t>(r0, 0);
          c0 = std::max<int64_t>(c0, 0);
          r1 = std::min(r1, H);
          c1 = std::min(c1, W);
          if (r0 >= r1 || c0 >= c1) {
            o[i * ow + j] = static_cast<T>(M(0));
            continue;
          }
          M sum = 0;
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t c = c0; c < c1; ++c) sum += static_cast<M>(in[r * W + c]);
          const int64_t divisor = divisor_override    ? *divisor_override
                                  : count_include_pad ? padded_count
                                                      : (r1 - r0) * (c1 - c0);
          o[i * ow + j] = static_cast<T>(sum / static_cast<M>(divisor));
        }
      }
    });
  });
  return shaped_result(out, self);
}

// Output cell i of n over an input of length len covers [floor(i*len/n), ceil((i+1)*len/n)).
int64_t adaptive_start(int64_t i, int64_t n, int64_t len) {
  return (i * len) / n;
}
int64_t adaptive_end(int64_t i, int64_t n, int64_t len) {
  return ((i + 1) * len + n - 1) / n;
}

Tensor adaptive_avg_pool2d_k(const Tensor& self, const std::vector<int64_t>& output_size) {
  if (is_channels_last(self))  // Note [Channels-last tensors]: row-major, converted once
    return to_channels_last(adaptive_avg_pool2d_k(self.contiguous(), output_size));
  AMPJIT_CHECK(output_size.size() == 2 || output_size.size() == 1,
               "adaptive_avg_pool2d: output_size must be 2");
  const Pair os = pair_of(output_size, "");
  AMPJIT_CHECK(
      os.h >= 0 && os.w >= 0,
      "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but "
      "received {{{}, {}}}",
      os.h, os.w);
  AMPJIT_CHECK(self.dim() == 3 || self.dim() == 4,
               "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {}", self.shape_str());
  for (int64_t d = self.dim() - 3; d < self.dim(); ++d) {
    AMPJIT_CHECK(
        self.size(d) > 0,
        "adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
        "but input has sizes {} with dimension {} being empty",
        self.shape_str(), d);
  }
  const Tensor x = (self.dim() == 3 ? self.unsqueeze(0) : self).contiguous();
  const int64_t H = x.size(2), W = x.size(3);
  Tensor out = Tensor::empty(std::vector<int64_t>{x.size(0), x.size(1), os.h, os.w}, x.dtype());
  if (out.numel() == 0) return shaped_result(out, self);
  dispatch_pool(x.dtype(), "adaptive_avg_pool2d", [&]<typename T>() {
    using M = opmath_t<T>;
    for_each_plane<T>(x, out, [&](const T* in, T* o) {
      for (int64_t i = 0; i < os.h; ++i) {
        const int64_t r0 = adaptive_start(i, os.h, H), r1 = adaptive_end(i, os.h, H);
        for (int64_t j = 0; j < os.w; ++j) {
          const int64_t c0 = adaptive_start(j, os.w, W), c1 = adaptive_end(j, os.w, W);
          M sum = 0;
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t c = c0; c < c1; ++c) sum += static_cast<M>(in[r * W + c]);
          // torch divides by the window height, then by its width.
          o[i * os.w + j] = static_cast<T>(sum / static_cast<M>(r1 - r0) / static_cast<M>(c1 - c0));
        }
      }
    });
  });
  return shaped_result(out, self);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(max_pool2d, cpu::max_pool2d_k)
AMPJIT_KERNEL(max_pool2d_with_indices, cpu::max_pool2d_with_indices_k)
AMPJIT_KERNEL(avg_pool2d, cpu::avg_pool2d_k)
AMPJIT_KERNEL(adaptive_avg_pool2d, cpu::adaptive_avg_pool2d_k)
