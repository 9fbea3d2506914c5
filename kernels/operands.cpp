// Operand handling shared by every backend (see operands.h).
#include "kernels/operands.h"

#include "runtime/error.h"
#include "runtime/type_promotion.h"

namespace ampjit::kernels {

DimVector broadcast_byte_strides(const Tensor& t, IntArrayRef shape) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  const int64_t td = t.dim();
  DimVector out(shape.size(), 0);
  const int64_t isz = static_cast<int64_t>(t.itemsize());
  for (int64_t i = 0; i < td; ++i) {
    const int64_t od = nd - td + i;
    out[od] = t.sizes()[i] == 1 && shape[od] != 1 ? 0 : t.strides()[i] * isz;
  }
  return out;
}

DimVector broadcast_all(std::span<const Tensor> ts, const char* op) {
  DimVector shape;
  bool first = true;
  for (const Tensor& t : ts) {
    if (first) {
      shape = DimVector(t.sizes());
      first = false;
    } else {
      shape = broadcast_shapes(shape, t.sizes(), op);
    }
  }
  return shape;
}

void resize_out(Tensor& out, IntArrayRef sizes) {
  TensorImpl* impl = out.impl();
  if (impl->sizes.size() == sizes.size() &&
      std::equal(sizes.begin(), sizes.end(), impl->sizes.begin()))
    return;
  const int64_t n = numel_of(sizes);
  if (n * static_cast<int64_t>(out.itemsize()) +
          impl->offset * static_cast<int64_t>(out.itemsize()) >
      static_cast<int64_t>(impl->storage->nbytes())) {
    impl->storage = Storage::allocate(static_cast<size_t>(n) * out.itemsize(), impl->device);
    impl->offset = 0;
  }
  impl->sizes = DimVector(sizes);
  impl->strides = contiguous_strides(sizes);
  impl->refresh();
}

Tensor& write_result(Tensor& out, const Tensor& result, const char* op, bool inplace) {
  AMPJIT_CHECK(can_cast(result.dtype(), out.dtype()),
               "{}: result type {} can't be cast to the desired output type {}", op,
               dtype_name(result.dtype()), dtype_name(out.dtype()));
  const bool same_shape =
      out.dim() == result.dim() &&
      std::equal(out.sizes().begin(), out.sizes().end(), result.sizes().begin());
  if (!same_shape) {
    AMPJIT_CHECK(!inplace, "{}: output with shape {} doesn't match the broadcast shape {}", op,
                 out.shape_str(), result.shape_str());
    resize_out(out, result.sizes());
  }
  out.copy_(result);
  return out;
}

}  // namespace ampjit::kernels
