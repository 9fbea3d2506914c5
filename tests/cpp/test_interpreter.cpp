// The interpreter: straight-line code, control flow, tuples and lists, calls, errors, threads.
#include <gmock/gmock.h>

#include <functional>
#include <stdexcept>
#include <thread>

#include "runtime/interpreter.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using V = std::vector<int64_t>;

Stack run_text(const std::string& text, Stack inputs) {
  auto g = parse_graph(text);
  g->verify();
  Code code(*g);
  code.run(inputs);
  return inputs;
}

TEST(Interpreter, StraightLine) {
  Tensor x = ops::arange(4, ScalarType::Float32);
  Stack out = run_text(
      "graph(%x : Tensor):\n"
      "  %1 : float = prim::Constant[value=2.5]()\n"
      "  %2 : int = prim::Constant[value=1]()\n"
      "  %y : Tensor = aten::add(%x, %1, %2)\n"
      "  %z : Tensor = aten::add(%y, %y, %2)\n"
      "  return (%z, %x)\n",
      {x});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(testing::values(out[0].to_tensor()), (std::vector<double>{5, 7, 9, 11}));
  EXPECT_TRUE(out[1].to_tensor().is_same(x));
}

const char* kLoopIf =
    "graph(%x : Tensor, %n : int, %flag : bool):\n"
    "  %t : bool = prim::Constant[value=1]()\n"
    "  %one : int = prim::Constant[value=1]()\n"
    "  %y : Tensor = prim::Loop(%n, %t, %x)\n"
    "    block0(%i : int, %acc : Tensor):\n"
    "      %z : Tensor = prim::If(%flag)\n"
    "        block0():\n"
    "          %s : Tensor = aten::add(%acc, %acc, %one)\n"
    "          -> (%s)\n"
    "        block1():\n"
    "          %p : Tensor = aten::add(%acc, %one, %one)\n"
    "          -> (%p)\n"
    "      -> (%t, %z)\n"
    "  return (%y)\n";

TEST(Interpreter, LoopsAndBranches) {
  Tensor x = ops::ones(V{2});
  // doubling 5 times
  Stack a = run_text(kLoopIf, {x, int64_t{5}, true});
  EXPECT_EQ(testing::values(a[0].to_tensor()), (std::vector<double>{32, 32}));
  // +1 three times
  Stack b = run_text(kLoopIf, {x, int64_t{3}, false});
  EXPECT_EQ(testing::values(b[0].to_tensor()), (std::vector<double>{4, 4}));
  // zero trips: the initial value
  Stack c = run_text(kLoopIf, {x, int64_t{0}, true});
  EXPECT_TRUE(c[0].to_tensor().is_same(x));
}

TEST(Interpreter, LoopConditionStopsEarlyAndSwapsAreParallel) {
  // Carried (a, b) -> (b, a) each trip; the condition turns false after the first trip.
  Stack out = run_text(
      "graph(%a : int, %b : int):\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %f : bool = prim::Constant[value=0]()\n"
      "  %n : int = prim::Constant[value=10]()\n"
      "  %x : int, %y : int = prim::Loop(%n, %t, %a, %b)\n"
      "    block0(%i : int, %p : int, %q : int):\n"
      "      -> (%f, %q, %p)\n"
      "  return (%x, %y)\n",
      {int64_t{1}, int64_t{2}});
  EXPECT_EQ(out[0].to_int(), 2);
  EXPECT_EQ(out[1].to_int(), 1);
}

TEST(Interpreter, TuplesListsAndIndexing) {
  Stack out = run_text(
      "graph(%a : int, %b : int):\n"
      "  %t : (int, int) = prim::TupleConstruct(%a, %b)\n"
      "  %l : int[] = prim::ListConstruct(%b, %a)\n"
      "  %x : int, %y : int = prim::ListUnpack(%l)\n"
      "  %k : int = prim::Constant[value=-1]()\n"
      "  %last : int = prim::TupleIndex(%t, %k)\n"
      "  return (%t, %x, %y, %last)\n",
      {int64_t{7}, int64_t{9}});
  EXPECT_EQ(out[0].repr(), "(7, 9)");
  EXPECT_EQ(out[1].to_int(), 9);
  EXPECT_EQ(out[2].to_int(), 7);
  EXPECT_EQ(out[3].to_int(), 9);
}

