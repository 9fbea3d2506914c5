// Padding (runtime/ops/nn_extra.def, tensor.def): aten::pad, constant_pad_nd, and the reflect,
// replicate and circular modes, with torch 1.13's checks and messages (aten/src/ATen/native/
// PadNd.cpp, ReflectionPad.cpp, ReplicationPadding.cpp, padding.h).
//
// Note [Padding as a gather]
// Every non-constant mode maps each output position of a padded dimension to one input position:
// reflect mirrors around the edge (without repeating it), replicate clamps to it, circular wraps
// around. The dimensions are independent, so a padded tensor is one index_select per padded
// dimension, with the map computed on the host. These ops are composites: they run on every device
// that has index_select, and autograd records the index_selects, whose derivative (index_add) is
// what torch's reflection_pad*_backward kernels compute; double backward comes with it.
#include <algorithm>

#include "runtime/boxing.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"

namespace ampjit {
namespace {

using IntList = std::vector<int64_t>;

enum class PadMode { Reflect, Replicate, Circular };

// Pads dimension `dim` of x by (before, after) under `mode`: the index_select of the map.
Tensor pad_dim(const Tensor& x, int64_t dim, int64_t before, int64_t after, PadMode mode) {
  const int64_t n = x.size(dim), out = n + before + after;
  if (before == 0 && after == 0) return x;
  Tensor index = Tensor::empty(IntList{out}, ScalarType::Int64);
  int64_t* ix = index.data<int64_t>();
  for (int64_t o = 0; o < out; ++o) {
    int64_t i = o - before;
    switch (mode) {
      case PadMode::Reflect:
        if (i < 0) i = -i;
        if (i >= n) i = 2 * (n - 1) - i;
        break;
      case PadMode::Replicate:
        i = std::clamp<int64_t>(i, 0, n - 1);
        break;
      case PadMode::Circular:
        i = ((i % n) + n) % n;
        break;
    }
    ix[o] = i;
  }
  if (!x.device().is_cpu()) index = ops::to_device(index, x.device(), ScalarType::Int64);
  return ops::index_select(x, dim, index);
}

// Pads the last padding.size()/2 dimensions (padding[2k], padding[2k+1] widen dimension -1-k).
Tensor pad_dims(Tensor x, const IntList& padding, PadMode mode) {
  const int64_t k = static_cast<int64_t>(padding.size()) / 2;
  for (int64_t i = 0; i < k; ++i)
    x = pad_dim(x, x.dim() - 1 - i, padding[2 * i], padding[2 * i + 1], mode);
  return x;
}

// torch's padding::check_valid_input<dim>: the padding's length, and a (dim+1)-D input or a
// (dim+2)-D batch whose non-batch dimensions are not empty.
void check_valid_input(const Tensor& input, const IntList& padding, int64_t dim) {
  AMPJIT_CHECK(static_cast<int64_t>(padding.size()) == 2 * dim, "padding size is expected to be {}",
               2 * dim);
  const int64_t nd = input.dim();
  const bool batch = nd == dim + 2;
  bool valid = batch || nd == dim + 1;
  for (int64_t d = batch ? 1 : 0; valid && d < nd; ++d) valid = input.size(d) != 0;
  AMPJIT_CHECK(valid,
               "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other "
               "non-zero dimensions for input, but got: {}",
               dim + 1, dim + 2, input.shape_str());
}

// reflection_pad{1,2,3}d: each padding must be smaller than its dimension (the edge is not
// repeated, so a larger one would reflect past the other edge).
Tensor reflection_pad(const Tensor& self, const IntList& padding, int64_t dim) {
  check_valid_input(self, padding, dim);
  static const char* const kNames[] = {"W", "H", "D"};
  const int64_t nd = self.dim();
  for (int64_t i = 0; i < dim; ++i) {
    const int64_t d = nd - 1 - i, size = self.size(d);
    AMPJIT_CHECK(padding[2 * i] < size && padding[2 * i + 1] < size,
                 "Argument #{}: Padding size should be less than the corresponding input "
                 "dimension, but got: padding ({}, {}) at dimension {} of input {}",
                 4 + 2 * i, padding[2 * i], padding[2 * i + 1], d, self.shape_str());
    AMPJIT_CHECK(size + padding[2 * i] + padding[2 * i + 1] >= 1,
                 "input ({}: {}) is too small. Calculated output {}: {}", kNames[i], size,
                 kNames[i], size + padding[2 * i] + padding[2 * i + 1]);
  }
  return pad_dims(self, padding, PadMode::Reflect);
}

Tensor replication_pad(const Tensor& self, const IntList& padding, int64_t dim) {
  check_valid_input(self, padding, dim);
  static const char* const kNames[] = {"W", "H", "D"};
  const int64_t nd = self.dim();
  for (int64_t i = 0; i < dim; ++i) {
    const int64_t size = self.size(nd - 1 - i), out = size + padding[2 * i] + padding[2 * i + 1];
    AMPJIT_CHECK(out >= 1, "input ({}: {}) is too small. Calculated output {}: {}", kNames[i], size,
                 kNames[i], out);
  }
  return pad_dims(self, padding, PadMode::Replicate);
}

Tensor reflection_pad1d_k(const Tensor& self, IntList padding) {
  return reflection_pad(self, padding, 1);
}
Tensor reflection_pad2d_k(const Tensor& self, IntList padding) {
  return reflection_pad(self, padding, 2);
}
Tensor reflection_pad3d_k(const Tensor& self, IntList padding) {
  return reflection_pad(self, padding, 3);
}
Tensor replication_pad1d_k(const Tensor& self, IntList padding) {
  return replication_pad(self, padding, 1);
}
Tensor replication_pad2d_k(const Tensor& self, IntList padding) {
  return replication_pad(self, padding, 2);
}
Tensor replication_pad3d_k(const Tensor& self, IntList padding) {
  return replication_pad(self, padding, 3);
}

// torch's _pad_circular: the spatial dimensions (all but batch and channel) wrap around; a
// negative padding crops first, and the wrap is over what remains.
Tensor pad_circular_k(const Tensor& self, IntList pad) {
  const int64_t nd = self.dim(), ndim = nd - 2;
  AMPJIT_CHECK(static_cast<int64_t>(pad.size()) + 4 == nd * 2,
               "Invalid padding size, expected {} but got {}", ndim * 2, pad.size());
  Tensor x = self;
  IntList widen(pad.size());
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t d = nd - 1 - i, size = self.size(d);
    const int64_t l = pad[2 * i], r = pad[2 * i + 1];
    AMPJIT_CHECK(l <= size && r <= size, "Padding value causes wrapping around more than once.");
    AMPJIT_CHECK(size + l + r >= 0, "Negative padding value is resulting in an empty dimension");
    const int64_t crop_l = std::max<int64_t>(-l, 0), crop_r = std::max<int64_t>(-r, 0);
    if (crop_l || crop_r) x = ops::narrow(x, d, crop_l, size - crop_l - crop_r);
    widen[2 * i] = std::max<int64_t>(l, 0);
    widen[2 * i + 1] = std::max<int64_t>(r, 0);
  }
  return pad_dims(x, widen, PadMode::Circular);
}

// constant_pad_nd (PadNd.cpp): pad[2k] and pad[2k+1] widen dimension -1-k before and after, filled
// with `value`. Negative widths crop first, one side at a time (narrow's errors are torch's); a pad
// that only crops is a copy of the cropped input.
Tensor constant_pad_nd_k(const Tensor& s, IntList pad, const Scalar& value) {
  AMPJIT_CHECK(pad.size() % 2 == 0, "Length of pad must be even but instead it equals {}",
               pad.size());
  const int64_t nd = s.dim(), k = static_cast<int64_t>(pad.size()) / 2;
  AMPJIT_CHECK(k <= nd,
               "Length of pad should be no more than twice the number of dimensions of the input. "
               "Pad length is {}while the input has {}dimensions.",
               pad.size(), nd);
  Tensor in = s;
  bool widens = false;
  const auto crop = [&](int64_t d, int64_t start, int64_t length) {
    AMPJIT_CHECK(length >= 0, "start ({}) + length ({}) exceeds dimension size ({}).", start,
                 length, in.size(d));
    in = in.narrow(d, start, length);
  };
  for (int64_t d = nd - k; d < nd; ++d) {
    const int64_t before = pad[2 * (nd - 1 - d)], after = pad[2 * (nd - 1 - d) + 1];
    if (before < 0) crop(d, -before, in.size(d) + before);
    if (after < 0) crop(d, 0, in.size(d) + after);
    widens |= before > 0 || after > 0;
  }
  if (!widens) return in.clone();
  IntList sizes(s.sizes().begin(), s.sizes().end());
  for (int64_t d = nd - k; d < nd; ++d) {
    const int64_t before = pad[2 * (nd - 1 - d)], after = pad[2 * (nd - 1 - d) + 1];
    sizes[d] += before + after;
    AMPJIT_CHECK(sizes[d] > 0,
                 "The input size {}, plus negative padding {} and {} resulted in a negative output "
                 "size, which is invalid. Check dimension {} of your input.",
                 s.size(d), before, after, d);
  }
  Tensor result = Tensor::empty(sizes, s.dtype(), s.device());
  result.fill_(value);
  Tensor dst = result;
  for (int64_t d = nd - k; d < nd; ++d)
    dst = dst.narrow(d, std::max<int64_t>(pad[2 * (nd - 1 - d)], 0), in.size(d));
  dst.copy_(in);
  return result;
}

// F.pad (PadNd.cpp's pad and _pad_enum): the constant mode is constant_pad_nd; the others pick
// the op of the padding's rank, for an input of that rank with or without a batch dimension.
Tensor pad_k(const Tensor& self, IntList pad, std::string mode, std::optional<double> value) {
  PadMode m = PadMode::Reflect;
  if (mode == "reflect")
    m = PadMode::Reflect;
  else if (mode == "replicate")
    m = PadMode::Replicate;
  else if (mode == "circular")
    m = PadMode::Circular;
  else
    AMPJIT_CHECK_T(NotImplementedError, mode == "constant", "Unrecognised padding mode {}", mode);
  const int64_t nd = self.dim();
  AMPJIT_CHECK(pad.size() % 2 == 0, "Padding length must be divisible by 2");
  AMPJIT_CHECK(static_cast<int64_t>(pad.size()) <= nd * 2, "Padding length too large");
  if (mode == "constant") return ops::constant_pad_nd(self, pad, Scalar(value.value_or(0.0)));
  AMPJIT_CHECK(!value || *value == 0, "Padding mode \"{}\" doesn't take in value argument", mode);
  const int64_t k = static_cast<int64_t>(pad.size()) / 2;
  if (k >= 1 && k <= 3 && (nd == k + 1 || nd == k + 2)) {
    if (m == PadMode::Circular) return ops::_pad_circular(self, pad);
    if (k == 1)
      return m == PadMode::Reflect ? ops::reflection_pad1d(self, pad)
                                   : ops::replication_pad1d(self, pad);
    if (k == 2)
      return m == PadMode::Reflect ? ops::reflection_pad2d(self, pad)
                                   : ops::replication_pad2d(self, pad);
    return m == PadMode::Reflect ? ops::reflection_pad3d(self, pad)
                                 : ops::replication_pad3d(self, pad);
  }
  AMPJIT_CHECK_T(NotImplementedError, false,
                 "Only 2D, 3D, 4D, 5D padding with non-constant padding are supported for now");
  return self;
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(pad, pad_k)
AMPJIT_KERNEL(constant_pad_nd, constant_pad_nd_k)
AMPJIT_KERNEL(reflection_pad1d, reflection_pad1d_k)
AMPJIT_KERNEL(reflection_pad2d, reflection_pad2d_k)
AMPJIT_KERNEL(reflection_pad3d, reflection_pad3d_k)
AMPJIT_KERNEL(replication_pad1d, replication_pad1d_k)
AMPJIT_KERNEL(replication_pad2d, replication_pad2d_k)
AMPJIT_KERNEL(replication_pad3d, replication_pad3d_k)
AMPJIT_KERNEL(_pad_circular, pad_circular_k)
