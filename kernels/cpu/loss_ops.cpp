// Loss kernels (runtime/ops/loss.def). The pointwise losses build the unreduced loss in the
// promoted dtype (each element computed in op-math and rounded once) and reduce it as torch's
// apply_loss_reduction does; nll_loss and cross_entropy_loss walk the class dim of an (N, C, K)
// view of the input, accumulating in double (Note [Reduction accumulators] in reduce.h).
#include <atomic>
#include <limits>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/reduce.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit::cpu {
namespace {

// A 0-dim 1 that stands in for an absent weight, so each loss has one kernel shape.
Tensor scalar_one(ScalarType dt) {
  Tensor t = Tensor::empty(std::vector<int64_t>{}, dt);
  t.fill_(Scalar(1.0));
  return t;
}

bool defined(const std::optional<Tensor>& t) {
  return t && t->defined();
}

// --- pointwise losses ---------------------------------------------------------------------------

Tensor mse_loss_k(const Tensor& self, const Tensor& target, int64_t reduction) {
  const ScalarType rt = result_type(self, target);
  const Tensor loss = dispatch_floating(rt, "mse_loss", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("mse_loss", std::array{self, target}, rt, [](M x, M y) {
      const M d = x - y;
      return d * d;
    });
  });
  return apply_loss_reduction(loss, reduction);
}

// |self - target|; integer inputs work for 'none' and 'sum' and fail in mean, as in torch.
Tensor l1_loss_k(const Tensor& self, const Tensor& target, int64_t reduction) {
  const ScalarType rt = result_type(self, target);
  const Tensor loss = dispatch_numeric(rt, "l1_loss", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("l1_loss", std::array{self, target}, rt, [](M x, M y) -> M {
      const M d = static_cast<M>(x - y);
      if constexpr (std::is_unsigned_v<M>)
        return d;
      else
        return static_cast<M>(std::abs(d));
    });
  });
  return apply_loss_reduction(loss, reduction);
}

// -w (t log(x) + (1 - t) log(1 - x)) with both logs clamped at -100 (torch). The range check runs
// inside the parallel loop, so it raises a flag and the error is thrown after it.
Tensor bce_k(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
             int64_t reduction) {
  const ScalarType rt = result_type(self, target);
  const Tensor w = defined(weight) ? *weight : scalar_one(rt);
  std::atomic<bool> out_of_range{false};
  const Tensor loss = dispatch_floating(rt, "binary_cross_entropy", [&]<typename T>() {
    using M = opmath_t<T>;
    std::atomic<bool>* bad = &out_of_range;
    return map<T>("binary_cross_entropy", std::array{self, target, w}, rt, [bad](M x, M t, M wt) {
      if (!(x >= M(0) && x <= M(1))) bad->store(true, std::memory_order_relaxed);
      const M log_x = std::max(static_cast<M>(std::log(x)), M(-100));
      const M log_1mx = std::max(static_cast<M>(std::log1p(-x)), M(-100));
      return wt * ((t - M(1)) * log_1mx - t * log_x);
    });
  });
  AMPJIT_CHECK(!out_of_range.load(), "all elements of input should be between 0 and 1");
  return apply_loss_reduction(loss, reduction);
}

// w ((1 - t) x - (1 + (pw - 1) t) log_sigmoid(x)), with the stable
// log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)).
Tensor bce_logits_k(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                    const std::optional<Tensor>& pos_weight, int64_t reduction) {
  const ScalarType rt = result_type(self, target);
  const Tensor w = defined(weight) ? *weight : scalar_one(rt);
  const Tensor pw = defined(pos_weight) ? *pos_weight : scalar_one(rt);
  const Tensor loss = dispatch_floating(rt, "binary_cross_entropy_with_logits", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("binary_cross_entropy_with_logits", std::array{self, target, w, pw}, rt,
                  [](M x, M t, M wt, M pwt) {
                    const M log_sig = std::min(x, M(0)) - std::log1p(std::exp(-std::fabs(x)));
                    const M log_weight = M(1) + (pwt - M(1)) * t;
                    return wt * ((M(1) - t) * x - log_weight * log_sig);
                  });
  });
  return apply_loss_reduction(loss, reduction);
}

