// Grid sampling (runtime/ops/nn_extra.def): grid_sampler, grid_sampler_2d/3d and their backward
// kernels, F.grid_sample's ops, with torch 1.13's coordinate rules, checks and messages (aten/src/
// ATen/native/GridSampler.h, GridSampler.cpp: the reference loops torch's vectorized CPU kernel
// agrees with). One loop serves both ranks: the grid's last dimension holds (x, y[, z]), the
// coordinates of the input's last, second-to-last [and third-to-last] dimensions; bilinear mode is
// trilinear on 5-D inputs (2^rank corners), bicubic is 2-D only.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/elementwise.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit::cpu {
namespace {

enum Interpolation : int64_t { kBilinear = 0, kNearest = 1, kBicubic = 2 };
enum Padding : int64_t { kZeros = 0, kBorder = 1, kReflection = 2 };

// ---- coordinates (GridSampler.h)
// -----------------------------------------------------------------

// From [-1, 1] to pixel coordinates: [0, size - 1] with align_corners, else [-0.5, size - 0.5];
// `grad` receives d(pixel)/d(coord).
template <typename T>
T unnormalize(T coord, int64_t size, bool align_corners, T* grad = nullptr) {
  if (align_corners) {
    if (grad) *grad = static_cast<T>(size - 1) / 2;
    return ((coord + 1) / 2) * static_cast<T>(size - 1);
  }
  if (grad) *grad = static_cast<T>(size) / 2;
  return ((coord + 1) * static_cast<T>(size) - 1) / 2;
}

// Clips to [0, size - 1]; the borders count as outside for the gradient.
template <typename T>
T clip(T in, int64_t size, T* grad = nullptr) {
  const T max = static_cast<T>(size - 1);
  if (!grad) return std::min(max, std::max(in, static_cast<T>(0)));
  if (in <= static_cast<T>(0)) {
    *grad = 0;
    return 0;
  }
  if (in >= max) {
    *grad = 0;
    return max;
  }
  *grad = 1;
  return in;
}

// Reflects into [twice_low / 2, twice_high / 2] as many times as needed.
template <typename T>
T reflect(T in, int64_t twice_low, int64_t twice_high, T* grad = nullptr) {
  if (twice_low == twice_high) {
    if (grad) *grad = 0;
    return static_cast<T>(0);
  }
  const T min = static_cast<T>(twice_low) / 2;
  const T span = static_cast<T>(twice_high - twice_low) / 2;
  in = in - min;
  T sign = 1;
  if (in < static_cast<T>(0)) {
    sign = -1;
    in = -in;
  }
  const T extra = std::fmod(in, span);
  const int flips = static_cast<int>(std::floor(in / span));
  if (flips % 2 == 0) {
    if (grad) *grad = sign;
    return extra + min;
  }
  if (grad) *grad = -sign;
  return span - extra + min;
}

// The padding mode applied to a pixel coordinate (compute_coordinates), with its gradient.
template <typename T>
T apply_padding(T coord, int64_t size, int64_t padding, bool align_corners, T* grad = nullptr) {
  T g_clip = 1, g_refl = 1;
  if (padding == kBorder) {
    coord = clip(coord, size, grad ? &g_clip : nullptr);
  } else if (padding == kReflection) {
    coord = align_corners ? reflect(coord, 0, 2 * (size - 1), grad ? &g_refl : nullptr)
                          : reflect(coord, -1, 2 * size - 1, grad ? &g_refl : nullptr);
    coord = clip(coord, size, grad ? &g_clip : nullptr);
  }
  if (grad) *grad = g_refl * g_clip;
  return coord;
}

// grid_sampler_compute_source_index(_set_grad).
template <typename T>
T source_index(T coord, int64_t size, int64_t padding, bool align_corners, T* grad = nullptr) {
  T g_un = 1, g_pad = 1;
  coord = unnormalize(coord, size, align_corners, grad ? &g_un : nullptr);
  coord = apply_padding(coord, size, padding, align_corners, grad ? &g_pad : nullptr);
  if (grad) *grad = g_un * g_pad;
  return coord;
}

// Bicubic coefficients (A = -0.75) and their derivatives in t (UpSample.h, GridSampler.h).
template <typename T>
void cubic_coefficients(T c[4], T t) {
  const T A = -0.75;
  const auto conv1 = [&](T x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };
  const auto conv2 = [&](T x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };
  c[0] = conv2(t + 1);
  c[1] = conv1(t);
  c[2] = conv1(1 - t);
  c[3] = conv2(2 - t);
}
template <typename T>
void cubic_coefficients_grad(T c[4], T t) {
  const T A = -0.75;
  T x = -1 - t;
  c[0] = (-3 * A * x - 10 * A) * x - 8 * A;
  x = -t;
  c[1] = (-3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 1 - t;
  c[2] = (3 * (A + 2) * x - 2 * (A + 3)) * x;
  x = 2 - t;
  c[3] = (3 * A * x - 10 * A) * x + 8 * A;
}

// ---- checks (GridSampler.cpp) ------------------------------------------------------------------

void check_grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode,
                        int nsp) {
  AMPJIT_CHECK(input.device() == grid.device(),
               "grid_sampler(): expected input and grid to be on same device, but input is on {} "
               "and grid is on {}",
               input.device().str(), grid.device().str());
  AMPJIT_CHECK(input.dtype() == grid.dtype(),
               "grid_sampler(): expected grid to have same dtype as input, but input has {} and "
               "grid has {}",
               torch_type_name(input.dtype()), torch_type_name(grid.dtype()));
  AMPJIT_CHECK(input.dim() == nsp + 2 && input.dim() == grid.dim(),
               "grid_sampler(): expected {}D input and grid with same number of dimensions, but "
               "got input with sizes {} and grid with sizes {}",
               nsp + 2, input.shape_str(), grid.shape_str());
  AMPJIT_CHECK(input.size(0) == grid.size(0),
               "grid_sampler(): expected grid and input to have same batch size, but got input "
               "with sizes {} and grid with sizes {}",
               input.shape_str(), grid.shape_str());
  AMPJIT_CHECK(grid.size(-1) == input.dim() - 2,
               "grid_sampler(): expected grid to have size {} in last dimension, but got grid "
               "with sizes {}",
               input.dim() - 2, grid.shape_str());
  for (int64_t i = 2; i < input.dim(); ++i) {
    AMPJIT_CHECK(input.size(i) > 0,
                 "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
                 "has sizes {} with dimension {} being empty",
                 input.shape_str(), i);
  }
  AMPJIT_CHECK(!(nsp == 3 && interpolation_mode == kBicubic),
               "grid_sampler(): bicubic interpolation only supports 4D input");
}

// ---- the sampler -------------------------------------------------------------------------------

// The geometry of one call: spatial sizes of the input (outermost first) and of the output.
struct Geometry {
  int nsp;
  int64_t N, C;
  int64_t in[3], in_numel = 1;
  int64_t out_numel = 1;
};
Geometry geometry_of(const Tensor& input, const Tensor& grid, int nsp) {
  Geometry g{nsp, input.size(0), input.size(1), {1, 1, 1}};
  for (int s = 0; s < nsp; ++s) {
    g.in[s] = input.size(2 + s);
    g.in_numel *= g.in[s];
    g.out_numel *= grid.size(1 + s);
  }
  return g;
}

// One output location's sampling: the source coordinates per spatial dimension (outermost first)
// and, for the gradient, d(source)/d(grid coordinate).
template <typename T>
struct Point {
  T src[3], mult[3];
};

// The flat index of an in-bounds integer position, or -1.
inline int64_t flat_index(const int64_t* pos, const int64_t* size, int nsp) {
  int64_t at = 0;
  for (int s = 0; s < nsp; ++s) {
    if (pos[s] < 0 || pos[s] >= size[s]) return -1;
    at = at * size[s] + pos[s];
  }
  return at;
}

// get_value_bounded / add_value_bounded's position: the padding applied to a (real) tap of the
// bicubic window, then truncated; -1 when outside.
template <typename T>
int64_t bounded_index(T x, T y, const Geometry& g, int64_t padding, bool align_corners) {
  x = apply_padding(x, g.in[1], padding, align_corners);
  y = apply_padding(y, g.in[0], padding, align_corners);
  const int64_t pos[2] = {static_cast<int64_t>(y), static_cast<int64_t>(x)};
  return flat_index(pos, g.in, 2);
}

template <typename T>
void sample_point(const Geometry& g, const T* inp, const T* coords, T* out, int64_t out_stride,
                  int64_t interp, int64_t padding, bool align_corners, const T* gout = nullptr,
                  T* ginp = nullptr, T* ggrid = nullptr) {
  const int nsp = g.nsp;
  const bool backward = gout != nullptr;
  T src[3], mult[3] = {1, 1, 1};
  if (interp == kBicubic) {
    // the window is found from the unpadded coordinate; the padding applies to each tap
    for (int s = 0; s < nsp; ++s)
      src[s] =
          unnormalize(coords[nsp - 1 - s], g.in[s], align_corners, backward ? &mult[s] : nullptr);
    const T y0 = std::floor(src[0]), x0 = std::floor(src[1]);
    T xc[4], yc[4], xg[4], yg[4];
    cubic_coefficients(xc, src[1] - x0);
    cubic_coefficients(yc, src[0] - y0);
    int64_t at[4][4];
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        at[i][j] = bounded_index(x0 - 1 + j, y0 - 1 + i, g, padding, align_corners);
    if (!backward) {
      for (int64_t c = 0; c < g.C; ++c) {
        const T* ip = inp + c * g.in_numel;
        T rows[4];
        for (int i = 0; i < 4; ++i) {
          T v[4];
          for (int j = 0; j < 4; ++j) v[j] = at[i][j] >= 0 ? ip[at[i][j]] : T(0);
          rows[i] = v[0] * xc[0] + v[1] * xc[1] + v[2] * xc[2] + v[3] * xc[3];
        }
        out[c * out_stride] = rows[0] * yc[0] + rows[1] * yc[1] + rows[2] * yc[2] + rows[3] * yc[3];
      }
      return;
    }
    cubic_coefficients_grad(xg, src[1] - x0);
    cubic_coefficients_grad(yg, src[0] - y0);
    T gx = 0, gy = 0;
    for (int64_t c = 0; c < g.C; ++c) {
      const T* ip = inp + c * g.in_numel;
      T* gp = ginp ? ginp + c * g.in_numel : nullptr;
      const T go = gout[c * out_stride];
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          const int64_t a = at[i][j];
          if (a < 0) continue;
          if (gp) gp[a] += go * xc[j] * yc[i];
          const T v = ip[a];
          gx -= v * xg[j] * yc[i] * go;
          gy -= v * yg[i] * xc[j] * go;
        }
    }
    ggrid[0] = mult[1] * gx;
    ggrid[1] = mult[0] * gy;
    return;
  }
  for (int s = 0; s < nsp; ++s)
    src[s] = source_index(coords[nsp - 1 - s], g.in[s], padding, align_corners,
                          backward ? &mult[s] : nullptr);
  if (interp == kNearest) {
    int64_t pos[3];
    for (int s = 0; s < nsp; ++s) pos[s] = static_cast<int64_t>(std::nearbyint(src[s]));
    const int64_t a = flat_index(pos, g.in, nsp);
    for (int64_t c = 0; c < g.C; ++c) {
      if (!backward)
        out[c * out_stride] = a >= 0 ? inp[c * g.in_numel + a] : T(0);
      else if (ginp && a >= 0)
        ginp[c * g.in_numel + a] += gout[c * out_stride];
    }
    if (backward)
      for (int s = 0; s < nsp; ++s) ggrid[s] = 0;
    return;
  }
  // (tri)linear: the 2^nsp corners, the outermost dimension's bit the highest (torch's order:
  // nw, ne, sw, se; tnw .. bse); each corner's weight is the product of its per-dimension weights,
  // from the innermost dimension out.
  int64_t base[3];
  T lo_w[3], hi_w[3];
  for (int s = 0; s < nsp; ++s) {
    base[s] = static_cast<int64_t>(std::floor(src[s]));
    hi_w[s] = src[s] - static_cast<T>(base[s]);
    lo_w[s] = static_cast<T>(base[s] + 1) - src[s];
  }
  const int corners = 1 << nsp;
  int64_t at[8];
  T w[8];
  for (int k = 0; k < corners; ++k) {
    int64_t pos[3];
    T wk = 1;
    for (int s = nsp - 1; s >= 0; --s) {
      const bool hi = (k >> (nsp - 1 - s)) & 1;
      pos[s] = base[s] + hi;
      wk = s == nsp - 1 ? (hi ? hi_w[s] : lo_w[s]) : wk * (hi ? hi_w[s] : lo_w[s]);
    }
    at[k] = flat_index(pos, g.in, nsp);
    w[k] = wk;
  }
  if (!backward) {
    for (int64_t c = 0; c < g.C; ++c) {
      const T* ip = inp + c * g.in_numel;
      T res = 0;
      for (int k = 0; k < corners; ++k)
        if (at[k] >= 0) res += ip[at[k]] * w[k];
      out[c * out_stride] = res;
    }
    return;
  }
  T gsrc[3] = {0, 0, 0};
  for (int64_t c = 0; c < g.C; ++c) {
    const T* ip = inp + c * g.in_numel;
    T* gp = ginp ? ginp + c * g.in_numel : nullptr;
    const T go = gout[c * out_stride];
    for (int k = 0; k < corners; ++k) {
      if (at[k] < 0) continue;
      if (gp) gp[at[k]] += w[k] * go;
      const T v = ip[at[k]];
      for (int s = 0; s < nsp; ++s) {
        // d(weight)/d(src[s]): +-1 times the other dimensions' weights
        T other = 1;
        for (int r = nsp - 1; r >= 0; --r) {
          if (r == s) continue;
          const bool hi = (k >> (nsp - 1 - r)) & 1;
          other = other * (hi ? hi_w[r] : lo_w[r]);
        }
        const bool hi = (k >> (nsp - 1 - s)) & 1;
        gsrc[s] += (hi ? v : -v) * other * go;
      }
    }
  }
  for (int s = 0; s < nsp; ++s) ggrid[nsp - 1 - s] = mult[s] * gsrc[s];
}

