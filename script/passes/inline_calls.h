// Inlining: replaces every prim::CallFunction by the callee's body, recursively.
//
// Given:  %y : Tensor = prim::CallFunction[value=<Function f>](%x)     with f = aten::relu(%a)
// Result: %y : Tensor = aten::relu(%x)
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Note [Interface calls]
// A call through a module attribute declared with a @torch.jit.interface type (torch's
// prim::CallMethod on an InterfaceType) is a prim::CallFunction carrying this attribute. Inlining
// leaves it, so the autocast pass meets the call as torch's does: inside an autocast region
// entered under another state than the eager one it is torch's error "Unexpected
// prim::CallMethod form with AMP & JIT".
inline const Symbol kInterfaceCall = Symbol::intern("attr::interface_call");

// Returns whether anything was inlined (interface calls are left as calls).
bool inline_calls(Graph& g);

}  // namespace ampjit
