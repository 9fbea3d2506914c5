// The graph passes: constant propagation, dead code elimination, common subexpression elimination.
// Each case parses a graph, runs one pass, verifies the result and FileChecks its printed form;
// differential cases run the interpreter on the same inputs before and after the passes; golden
// files (tests/golden/passes/*.graph) run a named list of passes.
#include <gmock/gmock.h>

#include <filesystem>
#include <fstream>

#include "runtime/interpreter.h"
#include "runtime/ir/filecheck.h"
#include "runtime/ir/queries.h"
#include "runtime/module_object.h"
#include "runtime/random.h"
#include "script/passes/common_subexpression_elimination.h"
#include "script/passes/constant_propagation.h"
#include "script/passes/dead_code_elimination.h"
#include "script/passes/pipeline.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using V = std::vector<int64_t>;
using PassFn = bool (*)(Graph&);

// Every aten node of a test graph names an op-table overload (an argument too few leaves it
// unresolved, and the passes then treat it as an unknown node), except the None tests, which
// constant propagation decides without an op.
void expect_resolved(const Block& b) {
  for (const Node* n : b) {
    const std::string& k = n->kind().qualified();
    if (n->kind().is_aten() && k != "aten::__is__" && k != "aten::__isnot__") {
      EXPECT_NE(n->op(), nullptr) << k << " is not resolved";
    }
    for (const Block* sub : n->blocks()) expect_resolved(*sub);
  }
}

std::unique_ptr<Graph> parse_checked(const std::string& text) {
  auto g = parse_graph(text);
  g->verify();
  expect_resolved(*g->block());
  return g;
}

// Parses `text`, runs `pass` (checking what it says about changing the graph), verifies the
// result and returns it printed.
std::string after(PassFn pass, const std::string& text, bool expect_changed = true) {
  auto g = parse_checked(text);
  EXPECT_EQ(pass(*g), expect_changed) << text;
  g->verify();
  return g->str();
}

void check(const std::string& printed, const std::string& checks) {
  FileCheckResult r = filecheck(printed, checks);
  EXPECT_TRUE(r.ok) << r.message << "\n--- graph:\n" << printed;
}

// A second run finds nothing left to do.
void expect_fixpoint(PassFn pass, const std::string& text) {
  auto g = parse_graph(text);
  pass(*g);
  EXPECT_FALSE(pass(*g)) << g->str();
}

// ---- Constant propagation ---------------------------------------------------------------------

TEST(ConstantPropagation, FoldsOpsWithNonTensorResults) {
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %one : int = prim::Constant[value=1]()
  %d : int = aten::dim(%c) # model.py:2:4
  %n : int = aten::numel(%c)
  %s : int = aten::size(%c, %one)
  %t : (int, int, int) = prim::TupleConstruct(%d, %n, %s)
  return (%t, %x)
)";
  const std::string out = after(constant_propagation, text);
  check(out, R"(
# CHECK: %0 : int = prim::Constant[value=2]() # model.py:2:4
# CHECK-NEXT: %1 : int = prim::Constant[value=6]()
# CHECK-NEXT: %2 : int = prim::Constant[value=3]()
# CHECK-NEXT: prim::TupleConstruct(%0, %1, %2)
)");
  EXPECT_THAT(out, Not(HasSubstr("aten::")));
  expect_fixpoint(constant_propagation, text);
}

TEST(ConstantPropagation, LeavesTensorResultsAndNonConstantInputsAlone) {
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2) = prim::Constant[value=<Tensor>]()
  %n : Tensor = aten::neg(%c)
  %d : int = aten::dim(%x)
  return (%n, %d)
)";
  const std::string out = after(constant_propagation, text, false);
  check(out, "# CHECK: aten::neg(%c)\n# CHECK: aten::dim(%x)");
}

TEST(ConstantPropagation, AnErrorWhileFoldingIsLeftForRunTime) {
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %five : int = prim::Constant[value=5]()
  %s : int = aten::size(%c, %five) # model.py:4:2
  return (%s)
)";
  auto g = parse_graph(text);
  EXPECT_FALSE(constant_propagation(*g));
  g->verify();
  check(g->str(), "# CHECK: aten::size(%c, %five) # model.py:4:2");
  Stack s{IValue(ops::ones(V{1}))};
  try {
    Code(*g).run(s);
    ADD_FAILURE() << "expected the out-of-range dimension to raise";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("model.py:4:2"));
  }
}

TEST(ConstantPropagation, TensorConstantsAreNotReadWhenTheGraphWritesAnInput) {
  // %x may be %c's own tensor (a traced graph's constant can be the caller's), so add_ could
  // change %c before dim runs (Note [Writes to constants]).
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %one : int = prim::Constant[value=1]()
  %w : Tensor = aten::add_(%x, %x, %one)
  %d : int = aten::dim(%c)
  return (%d, %w)
)";
  const std::string out = after(constant_propagation, text, false);
  check(out, "# CHECK: aten::dim(%c)");
}

bool fold_tensors(Graph& g) {
  return constant_propagation(g, /*fold_tensors=*/true);
}

TEST(ConstantPropagation, AnInPlaceOpOnAFreshResultLeavesTensorConstantsFoldable) {
  // resnet's ReLU(inplace=True) after a convolution writes the convolution's fresh result, which
  // aliases no constant: the transposed weight still folds.
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %y : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%y)
  %t : Tensor = aten::t(%c)
  %z : Tensor = aten::matmul(%r, %t)
  return (%z)
)";
  check(after(fold_tensors, text), "# CHECK-NOT: aten::t(\n# CHECK: aten::relu_(%y)");
  auto g = parse_checked(text);
  EXPECT_FALSE(constants_may_change(*g));
}

