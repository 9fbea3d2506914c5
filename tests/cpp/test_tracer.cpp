// The tracer core: recording dispatched ops, tensor identity (inputs, in-place rebinding,
// constants), autocast casts recorded as aten::to below the autocast layer, and the trace run
// by the interpreter matching eager.
#include <gmock/gmock.h>

#include <atomic>
#include <thread>

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
  auto r =
      filecheck(g->str(), "# CHECK: aten::mm(%x, %w)\n# CHECK: aten::relu\n# CHECK: aten::add(");
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
  EXPECT_THAT(
      [&] {
        trace2(x, w, [&](const Tensor& a, const Tensor&) -> Tensor { return ops::mul(a, param); });
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("Cannot insert a Tensor that requires grad as a constant")));
  EXPECT_EQ(tracer::current(), nullptr);  // the guard unwound
}

TEST(Tracer, ModuleWeightsAreGetAttrChainsSharedWithTheModule) {
  Ref<ModuleObject> inner(new ModuleObject("__torch__.Inner"));
  Tensor weight = ops::full(V{2}, 2.0);
  weight.set_requires_grad(true);  // a parameter: never a constant
  inner->set_attr("weight", IValue(weight));
  Ref<ModuleObject> root(new ModuleObject("__torch__.Outer"));
  root->set_attr("inner", IValue(Ref<ObjectBase>(inner)));
  auto st = std::make_shared<tracer::TracingState>();
  st->add_module_input(root);
  Tensor x = ops::ones(V{2});
  st->add_input(x, "x");
  {
    tracer::TracingGuard guard(st);
    Tensor y = ops::mul(ops::mul(x, weight), weight);  // the chain is emitted once
    st->add_output(IValue(y));
  }
  st->graph->verify();
  auto r = filecheck(
      st->graph->str(false),
      "# CHECK: %inner : __torch__.Inner = prim::GetAttr[name=\"inner\"](%self)\n"
      "# CHECK-NEXT: %weight : Float(2, device=cpu) = prim::GetAttr[name=\"weight\"](%inner)\n"
      "# CHECK-NEXT: aten::mul(%x, %weight)\n# CHECK-NOT: GetAttr");
  EXPECT_TRUE(r.ok) << r.message;
  // The graph reads the module at run time: new weights, new result.
  inner->set_attr("weight", IValue(ops::full(V{2}, 3.0)));
  Stack s{IValue(Ref<ObjectBase>(root)), IValue(x)};
  Code(*st->graph).run(s);
  EXPECT_EQ(testing::values(s[0].to_tensor()), (std::vector<double>{9, 9}));
  Stack bad{IValue(x), IValue(x)};
  EXPECT_THAT([&] { Code(*st->graph).run(bad); },
              ::testing::ThrowsMessage<TypeError>(
                  HasSubstr("prim::GetAttr on a value that is not a module")));
}

TEST(Tracer, OutputsAndInputsFollowTorchRules) {
  auto st = std::make_shared<tracer::TracingState>();
  EXPECT_THAT(
      [&] {
        tracer::TracingState::check_traceable_inputs({IValue(ops::ones(V{1})), IValue(int64_t{3})});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("Type 'Tuple[Tensor, int]' cannot be traced")));
  EXPECT_THAT([&] { st->add_output(IValue(int64_t{3})); },
              ::testing::ThrowsMessage<Error>(HasSubstr("Only tensors, lists, tuples of tensors")));
  Tensor a = ops::ones(V{1}), b = ops::ones(V{1});
  Value* in = st->add_input(IValue::tuple({IValue(a), IValue::tuple({IValue(b)})}), "pair");
  EXPECT_EQ(in->type()->str(), "(Float(1, device=cpu), (Float(1, device=cpu)))");
  st->add_output(IValue::list({IValue(b), IValue(a)}));
  ASSERT_EQ(st->warnings.size(), 1u);  // strict: a list output warns
  EXPECT_THAT(st->warnings[0], HasSubstr("Encountering a list at the output of the tracer"));
  st->graph->verify();
  Stack s{
      IValue::tuple({IValue(ops::full(V{1}, 5.0)), IValue::tuple({IValue(ops::full(V{1}, 7.0))})})};
  Code(*st->graph).run(s);
  ASSERT_TRUE(s[0].is_list());
  EXPECT_EQ(testing::values(s[0].list_elems()[0].to_tensor()), (std::vector<double>{7}));
  EXPECT_EQ(testing::values(s[0].list_elems()[1].to_tensor()), (std::vector<double>{5}));
}

// One compiled trace, eight threads, each with its own eager autocast state: the interpreter's
// Code is shared and immutable, the registers and autocast state are per thread.
TEST(Tracer, OneTraceManyThreadsEachWithItsOwnAutocast) {
  Tensor x = testing::random_tensor({16, 32}, ScalarType::Float32, 11);
  Tensor w = testing::random_tensor({32, 8}, ScalarType::Float32, 12);
  auto f = [](const Tensor& a, const Tensor& b) -> Tensor { return ops::relu(ops::mm(a, b)); };
  auto fn = std::make_shared<Function>("f", trace2(x, w, f));
  Tensor expected = f(x, w);
  Tensor expected_ac;
  {
    AutocastGuard ac(DeviceType::CPU, true, ScalarType::BFloat16, false);
    expected_ac = f(x, w);
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      for (int k = 0; k < 50; ++k) {
        AutocastGuard ac(DeviceType::CPU, i % 2 == 0, ScalarType::BFloat16, false);
        Stack s = (*fn)({IValue(x), IValue(w)});
        const Tensor& want = i % 2 == 0 ? expected_ac : expected;
        Tensor got = s[0].to_tensor();
        if (got.dtype() != want.dtype() || testing::values(got) != testing::values(want))
          ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(expected_ac.dtype(), ScalarType::BFloat16);
}

}  // namespace
}  // namespace ampjit
