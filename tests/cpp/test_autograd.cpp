// Autograd from C++ (runtime/autograd): the engine, saved-tensor checks, hooks, the derivatives
// table, autocast in backward and threads. The Python tests compare each op with torch 1.13.
#include <gmock/gmock.h>

#include <set>
#include <thread>

#include "runtime/autocast/autocast_state.h"
#include "runtime/autograd/autograd.h"
#include "runtime/autograd/derivatives.h"
#include "runtime/grad_mode.h"
#include "runtime/ops.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using V = std::vector<int64_t>;

Tensor from_values(const std::vector<double>& values, V shape) {
  Tensor t = Tensor::empty(shape, ScalarType::Float32);
  for (size_t i = 0; i < values.size(); ++i) t.data<float>()[i] = static_cast<float>(values[i]);
  return t;
}

Tensor leaf(std::vector<double> values, V shape) {
  Tensor t = from_values(values, shape);
  autograd::set_requires_grad(t, true);
  return t;
}

std::vector<double> grad_of(const Tensor& t) {
  return testing::values(autograd::grad(t));
}

TEST(Autograd, RecordsOpsAndAccumulatesIntoLeaves) {
  Tensor x = leaf({1, 2, 3}, V{3});
  Tensor y = ops::mul(x, x);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  EXPECT_EQ(autograd::grad_fn(y)->name(), "MulBackward0");
  Tensor loss = ops::sum(y);
  autograd::backward({loss}, {}, /*retain_graph=*/true, false);
  EXPECT_EQ(grad_of(x), (std::vector<double>{2, 4, 6}));
  autograd::backward({loss}, {}, std::nullopt, false);  // accumulates
  EXPECT_EQ(grad_of(x), (std::vector<double>{4, 8, 12}));
  EXPECT_THAT(
      [&] { autograd::backward({loss}, {}, std::nullopt, false); },
      ::testing::ThrowsMessage<Error>(HasSubstr("backward through the graph a second time")));
}

TEST(Autograd, GradModeAndNonScalarRoots) {
  Tensor x = leaf({1, 2}, V{2});
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(Tensor(ops::mul(x, x)).requires_grad());
  }
  Tensor y = ops::mul_Scalar(x, 3.0);
  EXPECT_THAT([&] { autograd::backward({y}, {}, std::nullopt, false); },
              ::testing::ThrowsMessage<Error>(
                  HasSubstr("grad can be implicitly created only for scalar outputs")));
  autograd::backward({y}, {from_values({1, 10}, V{2})}, std::nullopt, false);
  EXPECT_EQ(grad_of(x), (std::vector<double>{3, 30}));
}

