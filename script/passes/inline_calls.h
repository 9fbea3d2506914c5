// Inlining: replaces every prim::CallFunction by the callee's body, recursively.
//
// Given:  %y : Tensor = prim::CallFunction[value=<Function f>](%x)     with f = aten::relu(%a)
// Result: %y : Tensor = aten::relu(%x)
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Returns whether anything was inlined.
bool inline_calls(Graph& g);

}  // namespace ampjit