TEST(Interpreter, CallsAnotherFunction) {
  auto callee = std::make_shared<Function>(
      "double_it", std::shared_ptr<Graph>(parse_graph("graph(%x : Tensor):\n"
                                                      "  %1 : int = prim::Constant[value=1]()\n"
                                                      "  %y : Tensor = aten::add(%x, %x, %1)\n"
                                                      "  return (%y)\n")));
  Graph g;
  Value* x = g.add_input("x");
  Node* call = g.insert(g.create(sym::prim::CallFunction, {x}, 1));
  call->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(callee))));
  g.register_output(call->output());
  g.verify();
  Stack s{IValue(Tensor(ops::full(V{2}, 3.0)))};
  Code(g).run(s);
  EXPECT_EQ(testing::values(s[0].to_tensor()), (std::vector<double>{6, 6}));
}

TEST(Interpreter, ErrorsCarryTheNodesSourceLocation) {
  auto g = parse_graph(
      "graph(%x : Tensor, %y : Tensor):\n"
      "  %1 : int = prim::Constant[value=1]()\n"
      "  %z : Tensor = aten::add(%x, %y, %1) # model.py:12:4\n"
      "  return (%z)\n");
  Code code(*g);
  Stack s{IValue(Tensor(ops::ones(V{3}))), IValue(Tensor(ops::ones(V{2})))};
  EXPECT_THAT([&] { code.run(s); },
              ::testing::ThrowsMessage<Error>(AllOf(HasSubstr("must match the size of tensor b"),
                                                    HasSubstr("(in aten::add at model.py:12:4)"))));
  Stack wrong{IValue(Tensor(ops::ones(V{3})))};
  EXPECT_THAT([&] { code.run(wrong); },
              ::testing::ThrowsMessage<TypeError>(HasSubstr("expected 2 arguments but got 1")));
  auto raise = parse_graph(
      "graph():\n"
      "  %m : str = prim::Constant[value=\"bad input\"]()\n"
      "  = prim::RaiseException(%m)\n"
      "  return ()\n");
  Stack none;
  EXPECT_THAT([&] { Code(*raise).run(none); },
              ::testing::ThrowsMessage<Error>(HasSubstr("bad input")));
}

// Note [One diagnostic type]: an error keeps its class through any number of interpreter frames
// (an out-of-memory error inside a called function is still an OutOfMemoryError), and each frame
// adds the node it was raised in as a note, innermost first.
struct ThrowingNegKernel {
  static inline std::function<void()> raise;
  static void kernel(Stack&) { raise(); }
  BoxedKernel saved = op_entry(OpId::neg).kernels[static_cast<int>(DeviceType::CPU)];
  explicit ThrowingNegKernel(std::function<void()> r) {
    raise = std::move(r);
    register_kernel(OpId::neg, DeviceType::CPU, &kernel);
  }
  ~ThrowingNegKernel() { register_kernel(OpId::neg, DeviceType::CPU, saved); }
};

std::shared_ptr<Function> neg_then_call() {
  auto callee = std::make_shared<Function>(
      "inner", std::shared_ptr<Graph>(parse_graph("graph(%x : Tensor):\n"
                                                  "  %y : Tensor = aten::neg(%x) # inner.py:2:8\n"
                                                  "  return (%y)\n")));
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x");
  Node* call = g->insert(g->create(sym::prim::CallFunction, {x}, 1));
  call->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(callee))));
  call->set_source_range(SourceRange::location("outer.py", 5, 4));
  g->register_output(call->output());
  return std::make_shared<Function>("outer", g);
}