TEST(ConstantPropagation, AWriteThroughAViewOfAConstantKeepsItUnfolded) {
  // %v is a view of %c (t's result is in self's alias set): add_ on it writes %c.
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %one : int = prim::Constant[value=1]()
  %v : Tensor = aten::t(%c)
  %w : Tensor = aten::add_(%v, %v, %one)
  %n : Tensor = aten::neg(%c)
  return (%n, %w)
)";
  check(after(fold_tensors, text, false), "# CHECK: aten::t(%c)\n# CHECK: aten::neg(%c)");
}

TEST(ConstantPropagation, AConstantCarriedThroughALoopAndWrittenKeepsItUnfolded) {
  // The write is to the loop's carried value, which is %c from the second iteration on.
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %true : bool = prim::Constant[value=1]()
  %y : Tensor, %z : Tensor = prim::Loop(%three, %true, %x, %x)
    block0(%i : int, %a : Tensor, %b : Tensor):
      %w : Tensor = aten::add_(%b, %x, %one)
      -> (%true, %c, %a)
  %n : Tensor = aten::neg(%c)
  return (%n, %y, %z)
)";
  auto g = parse_checked(text);
  EXPECT_TRUE(constants_may_change(*g));
}

TEST(ConstantPropagation, AReturnedConstantMayBeWrittenByTheCaller) {
  const std::string text = R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %v : Tensor = aten::t(%c)
  return (%v)
)";
  auto g = parse_checked(text);
  EXPECT_TRUE(constants_may_change(*g));
  // Returning (a view of) an input is not a way to write a constant.
  auto h = parse_checked(R"(graph(%x : Tensor):
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %v : Tensor = aten::t(%x)
  %n : Tensor = aten::neg(%c)
  return (%v, %n)
)");
  EXPECT_FALSE(constants_may_change(*h));
}

TEST(ConstantPropagation, IfWithConstantConditionBecomesTheTakenBranch) {
  const std::string text = R"(graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor, %k : int = prim::If(%t) # model.py:1:0
    block0():
      %a : Tensor = aten::neg(%x) # model.py:2:4
      %z : Tensor = prim::If(%f)
        block0():
          %b : Tensor = aten::exp(%a)
          -> (%b)
        block1():
          %e : Tensor = aten::relu(%a) # model.py:5:8
          -> (%e)
      %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
      %d : int = aten::dim(%c)
      -> (%z, %d)
    block1():
      %g : Tensor = aten::sin(%x)
      %m : int = aten::dim(%x)
      -> (%g, %m)
  %r : Tensor = aten::mul(%y, %y)
  return (%r, %k)
)";
  const std::string out = after(constant_propagation, text);
  check(out, R"(
# CHECK: %a : Tensor = aten::neg(%x) # model.py:2:4
# CHECK-NEXT: %e : Tensor = aten::relu(%a) # model.py:5:8
# CHECK-NEXT: %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
# CHECK-NEXT: %0 : int = prim::Constant[value=2]()
# CHECK-NEXT: %r : Tensor = aten::mul(%e, %e)
# CHECK-NEXT: return (%r, %0)
)");
  EXPECT_THAT(out, Not(HasSubstr("prim::If")));
  EXPECT_THAT(out, Not(HasSubstr("aten::sin")));
  EXPECT_THAT(out, Not(HasSubstr("aten::exp")));
}

TEST(ConstantPropagation, NoneTestsDecideBranches) {
  const std::string out = after(constant_propagation, R"(graph(%x : Tensor, %o : Tensor?):
  %none : NoneType = prim::Constant()
  %is : bool = aten::__is__(%x, %none)
  %y : Tensor = prim::If(%is)
    block0():
      %a : Tensor = aten::neg(%x)
      -> (%a)
    block1():
      -> (%x)
  %isnot : bool = aten::__isnot__(%none, %none)
  %unknown : bool = aten::__is__(%o, %none)
  return (%y, %isnot, %unknown)
)");
  check(out, R"(
# CHECK: %0 : bool = prim::Constant[value=0]()
# CHECK-NEXT: %1 : bool = prim::Constant[value=0]()
# CHECK-NEXT: %unknown : bool = aten::__is__(%o, %none)
# CHECK-NEXT: return (%x, %1, %unknown)
)");
  EXPECT_THAT(out, Not(HasSubstr("aten::neg")));
}

TEST(ConstantPropagation, LoopsThatNeverRunBecomeTheirInitialValues) {
  const std::string out = after(constant_propagation, R"(graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %zero : int = prim::Constant[value=0]()
  %c : Float(4) = prim::Constant[value=<Tensor>]()
  %a : Tensor = prim::Loop(%zero, %t, %x)
    block0(%i : int, %acc : Tensor):
      %s : Tensor = aten::add(%acc, %acc, %i)
      -> (%t, %s)
  %b : Tensor = prim::Loop(%n, %f, %x)
    block0(%j : int, %acc2 : Tensor):
      %p : Tensor = aten::neg(%acc2)
      -> (%t, %p)
  %c2 : Tensor, %k : int = prim::Loop(%n, %t, %x, %zero)
    block0(%i2 : int, %acc3 : Tensor, %k2 : int):
      %d : int = aten::dim(%c)
      %q : Tensor = aten::mul(%acc3, %acc3)
      -> (%t, %q, %d)
  return (%a, %b, %c2, %k)
)");
  // The third loop runs %n times: it stays, and dim(%c) inside it folds in place.
  check(out, R"(
# CHECK: %c2 : Tensor, %k : int = prim::Loop(%n, %t, %x, %zero)
# CHECK-NEXT: block0(%i2 : int, %acc3 : Tensor, %k2 : int):
# CHECK-NEXT: %0 : int = prim::Constant[value=1]()
# CHECK-NEXT: %q : Tensor = aten::mul(%acc3, %acc3)
# CHECK-NEXT: -> (%t, %q, %0)
# CHECK: return (%x, %x, %c2, %k)
)");
  EXPECT_THAT(out, Not(HasSubstr("aten::neg")));
}

