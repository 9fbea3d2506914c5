// The connectionist temporal classification loss on the CPU (runtime/ops/nn_more.def), as torch
// 1.13's aten/src/ATen/native/LossCTC.cpp computes it: the forward (alpha) recursion of Graves et
// al. (2006), eq. (6)-(8), in log space per batch element, and its gradient from the backward
// (beta) recursion, eq. (16). The public ctc_loss (reductions, zero_infinity, the Tensor lengths)
// is a decomposition over _ctc_loss.
//
// Note [CTC in log space]
// The extended target l' interleaves the blank with the target's labels (blank, l1, blank, l2,
// ..., blank: 2 S + 1 states). alpha[t][s] is the log probability of the prefixes of l' ending in
// state s at time t; each step is a log-sum-exp of at most three predecessors, taken about their
// maximum (0 when all are -inf, so -inf - -inf never happens). Like torch, the states of log_alpha
// past 2 S + 1 for a shorter target, and its times past the input length, are -inf here (torch
// leaves them uninitialized).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"
#include "runtime/strided_loop.h"

namespace ampjit::cpu {
namespace {

using IntList = std::vector<int64_t>;

// Where each batch element's labels start in `targets` (int64, contiguous), and the longest target.
struct TargetLayout {
  IntList offsets;
  int64_t stride = 1;
  int64_t max_length = 0;
};

TargetLayout target_layout(const Tensor& targets, const IntList& target_lengths, int64_t batch) {
  TargetLayout l;
  l.offsets.resize(batch);
  if (targets.dim() == 1) {  // concatenated targets
    int64_t pos = 0;
    for (int64_t b = 0; b < batch; ++b) {
      l.offsets[b] = pos;
      pos += target_lengths[b];
      l.max_length = std::max(l.max_length, target_lengths[b]);
    }
    AMPJIT_CHECK(targets.size(0) == pos,
                 "Expected tensor to have size {} at dimension 0, but got size {} for argument #2 "
                 "'targets' (while checking arguments for ctc_loss_cpu)",
                 pos, targets.size(0));
  } else {  // batch x max_target_length
    for (int64_t b = 0; b < batch; ++b) {
      l.offsets[b] = b * targets.size(1);
      l.max_length = std::max(l.max_length, target_lengths[b]);
    }
    AMPJIT_CHECK(targets.size(0) == batch,
                 "Expected tensor to have size {} at dimension 0, but got size {} for argument #2 "
                 "'targets' (while checking arguments for ctc_loss_cpu)",
                 batch, targets.size(0));
    AMPJIT_CHECK(targets.size(1) >= l.max_length,
                 "Expected tensor to have size at least {} at dimension 1, but got size {} for "
                 "argument #2 'targets' (while checking arguments for ctc_loss_cpu)",
                 l.max_length, targets.size(1));
  }
  return l;
}

// State s of the extended target: the blank at even s, the target's label (s - 1) / 2 at odd s.
int64_t target_prime(const int64_t* targets, int64_t offset, int64_t s, int64_t blank) {
  return s % 2 == 0 ? blank : targets[offset + s / 2];
}

template <typename T>
T log_sum_exp3(T a, T b, T c) {  // Note [CTC in log space]
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  T m = std::max(a, std::max(b, c));
  if (m == neginf) m = 0;
  return std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m)) + m;
}

void check_ctc_args(const Tensor& log_probs, const Tensor& targets, const IntList& input_lengths,
                    const IntList& target_lengths, int64_t blank) {
  AMPJIT_CHECK(targets.dtype() == ScalarType::Int64 || targets.dtype() == ScalarType::Int32,
               "Expected tensor for argument #2 'targets' to have one of the following scalar "
               "types: Long, Int; but got {} instead (while checking arguments for ctc_loss_cpu)",
               dtype_name(targets.dtype()));
  AMPJIT_CHECK(log_probs.dim() == 3,
               "Expected 3-dimensional tensor, but got {}-dimensional tensor for argument #1 "
               "'log_probs' (while checking arguments for ctc_loss_cpu)",
               log_probs.dim());
  AMPJIT_CHECK(targets.dim() >= 1 && targets.dim() <= 2,
               "Expected 1 to 2 dimensions, but got {}-dimensional tensor for argument #2 "
               "'targets' (while checking arguments for ctc_loss_cpu)",
               targets.dim());
  const int64_t batch = log_probs.size(1);
  AMPJIT_CHECK(0 <= blank && blank < log_probs.size(2), "blank must be in label range");
  AMPJIT_CHECK(static_cast<int64_t>(input_lengths.size()) == batch,
               "input_lengths must be of size batch_size");
  AMPJIT_CHECK(static_cast<int64_t>(target_lengths.size()) == batch,
               "target_lengths must be of size batch_size");
  for (int64_t b = 0; b < batch; ++b) {
    AMPJIT_CHECK(input_lengths[b] <= log_probs.size(0),
                 "Expected input_lengths to have value at most {}, but got value {} (while "
                 "checking arguments for ctc_loss_cpu)",
                 log_probs.size(0), input_lengths[b]);
    AMPJIT_CHECK(input_lengths[b] >= 0 && target_lengths[b] >= 0,
                 "ctc_loss: lengths must be non-negative");
  }
}

