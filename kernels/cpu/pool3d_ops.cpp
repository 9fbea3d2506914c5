// Pooling over three spatial dimensions (runtime/ops/nn_extra.def): max_pool3d (with indices),
// avg_pool3d and its backward, adaptive_avg_pool3d and its backward, adaptive_max_pool2d/3d and
// max_unpool2d/3d, with torch 1.13's checks, messages and tie rules (aten/src/ATen/native/
// DilatedMaxPool3d.cpp, AveragePool3d.cpp, AdaptiveAveragePooling3d.cpp, AdaptiveMaxPooling2d.cpp,
// AdaptiveMaxPooling3d.cpp, MaxUnpooling.cpp). A 2-D op is the 3-D loop with depth 1. Each (batch,
// channel) plane is one task of a parallel_for; each output is a small window reduction in the
// op-math type, rounded once (Note [Pooling does not use oneDNN] in pool_ops.cpp).
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

using IntList = std::vector<int64_t>;

// Sizes or parameters of the three spatial dimensions (depth, height, width).
struct Dims3 {
  int64_t t, h, w;
  int64_t operator[](int i) const { return i == 0 ? t : i == 1 ? h : w; }
  int64_t numel() const { return t * h * w; }
};

// torch's int[3] argument: one value for all three dimensions, or three.
Dims3 triple(const IntList& v) {
  return v.size() == 1 ? Dims3{v[0], v[0], v[0]} : Dims3{v[0], v[1], v[2]};
}

// The input as [planes, T, H, W] (contiguous), for an input with `nsp` spatial dimensions and an
// optional batch dimension, and the sizes of its leading (batch, channel) dimensions.
struct Planes {
  Tensor x;           // [N*C, T, H, W], contiguous
  IntList lead;       // the input's dimensions before the spatial ones
  Dims3 in;           // spatial sizes (T = 1 for a 2-D op)
  int64_t count = 0;  // N*C
};
Planes planes_of(const Tensor& self, int nsp) {
  Planes p;
  const int64_t nd = self.dim();
  p.lead.assign(self.sizes().begin(), self.sizes().end() - nsp);
  p.count = numel_of(p.lead);
  p.in = nsp == 3 ? Dims3{self.size(nd - 3), self.size(nd - 2), self.size(nd - 1)}
                  : Dims3{1, self.size(nd - 2), self.size(nd - 1)};
  p.x = self.contiguous().reshape(IntList{p.count, p.in.t, p.in.h, p.in.w});
  return p;
}
// A result [planes, out] viewed back to the input's leading dimensions and `nsp` spatial ones.
Tensor unplane(const Tensor& r, const Planes& p, int nsp, Dims3 out) {
  IntList shape = p.lead;
  if (nsp == 3) shape.push_back(out.t);
  shape.push_back(out.h);
  shape.push_back(out.w);
  return r.reshape(shape);
}

// Runs body(plane) for every plane, in parallel; `work` is the cost of one plane.
template <typename Body>
void for_planes(int64_t count, int64_t work, Body body) {
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(work, 1));
  parallel_for(count, grain, [&](int64_t b, int64_t e) {
    for (int64_t pl = b; pl < e; ++pl) body(pl);
  });
}

Tensor zeros_of(const IntList& sizes, ScalarType dtype) {
  Tensor t = Tensor::empty(sizes, dtype);
  t.fill_(Scalar(int64_t{0}));
  return t;
}

template <typename M>
M lowest_of() {
  if constexpr (std::is_floating_point_v<M>) return -std::numeric_limits<M>::infinity();
  return std::numeric_limits<M>::lowest();
}
template <typename M>
bool is_nan(M v) {
  if constexpr (std::is_floating_point_v<M>) return std::isnan(v);
  return false;
}

// The dtypes torch's CPU pooling kernels take (avg_pool3d also takes int64).
template <typename F>
decltype(auto) dispatch_pool(ScalarType t, const char* op, bool with_int64, F&& f) {
  if (with_int64 && t == ScalarType::Int64) return f.template operator()<int64_t>();
  return dispatch_floating(t, op, std::forward<F>(f));
}

