// The optimization pipeline a Function runs on a copy of its graph before the first call under
// each eager autocast state (Note [Function specialization] in runtime/interpreter.h): torch's
// preoptimizeGraph (reference §1.1), in its order.
//
//   inline_calls                         (torch: Inline)
//   constant_propagation                 (torch: PeepholeOptimize,
//   ConstantPropagationImmutableTypes) autocast_pass                        (torch: Autocast;
//   skipped when disable_autocast or when
//                                         jit_autocast_mode() is off)
//   common_subexpression_elimination, dead_code_elimination   (torch: ConstantPooling, and more)
//
// Loading the library installs optimize_graph as the interpreter's graph optimizer.
#pragma once
#include "runtime/autocast/autocast_state.h"
#include "runtime/ir/ir.h"

namespace ampjit {

// Optimizes `g` in place for a call made under the eager autocast state `eager`.
void optimize_graph(Graph& g, const AutocastContext& eager, bool disable_autocast = false);

}  // namespace ampjit
