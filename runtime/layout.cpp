// Channels-last tensors (Note [Channels-last tensors] in layout.h).
#include "runtime/layout.h"

#include <algorithm>

namespace ampjit {

namespace {
// The strides of a new channels-last tensor of NCHW `sizes` (size-1 dims included, as torch's).
DimVector channels_last_strides(IntArrayRef sizes) {
  const int64_t c = sizes[1], h = sizes[2], w = sizes[3];
  return DimVector({h * w * c, int64_t{1}, w * c, c});
}

bool strides_are_channels_last(const Tensor& t) {
  if (t.dim() != 4) return false;
  int64_t expected = 1;
  for (int d : {1, 3, 2, 0}) {
    if (t.size(d) != 1) {
      if (t.stride(d) != expected) return false;
      expected *= t.size(d);
    }
  }
  return true;
}
}  // namespace

bool is_channels_last(const Tensor& t) {
  return t.dim() == 4 && !t.is_contiguous() && strides_are_channels_last(t);
}

bool is_channels_last_contiguous(const Tensor& t) {
  return strides_are_channels_last(t);
}

Tensor empty_channels_last(IntArrayRef sizes, ScalarType dtype, Device device) {
  Tensor out = Tensor::empty(sizes, dtype, device);  // the same bytes; channels-last strides
  TensorImpl& impl = *out.impl();
  impl.strides = channels_last_strides(sizes);
  impl.refresh();
  return out;
}

Tensor empty_in_layout_of(const Tensor& like, IntArrayRef sizes, ScalarType dtype) {
  if (is_channels_last(like) &&
      std::equal(sizes.begin(), sizes.end(), like.sizes().begin(), like.sizes().end()))
    return empty_channels_last(sizes, dtype, like.device());
  return Tensor::empty(sizes, dtype, like.device());
}

Tensor to_channels_last(const Tensor& t) {
  if (t.dim() != 4) return t;
  const DimVector want = channels_last_strides(t.sizes());
  if (std::equal(want.begin(), want.end(), t.strides().begin())) return t;
  Tensor out = empty_channels_last(t.sizes(), t.dtype(), t.device());
  out.copy_(t);
  return out;
}

}  // namespace ampjit
