// The symbol table (see symbol.h).
#include "runtime/ir/symbol.h"

#include <deque>
#include <mutex>
#include <unordered_map>

#include "runtime/caches.h"
#include "runtime/error.h"

namespace ampjit {

namespace {
struct Table {
  std::mutex mu;
  std::deque<std::string> names;  // stable addresses
  std::unordered_map<std::string_view, uint32_t> ids;
  Table() {
    names.emplace_back("");
    ids.emplace(names.back(), 0);
#define AMPJIT_SYMBOL(ns, n) add(#ns "::" #n);
#include "runtime/ir/symbols.def"
#undef AMPJIT_SYMBOL
  }
  uint32_t add(std::string_view q) {
    auto it = ids.find(q);
    if (it != ids.end()) return it->second;
    names.emplace_back(q);
    const uint32_t id = static_cast<uint32_t>(names.size() - 1);
    ids.emplace(names.back(), id);
    return id;
  }
};
Table& table() {
  static Table t;
  return t;
}

[[maybe_unused]] const bool g_cache_registered = register_cache(
    {"symbols", "the names of the ops, attributes and prims programs use; never emptied",
     [] {
       Table& t = table();
       std::lock_guard<std::mutex> lock(t.mu);
       return t.names.size();
     },
     nullptr});
}  // namespace

Symbol Symbol::intern(std::string_view q) {
  AMPJIT_CHECK(q.find("::") != std::string_view::npos, "symbol '{}' has no namespace", q);
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return Symbol(t.add(q));
}

Symbol Symbol::intern(std::string_view ns, std::string_view name) {
  return intern(std::string(ns) + "::" + std::string(name));
}

const std::string& Symbol::qualified() const {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.names[id_];
}

std::string_view Symbol::ns() const {
  std::string_view q = qualified();
  return q.substr(0, q.find("::"));
}

std::string_view Symbol::name() const {
  std::string_view q = qualified();
  const size_t p = q.find("::");
  return p == std::string_view::npos ? q : q.substr(p + 2);
}

}  // namespace ampjit
