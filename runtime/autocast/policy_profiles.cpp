// Applies the autocast policy profiles and per-op overrides to the op table (Note [Autocast
// profiles] in policy_profiles.h).
#include "runtime/autocast/policy_profiles.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>

namespace ampjit {

namespace {

using autocast_data::kProfiles;
using autocast_data::ProfileData;

constexpr const char* kProfileEnvVar = "AMPJIT_AUTOCAST_PROFILE";

struct ProfileState {
  std::mutex mu;
  std::atomic<const ProfileData*> applied{nullptr};
  std::map<std::pair<DeviceType, std::string>, AutocastPolicy> overrides;  // (device, base name)
};
ProfileState& profile_state() {
  static ProfileState s;
  return s;
}

std::span<const ProfileData> profiles() {
  return {kProfiles, autocast_data::kNumProfiles};
}

const ProfileData* find_profile(std::string_view name) {
  for (const ProfileData& p : profiles())
    if (name == p.name) return &p;
  return nullptr;
}

[[noreturn]] void throw_unknown_profile(std::string_view what) {
  std::string valid;
  for (const ProfileData& p : profiles()) {
    valid += valid.empty() ? "" : ", ";
    valid += p.name;
    if (std::string_view(p.name) == autocast_data::kDefaultProfile) valid += " (the default)";
  }
  throw ValueError(fmt::format("{} is not an autocast profile; valid profiles: {}", what, valid));
}

void set_all_overloads(DeviceType device, std::string_view base, AutocastPolicy p) {
  for (const OpEntry* e : find_overloads(base)) set_autocast_policy(e->id, device, p);
}

// Rewrites the whole autocast column: the profile, then the overrides. Caller holds the mutex.
void apply_locked(ProfileState& s, const ProfileData& profile) {
  for (const OpEntry& e : all_ops())
    for (int d = 0; d < kNumDeviceTypes; ++d)
      set_autocast_policy(e.id, static_cast<DeviceType>(d), AutocastPolicy::None);
  std::string name;
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    for (const autocast_data::ProfileEntry& entry : profile.lists[d]) {
      name = "aten::";
      name += entry.op;
      set_all_overloads(static_cast<DeviceType>(d), name, entry.policy);
    }
  }
  for (const auto& [key, policy] : s.overrides) set_all_overloads(key.first, key.second, policy);
  // Fused ops (Note [Fused convolutions] in script/passes/inference.h) cast as their base op.
  for (int d = 0; d < kNumDeviceTypes; ++d)
    set_autocast_policy(OpId::conv2d_relu, static_cast<DeviceType>(d),
                        op_entry(OpId::conv2d).autocast[d]);
  s.applied.store(&profile, std::memory_order_release);
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// "aten::gelu" for "aten::gelu" or "gelu"; ValueError unless the op table has that base name.
std::string resolve_base_name(const char* api, std::string_view op) {
  std::string name =
      op.find("::") == std::string_view::npos ? "aten::" + std::string(op) : std::string(op);
  if (!find_overloads(name).empty()) return name;
  if (const OpEntry* e = find_op(name)) {
    throw ValueError(fmt::format(
        "{}: '{}' is an overload; autocast policies are set per base name ('{}') and apply to all "
        "of its overloads",
        api, name, e->base_name));
  }
  std::vector<std::pair<size_t, std::string_view>> close;
  for (const OpEntry& e : all_ops()) {
    const size_t d = edit_distance(name, e.base_name);
    if (d <= std::max<size_t>(2, name.size() / 4)) close.emplace_back(d, e.base_name);
  }
  std::sort(close.begin(), close.end());
  close.erase(std::unique(close.begin(), close.end()), close.end());
  std::string hint;
  for (size_t i = 0; i < close.size() && i < 3; ++i)
    hint += fmt::format("{}'{}'", i ? ", " : "; did you mean ", close[i].second);
  throw ValueError(
      fmt::format("{}: unknown op '{}' (the op table has no such base name){}", api, name, hint));
}

}  // namespace

std::vector<std::string> autocast_profile_names() {
  std::vector<std::string> names;
  for (const ProfileData& p : profiles()) names.emplace_back(p.name);
  return names;
}

void ensure_autocast_profile() {
  ProfileState& s = profile_state();
  if (s.applied.load(std::memory_order_acquire)) [[likely]]
    return;
  std::lock_guard lock(s.mu);
  if (s.applied.load(std::memory_order_relaxed)) return;
  const char* env = std::getenv(kProfileEnvVar);
  const std::string_view name = env && *env ? env : autocast_data::kDefaultProfile;
  const ProfileData* p = find_profile(name);
  if (!p) throw_unknown_profile(fmt::format("{}='{}'", kProfileEnvVar, name));
  apply_locked(s, *p);
}

std::string get_autocast_profile() {
  ensure_autocast_profile();
  return profile_state().applied.load(std::memory_order_acquire)->name;
}

void set_autocast_profile(std::string_view name) {
  const ProfileData* p = find_profile(name);
  if (!p) throw_unknown_profile(fmt::format("'{}'", name));
  ProfileState& s = profile_state();
  std::lock_guard lock(s.mu);
  apply_locked(s, *p);
}

AutocastPolicy parse_autocast_policy(std::string_view name) {
  std::string valid;
  for (int i = 0; i < kNumAutocastPolicies; ++i) {
    const auto p = static_cast<AutocastPolicy>(i);
    if (name == autocast_policy_name(p)) return p;
    valid += fmt::format("{}{}", i ? ", " : "", autocast_policy_name(p));
  }
  throw ValueError(fmt::format("unknown autocast policy '{}'; valid policies: {}", name, valid));
}

void set_op_policy(DeviceType device, std::string_view op, std::string_view policy) {
  set_op_policy(device, op, parse_autocast_policy(policy));
}

void set_op_policy(DeviceType device, std::string_view op, AutocastPolicy policy) {
  std::string base = resolve_base_name("set_op_policy", op);
  ensure_autocast_profile();
  ProfileState& s = profile_state();
  std::lock_guard lock(s.mu);
  set_all_overloads(device, base, policy);
  s.overrides[{device, std::move(base)}] = policy;
}

void reset_op_policy(DeviceType device, std::string_view op) {
  const std::string base = resolve_base_name("reset_op_policy", op);
  ensure_autocast_profile();
  ProfileState& s = profile_state();
  std::lock_guard lock(s.mu);
  if (s.overrides.erase({device, base}) == 0) return;
  AutocastPolicy policy = AutocastPolicy::None;
  const ProfileData* p = s.applied.load(std::memory_order_relaxed);
  if (base.starts_with("aten::")) {
    const std::string_view bare = std::string_view(base).substr(6);
    for (const autocast_data::ProfileEntry& e : p->lists[static_cast<int>(device)])
      if (bare == e.op) policy = e.policy;
  }
  set_all_overloads(device, base, policy);
}

void reset_op_policies() {
  ensure_autocast_profile();
  ProfileState& s = profile_state();
  std::lock_guard lock(s.mu);
  s.overrides.clear();
  apply_locked(s, *s.applied.load(std::memory_order_relaxed));
}

AutocastPolicy get_op_policy(DeviceType device, std::string_view op) {
  ensure_autocast_profile();
  const OpEntry* e = find_op(op);
  if (!e) {
    e = find_overloads(resolve_base_name("get_op_policy", op)).front();
  }
  return e->autocast[static_cast<int>(device)];
}

std::vector<SkippedOp> autocast_skipped_ops(std::string_view profile) {
  const ProfileData* p = find_profile(profile);
  if (!p) throw_unknown_profile(fmt::format("'{}'", profile));
  std::vector<SkippedOp> skipped;
  for (int d = 0; d < kNumDeviceTypes; ++d) {
    for (const autocast_data::ProfileEntry& e : p->lists[d]) {
      std::string name = std::string("aten::") + e.op;
      if (find_overloads(name).empty())
        skipped.push_back({static_cast<DeviceType>(d), std::move(name), e.policy});
    }
  }
  return skipped;
}

std::string autocast_banned_message(const OpEntry& op) {
  const std::string_view name = op.schema.name;
  for (size_t i = 0; i < autocast_data::kNumBannedMessages; ++i) {
    if (name == autocast_data::kBannedMessages[i].op)
      return autocast_data::kBannedMessages[i].message;
  }
  return fmt::format("{} is unsafe to autocast on this device (its autocast policy is 'banned')",
                     op.base_name);
}

}  // namespace ampjit
