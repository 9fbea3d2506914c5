// Constant propagation: evaluates what the graph's constants already decide.
//  - An op whose inputs are all prim::Constant and whose results are not tensors (ints, floats,
//    bools, strings, None, lists and tuples of them) runs once, through the dispatcher, and its
//    results become constants. Ops with side effects (Note [Side effects] in
//    dead_code_elimination.h) never run. A tensor constant may be an input only when no write in
//    the graph can reach a constant (Note [Writes to constants] in constant_propagation.cpp).
//    An op that raises while folding stays, so the error comes at run time with its location.
//  - prim::If with a constant condition becomes the nodes of the branch it takes.
//  - prim::Loop that never runs (constant trip count <= 0, or constant false initial condition)
//    becomes its initial carried values.
//  - prim::TupleIndex with a constant index, and prim::TupleUnpack, of a prim::TupleConstruct
//    forward the element.
//  - aten::__is__ / aten::__isnot__ are decided when one side is always None and the other is
//    always None or never None (by type).
// Results are not tensors (unless fold_tensors, below, where no write reaches a constant), so
// folding never shares a mutable tensor between runs. Constants that become unused stay: run
// dead_code_elimination afterwards (and common_subexpression_elimination to pool the new
// constants).
//
// Given:
//   graph(%x : Tensor):
//     %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
//     %f : bool = prim::Constant[value=0]()
//     %d : int = aten::dim(%c)
//     %y : Tensor = prim::If(%f)
//       block0():
//         -> (%x)
//       block1():
//         %n : Tensor = aten::neg(%x)
//         -> (%n)
//     return (%y, %d)
// Result:
//   graph(%x : Tensor):
//     %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
//     %f : bool = prim::Constant[value=0]()
//     %0 : int = prim::Constant[value=2]()
//     %n : Tensor = aten::neg(%x)
//     return (%n, %0)
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Returns whether the graph changed. With `fold_tensors` (freezing, and frozen graphs after the
// autocast pass: Note [Freezing] in freeze.h), an op with at least one tensor constant input and
// all inputs constant is folded even when its results are tensors, provided no write of the graph
// reaches a constant; factories (no tensor input) and random ops never are. A tensor result folded
// from frozen constants only is frozen (Note [Frozen storage] in runtime/tensor.h).
bool constant_propagation(Graph& g, bool fold_tensors);
// Whether a node of `g` may write a value that may alias a tensor constant, or `g` returns one
// (Note [Writes to constants] in constant_propagation.cpp).
bool constants_may_change(const Graph& g);
inline bool constant_propagation(Graph& g) {
  return constant_propagation(g, false);
}

}  // namespace ampjit
