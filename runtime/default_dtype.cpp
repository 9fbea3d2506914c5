// The process-wide default floating dtype (see default_dtype.h).
#include "runtime/default_dtype.h"

#include <atomic>

#include "runtime/error.h"

namespace ampjit {

namespace {
std::atomic<ScalarType> g_default{ScalarType::Float32};
}  // namespace

ScalarType default_float_dtype() {
  return g_default.load(std::memory_order_relaxed);
}

void set_default_float_dtype(ScalarType t) {
  AMPJIT_CHECK_T(TypeError, is_floating(t),
                 "only floating-point types are supported as the default type");
  g_default.store(t, std::memory_order_relaxed);
}

}  // namespace ampjit