// torch's pooling_output_shape: floor (or ceil) division; with ceil_mode the last window must
// start inside the input or its left padding.
int64_t pooled_size(int64_t in, int64_t k, int64_t pad, int64_t stride, int64_t dilation,
                    bool ceil_mode) {
  AMPJIT_CHECK(stride != 0, "stride should not be zero");
  AMPJIT_CHECK(pad >= 0, "pad must be non-negative, but got pad: {}", pad);
  AMPJIT_CHECK(pad <= k / 2,
               "pad should be at most half of kernel size, but got pad={} and kernel_size={}", pad,
               k);
  const int64_t num = in + 2 * pad - dilation * (k - 1) - 1 + (ceil_mode ? stride - 1 : 0);
  int64_t out = (num >= 0 ? num / stride : -((-num + stride - 1) / stride)) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad) --out;
  return out;
}

// ---- max_pool3d ---------------------------------------------------------------------------------

// A window's geometry: kernel, stride, padding, dilation.
struct Window {
  Dims3 k, s, pad, dil;
};

// torch's pool3d_shape_check, for max_pool3d and avg_pool3d (which also checks the input is at
// least the kernel); its padding check is pooled_size's, which runs first.
void pool3d_shape_check(const Tensor& x, const Window& w, Dims3 in, Dims3 out, const char* fn,
                        bool check_input_size) {
  AMPJIT_CHECK(w.k.t > 0 && w.k.w > 0 && w.k.h > 0,
               "kernel size should be greater than zero, but got kT: {} kH: {} kW: {}", w.k.t,
               w.k.h, w.k.w);
  AMPJIT_CHECK(w.s.t > 0 && w.s.w > 0 && w.s.h > 0,
               "stride should be greater than zero, but got dT: {} dH: {} dW: {}", w.s.t, w.s.h,
               w.s.w);
  AMPJIT_CHECK(
      w.dil.t > 0 && w.dil.w > 0 && w.dil.h > 0,
      "dilation should be greater than zero, but got dilationT: {} dilationH: {} dilationW: {}",
      w.dil.t, w.dil.h, w.dil.w);
  const int64_t nd = x.dim();
  AMPJIT_CHECK(nd == 4 || nd == 5, "{}: Expected 4D or 5D tensor for input, but got: {}", fn,
               x.shape_str());
  for (int64_t i = nd == 5 ? 1 : 0; i < nd; ++i) {
    AMPJIT_CHECK(x.size(i) > 0,
                 "{}: Expected input's non-batch dimensions to have positive length, but input "
                 "has a shape of {} and non-batch dimension {} has length zero!",
                 fn, x.shape_str(), x.size(i));
  }
  if (check_input_size) {
    AMPJIT_CHECK(in.t >= w.k.t && in.h >= w.k.h && in.w >= w.k.w,
                 "input image (T: {} H: {} W: {}) smaller than kernel size (kT: {} kH: {} kW: {})",
                 in.t, in.h, in.w, w.k.t, w.k.h, w.k.w);
  }
  const int64_t slices = x.size(nd - 4);
  AMPJIT_CHECK(out.t >= 1 && out.w >= 1 && out.h >= 1,
               "Given input size: ({}x{}x{}x{}). Calculated output size: ({}x{}x{}x{}). Output "
               "size is too small",
               slices, in.t, in.h, in.w, slices, out.t, out.h, out.w);
}

// The window of max_pool3d's int[3] arguments, with torch's checks and messages.
Window max_pool3d_window(const IntList& kernel_size, const IntList& stride, const IntList& padding,
                         const IntList& dilation) {
  AMPJIT_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
               "max_pool3d: kernel_size must either be a single int, or a tuple of three ints");
  AMPJIT_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
               "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints");
  AMPJIT_CHECK(padding.size() == 1 || padding.size() == 3,
               "max_pool3d: padding must either be a single int, or a tuple of three ints");
  AMPJIT_CHECK(dilation.size() == 1 || dilation.size() == 3,
               "max_pool3d: dilation must be either a single int, or a tuple of three ints");
  const Dims3 k = triple(kernel_size);
  return {k, stride.empty() ? k : triple(stride), triple(padding), triple(dilation)};
}

// The taps of output position `o` of one dimension that land in the input: the window starts at
// `start` (negative in the left padding); taps [lo, hi) are inside.
struct Taps {
  int64_t start, lo, hi;
};
Taps window_taps(int64_t o, int64_t k, int64_t stride, int64_t pad, int64_t dil, int64_t size) {
  const int64_t start = o * stride - pad;
  return {start, start >= 0 ? 0 : (-start + dil - 1) / dil,
          std::min(k, (size - start + dil - 1) / dil)};
}

