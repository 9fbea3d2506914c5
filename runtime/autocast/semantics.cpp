// The process-wide autocast semantics (see semantics.h).
#include "runtime/autocast/semantics.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "runtime/error.h"

namespace ampjit {

namespace {
constexpr char kEnvVar[] = "AMPJIT_AUTOCAST_SEMANTICS";
// -1: not read yet (or the environment value was malformed); else an AutocastSemantics.
std::atomic<int> g_semantics{-1};

AutocastSemantics from_environment() {
  const char* env = std::getenv(kEnvVar);
  if (!env || !*env) return AutocastSemantics::TorchScript;
  return parse_autocast_semantics(env, kEnvVar);  // throws when malformed: nothing is cached
}
}  // namespace

const char* autocast_semantics_name(AutocastSemantics s) {
  return s == AutocastSemantics::Eager ? "eager" : "torchscript";
}

AutocastSemantics parse_autocast_semantics(std::string_view name, std::string_view what) {
  if (name == "torchscript") return AutocastSemantics::TorchScript;
  if (name == "eager") return AutocastSemantics::Eager;
  throw ValueError(fmt::format("{}: expected 'torchscript' or 'eager', got '{}'", what, name));
}

AutocastSemantics autocast_semantics() {
  const int s = g_semantics.load(std::memory_order_relaxed);
  if (s >= 0) [[likely]]
    return static_cast<AutocastSemantics>(s);
  const AutocastSemantics parsed = from_environment();
  int expected = -1;
  // A concurrent set_autocast_semantics wins over the environment.
  if (!g_semantics.compare_exchange_strong(expected, static_cast<int>(parsed)))
    return static_cast<AutocastSemantics>(expected);
  return parsed;
}

AutocastSemantics set_autocast_semantics(AutocastSemantics s) {
  const int prev = g_semantics.exchange(static_cast<int>(s));
  if (prev >= 0) return static_cast<AutocastSemantics>(prev);
  try {
    return from_environment();
  } catch (const ValueError&) {
    return AutocastSemantics::TorchScript;
  }
}

void reset_autocast_semantics() {
  g_semantics.store(-1);
}

}  // namespace ampjit
