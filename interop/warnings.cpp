// The interop warning channel (see warnings.h).
#include "interop/warnings.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <tuple>

namespace ampjit {

namespace {
std::atomic<WarningHandler> g_handler{nullptr};

// Note [Interop warnings]: without a handler, each distinct warning goes to stderr once.
void print_once(const Warning& w) {
  static std::mutex mu;
  static std::set<std::tuple<int, std::string, std::string>> seen;
  const std::string where = w.where.valid() ? w.where.location_str() : std::string();
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!seen.emplace(static_cast<int>(w.category), w.message, where).second) return;
  }
  std::fprintf(stderr, "%s%s%s: %s\n", where.c_str(), where.empty() ? "" : ": ",
               warning_category_name(w.category), w.message.c_str());
}
}  // namespace

const char* warning_category_name(WarningCategory c) {
  return c == WarningCategory::AutocastInterop ? "AutocastInteropWarning" : "UserWarning";
}

WarningHandler set_warning_handler(WarningHandler handler) {
  return g_handler.exchange(handler);
}

void warn(WarningCategory category, std::string message, SourceRange where) {
  const Warning w{category, std::move(message), std::move(where)};
  if (WarningHandler h = g_handler.load()) return h(w);
  print_once(w);
}

}  // namespace ampjit
