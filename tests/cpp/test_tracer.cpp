// The tracer core: recording dispatched ops, tensor identity (inputs, in-place rebinding,
// constants), autocast casts recorded as aten::to below the autocast layer, and the trace run
// by the interpreter matching eager.
#include <gmock/gmock.h>

#include "runtime/autocast/autocast_state.h"
#include "runtime/interpreter.h"
#include "runtime/ir/filecheck.h"
#include "tests/cpp/testing.h"
#include "tracer/tracer.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using V = std::vector<int64_t>;

// Traces f(x, w) and returns the graph.
template <typename F>
std::shared_ptr<Graph> trace2(const Tensor& x, const Tensor& w, F f) {
  auto st = std::make_shared<tracer::TracingState>();
  st->add_input(x, "x");
  st->add_input(w, "w");
  {
    tracer::TracingGuard guard(st);
    Tensor y = f(x, w);
    st->graph->register_output(st->value_of(y));
  }
  st->graph->verify();
  return st->graph;
}

TEST(Tracer, RecordsOpsAndRunsLikeEager) {
  Tensor x = testing::random_tensor({3, 4}, ScalarType::Float32, 1);
  Tensor w = testing::random_tensor({4, 2}, ScalarType::Float32, 2);
  auto f = [](const Tensor& a, const Tensor& b) -> Tensor {
    Tensor h = ops::mm(a, b);
    return ops::add_Scalar(ops::relu(h), 1.5);
  };
  auto g = trace2(x, w, f);
  auto r = filecheck(g->str(), "# CHECK: aten::mm(%x, %w)\n# CHECK: aten::relu\n# CHECK: aten::add(");
  EXPECT_TRUE(r.ok) << r.message;
  Tensor x2 = testing::random_tensor({3, 4}, ScalarType::Float32, 3);
  Stack s{IValue(x2), IValue(w)};
  Code(*g).run(s);
  EXPECT_EQ(testing::values(s[0].to_tensor()), testing::values(f(x2, w)));
}

TEST(Tracer, InPlaceRebindsAndOutsideTensorsBecomeConstants) {
  Tensor x = ops::ones(V{2});
  Tensor w = ops::ones(V{2});
  Tensor outside = ops::full(V{2}, 3.0);
  auto g = trace2(x, w, [&](const Tensor& a, const Tensor& b) -> Tensor {
    Tensor y = ops::mul(a, b);
    ops::add_(y, outside);  // in place: later uses of y see the add's output
    return ops::neg(y);
  });
  auto r = filecheck(g->str(),
                     "# CHECK: prim::Constant[value=<Tensor>]\n# CHECK: aten::add_(\n"
                     "# CHECK: aten::neg(%{{[0-9]+}})");
  EXPECT_TRUE(r.ok) << r.message;
  Node* neg = g->outputs()[0]->node();
  EXPECT_EQ(neg->input(0)->node()->kind().qualified(), "aten::add_");
  Stack s{IValue(Tensor(ops::full(V{2}, 2.0))), IValue(w)};
  Code(*g).run(s);
  EXPECT_EQ(testing::values(s[0].to_tensor()), (std::vector<double>{-5, -5}));
}

TEST(Tracer, AutocastCastsAreBakedInAsAtenTo) {
  Tensor x = ops::ones(V{2, 2});
  Tensor w = ops::ones(V{2, 2});
  std::shared_ptr<Graph> g;
  {
    AutocastGuard ac(DeviceType::CPU, true, ScalarType::BFloat16, false);
    g = trace2(x, w, [](const Tensor& a, const Tensor& b) -> Tensor { return ops::mm(a, b); });
  }
  auto r = filecheck(g->str(), "# CHECK-COUNT-2: aten::to(\n# CHECK: aten::mm(");
  EXPECT_TRUE(r.ok) << r.message;
  // Run with autocast off: the baked-in casts still produce bfloat16 (torchscript semantics).
  Stack s{IValue(x), IValue(w)};
  Code(*g).run(s);
  EXPECT_EQ(s[0].to_tensor().dtype(), ScalarType::BFloat16);
}

TEST(Tracer, RequiresGradTensorsCannotBeConstants) {
  Tensor x = ops::ones(V{2});
  Tensor w = ops::ones(V{2});
  Tensor param = ops::ones(V{2});
  param.set_requires_grad(true);
  EXPECT_THAT([&] { trace2(x, w, [&](const Tensor& a, const Tensor&) -> Tensor { return ops::mul(a, param); }); },
              ::testing::ThrowsMessage<Error>(HasSubstr("Cannot insert a Tensor that requires grad as a constant")));
  EXPECT_EQ(tracer::current(), nullptr);  // the guard unwound
}

}  // namespace
}  // namespace ampjit
