// Normalization, dropout and distance kernels (runtime/ops/nn.def): layer_norm, batch_norm,
// group_norm, dropout, dropout_ and cdist. One floating dispatch per op
// (Note [One dispatch per op] in kernels/cpu/elementwise.h). The argument checks and shapes of the
// normalizations and dropout are shared with the CUDA kernels (kernels/norm_meta.h).
//
// Note [Statistics precision]
// Statistics (means, variances, distances) accumulate in acc_t<T>: double for float32 and float64
// inputs, float for float16 and bfloat16 (their op-math type, as in torch). Each output element is
// computed in acc_t from the statistics and rounded once to the input dtype. Variances take two
// passes (the mean, then the centered sum of squares), so a large mean does not cancel the digits
// of a small variance; sums run in eight interleaved partial sums, which vectorizes and grows the
// rounding error more slowly than one running sum.
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "kernels/norm_meta.h"
#include "runtime/boxing.h"
#include "runtime/layout.h"
#include "runtime/op_table.h"
#include "runtime/random.h"
#include "runtime/strided_loop.h"

namespace ampjit::cpu {
namespace {

template <typename T>
using acc_t = std::conditional_t<std::is_same_v<opmath_t<T>, float> && !std::is_same_v<T, float>,
                                 float, double>;

// sum over i in [0, n) of f(i), in eight partial sums.
template <typename A, typename F>
A lane_sum(int64_t n, F f) {
  A lanes[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int l = 0; l < 8; ++l) lanes[l] += f(i + l);
  }
  A s = 0;
  for (; i < n; ++i) s += f(i);
  return s + (((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) +
              ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7])));
}

// Channel c of an N x C x S tensor: its mean and the sum of squared deviations from it, in two
// passes (Note [Statistics precision]); batch norm's forward and backward kernels share it.
template <typename T, typename A>
void channel_moments(const T* xp, int64_t N, int64_t C, int64_t S, int64_t c, A& mean, A& sq) {
  A sum = 0;
  for (int64_t n = 0; n < N; ++n) {
    const T* xc = xp + (n * C + c) * S;
    sum += lane_sum<A>(S, [xc](int64_t s) { return static_cast<A>(xc[s]); });
  }
  mean = sum / static_cast<A>(N * S);
  sq = 0;
  for (int64_t n = 0; n < N; ++n) {
    const T* xc = xp + (n * C + c) * S;
    const A m = mean;
    sq += lane_sum<A>(S, [xc, m](int64_t s) {
      const A d = static_cast<A>(xc[s]) - m;
      return d * d;
    });
  }
}

// The mean and biased variance of n contiguous values (Note [Statistics precision]).
template <typename T, typename A = acc_t<T>>
void moments(const T* x, int64_t n, A& mean, A& var) {
  const A sum = lane_sum<A>(n, [x](int64_t i) { return static_cast<A>(x[i]); });
  const A m = sum / static_cast<A>(n);
  const A sq = lane_sum<A>(n, [x, m](int64_t i) {
    const A d = static_cast<A>(x[i]) - m;
    return d * d;
  });
  mean = m;
  var = sq / static_cast<A>(n);
}

// Rows of work for parallel_for, given the elements each row touches.
int64_t row_grain(int64_t row_elems) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, row_elems));
}

// An optional per-channel (or per-element) parameter as `n` contiguous values of dtype `dt`;
// `fill` everywhere when absent.
Tensor param_or(const std::optional<Tensor>& p, int64_t n, ScalarType dt, double fill) {
  if (meta::has(p)) return p->to(dt).contiguous().reshape(std::vector<int64_t>{n});
  Tensor t = Tensor::empty(std::vector<int64_t>{n}, dt);
  t.fill_(Scalar(fill));
  return t;
}

