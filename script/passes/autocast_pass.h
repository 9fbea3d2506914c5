// The JIT autocast pass: turns `with autocast(...)` regions (and the eager autocast state a graph
// is optimized under) into explicit cast ops, exactly as PyTorch 1.13's
// torch/csrc/jit/passes/autocast.cpp does (torch/csrc/jit/passes/autocast.cpp), limitations
// included.
//
// Given (inside `with torch.autocast("cpu", dtype=torch.bfloat16):`, eager autocast off):
//   %ac : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()
//    = prim::SetAttr[name="_enabled"](%ac, %true)
//    = prim::SetAttr[name="device"](%ac, %cpu)
//    = prim::SetAttr[name="fast_dtype"](%ac, %bf16)
//   %e : NoneType = prim::Enter(%ac)
//   %y : Tensor = aten::mm(%a, %b)
//   %x : NoneType = prim::Exit(%ac)
// Result: before the mm, for %a and then %b,
//   %1 : bool = prim::Constant[value=0]()            cuda_enabled
//   %2 : bool = prim::Constant[value=1]()            cpu_enabled
//   %3 : int = prim::Constant[value=5]()             cuda_dtype (float16)
//   %4 : int = prim::Constant[value=15]()            cpu_dtype (bfloat16)
//   %5 : Tensor = aten::_autocast_to_reduced_precision(%a, %1, %2, %3, %4)
//   ...
//   %y : Tensor = aten::mm(%5, %9)
//
// What it does, in torch's words and order (torch/csrc/jit/passes/autocast.cpp):
//  - Each block is walked in order with its own stack of regions; the current context is the top
//    region's, or the block's initial one. Sub-blocks (if/loop bodies) are walked after their node,
//    starting from the current context; a region opened in a block must close in it.
//  - prim::Enter on an autocast object (is_autocast_class_name) opens a region: the object
//    must come from prim::CreateObject ("Unsupported autocast syntax"), its prim::SetAttr uses
//    must set `_enabled` (a constant bool), `device` (a constant "cpu" or "cuda") and
//    `fast_dtype` (a constant, defined dtype), and the Enter's result must be unused
//    ("`with autocast() as ...`").
//    The region's context is the current one with only its device's slot replaced, so a CPU region
//    inside a CUDA region keeps CUDA enabled. prim::Exit closes it.
//  - An op on the `jit_pass` lists (data: autocast-policies.json, generated into
//    autocast_data::kJitPass) is rewritten in an enabled context, unless its schema writes an
//    argument (in-place, out=): lower_precision_fp -> _autocast_to_reduced_precision on every input
//    whose static type is Tensor; fp32 -> _autocast_to_full_precision; fp32_set_opt_dtype -> the
//    same, only when the node's `dtype` input is statically NoneType (softmax: CUDA only); promote
//    -> _autocast_to_full_precision on every tensor input when some tensor input's static dtype is
//    unknown or float32 (conservative); banned (binary_cross_entropy) -> "Unsafe to autocast".
//    Tensor[] and Optional[Tensor] inputs are never cast; an input already produced by the same
//    cast op is not cast again; a repeated input is cast once. The casts and their constant flags
//    are inserted right before the node, in input order.
//  - aten::is_autocast_enabled / is_autocast_cpu_enabled become the constant `true` where the
//    current context enables that device (else they read the eager flag at run time).
//  - prim::CallFunction (rare after inlining) in a context that is as enabled as the initial one
//    gets _autocast_to_full_precision on its tensor inputs when enabled; elsewhere torch's internal
//    asserts apply.
// Diagnostics are Error (RuntimeError) with torch's message, then the node's source location.
#pragma once
#include "runtime/autocast/autocast_state.h"
#include "runtime/ir/ir.h"

namespace ampjit {

// Rewrites `g` in place, starting every top-level node in the context `initial` (normally
// current_autocast_context(): the eager state at call time).
void autocast_pass(Graph& g, const AutocastContext& initial);

}  // namespace ampjit
