// Common subexpression elimination: a pure node that repeats an earlier one (same kind, op, inputs,
// attributes, output types and metadata) is replaced by the earlier one, when the earlier one
// dominates it: it is in the same block, or in a block that encloses it. Non-tensor constants
// with equal values are pooled graph-wide: one of them moves to the top of the graph and the
// others are removed.
//
// Not merged (Note [What CSE may merge] in the .cpp):
//  - nodes with side effects (Note [Side effects] in dead_code_elimination.h), random ops
//    included, and nodes with blocks;
//  - nodes whose inputs or outputs may alias a value some node writes (in-place and out= ops,
//    calls): the two computations could see different data;
//  - tensor constants (a tensor constant may be written through one use and not the other);
//  - nodes separated by a node that may change what ops compute (prim::Enter / prim::Exit of an
//    autocast region, calls, unknown kinds): the same op can give a different result on each side;
//  - nodes with different metadata (e.g. traced under different autocast states).
// The surviving node keeps its source range and metadata.
//
// Given:
//   graph(%x : Tensor, %none : NoneType, %f : bool):
//     %1 : int = prim::Constant[value=1]()
//     %a : Tensor = aten::add(%x, %x, %1)
//     %2 : int = prim::Constant[value=1]()
//     %b : Tensor = aten::add(%x, %x, %2)
//     %r : Tensor = aten::randn_like(%x, %none, %none, %f)
//     %s : Tensor = aten::randn_like(%x, %none, %none, %f)
//     %t : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %r, %s)
//     return (%t)
// Result:
//   graph(%x : Tensor, %none : NoneType, %f : bool):
//     %1 : int = prim::Constant[value=1]()
//     %a : Tensor = aten::add(%x, %x, %1)
//     %r : Tensor = aten::randn_like(%x, %none, %none, %f)
//     %s : Tensor = aten::randn_like(%x, %none, %none, %f)
//     %t : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %a, %r, %s)
//     return (%t)
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Returns whether anything was merged.
bool common_subexpression_elimination(Graph& g);

}  // namespace ampjit
