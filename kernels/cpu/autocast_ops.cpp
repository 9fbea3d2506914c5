// Kernels for the JIT autocast pass's ops (runtime/ops/autocast.def).
#include "runtime/autocast/autocast_state.h"
#include "runtime/boxing.h"
#include "runtime/dispatcher.h"

namespace ampjit {
namespace {

// self converted with the aten::to kernel of its device. The layers are skipped: the cast op
// itself went through them (the tracer records the cast op, not a nested aten::to).
Tensor convert(const Tensor& self, ScalarType to) {
  Stack s{IValue(self), IValue(to), IValue(false), IValue(false)};
  call_kernel(op_entry(OpId::to_dtype), s);
  return s[0].to_tensor();
}

bool enabled_on(const Tensor& self, bool cuda_enabled, bool cpu_enabled) {
  return self.device().is_cuda() ? cuda_enabled : self.device().is_cpu() && cpu_enabled;
}

// float32 on an enabled device -> that device's lower-precision dtype; anything else is self.
Tensor to_reduced_precision_k(const Tensor& self, bool cuda_enabled, bool cpu_enabled,
                              ScalarType cuda_dtype, ScalarType cpu_dtype) {
  if (self.dtype() != ScalarType::Float32 || !enabled_on(self, cuda_enabled, cpu_enabled))
    return self;
  return convert(self, self.device().is_cuda() ? cuda_dtype : cpu_dtype);
}

// float16 / bfloat16 on an enabled device -> float32; anything else is self.
Tensor to_full_precision_k(const Tensor& self, bool cuda_enabled, bool cpu_enabled) {
  const ScalarType dt = self.dtype();
  if ((dt != ScalarType::Float16 && dt != ScalarType::BFloat16) ||
      !enabled_on(self, cuda_enabled, cpu_enabled))
    return self;
  return convert(self, ScalarType::Float32);
}

bool is_autocast_enabled_k() {
  return is_autocast_enabled(DeviceType::CUDA);
}
bool is_autocast_cpu_enabled_k() {
  return is_autocast_enabled(DeviceType::CPU);
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(_autocast_to_reduced_precision, to_reduced_precision_k)
AMPJIT_KERNEL(_autocast_to_full_precision, to_full_precision_k)
AMPJIT_KERNEL(is_autocast_enabled, is_autocast_enabled_k)
AMPJIT_KERNEL(is_autocast_cpu_enabled, is_autocast_cpu_enabled_k)