// max_pool3d_with_indices: torch's CPU rule, scanning the window depth, row, column: a value
// replaces the maximum when larger or NaN, starting from the window's first tap inside the input
// (the index is that tap's when nothing is larger). Indices are flat over the input's T*H*W.
std::tuple<Tensor, Tensor> max_pool3d_with_indices_k(const Tensor& self, IntList kernel_size,
                                                     IntList stride, IntList padding,
                                                     IntList dilation, bool ceil_mode) {
  const Window win = max_pool3d_window(kernel_size, stride, padding, dilation);
  AMPJIT_CHECK(self.dim() == 4 || self.dim() == 5,
               "non-empty 4D or 5D (batch mode) tensor expected for input");
  const Planes p = planes_of(self, 3);
  const Dims3 in = p.in;
  Dims3 out{};
  out.t = pooled_size(in.t, win.k.t, win.pad.t, win.s.t, win.dil.t, ceil_mode);
  out.h = pooled_size(in.h, win.k.h, win.pad.h, win.s.h, win.dil.h, ceil_mode);
  out.w = pooled_size(in.w, win.k.w, win.pad.w, win.s.w, win.dil.w, ceil_mode);
  pool3d_shape_check(self, win, in, out, "max_pool3d_with_indices_out_cpu_template()", false);
  Tensor result = Tensor::empty(IntList{p.count, out.t, out.h, out.w}, self.dtype());
  Tensor indices = Tensor::empty(IntList{p.count, out.t, out.h, out.w}, ScalarType::Int64);
  dispatch_pool(self.dtype(), "max_pool3d_with_indices_cpu", false, [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.x.data<T>();
    T* dst = result.data<T>();
    int64_t* idx = indices.data<int64_t>();
    for_planes(p.count, out.numel() * win.k.numel(), [&](int64_t pl) {
      const T* ip = src + pl * in.numel();
      T* op = dst + pl * out.numel();
      int64_t* xp = idx + pl * out.numel();
      for (int64_t ot = 0; ot < out.t; ++ot) {
        const Taps tt = window_taps(ot, win.k.t, win.s.t, win.pad.t, win.dil.t, in.t);
        for (int64_t oh = 0; oh < out.h; ++oh) {
          const Taps th = window_taps(oh, win.k.h, win.s.h, win.pad.h, win.dil.h, in.h);
          for (int64_t ow = 0; ow < out.w; ++ow) {
            const Taps tw = window_taps(ow, win.k.w, win.s.w, win.pad.w, win.dil.w, in.w);
            int64_t where =
                ((tt.start + tt.lo * win.dil.t) * in.h + th.start + th.lo * win.dil.h) * in.w +
                tw.start + tw.lo * win.dil.w;
            M best = lowest_of<M>();
            for (int64_t a = tt.lo; a < tt.hi; ++a)
              for (int64_t b = th.lo; b < th.hi; ++b) {
                const int64_t row =
                    ((tt.start + a * win.dil.t) * in.h + th.start + b * win.dil.h) * in.w +
                    tw.start;
                for (int64_t c = tw.lo; c < tw.hi; ++c) {
                  const int64_t at = row + c * win.dil.w;
                  const M v = static_cast<M>(ip[at]);
                  if (v > best || is_nan(v)) {
                    best = v;
                    where = at;
                  }
                }
              }
            const int64_t o = (ot * out.h + oh) * out.w + ow;
            op[o] = static_cast<T>(best);
            xp[o] = where;
          }
        }
      }
    });
  });
  return {unplane(result, p, 3, out), unplane(indices, p, 3, out)};
}

Tensor max_pool3d_k(const Tensor& self, IntList kernel_size, IntList stride, IntList padding,
                    IntList dilation, bool ceil_mode) {
  return std::get<0>(max_pool3d_with_indices_k(self, std::move(kernel_size), std::move(stride),
                                               std::move(padding), std::move(dilation), ceil_mode));
}

// ---- avg_pool3d
// -----------------------------------------------------------------------------------

