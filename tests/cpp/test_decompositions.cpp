// Decomposed ops (Note [Decomposed ops] in runtime/op_table.h): declared in decompositions.def,
// written in frontend/ampjit/_decompositions.py, run by their kernel on every device, with derived
// in-place and out= variants, autograd through the ops they call, and their own error classes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>

#include <string>
#include <vector>

#include "runtime/autograd/autograd.h"
#include "runtime/ops.h"
#include "script/compiler.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;

TEST(Decompositions, EveryDeclaredOpHasADefTakingItsSchemasArguments) {
  // (gtest's own check, not gmock's IsEmpty: the tests link gtest alone)
  const std::vector<std::string> problems = script::check_decompositions();
  EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
}

TEST(Decompositions, AreOpsOfTheTableThatServeEveryDevice) {
  const OpEntry* outer = find_op("aten::outer");
  ASSERT_NE(outer, nullptr);
  EXPECT_TRUE(outer->has(kDecomposed));
  EXPECT_TRUE(outer->has(kComposite));
  EXPECT_GE(static_cast<size_t>(outer->id), kNumOps);
  for (int d = 0; d < kNumDeviceTypes; ++d) EXPECT_NE(outer->kernels[d], nullptr);
  // A decomposition serves every device; a variant declared there serves where its sibling does.
  for (const OpEntry* op : ops_without_kernel(DeviceType::CUDA))
    EXPECT_FALSE(op->has(kDecomposed) && !(op->functional && !op->functional->has(kDecomposed)))
        << op->name;
}

TEST(Decompositions, RunTheirDefWithTheVariantsDerived) {
  const Tensor x = testing::random_tensor({3}, ScalarType::Float32, 1);
  const Tensor y = testing::random_tensor({4}, ScalarType::Float32, 2);
  const Tensor o = call_op("aten::outer", {IValue(x), IValue(y)});
  EXPECT_EQ(testing::values(o),
            testing::values(ops::mul(ops::unsqueeze(x, 1).tensor(), y).tensor()));
  Tensor out = ops::empty(std::vector<int64_t>{0}).tensor();
  call_op("aten::outer.out", {IValue(x), IValue(y)}, {{"out", IValue(out)}});
  EXPECT_EQ(testing::values(out), testing::values(o));  // out= resized and written
  Tensor z = x.clone();
  call_op("aten::deg2rad_", {IValue(z)});
  EXPECT_EQ(testing::values(z), testing::values(call_op("aten::deg2rad", {IValue(x)}).tensor()));
  // The in-place variant keeps its functional's checks: an integer self cannot take a float.
  Tensor i = ops::arange(3).tensor();
  EXPECT_THAT(testing::error_of([&] { call_op("aten::deg2rad_", {IValue(i)}); }),
              HasSubstr("deg2rad_: result type"));
}

TEST(Decompositions, RaiseTheirOwnErrorsWithTheClassTheDefNames) {
  const Tensor m = testing::random_tensor({2, 2}, ScalarType::Float32, 3);
  const Tensor v = testing::random_tensor({2}, ScalarType::Float32, 4);
  try {
    call_op("aten::outer", {IValue(m), IValue(v)});
    FAIL() << "no error";
  } catch (const TypeError&) {
    FAIL() << "a RuntimeError was expected";
  } catch (const Error& e) {
    EXPECT_EQ(e.message(), "outer: Expected 1-D argument self, but got 2-D");
    EXPECT_FALSE(e.range().valid());  // the user called the op, not the def
  }
}

TEST(Decompositions, DifferentiateThroughTheOpsTheyCall) {
  Tensor x = testing::random_tensor({3}, ScalarType::Float64, 5);
  autograd::set_requires_grad(x, true);
  const Tensor y = call_op("aten::square", {IValue(x)});
  autograd::backward({ops::sum(y).tensor()}, {}, std::nullopt, false);
  EXPECT_EQ(testing::values(autograd::grad(x)),
            testing::values(ops::mul_Scalar(x, Scalar(2.0)).tensor()));
  // In place, through a view: the base's history continues (CopySlices).
  Tensor w = testing::random_tensor({4}, ScalarType::Float64, 6);
  autograd::set_requires_grad(w, true);
  Tensor b = ops::mul_Scalar(w, Scalar(1.0));
  Tensor part = ops::narrow(b, 0, 0, 2);
  call_op("aten::square_", {IValue(part)});
  autograd::backward({ops::sum(b).tensor()}, {}, std::nullopt, false);
  const std::vector<double> wv = testing::values(w);
  EXPECT_EQ(testing::values(autograd::grad(w)),
            (std::vector<double>{2 * wv[0], 2 * wv[1], 1.0, 1.0}));
}

}  // namespace
}  // namespace ampjit