TEST(InterpreterErrors, KeepTheirClassAndGainANotePerFrame) {
  ThrowingNegKernel oom([] { throw OutOfMemoryError("out of memory (test)"); });
  auto outer = neg_then_call();
  // Run as compiled (the call is a frame of its own) and as the Function runs it (optimized: the
  // callee inlined, its node remembering the call).
  Stack s{IValue(Tensor(ops::ones(V{2})))};
  EXPECT_THAT([&] { Code(*outer->graph()).run(s); },
              ::testing::ThrowsMessage<OutOfMemoryError>(
                  ::testing::StrEq("out of memory (test)\n  (in aten::neg at inner.py:2:8)\n"
                                   "  (in prim::CallFunction at outer.py:5:4)")));
  try {
    Stack t{IValue(Tensor(ops::ones(V{2})))};
    outer->run(t);
    FAIL() << "no error";
  } catch (const OutOfMemoryError& e) {
    EXPECT_EQ(std::string(e.what()),
              "out of memory (test)\n  (in aten::neg at inner.py:2:8)\n  called from outer.py:5:4");
    EXPECT_EQ(e.message(), "out of memory (test)");
    ASSERT_EQ(e.diagnostic().notes.size(), 2u);
    EXPECT_EQ(e.diagnostic().notes[1].range.location_str(), "outer.py:5:4");
  }
}

TEST(InterpreterErrors, OtherExceptionsBecomeErrorsWithTheNode) {
  ThrowingNegKernel range([] { throw std::out_of_range("vector::_M_range_check"); });
  auto g =
      parse_graph("graph(%x : Tensor):\n  %y : Tensor = aten::neg(%x) # m.py:3:1\n  return (%y)\n");
  Stack s{IValue(Tensor(ops::ones(V{2})))};
  EXPECT_THAT([&] { Code(*g).run(s); },
              ::testing::ThrowsMessage<Error>(
                  ::testing::StrEq("vector::_M_range_check\n  (in aten::neg at m.py:3:1)")));
}

TEST(Diagnostics, RenderTheRangeTheLineACaretAndEachNote) {
  auto src = std::make_shared<Source>("def f(x):\n    return g(x)\n", "f.py");
  const SourceRange call(src, 21, 25);  // g(x)
  Error e("undefined value g", SourceRange(src, 21, 22));
  e.add_note({"called from", call});
  e.add_note({"aten::add", SourceRange::location("m.py", 7, 2), DiagnosticNote::Style::Context});
  EXPECT_EQ(std::string(e.what()),
            "f.py:2:12: undefined value g\n    return g(x)\n           ~\n"
            "  called from f.py:2:12\n    return g(x)\n           ~~~~\n"
            "  (in aten::add at m.py:7:2)");
  EXPECT_EQ(Error("no range").what(), std::string("no range"));
}

TEST(Interpreter, UnknownNodesAreRejectedAtCompileTime) {
  auto g = parse_graph(
      "graph(%x : Tensor):\n  %y : Tensor = prim::Frobnicate(%x) # m.py:1:1\n  return (%y)\n");
  EXPECT_THAT([&] { Code c(*g); }, ::testing::ThrowsMessage<Error>(
                                       HasSubstr("cannot run node prim::Frobnicate at m.py:1:1")));
}

TEST(Interpreter, OneCodeManyThreads) {
  auto g = parse_graph(kLoopIf);
  Code code(*g);
  std::vector<std::thread> ts;
  std::vector<double> results(8);
  for (int t = 0; t < 8; ++t) {
    ts.emplace_back([&, t] {
      for (int rep = 0; rep < 50; ++rep) {
        Stack s{IValue(Tensor(ops::full(V{4}, static_cast<double>(t)))), int64_t{3}, false};
        code.run(s);
        results[t] = testing::values(s[0].to_tensor())[0];
      }
    });
  }
  for (auto& t : ts) t.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(results[t], t + 3.0);
}

}  // namespace
}  // namespace ampjit

namespace ampjit {
namespace {

TEST(Interpreter, OneValueReturnedTwice) {
  // Common subexpression elimination makes `return (%x, %x)` (e.g. two folded flags).
  Stack out = run_text(
      "graph(%x : Tensor):\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  return (%t, %x, %t, %x)\n",
      {Tensor(ops::ones(std::vector<int64_t>{2}))});
  ASSERT_EQ(out.size(), 4u);
  EXPECT_TRUE(out[0].to_bool());
  EXPECT_TRUE(out[2].to_bool());
  EXPECT_TRUE(out[1].to_tensor().is_same(out[3].to_tensor()));
}

}  // namespace
}  // namespace ampjit