// Normalizes `rows` rows of Cg * S contiguous values each: row r holds channels
// (r % G) * Cg ... + Cg - 1, each a run of S values, and y = (x - mean) * rstd * w[c] + b[c].
// layer_norm is the case G = 1, S = 1 (one "channel" per normalized element).
template <typename T>
void normalize_groups(const T* x, T* y, int64_t rows, int64_t G, int64_t Cg, int64_t S,
                      const acc_t<T>* w, const acc_t<T>* b, double eps) {
  using A = acc_t<T>;
  const int64_t D = Cg * S;
  parallel_for(rows, row_grain(D), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * D;
      T* yr = y + r * D;
      A mean, var;
      moments(xr, D, mean, var);
      const A rstd = A(1) / std::sqrt(var + static_cast<A>(eps));
      const int64_t c0 = (r % G) * Cg;
      for (int64_t cg = 0; cg < Cg; ++cg) {
        const A scale = rstd * w[c0 + cg], shift = b[c0 + cg];
        const T* xs = xr + cg * S;
        T* ys = yr + cg * S;
        for (int64_t s = 0; s < S; ++s)
          ys[s] = static_cast<T>((static_cast<A>(xs[s]) - mean) * scale + shift);
      }
    }
  });
}

// --- layer_norm, group_norm ------------------------------------------------------------------

// layer_norm and group_norm: input, viewed as `s`, normalized over each of `groups` groups of
// channels in every batch entry (layer_norm: one group of its normalized elements, inner = 1).
Tensor normalize_in_groups(const Tensor& input, const meta::NormShape& s, int64_t groups,
                           const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                           double eps, const char* op) {
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), input.device());
  if (out.numel() == 0) return out;
  dispatch_floating(input.dtype(), op, [&]<typename T>() {
    const ScalarType at = scalar_type_of<acc_t<T>>();
    const Tensor w = param_or(weight, s.channels, at, 1.0), b = param_or(bias, s.channels, at, 0.0);
    normalize_groups<T>(x.data<T>(), out.data<T>(), s.batch * groups, groups, s.channels / groups,
                        s.inner, w.data<acc_t<T>>(), b.data<acc_t<T>>(), eps);
  });
  return out;
}

Tensor layer_norm_k(const Tensor& input, std::vector<int64_t> normalized_shape,
                    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                    double eps, bool /*cudnn_enable*/) {
  const meta::NormShape s = meta::layer_norm_shape(input, normalized_shape, weight, bias);
  return normalize_in_groups(input, s, 1, weight, bias, eps, "layer_norm");
}

Tensor group_norm_k(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, double eps, bool /*cudnn_enabled*/) {
  const meta::NormShape s = meta::group_norm_shape(input, num_groups, weight, bias);
  return normalize_in_groups(input, s, num_groups, weight, bias, eps, "group_norm");
}

// --- backward: layer_norm, group_norm --------------------------------------------------------

// Note [Normalization backward kernels]
// Autograd's formulas for layer_norm, group_norm and batch_norm (runtime/autograd/derivatives.cpp)
// call these on the CPU when backward itself is not recorded: one pass over the data instead of the
// dozen ops of the composite formula, with the statistics recomputed from the saved input in
// acc_t (Note [Statistics precision]). For y = xhat * w + b, xhat = (x - mean) * rstd over a group
// of M values: dx = rstd * (gw - mean(gw) - xhat * mean(gw * xhat)) with gw = g * w (for
// batch_norm in eval mode, dx = rstd * w * g), dw = sum of g * xhat and db = sum of g over
// everything that shares the parameter. dx has the input's dtype, dw and db acc_t's (the engine
// casts them to the parameters').

