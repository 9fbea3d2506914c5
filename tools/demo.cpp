// ampjit-demo: a short tour of what works so far, printed.
#include <fmt/format.h>

#include "runtime/ops.h"
#include "runtime/random.h"

using namespace ampjit;

int main() {
  manual_seed(0);
  Tensor a = ops::arange(6, ScalarType::Float32);
  Tensor b = ops::ones(std::vector<int64_t>{6}, ScalarType::BFloat16);
  Tensor c = ops::add(a, b);
  fmt::print("arange(6) float32 + ones(6) bfloat16 -> {} {}\n", dtype_name(c.dtype()), c.str());
  return 0;
}
