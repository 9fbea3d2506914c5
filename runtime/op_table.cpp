// Builds the op table from the .def files at start-up: parses every schema once.
#include "runtime/op_table.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <iterator>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "runtime/error.h"
#include "runtime/tensor.h"

namespace ampjit {

namespace {

// The derived kernel of variant V on device D (Note [Derived op variants]): one function per
// variant and device, as a BoxedKernel knows neither.
template <OpId V, DeviceType D>
void derived_kernel(Stack& s) {
  kernels::run_derived_variant(op_entry(V), D, s);
}
using DeviceKernels = std::array<BoxedKernel, kNumDeviceTypes>;
template <OpId V, size_t... D>
constexpr DeviceKernels derived_kernels(std::index_sequence<D...>) {
  return {&derived_kernel<V, static_cast<DeviceType>(D)>...};
}

struct OpDecl {
  OpId id;
  uint32_t flags;
  const char* schema;
  BoxedKernel cpu;        // kernels::ID; nullptr for a variant (its own is recorded, if any)
  DeviceKernels derived;  // a variant's derived kernels, one per device
};

// A variant's `kernels::ID` is named only in a discarded statement: it need not be defined.
#define AMPJIT_OP(ID, FLAGS, SCHEMA)                                                         \
  [] {                                                                                       \
    if constexpr (schema_writes_argument(SCHEMA))                                            \
      return OpDecl{OpId::ID, FLAGS, SCHEMA, nullptr,                                        \
                    derived_kernels<OpId::ID>(std::make_index_sequence<kNumDeviceTypes>{})}; \
    else                                                                                     \
      return OpDecl{OpId::ID, FLAGS, SCHEMA, &kernels::ID, {}};                              \
  }(),
constexpr OpDecl kDecls[] = {
#include "runtime/ops/all_ops.def"
};
#undef AMPJIT_OP

// Note [Decomposed ops] (op_table.h): the ops of decompositions.def follow the C++-named ones. A
// BoxedKernel knows neither its op nor its device, so each gets one from a pool of kernels made
// by index: decomposed<I> runs the decomposition of op kNumOps + I, and derived_pool<I, D> the
// derived kernel of that op as a variant on device D.
struct DecomposedDecl {
  uint32_t flags;
  const char* schema;
  bool has_def;  // AMPJIT_DECOMPOSITION (a def runs it), else AMPJIT_VARIANT (derived)
};
constexpr DecomposedDecl kDecomposedDecls[] = {
#define AMPJIT_DECOMPOSITION(FLAGS, SCHEMA) {(FLAGS) | kComposite | kDecomposed, SCHEMA, true},
#define AMPJIT_VARIANT(FLAGS, SCHEMA) {(FLAGS) | kDecomposed, SCHEMA, false},
#include "runtime/ops/decompositions.def"
#undef AMPJIT_DECOMPOSITION
#undef AMPJIT_VARIANT
};
constexpr size_t kNumDecomposed = std::size(kDecomposedDecls);
constexpr size_t kDecomposedPool = 1024;
static_assert(kNumDecomposed <= kDecomposedPool,
              "decompositions.def outgrew the kernel pool: raise kDecomposedPool");

std::atomic<DecompositionRunner> g_decomposition_runner{nullptr};

template <size_t I>
void decomposed_kernel(Stack& s) {
  const OpEntry& op = all_ops()[kNumOps + I];
  DecompositionRunner run = g_decomposition_runner.load(std::memory_order_acquire);
  if (!run) [[unlikely]]
    throw NotImplementedError(fmt::format(
        "{}: its decomposition needs the script compiler, which is not loaded", op.name));
  run(op, s);
}
template <size_t... I>
constexpr std::array<BoxedKernel, sizeof...(I)> decomposed_kernels(std::index_sequence<I...>) {
  return {&decomposed_kernel<I>...};
}
constexpr auto kDecomposedKernels = decomposed_kernels(std::make_index_sequence<kDecomposedPool>{});

template <size_t I, DeviceType D>
void derived_pool_kernel(Stack& s) {
  kernels::run_derived_variant(all_ops()[kNumOps + I], D, s);
}
template <size_t I, size_t... D>
constexpr DeviceKernels derived_pool_row(std::index_sequence<D...>) {
  return {&derived_pool_kernel<I, static_cast<DeviceType>(D)>...};
}
template <size_t... I>
constexpr std::array<DeviceKernels, sizeof...(I)> derived_pool(std::index_sequence<I...>) {
  return {derived_pool_row<I>(std::make_index_sequence<kNumDeviceTypes>{})...};
}
constexpr auto kDerivedPool = derived_pool(std::make_index_sequence<kDecomposedPool>{});

// The derived kernels of op `id` as a variant, one per device.
const DeviceKernels& derived_kernels_of(size_t id) {
  return id < kNumOps ? kDecls[id].derived : kDerivedPool[id - kNumOps];
}

// The CPU kernels AMPJIT_KERNEL defined, by op (record_cpu_kernel): constant-initialized, so
// recording works whichever static initializer runs first.
BoxedKernel g_recorded_cpu[kNumOps] = {};
bool g_table_built = false;

struct Table {
  std::vector<OpEntry> ops;
  std::unordered_map<std::string, const OpEntry*> by_name;
  std::unordered_map<std::string, std::vector<const OpEntry*>> by_base;
  std::vector<std::vector<OpEntry*>> variants_of =
      std::vector<std::vector<OpEntry*>>(kNumOps + kNumDecomposed);

