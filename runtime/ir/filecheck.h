// A small FileCheck (after LLVM's): checks text against directives written as comments.
//   # CHECK: aten::mm          the pattern occurs after the previous match
//   # CHECK-NEXT: return       ... on the line right after the previous match
//   # CHECK-NOT: aten::to      ... does not occur between the surrounding matches
//   # CHECK-COUNT-2: aten::add this many matches, one after another
// Patterns are literal text except for {{regex}} blocks. Golden IR tests, pass tests and
// ampjit-dump tests all use this one driver.
#pragma once
#include <string>
#include <string_view>

namespace ampjit {

struct FileCheckResult {
  bool ok = true;
  std::string message;  // the failing directive, its line, and where the search was
};

// Runs every directive found in `checks` (lines containing "CHECK") against `text`.
FileCheckResult filecheck(std::string_view text, std::string_view checks);

}  // namespace ampjit
