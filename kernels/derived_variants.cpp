// The kernel every backend gets for free for an in-place or out= variant of an op it implements
// (Note [Derived op variants] in runtime/op_table.h): the functional sibling's kernel on the same
// device, then write_result into self or out. Device-agnostic, like write_result itself.
#include "kernels/operands.h"
#include "runtime/op_table.h"

namespace ampjit::kernels {

void run_derived_variant(const OpEntry& variant, DeviceType device, Stack& s) {
  const OpEntry& functional = *variant.functional;
  const auto w = static_cast<size_t>(variant.written_arg);
  Tensor out = s[w].to_tensor();
  if (variant.is_out) s.erase(s.begin() + static_cast<std::ptrdiff_t>(w));
  const BoxedKernel k = functional.kernels[static_cast<int>(device)];
  if (!k) [[unlikely]]
    throw_no_kernel(functional, out.device());
  k(s);
  const Tensor result = s.back().to_tensor();
  s.clear();
  write_result(out, result, variant.schema.name.c_str(), variant.is_inplace);
  s.emplace_back(std::move(out));
}

}  // namespace ampjit::kernels
