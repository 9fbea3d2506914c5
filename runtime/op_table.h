// The op table: every op declared once, in the .def files under runtime/ops/.
//
// Note [Declaring an op]
// One line per op overload: AMPJIT_OP(ID, FLAGS, "schema"). From it come
//  - OpId::ID, the dense index of the entry;
//  - the parsed FunctionSchema (names, types, defaults; in-place and out= variants are their own
//    overloads, recognized from the alias annotations, as in torch);
//  - the CPU kernel `ampjit::kernels::ID` (a boxed function defined in kernels/cpu/), installed in
//    the CPU column, or in every device column when FLAGS has kComposite (views and ops written in
//    terms of other ops) or kDeviceGeneric (allocate, copy and fill through a device backend);
//  - the C++ eager API `ampjit::ops::ID(...)` (runtime/ops.h);
//  - the per-device autocast policy column, filled from the policy profiles (runtime/autocast);
//  - later columns: the CUDA kernel (registered by the CUDA backend at load time).
// The dispatcher, the tracer, the script builtins and the Python bindings all read this table.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "runtime/device.h"
#include "runtime/ivalue.h"
#include "runtime/schema.h"

namespace ampjit {

enum OpFlags : uint32_t {
  kNone = 0,
  kComposite = 1u << 0,         // the kernel is device-independent (views, composites)
  kView = 1u << 1,              // the result aliases the first argument's storage
  kFactory = 1u << 2,           // creates a tensor from no tensor inputs (device from `device=`)
  kNondeterministic = 1u << 3,  // random: never constant-folded or CSE'd
  kMixedDevice = 1u << 4,       // may take tensors on different devices (copies)
  kScriptOnly = 1u << 5,     // script's int/float/bool/str arithmetic: never exposed in the Python
                             // `ampjit`/Tensor namespaces
  kDeviceGeneric = 1u << 6,  // the kernel only allocates, copies and fills through Tensor, which a
                             // device backend serves (runtime/tensor.h DeviceBackend): it is
                             // installed for every device, like kComposite, but computes
};

enum class OpId : uint16_t {
#define AMPJIT_OP(ID, FLAGS, SCHEMA) ID,
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
  NumOps,
};
constexpr size_t kNumOps = static_cast<size_t>(OpId::NumOps);

// Autocast cast policies (aten/src/ATen/autocast_mode.h, CastPolicy). The autocast layer reads the
// op's column for the device of its tensors.
enum class AutocastPolicy : uint8_t {
  None,
  LowerPrecisionFp,
  Fp32,
  Fp32SetOptDtype,
  Fp32AppendDtype,
  Promote,
  Banned,
};
const char* autocast_policy_name(AutocastPolicy p);

using BoxedKernel = void (*)(Stack&);

struct OpEntry {
  OpId id;
  uint32_t flags;
  FunctionSchema schema;
  std::string name;       // "aten::add.Tensor"
  std::string base_name;  // "aten::add"
  BoxedKernel kernels[kNumDeviceTypes] = {};
  AutocastPolicy autocast[kNumDeviceTypes] = {};
  int device_arg = -1;  // index of a `device=` argument, -1 when none
  int dtype_arg = -1;   // index of a `dtype=` argument, -1 when none
  bool is_inplace = false;
  bool is_out = false;

  bool has(OpFlags f) const { return (flags & f) != 0; }
};

const OpEntry& op_entry(OpId id);
const std::vector<OpEntry>& all_ops();
// "aten::add.Tensor" (or "aten::add" for the default overload); nullptr when unknown.
const OpEntry* find_op(std::string_view full_name);
// Every overload of "aten::add", in declaration order (the order overload resolution tries).
const std::vector<const OpEntry*>& find_overloads(std::string_view base_name);
// Installs a kernel for one device (the CUDA backend calls this at load time).
void register_kernel(OpId id, DeviceType device, BoxedKernel k);

// Note [Which ops a device serves]
// The CPU column is filled from the op table; kComposite and kDeviceGeneric ops serve every
// device; a backend fills its device's column when it loads (kernels/cuda: cuda::init()). What a
// device does not serve is visible (ops_without_kernel) and checked: tests/cuda/
// test_cuda_coverage.cpp pins the list for CUDA, so a kernel added or lost is a deliberate
// change, and calling any of them is a NotImplementedError naming the op and the device.
//
// The kernel of `op` on `device`; NotImplementedError naming both when the device has none. Inline:
// every dispatch asks it, and only the error is out of line.
[[noreturn]] void throw_no_kernel(const OpEntry& op, Device device);
inline BoxedKernel kernel_for(const OpEntry& op, Device device) {
  BoxedKernel k = op.kernels[static_cast<int>(device.type)];
  if (!k) [[unlikely]]
    throw_no_kernel(op, device);
  return k;
}
// The ops `device` has no kernel for, in declaration order (script-only ops never reach a device).
std::vector<const OpEntry*> ops_without_kernel(DeviceType device);
// Sets an op's autocast policy for a device (profiles and user overrides).
void set_autocast_policy(OpId id, DeviceType device, AutocastPolicy p);

namespace kernels {
#define AMPJIT_OP(ID, FLAGS, SCHEMA) void ID(Stack&);
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
}  // namespace kernels

}  // namespace ampjit