TEST(ConstantPropagation, TupleIndexAndUnpackOfAConstructForwardTheElement) {
  const std::string out = after(constant_propagation, R"(graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %minus2 : int = prim::Constant[value=-2]()
  %five : int = prim::Constant[value=5]()
  %t : (Tensor, Tensor) = prim::TupleConstruct(%x, %y)
  %a : Tensor = prim::TupleIndex(%t, %one)
  %b : Tensor = prim::TupleIndex(%t, %minus2)
  %c : Tensor = prim::TupleIndex(%t, %five)
  %d : Tensor, %e : Tensor = prim::TupleUnpack(%t)
  %r : (Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c, %d, %e)
  return (%r)
)");
  check(out, R"(
# CHECK: %c : Tensor = prim::TupleIndex(%t, %five)
# CHECK-NEXT: prim::TupleConstruct(%y, %x, %c, %x, %y)
)");
  EXPECT_THAT(out, Not(HasSubstr("TupleUnpack")));
}

// ---- Dead code elimination --------------------------------------------------------------------

TEST(DeadCodeElimination, RemovesUnusedPureNodes) {
  const std::string text = R"(graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %b : Tensor = aten::add(%a, %a, %one)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  %y : Tensor = aten::relu(%x) # model.py:3:4
  return (%y)
)";
  const std::string out = after(dead_code_elimination, text);
  check(out, R"(
# CHECK: graph(%x : Tensor):
# CHECK-NEXT: %y : Tensor = aten::relu(%x) # model.py:3:4
# CHECK-NEXT: return (%y)
)");
  expect_fixpoint(dead_code_elimination, text);
  after(dead_code_elimination, out, false);
}

TEST(DeadCodeElimination, KeepsSideEffectsAndWhatTheyRead) {
  const std::string out =
      after(dead_code_elimination, R"(graph(%x : Tensor, %rm : Tensor, %rv : Tensor):
  %one : int = prim::Constant[value=1]()
  %sizes : int[] = prim::Constant[value=[-1]]()
  %v : Tensor = aten::view(%x, %sizes)
  %e : Tensor = aten::exp(%x)
  %w : Tensor = aten::add_(%v, %e, %one)
  %none : NoneType = prim::Constant()
  %train : bool = prim::Constant[value=1]()
  %eval : bool = prim::Constant[value=0]()
  %r : Tensor = aten::randn_like(%x, %none, %none, %train)
  %mom : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %bn1 : Tensor = aten::batch_norm(%x, %none, %none, %rm, %rv, %train, %mom, %eps, %train)
  %bn2 : Tensor = aten::batch_norm(%x, %none, %none, %rm, %rv, %eval, %mom, %eps, %train)
  = prim::Print(%x)
  %u : Tensor = foo::unknown(%x)
  %n : Tensor = aten::neg(%x)
  return (%x)
)");
  check(out, R"(
# CHECK: %v : Tensor = aten::view(%x, %sizes)
# CHECK-NEXT: %e : Tensor = aten::exp(%x)
# CHECK-NEXT: %w : Tensor = aten::add_(%v, %e, %one)
# CHECK: %r : Tensor = aten::randn_like(%x, %none, %none, %train)
# CHECK: %bn1 : Tensor = aten::batch_norm(%x, %none, %none, %rm, %rv, %train, %mom, %eps, %train)
# CHECK-NEXT: = prim::Print(%x)
# CHECK-NEXT: %u : Tensor = foo::unknown(%x)
# CHECK-NEXT: return (%x)
)");
  EXPECT_THAT(out, Not(HasSubstr("%bn2")));
  EXPECT_THAT(out, Not(HasSubstr("aten::neg")));
  EXPECT_THAT(out, Not(HasSubstr("%eval")));
}

TEST(DeadCodeElimination, PrunesIfOutputsAndRemovesEmptyIfs) {
  const std::string out = after(dead_code_elimination, R"(graph(%x : Tensor, %c : bool):
  %y : Tensor, %z : Tensor = prim::If(%c)
    block0():
      %p : Tensor = aten::neg(%x)
      %q : Tensor = aten::exp(%x)
      -> (%p, %q)
    block1():
      -> (%x, %x)
  %gone : Tensor = prim::If(%c)
    block0():
      %s : Tensor = aten::sin(%x)
      -> (%s)
    block1():
      -> (%x)
  %msg : str = prim::Constant[value="bad"]()
  = prim::If(%c)
    block0():
      = prim::RaiseException(%msg)
      -> ()
    block1():
      -> ()
  return (%y)
)");
  check(out, R"(
# CHECK: %y : Tensor = prim::If(%c)
# CHECK-NEXT: block0():
# CHECK-NEXT: %p : Tensor = aten::neg(%x)
# CHECK-NEXT: -> (%p)
# CHECK-NEXT: block1():
# CHECK-NEXT: -> (%x)
# CHECK-NEXT: %msg : str = prim::Constant[value="bad"]()
# CHECK-NEXT: = prim::If(%c)
# CHECK-NEXT: block0():
# CHECK-NEXT: = prim::RaiseException(%msg)
# CHECK: return (%y)
)");
  EXPECT_THAT(out, Not(HasSubstr("aten::exp")));
  EXPECT_THAT(out, Not(HasSubstr("aten::sin")));
}

