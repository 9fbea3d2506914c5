// torch.is_grad_enabled / no_grad / enable_grad / set_grad_enabled: whether gradients are being
// recorded, per thread (on unless turned off), as torch's GradMode. Python's context managers set
// it (frontend/ampjit/_grad_mode.py) and compiled code reads it (`torch.is_grad_enabled()` in
// script and in torch's archives, whose nn.Transformer code picks its fast path by it). Autograd
// records ops only while it is on (runtime/autograd/autograd.h).
#pragma once

namespace ampjit {

bool grad_enabled();
void set_grad_enabled(bool enabled);

// RAII: grad mode set for a scope, restored on exit (torch's AutoGradMode / NoGradGuard).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace ampjit
