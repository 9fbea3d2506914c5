// Builds the op table from the .def files at start-up: parses every schema once.
#include "runtime/op_table.h"

#include <mutex>
#include <unordered_map>

#include "runtime/error.h"
#include "runtime/tensor.h"

namespace ampjit {

namespace {

struct OpDecl {
  OpId id;
  uint32_t flags;
  const char* schema;
  BoxedKernel cpu;
};

constexpr OpDecl kDecls[] = {
#define AMPJIT_OP(ID, FLAGS, SCHEMA) {OpId::ID, FLAGS, SCHEMA, &kernels::ID},
#include "runtime/ops/all_ops.def"
#undef AMPJIT_OP
};

struct Table {
  std::vector<OpEntry> ops;
  std::unordered_map<std::string, const OpEntry*> by_name;
  std::unordered_map<std::string, std::vector<const OpEntry*>> by_base;

  Table() {
    ops.reserve(kNumOps);
    for (const OpDecl& d : kDecls) {
      OpEntry e;
      e.id = d.id;
      e.flags = d.flags;
      e.schema = parse_schema(d.schema);
      e.name = e.schema.full_name();
      e.base_name = e.schema.qualified_name();
      e.kernels[static_cast<int>(DeviceType::CPU)] = d.cpu;
      if (d.flags & (kComposite | kDeviceGeneric)) {
        for (auto& k : e.kernels) k = d.cpu;
      }
      e.device_arg = e.schema.arg_index("device");
      e.dtype_arg = e.schema.arg_index("dtype");
      e.is_inplace = e.schema.is_inplace();
      e.is_out = e.schema.is_out();
      ops.push_back(std::move(e));
    }
    for (const OpEntry& e : ops) {
      by_name.emplace(e.name, &e);
      by_base[e.base_name].push_back(&e);
      if (e.schema.overload.empty()) by_name.emplace(e.base_name, &e);
    }
  }
};

Table& table() {
  static Table t;
  return t;
}

}  // namespace

const char* autocast_policy_name(AutocastPolicy p) {
  switch (p) {
    case AutocastPolicy::None:
      return "none";
    case AutocastPolicy::LowerPrecisionFp:
      return "lower_precision_fp";
    case AutocastPolicy::Fp32:
      return "fp32";
    case AutocastPolicy::Fp32SetOptDtype:
      return "fp32_set_opt_dtype";
    case AutocastPolicy::Fp32AppendDtype:
      return "fp32_append_dtype";
    case AutocastPolicy::Promote:
      return "promote";
    case AutocastPolicy::Banned:
      return "banned";
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
  table().ops[static_cast<size_t>(id)].kernels[static_cast<int>(device)] = k;
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