template <typename T>
std::tuple<Tensor, Tensor> ctc_forward(const Tensor& log_probs, const Tensor& targets_in,
                                       const IntList& input_lengths, const IntList& target_lengths,
                                       int64_t blank) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  const int64_t max_time = log_probs.size(0), batch = log_probs.size(1), C = log_probs.size(2);
  const Tensor lp = log_probs.contiguous();  // (T, N, C)
  const Tensor targets = targets_in.to(ScalarType::Int64).contiguous();
  const TargetLayout layout = target_layout(targets, target_lengths, batch);
  const int64_t S = 2 * layout.max_length + 1;
  Tensor log_alpha = Tensor::empty(IntList{batch, max_time, S}, log_probs.dtype());
  log_alpha.fill_(Scalar(-std::numeric_limits<double>::infinity()));
  Tensor nll = Tensor::empty(IntList{batch}, log_probs.dtype());
  const T* lpp = lp.data<T>();
  const int64_t* tp = targets.data<int64_t>();
  T* alpha_all = log_alpha.data<T>();
  T* nllp = nll.data<T>();
  parallel_for(batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const int64_t input_length = input_lengths[b], target_length = target_lengths[b];
      const int64_t off = layout.offsets[b];
      if (input_length == 0) {
        nllp[b] = target_length == 0 ? T(0) : -neginf;
        continue;
      }
      auto logp = [&](int64_t t, int64_t c) { return lpp[(t * batch + b) * C + c]; };
      T* alpha = alpha_all + b * max_time * S;
      alpha[0] = logp(0, blank);
      if (target_length > 0) alpha[1] = logp(0, target_prime(tp, off, 1, blank));
      for (int64_t t = 1; t < input_length; ++t) {
        const T* prev = alpha + (t - 1) * S;
        T* cur = alpha + t * S;
        for (int64_t s = 0; s < 2 * target_length + 1; ++s) {
          const int64_t label = target_prime(tp, off, s, blank);
          const T la1 = prev[s];
          const T la2 = s > 0 ? prev[s - 1] : neginf;
          const T la3 =
              s > 1 && target_prime(tp, off, s - 2, blank) != label ? prev[s - 2] : neginf;
          cur[s] = log_sum_exp3(la1, la2, la3) + logp(t, label);
        }
      }
      const T* last = alpha + (input_length - 1) * S;
      if (target_length == 0) {
        nllp[b] = -last[0];
      } else {
        const T ll = log_sum_exp3(last[2 * target_length], last[2 * target_length - 1], neginf);
        nllp[b] = -ll;
      }
    }
  });
  return {nll, log_alpha};
}

