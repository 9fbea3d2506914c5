// libFuzzer harness: arbitrary bytes as graph text (parse_graph). Text the parser rejects must be
// an Error; a graph it accepts is either refused by verify() with an Error, or it prints, parses
// back, prints the same again, and the reparsed graph verifies. Any other exception, a mismatch, a
// crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/ir/ir.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_graph_parser: %s\n", what.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  std::unique_ptr<Graph> g;
  try {
    g = parse_graph(std::string_view(reinterpret_cast<const char*>(data), size));
    g->verify();
  } catch (const Error& e) {
    (void)std::string(e.what());
    return 0;
  }
  const std::string printed = g->str();
  try {
    std::unique_ptr<Graph> reparsed = parse_graph(printed);
    const std::string again = reparsed->str();
    if (again != printed)
      finding("the graph does not print the same after a round trip:\n" + printed + "\nthen\n" +
              again);
    reparsed->verify();
  } catch (const std::exception& e) {
    finding(std::string("a verified graph's text fails: ") + e.what() + "\n" + printed);
  }
  return 0;
}