Tensor grid_sampler_forward(const Tensor& input, const Tensor& grid, int64_t interp,
                            int64_t padding, bool align_corners, int nsp) {
  check_grid_sampler(input, grid, interp, nsp);
  const Geometry g = geometry_of(input, grid, nsp);
  std::vector<int64_t> shape{g.N, g.C};
  for (int s = 0; s < nsp; ++s) shape.push_back(grid.size(1 + s));
  Tensor out = Tensor::empty(shape, input.dtype());
  const Tensor x = input.contiguous(), gr = grid.contiguous();
  const char* name = nsp == 2 ? "grid_sampler_2d_cpu" : "grid_sampler_3d_cpu";
  dispatch_floating(input.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = x.data<T>();
      const T* gp = gr.data<T>();
      T* op = out.data<T>();
      const int64_t total = g.N * g.out_numel;
      const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(g.C * 8, 1));
      parallel_for(total, grain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t n = i / g.out_numel, p = i % g.out_numel;
          sample_point<T>(g, ip + n * g.C * g.in_numel, gp + i * nsp,
                          op + n * g.C * g.out_numel + p, g.out_numel, interp, padding,
                          align_corners);
        }
      });
    } else {
      throw_unsupported_dtype(name, input.dtype());
    }
  });
  return out;
}