struct AvgPool3d {
  Window win;
  Dims3 out;
};
// avg_pool3d's window and output size, with torch's checks (AveragePool3d.cpp's meta function).
AvgPool3d avg_pool3d_geometry(const Tensor& self, const IntList& kernel_size, const IntList& stride,
                              const IntList& padding, bool ceil_mode,
                              std::optional<int64_t> divisor_override) {
  AMPJIT_CHECK(kernel_size.size() == 1 || kernel_size.size() == 3,
               "avg_pool3d: kernel_size must be a single int, or a tuple of three ints");
  AMPJIT_CHECK(stride.empty() || stride.size() == 1 || stride.size() == 3,
               "avg_pool3d: stride must be omitted, a single int, or a tuple of three ints");
  AMPJIT_CHECK(padding.size() == 1 || padding.size() == 3,
               "avg_pool3d: padding must be a single int, or a tuple of three ints");
  AMPJIT_CHECK(self.dim() == 4 || self.dim() == 5,
               "non-empty 4D or 5D (batch mode) tensor expected for input");
  AMPJIT_CHECK(!divisor_override || *divisor_override != 0, "divisor must be not zero");
  const Dims3 k = triple(kernel_size);
  const Window win{k, stride.empty() ? k : triple(stride), triple(padding), Dims3{1, 1, 1}};
  const int64_t nd = self.dim();
  const Dims3 in{self.size(nd - 3), self.size(nd - 2), self.size(nd - 1)};
  const Dims3 out{pooled_size(in.t, k.t, win.pad.t, win.s.t, 1, ceil_mode),
                  pooled_size(in.h, k.h, win.pad.h, win.s.h, 1, ceil_mode),
                  pooled_size(in.w, k.w, win.pad.w, win.s.w, 1, ceil_mode)};
  pool3d_shape_check(self, win, in, out, "avg_pool3d()", true);
  return {win, out};
}

// One output's window clipped to the input, and torch's divisor for it: the window clipped to the
// padded input (count_include_pad), to the input itself, or the override. Empty when the window
// lies in the padding alone.
struct AvgWindow {
  Dims3 lo, hi;
  int64_t divisor;
  bool empty;
};
AvgWindow avg_window(const Window& w, Dims3 in, int64_t ot, int64_t oh, int64_t ow,
                     bool count_include_pad, std::optional<int64_t> divisor_override) {
  int64_t lo[3], hi[3];
  const int64_t o[3] = {ot, oh, ow};
  int64_t pool_size = 1, inside = 1;
  bool empty = false;
  for (int i = 0; i < 3; ++i) {
    lo[i] = o[i] * w.s[i] - w.pad[i];
    hi[i] = std::min(lo[i] + w.k[i], in[i] + w.pad[i]);
    pool_size *= hi[i] - lo[i];
    lo[i] = std::max<int64_t>(lo[i], 0);
    hi[i] = std::min(hi[i], in[i]);
    empty |= lo[i] >= hi[i];
    inside *= hi[i] - lo[i];
  }
  const int64_t divisor = divisor_override    ? *divisor_override
                          : count_include_pad ? pool_size
                                              : inside;
  return {{lo[0], lo[1], lo[2]}, {hi[0], hi[1], hi[2]}, divisor, empty};
}

Tensor avg_pool3d_k(const Tensor& self, IntList kernel_size, IntList stride, IntList padding,
                    bool ceil_mode, bool count_include_pad,
                    std::optional<int64_t> divisor_override) {
  const AvgPool3d g =
      avg_pool3d_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  const Planes p = planes_of(self, 3);
  const Dims3 in = p.in, out = g.out;
  Tensor result = Tensor::empty(IntList{p.count, out.t, out.h, out.w}, self.dtype());
  dispatch_pool(self.dtype(), "avg_pool3d_out_frame", true, [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.x.data<T>();
    T* dst = result.data<T>();
    for_planes(p.count, out.numel() * g.win.k.numel(), [&](int64_t pl) {
      const T* ip = src + pl * in.numel();
      T* op = dst + pl * out.numel();
      for (int64_t ot = 0; ot < out.t; ++ot)
        for (int64_t oh = 0; oh < out.h; ++oh)
          for (int64_t ow = 0; ow < out.w; ++ow) {
            const AvgWindow a =
                avg_window(g.win, in, ot, oh, ow, count_include_pad, divisor_override);
            M sum = 0;
            if (!a.empty) {
              for (int64_t t = a.lo.t; t < a.hi.t; ++t)
                for (int64_t h = a.lo.h; h < a.hi.h; ++h)
                  for (int64_t w = a.lo.w; w < a.hi.w; ++w)
                    sum += static_cast<M>(ip[(t * in.h + h) * in.w + w]);
              sum = sum / static_cast<M>(a.divisor);
            }
            op[(ot * out.h + oh) * out.w + ow] = static_cast<T>(sum);
          }
    });
  });
  return unplane(result, p, 3, out);
}