// Rows of Cg * S values as normalize_groups reads them; dw, db: Cg * G values, summed over rows.
template <typename T>
void normalize_groups_backward(const T* g, const T* x, T* dx, int64_t rows, int64_t G, int64_t Cg,
                               int64_t S, const acc_t<T>* w, acc_t<T>* dw, acc_t<T>* db,
                               double eps) {
  using A = acc_t<T>;
  const int64_t D = Cg * S;
  std::vector<A> means(rows), rstds(rows);
  parallel_for(rows, row_grain(D), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const T* xr = x + r * D;
      const T* gr = g + r * D;
      A mean, var;
      moments(xr, D, mean, var);
      const A rstd = A(1) / std::sqrt(var + static_cast<A>(eps));
      means[r] = mean;
      rstds[r] = rstd;
      const int64_t c0 = (r % G) * Cg;
      A sum_gw = 0, sum_gwx = 0;
      for (int64_t cg = 0; cg < Cg; ++cg) {
        const A wc = w[c0 + cg];
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = cg * S + s;
          const A gw = static_cast<A>(gr[i]) * wc;
          sum_gw += gw;
          sum_gwx += gw * (static_cast<A>(xr[i]) - mean) * rstd;
        }
      }
      const A a = sum_gw / static_cast<A>(D), c = sum_gwx / static_cast<A>(D);
      T* dr = dx + r * D;
      for (int64_t cg = 0; cg < Cg; ++cg) {
        const A wc = w[c0 + cg];
        for (int64_t s = 0; s < S; ++s) {
          const int64_t i = cg * S + s;
          const A xhat = (static_cast<A>(xr[i]) - mean) * rstd;
          dr[i] = static_cast<T>(rstd * (static_cast<A>(gr[i]) * wc - a - xhat * c));
        }
      }
    }
  });
  const int64_t C = G * Cg;
  parallel_for(C, row_grain(rows * S / std::max<int64_t>(G, 1)), [&](int64_t begin, int64_t end) {
    for (int64_t ch = begin; ch < end; ++ch) {
      const int64_t grp = ch / Cg, cg = ch % Cg;
      A sw = 0, sb = 0;
      for (int64_t r = grp; r < rows; r += G) {
        const T* xr = x + r * D + cg * S;
        const T* gr = g + r * D + cg * S;
        for (int64_t s = 0; s < S; ++s) {
          const A gv = static_cast<A>(gr[s]);
          sw += gv * (static_cast<A>(xr[s]) - means[r]) * rstds[r];
          sb += gv;
        }
      }
      dw[ch] = sw;
      db[ch] = sb;
    }
  });
}

