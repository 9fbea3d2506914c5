// The kernel every backend gets for free for an in-place or out= variant of an op it implements
// (Note [Derived op variants] in runtime/op_table.h): the functional sibling's kernel on the same
// device, then write_result into self or out. Device-agnostic, like write_result itself.
#include <algorithm>

#include "kernels/operands.h"
#include "runtime/grad_mode.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"
#include "runtime/type_promotion.h"

namespace ampjit::kernels {

namespace {
// Whether autograd records an op on these arguments: grad mode on and a tensor requiring grad.
bool autograd_records(const Stack& s) {
  if (!grad_enabled()) return false;
  for (const IValue& v : s) {
    if (v.is_tensor() && v.to_tensor().requires_grad()) return true;
    if (v.is_list())
      for (const IValue& e : v.list_elems())
        if (e.is_tensor() && e.to_tensor().requires_grad()) return true;
  }
  return false;
}
}  // namespace

void run_derived_variant(const OpEntry& variant, DeviceType device, Stack& s) {
  const OpEntry& functional = *variant.functional;
  const auto w = static_cast<size_t>(variant.written_arg);
  Tensor out = s[w].to_tensor();
  if (variant.is_out) s.erase(s.begin() + static_cast<std::ptrdiff_t>(w));
  // The in-place variant of a decomposed op while autograd records (Note [Decomposed ops]): its
  // functional computes from a recorded clone of self, so what its ops save is not the self that
  // the write below changes.
  const bool recorded = variant.has(kComposite) && variant.is_inplace && autograd_records(s);
  if (recorded) s[w] = IValue(ops::clone(out).tensor());
  const BoxedKernel k = functional.kernels[static_cast<int>(device)];
  if (!k) [[unlikely]]
    throw_no_kernel(functional, out.device());
  k(s);
  const Tensor result = s.back().to_tensor();
  s.clear();
  if (recorded) {
    // The result goes into self by a recorded copy_, so self's history continues from it
    // (through its base when self is a view), as torch's in-place ops.
    const char* name = variant.schema.name.c_str();
    AMPJIT_CHECK(can_cast(result.dtype(), out.dtype()),
                 "{}: result type {} can't be cast to the desired output type {}", name,
                 dtype_name(result.dtype()), dtype_name(out.dtype()));
    AMPJIT_CHECK(std::equal(out.sizes().begin(), out.sizes().end(), result.sizes().begin(),
                            result.sizes().end()),
                 "{}: output with shape {} doesn't match the broadcast shape {}", name,
                 out.shape_str(), result.shape_str());
    ops::copy_(out, result);
  } else {
    write_result(out, result, variant.schema.name.c_str(), variant.is_inplace);
  }
  s.emplace_back(std::move(out));
}

}  // namespace ampjit::kernels
