// im2col and col2im (runtime/ops/nn_extra.def), F.unfold and F.fold: the sliding blocks of an
// image as columns, and their sum back into an image, with torch 1.13's checks and messages
// (aten/src/ATen/native/Im2Col.cpp, Col2Im.cpp, im2col_shape_check.h). Each is the other's
// derivative. One (batch, channel) plane per task; col2im sums each image element's contributions
// in the op-math type and rounds once.
#include <algorithm>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

using IntList = std::vector<int64_t>;

// The four int[2] arguments, as (height, width) pairs.
struct Geometry {
  int64_t kh, kw, dh, dw, ph, pw, sh, sw;
};
Geometry geometry(const IntList& kernel_size, const IntList& dilation, const IntList& padding,
                  const IntList& stride) {
  AMPJIT_CHECK(kernel_size.size() == 2, "It is expected kernel_size equals to 2, but got size {}",
               kernel_size.size());
  AMPJIT_CHECK(dilation.size() == 2, "It is expected dilation equals to 2, but got size {}",
               dilation.size());
  AMPJIT_CHECK(padding.size() == 2, "It is expected padding equals to 2, but got size {}",
               padding.size());
  AMPJIT_CHECK(stride.size() == 2, "It is expected stride equals to 2, but got size {}",
               stride.size());
  const Geometry g{kernel_size[0], kernel_size[1], dilation[0], dilation[1],
                   padding[0],     padding[1],     stride[0],   stride[1]};
  AMPJIT_CHECK(g.kw > 0 && g.kh > 0,
               "kernel size should be greater than zero, but got kernel_height: {} kernel_width: "
               "{}",
               g.kh, g.kw);
  AMPJIT_CHECK(g.dw > 0 && g.dh > 0,
               "dilation should be greater than zero, but got dilation_height: {} dilation_width: "
               "{}",
               g.dh, g.dw);
  AMPJIT_CHECK(g.pw >= 0 && g.ph >= 0,
               "padding should be non-negative, but got pad_height: {} pad_width: {}", g.ph, g.pw);
  AMPJIT_CHECK(g.sw > 0 && g.sh > 0,
               "stride should be greater than zero, but got stride_height: {} stride_width: {}",
               g.sh, g.sw);
  return g;
}

// The number of block positions along a dimension of `size` (div_rtn: rounded toward -inf).
int64_t blocks(int64_t size, int64_t k, int64_t d, int64_t p, int64_t s) {
  const int64_t num = size + 2 * p - (d * (k - 1) + 1);
  return (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
}

Tensor im2col_k(const Tensor& self, IntList kernel_size, IntList dilation, IntList padding,
                IntList stride) {
  const Geometry g = geometry(kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  const bool dims_ok = (nd == 3 && self.size(0) != 0 && self.size(1) != 0 && self.size(2) != 0) ||
                       (nd == 4 && self.size(1) != 0 && self.size(2) != 0 && self.size(3) != 0);
  AMPJIT_CHECK(dims_ok,
               "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other "
               "non-zero dimensions for input, but got: {}",
               self.shape_str());
  const Tensor x = (nd == 3 ? self.unsqueeze(0) : self).contiguous();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t oh = blocks(H, g.kh, g.dh, g.ph, g.sh), ow = blocks(W, g.kw, g.dw, g.pw, g.sw);
  AMPJIT_CHECK(oh >= 1 && ow >= 1,
               "Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), "
               "padding=({}, {}), calculated shape of the array of sliding blocks as ({}, {}), but "
               "its components must be at least one.",
               H, W, g.kh, g.kw, g.dh, g.dw, g.ph, g.pw, oh, ow);
  const int64_t K = g.kh * g.kw, L = oh * ow;
  Tensor out = Tensor::empty(IntList{N, C * K, L}, self.dtype());
  dispatch_floating(self.dtype(), "im2col_out_cpu", [&]<typename T>() {
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K * L, 1));
    parallel_for(N * C, grain, [&](int64_t b, int64_t e) {
      for (int64_t pl = b; pl < e; ++pl) {
        const T* ip = src + pl * H * W;
        T* op = dst + pl * K * L;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            T* row = op + (i * g.kw + j) * L;
            for (int64_t y = 0; y < oh; ++y) {
              const int64_t h = y * g.sh - g.ph + i * g.dh;
              for (int64_t z = 0; z < ow; ++z) {
                const int64_t w = z * g.sw - g.pw + j * g.dw;
                row[y * ow + z] =
                    h >= 0 && h < H && w >= 0 && w < W ? ip[h * W + w] : static_cast<T>(0);
              }
            }
          }
      }
    });
  });
  return nd == 3 ? out.squeeze(0) : out;
}

