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
// Which nodes have side effects: Note [Side effects] in runtime/ir/queries.h.
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Returns whether anything was removed.
bool dead_code_elimination(Graph& g);

}  // namespace ampjit
