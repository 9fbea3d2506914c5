// libFuzzer harness: the script lexer and parser on arbitrary bytes (scripts/fuzz.sh builds and
// runs it). Any input must parse, or raise a CompileError whose caret line renders; anything else
// (a crash, a sanitizer report, another exception) is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "runtime/error.h"
#include "script/parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  auto source =
      std::make_shared<Source>(std::string(reinterpret_cast<const char*>(data), size), "fuzz.py");
  try {
    auto module = script::parse_module(source);
    (void)script::dump(*module);  // walks every node of the tree
  } catch (const CompileError& e) {
    (void)e.range().highlight();
    (void)std::string(e.what());
  }
  return 0;
}
