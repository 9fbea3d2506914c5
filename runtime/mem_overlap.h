// Writes into memory that overlaps itself or an input: torch's refusals (ATen's MemoryOverlap).
//
// Note [Overlapping writes]
// An op that writes a tensor whose elements share memory (an expanded tensor: a stride 0 over a
// size > 1) would leave a result that depends on the order of the writes, and autograd could not
// say what such a write did to a view's base; torch refuses it before the kernel runs, and so does
// the dispatcher here (call_kernel) for every in-place and out= op, but those torch exempts
// (kWritesOverlap: fill_, zero_, masked_fill_, tril_, triu_, baddbmm_, embedding_renorm_). A copy
// whose source and destination partly overlap (x[1:].copy_(x[:-1])) is refused as torch refuses
// it, when both are dense (anything else is "too hard" to tell, and allowed, as in torch).
#pragma once
#include "runtime/tensor.h"

namespace ampjit {

// Some dim of size > 1 has stride 0 (torch's has_internal_overlap == YES).
bool has_internal_overlap(const TensorImpl& t);
// The elements fill a block of memory exactly once, in some order of the dims.
bool is_non_overlapping_and_dense(const TensorImpl& t);
// torch's assert_no_internal_overlap and assert_no_partial_overlap, with its messages.
void assert_no_internal_overlap(const TensorImpl& written);
void assert_no_partial_overlap(const TensorImpl& written, const TensorImpl& input);
// torch's assert_no_overlap: any shared element, the same tensor included.
void assert_no_overlap(const TensorImpl& written, const TensorImpl& input);

}  // namespace ampjit
