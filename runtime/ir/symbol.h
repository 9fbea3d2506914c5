// Interned symbols: a node kind or attribute name ("aten::mm", "prim::If", "attr::value") is a
// 32-bit id into one process-wide table, so comparing kinds is comparing integers.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace ampjit {

class Symbol {
 public:
  constexpr Symbol() = default;
  // Interns a qualified name "ns::name" (thread-safe).
  static Symbol intern(std::string_view qualified);
  static Symbol intern(std::string_view ns, std::string_view name);

  const std::string& qualified() const;  // "aten::mm"
  std::string_view ns() const;           // "aten"
  std::string_view name() const;         // "mm"
  bool is_aten() const { return ns() == "aten"; }
  bool is_prim() const { return ns() == "prim"; }
  uint32_t id() const { return id_; }
  bool operator==(const Symbol& o) const { return id_ == o.id_; }
  bool operator!=(const Symbol& o) const { return id_ != o.id_; }
  bool operator<(const Symbol& o) const { return id_ < o.id_; }

  explicit constexpr Symbol(uint32_t id) : id_(id) {}

 private:
  uint32_t id_ = 0;  // 0 is the empty symbol
};

namespace symbols {
enum : uint32_t {
  kNone = 0,
#define AMPJIT_SYMBOL(ns, n) ns##_##n,
#include "runtime/ir/symbols.def"
#undef AMPJIT_SYMBOL
};
}  // namespace symbols

#define AMPJIT_SYMBOL(ns, n)             \
  namespace ns {                         \
  constexpr Symbol n{symbols::ns##_##n}; \
  }
namespace sym {
#include "runtime/ir/symbols.def"
}  // namespace sym
#undef AMPJIT_SYMBOL

}  // namespace ampjit

template <>
struct std::hash<ampjit::Symbol> {
  size_t operator()(const ampjit::Symbol& s) const noexcept { return s.id(); }
};