TEST(DeadCodeElimination, RemovesDeadLoopCarriedValues) {
  // %cnt only feeds itself: dead. %acc is returned. %keep's result is unused, but the body
  // writes through it, so it stays carried. The second loop computes nothing used and goes.
  const std::string text = R"(graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %acc : Tensor, %cnt : int, %keep : Tensor = prim::Loop(%n, %t, %x, %one, %x)
    block0(%i : int, %a : Tensor, %c : int, %k : Tensor):
      %c2 : int = aten::size(%a, %c)
      %a2 : Tensor = aten::add(%a, %x, %one)
      %k2 : Tensor = aten::relu_(%k)
      -> (%t, %a2, %c2, %k)
  %unused : Tensor = prim::Loop(%n, %t, %x)
    block0(%j : int, %b : Tensor):
      %b2 : Tensor = aten::neg(%b)
      -> (%t, %b2)
  return (%acc)
)";
  const std::string out = after(dead_code_elimination, text);
  check(out, R"(
# CHECK: %acc : Tensor, %keep : Tensor = prim::Loop(%n, %t, %x, %x)
# CHECK-NEXT: block0(%i : int, %a : Tensor, %k : Tensor):
# CHECK-NEXT: %a2 : Tensor = aten::add(%a, %x, %one)
# CHECK-NEXT: %k2 : Tensor = aten::relu_(%k)
# CHECK-NEXT: -> (%t, %a2, %k)
# CHECK-NEXT: return (%acc)
)");
  EXPECT_THAT(out, Not(HasSubstr("aten::size")));
  EXPECT_THAT(out, Not(HasSubstr("aten::neg")));
  expect_fixpoint(dead_code_elimination, text);
}

TEST(DeadCodeElimination, ALoopWithSideEffectsRunsEvenWithoutOutputs) {
  const std::string out = after(dead_code_elimination, R"(graph(%x : Tensor, %n : int, %c : bool):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %z : Tensor = prim::If(%c)
        block0():
          %r : Tensor = aten::rand_like(%x, %none, %none, %t)
          -> (%r)
        block1():
          -> (%a)
      %dead : Tensor = aten::neg(%z)
      -> (%t, %z)
  return (%x)
)");
  // The RNG advances inside the If: the If runs, and so does the loop; nothing reads their
  // results, so the carried value and the If's output go.
  check(out, R"(
# CHECK: = prim::Loop(%n, %t)
# CHECK-NEXT: block0(%i : int):
# CHECK-NEXT: = prim::If(%c)
# CHECK-NEXT: block0():
# CHECK-NEXT: %r : Tensor = aten::rand_like(%x, %none, %none, %t)
# CHECK-NEXT: -> ()
# CHECK-NEXT: block1():
# CHECK-NEXT: -> ()
# CHECK-NEXT: -> (%t)
# CHECK-NEXT: return (%x)
)");
  EXPECT_THAT(out, Not(HasSubstr("aten::neg")));
  EXPECT_THAT(out, Not(HasSubstr("%one")));
}

TEST(DeadCodeElimination, SideEffectPredicates) {
  auto g = parse_graph(R"(graph(%x : Tensor, %c : bool, %none : NoneType):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %one)
  %b : Tensor = aten::add_(%x, %x, %one)
  %r : Tensor = aten::rand_like(%x, %none, %none, %c)
  %y : Tensor = prim::If(%c)
    block0():
      %m : Tensor = aten::mul_(%x, %x)
      -> (%m)
    block1():
      -> (%x)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  %call : Tensor = prim::CallFunction(%x)
  return (%y)
)");
  std::vector<Node*> n = g->block()->nodes();
  EXPECT_FALSE(has_side_effects(*n[1]));  // add
  EXPECT_TRUE(has_side_effects(*n[2]));   // add_
  EXPECT_TRUE(may_write_inputs(*n[2]));
  EXPECT_TRUE(has_side_effects(*n[3]));  // rand_like
  EXPECT_FALSE(may_write_inputs(*n[3]));
  EXPECT_TRUE(has_side_effects(*n[4]));  // an If writing in a branch
  EXPECT_TRUE(may_write_inputs(*n[4]));
  EXPECT_FALSE(has_side_effects(*n[5]));  // TupleConstruct
  EXPECT_TRUE(has_side_effects(*n[6]));   // a call
  EXPECT_TRUE(may_write_inputs(*n[6]));
}

// ---- Common subexpression elimination ---------------------------------------------------------