std::tuple<Tensor, Tensor> grid_sampler_backward(const Tensor& grad_output, const Tensor& input,
                                                 const Tensor& grid, int64_t interp,
                                                 int64_t padding, bool align_corners,
                                                 bool input_grad, int nsp) {
  check_grid_sampler(input, grid, interp, nsp);
  const Geometry g = geometry_of(input, grid, nsp);
  const Tensor x = input.contiguous(), gr = grid.contiguous();
  const Tensor go = grad_output.to(input.dtype()).contiguous();
  Tensor ginp;
  if (input_grad) {
    ginp = Tensor::empty(input.sizes(), input.dtype());
    ginp.fill_(Scalar(0.0));
  }
  Tensor ggrid = Tensor::empty(grid.sizes(), grid.dtype());
  const char* name = nsp == 2 ? "grid_sampler_2d_backward_cpu" : "grid_sampler_3d_backward_cpu";
  dispatch_floating(input.dtype(), name, [&]<typename T>() {
    if constexpr (std::is_floating_point_v<T>) {
      const T* ip = x.data<T>();
      const T* gp = gr.data<T>();
      const T* gop = go.data<T>();
      T* gip = input_grad ? ginp.data<T>() : nullptr;
      T* ggp = ggrid.data<T>();
      // one batch element per task: its input gradient is its own
      parallel_for(g.N, 1, [&](int64_t b, int64_t e) {
        for (int64_t n = b; n < e; ++n)
          for (int64_t p = 0; p < g.out_numel; ++p) {
            const int64_t i = n * g.out_numel + p;
            sample_point<T>(g, ip + n * g.C * g.in_numel, gp + i * nsp, nullptr, g.out_numel,
                            interp, padding, align_corners, gop + n * g.C * g.out_numel + p,
                            gip ? gip + n * g.C * g.in_numel : nullptr, ggp + i * nsp);
          }
      });
    } else {
      throw_unsupported_dtype(name, input.dtype());
    }
  });
  return {ginp, ggrid};
}