// avg_pool3d's backward: each output's gradient / its divisor, added to every input of its window.
Tensor avg_pool3d_backward_k(const Tensor& grad_output, const Tensor& self, IntList kernel_size,
                             IntList stride, IntList padding, bool ceil_mode,
                             bool count_include_pad, std::optional<int64_t> divisor_override) {
  const AvgPool3d g =
      avg_pool3d_geometry(self, kernel_size, stride, padding, ceil_mode, divisor_override);
  const Planes p = planes_of(self, 3);
  const Dims3 in = p.in, out = g.out;
  const int64_t nd = grad_output.dim();
  AMPJIT_CHECK(nd == self.dim() && grad_output.size(nd - 3) == out.t &&
                   grad_output.size(nd - 2) == out.h && grad_output.size(nd - 1) == out.w,
               "avg_pool3d_backward: expected grad_output of the output's size, but got {}",
               grad_output.shape_str());
  const Tensor go = grad_output.to(self.dtype()).contiguous();
  Tensor result = zeros_of(IntList{p.count, in.t, in.h, in.w}, self.dtype());
  dispatch_pool(self.dtype(), "avg_pool3d_backward_out_frame", true, [&]<typename T>() {
    using M = opmath_t<T>;
    const T* gsrc = go.data<T>();
    T* dst = result.data<T>();
    for_planes(p.count, out.numel() * g.win.k.numel(), [&](int64_t pl) {
      const T* gp = gsrc + pl * out.numel();
      T* ip = dst + pl * in.numel();
      for (int64_t ot = 0; ot < out.t; ++ot)
        for (int64_t oh = 0; oh < out.h; ++oh)
          for (int64_t ow = 0; ow < out.w; ++ow) {
            const AvgWindow a =
                avg_window(g.win, in, ot, oh, ow, count_include_pad, divisor_override);
            if (a.empty) continue;
            const M share =
                static_cast<M>(gp[(ot * out.h + oh) * out.w + ow]) / static_cast<M>(a.divisor);
            for (int64_t t = a.lo.t; t < a.hi.t; ++t)
              for (int64_t h = a.lo.h; h < a.hi.h; ++h)
                for (int64_t w = a.lo.w; w < a.hi.w; ++w) {
                  T& v = ip[(t * in.h + h) * in.w + w];
                  v = static_cast<T>(static_cast<M>(v) + share);
                }
          }
    });
  });
  return result.reshape(self.sizes());
}

// ---- adaptive pooling
// -----------------------------------------------------------------------------

// Output cell i of n over an input of length len covers [floor(i*len/n), ceil((i+1)*len/n)).
int64_t adaptive_start(int64_t i, int64_t n, int64_t len) {
  return (i * len) / n;
}
int64_t adaptive_end(int64_t i, int64_t n, int64_t len) {
  return ((i + 1) * len + n - 1) / n;
}

// The checks of torch's adaptive pools: the rank, and non-empty non-batch dimensions (from
// dimension `first_nonempty` on).
void check_adaptive_input(const Tensor& self, int nsp, const char* what, int64_t first_nonempty,
                          const char* dims_msg) {
  const int64_t nd = self.dim();
  AMPJIT_CHECK(nd == nsp + 1 || nd == nsp + 2, "{}: Expected {}, but got: {}", what, dims_msg,
               self.shape_str());
  for (int64_t i = first_nonempty; i < nd; ++i) {
    AMPJIT_CHECK(self.size(i) > 0,
                 "{}: Expected input to have non-zero size for non-batch dimensions, but input "
                 "has sizes {} with dimension {} being empty",
                 what, self.shape_str(), i);
  }
}

