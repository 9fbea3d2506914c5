// The eager autocast dispatcher layer: applies the op's cast policy for the device of its tensors
// (aten/src/ATen/autocast_mode.h, CastPolicy and is_eligible), then runs the layers below it.
//
// As in torch, where every wrapper excludes its own autocast key: a listed op's casts and the op
// itself run with this layer excluded, so ops that a kernel calls internally are not autocast
// again; an unlisted op falls through without excluding (torch's fallthrough), so the ops a
// composite kernel calls are autocast by their own policy.
#include <algorithm>
#include <optional>

#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/policy_profiles.h"
#include "runtime/dispatcher.h"

namespace ampjit {

namespace {

// The device whose autocast state and policy apply: CUDA when any tensor argument is on CUDA (a
// CPU tensor may join CUDA tensors only as a 0-dim scalar, which is then not eligible), else CPU;
// nullopt when the op has no tensor arguments.
std::optional<DeviceType> autocast_device(const Stack& stack) {
  std::optional<DeviceType> device;
  auto visit = [&](const IValue& v) {
    if (!v.is_tensor()) return;
    if (v.tensor_impl()->device.type == DeviceType::CUDA || !device)
      device = v.tensor_impl()->device.type;
  };
  for (const IValue& v : stack) {
    if (v.is_list()) {
      for (const IValue& e : v.list_elems()) visit(e);
    } else {
      visit(v);
    }
  }
  return device;
}

bool eligible(const TensorImpl& t, DeviceType device) {
  return t.device.type == device && is_floating(t.dtype) && t.dtype != ScalarType::Float64;
}

// Casts every eligible tensor argument, and every eligible element of a tensor-list argument, to
// `to` (autocast_cached_cast). Lists are copied, never changed in place: the caller may share them.
void cast_arguments(Stack& stack, ScalarType to, DeviceType device) {
  for (IValue& v : stack) {
    if (v.is_tensor()) {
      if (eligible(*v.tensor_impl(), device) && v.tensor_impl()->dtype != to)
        v = autocast_cached_cast(to, v.to_tensor(), device);
    } else if (v.is_list()) {
      const std::vector<IValue>& elems = v.list_elems();
      const bool any = std::any_of(elems.begin(), elems.end(), [&](const IValue& e) {
        return e.is_tensor() && eligible(*e.tensor_impl(), device) && e.tensor_impl()->dtype != to;
      });
      if (!any) continue;
      std::vector<IValue> cast(elems);
      for (IValue& e : cast)
        if (e.is_tensor()) e = autocast_cached_cast(to, e.to_tensor(), device);
      v = IValue::list(std::move(cast));
    }
  }
}

// torch's promote_type/prioritize: start from the lower dtype; skip ineligible and float64
// tensors; any float32 makes float32; another mix of floating types is an error.
ScalarType promote_type(const OpEntry& op, const Stack& stack, DeviceType device) {
  const ScalarType lower = get_autocast_dtype(device);
  ScalarType current = lower;
  auto visit = [&](const IValue& v) {
    if (!v.is_tensor() || !eligible(*v.tensor_impl(), device)) return;
    const ScalarType next = v.tensor_impl()->dtype;
    if (current == ScalarType::Float32 || next == ScalarType::Float32) {
      current = ScalarType::Float32;
    } else if (next != lower) {
      throw Error(fmt::format(
          "Unexpected floating ScalarType in at::autocast::prioritize ({}: a {} tensor under {} "
          "autocast to {})",
          op.name, dtype_name(next), device_type_name(device), dtype_name(lower)));
    }
  };
  for (const IValue& v : stack) {
    if (v.is_list()) {
      for (const IValue& e : v.list_elems()) visit(e);
    } else {
      visit(v);
    }
  }
  return current;
}

// For an op without a dtype argument, the overload of the same base name taking the same
// arguments plus `dtype` (norm.Scalar -> norm.ScalarOpt_dtype, as torch's fp32_append_dtype
// wrappers redispatch), or nullptr.
const OpEntry* dtype_overload(const OpEntry& op) {
  static const std::vector<const OpEntry*> table = [] {
    std::vector<const OpEntry*> t(all_ops().size(), nullptr);
    for (const OpEntry& e : all_ops()) {
      if (e.dtype_arg >= 0 || e.is_inplace || e.is_out) continue;
      for (const OpEntry* c : find_overloads(e.base_name)) {
        const auto& args = c->schema.args;
        if (c->dtype_arg < 0 || c->is_inplace || c->is_out ||
            args.size() != e.schema.args.size() + 1)
          continue;
        bool same = true;
        for (size_t i = 0, j = 0; i < args.size() && same; ++i) {
          if (static_cast<int>(i) != c->dtype_arg) same = args[i].name == e.schema.args[j++].name;
        }
        if (same) {
          t[static_cast<size_t>(e.id)] = c;
          break;
        }
      }
    }
    return t;
  }();
  return table[static_cast<size_t>(op.id)];
}

bool first_arg_eligible(const Stack& stack, DeviceType device) {
  return !stack.empty() && stack[0].is_tensor() && eligible(*stack[0].tensor_impl(), device);
}

}  // namespace

void autocast_layer(const OpEntry& op, Stack& stack) {
  static_assert(kNumDeviceTypes == 2);
  // Unlisted ops, in-place ops and out= calls are not autocast.
  if ((op.autocast[0] == AutocastPolicy::None && op.autocast[1] == AutocastPolicy::None) ||
      op.is_inplace || op.is_out) {
    return redispatch(DispatchLayer::Autocast, op, stack);
  }
  const std::optional<DeviceType> device = autocast_device(stack);
  const AutocastPolicy policy = device && is_autocast_enabled(*device)
                                    ? op.autocast[static_cast<int>(*device)]
                                    : AutocastPolicy::None;
  if (policy == AutocastPolicy::None) return redispatch(DispatchLayer::Autocast, op, stack);
  if (policy == AutocastPolicy::Banned) throw Error(autocast_banned_message(op));
  // An explicit dtype= is respected: the call is not autocast.
  if (op.dtype_arg >= 0 && !stack[op.dtype_arg].is_none())
    return redispatch(DispatchLayer::Autocast, op, stack);

  LayerGuard no_autocast(DispatchLayer::Autocast, LayerGuard::Exclude);
  switch (policy) {
    case AutocastPolicy::LowerPrecisionFp:
      cast_arguments(stack, get_autocast_dtype(*device), *device);
      break;
    case AutocastPolicy::Fp32:
      cast_arguments(stack, ScalarType::Float32, *device);
      break;
    case AutocastPolicy::Fp32SetOptDtype:
      // The inputs are not cast; the op computes in float32. An ineligible first argument leaves
      // the call unchanged (a dtype could disturb the op's own type promotion). An op without a
      // dtype argument (a user override) runs as fp32.
      if (op.dtype_arg < 0)
        cast_arguments(stack, ScalarType::Float32, *device);
      else if (first_arg_eligible(stack, *device))
        stack[op.dtype_arg] = IValue(ScalarType::Float32);
      break;
    case AutocastPolicy::Fp32AppendDtype:
      // Redispatches to the dtype-taking overload with dtype float32 (an ineligible first argument:
      // its own dtype), as torch does; an op without such an overload runs as fp32.
      if (const OpEntry* target = dtype_overload(op);
          target && !stack.empty() && stack[0].is_tensor()) {
        const ScalarType dtype = first_arg_eligible(stack, *device) ? ScalarType::Float32
                                                                    : stack[0].tensor_impl()->dtype;
        Stack s;
        s.reserve(target->schema.args.size());
        for (size_t i = 0, j = 0; i < target->schema.args.size(); ++i) {
          if (static_cast<int>(i) == target->dtype_arg)
            s.emplace_back(dtype);
          else
            s.push_back(std::move(stack[j++]));
        }
        redispatch(DispatchLayer::Autocast, *target, s);
        stack = std::move(s);
        return;
      }
      cast_arguments(stack, ScalarType::Float32, *device);
      break;
    case AutocastPolicy::Promote:
      cast_arguments(stack, promote_type(op, stack, *device), *device);
      break;
    case AutocastPolicy::None:
    case AutocastPolicy::Banned:
      break;
  }
  redispatch(DispatchLayer::Autocast, op, stack);
}

}  // namespace ampjit