  Table() {
    ops.reserve(kNumOps + kNumDecomposed);
    for (const OpDecl& d : kDecls) {
      OpEntry e = entry(d.id, d.flags, d.schema);
      install_cpu(e, d.cpu ? d.cpu : g_recorded_cpu[static_cast<size_t>(d.id)]);
      ops.push_back(std::move(e));
    }
    for (size_t i = 0; i < kNumDecomposed; ++i) {
      const DecomposedDecl& d = kDecomposedDecls[i];
      OpEntry e = entry(static_cast<OpId>(kNumOps + i), d.flags, d.schema);
      if (d.has_def) install_cpu(e, kDecomposedKernels[i]);  // every column: it is kComposite
      ops.push_back(std::move(e));
    }
    for (const OpEntry& e : ops) {
      by_name.emplace(e.name, &e);
      by_base[e.base_name].push_back(&e);
      if (e.schema.overload.empty()) by_name.emplace(e.base_name, &e);
    }
    for (OpEntry& v : ops) {
      v.functional = functional_sibling(v);
      if (v.functional) variants_of[static_cast<size_t>(v.functional->id)].push_back(&v);
      // A variant of a decomposed op is composite too: autograd records what it runs.
      if (v.functional && v.functional->has(kDecomposed)) v.flags |= kComposite;
      AMPJIT_CHECK(!v.has(kDecomposed) || v.has(kComposite) || v.functional,
                   "op table: {} is declared a variant in decompositions.def, but no functional "
                   "overload pairs with it (Note [Derived op variants])",
                   v.name);
    }
    for (OpEntry& v : ops)
      for (int dev = 0; dev < kNumDeviceTypes; ++dev) derive(v, dev);
    g_table_built = true;
  }

  static OpEntry entry(OpId id, uint32_t flags, const char* schema) {
    OpEntry e;
    e.id = id;
    e.flags = flags;
    e.schema = parse_schema(schema);
    e.name = e.schema.full_name();
    e.base_name = e.schema.qualified_name();
    for (size_t i = 0; i < e.schema.args.size(); ++i)
      if (e.schema.args[i].is_write) e.written_arg = static_cast<int>(i);
    AMPJIT_CHECK((e.written_arg >= 0) == schema_writes_argument(schema),
                 "op table: {} writes an argument the text check does not see", e.name);
    e.device_arg = e.schema.arg_index("device");
    e.dtype_arg = e.schema.arg_index("dtype");
    e.is_inplace = e.schema.is_inplace();
    e.is_out = e.schema.is_out();
    e.returns_alias = !e.schema.returns.empty() && e.schema.returns[0].in_alias_set &&
                      !e.schema.returns[0].is_write;
    return e;
  }

  // The CPU kernel in the CPU column, or in every column for kComposite and kDeviceGeneric.
  static void install_cpu(OpEntry& e, BoxedKernel k) {
    if (e.has(kComposite) || e.has(kDeviceGeneric)) {
      for (auto& col : e.kernels) col = k;
    } else {
      e.kernels[static_cast<int>(DeviceType::CPU)] = k;
    }
  }

  // Installs variant v's derived kernel on device `dev` where it has none and its sibling has one.
  void derive(OpEntry& v, int dev) {
    if (v.functional && !v.kernels[dev] && v.functional->kernels[dev])
      v.kernels[dev] = derived_kernels_of(static_cast<size_t>(v.id))[dev];
  }

