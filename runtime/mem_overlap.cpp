// Overlapping writes (Note [Overlapping writes] in mem_overlap.h).
#include "runtime/mem_overlap.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "runtime/error.h"

namespace ampjit {

bool has_internal_overlap(const TensorImpl& t) {
  for (size_t d = 0; d < t.sizes.size(); ++d)
    if (t.strides[d] == 0 && t.sizes[d] > 1) return true;
  return false;
}

bool is_non_overlapping_and_dense(const TensorImpl& t) {
  if (t.is_contiguous) return true;
  std::vector<size_t> dims(t.sizes.size());
  std::iota(dims.begin(), dims.end(), 0);
  std::sort(dims.begin(), dims.end(), [&](size_t a, size_t b) {
    if (t.sizes[a] < 2 || t.sizes[b] < 2) return t.sizes[a] < 2 && t.sizes[b] >= 2;
    return t.strides[a] < t.strides[b];
  });
  int64_t expected = 1;
  for (size_t d : dims) {
    if (t.sizes[d] == 1) continue;
    if (t.strides[d] != expected) return false;
    expected *= t.sizes[d];
  }
  return true;
}

void assert_no_internal_overlap(const TensorImpl& written) {
  AMPJIT_CHECK(!has_internal_overlap(written),
               "unsupported operation: more than one element of the written-to tensor refers to a "
               "single memory location. Please clone() the tensor before performing the "
               "operation.");
}

void assert_no_partial_overlap(const TensorImpl& written, const TensorImpl& input) {
  if (&written == &input || written.numel == 0 || input.numel == 0) return;
  if (written.storage.get() != input.storage.get()) return;
  if (!is_non_overlapping_and_dense(written) || !is_non_overlapping_and_dense(input)) return;
  const int64_t a0 = written.offset, a1 = a0 + written.numel;
  const int64_t b0 = input.offset, b1 = b0 + input.numel;
  const bool same_block = a0 == b0 && a1 == b1;
  const bool partial = same_block ? !std::equal(written.strides.begin(), written.strides.end(),
                                                input.strides.begin(), input.strides.end())
                                  : (a0 < b1 && b0 < a1);
  AMPJIT_CHECK(!partial,
               "unsupported operation: some elements of the input tensor and the written-to "
               "tensor refer to a single memory location. Please clone() the tensor before "
               "performing the operation.");
}

void assert_no_overlap(const TensorImpl& written, const TensorImpl& input) {
  if (written.numel == 0 || input.numel == 0) return;
  if (written.storage.get() != input.storage.get()) return;
  if (&written != &input &&
      (!is_non_overlapping_and_dense(written) || !is_non_overlapping_and_dense(input)))
    return;  // torch's "too hard" to tell
  const int64_t a0 = written.offset, a1 = a0 + written.numel;
  const int64_t b0 = input.offset, b1 = b0 + input.numel;
  AMPJIT_CHECK(!(a0 < b1 && b0 < a1),
               "unsupported operation: some elements of the input tensor and the written-to "
               "tensor refer to a single memory location. Please clone() the tensor before "
               "performing the operation.");
}

}  // namespace ampjit
