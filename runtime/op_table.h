// The op table: every op declared once, in the .def files under runtime/ops/.
//
// Note [Declaring an op]
// One line per op overload: AMPJIT_OP(ID, FLAGS, "schema"). From it come
//  - OpId::ID, the dense index of the entry;
//  - the parsed FunctionSchema (names, types, defaults; in-place and out= variants are their own
//    overloads, recognized from the alias annotations, as in torch);
//  - the CPU kernel `ampjit::kernels::ID` (a boxed function defined in kernels/cpu/), installed in
//    the CPU column, or in every device column when FLAGS has kComposite (views and ops written in
//    terms of other ops) or kDeviceGeneric (allocate, copy and fill through a device backend); an
//    in-place or out= variant needs none when its functional sibling has one (Note [Derived op
//    variants]);
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
  kWritesOverlap = 1u << 7,  // may write a tensor whose elements share memory (fill_, zero_: the
                             // writes torch exempts, Note [Overlapping writes])
  kDecomposed = 1u << 8,     // declared in ops/decompositions.def: its kernel on every device runs
                             // its decomposition (Note [Decomposed ops]); implies kComposite
};

struct OpEntry;

enum class OpId : uint16_t {
#define AMPJIT_OP(ID, FLAGS, SCHEMA) ID,
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
  NumOps,
};
// The ops with C++ names (OpId::ID, kernels::ID, ops::ID). The table holds these first, then the
// ops of ops/decompositions.def (ids from kNumOps on): size tables by all_ops().size().
constexpr size_t kNumOps = static_cast<size_t>(OpId::NumOps);

// Note [Decomposed ops]
// Most of torch's ops are compositions of a few others (log10 is log over ln 10, outer is a
// broadcast multiply, tile is repeat). Such an op is declared once in
// runtime/ops/decompositions.def, without a C++ name, and written once as a def of the same name in
// the scriptable subset in frontend/ampjit/_decompositions.py (the def of overload
// `aten::NAME.OVERLOAD` is NAME__OVERLOAD). It is an op like any other: in the Python namespaces
// and Tensor methods, a script builtin, what the tracer records, what an archive names. Its kernel,
// on every device, runs its def, compiled once by the script layer (set_decomposition_runner,
// script/decompositions.cpp) with the eager semantics, so
//  - it runs on every device whose kernels its def's ops have;
//  - autograd records the ops its def calls (it is kComposite), so it differentiates with no
//    derivative of its own, twice over;
//  - eager autocast casts the ops its def calls by their own policies, unless a profile lists the
//    op itself, as torch's CompositeImplicitAutograd ops;
//  - its in-place and out= overloads, declared beside it, derive from it (Note [Derived op
//    variants]); a variant of an op with a C++ kernel may be declared there too.
// Adding one recompiles op_table.cpp alone. A kernel replaces a decomposition where a benchmark
// shows the composition slow (the op moves to the C++ .def files with its kernel).
using DecompositionRunner = void (*)(const OpEntry& op, Stack& stack);
// Installs the runner of decompositions (the script layer does, when the library loads).
void set_decomposition_runner(DecompositionRunner runner);

// Autocast cast policies, one line each in runtime/autocast/policies.def. The autocast layer reads
// the op's column for the device of its tensors.
enum class AutocastPolicy : uint8_t {
#define AMPJIT_AUTOCAST_POLICY(E, NAME) E,
#include "runtime/autocast/policies.def"
#undef AMPJIT_AUTOCAST_POLICY
};
inline constexpr int kNumAutocastPolicies = 0
#define AMPJIT_AUTOCAST_POLICY(E, NAME) +1
#include "runtime/autocast/policies.def"
#undef AMPJIT_AUTOCAST_POLICY
    ;
// Its name in policies.def: "lower_precision_fp".
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
  // An in-place or out= variant's functional sibling (add_.Tensor, add.out: add.Tensor), from
  // which the variant's kernels derive where it has none of its own; nullptr for functional ops
  // and unpaired variants (Note [Derived op variants]).
  const OpEntry* functional = nullptr;
  int written_arg = -1;  // the index of the argument a variant writes (self, out), -1 when none
  // The result may alias `self` without writing it (`-> Tensor(a)`, `-> Tensor(a)[]`): view ops,
  // and ops such as reshape or contiguous that return a view or self when they can.
  bool returns_alias = false;

  bool has(OpFlags f) const { return (flags & f) != 0; }
};