std::tuple<Tensor, Tensor, Tensor> normalize_in_groups_backward(
    const Tensor& grad, const Tensor& input, const meta::NormShape& s, int64_t groups,
    const std::optional<Tensor>& weight, double eps, const char* op) {
  const Tensor x = input.contiguous(), g = grad.contiguous();
  Tensor dx = Tensor::empty(input.sizes(), input.dtype(), input.device());
  Tensor dw, db;
  dispatch_floating(input.dtype(), op, [&]<typename T>() {
    const ScalarType at = scalar_type_of<acc_t<T>>();
    dw = Tensor::empty(std::vector<int64_t>{s.channels}, at);
    db = Tensor::empty(std::vector<int64_t>{s.channels}, at);
    if (input.numel() == 0) {
      dw.fill_(Scalar(0.0));
      db.fill_(Scalar(0.0));
      return;
    }
    const Tensor w = param_or(weight, s.channels, at, 1.0);
    normalize_groups_backward<T>(g.data<T>(), x.data<T>(), dx.data<T>(), s.batch * groups, groups,
                                 s.channels / groups, s.inner, w.data<acc_t<T>>(),
                                 dw.data<acc_t<T>>(), db.data<acc_t<T>>(), eps);
  });
  return {dx, dw, db};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_k(const Tensor& grad, const Tensor& input,
                                                         std::vector<int64_t> normalized_shape,
                                                         const std::optional<Tensor>& weight,
                                                         double eps) {
  const meta::NormShape s = meta::layer_norm_shape(input, normalized_shape, weight, std::nullopt);
  auto [dx, dw, db] = normalize_in_groups_backward(grad, input, s, 1, weight, eps, "layer_norm");
  return {dx, dw.view(normalized_shape), db.view(normalized_shape)};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_k(const Tensor& grad, const Tensor& input,
                                                         int64_t num_groups,
                                                         const std::optional<Tensor>& weight,
                                                         double eps) {
  const meta::NormShape s = meta::group_norm_shape(input, num_groups, weight, std::nullopt);
  return normalize_in_groups_backward(grad, input, s, num_groups, weight, eps, "group_norm");
}

// batch_norm's: per channel, over the N x S values of a contiguous input.
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_k(const Tensor& grad, const Tensor& input,
                                                         const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& running_mean,
                                                         const std::optional<Tensor>& running_var,
                                                         bool training, double eps) {
  const meta::NormShape s =
      meta::batch_norm_shape(input, weight, std::nullopt, running_mean, running_var, training);
  const int64_t N = s.batch, C = s.channels, S = s.inner, M = N * S;
  const Tensor x = input.contiguous(), g = grad.contiguous();
  Tensor dx = Tensor::empty(input.sizes(), input.dtype(), input.device());
  Tensor dw, db;
  const bool batch_stats = training || !meta::has(running_mean) || !meta::has(running_var);
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    using A = acc_t<T>;
    const ScalarType at = scalar_type_of<A>();
    dw = Tensor::empty(std::vector<int64_t>{C}, at);
    db = Tensor::empty(std::vector<int64_t>{C}, at);
    const Tensor w = param_or(weight, C, at, 1.0);
    Tensor rm, rv;
    if (!batch_stats) {
      rm = running_mean->to(at).contiguous();
      rv = running_var->to(at).contiguous();
    }
    const T* xp = x.data<T>();
    const T* gp = g.data<T>();
    T* dp = dx.data<T>();
    A* dwp = dw.data<A>();
    A* dbp = db.data<A>();
    parallel_for(C, row_grain(M), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        A mean, rstd;
        if (batch_stats) {
          A sq;
          channel_moments(xp, N, C, S, c, mean, sq);
          rstd = A(1) / std::sqrt(sq / static_cast<A>(M) + static_cast<A>(eps));
        } else {
          mean = rm.data<A>()[c];
          rstd = A(1) / std::sqrt(rv.data<A>()[c] + static_cast<A>(eps));
        }
        A sum_g = 0, sum_gx = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T* xc = xp + (n * C + c) * S;
          const T* gc = gp + (n * C + c) * S;
          for (int64_t i = 0; i < S; ++i) {
            const A gv = static_cast<A>(gc[i]);
            sum_g += gv;
            sum_gx += gv * (static_cast<A>(xc[i]) - mean) * rstd;
          }
        }
        dwp[c] = sum_gx;
        dbp[c] = sum_g;
        const A scale = rstd * w.data<A>()[c];
        const A a = sum_g / static_cast<A>(M), b = sum_gx / static_cast<A>(M);
        for (int64_t n = 0; n < N; ++n) {
          const T* xc = xp + (n * C + c) * S;
          const T* gc = gp + (n * C + c) * S;
          T* dc = dp + (n * C + c) * S;
          for (int64_t i = 0; i < S; ++i) {
            const A gv = static_cast<A>(gc[i]);
            if (batch_stats) {
              const A xhat = (static_cast<A>(xc[i]) - mean) * rstd;
              dc[i] = static_cast<T>(scale * (gv - a - xhat * b));
            } else {
              dc[i] = static_cast<T>(scale * gv);
            }
          }
        }
      }
    });
  });
  return {dx, dw, db};
}

// --- batch_norm ------------------------------------------------------------------------------

// Eval-mode batch_norm of a channels-last input, in its layout: each N x H x W position is a
// row of C values, normalized by the running statistics with the row-major loop's arithmetic.
Tensor batch_norm_eval_channels_last(const Tensor& input, const meta::NormShape& s,
                                     const std::optional<Tensor>& weight,
                                     const std::optional<Tensor>& bias, const Tensor& running_mean,
                                     const Tensor& running_var, double eps) {
  const int64_t C = s.channels, rows = input.numel() / C;
  Tensor out = empty_channels_last(input.sizes(), input.dtype(), input.device());
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    using A = acc_t<T>;
    const ScalarType at = scalar_type_of<A>();
    const Tensor rm = running_mean.to(at).contiguous(), rv = running_var.to(at).contiguous();
    const Tensor w = param_or(weight, C, at, 1.0), b = param_or(bias, C, at, 0.0);
    std::vector<A> mean(C), scale(C), shift(C);
    for (int64_t c = 0; c < C; ++c) {
      mean[c] = rm.data<A>()[c];
      scale[c] = A(1) / std::sqrt(rv.data<A>()[c] + static_cast<A>(eps)) * w.data<A>()[c];
      shift[c] = b.data<A>()[c];
    }
    const T* xp = input.data<T>();
    T* yp = out.data<T>();
    parallel_for(rows, row_grain(C), [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r) {
        const T* xr = xp + r * C;
        T* yr = yp + r * C;
        for (int64_t c = 0; c < C; ++c)
          yr[c] = static_cast<T>((static_cast<A>(xr[c]) - mean[c]) * scale[c] + shift[c]);
      }
    });
  });
  return out;
}

