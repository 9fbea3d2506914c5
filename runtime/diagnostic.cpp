// Diagnostics and the warning channel (see diagnostic.h).
#include "runtime/diagnostic.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <tuple>

#include "runtime/caches.h"

namespace ampjit {

std::string Diagnostic::render() const {
  std::string s;
  if (range.valid()) {
    const std::string h = range.highlight();  // "file:line:col\nline\n   ~~~"
    const size_t nl = h.find('\n');
    s = h.substr(0, nl) + ": " + message + (nl == std::string::npos ? "" : h.substr(nl));
  } else {
    s = message;
  }
  for (const DiagnosticNote& n : notes) {
    if (n.style == DiagnosticNote::Style::Context)
      s += n.range.valid() ? "\n  (in " + n.message + " at " + n.range.location_str() + ")"
                           : "\n  (in " + n.message + ")";
    else
      s += "\n  " + n.message + (n.range.valid() ? " " + n.range.highlight() : "");
  }
  return s;
}

const char* warning_category_name(WarningCategory c) {
  return c == WarningCategory::AutocastInterop ? "AutocastInteropWarning" : "UserWarning";
}

namespace {
std::atomic<WarningHandler> g_handler{nullptr};

// Note [Interop warnings]: without a handler, each distinct warning goes to stderr once. The set
// of warnings shown is bounded (Note [Long-lived caches]): past kMaxRemembered it starts again, so
// a program that warns about ever-new things shows some twice rather than growing without end.
constexpr size_t kMaxRemembered = 10000;
std::mutex g_seen_mu;
std::set<std::tuple<int, std::string, std::string>>& seen_warnings() {
  static auto* seen = new std::set<std::tuple<int, std::string, std::string>>;
  return *seen;
}
[[maybe_unused]] const bool g_cache_registered =
    register_cache({"warnings shown once", "at most 10,000 distinct warnings",
                    [] {
                      std::lock_guard<std::mutex> lock(g_seen_mu);
                      return seen_warnings().size();
                    },
                    [] {
                      std::lock_guard<std::mutex> lock(g_seen_mu);
                      seen_warnings().clear();
                    }});

void print_once(const Diagnostic& w) {
  const std::string where = w.range.valid() ? w.range.location_str() : std::string();
  {
    std::lock_guard<std::mutex> lock(g_seen_mu);
    auto& seen = seen_warnings();
    if (seen.size() >= kMaxRemembered) seen.clear();
    if (!seen.emplace(static_cast<int>(w.category), w.message, where).second) return;
  }
  std::fprintf(stderr, "%s%s%s: %s\n", where.c_str(), where.empty() ? "" : ": ",
               warning_category_name(w.category), w.message.c_str());
}
}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  return g_handler.exchange(handler);
}

void warn(WarningCategory category, std::string message, SourceRange where) {
  const Diagnostic w{Severity::Warning, category, std::move(message), std::move(where), {}};
  if (WarningHandler h = g_handler.load()) return h(w);
  print_once(w);
}

}  // namespace ampjit