// --- class-index losses -------------------------------------------------------------------------

// An nll / cross-entropy input as (N, C, K): N samples (1 without a batch dim), C classes, K
// positions per sample (the product of the dims after the class dim). Sample s = n * K + k.
struct ClassLayout {
  int64_t n = 1, c = 1, k = 1;
  DimVector loss_sizes;  // the unreduced loss: the input's shape without the class dim
};

ClassLayout class_layout(const Tensor& self) {
  ClassLayout l;
  if (self.dim() == 1) {
    l.c = self.size(0);
    return l;
  }
  l.n = self.size(0);
  l.c = self.size(1);
  l.loss_sizes.push_back(l.n);
  for (int64_t d = 2; d < self.dim(); ++d) {
    l.k *= self.size(d);
    l.loss_sizes.push_back(self.size(d));
  }
  return l;
}

// torch's shape checks: nll_loss's for (C) and (N, C) inputs, nll_loss_nd's (ValueError) beyond
// and for the op of that name (`nd`).
void check_nll_shapes(const Tensor& self, const Tensor& target, bool nd) {
  AMPJIT_CHECK(nd || self.dim() >= 1, "input tensor should be 1D or 2D");
  AMPJIT_CHECK_T(ValueError, self.dim() >= 1, "Expected 1 or more dimensions (got {})", self.dim());
  if (nd || self.dim() > 2) {
    AMPJIT_CHECK_T(ValueError,
                   self.dim() == 1 || (target.dim() >= 1 && self.size(0) == target.size(0)),
                   "Expected input batch_size ({}) to match target batch_size ({}).", self.size(0),
                   target.dim() >= 1 ? target.size(0) : 0);
  }
  if (self.dim() <= 2) {
    AMPJIT_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    const bool no_batch_dim = self.dim() == 1 && target.dim() == 0;
    AMPJIT_CHECK(no_batch_dim || (target.dim() == 1 && self.size(0) == target.size(0)),
                 "size mismatch (got input: {}, target: {})", self.shape_str(), target.shape_str());
    return;
  }
  const bool same =
      target.dim() == self.dim() - 1 &&
      std::equal(target.sizes().begin() + 1, target.sizes().end(), self.sizes().begin() + 2);
  if (!same) {
    DimVector want{self.size(0)};
    for (int64_t d = 2; d < self.dim(); ++d) want.push_back(self.size(d));
    throw Error(
        fmt::format("Expected target size {}, got {}", shape_str(want), target.shape_str()));
  }
}

// Class-index targets: int64 (uint8 is widened, as torch's CPU kernel accepts it), contiguous, and
// in [0, C) unless ignored.
Tensor class_targets(const Tensor& target, int64_t c, int64_t ignore_index) {
  AMPJIT_CHECK(target.dtype() == ScalarType::Int64 || target.dtype() == ScalarType::UInt8,
               "expected scalar type Long but found {}", torch_type_name(target.dtype()));
  const Tensor t = target.to(ScalarType::Int64).contiguous();
  const int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    AMPJIT_CHECK_T(IndexError, p[i] == ignore_index || (p[i] >= 0 && p[i] < c),
                   "Target {} is out of bounds.", p[i]);
  }
  return t;
}

// A per-class weight as a contiguous tensor of `dt`, or an undefined tensor when absent.
Tensor class_weights(const std::optional<Tensor>& weight, int64_t c, ScalarType dt,
                     const char* prefix) {
  if (!defined(weight)) return Tensor();
  AMPJIT_CHECK(weight->dim() == 1 && weight->numel() == c,
               "{}weight tensor should be defined either for all {} classes or no classes but got "
               "weight tensor of shape: {}",
               prefix, c, weight->shape_str());
  return weight->to(dt).contiguous();
}

