// Boxed CUDA kernels for the factories (runtime/ops/creation.def).
//  - empty, zeros, ones, full and their *_like forms need none: they are kDeviceGeneric (they only
//    allocate and fill_ through the device backend), as are the copies of runtime/ops/tensor.def.
//  - arange and eye compute their values on the host, exactly as the CPU kernels do, and copy
//    them over: one small transfer, and the values are bitwise the CPU's.
//  - rand and randn draw on the device from the CUDA generator (random.cu).
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "runtime/default_dtype.h"
#include "runtime/ops.h"
#include "runtime/random.h"

namespace ampjit::cuda {
namespace {

using OptDtype = std::optional<ScalarType>;
using OptDevice = std::optional<Device>;

// Runs the CPU kernel of `id` with its device argument set to the CPU, then moves the result to
// the device that was asked for.
template <OpId Id>
void on_host_then_copy(Stack& stack) {
  const OpEntry& op = op_entry(Id);
  const Device target = stack[op.device_arg].to_device();
  const bool requires_grad = stack.back().to_bool();
  stack[op.device_arg] = IValue(Device());
  op.kernels[static_cast<int>(DeviceType::CPU)](stack);
  const Tensor host = stack[0].to_tensor();
  Tensor out = Tensor::empty(host.sizes(), host.dtype(), target);
  out.copy_(host);
  if (requires_grad) out.set_requires_grad(true);
  stack[0] = IValue(out);
}

template <bool Normal>
Tensor random_impl(IntArrayRef size, OptDtype dt, OptDevice dev, bool rg) {
  const ScalarType type = dt.value_or(default_float_dtype());
  AMPJIT_CHECK(is_floating(type), "{}: expected a floating point dtype, got {}",
               Normal ? "randn" : "rand", dtype_name(type));
  Tensor t = Tensor::empty(size, type, dev.value_or(Device(DeviceType::CUDA)));
  DeviceGuard g(t.device());
  Generator& gen = default_generator(DeviceType::CUDA);
  uint64_t seed, offset;
  {
    std::lock_guard<std::mutex> lock(gen.mutex());
    seed = gen.seed();
    // Whole Philox blocks (four draws), two draws per float64 value.
    const uint64_t draws = static_cast<uint64_t>(t.numel()) * (type == ScalarType::Float64 ? 2 : 1);
    offset = gen.reserve((draws + 3) / 4 * 4);
  }
  if (Normal)
    launch_normal(t.raw_data(), cuda::dt(type), t.numel(), seed, offset);
  else
    launch_uniform(t.raw_data(), cuda::dt(type), t.numel(), seed, offset);
  if (rg) t.set_requires_grad(true);
  return t;
}
Tensor rand_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  return random_impl<false>(size, dt, dev, rg);
}
Tensor randn_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  return random_impl<true>(size, dt, dev, rg);
}
std::vector<int64_t> shape_of(const Tensor& s) {
  return {s.sizes().begin(), s.sizes().end()};
}
// A CUDA tensor's *_like asking for the CPU draws there, from the CPU generator.
Tensor rand_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  const OptDtype type = dt ? dt : OptDtype(s.dtype());
  if (d && d->is_cpu()) return ops::rand(shape_of(s), type, d, rg);
  return random_impl<false>(shape_of(s), type, d ? d : OptDevice(s.device()), rg);
}
Tensor randn_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  const OptDtype type = dt ? dt : OptDtype(s.dtype());
  if (d && d->is_cpu()) return ops::randn(shape_of(s), type, d, rg);
  return random_impl<true>(shape_of(s), type, d ? d : OptDevice(s.device()), rg);
}

}  // namespace

void manual_seed(int, uint64_t seed) {
  manual_seed_all(seed);
}
void manual_seed_all(uint64_t seed) {
  Generator& g = default_generator(DeviceType::CUDA);
  std::lock_guard<std::mutex> lock(g.mutex());
  g.set_seed(seed);
}

void register_creation_kernels() {
  register_kernel(OpId::arange, DeviceType::CUDA, &on_host_then_copy<OpId::arange>);
  register_kernel(OpId::arange_start, DeviceType::CUDA, &on_host_then_copy<OpId::arange_start>);
  register_kernel(OpId::arange_start_step, DeviceType::CUDA,
                  &on_host_then_copy<OpId::arange_start_step>);
  register_kernel(OpId::eye, DeviceType::CUDA, &on_host_then_copy<OpId::eye>);
  register_kernel(OpId::eye_m, DeviceType::CUDA, &on_host_then_copy<OpId::eye_m>);
  AMPJIT_CUDA_KERNEL(rand, rand_k);
  AMPJIT_CUDA_KERNEL(randn, randn_k);
  AMPJIT_CUDA_KERNEL(rand_like, rand_like_k);
  AMPJIT_CUDA_KERNEL(randn_like, randn_like_k);
}

}  // namespace ampjit::cuda