TEST(CommonSubexpressionElimination, MergesPureNodesButNotRandomOnes) {
  const std::string text = R"(graph(%x : Tensor, %none : NoneType, %f : bool):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor = aten::add(%x, %x, %1) # model.py:1:4
  %2 : int = prim::Constant[value=1]()
  %b : Tensor = aten::add(%x, %x, %2) # model.py:2:4
  %r : Tensor = aten::randn_like(%x, %none, %none, %f)
  %s : Tensor = aten::randn_like(%x, %none, %none, %f)
  %t : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %r, %s)
  %u : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %r, %s)
  return (%t, %u)
)";
  const std::string out = after(common_subexpression_elimination, text);
  check(out, R"(
# CHECK: %0 : int = prim::Constant[value=1]()
# CHECK-NEXT: %a : Tensor = aten::add(%x, %x, %0) # model.py:1:4
# CHECK-NEXT: %r : Tensor = aten::randn_like(%x, %none, %none, %f)
# CHECK-NEXT: %s : Tensor = aten::randn_like(%x, %none, %none, %f)
# CHECK-NEXT: %t : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %a, %r, %s)
# CHECK-NEXT: return (%t, %t)
)");
  expect_fixpoint(common_subexpression_elimination, text);
}

TEST(CommonSubexpressionElimination, NothingThatMayBeWrittenIsMerged) {
  const std::string out =
      after(common_subexpression_elimination, R"(graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %sizes : int[] = prim::Constant[value=[-1]]()
  %n1 : Tensor = aten::neg(%x)
  %w : Tensor = aten::mul(%y, %y)
  %v : Tensor = aten::view(%w, %sizes)
  %m1 : Tensor = aten::exp(%w)
  %r : Tensor = aten::relu_(%v)
  %m2 : Tensor = aten::exp(%w)
  %n2 : Tensor = aten::neg(%x)
  %z1 : Tensor = aten::sin(%n1)
  %z2 : Tensor = aten::sin(%n1)
  %f32 : int = prim::Constant[value=6]()
  %false : bool = prim::Constant[value=0]()
  %u : Tensor = aten::mul(%x, %x)
  %u32 : Tensor = aten::to(%u, %f32, %false, %false)
  %c1 : Tensor = aten::cos(%u)
  %ur : Tensor = aten::relu_(%u32)
  %c2 : Tensor = aten::cos(%u)
  %t : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%n1, %n2, %m1, %m2, %z1, %z2, %c1, %c2)
  return (%t)
)");
  // relu_ writes %w through the view %v: exp(%w) twice stays. to() returns its input when the
  // dtype is already right, so relu_ writes %u too. neg(%x) and sin(%n1) only read values no
  // node writes (mul and neg make fresh tensors), so they merge.
  check(out, R"(
# CHECK: %n1 : Tensor = aten::neg(%x)
# CHECK: %m1 : Tensor = aten::exp(%w)
# CHECK-NEXT: %r : Tensor = aten::relu_(%v)
# CHECK-NEXT: %m2 : Tensor = aten::exp(%w)
# CHECK-NEXT: %z1 : Tensor = aten::sin(%n1)
# CHECK: prim::TupleConstruct(%n1, %n1, %m1, %m2, %z1, %z1, %c1, %c2)
)");
}

TEST(CommonSubexpressionElimination, AWriteToAGraphInputBlocksEveryInput) {
  // A caller may pass the same tensor as %x and %y: writing %x may change %y.
  const std::string text = R"(graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::neg(%y)
  %w : Tensor = aten::neg_(%x)
  %b : Tensor = aten::neg(%y)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
  return (%t)
)";
  const std::string out = after(common_subexpression_elimination, text, false);
  check(out, "# CHECK: prim::TupleConstruct(%a, %b)");
}

TEST(CommonSubexpressionElimination, ReusesOnlyDominatingNodes) {
  const std::string out =
      after(common_subexpression_elimination, R"(graph(%x : Tensor, %c : bool, %n : int):
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::neg(%x)
  %y : Tensor = prim::If(%c)
    block0():
      %a2 : Tensor = aten::neg(%x)
      %e : Tensor = aten::exp(%a2)
      -> (%e)
    block1():
      %e2 : Tensor = aten::exp(%a)
      %s : Tensor = aten::sin(%x)
      %s4 : Tensor = aten::mul(%e2, %s)
      -> (%s4)
  %s2 : Tensor = aten::sin(%x)
  %e3 : Tensor = aten::exp(%a)
  %l : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %s3 : Tensor = aten::sin(%x)
      %m : Tensor = aten::mul(%acc, %s3)
      %m2 : Tensor = aten::mul(%acc, %s3)
      %p : Tensor = aten::add(%m, %m2, %i)
      -> (%t, %p)
  %r : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%y, %s2, %e3, %l)
  return (%r)
)");
  // Inside the If, neg(%x) reuses %a from before it; the branches do not share exp(%a), and sin
  // after the If is computed again. In the loop, sin(%x) reuses the one after the If.
  check(out, R"(
# CHECK: %a : Tensor = aten::neg(%x)
# CHECK-NEXT: %y : Tensor = prim::If(%c)
# CHECK-NEXT: block0():
# CHECK-NEXT: %e : Tensor = aten::exp(%a)
# CHECK-NEXT: -> (%e)
# CHECK-NEXT: block1():
# CHECK-NEXT: %e2 : Tensor = aten::exp(%a)
# CHECK-NEXT: %s : Tensor = aten::sin(%x)
# CHECK-NEXT: %s4 : Tensor = aten::mul(%e2, %s)
# CHECK-NEXT: -> (%s4)
# CHECK-NEXT: %s2 : Tensor = aten::sin(%x)
# CHECK-NEXT: %e3 : Tensor = aten::exp(%a)
# CHECK-NEXT: %l : Tensor = prim::Loop(%n, %t, %x)
# CHECK-NEXT: block0(%i : int, %acc : Tensor):
# CHECK-NEXT: %m : Tensor = aten::mul(%acc, %s2)
# CHECK-NEXT: %p : Tensor = aten::add(%m, %m, %i)
)");
}