const OpEntry& op_entry(OpId id);
// The op table: the C++-named ops in declaration order, then the decomposed ops.
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

// Note [Derived op variants]
// An in-place overload (aten::add_.Tensor: `Tensor(a!) self`, a name ending in `_`) or an out=
// overload (aten::mul.out: a kwarg `Tensor(a!) out`) mostly computes what its functional sibling
// computes and writes the result into self or out. The table pairs each such variant with its
// sibling from the schemas alone, as torch's structured_delegate does: the sibling is an
// overload of the variant's name (without the trailing `_` in place) that writes nothing, returns
// one Tensor and takes the same arguments once the written one is set aside (`out` dropped, `self`
// no longer written): names, types, kwarg-only, defaults. An out= variant of an op with several
// results writes one kwarg-only tensor per result (sort.values: `values` and `indices`) and pairs
// the same way with the overload returning that many Tensors; its derived kernel writes each
// result into its tensor, in order. So add_.Tensor -> add.Tensor,
// div_.Tensor_mode -> div.Tensor_mode, pow_.Scalar -> pow.Tensor_Scalar, relu_ -> relu,
// mul.out -> mul.Tensor, addmm.out -> addmm. Should several overloads take those arguments, the
// one of the variant's overload name is the sibling, and without one the variant stays unpaired.
// The variant's kernel on a device where it has none of its own is then derived: the sibling's
// kernel for that device, on the same arguments (less `out`), whose result goes through
// kernels::write_result(self or out, result, op, inplace) (kernels/operands.h: torch's cast rule,
// resizing out=, refusing an in-place broadcast that would resize self), with the variant's own
// name in its messages ("add_", "mul"); the variant returns self or out. A derived kernel is
// installed in a column as soon as the sibling has a kernel there: at start-up for the CPU column
// and the kComposite/kDeviceGeneric ones, when a backend registers the sibling for the others
// (register_kernel). So a backend writes the functional kernel only, and a variant counts as served
// (ops_without_kernel) where its sibling is.
//
// A kernel registered for the variant itself always wins over the derived one: write one where
// the variant is not "compute, then write back", e.g. tril_, index_copy_ (the functional op is
// written in terms of the in-place one), mm.out and the linalg out= forms (torch requires out's
// dtype to match: meta::write_out), clamp_ (its messages name clamp_ from inside the loop). A
// variant no sibling pairs with (dropout_ takes `self` where dropout takes `input`; copy_, fill_,
// zero_ have no functional overload) keeps its own kernels everywhere: unpaired_variants() lists
// them and tests/cpp/test_runtime.cpp (OpVariants) pins the list.
//
// Whether the kernel of `op` on `device` is derived from its functional sibling.
bool kernel_is_derived(const OpEntry& op, DeviceType device);
// The in-place and out= variants no functional sibling pairs with, in declaration order.
std::vector<const OpEntry*> unpaired_variants();
// Whether a schema's text writes one of its arguments (`Tensor(a!)` before the `->`): the
// variants, recognized at compile time. AMPJIT_KERNEL records such a variant's own CPU kernel
// (record_cpu_kernel) instead of the table naming `kernels::ID`, which it need not define.
constexpr bool schema_writes_argument(std::string_view schema) {
  const size_t arrow = schema.find(") ->");
  return schema.substr(0, arrow).find("!)") != std::string_view::npos;
}
// Called by AMPJIT_KERNEL (runtime/boxing.h) for every CPU kernel, at load time; the table keeps
// the variants' own kernels from it. Returns true (it initializes a static).
bool record_cpu_kernel(OpId id, BoxedKernel k);

// Sets an op's autocast policy for a device (profiles and user overrides).
void set_autocast_policy(OpId id, DeviceType device, AutocastPolicy p);

namespace kernels {
#define AMPJIT_OP(ID, FLAGS, SCHEMA) void ID(Stack&);
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
// The body of a derived variant kernel on `device` (Note [Derived op variants]); defined with
// write_result in kernels/derived_variants.cpp.
void run_derived_variant(const OpEntry& variant, DeviceType device, Stack& s);
}  // namespace kernels

}  // namespace ampjit