Tensor adaptive_avg_pool3d_k(const Tensor& self, IntList output_size) {
  AMPJIT_CHECK(output_size.size() == 3, "adaptive_avg_pool3d: output_size must be 3");
  AMPJIT_CHECK(output_size[0] >= 0 && output_size[1] >= 0 && output_size[2] >= 0,
               "adaptive_avg_pool3d: elements of output_size must be greater than or equal to 0 "
               "but received {{{}, {}, {}}}",
               output_size[0], output_size[1], output_size[2]);
  const int64_t nd = self.dim();
  for (int64_t i = 1; i < nd; ++i) {
    AMPJIT_CHECK(self.size(i) > 0,
                 "adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch "
                 "dimensions, but input has sizes {} with dimension {} being empty",
                 self.shape_str(), i);
  }
  AMPJIT_CHECK(nd == 4 || nd == 5, "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {}",
               self.shape_str());
  const Planes p = planes_of(self, 3);
  const Dims3 in = p.in, out = triple(output_size);
  Tensor result = Tensor::empty(IntList{p.count, out.t, out.h, out.w}, self.dtype());
  if (result.numel() == 0) return unplane(result, p, 3, out);
  dispatch_pool(self.dtype(), "adaptive_avg_pool3d_cpu", false, [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.x.data<T>();
    T* dst = result.data<T>();
    for_planes(p.count, in.numel() + out.numel(), [&](int64_t pl) {
      const T* ip = src + pl * in.numel();
      T* op = dst + pl * out.numel();
      for (int64_t ot = 0; ot < out.t; ++ot) {
        const int64_t t0 = adaptive_start(ot, out.t, in.t), t1 = adaptive_end(ot, out.t, in.t);
        for (int64_t oh = 0; oh < out.h; ++oh) {
          const int64_t h0 = adaptive_start(oh, out.h, in.h), h1 = adaptive_end(oh, out.h, in.h);
          for (int64_t ow = 0; ow < out.w; ++ow) {
            const int64_t w0 = adaptive_start(ow, out.w, in.w), w1 = adaptive_end(ow, out.w, in.w);
            M sum = 0;
            for (int64_t t = t0; t < t1; ++t)
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w)
                  sum += static_cast<M>(ip[(t * in.h + h) * in.w + w]);
            // torch divides by the window's depth, then height, then width
            op[(ot * out.h + oh) * out.w + ow] = static_cast<T>(
                sum / static_cast<M>(t1 - t0) / static_cast<M>(h1 - h0) / static_cast<M>(w1 - w0));
          }
        }
      }
    });
  });
  return unplane(result, p, 3, out);
}

// adaptive_avg_pool3d's backward: each output's gradient spread evenly over its window.
Tensor adaptive_avg_pool3d_backward_k(const Tensor& grad_output, const Tensor& self) {
  AMPJIT_CHECK(grad_output.dim() == self.dim() && (self.dim() == 4 || self.dim() == 5),
               "adaptive_avg_pool3d_backward(): Expected grad_output of the input's rank (4D or "
               "5D), but got {}",
               grad_output.shape_str());
  const Planes p = planes_of(self, 3);
  const Dims3 in = p.in;
  const int64_t nd = grad_output.dim();
  const Dims3 out{grad_output.size(nd - 3), grad_output.size(nd - 2), grad_output.size(nd - 1)};
  const Tensor go = grad_output.to(self.dtype()).contiguous();
  Tensor result = zeros_of(IntList{p.count, in.t, in.h, in.w}, self.dtype());
  dispatch_pool(self.dtype(), "adaptive_avg_pool3d_backward_cpu", false, [&]<typename T>() {
    using M = opmath_t<T>;
    const T* gsrc = go.data<T>();
    T* dst = result.data<T>();
    for_planes(p.count, in.numel() + out.numel(), [&](int64_t pl) {
      const T* gp = gsrc + pl * out.numel();
      T* ip = dst + pl * in.numel();
      for (int64_t ot = 0; ot < out.t; ++ot) {
        const int64_t t0 = adaptive_start(ot, out.t, in.t), t1 = adaptive_end(ot, out.t, in.t);
        for (int64_t oh = 0; oh < out.h; ++oh) {
          const int64_t h0 = adaptive_start(oh, out.h, in.h), h1 = adaptive_end(oh, out.h, in.h);
          for (int64_t ow = 0; ow < out.w; ++ow) {
            const int64_t w0 = adaptive_start(ow, out.w, in.w), w1 = adaptive_end(ow, out.w, in.w);
            const M share = static_cast<M>(gp[(ot * out.h + oh) * out.w + ow]) /
                            static_cast<M>(t1 - t0) / static_cast<M>(h1 - h0) /
                            static_cast<M>(w1 - w0);
            for (int64_t t = t0; t < t1; ++t)
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w) {
                  T& v = ip[(t * in.h + h) * in.w + w];
                  v = static_cast<T>(static_cast<M>(v) + share);
                }
          }
        }
      }
    });
  });
  return result.reshape(self.sizes());
}

