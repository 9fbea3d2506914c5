// ElementwiseIter construction: broadcasting, dimension coalescing and the contiguity test.
#include "kernels/cuda/tensor_iter.h"

#include "kernels/operands.h"
#include "runtime/error.h"

namespace ampjit::cuda {

#define AMPJIT_CHECK_CODE(E) \
  static_assert(static_cast<int>(ScalarType::E) == k##E, "device dtype codes out of sync: " #E);
AMPJIT_CHECK_CODE(UInt8)
AMPJIT_CHECK_CODE(Int8)
AMPJIT_CHECK_CODE(Int16)
AMPJIT_CHECK_CODE(Int32)
AMPJIT_CHECK_CODE(Int64)
AMPJIT_CHECK_CODE(Float16)
AMPJIT_CHECK_CODE(Float32)
AMPJIT_CHECK_CODE(Float64)
AMPJIT_CHECK_CODE(Bool)
AMPJIT_CHECK_CODE(BFloat16)
#undef AMPJIT_CHECK_CODE

ElementwiseIter make_iter(const Tensor& out, std::initializer_list<Tensor> ins) {
  ElementwiseIter it;
  it.nops = 1 + static_cast<int>(ins.size());
  AMPJIT_CHECK(it.nops <= kMaxOperands, "cuda: at most {} operands", kMaxOperands);
  it.numel = out.numel();
  const IntArrayRef shape = out.sizes();
  DimVector strides[kMaxOperands];
  strides[0] = kernels::broadcast_byte_strides(out, shape);
  it.data[0] = static_cast<char*>(out.raw_data());
  it.dtype[0] = dt(out.dtype());
  int k = 1;
  for (const Tensor& t : ins) {
    AMPJIT_CHECK(t.device() == out.device(), "cuda: operand on {} where {} was expected",
                 t.device().str(), out.device().str());
    strides[k] = kernels::broadcast_byte_strides(t, shape);
    it.data[k] = static_cast<char*>(t.raw_data());
    it.dtype[k] = dt(t.dtype());
    ++k;
  }
  // Coalesce from the innermost dimension outwards: drop size-1 dimensions, and merge an outer
  // dimension into the current one when every operand steps over it exactly as if the two were
  // one dimension (stride_outer == stride_inner * size_inner).
  int64_t sizes[kMaxDims * 4];
  int64_t st[kMaxOperands][kMaxDims * 4];
  int nd = 0;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    const int64_t size = shape[d];
    if (size == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int op = 0; op < it.nops && merge; ++op)
        merge = strides[op][d] == st[op][nd - 1] * sizes[nd - 1];
      if (merge) {
        sizes[nd - 1] *= size;
        continue;
      }
    }
    AMPJIT_CHECK(nd < kMaxDims,
                 "cuda: elementwise ops support at most {} dimensions that do not "
                 "coalesce, got a tensor of shape {}",
                 kMaxDims, shape_str(shape));
    sizes[nd] = size;
    for (int op = 0; op < it.nops; ++op) st[op][nd] = strides[op][d];
    ++nd;
  }
  // Store innermost last.
  it.ndim = nd;
  for (int i = 0; i < nd; ++i) {
    it.sizes[i] = sizes[nd - 1 - i];
    for (int op = 0; op < it.nops; ++op) it.strides[op][i] = st[op][nd - 1 - i];
  }
  it.contiguous = nd <= 1;
  for (int op = 0; op < it.nops && it.contiguous; ++op) {
    const int64_t isz = static_cast<int64_t>(itemsize(static_cast<ScalarType>(it.dtype[op])));
    it.contiguous = nd == 0 || it.strides[op][0] == isz;
  }
  return it;
}

Tensor on_device(const Tensor& t, Device device) {
  if (t.device() == device) return t;
  AMPJIT_CHECK(t.device().is_cpu() && t.dim() == 0,
               "Expected all tensors to be on the same device, but found at least two devices, {} "
               "and {}!",
               device.str(), t.device().str());
  // Its one value becomes a fill kernel's argument: queued like any kernel, where a copy from
  // pageable host memory would wait for the device.
  Tensor d = Tensor::empty(IntArrayRef{}, t.dtype(), device);
  d.fill_(t.item());
  d.impl()->is_wrapped_number = t.impl()->is_wrapped_number;
  return d;
}

Device device_of(std::initializer_list<Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined() && t.device().is_cuda()) return t.device();
  return Device(DeviceType::CUDA, 0);
}

}  // namespace ampjit::cuda