// -w[t] x[t] per sample; mean divides by the summed weights of the samples not ignored (nan when
// all are), sum adds them up. The loop is serial: O(1) work per sample.
Tensor nll_impl(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                int64_t reduction, int64_t ignore_index, bool nd) {
  check_nll_shapes(self, target, nd);
  const ClassLayout L = class_layout(self);
  const Tensor tg = class_targets(target, L.c, ignore_index);
  const Tensor w = class_weights(weight, L.c, self.dtype(), "");
  const Tensor x = self.contiguous();
  const int64_t samples = L.n * L.k;
  Tensor out = Tensor::empty(reduction == 0 ? L.loss_sizes : DimVector{}, self.dtype());
  dispatch_floating(self.dtype(), "nll_loss", [&]<typename T>() {
    const T* xp = x.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    const int64_t* tp = tg.data<int64_t>();
    T* op = out.data<T>();
    double total = 0, total_w = 0;
    for (int64_t s = 0; s < samples; ++s) {
      const int64_t t = tp[s];
      if (t == ignore_index) {
        if (reduction == 0) op[s] = T(0.0);
        continue;
      }
      const double wt = wp ? static_cast<double>(wp[t]) : 1.0;
      const double v = -wt * static_cast<double>(xp[((s / L.k) * L.c + t) * L.k + s % L.k]);
      if (reduction == 0) op[s] = static_cast<T>(v);
      total += v;
      total_w += wt;
    }
    if (reduction != 0) *op = static_cast<T>(reduction == 1 ? total / total_w : total);
  });
  return out;
}

Tensor nll_loss_k(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                  int64_t reduction, int64_t ignore_index) {
  return nll_impl(self, target, weight, reduction, ignore_index, false);
}
// As torch's nll_loss_nd (CompositeImplicit): after its shape checks, nll_loss for (C) and (N, C)
// inputs and nll_loss2d on an (N, C, 1, -1) view beyond, called through the dispatcher, so that
// under autocast those ops' own policy (float32 in torch 1.13's CPU lists) applies, as in torch.
Tensor nll_loss_nd_k(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     int64_t reduction, int64_t ignore_index) {
  check_nll_shapes(self, target, true);
  if (self.dim() <= 2) return ops::nll_loss(self, target, weight, reduction, ignore_index);
  const int64_t n = self.size(0), c = self.size(1);
  const bool empty = self.numel() == 0;
  const Tensor input =
      self.contiguous().view(empty ? DimVector{n, c, 0, 0} : DimVector{n, c, 1, -1});
  const Tensor t =
      target.contiguous().view(target.numel() == 0 ? DimVector{n, 0, 0} : DimVector{n, 1, -1});
  const Tensor out = ops::nll_loss2d(input, t, weight, reduction, ignore_index);
  if (reduction != 0) return out;
  DimVector shape{n};
  for (int64_t d = 2; d < self.dim(); ++d) shape.push_back(self.size(d));
  return out.view(shape);
}
Tensor nll_loss2d_k(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                    int64_t reduction, int64_t ignore_index) {
  AMPJIT_CHECK(target.dim() == 3,
               "only batches of spatial targets supported (3D tensors) but got targets of "
               "dimension: {}",
               target.dim());
  AMPJIT_CHECK(
      self.dim() == 4,
      "only batches of spatial inputs supported (4D tensors), but got input of dimension: {}",
      self.dim());
  return nll_impl(self, target, weight, reduction, ignore_index, false);
}