TEST(CommonSubexpressionElimination, AutocastRegionsSeparateEqualNodes) {
  const std::string out =
      after(common_subexpression_elimination, R"(graph(%x : Tensor, %w : Tensor):
  %a : Tensor = aten::mm(%x, %w)
  = prim::Enter()
  %b : Tensor = aten::mm(%x, %w)
  %c : Tensor = aten::mm(%x, %w)
  = prim::Exit()
  %d : Tensor = aten::mm(%x, %w)
  %t : (Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c, %d)
  return (%t)
)");
  check(out, "# CHECK: prim::TupleConstruct(%a, %b, %b, %d)");
}

TEST(CommonSubexpressionElimination, DifferentMetadataIsNotMerged) {
  auto g = parse_graph(R"(graph(%x : Tensor, %w : Tensor):
  %a : Tensor = aten::mm(%x, %w)
  %b : Tensor = aten::mm(%x, %w)
  %c : Tensor = aten::mm(%x, %w)
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%a, %b, %c)
  return (%t)
)");
  const Symbol key = Symbol::intern("meta::autocast_enabled");
  std::vector<Node*> n = g->block()->nodes();
  n[0]->meta().emplace_back(key, IValue(true));
  n[1]->meta().emplace_back(key, IValue(false));
  n[2]->meta().emplace_back(key, IValue(true));
  EXPECT_TRUE(common_subexpression_elimination(*g));
  g->verify();
  check(g->str(), "# CHECK: prim::TupleConstruct(%a, %b, %a)");
  ASSERT_NE(n[0]->find_meta(key), nullptr);  // the survivor keeps its metadata
  EXPECT_TRUE(n[0]->find_meta(key)->to_bool());
}

TEST(CommonSubexpressionElimination, PoolsNonTensorConstantsGraphWide) {
  const std::string out = after(common_subexpression_elimination, R"(graph(%x : Tensor, %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %k1 : int = prim::Constant[value=2]()
      %a : Tensor = aten::add(%x, %x, %k1)
      -> (%a)
    block1():
      %k2 : int = prim::Constant[value=2]()
      %b : Tensor = aten::add(%x, %x, %k2)
      -> (%b)
  %z1 : float = prim::Constant[value=0.]()
  %z2 : float = prim::Constant[value=-0.]()
  %z3 : float = prim::Constant[value=0.]()
  %i : int = prim::Constant[value=1]()
  %bool : bool = prim::Constant[value=1]()
  %t1 : Float(2) = prim::Constant[value=<Tensor>]()
  %t2 : Float(2) = prim::Constant[value=<Tensor>]()
  %l1 : int[] = prim::Constant[value=[1, 2]]()
  %l2 : int[] = prim::Constant[value=[1, 2]]()
  %r : (Tensor, float, float, float, int, bool, Tensor, Tensor, int[], int[]) = prim::TupleConstruct(%y, %z1, %z2, %z3, %i, %bool, %t1, %t2, %l1, %l2)
  return (%r)
)");
  // 2, 0. and [1, 2] move to the top; 0. and -0. stay apart, as do 1 and True and the tensors.
  check(out, R"(
# CHECK: graph(%x : Tensor,
# CHECK: %k1 : int = prim::Constant[value=2]()
# CHECK-NEXT: %z1 : float = prim::Constant[value=0.]()
# CHECK-NEXT: %l1 : int[] = prim::Constant[value=[1, 2]]()
# CHECK-NEXT: %y : Tensor = prim::If(%c)
# CHECK-NEXT: block0():
# CHECK-NEXT: %a : Tensor = aten::add(%x, %x, %k1)
# CHECK: block1():
# CHECK-NEXT: %b : Tensor = aten::add(%x, %x, %k1)
# CHECK: prim::TupleConstruct(%y, %z1, %z2, %z1, %i, %bool, %t1, %t2, %l1, %l1)
)");
}

TEST(CommonSubexpressionElimination, AttributeReadsMergeUnlessAttributesAreSet) {
  const std::string text = R"(graph(%self : __torch__.M, %x : Tensor):
  %w1 : Tensor = prim::GetAttr[name="weight"](%self)
  %w2 : Tensor = prim::GetAttr[name="weight"](%self)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%w1, %w2)
  return (%t)
)";
  check(after(common_subexpression_elimination, text), "# CHECK: prim::TupleConstruct(%w1, %w1)");
  const std::string with_set = R"(graph(%self : __torch__.M, %x : Tensor):
  %w1 : Tensor = prim::GetAttr[name="weight"](%self)
  = prim::SetAttr[name="weight"](%self, %x)
  %w2 : Tensor = prim::GetAttr[name="weight"](%self)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%w1, %w2)
  return (%t)
)";
  check(after(common_subexpression_elimination, with_set, false),
        "# CHECK: prim::TupleConstruct(%w1, %w2)");
}

// ---- Differential: the interpreter gives the same results before and after ---------------------

