// Dead code elimination: removes nodes whose results are never used and that have no side effects,
// unused outputs of prim::If and unused loop-carried values of prim::Loop.
//
// Given:
//   graph(%x : Tensor, %c : bool):
//     %1 : int = prim::Constant[value=1]()
//     %a : Tensor = aten::relu(%x)                  # unused, pure: removed
//     %r : Tensor = aten::relu_(%x)                 # writes %x: kept
//     %y : Tensor, %z : Tensor = prim::If(%c)       # %z unused: the output goes from both blocks
//       block0():
//         %p : Tensor = aten::neg(%x)
//         %q : Tensor = aten::exp(%x)
//         -> (%p, %q)
//       block1():
//         -> (%x, %x)
//     return (%y)
// Result:
//   graph(%x : Tensor, %c : bool):
//     %r : Tensor = aten::relu_(%x)
//     %y : Tensor = prim::If(%c)
//       block0():
//         %p : Tensor = aten::neg(%x)
//         -> (%p)
//       block1():
//         -> (%x)
//     return (%y)
//
// Note [Side effects]
// A node must run even when nothing uses its results when it writes one of its arguments
// (in-place and out= ops, batch_norm's running statistics in training), draws random numbers
// (kNondeterministic: removing or merging it changes every later random value), raises, prints,
// sets an attribute, enters or exits an autocast region, calls a function, or is a kind this file
// does not know to be pure. An If or a Loop has side effects when a node in its blocks has.
// Common subexpression elimination and constant propagation read the same two predicates.
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Returns whether anything was removed.
bool dead_code_elimination(Graph& g);

// Whether `n` must run even when its outputs are unused (Note [Side effects]).
bool has_side_effects(const Node& n);
// Whether `n` may write to (mutate) one of its inputs: in-place and out= arguments, batch_norm's
// running statistics unless `training` is a constant false, and every node of a kind that is not
// a pure op or a known pure prim (calls, SetAttr, unknown kinds).
bool may_write_inputs(const Node& n);

}  // namespace ampjit
