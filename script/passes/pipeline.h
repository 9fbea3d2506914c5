// The optimization pipeline a Function runs on a copy of its graph before the first call under
// each eager autocast state (Note [Function specialization] in runtime/interpreter.h): torch's
// preoptimizeGraph, in its order. The passes are listed once, in pipeline.cpp: optimize_graph runs
// them, ampjit-dump's --passes names them, and the golden pass files (tests/golden/passes) use
// those names. Adding a pass is its file (script/passes/<long name>.{h,cpp}) and its line there.
//
//   name       pass (file)                        torch
//   inline     inline_calls                       Inline
//   constprop  constant_propagation               ConstantPropagationImmutableTypes
//   autocast   autocast_pass                      Autocast (skipped: see Pass::autocast)
//   cse        common_subexpression_elimination   ConstantPooling, and more
//   dce        dead_code_elimination              EliminateDeadCode
//
// Loading the library installs optimize_graph as the interpreter's graph optimizer.
#pragma once
#include <span>
#include <string_view>

#include "runtime/autocast/autocast_state.h"
#include "runtime/ir/ir.h"

namespace ampjit {

struct Pass {
  const char* name;       // the short name: ampjit-dump --passes, golden files
  const char* long_name;  // its function and file: script/passes/<long_name>.{h,cpp}
  // The JIT autocast pass: skipped when the interpreter's jit_autocast_mode() is off or the
  // caller disables it, and never run in eager semantics (Note [Autocast semantics]).
  bool autocast;
  void (*run)(Graph& g, const AutocastContext& eager);
};

// The pipeline, in order.
std::span<const Pass> pipeline_passes();
// A pass by its short or long name; nullptr when there is none.
const Pass* find_pass(std::string_view name);

// Optimizes `g` in place for a call made under the eager autocast state `eager`.
void optimize_graph(Graph& g, const AutocastContext& eager, bool disable_autocast = false);

}  // namespace ampjit