Tensor col2im_k(const Tensor& self, IntList output_size, IntList kernel_size, IntList dilation,
                IntList padding, IntList stride) {
  AMPJIT_CHECK(output_size.size() == 2, "It is expected output_size equals to 2, but got size {}",
               output_size.size());
  const Geometry g = geometry(kernel_size, dilation, padding, stride);
  const int64_t nd = self.dim();
  AMPJIT_CHECK((nd == 2 && self.size(0) != 0 && self.size(1) != 0) ||
                   (nd == 3 && self.size(1) != 0 && self.size(2) != 0),
               "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
               "non-zero dimensions for input, but got: {}",
               self.shape_str());
  const int64_t H = output_size[0], W = output_size[1];
  const int64_t planes = self.size(nd - 2), L = self.size(nd - 1), K = g.kh * g.kw;
  AMPJIT_CHECK(planes % K == 0,
               "Expected size of input's dimension 1 to be divisible by the product of "
               "kernel_size, but got input.size(1)={} and kernel_size=({}, {}).",
               planes, g.kh, g.kw);
  const int64_t oh = blocks(H, g.kh, g.dh, g.ph, g.sh), ow = blocks(W, g.kw, g.dw, g.pw, g.sw);
  AMPJIT_CHECK(L == oh * ow,
               "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, "
               "{}), stride=({}, {}), expected size of input's dimension 2 to match the calculated "
               "number of sliding blocks {} * {} = {}, but got input.size(2)={}.",
               H, W, g.kh, g.kw, g.dh, g.dw, g.ph, g.pw, g.sh, g.sw, oh, ow, oh * ow, L);
  AMPJIT_CHECK(oh >= 1 && ow >= 1,
               "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, "
               "{}), stride=({}, {}), calculated shape of the array of sliding blocks as ({}, {}), "
               "which is too small (non-positive)",
               H, W, g.kh, g.kw, g.dh, g.dw, g.ph, g.pw, g.sh, g.sw, oh, ow);
  const Tensor x = (nd == 2 ? self.unsqueeze(0) : self).contiguous();
  const int64_t N = x.size(0), C = planes / K;
  Tensor out = Tensor::empty(IntList{N, C, H, W}, self.dtype());
  dispatch_floating(self.dtype(), "col2im_out_cpu", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* src = x.data<T>();
    T* dst = out.data<T>();
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(K * L, 1));
    parallel_for(N * C, grain, [&](int64_t b, int64_t e) {
      std::vector<M> acc(static_cast<size_t>(H * W));
      for (int64_t pl = b; pl < e; ++pl) {
        std::fill(acc.begin(), acc.end(), M(0));
        const T* ip = src + pl * K * L;
        for (int64_t i = 0; i < g.kh; ++i)
          for (int64_t j = 0; j < g.kw; ++j) {
            const T* row = ip + (i * g.kw + j) * L;
            for (int64_t y = 0; y < oh; ++y) {
              const int64_t h = y * g.sh - g.ph + i * g.dh;
              if (h < 0 || h >= H) continue;
              for (int64_t z = 0; z < ow; ++z) {
                const int64_t w = z * g.sw - g.pw + j * g.dw;
                if (w >= 0 && w < W) acc[h * W + w] += static_cast<M>(row[y * ow + z]);
              }
            }
          }
        T* op = dst + pl * H * W;
        for (int64_t k = 0; k < H * W; ++k) op[k] = static_cast<T>(acc[k]);
      }
    });
  });
  return nd == 2 ? out.squeeze(0) : out;
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(im2col, cpu::im2col_k)
AMPJIT_KERNEL(col2im, cpu::col2im_k)