Tensor batch_norm_k(const Tensor& input, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                    const std::optional<Tensor>& running_var, bool training, double momentum,
                    double eps, bool cudnn_enabled) {
  // torch returns a copy of an empty input, of any rank, and leaves the running statistics alone.
  if (input.numel() == 0) return input.clone();
  const bool channels_last = is_channels_last(input);  // Note [Channels-last tensors]
  if (channels_last && (training || !meta::has(running_mean) || !meta::has(running_var)))
    return to_channels_last(batch_norm_k(input.contiguous(), weight, bias, running_mean,
                                         running_var, training, momentum, eps, cudnn_enabled));
  const meta::NormShape s =
      meta::batch_norm_shape(input, weight, bias, running_mean, running_var, training);
  if (channels_last)
    return batch_norm_eval_channels_last(input, s, weight, bias, *running_mean, *running_var, eps);
  const int64_t N = s.batch, C = s.channels, S = s.inner;
  const int64_t count = N * S;  // values per channel
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), input.device());
  // Batch statistics per channel, in double for the running-stat update below.
  std::vector<double> batch_mean(training ? C : 0), batch_var_sum(training ? C : 0);
  dispatch_floating(input.dtype(), "batch_norm", [&]<typename T>() {
    using A = acc_t<T>;
    const ScalarType at = scalar_type_of<A>();
    const T* xp = x.data<T>();
    T* yp = out.data<T>();
    std::vector<A> mean(C), rstd(C);
    if (training) {
      parallel_for(C, row_grain(count), [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          A m, sq;
          channel_moments(xp, N, C, S, c, m, sq);
          mean[c] = m;
          rstd[c] = A(1) / std::sqrt(sq / static_cast<A>(count) + static_cast<A>(eps));
          batch_mean[c] = static_cast<double>(m);
          batch_var_sum[c] = static_cast<double>(sq);
        }
      });
    } else {
      const Tensor rm = running_mean->to(at).contiguous(), rv = running_var->to(at).contiguous();
      for (int64_t c = 0; c < C; ++c) {
        mean[c] = rm.data<A>()[c];
        rstd[c] = A(1) / std::sqrt(rv.data<A>()[c] + static_cast<A>(eps));
      }
    }
    const Tensor w = param_or(weight, C, at, 1.0), b = param_or(bias, C, at, 0.0);
    const A* wp = w.data<A>();
    const A* bp = b.data<A>();
    parallel_for(N * C, row_grain(S), [&](int64_t begin, int64_t end) {
      for (int64_t plane = begin; plane < end; ++plane) {
        const int64_t c = plane % C;
        const A m = mean[c], scale = rstd[c] * wp[c], shift = bp[c];
        const T* xs = xp + plane * S;
        T* ys = yp + plane * S;
        for (int64_t s = 0; s < S; ++s)
          ys[s] = static_cast<T>((static_cast<A>(xs[s]) - m) * scale + shift);
      }
    });
  });

  // running = (1 - momentum) * running + momentum * batch, with the unbiased batch variance, as
  // torch does; computed in double and rounded once into the running tensors' dtype.
  auto update = [&](const std::optional<Tensor>& running, auto batch_value) {
    if (!meta::has(running)) return;
    const Tensor old = running->to(ScalarType::Float64).contiguous();
    Tensor updated = Tensor::empty(std::vector<int64_t>{C}, ScalarType::Float64);
    for (int64_t c = 0; c < C; ++c) {
      updated.data<double>()[c] =
          momentum * batch_value(c) + (1 - momentum) * old.data<double>()[c];
    }
    Tensor target = *running;
    target.copy_(updated.view(running->sizes()));
  };
  if (training) {
    update(running_mean, [&](int64_t c) { return batch_mean[c]; });
    update(running_var,
           [&](int64_t c) { return batch_var_sum[c] / static_cast<double>(count - 1); });
  }
  return out;
}