// cross_entropy = nll_loss(log_softmax(self, class_dim)), fused: each sample's log-sum-exp over
// the classes is computed once (shifted by the max, in double) and the loss read off it.
// Class-index targets: (1 - eps) * nll + eps / C * (-sum_c w_c logp_c), both zero for ignored
// samples; mean divides by the summed weights of the samples not ignored. Probability targets
// (target shaped like self): -sum_c w_c t'_c logp_c with t' = t (1 - eps) + eps / C; mean divides
// by the number of samples.
Tensor cross_entropy_k(const Tensor& self, const Tensor& target,
                       const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                       double label_smoothing) {
  const bool prob = self.dim() == target.dim() &&
                    std::equal(self.sizes().begin(), self.sizes().end(), target.sizes().begin());
  if (prob) {
    AMPJIT_CHECK(is_floating(target.dtype()),
                 "Expected floating point type for target with class probabilities, got {}",
                 torch_type_name(target.dtype()));
    AMPJIT_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
  }
  wrap_dim(self.dim() == 1 ? 0 : 1, self.dim());  // torch's log_softmax(self, class_dim) check
  AMPJIT_CHECK(label_smoothing <= 1.0, "label_smoothing must be between 0.0 and 1.0. Got: {}",
               label_smoothing);
  const double eps = std::max(label_smoothing, 0.0);
  const ClassLayout L = class_layout(self);
  Tensor tg, w;
  if (prob) {
    w = class_weights(weight, L.c, self.dtype(), "cross_entropy: ");
    tg = target.to(self.dtype()).contiguous();
  } else {
    check_nll_shapes(self, target, true);
    w = class_weights(weight, L.c, self.dtype(), "");
    tg = class_targets(target, L.c, ignore_index);
  }
  const Tensor x = self.contiguous();
  const int64_t samples = L.n * L.k, C = L.c, K = L.k;
  std::vector<double> loss(static_cast<size_t>(samples)), wsum(static_cast<size_t>(samples));
  dispatch_floating(self.dtype(), "cross_entropy_loss", [&]<typename T>() {
    using M = opmath_t<T>;
    const T* xp = x.data<T>();
    const T* wp = w.defined() ? w.data<T>() : nullptr;
    parallel_for(samples, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, C)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t s = b; s < e; ++s) {
                     const T* row = xp + (s / K) * C * K + s % K;  // class c at row[c * K]
                     M mx = -std::numeric_limits<M>::infinity();
                     for (int64_t c = 0; c < C; ++c) mx = std::max(mx, static_cast<M>(row[c * K]));
                     double se = 0;
                     for (int64_t c = 0; c < C; ++c)
                       se += std::exp(static_cast<M>(row[c * K]) - mx);
                     const double lse = static_cast<double>(mx) + std::log(se);
                     auto logp = [&](int64_t c) { return static_cast<double>(row[c * K]) - lse; };
                     auto wc = [&](int64_t c) { return wp ? static_cast<double>(wp[c]) : 1.0; };
                     double l = 0, ws = 0;
                     if (prob) {
                       const T* tr = tg.data<T>() + (s / K) * C * K + s % K;
                       for (int64_t c = 0; c < C; ++c) {
                         const double t = static_cast<double>(tr[c * K]) * (1 - eps) +
                                          eps / static_cast<double>(C);
                         l -= wc(c) * t * logp(c);
                       }
                       ws = 1;
                     } else if (const int64_t t = tg.data<int64_t>()[s]; t != ignore_index) {
                       l = -(1 - eps) * wc(t) * logp(t);
                       if (eps > 0) {
                         double smooth = 0;
                         for (int64_t c = 0; c < C; ++c) smooth -= wc(c) * logp(c);
                         l += eps / static_cast<double>(C) * smooth;
                       }
                       ws = wc(t);
                     }
                     loss[static_cast<size_t>(s)] = l;
                     wsum[static_cast<size_t>(s)] = ws;
                   }
                 });
  });
  if (reduction == 0) {
    Tensor out = Tensor::empty(std::vector<int64_t>{samples}, ScalarType::Float64);
    std::copy(loss.begin(), loss.end(), out.data<double>());
    return out.to(self.dtype()).view(L.loss_sizes);
  }
  double total = 0, total_w = 0;
  for (int64_t s = 0; s < samples; ++s) {
    total += loss[static_cast<size_t>(s)];
    total_w += wsum[static_cast<size_t>(s)];
  }
  Tensor out = Tensor::empty(std::vector<int64_t>{}, ScalarType::Float64);
  *out.data<double>() = reduction == 1 ? total / total_w : total;
  return out.to(self.dtype());
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(mse_loss, cpu::mse_loss_k)
AMPJIT_KERNEL(l1_loss, cpu::l1_loss_k)
AMPJIT_KERNEL(binary_cross_entropy, cpu::bce_k)
AMPJIT_KERNEL(binary_cross_entropy_with_logits, cpu::bce_logits_k)
AMPJIT_KERNEL(nll_loss, cpu::nll_loss_k)
AMPJIT_KERNEL(nll_loss_nd, cpu::nll_loss_nd_k)
AMPJIT_KERNEL(nll_loss2d, cpu::nll_loss2d_k)
AMPJIT_KERNEL(cross_entropy_loss, cpu::cross_entropy_k)
