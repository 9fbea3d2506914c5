// The runtime's device-backend seam (runtime/tensor.h DeviceBackend, Storage's device allocator)
// without a GPU: a fake "cuda" device whose bytes live in host memory, installed by the fixture,
// checks what the runtime asks of a backend (allocation, copies in both directions with
// broadcasting and conversion, fills, reads back for item()), the device-generic conversions
// (to_device, to_other, clone on a device tensor), the dispatcher's mixed-device error, and the
// clear errors where no backend is installed. The CUDA backend's own kernels are tested against
// the CPU kernels in tests/cuda/ on a GPU.
#include <gmock/gmock.h>

#include <cstdlib>

#include "runtime/ops.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using V = std::vector<int64_t>;
const Device kCuda(DeviceType::CUDA, 0);

struct Calls {
  int allocs = 0, frees = 0, copies = 0, fills = 0;
  std::vector<std::pair<Device, Device>> copy_devices;  // (dst, src)
  std::vector<V> copy_src_shapes;
};
Calls g_calls;

// A view of `t`'s memory that says it is on the CPU (the fake device's bytes are host bytes).
Tensor host_alias(const Tensor& t) {
  Tensor v = Tensor::make_view(t, t.sizes(), t.strides(), t.storage_offset());
  v.impl()->device = Device();
  return v;
}

void* fake_alloc(size_t n, Device) {
  ++g_calls.allocs;
  return std::malloc(n ? n : 1);
}
void fake_free(void* p, Device) {
  ++g_calls.frees;
  std::free(p);
}
void fake_copy(const Tensor& dst, const Tensor& src) {
  ++g_calls.copies;
  g_calls.copy_devices.emplace_back(dst.device(), src.device());
  g_calls.copy_src_shapes.emplace_back(src.sizes().begin(), src.sizes().end());
  host_alias(dst).copy_(host_alias(src));
}
void fake_fill(const Tensor& dst, const Scalar& v) {
  ++g_calls.fills;
  host_alias(dst).fill_(v);
}

class DeviceBackendSeam : public ::testing::Test {
 protected:
  void SetUp() override {
    g_calls = {};
    Storage::set_device_allocator(DeviceType::CUDA, {fake_alloc, fake_free});
    set_device_backend(DeviceType::CUDA, DeviceBackend{fake_copy, fake_fill});
  }
  void TearDown() override {
    set_device_backend(DeviceType::CUDA, DeviceBackend{});
    Storage::set_device_allocator(DeviceType::CUDA, {nullptr, nullptr});
  }
};

Tensor on_device(const Tensor& cpu) {
  Tensor d = Tensor::empty(cpu.sizes(), cpu.dtype(), kCuda);
  d.copy_(cpu);
  return d;
}

TEST_F(DeviceBackendSeam, AllocationAndReleaseGoThroughTheDeviceAllocator) {
  {
    Tensor t = Tensor::empty(V{2, 3}, ScalarType::Float32, Device(DeviceType::CUDA));
    EXPECT_EQ(t.device(), kCuda);  // "cuda" without an index is device 0
    EXPECT_EQ(g_calls.allocs, 1);
  }
  EXPECT_EQ(g_calls.frees, 1);
}

TEST_F(DeviceBackendSeam, CopiesInBothDirectionsRoundTrip) {
  const Tensor x = testing::random_tensor({3, 4}, ScalarType::Float32, 1);
  Tensor d = on_device(x);
  ASSERT_EQ(g_calls.copies, 1);
  EXPECT_EQ(g_calls.copy_devices[0], std::make_pair(kCuda, Device()));
  // to_double_vector reads back through a device -> host copy.
  EXPECT_EQ(d.to_double_vector(), x.to_double_vector());
  EXPECT_EQ(g_calls.copy_devices.back(), std::make_pair(Device(), kCuda));
  EXPECT_EQ(on_device(x.select(0, 1).select(0, 2)).item().to_double(),
            x.select(0, 1).select(0, 2).item().to_double());
}

TEST_F(DeviceBackendSeam, CopyBroadcastsTheSourceBeforeTheBackendSeesIt) {
  Tensor d = Tensor::empty(V{3, 4}, ScalarType::Float32, kCuda);
  d.copy_(testing::random_tensor({4}, ScalarType::Float32, 2));
  ASSERT_EQ(g_calls.copy_src_shapes.size(), 1u);
  EXPECT_EQ(g_calls.copy_src_shapes[0], (V{3, 4}));
}

TEST_F(DeviceBackendSeam, EmptyCopiesAndFillsNeverReachTheBackend) {
  Tensor d = Tensor::empty(V{0, 4}, ScalarType::Float32, kCuda);
  d.copy_(Tensor::empty(V{0, 4}, ScalarType::Float32));
  d.fill_(Scalar(1.0));
  EXPECT_EQ(g_calls.copies, 0);
  EXPECT_EQ(g_calls.fills, 0);
}