// --- dropout ---------------------------------------------------------------------------------

// Writes x * noise into y (both contiguous, possibly the same memory), where noise is 0 with
// probability p and 1 / (1 - p) otherwise, drawn from the CPU default generator. As in torch, the
// noise is a tensor of the input's dtype (so 1 / (1 - p) is rounded to it) and p = 1 multiplies
// by zero without drawing (so NaN and infinity become NaN).
void dropout_into(const Tensor& x, const Tensor& y, double p) {
  dispatch_floating(x.dtype(), "dropout", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    const int64_t n = x.numel();
    if (p == 1) {
      for (int64_t i = 0; i < n; ++i) yp[i] = static_cast<T>(static_cast<M>(xp[i]) * M(0));
      return;
    }
    const M scale = meta::dropout_scale<T>(p);
    const double keep = 1 - p;
    Generator& g = default_generator(DeviceType::CPU);
    std::lock_guard<std::mutex> lock(g.mutex());
    for (int64_t i = 0; i < n; ++i) {
      const M noise = g.next_double() < keep ? scale : M(0);
      yp[i] = static_cast<T>(static_cast<M>(xp[i]) * noise);
    }
  });
}

Tensor dropout_k(const Tensor& input, double p, bool train) {
  if (meta::dropout_returns_input(input, p, train)) return input;
  const Tensor x = input.contiguous();
  Tensor out = Tensor::empty(input.sizes(), input.dtype(), input.device());
  dropout_into(x, out, p);
  return out;
}

Tensor dropout_inplace_k(Tensor self, double p, bool train) {
  if (meta::dropout_returns_input(self, p, train)) return self;
  if (self.is_contiguous()) {
    dropout_into(self, self, p);
  } else {
    Tensor out = Tensor::empty(self.sizes(), self.dtype(), self.device());
    dropout_into(self.contiguous(), out, p);
    self.copy_(out);
  }
  return self;
}

// --- cdist -----------------------------------------------------------------------------------

enum class PNorm { Zero, One, Two, Inf, General };

// The p-distance between two rows of m values (Note [Statistics precision]).
template <PNorm K, typename T, typename A = acc_t<T>>
A distance(const T* u, const T* v, int64_t m, A p) {
  if constexpr (K == PNorm::Inf) {
    A r = 0;
    for (int64_t i = 0; i < m; ++i) {
      const A d = std::abs(static_cast<A>(u[i]) - static_cast<A>(v[i]));
      r = d > r || std::isnan(d) ? d : r;
    }
    return r;
  } else {
    const A s = lane_sum<A>(m, [=](int64_t i) {
      const A d = std::abs(static_cast<A>(u[i]) - static_cast<A>(v[i]));
      if constexpr (K == PNorm::Zero)
        return static_cast<A>(d != 0);
      else if constexpr (K == PNorm::One)
        return d;
      else if constexpr (K == PNorm::Two)
        return d * d;
      else
        return std::pow(d, p);
    });
    if constexpr (K == PNorm::Two)
      return std::sqrt(s);
    else if constexpr (K == PNorm::General)
      return std::pow(s, A(1) / p);
    else
      return s;
  }
}

// Distances between every row of a [B, P, M] and of b [B, R, M] into out [B, P, R].
template <PNorm K, typename T>
void all_distances(const T* a, const T* b, T* out, int64_t B, int64_t P, int64_t R, int64_t M,
                   double p) {
  using A = acc_t<T>;
  parallel_for(B * P, row_grain(R * M), [&](int64_t begin, int64_t end) {
    for (int64_t bp = begin; bp < end; ++bp) {
      const T* u = a + bp * M;
      const T* bb = b + (bp / P) * R * M;
      T* o = out + bp * R;
      for (int64_t r = 0; r < R; ++r)
        o[r] = static_cast<T>(distance<K, T>(u, bb + r * M, M, static_cast<A>(p)));
    }
  });
}