  // Note [Derived op variants]: the functional overload a variant pairs with, or nullptr.
  const OpEntry* functional_sibling(const OpEntry& v) const {
    const FunctionSchema& vs = v.schema;
    if (v.written_arg < 0) return nullptr;
    // An in-place variant writes self alone; an out= variant writes one kwarg-only tensor per
    // result (sort.values: `values` and `indices`).
    size_t written = 0;
    for (const Argument& a : vs.args) {
      if (!a.is_write) continue;
      ++written;
      if (v.is_out && (!a.kwarg_only || a.type->str() != "Tensor")) return nullptr;
    }
    if (vs.returns.size() != written || (v.is_inplace && written != 1)) return nullptr;
    std::string name = vs.name;
    if (v.is_inplace) {
      if (v.written_arg != 0 || name.size() < 2 || name.back() != '_') return nullptr;
      name.pop_back();
    } else if (!v.is_out) {
      return nullptr;
    }
    // Every argument but the written out= ones, as text (`self` compares unwritten: is_write is
    // not in it).
    auto args_of = [](const FunctionSchema& s, bool skip_out) {
      std::vector<std::string> out;
      for (size_t i = 0; i < s.args.size(); ++i) {
        const Argument& a = s.args[i];
        if (skip_out && a.is_write) continue;
        out.push_back(fmt::format("{}{} {}[{}]{}", a.kwarg_only ? "*" : "", a.type->str(), a.name,
                                  a.list_len,
                                  a.default_value ? "=" + a.default_value->repr() : ""));
      }
      return out;
    };
    const auto want = args_of(vs, v.is_out);
    auto it = by_base.find(vs.ns + "::" + name);
    if (it == by_base.end()) return nullptr;
    std::vector<const OpEntry*> found;
    for (const OpEntry* f : it->second) {
      const auto& rs = f->schema.returns;
      if (f->written_arg < 0 && rs.size() == written &&
          std::all_of(rs.begin(), rs.end(),
                      [](const Argument& r) { return r.type->str() == "Tensor"; }) &&
          args_of(f->schema, false) == want)
        found.push_back(f);
    }
    if (found.size() == 1) return found[0];
    // Several with these arguments: the one of the variant's overload name, else none (visible).
    const OpEntry* same_overload = nullptr;
    for (const OpEntry* f : found) {
      if (f->schema.overload != vs.overload) continue;
      if (same_overload) return nullptr;
      same_overload = f;
    }
    return same_overload;
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

const char* autocast_policy_name(AutocastPolicy p) {
  switch (p) {
#define AMPJIT_AUTOCAST_POLICY(E, NAME) \
  case AutocastPolicy::E:               \
    return NAME;
#include "runtime/autocast/policies.def"
#undef AMPJIT_AUTOCAST_POLICY
  }
  return "?";
}

const OpEntry& op_entry(OpId id) {
  return table().ops[static_cast<size_t>(id)];
}
const std::vector<OpEntry>& all_ops() {
  return table().ops;
}

const OpEntry* find_op(std::string_view full_name) {
  auto& t = table();
  auto it = t.by_name.find(std::string(full_name));
  return it == t.by_name.end() ? nullptr : it->second;
}

const std::vector<const OpEntry*>& find_overloads(std::string_view base_name) {
  static const std::vector<const OpEntry*> empty;
  auto& t = table();
  auto it = t.by_base.find(std::string(base_name));
  return it == t.by_base.end() ? empty : it->second;
}

void register_kernel(OpId id, DeviceType device, BoxedKernel k) {
  Table& t = table();
  const int dev = static_cast<int>(device);
  t.ops[static_cast<size_t>(id)].kernels[dev] = k;
  for (OpEntry* v : t.variants_of[static_cast<size_t>(id)]) t.derive(*v, dev);
}

void set_decomposition_runner(DecompositionRunner runner) {
  g_decomposition_runner.store(runner, std::memory_order_release);
}

bool record_cpu_kernel(OpId id, BoxedKernel k) {
  g_recorded_cpu[static_cast<size_t>(id)] = k;
  // A kernel recorded after the table was built (a static initializer asked it first) still wins.
  if (g_table_built && kDecls[static_cast<size_t>(id)].cpu == nullptr)
    Table::install_cpu(table().ops[static_cast<size_t>(id)], k);
  return true;
}

bool kernel_is_derived(const OpEntry& op, DeviceType device) {
  const int dev = static_cast<int>(device);
  return op.kernels[dev] && op.kernels[dev] == derived_kernels_of(static_cast<size_t>(op.id))[dev];
}

std::vector<const OpEntry*> unpaired_variants() {
  std::vector<const OpEntry*> out;
  for (const OpEntry& op : table().ops)
    if (op.written_arg >= 0 && !op.functional) out.push_back(&op);
  return out;
}

void throw_no_kernel(const OpEntry& op, Device device) {
  const std::string type = device_type_name(device.type);
  throw NotImplementedError(
      fmt::format("{}: no kernel for device '{}' ({})", op.name, device.str(),
                  Storage::has_device_allocator(device.type) || device.type == DeviceType::CPU
                      ? "ampjit's " + type + " backend does not implement this op"
                      : "ampjit was built without its " + type + " backend"));
}

std::vector<const OpEntry*> ops_without_kernel(DeviceType device) {
  std::vector<const OpEntry*> out;
  for (const OpEntry& op : table().ops)
    if (!op.kernels[static_cast<int>(device)] && !op.has(kScriptOnly)) out.push_back(&op);
  return out;
}

void set_autocast_policy(OpId id, DeviceType device, AutocastPolicy p) {
  table().ops[static_cast<size_t>(id)].autocast[static_cast<int>(device)] = p;
}

}  // namespace ampjit