TEST_F(DeviceBackendSeam, FillAndConversionsOnADeviceTensor) {
  Tensor d = Tensor::empty(V{5}, ScalarType::Float32, kCuda);
  d.fill_(Scalar(2.5));
  EXPECT_EQ(g_calls.fills, 1);
  Tensor h = d.to(ScalarType::Float16);  // allocated on the device, converted by the backend
  EXPECT_EQ(h.device(), kCuda);
  EXPECT_EQ(h.dtype(), ScalarType::Float16);
  EXPECT_EQ(h.to_double_vector(), std::vector<double>(5, 2.5));
  Tensor c = Tensor(ops::clone(d));
  EXPECT_EQ(c.device(), kCuda);
  EXPECT_FALSE(c.is_same(d));
}

TEST_F(DeviceBackendSeam, ToDeviceCopiesOnlyAcrossDevices) {
  const Tensor x = testing::random_tensor({2, 2}, ScalarType::Float32, 3);
  Tensor d = ops::to_device(x, Device(DeviceType::CUDA), std::nullopt, false, false);
  EXPECT_EQ(d.device(), kCuda);
  EXPECT_EQ(d.to_double_vector(), x.to_double_vector());
  // Already there ("cuda" and "cuda:0" alike): the tensor itself, unless a copy is asked for.
  EXPECT_TRUE(
      Tensor(ops::to_device(d, Device(DeviceType::CUDA), std::nullopt, false, false)).is_same(d));
  EXPECT_TRUE(Tensor(ops::to_device(d, kCuda, std::nullopt, false, false)).is_same(d));
  EXPECT_FALSE(Tensor(ops::to_device(d, kCuda, std::nullopt, false, true)).is_same(d));
  // With a dtype: converted on the way.
  Tensor back = ops::to_device(d, Device(), ScalarType::Float64, false, false);
  EXPECT_EQ(back.device(), Device());
  EXPECT_EQ(back.dtype(), ScalarType::Float64);
  EXPECT_EQ(back.to_double_vector(), x.to(ScalarType::Float64).to_double_vector());
  Tensor other = ops::to_other(x, d, false, false);
  EXPECT_EQ(other.device(), kCuda);
}

TEST_F(DeviceBackendSeam, MixedDeviceOperandsNameBothDevices) {
  const Tensor c = testing::random_tensor({2, 2}, ScalarType::Float32, 4);
  const Tensor d = on_device(c);
  EXPECT_THAT([&] { ops::add(c, d); },
              ::testing::ThrowsMessage<Error>(::testing::StrEq(
                  "aten::add.Tensor: Expected all tensors to be on the same device, but found at "
                  "least two devices, cpu and cuda:0!")));
  EXPECT_THAT([&] { ops::add(d, c); },
              ::testing::ThrowsMessage<Error>(HasSubstr("at least two devices, cuda:0 and cpu!")));
  // A 0-dim CPU tensor may join device tensors: the call reaches the (here missing) device kernel.
  const Tensor scalar = testing::random_tensor({}, ScalarType::Float32, 5);
  EXPECT_THAT([&] { ops::add(d, scalar); },
              ::testing::ThrowsMessage<NotImplementedError>(
                  HasSubstr("aten::add.Tensor: no kernel for device 'cuda:0'")));
}

TEST(DeviceBackendMissing, ClearErrorsAndNoStateChanged) {
  const Tensor x = testing::random_tensor({2}, ScalarType::Float32, 6);
  EXPECT_THAT([&] { Tensor::empty(V{2}, ScalarType::Float32, kCuda); },
              ::testing::ThrowsMessage<Error>(::testing::StrEq(
                  "device cuda:0 is not available: ampjit was built without its backend")));
  EXPECT_THAT([&] { ops::to_device(x, kCuda, std::nullopt, false, false); },
              ::testing::ThrowsMessage<Error>(HasSubstr("device cuda:0 is not available")));
  // Factories are device-generic: they reach the allocator, which says the device is missing.
  EXPECT_THAT([&] { ops::zeros(V{2}, std::nullopt, kCuda, false); },
              ::testing::ThrowsMessage<Error>(HasSubstr("device cuda:0 is not available")));
  // An op that computes has no CUDA kernel in a build without the backend.
  EXPECT_THAT([&] { ops::rand(V{2}, std::nullopt, kCuda, false); },
              ::testing::ThrowsMessage<NotImplementedError>(HasSubstr(
                  "aten::rand: no kernel for device 'cuda:0' (ampjit was built without its cuda "
                  "backend)")));
  EXPECT_EQ(x.to_double_vector(),
            testing::random_tensor({2}, ScalarType::Float32, 6).to_double_vector());
}

}  // namespace
}  // namespace ampjit
