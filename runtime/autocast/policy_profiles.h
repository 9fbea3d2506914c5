// Autocast policy profiles: which cast policy each op gets on each device, as data. A profile fills
// the op table's autocast column (OpEntry::autocast, via set_autocast_policy); user overrides of
// single ops are applied on top of it.
//
// Note [Autocast profiles]
// The profiles are the JSON files in runtime/autocast/profiles/ (PyTorch's op lists as data: the
// lists of aten/src/ATen/autocast_mode.cpp, docs/source/amp.rst and the JIT pass, and the CPU
// policy torch 1.13.1 applies as measured; profiles.json says which list feeds which profile),
// turned into a C++ table at build time by tools/gen_autocast_profiles.py. Nothing is read at run
// time.
//   torch-1.13 (default)  cpu: PyTorch 1.13.1 as measured (cpu-autocast-torch-1.13.json; its
//                         `none` ops get no policy); cuda: the 2.x source lists (`cuda`).
//   documented            cpu: the torch.cpu.amp op lists of PyTorch's docs/source/amp.rst
//   (`cpu_legacy_seed002`);
//                         cuda: the amp.rst lists (`docs_amp_rst`), Python-level names mapped to
//                         ATen names by profiles.json `python_to_aten` (__matmul__ -> matmul,
//                         GRUCell -> gru_cell, __rdiv__ -> reciprocal, cross_entropy ->
//                         cross_entropy_loss, softmin -> softmax, normalize -> dropped, ...), and
//                         ops the docs list as float32 that the source implements as
//                         fp32_set_opt_dtype / fp32_append_dtype (softmax, sum, norm, ...) keep
//                         that mechanism.
//   torch-2               cpu and cuda: the 2.x source lists (`cpu`, `cuda`).
// A name applies to every overload of the ATen base name (in-place and out= overloads are never
// autocast anyway). Names the op table does not have (yet) are skipped; autocast_skipped_ops()
// lists them.
// The profile is chosen once, at first use (enabling autocast, or any function below), from the
// environment variable AMPJIT_AUTOCAST_PROFILE (unset or empty: torch-1.13); set_autocast_profile
// switches at run time. Profile switches and overrides are process-wide and serialized by a
// mutex, but they rewrite the op table's column in place: switching while other threads dispatch
// ops under autocast is the caller's responsibility (the dispatching threads may see either
// policy for an op during the switch).
#pragma once
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/op_table.h"

namespace ampjit {

// "torch-1.13", "documented", "torch-2"; the first is the default.
std::vector<std::string> autocast_profile_names();
// The applied profile's name (applying the initial one first if none is).
std::string get_autocast_profile();
// Applies a profile (then the overrides). ValueError naming the valid profiles when unknown.
void set_autocast_profile(std::string_view name);
// Applies the initial profile (AMPJIT_AUTOCAST_PROFILE, else the default) unless one is applied.
// Code that reads OpEntry::autocast directly (the JIT autocast pass) calls this first.
void ensure_autocast_profile();

// "lower_precision_fp", "fp32", ... (autocast_policy_name's inverse); ValueError listing the
// valid names otherwise.
AutocastPolicy parse_autocast_policy(std::string_view name);

// Overrides one op's policy on one device: `op` is a base name ("aten::gelu"; "gelu" means
// "aten::gelu") and the policy applies to all of its overloads, in every profile, until reset.
// ValueError on an unknown op (with the closest names) or an unknown policy name.
void set_op_policy(DeviceType device, std::string_view op, std::string_view policy);
void set_op_policy(DeviceType device, std::string_view op, AutocastPolicy policy);
// Back to the profile's policy for that op / for every op.
void reset_op_policy(DeviceType device, std::string_view op);
void reset_op_policies();
// The policy in effect; `op` is a base name or an overload ("aten::softmax.int").
AutocastPolicy get_op_policy(DeviceType device, std::string_view op);

// The entries of a profile naming ops the op table does not have, in data order per device.
struct SkippedOp {
  DeviceType device;
  std::string op;  // "aten::conv_tbc"
  AutocastPolicy policy;
};
std::vector<SkippedOp> autocast_skipped_ops(std::string_view profile);

// The error a banned op raises (PyTorch's text for binary_cross_entropy).
std::string autocast_banned_message(const OpEntry& op);

// The generated table (tools/gen_autocast_profiles.py); ATen base names without "aten::".
namespace autocast_data {
struct ProfileEntry {
  const char* op;
  AutocastPolicy policy;
};
struct ProfileData {
  const char* name;
  const char* description;
  std::span<const ProfileEntry> lists[kNumDeviceTypes];
};
struct BannedMessage {
  const char* op;
  const char* message;
};
extern const ProfileData kProfiles[];
extern const size_t kNumProfiles;
extern const char* const kDefaultProfile;
extern const BannedMessage kBannedMessages[];
extern const size_t kNumBannedMessages;
// The JIT autocast pass's lists (autocast-policies.json `jit_pass`,
// torch/csrc/jit/passes/autocast.cpp): one list for every device, apart from the eager profiles
// (the pass never reads the op table's column).
extern const ProfileEntry kJitPass[];
extern const size_t kNumJitPass;
}  // namespace autocast_data

}  // namespace ampjit
