// The kernel every backend gets for free for an in-place or out= variant of an op it implements
// (Note [Derived op variants] in runtime/op_table.h): the functional sibling's kernel on the same
// device, then write_result into self or out. Device-agnostic, like write_result itself.
#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

#include "kernels/operands.h"
#include "runtime/grad_mode.h"
#include "runtime/mem_overlap.h"
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
// Note [torch.linalg's out= dtypes]
// torch's linalg_* kernels are structured: their out= tensors must already have the result's dtype
// ("Expected out tensor to have dtype float, but got double instead"), where other ops cast into
// out by the type-promotion rule (write_result).
bool out_dtype_must_match(const OpEntry& variant) {
  return variant.is_out && variant.base_name.rfind("aten::linalg_", 0) == 0;
}
// Note [Index ops' out= tensors]
// torch's gather, cat, index_select, take and masked_select write out= with at::assert_no_overlap:
// out may share no element with an input, itself included, where elementwise ops allow an out that
// is exactly an input. gather is structured: its out must have the result's dtype.
bool out_must_not_alias(const OpEntry& variant) {
  static const std::array<std::string_view, 5> names{
      "aten::gather", "aten::cat", "aten::index_select", "aten::take", "aten::masked_select"};
  return variant.is_out && std::find(names.begin(), names.end(), variant.base_name) != names.end();
}
void check_out_aliasing(const OpEntry& variant, const Tensor& out, const Stack& inputs) {
  if (!out_must_not_alias(variant)) return;
  for (const IValue& v : inputs) {
    if (v.is_tensor()) assert_no_overlap(*out.impl(), *v.to_tensor().impl());
    if (v.is_list())
      for (const IValue& e : v.list_elems())
        if (e.is_tensor()) assert_no_overlap(*out.impl(), *e.to_tensor().impl());
  }
}
void check_out_dtype(const OpEntry& variant, const Tensor& out, const Tensor& result) {
  if (variant.is_out && variant.base_name == "aten::gather")
    AMPJIT_CHECK(out.dtype() == result.dtype(),
                 "Expected out tensor to have dtype {}, but got {} instead",
                 cpp_type_name(result.dtype()), cpp_type_name(out.dtype()));
  if (!out_dtype_must_match(variant)) return;
  AMPJIT_CHECK(out.dtype() == result.dtype(),
               "Expected out tensor to have dtype {}, but got {} instead",
               cpp_type_name(result.dtype()), cpp_type_name(out.dtype()));
}

// An out= variant with several results (sort.values: `values`, `indices`): the functional's
// results written into the out= tensors in order. The dispatcher checks and versions the last
// written tensor (OpEntry::written_arg); the others are checked and versioned here.
void run_derived_multi_out(const OpEntry& variant, DeviceType device, Stack& s) {
  const OpEntry& functional = *variant.functional;
  std::vector<Tensor> outs;
  for (size_t i = 0, j = 0; i < variant.schema.args.size(); ++i) {
    if (!variant.schema.args[i].is_write) {
      if (i != j) s[j] = std::move(s[i]);
      ++j;
      continue;
    }
    outs.push_back(s[i].to_tensor());
    if (static_cast<int>(i) != variant.written_arg) assert_no_internal_overlap(*outs.back().impl());
  }
  s.resize(s.size() - outs.size());
  const BoxedKernel k = functional.kernels[static_cast<int>(device)];
  if (!k) [[unlikely]]
    throw_no_kernel(functional, outs[0].device());
  k(s);
  std::vector<Tensor> results;
  for (IValue& v : s) results.push_back(v.to_tensor());
  s.clear();
  for (size_t i = 0; i < outs.size(); ++i) check_out_dtype(variant, outs[i], results[i]);
  for (size_t i = 0; i < outs.size(); ++i) {
    write_result(outs[i], results[i], variant.schema.name.c_str(), false);
    if (i + 1 < outs.size()) outs[i].impl()->storage->bump_version();
  }
  for (Tensor& o : outs) s.emplace_back(std::move(o));
}

}  // namespace

void run_derived_variant(const OpEntry& variant, DeviceType device, Stack& s) {
  const OpEntry& functional = *variant.functional;
  if (variant.schema.returns.size() > 1) return run_derived_multi_out(variant, device, s);
  const auto w = static_cast<size_t>(variant.written_arg);
  Tensor out = s[w].to_tensor();
  if (variant.is_out) s.erase(s.begin() + static_cast<std::ptrdiff_t>(w));
  check_out_aliasing(variant, out, s);
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
    check_out_dtype(variant, out, result);
    write_result(out, result, variant.schema.name.c_str(), variant.is_inplace);
  }
  s.emplace_back(std::move(out));
}

}  // namespace ampjit::kernels