TEST(Autograd, SavedTensorModifiedInPlaceIsRefusedWithTorchsMessage) {
  Tensor x = leaf({1, -2, 3, 4}, V{2, 2});
  Tensor y = ops::relu(ops::mul_Scalar(x, 1.0));
  Tensor z = ops::sigmoid(y);
  ops::add__Scalar(y, 1.0);
  EXPECT_THAT([&] { autograd::backward({ops::sum(z)}, {}, std::nullopt, false); },
              ::testing::ThrowsMessage<Error>(::testing::StrEq(
                  "one of the variables needed for gradient computation has been modified by an "
                  "inplace operation: [torch.FloatTensor [2, 2]], which is output 0 of "
                  "ReluBackward0, is at version 1; expected version 0 instead. Hint: enable "
                  "anomaly detection to find the operation that failed to compute its gradient, "
                  "with torch.autograd.set_detect_anomaly(True).")));
  EXPECT_THAT([&] { ops::add__Scalar(x, 1.0); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a leaf Variable that requires grad")));
}

TEST(Autograd, GradWithCreateGraphGivesSecondDerivatives) {
  Tensor x = leaf({0.5, 2.0}, V{2});
  Tensor y = ops::sum(ops::mul(ops::mul(x, x), x));  // sum x^3
  std::vector<Tensor> g = autograd::grad({y}, {}, {x}, std::nullopt, /*create_graph=*/true, false);
  EXPECT_TRUE(g[0].requires_grad());
  EXPECT_EQ(testing::values(g[0]), (std::vector<double>{0.75, 12.0}));  // 3x^2
  std::vector<Tensor> gg = autograd::grad({ops::sum(g[0])}, {}, {x}, std::nullopt, false, false);
  EXPECT_EQ(testing::values(gg[0]), (std::vector<double>{3.0, 12.0}));  // 6x
  EXPECT_FALSE(autograd::grad(x).defined());                            // grad() leaves .grad alone
}

TEST(Autograd, HooksSeeAndReplaceGradients) {
  Tensor x = leaf({1, 2}, V{2});
  Tensor y = ops::mul_Scalar(x, 2.0);
  std::vector<double> seen;
  autograd::register_hook(x, [&](const Tensor& g) {
    seen = testing::values(g);
    return Tensor();
  });
  autograd::HookHandle h =
      autograd::register_hook(y, [](const Tensor& g) { return Tensor(ops::mul_Scalar(g, 10.0)); });
  autograd::backward({ops::sum(y)}, {}, true, false);
  EXPECT_EQ(seen, (std::vector<double>{20, 20}));
  h.remove();
  autograd::backward({ops::sum(y)}, {}, std::nullopt, false);
  EXPECT_EQ(seen, (std::vector<double>{2, 2}));
  EXPECT_EQ(grad_of(x), (std::vector<double>{22, 22}));
}

TEST(Autograd, BroadcastGradientsAreSummedBackToTheInputsShape) {
  Tensor a = leaf({1, 2, 3, 4, 5, 6}, V{2, 3});
  Tensor b = leaf({10, 20, 30}, V{3});
  autograd::backward({ops::sum(ops::mul(a, b))}, {}, std::nullopt, false);
  EXPECT_EQ(grad_of(b), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(grad_of(a), (std::vector<double>{10, 20, 30, 10, 20, 30}));
}

TEST(Autograd, AutocastBackwardGivesFloat32GradientsToFloat32Weights) {
  Tensor w = leaf({0.5, -1, 2, 0.25}, V{2, 2});
  Tensor x = from_values({1, 2, 3, 4}, V{2, 2});
  Tensor out;
  {
    AutocastGuard ac(DeviceType::CPU);
    out = ops::mm(x, w);
    EXPECT_EQ(out.dtype(), ScalarType::BFloat16);
  }
  autograd::backward({ops::sum(out)}, {}, std::nullopt, false);
  EXPECT_EQ(autograd::grad(w).dtype(), ScalarType::Float32);
  EXPECT_EQ(grad_of(w), (std::vector<double>{4, 4, 6, 6}));  // x^T @ ones, exact in bfloat16
}

TEST(Autograd, OpsWithoutADerivativeRaiseWhenReached) {
  Tensor x = leaf({1, 2, 3, 4}, V{2, 2});
  Tensor d = ops::remainder_Scalar_Tensor(Scalar(2.0), x);  // torch 1.13 has no derivative either
  EXPECT_TRUE(d.requires_grad());
  EXPECT_THAT([&] { autograd::backward({ops::sum(d)}, {}, std::nullopt, false); },
              ::testing::ThrowsMessage<NotImplementedError>(
                  ::testing::StrEq("the derivative for 'aten::remainder' is not implemented.")));
}

TEST(Autograd, EveryDeclarationNamesAnOpOnce) {
  std::set<std::string> names;
  for (const OpEntry* op : autograd::ops_with_derivatives())
    EXPECT_TRUE(names.insert(op->name).second) << op->name << " is declared twice";
  EXPECT_GT(names.size(), 140u);
}

TEST(Autograd, ThreadsAccumulateIntoASharedLeaf) {
  Tensor w = leaf({1, 1, 1}, V{3});
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        autograd::backward({ops::sum(ops::mul_Scalar(w, 2.0))}, {}, std::nullopt, false);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(grad_of(w), (std::vector<double>{400, 400, 400}));
}

// Threads that find one view stale at once (its base was written in place) derive its grad_fn
// once, and every thread's gradient goes through the base's new history.
TEST(Autograd, ThreadsShareAViewWhoseBaseChanged) {
  Tensor w = leaf({1, 1, 1, 1}, V{4});
  Tensor base = ops::mul_Scalar(w, 1.0);
  Tensor view = ops::slice(base, 0, 0, 2, 1);
  ops::mul__Scalar(base, 3.0);  // the view now reads 3 * w[:2]
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 25; ++i)
        autograd::backward({ops::sum(ops::mul_Scalar(view, 2.0))}, {}, /*retain_graph=*/true,
                           false);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(grad_of(w), (std::vector<double>{600, 600, 0, 0}));
}

// Note [Views and in-place changes]: an in-place op through a view rewrites its base's history.
TEST(Autograd, InPlaceChangesThroughViewsReachTheBase) {
  Tensor w = leaf({1, 2, 3, 4, 5, 6}, V{6});
  Tensor base = ops::mul_Scalar(w, 1.0);
  Tensor x = ops::view(base, V{2, 3});
  Tensor column = ops::select(x, 1, 1);  // x[:, 1]
  ops::mul__Scalar(column, 3.0);
  EXPECT_EQ(autograd::grad_fn(base)->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(autograd::grad_fn(x)->name(), "AsStridedBackward0");  // views read the base now
  EXPECT_EQ(autograd::grad_fn(column)->name(), "AsStridedBackward0");
  autograd::backward({ops::sum(ops::mul(x, x))}, {}, std::nullopt, false);
  // d/dw of sum(x^2) with x[:, 1] tripled: 2w, and 18w on the column
  EXPECT_EQ(grad_of(w), (std::vector<double>{2, 36, 6, 8, 90, 12}));
  // a zero tensor that a copy makes require grad
  Tensor y = leaf({7, 8}, V{2});
  Tensor z = ops::zeros(V{2, 2}, ScalarType::Float32);
  ops::copy_(ops::select(z, 0, 1), y);
  EXPECT_TRUE(z.requires_grad());
  autograd::backward({ops::sum(z)}, {}, std::nullopt, false);
  EXPECT_EQ(grad_of(y), (std::vector<double>{1, 1}));
}

TEST(Autograd, InPlaceChangesOfLeafViewsAndExpandedTensorsAreRefused) {
  Tensor w = leaf({1, 2, 3, 4}, V{2, 2});
  EXPECT_THAT([&] { ops::mul__Scalar(ops::select(w, 0, 0), 2.0); },
              ::testing::ThrowsMessage<Error>(HasSubstr("a view of a leaf Variable")));
  Tensor e = ops::expand(ops::zeros(V{1, 2}, ScalarType::Float32), V{3, 2});
  EXPECT_THAT(
      [&] { ops::add__Scalar(e, 1.0); },
      ::testing::ThrowsMessage<Error>(HasSubstr("more than one element of the written-to")));
  EXPECT_EQ(autograd::version(w), 0u);  // nothing ran
}

TEST(Autograd, InferenceTensorsAreRefusedOutsideInferenceMode) {
  Tensor x;
  {
    InferenceModeGuard guard;
    EXPECT_FALSE(grad_enabled());
    x = ops::ones(V{2}, ScalarType::Float32);
    ops::add__Scalar(x, 1.0);  // inside: allowed
  }
  EXPECT_TRUE(x.impl()->is_inference);
  EXPECT_TRUE(grad_enabled());
  EXPECT_THAT([&] { ops::add__Scalar(x, 1.0); },
              ::testing::ThrowsMessage<Error>(HasSubstr("Inplace update to inference tensor")));
  Tensor w = leaf({1, 2}, V{2});
  EXPECT_THAT([&] { ops::mul(x, w); },
              ::testing::ThrowsMessage<Error>(HasSubstr("Inference tensors cannot be saved")));
}

}  // namespace
}  // namespace ampjit
