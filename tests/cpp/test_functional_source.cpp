// torch.nn.functional from its own source, without Python (Note [Functionals from their own
// source] in frontend/ampjit/nn/functional.py): the library's embedded copy of that file is the
// file, every def compiles (or names the op the table lacks), a C++ program calling F.* runs with
// the eager ops' results, the static resolver binds ops by name, and BroadcastingList parameters
// take one int.
#include <gmock/gmock.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include "runtime/interpreter.h"
#include "runtime/ops.h"
#include "script/compiler.h"
#include "script/emit/emitter.h"
#include "script/parser.h"
#include "script/static_resolver.h"
#include "tests/cpp/testing.h"

namespace ampjit::script {
namespace {

using ::testing::HasSubstr;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The same sizes and values (NaN-free inputs).
bool same(const Tensor& a, const Tensor& b) {
  return std::ranges::equal(a.sizes(), b.sizes()) && testing::values(a) == testing::values(b);
}

TEST(FunctionalSource, TheEmbeddedTextIsTheFile) {
  EXPECT_EQ(functional_source(),
            read_file(std::string(AMPJIT_SOURCE_DIR) + "/frontend/ampjit/nn/functional.py"));
}

// Each def of the module, compiled on its own: the ones that fail are those whose ops the table
// does not have yet, pinned with the op, so the list shrinks as ops land.
TEST(FunctionalSource, EveryDefCompilesOrNamesItsMissingOp) {
  auto source = std::make_shared<Source>(std::string(functional_source()), "functional.py");
  std::shared_ptr<const Module> file(parse_module(source));
  auto files = std::make_shared<FileResolver>(static_resolver(*file), file, "torch.nn.functional");
  std::map<std::string, std::string> failures;
  size_t compiled = 0;
  for (const FunctionDef* def : files->defs()) {
    detail::Session session;
    try {
      auto fn = session.compile_source_fn(files->resolve(def->name, def->range), SourceRange{});
      EXPECT_EQ(fn->name(), "__torch__.torch.nn.functional." + def->name);
      ++compiled;
    } catch (const CompileError& e) {
      const std::string msg = e.what();
      failures[def->name] = msg.substr(msg.find(": ") + 2, msg.find('\n') - msg.find(": ") - 2);
    }
  }
  const std::map<std::string, std::string> pinned = {};
  EXPECT_EQ(failures, pinned);
  EXPECT_EQ(compiled, files->defs().size() - pinned.size());
}

Stack run(const std::shared_ptr<Function>& fn, Stack stack) {
  fn->run(stack);
  return stack;
}

std::shared_ptr<Function> compile_file(const std::string& text) {
  auto source = std::make_shared<Source>(text, "model.py");
  auto module = parse_module(source);
  return compile_source(source, static_resolver(*module)).back();
}

TEST(FunctionalSource, ACppProgramCallingFunctionalRunsTheEagerOps) {
  auto fn = compile_file(
      "import torch\n"
      "import torch.nn.functional as F\n"
      "def f(x, y):\n"
      "    a = F.l1_loss(x, y, reduce=False)\n"
      "    b = F.max_pool2d(x, 2)\n"
      "    c = F.conv2d(x, y, padding='same')\n"
      "    return a, b, c, F.relu(x, inplace=False)\n");
  const std::string g = fn->graph()->str();
  EXPECT_THAT(g, HasSubstr("name=\"__torch__.torch.nn.functional.l1_loss\""));
  EXPECT_THAT(g, HasSubstr("name=\"__torch__.torch.nn.functional._max_pool2d\""));
  EXPECT_THAT(g, HasSubstr("aten::conv2d("));  // F.conv2d is the op (conv2d.padding overload)
  Tensor x = testing::random_tensor({1, 1, 4, 4}, ScalarType::Float32, 1);
  Tensor y = testing::random_tensor({1, 1, 4, 4}, ScalarType::Float32, 2);
  Stack out = run(fn, {x, y});
  const auto& r = out.at(0).tuple_elems();
  EXPECT_TRUE(same(r[0].to_tensor(), ops::l1_loss(x, y, int64_t{0})));
  EXPECT_TRUE(same(r[1].to_tensor(), ops::max_pool2d(x, std::vector<int64_t>{2, 2})));
  EXPECT_TRUE(same(r[2].to_tensor(), ops::conv2d_padding(x, y, IValue(), std::vector<int64_t>{1},
                                                         std::string("same"))));
  EXPECT_TRUE(same(r[3].to_tensor(), ops::relu(x)));
}

// Note [Library functions compile once]: two programs calling F.relu call the same Function.
TEST(FunctionalSource, ItsDefsCompileOncePerProcess) {
  auto callee_of = [](const std::shared_ptr<Function>& fn) -> const Function* {
    for (const Node* n : fn->graph()->block()->nodes())
      if (n->kind() == sym::prim::CallFunction)
        return static_cast<const FunctionObject*>(n->attr(sym::attr::value).object())->fn.get();
    return nullptr;
  };
  const std::string text =
      "import torch.nn.functional as F\n"
      "def f(x):\n"
      "    return F.relu(x)\n";
  const Function* a = callee_of(compile_file(text));
  const Function* b = callee_of(compile_file(text));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->name(), "__torch__.torch.nn.functional.relu");
}

TEST(FunctionalSource, BroadcastingListParametersTakeOneInt) {
  auto fn = compile_file(
      "from typing import List\n"
      "def f(k: BroadcastingList2[int], s: Optional[BroadcastingList2[int]] = None, "
      "p: BroadcastingList2[int] = 0) -> List[int]:\n"
      "    if s is None:\n"
      "        return k + p\n"
      "    return k + s + p\n"
      "def g() -> List[int]:\n"
      "    return f(3) + f([1, 2], 4, p=[5, 6])\n");
  Stack out = run(fn, {});
  EXPECT_EQ(out.at(0).to_int_list(), (std::vector<int64_t>{3, 3, 0, 0, 1, 2, 4, 4, 5, 6}));
}

TEST(FunctionalSource, NotIsScriptingCompilesOneSide) {
  // The Python-only side names something script cannot compile; it is not compiled, as in torch.
  auto fn = compile_file(
      "import torch\n"
      "def f(x):\n"
      "    if not torch.jit.is_scripting():\n"
      "        x = undefined_python_helper(x)\n"
      "    if torch.jit.is_scripting() or undefined_name:\n"
      "        x = x + 1\n"
      "    return x\n");
  Tensor x = ops::zeros(std::vector<int64_t>{2});
  EXPECT_TRUE(same(run(fn, {x}).at(0).to_tensor(), ops::ones(std::vector<int64_t>{2})));
}

TEST(FunctionalSource, WarningsWarnIsAUserWarningAtItsLine) {
  auto fn = compile_file(
      "import warnings\n"
      "def f(n: int) -> int:\n"
      "    warnings.warn('careful: {}'.format(n), stacklevel=2)\n"
      "    return n\n");
  static std::vector<std::string> seen;
  seen.clear();
  WarningHandler prev = set_warning_handler(+[](const Diagnostic& w) {
    seen.push_back(fmt::format("{} {}: {}", w.range.location_str(),
                               warning_category_name(w.category), w.message));
  });
  run(fn, {IValue(int64_t{3})});
  set_warning_handler(prev);
  EXPECT_EQ(seen, std::vector<std::string>{"model.py:3:5 UserWarning: careful: 3"});
}

}  // namespace
}  // namespace ampjit::script
