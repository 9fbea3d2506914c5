// Inference optimization of frozen graphs (torch.jit.optimize_for_inference).
//
// Note [Inference layouts]
// oneDNN's convolutions compute in NHWC; a convolution of a row-major (NCHW) activation reorders
// it in and its result out, a fifth of a frozen resnet50's time (a quarter under autocast).
// torch's optimize_for_inference converts a frozen CNN's convolution chains to mkldnn's layout;
// channels_last_convolutions does the same with channels-last tensors (Note [Channels-last
// tensors] in runtime/layout.h), which ampjit's convolutions read and write directly:
//  - every conv2d with a constant weight gets its input through ampjit::_to_channels_last (a 4-D
//    tensor converted once, or kept when it already is; a 3-D unbatched input left as it is);
//  - the layout flows through the ops that keep it or do not care (pointwise ops, casts,
//    batch_norm, pooling, dropout, cat, permute, flatten, reshape, linear, layer_norm, the
//    shape queries anywhere), and through an If whose branches return such values or raise
//    (torchvision's stochastic_depth checks its mode so): these give the values they gave
//    before, whatever their input's strides;
//  - every other use of such a value gets it back row-major first (aten::contiguous): the
//    graph's outputs, control flow, containers, views (which may fail on other strides) and any
//    op not listed, so the graph returns and computes what it did, with the strides it had
//    (a returned tensor the original returned non-contiguous comes back contiguous).
// Graphs with fewer than three such convolutions are left alone: converting the input and the
// result costs more than one or two convolutions' reorders save (vit_b_16's patch embedding).
// Only CPU weights are converted (oneDNN's convolutions are the CPU's).
//
// Note [Fused convolutions]
// A frozen CPU conv2d whose result only a ReLU reads (besides shape queries: batch_norm's rank
// check) becomes ampjit::_conv2d_relu, which oneDNN runs with the ReLU as a post-op applied while
// the result is written: one pass over the activation fewer. The fused op has conv2d's autocast
// policy, so it runs in the dtype the convolution ran in; the ReLU then applies before the result
// is rounded rather than after, which gives the same value (rounding keeps the sign, and zero).
#pragma once
#include "runtime/ir/ir.h"

namespace ampjit {

// Returns whether anything changed (Note [Inference layouts]).
bool channels_last_convolutions(Graph& g);

// Returns whether anything changed (Note [Fused convolutions]).
bool fuse_convolution_relu(Graph& g);

// optimize_for_inference's passes on a frozen graph; returns whether anything changed.
bool optimize_frozen_graph(Graph& g);

}  // namespace ampjit
