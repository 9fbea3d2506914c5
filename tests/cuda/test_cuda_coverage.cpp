// Which ops the CUDA backend serves (Note [Which ops a device serves] in runtime/op_table.h),
// checked without a GPU: the backend's kernels register when it loads. The ops without a CUDA
// kernel are pinned in ops_without_cuda_kernel.txt beside this file, so a kernel added or lost is
// a deliberate change of that list; each of them raises NotImplementedError naming the op and the
// device, and every other op's CUDA kernel is found. After adding CUDA kernels, rewrite the list:
//   AMPJIT_UPDATE_PINNED=1 build/tests/test_cuda_coverage
#include <gmock/gmock.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_backend.h"
#include "runtime/op_table.h"

namespace ampjit {
namespace {

constexpr const char* kPinned = AMPJIT_SOURCE_DIR "/tests/cuda/ops_without_cuda_kernel.txt";

std::vector<std::string> pinned() {
  std::ifstream f(kPinned);
  std::vector<std::string> names;
  for (std::string line; std::getline(f, line);)
    if (!line.empty() && line[0] != '#') names.push_back(line);
  return names;
}

TEST(CudaCoverage, TheOpsWithoutACudaKernelAreThePinnedOnes) {
  cuda::init();
  std::vector<std::string> missing;
  for (const OpEntry* op : ops_without_kernel(DeviceType::CUDA)) missing.push_back(op->name);
  if (std::getenv("AMPJIT_UPDATE_PINNED")) {
    std::ofstream f(kPinned);
    f << "# The ops the CUDA backend has no kernel for (tests/cuda/test_cuda_coverage.cpp).\n";
    for (const std::string& name : missing) f << name << "\n";
  }
  const std::vector<std::string> want = pinned();
  ASSERT_FALSE(want.empty()) << "ops_without_cuda_kernel.txt is missing or empty";
  EXPECT_EQ(missing, want) << "update tests/cuda/ops_without_cuda_kernel.txt with the ops above";
}

TEST(CudaCoverage, EachMissingOpRaisesNotImplementedErrorNamingOpAndDevice) {
  cuda::init();
  const Device cuda(DeviceType::CUDA, 0);
  for (const OpEntry* op : ops_without_kernel(DeviceType::CUDA)) {
    EXPECT_THAT([&] { kernel_for(*op, cuda); },
                ::testing::ThrowsMessage<NotImplementedError>(::testing::StrEq(
                    op->name + ": no kernel for device 'cuda:0' (ampjit's cuda backend does not "
                               "implement this op)")));
  }
  size_t served = 0, device_ops = 0;
  for (const OpEntry& op : all_ops()) {
    if (op.has(kScriptOnly)) continue;
    ++device_ops;
    if (!op.kernels[static_cast<int>(DeviceType::CUDA)]) continue;
    EXPECT_EQ(kernel_for(op, cuda), op.kernels[static_cast<int>(DeviceType::CUDA)]) << op.name;
    ++served;
  }
  EXPECT_EQ(served + pinned().size(), device_ops);
}

}  // namespace
}  // namespace ampjit
