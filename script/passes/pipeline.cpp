// The optimization pipeline (see pipeline.h) and its installation into the interpreter.
#include "script/passes/pipeline.h"

#include "runtime/interpreter.h"
#include "script/passes/autocast_pass.h"
#include "script/passes/common_subexpression_elimination.h"
#include "script/passes/constant_propagation.h"
#include "script/passes/dead_code_elimination.h"
#include "script/passes/inline_calls.h"

namespace ampjit {

void optimize_graph(Graph& g, const AutocastContext& eager, bool disable_autocast) {
  inline_calls(g);
  // torch runs ConstantPropagationImmutableTypes before its autocast pass: the pass must see the
  // region's arguments (and branches on constants) folded.
  constant_propagation(g);
  if (!disable_autocast && jit_autocast_mode()) autocast_pass(g, eager);
  // torch's ConstantPooling pools the casts' flag constants; CSE does that and more, and DCE drops
  // what the folding and the exit flags (script/compiler.cpp) left unused.
  common_subexpression_elimination(g);
  dead_code_elimination(g);
}

namespace {
// runtime/ cannot see script/: the pipeline installs itself when the library loads.
const bool kInstalled = (set_graph_optimizer(&optimize_graph), true);
}  // namespace

}  // namespace ampjit
