// Device code for the CUDA matrix products and convolutions (see blas.h): im2col and the scaling
// that stands in for an empty contraction.
#include <climits>

#include "kernels/cuda/blas.h"
#include "kernels/cuda/elementwise.cuh"

namespace ampjit::cuda {

namespace {

template <typename T>
struct Scale {
  opmath_t<T> factor;
  __device__ __forceinline__ opmath_t<T> operator()(T v) const {
    return static_cast<opmath_t<T>>(v) * factor;
  }
};

// One thread per column element, in the columns' memory order (output column innermost), so the
// writes coalesce; reads step through the input by the stride. Index is int32_t whenever the
// element count allows it: 64-bit division costs several times more on the GPU.
template <typename T, typename Index>
__global__ void im2col_kernel(const T* __restrict__ input, T* __restrict__ columns, Im2colArgs a,
                              Index total) {
  const Index out_w = static_cast<Index>(a.out_w), out_h = static_cast<Index>(a.out_h);
  const Index kernel_w = static_cast<Index>(a.kernel_w), kernel_h = static_cast<Index>(a.kernel_h);
  const Index step = static_cast<Index>(gridDim.x) * blockDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    Index r = i;
    const Index ow = r % out_w;
    r /= out_w;
    const Index oh = r % out_h;
    r /= out_h;
    const Index kw = r % kernel_w;
    r /= kernel_w;
    const Index kh = r % kernel_h;
    const Index plane = r / kernel_h;  // batch * channels + channel
    const int64_t ih = static_cast<int64_t>(oh) * a.stride_h - a.pad_h + kh * a.dilation_h;
    const int64_t iw = static_cast<int64_t>(ow) * a.stride_w - a.pad_w + kw * a.dilation_w;
    const bool inside = ih >= 0 && ih < a.height && iw >= 0 && iw < a.width;
    columns[i] =
        inside ? input[(static_cast<int64_t>(plane) * a.height + ih) * a.width + iw] : T(0);
  }
}

template <typename T>
void im2col_typed(const Im2colArgs& a) {
  const int64_t total = a.batch * a.channels * a.kernel_h * a.kernel_w * a.out_h * a.out_w;
  if (total == 0) return;
  const auto* in = static_cast<const T*>(a.input);
  auto* col = static_cast<T*>(a.columns);
  const unsigned grid = grid_size(total);
  if (total <= INT_MAX) {
    im2col_kernel<T, int32_t>
        <<<grid, kBlockSize, 0, stream()>>>(in, col, a, static_cast<int32_t>(total));
  } else {
    im2col_kernel<T, int64_t><<<grid, kBlockSize, 0, stream()>>>(in, col, a, total);
  }
  AMPJIT_CUDA_CHECK_LAUNCH();
}

}  // namespace

void launch_scale(const ElementwiseIter& it, double factor) {
  dispatch_floating(it.dtype[0], [&]<typename T>() {
    launch_elementwise<T, T, 1>(it, Scale<T>{static_cast<opmath_t<T>>(factor)});
  });
}

// im2col moves bits, so one instantiation per element width serves float16 and bfloat16 alike
// (all-zero bits are 0.0, the padding value, in every floating dtype).
void launch_im2col(const Im2colArgs& a) {
  switch (a.dtype) {
    case kFloat16:
    case kBFloat16:
      return im2col_typed<uint16_t>(a);
    case kFloat32:
      return im2col_typed<uint32_t>(a);
    case kFloat64:
      return im2col_typed<uint64_t>(a);
    default:
      return;
  }
}

}  // namespace ampjit::cuda