void expect_same_value(const IValue& a, const IValue& b, const std::string& where) {
  ASSERT_EQ(a.tag(), b.tag()) << where;
  if (a.is_tensor()) {
    const Tensor ta = a.to_tensor(), tb = b.to_tensor();
    EXPECT_EQ(ta.dtype(), tb.dtype()) << where;
    EXPECT_EQ(std::vector<int64_t>(ta.sizes().begin(), ta.sizes().end()),
              std::vector<int64_t>(tb.sizes().begin(), tb.sizes().end()))
        << where;
    EXPECT_EQ(testing::values(ta), testing::values(tb)) << where;
  } else if (a.is_list() || a.is_tuple()) {
    const auto& ea = a.is_list() ? a.list_elems() : a.tuple_elems();
    const auto& eb = b.is_list() ? b.list_elems() : b.tuple_elems();
    ASSERT_EQ(ea.size(), eb.size()) << where;
    for (size_t i = 0; i < ea.size(); ++i) expect_same_value(ea[i], eb[i], where);
  } else {
    EXPECT_TRUE(a.equals(b)) << where << ": " << a.repr() << " vs " << b.repr();
  }
}

// Fresh inputs for each run (the graphs write some of them); tensors are cloned.
Stack copy_inputs(const Stack& in) {
  Stack out;
  for (const IValue& v : in) out.push_back(v.is_tensor() ? IValue(v.to_tensor().clone()) : v);
  return out;
}

// Runs `text` on `inputs` as is and after `passes` (verifying after each), with the same seed;
// both the outputs and the inputs (which the graph may write) must agree.
void expect_same_results(const std::string& text, const Stack& inputs,
                         const std::vector<PassFn>& passes) {
  auto g = parse_checked(text);
  Stack in_before = copy_inputs(inputs);
  Stack before = in_before;
  manual_seed(7);
  Code(*g).run(before);
  bool changed = false;
  for (PassFn p : passes) {
    changed |= p(*g);
    g->verify();
  }
  if (passes.size() > 1) {
    EXPECT_TRUE(changed) << "the pipeline left the graph as it was";
  }
  Stack in_after = copy_inputs(inputs);
  Stack after_run = in_after;
  manual_seed(7);
  Code(*g).run(after_run);
  const std::string where = "graph after the passes:\n" + g->str();
  ASSERT_EQ(before.size(), after_run.size()) << where;
  for (size_t i = 0; i < before.size(); ++i) expect_same_value(before[i], after_run[i], where);
  for (size_t i = 0; i < inputs.size(); ++i) expect_same_value(in_before[i], in_after[i], where);
}

const char* kDiffGraphs[] = {
    // Constants, duplicated work, a constant branch, a loop that never runs, tuples.
    R"(graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %one2 : int = prim::Constant[value=1]()
  %c : Float(2, 3) = prim::Constant[value=<Tensor>]()
  %d : int = aten::dim(%c)
  %a : Tensor = aten::add(%x, %x, %one)
  %b : Tensor = aten::add(%x, %x, %one2)
  %y : Tensor = prim::If(%t)
    block0():
      %p : Tensor = aten::mul(%a, %b)
      -> (%p)
    block1():
      -> (%a)
  %never : Tensor = prim::Loop(%zero, %t, %y)
    block0(%i : int, %acc : Tensor):
      %q : Tensor = aten::neg(%acc)
      -> (%t, %q)
  %tup : (Tensor, int) = prim::TupleConstruct(%never, %d)
  %u : Tensor, %v : int = prim::TupleUnpack(%tup)
  %l : Tensor, %cnt : int = prim::Loop(%n, %t, %u, %v)
    block0(%j : int, %acc2 : Tensor, %k : int):
      %s1 : Tensor = aten::sin(%acc2)
      %s2 : Tensor = aten::sin(%acc2)
      %k2 : int = aten::dim(%s1)
      %r : Tensor = aten::add(%s1, %s2, %k)
      -> (%t, %r, %k2)
  return (%l, %cnt)
)",
    // In-place writes through views, between equal computations; random draws; batch_norm's
    // running statistics updated by a node whose result is unused.
    R"(graph(%x : Tensor, %y : Tensor, %rm : Tensor, %rv : Tensor):
  %one : int = prim::Constant[value=1]()
  %sizes : int[] = prim::Constant[value=[-1]]()
  %w : Tensor = aten::mul(%y, %y)
  %v : Tensor = aten::view(%w, %sizes)
  %m1 : Tensor = aten::exp(%w)
  %r : Tensor = aten::neg_(%v)
  %m2 : Tensor = aten::exp(%w)
  %dead : Tensor = aten::exp(%w)
  %none : NoneType = prim::Constant()
  %train : bool = prim::Constant[value=1]()
  %n1 : Tensor = aten::randn_like(%x, %none, %none, %train)
  %n2 : Tensor = aten::randn_like(%x, %none, %none, %train)
  %xs : Tensor = aten::sin(%x)
  %xw : Tensor = aten::add_(%x, %one, %one)
  %xs2 : Tensor = aten::sin(%x)
  %f32 : int = prim::Constant[value=6]()
  %false : bool = prim::Constant[value=0]()
  %u : Tensor = aten::mul(%y, %y)
  %u32 : Tensor = aten::to(%u, %f32, %false, %false)
  %c1 : Tensor = aten::sin(%u)
  %ur : Tensor = aten::neg_(%u32)
  %c2 : Tensor = aten::sin(%u)
  %mom : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %bnx : Tensor = aten::unsqueeze(%x, %one)
  %bn : Tensor = aten::batch_norm(%bnx, %none, %none, %rm, %rv, %train, %mom, %eps, %train)
  %t : (Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor) = prim::TupleConstruct(%m1, %m2, %n1, %n2, %xs, %xs2, %c1, %c2)
  return (%t)
)",
    // Dead loop-carried values, dead If outputs, nested control flow.
    R"(graph(%x : Tensor, %n : int, %c : bool):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %acc : Tensor, %cnt : int, %other : Tensor = prim::Loop(%n, %t, %x, %one, %x)
    block0(%i : int, %a : Tensor, %k : int, %o : Tensor):
      %y : Tensor, %z : Tensor = prim::If(%c)
        block0():
          %p : Tensor = aten::add(%a, %x, %one)
          %p2 : Tensor = aten::add(%a, %x, %one)
          %q : Tensor = aten::exp(%o)
          -> (%p, %q)
        block1():
          %s : Tensor = aten::sub(%a, %x, %one)
          -> (%s, %o)
      %k2 : int = aten::size(%y, %zero)
      -> (%t, %y, %k2, %z)
  return (%acc)
)",
};

