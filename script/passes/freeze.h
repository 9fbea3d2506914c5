// Freezing (torch.jit.freeze) and the folding it enables.
//
// Note [Freezing]
// A frozen module's forward no longer reads its attributes at each call: freeze_graph copies the
// forward graph (calls inlined), and every prim::GetAttr chain from `self` that ends in a
// parameter, buffer or plain value becomes a constant holding a copy of that value as it is now
// (tensors cloned: a frozen module does not see later changes to the original, as torch's). An
// attribute the graph assigns (prim::SetAttr) or the caller preserves stays an attribute. Then:
//  - constant propagation folds tensor ops whose tensor inputs are all constants (x.t() of a
//    weight, the casts below), where no write reaches a constant (Note [Writes to constants] in
//    constant_propagation.cpp: an in-place op on a fresh result, as resnet's ReLUs, does not);
//  - fold_conv_batch_norm merges an eval-mode batch_norm into the convolution before it;
//  - common subexpressions and dead code go;
//  - where no write reaches them, the constants' storages are marked frozen, so that kernels may
//    keep data derived from them (Note [Frozen storage] in runtime/tensor.h: pre-packed weights).
// When the frozen function later runs under an autocast state, the JIT autocast pass casts the
// constant weights and the pipeline folds those casts too (Note [Function specialization]): the
// weights are cast once per specialization, not on every call as in a scripted module (torch casts
// them every call inside scripted regions).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/autocast/autocast_state.h"
#include "runtime/ir/ir.h"
#include "runtime/ivalue.h"

namespace ampjit {

// The frozen graph of `forward` (a module method's graph, `self` its first input) for the module
// object `self`; `preserved` names attributes left as attributes. With `autocast` (torchscript
// semantics, the JIT autocast pass on), the pass runs under that eager state as torch's freezing
// runs it, so `with autocast()` regions show their casts in the frozen graph and the casts of
// constant weights fold there once.
std::shared_ptr<Graph> freeze_graph(const Graph& forward, const IValue& self,
                                    const std::vector<std::string>& preserved = {},
                                    const AutocastContext* autocast = nullptr);

// conv1d/2d/3d (constant weight and bias) followed only by an eval-mode batch_norm with constant
// parameters becomes one convolution with scaled weights and a new bias, computed in the weight's
// dtype as torch's fold does. Returns whether anything changed.
bool fold_conv_batch_norm(Graph& g);

// Whether the graph holds a tensor constant (a frozen graph does).
bool has_tensor_constants(const Graph& g);

}  // namespace ampjit
