// In-place views and resizes (runtime/ops/tensor.def): t_, transpose_, squeeze_, unsqueeze_ and
// as_strided_ give self the sizes, strides and offset of the view the out-of-place op returns,
// keeping its storage and data; resize_ and resize_as_ give it a contiguous shape, growing the
// storage when it is too small (the elements kept are the leading ones, the new ones are
// uninitialized, as torch's); requires_grad_ sets the flag with torch's checks. These touch
// metadata only, on any device (kComposite).
#include "kernels/operands.h"
#include "runtime/autograd/autograd.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

Tensor take_view(Tensor self, const Tensor& view) {
  TensorImpl* impl = self.impl();
  impl->sizes = DimVector(view.sizes());
  impl->strides = DimVector(view.strides());
  impl->offset = view.storage_offset();
  impl->refresh();
  return self;
}

Tensor t_k(Tensor self) {
  return take_view(self, self.t());
}
Tensor transpose_k(Tensor self, int64_t d0, int64_t d1) {
  return take_view(self, self.transpose(d0, d1));
}
Tensor squeeze_k(Tensor self) {
  return take_view(self, self.squeeze());
}
Tensor squeeze_dim_k(Tensor self, int64_t dim) {
  return take_view(self, self.squeeze(dim));
}
Tensor unsqueeze_k(Tensor self, int64_t dim) {
  return take_view(self, self.unsqueeze(dim));
}
Tensor as_strided_k(Tensor self, std::vector<int64_t> size, std::vector<int64_t> stride,
                    std::optional<int64_t> offset) {
  return take_view(self, self.as_strided(size, stride, offset.value_or(self.storage_offset())));
}

// Grows the storage keeping its bytes (resize_out allocates afresh when it must).
Tensor resize_k(Tensor self, std::vector<int64_t> size, std::optional<int64_t> /*memory_format*/) {
  for (int64_t s : size)
    AMPJIT_CHECK(s >= 0, "Trying to create tensor with negative dimension {}: {}", s,
                 shape_str(size));
  const int64_t need =
      (numel_of(size) + self.storage_offset()) * static_cast<int64_t>(self.itemsize());
  TensorImpl* impl = self.impl();
  if (need > static_cast<int64_t>(impl->storage->nbytes())) {
    Ref<Storage> grown = Storage::allocate(static_cast<size_t>(need), impl->device);
    Tensor old = Tensor::make_view(
        self, std::vector<int64_t>{static_cast<int64_t>(impl->storage->nbytes() / self.itemsize())},
        std::vector<int64_t>{1}, 0);
    impl->storage = grown;
    Tensor fresh = Tensor::make_view(self, old.sizes(), std::vector<int64_t>{1}, 0);
    fresh.copy_(old);
  }
  impl->sizes = DimVector(size);
  impl->strides = contiguous_strides(size);
  impl->refresh();
  return self;
}
Tensor resize_as_k(Tensor self, const Tensor& the_template, std::optional<int64_t> memory_format) {
  return resize_k(self, {the_template.sizes().begin(), the_template.sizes().end()}, memory_format);
}

Tensor requires_grad_k(Tensor self, bool requires_grad) {
  autograd::set_requires_grad(self, requires_grad);
  return self;
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(t_, cpu::t_k)
AMPJIT_KERNEL(transpose_, cpu::transpose_k)
AMPJIT_KERNEL(squeeze_, cpu::squeeze_k)
AMPJIT_KERNEL(squeeze__dim, cpu::squeeze_dim_k)
AMPJIT_KERNEL(unsqueeze_, cpu::unsqueeze_k)
AMPJIT_KERNEL(as_strided_, cpu::as_strided_k)
AMPJIT_KERNEL(resize_, cpu::resize_k)
AMPJIT_KERNEL(resize_as_, cpu::resize_as_k)
AMPJIT_KERNEL(requires_grad_, cpu::requires_grad_k)