template <typename T>
Tensor ctc_backward(const Tensor& grad_out, const Tensor& log_probs, const Tensor& targets_in,
                    const IntList& input_lengths, const IntList& target_lengths,
                    const Tensor& neg_log_likelihood, const Tensor& log_alpha_in, int64_t blank,
                    bool zero_infinity) {
  constexpr T neginf = -std::numeric_limits<T>::infinity();
  const int64_t max_time = log_probs.size(0), batch = log_probs.size(1), C = log_probs.size(2);
  const Tensor lp = log_probs.contiguous();
  const Tensor targets = targets_in.to(ScalarType::Int64).contiguous();
  const TargetLayout layout = target_layout(targets, target_lengths, batch);
  const Tensor log_alpha = log_alpha_in.contiguous();
  const int64_t S = log_alpha.size(2);
  AMPJIT_CHECK(grad_out.numel() == batch,
               "_ctc_loss_backward: expected a gradient of size {}, got {}", batch,
               grad_out.numel());
  const Tensor go = grad_out.to(log_probs.dtype()).contiguous();
  const Tensor nll = neg_log_likelihood.to(log_probs.dtype()).contiguous();
  Tensor grad = Tensor::empty(IntList{max_time, batch, C}, log_probs.dtype());
  Tensor log_beta = Tensor::empty(IntList{batch, max_time, S}, log_probs.dtype());
  const T* lpp = lp.data<T>();
  const int64_t* tp = targets.data<int64_t>();
  const T* alpha_all = log_alpha.data<T>();
  T* beta_all = log_beta.data<T>();
  T* gp = grad.data<T>();
  const T* gop = go.data<T>();
  const T* nllp = nll.data<T>();
  parallel_for(batch, 1, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      auto g = [&](int64_t t, int64_t c) -> T& { return gp[(t * batch + b) * C + c]; };
      auto logp = [&](int64_t t, int64_t c) { return lpp[(t * batch + b) * C + c]; };
      const int64_t input_length = input_lengths[b], target_length = target_lengths[b];
      const int64_t off = layout.offsets[b];
      const T nl = nllp[b];
      for (int64_t t = 0; t < max_time; ++t)
        for (int64_t c = 0; c < C; ++c) g(t, c) = t < input_length ? neginf : T(0);
      if (zero_infinity && nl == std::numeric_limits<T>::infinity()) {
        for (int64_t t = 0; t < input_length; ++t)
          for (int64_t c = 0; c < C; ++c) g(t, c) = 0;
        continue;
      }
      if (input_length == 0) continue;
      const T* alpha = alpha_all + b * max_time * S;
      T* beta = beta_all + b * max_time * S;
      std::fill(beta + (input_length - 1) * S, beta + input_length * S, neginf);
      const int64_t tl = input_length - 1;
      beta[tl * S + 2 * target_length] = logp(tl, blank);
      g(tl, blank) = alpha[tl * S + 2 * target_length] + beta[tl * S + 2 * target_length];
      if (target_length > 0) {
        const int64_t label = target_prime(tp, off, 2 * target_length - 1, blank);
        beta[tl * S + 2 * target_length - 1] = logp(tl, label);
        g(tl, label) = alpha[tl * S + 2 * target_length - 1] + beta[tl * S + 2 * target_length - 1];
      }
      for (int64_t t = input_length - 2; t >= 0; --t) {
        const T* next = beta + (t + 1) * S;
        T* cur = beta + t * S;
        for (int64_t s = 2 * target_length; s >= 0; --s) {
          const int64_t label = target_prime(tp, off, s, blank);
          const T lb1 = next[s];
          const T lb2 = s < 2 * target_length ? next[s + 1] : neginf;
          const T lb3 = s < 2 * target_length - 1 && target_prime(tp, off, s + 2, blank) != label
                            ? next[s + 2]
                            : neginf;
          cur[s] = log_sum_exp3(lb1, lb2, lb3) + logp(t, label);
          // eq. (16): the log of the sum of alpha * beta over the states of each label
          const T ab = alpha[t * S + s] + cur[s];
          T& acc = g(t, label);
          if (acc == neginf) {
            acc = ab;
          } else {
            const T m = std::max(acc, ab);
            acc = std::log(std::exp(acc - m) + std::exp(ab - m)) + m;
          }
        }
      }
      const T gr = gop[b];
      for (int64_t t = 0; t < input_length; ++t)
        for (int64_t c = 0; c < C; ++c) {
          T& r = g(t, c);
          const T l = logp(t, c);
          r = (std::exp(l) - std::exp(r + nl - l)) * gr;
        }
    }
  });
  return grad;
}

std::tuple<Tensor, Tensor> ctc_loss_k(const Tensor& log_probs, const Tensor& targets,
                                      IntList input_lengths, IntList target_lengths, int64_t blank,
                                      bool /*zero_infinity*/) {
  check_ctc_args(log_probs, targets, input_lengths, target_lengths, blank);
  switch (log_probs.dtype()) {
    case ScalarType::Float32:
      return ctc_forward<float>(log_probs, targets, input_lengths, target_lengths, blank);
    case ScalarType::Float64:
      return ctc_forward<double>(log_probs, targets, input_lengths, target_lengths, blank);
    default:
      throw_unsupported_dtype("ctc_loss_cpu", log_probs.dtype());
  }
}

Tensor ctc_loss_backward_k(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                           IntList input_lengths, IntList target_lengths,
                           const Tensor& neg_log_likelihood, const Tensor& log_alpha, int64_t blank,
                           bool zero_infinity) {
  check_ctc_args(log_probs, targets, input_lengths, target_lengths, blank);
  switch (log_probs.dtype()) {
    case ScalarType::Float32:
      return ctc_backward<float>(grad, log_probs, targets, input_lengths, target_lengths,
                                 neg_log_likelihood, log_alpha, blank, zero_infinity);
    case ScalarType::Float64:
      return ctc_backward<double>(grad, log_probs, targets, input_lengths, target_lengths,
                                  neg_log_likelihood, log_alpha, blank, zero_infinity);
    default:
      throw_unsupported_dtype("ctc_loss_backward_cpu", log_probs.dtype());
  }
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(_ctc_loss, cpu::ctc_loss_k)
AMPJIT_KERNEL(_ctc_loss_backward, cpu::ctc_loss_backward_k)
