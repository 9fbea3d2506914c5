// Fused optimizer steps (runtime/ops/nn.def): what ampjit.optim's Adam, AdamW and SGD run for a
// parameter on the CPU.
//
// Note [Fused optimizer steps]
// torch 1.13's single-tensor Adam is about ten ops per parameter (mul_, add_, addcmul_, sqrt, div,
// add_, addcdiv_, and the weight decay); from Python each is a call with its own dispatch and its
// own pass over memory. The fused step does the same arithmetic, in the same order, in float32 (or
// float64) per element -- each intermediate rounded where torch's op rounds it -- in one pass, so
// it matches the op-by-op path (tests/python/test_autograd.py runs both against torch). It writes
// the parameter and the state in place and bumps their versions (Note [Version counter]); the
// Python optimizers fall back to ops for anything else (devices, dtypes, layouts).
#include <cmath>

#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/strided_loop.h"

namespace ampjit::cpu {
namespace {

void check_operand(const Tensor& t, const Tensor& param, const char* what, const char* op) {
  AMPJIT_CHECK(t.device().is_cpu() && t.is_contiguous() && t.dtype() == param.dtype() &&
                   t.numel() == param.numel(),
               "{}: {} must be a contiguous CPU tensor of the parameter's dtype and size", op,
               what);
}

void adam_step_k(Tensor param, Tensor grad, Tensor exp_avg, Tensor exp_avg_sq,
                 std::optional<Tensor> max_exp_avg_sq, double lr, double beta1, double beta2,
                 double eps, double weight_decay, double step, bool amsgrad, bool maximize,
                 bool decoupled) {
  const char* op = "_adam_step";
  AMPJIT_CHECK(param.dtype() == ScalarType::Float32 || param.dtype() == ScalarType::Float64,
               "{}: parameters of dtype {} take the unfused path", op, dtype_name(param.dtype()));
  check_operand(param, param, "param", op);
  check_operand(grad, param, "grad", op);
  check_operand(exp_avg, param, "exp_avg", op);
  check_operand(exp_avg_sq, param, "exp_avg_sq", op);
  if (amsgrad) check_operand(*max_exp_avg_sq, param, "max_exp_avg_sq", op);
  const double bias_correction1 = 1 - std::pow(beta1, step);
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, step));
  const double step_size = lr / bias_correction1;
  dispatch_floating(param.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = param.data<T>();
      const T* g0 = grad.data<T>();
      T* m = exp_avg.data<T>();
      T* v = exp_avg_sq.data<T>();
      T* vmax = amsgrad ? max_exp_avg_sq->data<T>() : nullptr;
      const T decay = static_cast<T>(1 - lr * weight_decay), wd = static_cast<T>(weight_decay);
      const T b1 = static_cast<T>(beta1), b2 = static_cast<T>(beta2);
      const T one_b1 = static_cast<T>(1 - beta1), one_b2 = static_cast<T>(1 - beta2);
      const T bc2 = static_cast<T>(bias_correction2_sqrt), e = static_cast<T>(eps);
      const T neg_step = static_cast<T>(-step_size);
      parallel_for(param.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          T g = maximize ? -g0[i] : g0[i];
          if (decoupled)
            p[i] = p[i] * decay;
          else if (weight_decay != 0)
            g = g + wd * p[i];
          m[i] = m[i] * b1;
          m[i] = m[i] + one_b1 * g;
          v[i] = v[i] * b2;
          v[i] = v[i] + one_b2 * g * g;
          T second = v[i];
          if (vmax) {
            vmax[i] = vmax[i] > v[i] ? vmax[i] : v[i];
            second = vmax[i];
          }
          T denom = std::sqrt(second) / bc2;
          denom = denom + e;
          p[i] = p[i] + neg_step * m[i] / denom;
        }
      });
    }
  });
  for (const Tensor* t : {&param, &exp_avg, &exp_avg_sq}) t->impl()->storage->bump_version();
  if (amsgrad) max_exp_avg_sq->impl()->storage->bump_version();
}

// torch 1.13's SGD for one parameter: weight decay, momentum (the buffer starts as the first
// direction: `first`), dampening, Nesterov, maximize.
void sgd_step_k(Tensor param, Tensor grad, std::optional<Tensor> momentum_buffer, double lr,
                double momentum, double dampening, double weight_decay, bool nesterov,
                bool maximize, bool first) {
  const char* op = "_sgd_step";
  AMPJIT_CHECK(param.dtype() == ScalarType::Float32 || param.dtype() == ScalarType::Float64,
               "{}: parameters of dtype {} take the unfused path", op, dtype_name(param.dtype()));
  check_operand(param, param, "param", op);
  check_operand(grad, param, "grad", op);
  const bool use_momentum = momentum != 0;
  if (use_momentum) check_operand(*momentum_buffer, param, "momentum_buffer", op);
  dispatch_floating(param.dtype(), op, [&]<typename T>() {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      T* p = param.data<T>();
      const T* g0 = grad.data<T>();
      T* buf = use_momentum ? momentum_buffer->data<T>() : nullptr;
      const T wd = static_cast<T>(weight_decay), mom = static_cast<T>(momentum);
      const T one_damp = static_cast<T>(1 - dampening), neg_lr = static_cast<T>(-lr);
      parallel_for(param.numel(), kParallelGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          T d = maximize ? -g0[i] : g0[i];
          if (weight_decay != 0) d = d + wd * p[i];
          if (buf) {
            if (first) {
              buf[i] = d;
            } else {
              buf[i] = buf[i] * mom;
              buf[i] = buf[i] + one_damp * d;
            }
            d = nesterov ? d + mom * buf[i] : buf[i];
          }
          p[i] = p[i] + neg_lr * d;
        }
      });
    }
  });
  param.impl()->storage->bump_version();
  if (use_momentum) momentum_buffer->impl()->storage->bump_version();
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(adam_step, cpu::adam_step_k)
AMPJIT_KERNEL(sgd_step, cpu::sgd_step_k)