Tensor cdist_k(const Tensor& x1, const Tensor& x2, double p, std::optional<int64_t> compute_mode) {
  AMPJIT_CHECK(x1.dim() >= 2, "cdist only supports at least 2D tensors, X1 got: {}D", x1.dim());
  AMPJIT_CHECK(x2.dim() >= 2, "cdist only supports at least 2D tensors, X2 got: {}D", x2.dim());
  AMPJIT_CHECK(x1.size(-1) == x2.size(-1),
               "X1 and X2 must have the same number of columns. X1: {} X2: {}", x1.size(-1),
               x2.size(-1));
  AMPJIT_CHECK(is_floating(x1.dtype()), "cdist only supports floating-point dtypes, X1 got: {}",
               dtype_name(x1.dtype()));
  AMPJIT_CHECK(is_floating(x2.dtype()), "cdist only supports floating-point dtypes, X2 got: {}",
               dtype_name(x2.dtype()));
  AMPJIT_CHECK(x1.dtype() == x2.dtype(),
               "cdist: X1 and X2 must have the same dtype, but got {} and {}",
               dtype_name(x1.dtype()), dtype_name(x2.dtype()));
  AMPJIT_CHECK(p >= 0, "cdist only supports non-negative p values");
  // compute_mode picks between a matrix-multiply formulation and the direct one for p = 2; this
  // kernel always computes directly, which is the more accurate of the two.
  AMPJIT_CHECK(!compute_mode || (*compute_mode >= 0 && *compute_mode <= 2),
               "possible modes: None, 1, 2, but was: {}", compute_mode.value_or(0));
  const int64_t P = x1.size(-2), R = x2.size(-2), M = x1.size(-1);
  const DimVector batch =
      broadcast_shapes(x1.sizes().first(x1.dim() - 2), x2.sizes().first(x2.dim() - 2), "cdist");
  DimVector shape1(batch), shape2(batch), out_shape(batch);
  shape1.push_back(P), shape1.push_back(M);
  shape2.push_back(R), shape2.push_back(M);
  out_shape.push_back(P), out_shape.push_back(R);
  Tensor out = Tensor::empty(out_shape, x1.dtype(), x1.device());
  if (out.numel() == 0) return out;
  const Tensor a = x1.expand(shape1).contiguous(), b = x2.expand(shape2).contiguous();
  const int64_t B = numel_of(batch);
  const PNorm kind = p == 0          ? PNorm::Zero
                     : p == 1        ? PNorm::One
                     : p == 2        ? PNorm::Two
                     : std::isinf(p) ? PNorm::Inf
                                     : PNorm::General;
  dispatch_floating(x1.dtype(), "cdist", [&]<typename T>() {
    const T* ap = a.data<T>();
    const T* bp = b.data<T>();
    T* op = out.data<T>();
    switch (kind) {
      case PNorm::Zero:
        return all_distances<PNorm::Zero, T>(ap, bp, op, B, P, R, M, p);
      case PNorm::One:
        return all_distances<PNorm::One, T>(ap, bp, op, B, P, R, M, p);
      case PNorm::Two:
        return all_distances<PNorm::Two, T>(ap, bp, op, B, P, R, M, p);
      case PNorm::Inf:
        return all_distances<PNorm::Inf, T>(ap, bp, op, B, P, R, M, p);
      case PNorm::General:
        return all_distances<PNorm::General, T>(ap, bp, op, B, P, R, M, p);
    }
  });
  return out;
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(layer_norm, cpu::layer_norm_k)
AMPJIT_KERNEL(batch_norm, cpu::batch_norm_k)
AMPJIT_KERNEL(layer_norm_backward, cpu::layer_norm_backward_k)
AMPJIT_KERNEL(group_norm_backward, cpu::group_norm_backward_k)
AMPJIT_KERNEL(batch_norm_backward, cpu::batch_norm_backward_k)
AMPJIT_KERNEL(group_norm, cpu::group_norm_k)
AMPJIT_KERNEL(dropout, cpu::dropout_k)
AMPJIT_KERNEL(dropout_, cpu::dropout_inplace_k)
AMPJIT_KERNEL(cdist, cpu::cdist_k)
