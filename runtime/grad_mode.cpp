// Gradient mode (see grad_mode.h).
#include "runtime/grad_mode.h"

namespace ampjit {

namespace {
thread_local bool g_grad_enabled = true;
thread_local bool g_inference_mode = false;
}  // namespace

bool inference_mode_enabled() {
  return g_inference_mode;
}

std::atomic<int> g_threads_in_inference_mode{0};

void set_inference_mode(bool enabled) {
  if (enabled != g_inference_mode)
    g_threads_in_inference_mode.fetch_add(enabled ? 1 : -1, std::memory_order_relaxed);
  g_inference_mode = enabled;
  g_grad_enabled = !enabled;
}

bool grad_enabled() {
  return g_grad_enabled;
}

void set_grad_enabled(bool enabled) {
  g_grad_enabled = enabled;
}

}  // namespace ampjit