Tensor grid_sampler_2d_k(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding,
                         bool align_corners) {
  return grid_sampler_forward(input, grid, interp, padding, align_corners, 2);
}
Tensor grid_sampler_3d_k(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding,
                         bool align_corners) {
  return grid_sampler_forward(input, grid, interp, padding, align_corners, 3);
}
std::tuple<Tensor, Tensor> grid_sampler_2d_backward_k(const Tensor& grad_output,
                                                      const Tensor& input, const Tensor& grid,
                                                      int64_t interp, int64_t padding,
                                                      bool align_corners, bool input_grad) {
  return grid_sampler_backward(grad_output, input, grid, interp, padding, align_corners, input_grad,
                               2);
}
std::tuple<Tensor, Tensor> grid_sampler_3d_backward_k(const Tensor& grad_output,
                                                      const Tensor& input, const Tensor& grid,
                                                      int64_t interp, int64_t padding,
                                                      bool align_corners, bool input_grad) {
  return grid_sampler_backward(grad_output, input, grid, interp, padding, align_corners, input_grad,
                               3);
}

// grid_sampler: the 2-D op for a 4-D input, else the 3-D one.
Tensor grid_sampler_k(const Tensor& input, const Tensor& grid, int64_t interp, int64_t padding,
                      bool align_corners) {
  if (input.dim() == 4) return ops::grid_sampler_2d(input, grid, interp, padding, align_corners);
  return ops::grid_sampler_3d(input, grid, interp, padding, align_corners);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(grid_sampler, cpu::grid_sampler_k)
AMPJIT_KERNEL(grid_sampler_2d, cpu::grid_sampler_2d_k)
AMPJIT_KERNEL(grid_sampler_3d, cpu::grid_sampler_3d_k)
AMPJIT_KERNEL(grid_sampler_2d_backward, cpu::grid_sampler_2d_backward_k)
AMPJIT_KERNEL(grid_sampler_3d_backward, cpu::grid_sampler_3d_backward_k)