// adaptive_max_pool2d/3d: the maxima of the adaptive windows and their flat indices in the input
// plane, by torch's rule (larger or NaN replaces). The 2-D kernel starts from the window's first
// element; the 3-D one from index -1 (both as torch's, which differ when a window is all -inf).
std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& self, const IntList& output_size,
                                             int nsp) {
  const Planes p = planes_of(self, nsp);
  const Dims3 in = p.in;
  const Dims3 out = nsp == 3 ? triple(output_size) : Dims3{1, output_size[0], output_size[1]};
  Tensor result = Tensor::empty(IntList{p.count, out.t, out.h, out.w}, self.dtype());
  Tensor indices = Tensor::empty(IntList{p.count, out.t, out.h, out.w}, ScalarType::Int64);
  const char* name = nsp == 3 ? "adaptive_max_pool3d_cpu" : "adaptive_max_pool2d_cpu";
  dispatch_pool(self.dtype(), name, false, [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = p.x.data<T>();
    T* dst = result.data<T>();
    int64_t* idx = indices.data<int64_t>();
    for_planes(p.count, in.numel() + out.numel(), [&](int64_t pl) {
      const T* ip = src + pl * in.numel();
      T* op = dst + pl * out.numel();
      int64_t* xp = idx + pl * out.numel();
      for (int64_t ot = 0; ot < out.t; ++ot) {
        const int64_t t0 = adaptive_start(ot, out.t, in.t), t1 = adaptive_end(ot, out.t, in.t);
        for (int64_t oh = 0; oh < out.h; ++oh) {
          const int64_t h0 = adaptive_start(oh, out.h, in.h), h1 = adaptive_end(oh, out.h, in.h);
          for (int64_t ow = 0; ow < out.w; ++ow) {
            const int64_t w0 = adaptive_start(ow, out.w, in.w), w1 = adaptive_end(ow, out.w, in.w);
            int64_t where = nsp == 3 ? -1 : (t0 * in.h + h0) * in.w + w0;
            M best = lowest_of<M>();
            for (int64_t t = t0; t < t1; ++t)
              for (int64_t h = h0; h < h1; ++h)
                for (int64_t w = w0; w < w1; ++w) {
                  const int64_t at = (t * in.h + h) * in.w + w;
                  const M v = static_cast<M>(ip[at]);
                  if (v > best || is_nan(v)) {
                    best = v;
                    where = at;
                  }
                }
            const int64_t o = (ot * out.h + oh) * out.w + ow;
            op[o] = static_cast<T>(best);
            xp[o] = where;
          }
        }
      }
    });
  });
  return {unplane(result, p, nsp, out), unplane(indices, p, nsp, out)};
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_k(const Tensor& self, IntList output_size) {
  check_adaptive_input(self, 2, "adaptive_max_pool2d()", 1, "3D or 4D tensor");
  AMPJIT_CHECK(output_size.size() == 2,
               "adaptive_max_pool2d(): internal error: output_size.size() must be 2");
  return adaptive_max_pool(self, output_size, 2);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d_k(const Tensor& self, IntList output_size) {
  check_adaptive_input(self, 3, "adaptive_max_pool3d()", 1, "4D or 5D tensor");
  AMPJIT_CHECK(output_size.size() == 3,
               "adaptive_max_pool3d(): internal error: output_size.size() must be 3");
  return adaptive_max_pool(self, output_size, 3);
}

// ---- max_unpool ---------------------------------------------------------------------------------

// The input written at its indices into a zero output plane (in order, so a repeated index keeps
// the last write, as torch's loop does).
Tensor max_unpool(const Tensor& self, const Tensor& indices, Dims3 out, int nsp) {
  const Planes p = planes_of(self, nsp);
  const Tensor idx = indices.contiguous();
  Tensor result = zeros_of(IntList{p.count, out.t, out.h, out.w}, self.dtype());
  const int64_t n_in = p.in.numel(), n_out = out.numel();
  std::vector<int64_t> bad(static_cast<size_t>(std::max<int64_t>(p.count, 1)), -1);
  dispatch_all(self.dtype(), "max_unpooling", [&]<typename T>() {
    const T* src = p.x.data<T>();
    const int64_t* ix = idx.data<int64_t>();
    T* dst = result.data<T>();
    for_planes(p.count, n_in, [&](int64_t pl) {
      for (int64_t i = 0; i < n_in; ++i) {
        const int64_t at = ix[pl * n_in + i];
        if (at < 0 || at >= n_out) {
          bad[pl] = at;
          return;
        }
        dst[pl * n_out + at] = src[pl * n_in + i];
      }
    });
  });
  for (int64_t b : bad) {
    if (b == -1) continue;
    if (nsp == 3)
      AMPJIT_CHECK(false, "Found an invalid max index: {} (output volumes are of size {}x{}x{}", b,
                   out.t, out.h, out.w);
    AMPJIT_CHECK(false, "Found an invalid max index: {} (output volumes are of size {}x{}", b,
                 out.h, out.w);
  }
  return unplane(result, p, nsp, out);
}

void check_unpool_input(const Tensor& self, const Tensor& indices, const char* fn) {
  AMPJIT_CHECK(std::ranges::equal(self.sizes(), indices.sizes()),
               "Expected shape of indices to be same as that of the input tensor ({}) but got "
               "indices tensor with shape: {}",
               self.shape_str(), indices.shape_str());
  for (int64_t i = 1; i < self.dim(); ++i) {
    AMPJIT_CHECK(self.size(i) > 0,
                 "{}: Expected input to have non-zero size for non-batch dimensions, but got {} "
                 "with dimension {} being empty.",
                 fn, self.shape_str(), i);
  }
}

Tensor max_unpool2d_k(const Tensor& self, const Tensor& indices, IntList output_size) {
  AMPJIT_CHECK(indices.dtype() == ScalarType::Int64,
               "elements in indices should be type int64 but got: {}",
               torch_type_name(indices.dtype()));
  AMPJIT_CHECK(output_size.size() == 2,
               "There should be exactly two elements (height, width) in output_size, but got {} "
               "elements.",
               output_size.size());
  AMPJIT_CHECK(self.dim() == 3 || self.dim() == 4,
               "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {} "
               "dimensions.",
               self.dim());
  check_unpool_input(self, indices, "max_unpooling2d_forward_out_cpu()");
  return max_unpool(self, indices, Dims3{1, output_size[0], output_size[1]}, 2);
}

Tensor max_unpool3d_k(const Tensor& self, const Tensor& indices, IntList output_size,
                      IntList stride, IntList padding) {
  AMPJIT_CHECK(indices.dtype() == ScalarType::Int64, "elements in indices should be type int64");
  AMPJIT_CHECK(self.dim() == 4 || self.dim() == 5,
               "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {} "
               "dimensions.",
               self.dim());
  AMPJIT_CHECK(output_size.size() == 3,
               "There should be exactly three elements (depth, height, width) in output_size, but "
               "got {} elements.",
               output_size.size());
  AMPJIT_CHECK(stride.size() == 3,
               "There should be exactly three elements (depth, height, width) in stride, but got: "
               "{} elements.",
               stride.size());
  AMPJIT_CHECK(padding.size() == 3,
               "There should be exactly three elements (depth, height, width) in padding, but "
               "got: {} elements.",
               padding.size());
  check_unpool_input(self, indices, "max_unpooling3d_forward_out_cpu()");
  AMPJIT_CHECK(stride[0] > 0 && stride[1] > 0 && stride[2] > 0,
               "strides should be greater than zero, but got stride: [{}]",
               fmt::join(stride, ", "));
  return max_unpool(self, indices, triple(output_size), 3);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(max_pool3d, cpu::max_pool3d_k)
AMPJIT_KERNEL(max_pool3d_with_indices, cpu::max_pool3d_with_indices_k)
AMPJIT_KERNEL(avg_pool3d, cpu::avg_pool3d_k)
AMPJIT_KERNEL(avg_pool3d_backward, cpu::avg_pool3d_backward_k)
AMPJIT_KERNEL(adaptive_avg_pool3d, cpu::adaptive_avg_pool3d_k)
AMPJIT_KERNEL(_adaptive_avg_pool3d_backward, cpu::adaptive_avg_pool3d_backward_k)
AMPJIT_KERNEL(adaptive_max_pool2d, cpu::adaptive_max_pool2d_k)
AMPJIT_KERNEL(adaptive_max_pool3d, cpu::adaptive_max_pool3d_k)
AMPJIT_KERNEL(max_unpool2d, cpu::max_unpool2d_k)
AMPJIT_KERNEL(max_unpool3d, cpu::max_unpool3d_k)
