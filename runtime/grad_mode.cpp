// Gradient mode (see grad_mode.h).
#include "runtime/grad_mode.h"

namespace ampjit {

namespace {
thread_local bool g_grad_enabled = true;
}  // namespace

bool grad_enabled() {
  return g_grad_enabled;
}

void set_grad_enabled(bool enabled) {
  g_grad_enabled = enabled;
}

}  // namespace ampjit
