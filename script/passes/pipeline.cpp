// The optimization pipeline (see pipeline.h) and its installation into the interpreter.
#include "script/passes/pipeline.h"

#include "runtime/interpreter.h"
#include "script/passes/autocast_pass.h"
#include "script/passes/inline_calls.h"

namespace ampjit {

void optimize_graph(Graph& g, const AutocastContext& eager, bool disable_autocast) {
  inline_calls(g);
  // ---- Passes before the autocast pass (in progress): constant propagation goes here, as torch
  // runs ConstantPropagationImmutableTypes first (it folds what the pass must see as constants).
  if (!disable_autocast && jit_autocast_mode()) autocast_pass(g, eager);
  // ---- Passes after the autocast pass (in progress): common subexpression elimination (pools
  // the casts' constant flags, as torch's ConstantPooling does) and dead code elimination go here.
}

namespace {
// runtime/ cannot see script/: the pipeline installs itself when the library loads.
const bool kInstalled = (set_graph_optimizer(&optimize_graph), true);
}  // namespace

}  // namespace ampjit
