// Interpolation (runtime/ops/nn_extra.def): upsample_nearest{1,2,3}d, _upsample_nearest_exact
// {1,2,3}d, upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d and upsample_bicubic2d,
// each with its `.vec` overload, with torch 1.13's output sizes, source indices, weights and checks
// (aten/src/ATen/native/UpSample.h, UpSample.cpp, UpSampleKernel.cpp, UpSampleBicubic2d.cpp).
//
// Note [Separable interpolation]
// Every mode is separable: the value at an output position is a weighted sum over a product of
// per-dimension taps (nearest: one tap of weight 1; linear: two; cubic: four, their indices clamped
// to the input as torch's bounded reads do). So each spatial dimension, from the last, is resampled
// in turn: a sum over taps of index_select(x, dim, tap's indices) times the tap's weights broadcast
// along dim. Torch's CPU kernels evaluate the same nested sums (the innermost dimension first), so
// float32 and float64 results agree to rounding; float16 and bfloat16 are computed in float32 and
// rounded once. The ops are composites: they run on every device with index_select, and autograd
// records the index_selects (their derivative is index_add, torch's upsample_*_backward), so
// backward and double backward need no kernels of their own. On the CPU, when autograd records
// nothing (grad mode off, or an input that does not require grad), a weighted dimension is
// resampled by one loop instead (`resample_dim_loop`): the same sums, without the intermediate
// tensors of the index_selects, products and additions.
#include <cmath>

#include "runtime/boxing.h"
#include "runtime/grad_mode.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"
#include "runtime/strided_loop.h"

namespace ampjit {
namespace {

using IntList = std::vector<int64_t>;
using Scales = std::vector<std::optional<double>>;

enum class Mode { Nearest, NearestExact, Linear, Cubic };

// One dimension's taps: out[o] = sum_t weight[t][o] * in[index[t][o]] (no weights: one tap).
struct DimTaps {
  std::vector<IntList> index;
  std::vector<std::vector<double>> weight;
};

// UpSample.h's compute_scales_value: 1/scale when a positive scale is given, else in/out.
template <typename M>
M scales_value(std::optional<double> scale, int64_t in, int64_t out) {
  return scale && *scale > 0 ? static_cast<M>(1.0 / *scale)
                             : static_cast<M>(in) / static_cast<M>(out);
}
// area_pixel_compute_scale.
template <typename M>
M pixel_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners)
    return out > 1 ? static_cast<M>(in - 1) / static_cast<M>(out - 1) : static_cast<M>(0);
  return scales_value<M>(scale, in, out);
}
// area_pixel_compute_source_index (the half-pixel offset computed in double, as torch's
// `scale * (dst_index + 0.5) - 0.5` promotes).
template <typename M>
M source_index(M scale, int64_t o, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<M>(o);
  const M src = static_cast<M>(static_cast<double>(scale) * (static_cast<double>(o) + 0.5) - 0.5);
  return !cubic && src < 0 ? M(0) : src;
}

