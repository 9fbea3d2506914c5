// torch.is_grad_enabled / no_grad / enable_grad / set_grad_enabled: whether gradients are being
// recorded, per thread (on unless turned off), as torch's GradMode. Python's context managers set
// it (frontend/ampjit/_grad_mode.py) and compiled code reads it (`torch.is_grad_enabled()` in
// script and in torch's archives, whose nn.Transformer code picks its fast path by it). Autograd
// records ops only while it is on (runtime/autograd/autograd.h).
#pragma once
#include <atomic>

namespace ampjit {

bool grad_enabled();
void set_grad_enabled(bool enabled);

// torch.inference_mode, per thread. While it is on, grad mode is off and every tensor made is an
// inference tensor (TensorImpl::is_inference; a view takes its base's), which autograd refuses
// outside inference mode with torch's messages: written in place, saved for backward, made to
// require grad. A view of a normal tensor made inside stays normal, and an in-place change of it
// outside is refused as torch refuses one (Note [Views and in-place changes]).
bool inference_mode_enabled();
// torch's InferenceMode(enabled): inference mode on and grad mode off, or both the other way.
void set_inference_mode(bool enabled);
// How many threads are in inference mode now: while none is, a new tensor need not ask its own
// thread (TensorImpl's constructor reads this first, a relaxed load).
extern std::atomic<int> g_threads_in_inference_mode;
inline bool maybe_inference_mode() {
  return g_threads_in_inference_mode.load(std::memory_order_relaxed) > 0 &&
         inference_mode_enabled();
}

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
// RAII: torch's c10::InferenceMode guard (both modes restored on exit).
class InferenceModeGuard {
 public:
  explicit InferenceModeGuard(bool enabled = true)
      : prev_grad_(grad_enabled()), prev_inference_(inference_mode_enabled()) {
    set_inference_mode(enabled);
  }
  ~InferenceModeGuard() {
    set_inference_mode(prev_inference_);
    set_grad_enabled(prev_grad_);
  }
  InferenceModeGuard(const InferenceModeGuard&) = delete;
  InferenceModeGuard& operator=(const InferenceModeGuard&) = delete;

 private:
  bool prev_grad_, prev_inference_;
};

}  // namespace ampjit
