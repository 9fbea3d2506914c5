// The optimization pipeline (see pipeline.h) and its installation into the interpreter.
#include "script/passes/pipeline.h"

#include "runtime/interpreter.h"
#include "script/passes/autocast_pass.h"
#include "script/passes/common_subexpression_elimination.h"
#include "script/passes/constant_propagation.h"
#include "script/passes/dead_code_elimination.h"
#include "script/passes/freeze.h"
#include "script/passes/inline_calls.h"

namespace ampjit {

namespace {
// torch runs ConstantPropagationImmutableTypes before its autocast pass: the pass must see the
// region's arguments (and branches on constants) folded. torch's ConstantPooling pools the casts'
// flag constants; CSE does that and more, and DCE drops what the folding and the exit flags
// (script/emit/) left unused.
const Pass kPipeline[] = {
    {"inline", "inline_calls", false, [](Graph& g, const AutocastContext&) { inline_calls(g); }},
    {"constprop", "constant_propagation", false,
     [](Graph& g, const AutocastContext&) { constant_propagation(g); }},
    // In a frozen graph the casts it puts on constant weights fold to constants (Note [Freezing]).
    {"autocast", "autocast_pass", true,
     [](Graph& g, const AutocastContext& eager) {
       autocast_pass(g, eager);
       if (has_tensor_constants(g)) constant_propagation(g, /*fold_tensors=*/true);
     }},
    {"cse", "common_subexpression_elimination", false,
     [](Graph& g, const AutocastContext&) { common_subexpression_elimination(g); }},
    {"dce", "dead_code_elimination", false,
     [](Graph& g, const AutocastContext&) { dead_code_elimination(g); }},
};
}  // namespace

std::span<const Pass> pipeline_passes() {
  return kPipeline;
}

const Pass* find_pass(std::string_view name) {
  for (const Pass& p : kPipeline)
    if (name == p.name || name == p.long_name) return &p;
  return nullptr;
}

void optimize_graph(Graph& g, const AutocastContext& eager, bool disable_autocast) {
  for (const Pass& p : kPipeline) {
    if (p.autocast && (disable_autocast || !jit_autocast_mode())) continue;
    p.run(g, eager);
  }
}

namespace {
// runtime/ cannot see script/: the pipeline installs itself when the library loads.
const bool kInstalled = (set_graph_optimizer(&optimize_graph), true);
}  // namespace

}  // namespace ampjit