TEST(PassesDifferential, SameResultsAfterEachPassAndThePipeline) {
  const Stack inputs[] = {
      {IValue(testing::random_tensor({2, 3}, ScalarType::Float32, 1)), IValue(int64_t{3})},
      {IValue(testing::random_tensor({4}, ScalarType::Float32, 2)),
       IValue(testing::random_tensor({4}, ScalarType::Float32, 3)), IValue(ops::zeros(V{1})),
       IValue(ops::ones(V{1}))},
      {IValue(testing::random_tensor({3}, ScalarType::Float32, 4)), IValue(int64_t{4}),
       IValue(true)},
  };
  const std::vector<std::vector<PassFn>> pipelines = {
      {constant_propagation},
      {dead_code_elimination},
      {common_subexpression_elimination},
      {constant_propagation, common_subexpression_elimination, dead_code_elimination},
  };
  for (size_t i = 0; i < std::size(kDiffGraphs); ++i) {
    for (const auto& passes : pipelines) {
      SCOPED_TRACE("graph " + std::to_string(i));
      expect_same_results(kDiffGraphs[i], inputs[i], passes);
    }
  }
  // The branch not taken, and zero trips.
  Stack other{IValue(testing::random_tensor({3}, ScalarType::Float32, 5)), IValue(int64_t{0}),
              IValue(false)};
  expect_same_results(kDiffGraphs[2], other, pipelines.back());
  Stack more{IValue(testing::random_tensor({3}, ScalarType::Float32, 6)), IValue(int64_t{5}),
             IValue(false)};
  expect_same_results(kDiffGraphs[2], more, pipelines.back());
}

TEST(PassesDifferential, ModuleAttributesReadOnce) {
  const std::string text = R"(graph(%self : __torch__.M, %x : Tensor):
  %w1 : Tensor = prim::GetAttr[name="weight"](%self)
  %a : Tensor = aten::mul(%x, %w1)
  %w2 : Tensor = prim::GetAttr[name="weight"](%self)
  %b : Tensor = aten::mul(%x, %w2)
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%a, %b, %one)
  return (%r)
)";
  Ref<ModuleObject> m(new ModuleObject("__torch__.M"));
  m->set_attr("weight", IValue(ops::full(V{3}, 2.0)));
  auto g = parse_graph(text);
  EXPECT_TRUE(common_subexpression_elimination(*g));
  g->verify();
  check(g->str(), "# CHECK: %r : Tensor = aten::add(%a, %a, %one)");
  Stack s{IValue(Ref<ObjectBase>(m)), IValue(ops::ones(V{3}))};
  Code(*g).run(s);
  EXPECT_EQ(testing::values(s[0].to_tensor()), (std::vector<double>{4, 4, 4}));
}

// ---- Golden files: a pass list, an input graph and the expected result ------------------------

class GoldenPasses : public ::testing::TestWithParam<std::string> {};

// "# PASSES: a b c" names the passes to run in order (the pipeline's names:
// script/passes/pipeline.h); other lines starting with '#' are comments and CHECK directives; the
// rest is the input graph.
TEST_P(GoldenPasses, MatchesChecks) {
  std::ifstream f(GetParam());
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::string graph_text;
  std::vector<const Pass*> passes;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("# PASSES:")) {
      std::istringstream names(line.substr(9));
      for (std::string name; names >> name;) {
        passes.push_back(find_pass(name));
        EXPECT_NE(passes.back(), nullptr) << "unknown pass '" << name << "'";
      }
    } else if (!line.starts_with("#")) {
      graph_text += line + "\n";
    }
  }
  ASSERT_FALSE(passes.empty()) << "no '# PASSES:' line";
  auto g = parse_checked(graph_text);
  for (const Pass* p : passes) {
    ASSERT_NE(p, nullptr);
    p->run(*g, AutocastContext{});
    g->verify();
  }
  const std::string printed = g->str();
  check(printed, text);
  EXPECT_EQ(parse_graph(printed)->str(), printed);
}

std::vector<std::string> golden_files() {
  std::vector<std::string> out;
  for (const auto& e :
       std::filesystem::directory_iterator(AMPJIT_SOURCE_DIR "/tests/golden/passes"))
    if (e.path().extension() == ".graph") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

INSTANTIATE_TEST_SUITE_P(Files, GoldenPasses, ::testing::ValuesIn(golden_files()),
                         [](const auto& info) {
                           return std::filesystem::path(info.param).stem().string();
                         });

}  // namespace
}  // namespace ampjit
