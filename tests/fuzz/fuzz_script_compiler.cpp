// libFuzzer harness: arbitrary bytes compiled as ampjit-dump compiles a file (lexer, parser, every
// top-level def through the script compiler with the static resolver), then each graph verified,
// the JIT pipeline run on a copy under eager CPU and CUDA autocast, verified after each pass, and
// the graph before and after printed, parsed back and printed again (the prints must agree; a
// graph that still holds a function call is not, Note [Graph text round trip]). Rejecting the
// input with a CompileError whose caret line renders is the one accepted failure; any other
// exception, a mismatch, a crash or a sanitizer report is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "runtime/error.h"
#include "runtime/interpreter.h"
#include "runtime/ir/ir.h"
#include "script/compiler.h"
#include "script/dump_tool.h"
#include "script/parser.h"
#include "script/static_resolver.h"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz_script_compiler: %s\n", what.c_str());
  std::abort();
}

bool holds_object(const ampjit::IValue& v) {
  if (v.is_list() || v.is_tuple()) {
    for (const ampjit::IValue& e : v.is_list() ? v.list_elems() : v.tuple_elems())
      if (holds_object(e)) return true;
  }
  return v.tag() == ampjit::IValue::Tag::Object;
}

bool holds_object(const ampjit::Block& b) {
  for (const ampjit::Node* n : b.nodes()) {
    for (const auto& [name, value] : n->attrs())
      if (holds_object(value)) return true;
    for (const ampjit::Block* inner : n->blocks())
      if (holds_object(*inner)) return true;
  }
  return false;
}

void check_round_trip(const ampjit::Graph& g) {
  if (holds_object(*g.block())) return;
  const std::string printed = g.str();
  const std::string again = ampjit::parse_graph(printed)->str();
  if (again != printed)
    finding("the graph does not print the same after a round trip:\n" + printed + "\nthen\n" +
            again);
}

void check_graph(const ampjit::Graph& g, const ampjit::AutocastContext& eager) {
  g.verify();
  check_round_trip(g);
  std::unique_ptr<ampjit::Graph> copy = g.copy();
  for (const std::string& pass : ampjit::script::pipeline_pass_names())
    ampjit::script::run_dump_pass(*copy, pass, eager);
  check_round_trip(*copy);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ampjit;
  static const AutocastContext eager = script::parse_eager_autocast("cpu=bfloat16,cuda=float16");
  auto source =
      std::make_shared<Source>(std::string(reinterpret_cast<const char*>(data), size), "fuzz.py");
  std::vector<std::shared_ptr<Function>> functions;
  try {
    std::unique_ptr<script::Module> module = script::parse_module(source);
    functions = script::compile_source(source, script::static_resolver(*module));
  } catch (const CompileError& e) {
    (void)e.range().highlight();
    (void)std::string(e.what());
    return 0;
  }
  try {
    for (const std::shared_ptr<Function>& fn : functions) check_graph(*fn->graph(), eager);
  } catch (const std::exception& e) {
    finding(std::string("a compiled graph fails: ") + e.what());
  }
  return 0;
}