template <typename M>
DimTaps taps_for(Mode mode, int64_t in, int64_t out, bool align_corners,
                 std::optional<double> scale) {
  DimTaps t;
  if (mode == Mode::Nearest || mode == Mode::NearestExact) {
    IntList idx(static_cast<size_t>(out));
    const float s = scales_value<float>(scale, in, out);
    for (int64_t o = 0; o < out; ++o) {
      if (mode == Mode::NearestExact) {
        // nearest_neighbor_exact_compute_source_index: (o + 0.5) * scale in double, then floorf
        const float src = static_cast<float>((static_cast<double>(o) + 0.5) * s);
        idx[o] = std::min(static_cast<int64_t>(std::floor(src)), in - 1);
      } else if (out == in) {  // nearest_idx's special cases
        idx[o] = o;
      } else if (out == 2 * in) {
        idx[o] = o >> 1;
      } else {
        idx[o] = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
      }
    }
    t.index.push_back(std::move(idx));
    return t;
  }
  const M ratio = pixel_scale<M>(in, out, align_corners, scale);
  if (mode == Mode::Linear) {
    t.index.assign(2, IntList(static_cast<size_t>(out)));
    t.weight.assign(2, std::vector<double>(static_cast<size_t>(out)));
    for (int64_t o = 0; o < out; ++o) {
      int64_t i0 = o, i1 = o;
      M l1 = 0;
      if (out != in) {  // compute_source_index_and_lambda; equal sizes copy
        const M real = source_index<M>(ratio, o, align_corners, false);
        i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
        l1 = std::min(std::max(real - static_cast<M>(i0), M(0)), M(1));
        i1 = i0 + (i0 < in - 1 ? 1 : 0);
      }
      t.index[0][o] = i0;
      t.index[1][o] = i1;
      t.weight[0][o] = static_cast<double>(M(1) - l1);
      t.weight[1][o] = static_cast<double>(l1);
    }
    return t;
  }
  // Cubic: four taps at floor(real) - 1 .. + 2, clamped to the input (upsample_get_value_bounded),
  // with the cubic convolution coefficients of A = -0.75 (get_cubic_upsample_coefficients).
  t.index.assign(4, IntList(static_cast<size_t>(out)));
  t.weight.assign(4, std::vector<double>(static_cast<size_t>(out)));
  const M A = static_cast<M>(-0.75);
  const auto conv1 = [&](M x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  const auto conv2 = [&](M x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  for (int64_t o = 0; o < out; ++o) {
    const M real = source_index<M>(ratio, o, align_corners, true);
    const int64_t i = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
    const M l = std::min(std::max(real - static_cast<M>(i), M(0)), M(1));
    const M c[4] = {conv2(l + 1), conv1(l), conv1(1 - l), conv2(2 - l)};
    for (int k = 0; k < 4; ++k) {
      t.index[k][o] = std::clamp<int64_t>(i - 1 + k, 0, in - 1);
      t.weight[k][o] = static_cast<double>(c[k]);
    }
  }
  return t;
}

Tensor index_tensor(const IntList& v, Device device) {
  Tensor t = Tensor::empty(IntList{static_cast<int64_t>(v.size())}, ScalarType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return device.is_cpu() ? t : Tensor(ops::to_device(t, device, ScalarType::Int64));
}

// The weighted taps of one dimension of a float or double CPU tensor in one pass: x as [outer, n,
// inner], each output row of `inner` values the weighted sum of its taps' input rows, in tap order.
// Parallel over the outer index.
template <typename T>
Tensor resample_dim_loop(const Tensor& x, int64_t dim, const DimTaps& taps) {
  const Tensor in = x.contiguous();
  const int64_t n_in = in.size(dim), n_out = static_cast<int64_t>(taps.index[0].size());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  IntList shape(in.sizes().begin(), in.sizes().end());
  shape[dim] = n_out;
  Tensor out = Tensor::empty(shape, in.dtype());
  const size_t ntaps = taps.index.size();
  std::vector<std::vector<T>> w(ntaps);
  for (size_t k = 0; k < ntaps; ++k) w[k].assign(taps.weight[k].begin(), taps.weight[k].end());
  const T* src = in.data<T>();
  T* dst = out.data<T>();
  const int64_t work = std::max<int64_t>(n_out * inner * static_cast<int64_t>(ntaps), 1);
  parallel_for(outer, std::max<int64_t>(1, kParallelGrain / work), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      const T* s = src + o * n_in * inner;
      T* d = dst + o * n_out * inner;
      for (int64_t j = 0; j < n_out; ++j, d += inner) {
        const T* s0 = s + taps.index[0][j] * inner;
        const T w0 = w[0][j];
        for (int64_t i = 0; i < inner; ++i) d[i] = s0[i] * w0;
        for (size_t k = 1; k < ntaps; ++k) {
          const T* sk = s + taps.index[k][j] * inner;
          const T wk = w[k][j];
          for (int64_t i = 0; i < inner; ++i) d[i] += sk[i] * wk;
        }
      }
    }
  });
  return out;
}

// Resamples dimension `dim` of x by its taps (Note [Separable interpolation]).
Tensor resample_dim(const Tensor& x, int64_t dim, const DimTaps& taps) {
  if (taps.weight.empty())
    return ops::index_select(x, dim, index_tensor(taps.index[0], x.device()));
  if (x.device().is_cpu() && !(grad_enabled() && x.requires_grad())) {
    if (x.dtype() == ScalarType::Float32) return resample_dim_loop<float>(x, dim, taps);
    if (x.dtype() == ScalarType::Float64) return resample_dim_loop<double>(x, dim, taps);
  }
  const int64_t out = static_cast<int64_t>(taps.index[0].size());
  IntList wshape{out};
  for (int64_t d = dim + 1; d < x.dim(); ++d) wshape.push_back(1);
  Tensor sum;
  for (size_t k = 0; k < taps.index.size(); ++k) {
    Tensor w = Tensor::empty(IntList{out}, ScalarType::Float64);
    std::copy(taps.weight[k].begin(), taps.weight[k].end(), w.data<double>());
    w = ops::to_device(w.reshape(wshape), x.device(), x.dtype());
    const Tensor term =
        ops::mul(ops::index_select(x, dim, index_tensor(taps.index[k], x.device())), w);
    sum = sum.defined() ? Tensor(ops::add(sum, term)) : term;
  }
  return sum;
}

// torch's upsample_{1,2,3}d_common_check and the meta functions' check of a non-empty input.
void check_sizes(const Tensor& input, const IntList& output_size, int nsp) {
  AMPJIT_CHECK(static_cast<int>(output_size.size()) == nsp,
               "It is expected output_size equals to {}, but got size {}", nsp, output_size.size());
  AMPJIT_CHECK(input.dim() == nsp + 2, "It is expected input_size equals to {}, but got size {}",
               nsp + 2, input.dim());
  bool positive = true;
  for (int i = 0; i < nsp; ++i) positive &= input.size(2 + i) > 0 && output_size[i] > 0;
  if (!positive) {
    static const char* const kNames[3][3] = {{"W"}, {"H", "W"}, {"D", "H", "W"}};
    std::string in, out;
    for (int i = 0; i < nsp; ++i) {
      in += fmt::format("{}{}: {}", i ? ", " : "", kNames[nsp - 1][i], input.size(2 + i));
      out += fmt::format("{}{}: {}", i ? ", " : "", kNames[nsp - 1][i], output_size[i]);
    }
    AMPJIT_CHECK(false,
                 "Input and output sizes should be greater than 0, but got input ({}){} ({})", in,
                 nsp == 1 ? " and output" : " output", out);
  }
  int64_t rest = 1;
  for (int64_t d = 1; d < input.dim(); ++d) rest *= input.size(d);
  AMPJIT_CHECK(input.numel() != 0 || rest != 0,
               "Non-empty {}D data tensor expected but got a tensor with sizes {}", nsp + 2,
               input.shape_str());
}

// The upsampled input: each spatial dimension, from the last, resampled by its taps.
Tensor upsample(const Tensor& input, const IntList& output_size, const Scales& scales, Mode mode,
                bool align_corners) {
  const int nsp = static_cast<int>(output_size.size());
  check_sizes(input, output_size, nsp);
  const ScalarType dt = input.dtype();
  const bool nearest = mode == Mode::Nearest || mode == Mode::NearestExact;
  AMPJIT_CHECK(
      nearest || is_floating(dt), "\"{}\" not implemented for '{}'",
      mode == Mode::Cubic ? "upsample_bicubic2d_out_frame" : "compute_indices_weights_linear",
      torch_type_name(dt));
  if (mode == Mode::Cubic) {  // torch's bicubic copies when the sizes are equal
    bool same = true;
    for (int i = 0; i < nsp; ++i) same &= input.size(2 + i) == output_size[i];
    if (same) return ops::clone(input);
  }
  const bool reduced = dt == ScalarType::Float16 || dt == ScalarType::BFloat16;
  Tensor x = reduced && !nearest ? Tensor(ops::to_dtype(input, ScalarType::Float32)) : input;
  for (int i = nsp - 1; i >= 0; --i) {
    const int64_t dim = 2 + i, in = input.size(dim), out = output_size[i];
    const DimTaps taps = x.dtype() == ScalarType::Float64
                             ? taps_for<double>(mode, in, out, align_corners, scales[i])
                             : taps_for<float>(mode, in, out, align_corners, scales[i]);
    x = resample_dim(x, dim, taps);
  }
  return x.dtype() == dt ? x : Tensor(ops::to_dtype(x, dt));
}

// The .vec overloads (UpSample.cpp's compute_output_size and get_scale_value): an output size, or
// per-dimension scale factors that give it (floor of input size times factor) and are passed on.
struct VecArgs {
  IntList output_size;
  Scales scales;
};
VecArgs vec_args(const Tensor& input, const std::optional<IntList>& output_size,
                 const std::optional<std::vector<double>>& scale_factors, int nsp) {
  const int64_t spatial = input.dim() - 2;
  VecArgs a;
  a.scales.assign(static_cast<size_t>(nsp), std::nullopt);
  if (output_size) {
    AMPJIT_CHECK(!scale_factors, "Must specify exactly one of output_size and scale_factors");
    AMPJIT_CHECK(static_cast<int64_t>(output_size->size()) == spatial,
                 "Expected output_size of {} elements for an input of {} spatial dimensions, but "
                 "got {}",
                 spatial, spatial, output_size->size());
    a.output_size = *output_size;
    return a;
  }
  AMPJIT_CHECK(scale_factors.has_value(),
               "Must specify exactly one of output_size and scale_factors");
  AMPJIT_CHECK(static_cast<int64_t>(scale_factors->size()) == spatial,
               "Expected scale_factors of {} elements for an input of {} spatial dimensions, but "
               "got {}",
               spatial, spatial, scale_factors->size());
  for (int64_t i = 0; i < spatial; ++i) {
    const double odim = static_cast<double>(input.size(2 + i)) * (*scale_factors)[i];
    AMPJIT_CHECK(std::isfinite(odim) && std::fabs(odim) < 9.2e18,
                 "value cannot be converted to type int64_t without overflow");
    a.output_size.push_back(static_cast<int64_t>(odim));
    if (i < nsp) a.scales[i] = (*scale_factors)[i];
  }
  return a;
}

using OptSize = std::optional<IntList>;
using OptFactors = std::optional<std::vector<double>>;

Tensor vec(const Tensor& input, const OptSize& size, const OptFactors& factors, int nsp, Mode mode,
           bool align_corners) {
  const VecArgs a = vec_args(input, size, factors, nsp);
  return upsample(input, a.output_size, a.scales, mode, align_corners);
}

// ---- the ops ----------------------------------------------------------------------------------

using S = std::optional<double>;

Tensor upsample_nearest1d_k(const Tensor& self, IntList size, S s) {
  return upsample(self, size, {s}, Mode::Nearest, false);
}
Tensor upsample_nearest2d_k(const Tensor& self, IntList size, S h, S w) {
  return upsample(self, size, {h, w}, Mode::Nearest, false);
}
Tensor upsample_nearest3d_k(const Tensor& self, IntList size, S d, S h, S w) {
  return upsample(self, size, {d, h, w}, Mode::Nearest, false);
}
Tensor upsample_nearest_exact1d_k(const Tensor& self, IntList size, S s) {
  return upsample(self, size, {s}, Mode::NearestExact, false);
}
Tensor upsample_nearest_exact2d_k(const Tensor& self, IntList size, S h, S w) {
  return upsample(self, size, {h, w}, Mode::NearestExact, false);
}
Tensor upsample_nearest_exact3d_k(const Tensor& self, IntList size, S d, S h, S w) {
  return upsample(self, size, {d, h, w}, Mode::NearestExact, false);
}
Tensor upsample_linear1d_k(const Tensor& self, IntList size, bool ac, S s) {
  return upsample(self, size, {s}, Mode::Linear, ac);
}
Tensor upsample_bilinear2d_k(const Tensor& self, IntList size, bool ac, S h, S w) {
  return upsample(self, size, {h, w}, Mode::Linear, ac);
}
Tensor upsample_trilinear3d_k(const Tensor& self, IntList size, bool ac, S d, S h, S w) {
  return upsample(self, size, {d, h, w}, Mode::Linear, ac);
}
Tensor upsample_bicubic2d_k(const Tensor& self, IntList size, bool ac, S h, S w) {
  return upsample(self, size, {h, w}, Mode::Cubic, ac);
}

Tensor upsample_nearest1d_vec_k(const Tensor& input, OptSize size, OptFactors f) {
  return vec(input, size, f, 1, Mode::Nearest, false);
}
Tensor upsample_nearest2d_vec_k(const Tensor& input, OptSize size, OptFactors f) {
  return vec(input, size, f, 2, Mode::Nearest, false);
}
Tensor upsample_nearest3d_vec_k(const Tensor& input, OptSize size, OptFactors f) {
  return vec(input, size, f, 3, Mode::Nearest, false);
}
Tensor upsample_nearest_exact1d_vec_k(const Tensor& input, OptSize size, OptFactors f) {
  return vec(input, size, f, 1, Mode::NearestExact, false);
}
Tensor upsample_nearest_exact2d_vec_k(const Tensor& input, OptSize size, OptFactors f) {
  return vec(input, size, f, 2, Mode::NearestExact, false);
}
Tensor upsample_nearest_exact3d_vec_k(const Tensor& input, OptSize size, OptFactors f) {
  return vec(input, size, f, 3, Mode::NearestExact, false);
}
Tensor upsample_linear1d_vec_k(const Tensor& input, OptSize size, bool ac, OptFactors f) {
  return vec(input, size, f, 1, Mode::Linear, ac);
}
Tensor upsample_bilinear2d_vec_k(const Tensor& input, OptSize size, bool ac, OptFactors f) {
  return vec(input, size, f, 2, Mode::Linear, ac);
}
Tensor upsample_trilinear3d_vec_k(const Tensor& input, OptSize size, bool ac, OptFactors f) {
  return vec(input, size, f, 3, Mode::Linear, ac);
}
Tensor upsample_bicubic2d_vec_k(const Tensor& input, OptSize size, bool ac, OptFactors f) {
  return vec(input, size, f, 2, Mode::Cubic, ac);
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(upsample_nearest1d, upsample_nearest1d_k)
AMPJIT_KERNEL(upsample_nearest2d, upsample_nearest2d_k)
AMPJIT_KERNEL(upsample_nearest3d, upsample_nearest3d_k)
AMPJIT_KERNEL(_upsample_nearest_exact1d, upsample_nearest_exact1d_k)
AMPJIT_KERNEL(_upsample_nearest_exact2d, upsample_nearest_exact2d_k)
AMPJIT_KERNEL(_upsample_nearest_exact3d, upsample_nearest_exact3d_k)
AMPJIT_KERNEL(upsample_linear1d, upsample_linear1d_k)
AMPJIT_KERNEL(upsample_bilinear2d, upsample_bilinear2d_k)
AMPJIT_KERNEL(upsample_trilinear3d, upsample_trilinear3d_k)
AMPJIT_KERNEL(upsample_bicubic2d, upsample_bicubic2d_k)
AMPJIT_KERNEL(upsample_nearest1d_vec, upsample_nearest1d_vec_k)
AMPJIT_KERNEL(upsample_nearest2d_vec, upsample_nearest2d_vec_k)
AMPJIT_KERNEL(upsample_nearest3d_vec, upsample_nearest3d_vec_k)
AMPJIT_KERNEL(_upsample_nearest_exact1d_vec, upsample_nearest_exact1d_vec_k)
AMPJIT_KERNEL(_upsample_nearest_exact2d_vec, upsample_nearest_exact2d_vec_k)
AMPJIT_KERNEL(_upsample_nearest_exact3d_vec, upsample_nearest_exact3d_vec_k)
AMPJIT_KERNEL(upsample_linear1d_vec, upsample_linear1d_vec_k)
AMPJIT_KERNEL(upsample_bilinear2d_vec, upsample_bilinear2d_vec_k)
AMPJIT_KERNEL(upsample_trilinear3d_vec, upsample_trilinear3d_vec_k)
AMPJIT_KERNEL(upsample_bicubic2d_vec, upsample_bicubic2d_vec_k)
