// The script compiler: programs compiled and run against hand-computed or eager results, the graphs
// it emits, and its diagnostics pinned by message and line:col.
#include <gmock/gmock.h>

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <random>

#include "runtime/interpreter.h"
#include "runtime/module_object.h"
#include "script/compiler.h"
#include "tests/cpp/testing.h"

namespace ampjit::script {
namespace {

using ::testing::HasSubstr;
using V = std::vector<int64_t>;

// Compiles a file's defs; the last one is the entry point.
std::shared_ptr<Function> compile(const std::string& text, const std::string& file = "test.py") {
  return compile_source(std::make_shared<Source>(text, file), builtin_resolver()).back();
}

IValue run1(const std::shared_ptr<Function>& fn, Stack args) {
  Stack out = (*fn)(std::move(args));
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

std::string compile_error(const std::string& text) {
  try {
    compile(text);
  } catch (const CompileError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ScriptCompiler, StraightLineTensorCode) {
  auto fn = compile(
      "def f(x, w):\n"
      "    y = torch.relu(x @ w) + 1.0\n"
      "    return y * 2\n");
  Tensor x = testing::random_tensor({3, 4}, ScalarType::Float32, 1);
  Tensor w = testing::random_tensor({4, 2}, ScalarType::Float32, 2);
  Tensor got = run1(fn, {x, w}).to_tensor();
  Tensor want = ops::mul_Scalar(ops::add_Scalar(ops::relu(ops::matmul(x, w)), Scalar(1.0)),
                                Scalar(int64_t{2}));
  EXPECT_EQ(testing::values(got), testing::values(want));
}

}  // namespace
}  // namespace ampjit::script

namespace ampjit::script {
namespace {

int64_t run_int(const std::string& text, Stack args) {
  return run1(compile(text), std::move(args)).to_int();
}

TEST(ScriptCompiler, IntArithmeticFollowsPython) {
  EXPECT_EQ(run_int("def f(a: int, b: int) -> int:\n    return a // b + a % b * 10\n",
                    {int64_t{-7}, int64_t{2}}),
            -4 + 10);
  EXPECT_DOUBLE_EQ(
      run1(compile("def f(a: int, b: int):\n    return a / b\n"), {int64_t{7}, int64_t{2}})
          .to_double(),
      3.5);
  EXPECT_EQ(run_int("def f(a: int) -> int:\n    return -a if a < 0 else a\n", {int64_t{-3}}), 3);
  EXPECT_EQ(run_int("def f(a: int) -> int:\n    return 1 if 0 < a < 10 else 2\n", {int64_t{5}}), 1);
  EXPECT_EQ(run_int("def f(a: int) -> int:\n    return 1 if 0 < a < 10 else 2\n", {int64_t{50}}),
            2);
}

const char* kControl =
    "def f(n: int) -> int:\n"
    "    total = 0\n"
    "    for i in range(n):\n"
    "        if i % 2 == 0:\n"
    "            continue\n"
    "        if i > 7:\n"
    "            break\n"
    "        total += i\n"
    "    return total\n";

TEST(ScriptCompiler, ForBreakContinue) {
  auto fn = compile(kControl);
  for (int64_t n : {0, 1, 4, 8, 20}) {
    int64_t want = 0;
    for (int64_t i = 0; i < n; ++i) {
      if (i % 2 == 0) continue;
      if (i > 7) break;
      want += i;
    }
    EXPECT_EQ(run1(fn, {n}).to_int(), want) << n;
  }
}

TEST(ScriptCompiler, WhileAndEarlyReturnInLoop) {
  auto fn = compile(
      "def f(n: int) -> int:\n"
      "    i = 0\n"
      "    while i < n:\n"
      "        if i * i > 50:\n"
      "            return i\n"
      "        i += 1\n"
      "    return -1\n");
  EXPECT_EQ(run1(fn, {int64_t{100}}).to_int(), 8);
  EXPECT_EQ(run1(fn, {int64_t{5}}).to_int(), -1);
}

TEST(ScriptCompiler, EarlyReturnInBranchIsAPlainIf) {
  auto fn = compile(
      "def f(x, flag: bool):\n"
      "    if flag:\n"
      "        return x + 1\n"
      "    y = x * 2\n"
      "    return y\n");
  const std::string g = fn->graph()->str();
  EXPECT_THAT(g, HasSubstr("prim::If"));
  EXPECT_THAT(g, ::testing::Not(HasSubstr("prim::Uninitialized")));
  Tensor x = ops::ones(V{2});
  EXPECT_EQ(testing::values(run1(fn, {x, true}).to_tensor()), (std::vector<double>{2, 2}));
  EXPECT_EQ(testing::values(run1(fn, {x, false}).to_tensor()), (std::vector<double>{2, 2}));
}

TEST(ScriptCompiler, NestedLoopsWithReturnAndBreak) {
  auto fn = compile(
      "def f(n: int) -> int:\n"
      "    count = 0\n"
      "    for i in range(n):\n"
      "        for j in range(n):\n"
      "            if j > i:\n"
      "                break\n"
      "            count += 1\n"
      "            if count == 40:\n"
      "                return -count\n"
      "    return count\n");
  EXPECT_EQ(run1(fn, {int64_t{4}}).to_int(), 10);
  EXPECT_EQ(run1(fn, {int64_t{20}}).to_int(), -40);
}

TEST(ScriptCompiler, ListsAndComprehensions) {
  EXPECT_EQ(run_int("def f(n: int) -> int:\n"
                    "    xs = [i * i for i in range(n) if i % 2 == 1]\n"
                    "    xs.append(100)\n"
                    "    return xs[-1] + xs[0] + len(xs) + sum(xs[1:3])\n",
                    {int64_t{6}}),
            100 + 1 + 4 + (9 + 25));
  EXPECT_EQ(run_int("def f(n: int) -> int:\n"
                    "    ys: List[int] = []\n"
                    "    for v in [3, 1, 2]:\n"
                    "        ys.append(v * n)\n"
                    "    return max(ys) - min(ys)\n",
                    {int64_t{5}}),
            10);
}

TEST(ScriptCompiler, TuplesAndUnpacking) {
  EXPECT_EQ(run_int("def g(a: int, b: int) -> Tuple[int, int]:\n"
                    "    return b, a\n"
                    "def f(a: int, b: int) -> int:\n"
                    "    x, y = g(a, b)\n"
                    "    t = (x, y, 7)\n"
                    "    return t[0] * 100 + t[1] * 10 + t[-1]\n",
                    {int64_t{1}, int64_t{2}}),
            217);
}

TEST(ScriptCompiler, OptionalRefinement) {
  auto fn = compile(
      "def f(x, b: Optional[Tensor] = None):\n"
      "    if b is None:\n"
      "        return x\n"
      "    return x + b\n");
  Tensor x = ops::ones(V{2});
  EXPECT_EQ(testing::values(run1(fn, {x, IValue()}).to_tensor()), (std::vector<double>{1, 1}));
  EXPECT_EQ(testing::values(run1(fn, {x, x}).to_tensor()), (std::vector<double>{2, 2}));
  auto g = compile(
      "def f(x, b: Optional[Tensor]):\n"
      "    if b is not None and b.sum() > 0:\n"
      "        x = x + b\n"
      "    return x\n");
  EXPECT_EQ(testing::values(run1(g, {x, x}).to_tensor()), (std::vector<double>{2, 2}));
  EXPECT_EQ(testing::values(run1(g, {x, IValue()}).to_tensor()), (std::vector<double>{1, 1}));
}

TEST(ScriptCompiler, TensorIndexingAndMethods) {
  auto fn = compile(
      "def f(x):\n"
      "    y = x[1:, 0]\n"
      "    z = x.view(-1)[None]\n"
      "    return y.sum() + z.size(1) + x.shape[0] + x.dim()\n");
  Tensor x = Tensor(ops::arange(6, ScalarType::Float32)).view(V{3, 2});
  // y = [2, 4] -> 6; z.size(1) = 6; shape[0] = 3; dim = 2
  EXPECT_EQ(testing::values(run1(fn, {x}).to_tensor()), (std::vector<double>{17}));
}

TEST(ScriptCompiler, AssertAndRaise) {
  auto fn = compile(
      "def f(n: int) -> int:\n"
      "    assert n >= 0, \"n must be non-negative\"\n"
      "    if n > 100:\n"
      "        raise ValueError(\"too big\")\n"
      "    return n\n");
  EXPECT_EQ(run1(fn, {int64_t{3}}).to_int(), 3);
  EXPECT_THROW(
      {
        try {
          run1(fn, {int64_t{-1}});
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("AssertionError: n must be non-negative"));
          throw;
        }
      },
      Error);
  EXPECT_THROW(
      {
        try {
          run1(fn, {int64_t{200}});
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr("ValueError: too big"));
          throw;
        }
      },
      Error);
}

TEST(ScriptCompiler, FunctionalAndDtypes) {
  auto fn = compile(
      "def f(x, w):\n"
      "    h = torch.nn.functional.linear(x, w)\n"
      "    h = torch.nn.functional.gelu(h)\n"
      "    return torch.nn.functional.softmax(h.to(torch.float64), dim=-1).to(torch.float32)\n");
  Tensor x = testing::random_tensor({2, 3}, ScalarType::Float32, 3);
  Tensor w = testing::random_tensor({4, 3}, ScalarType::Float32, 4);
  Tensor got = run1(fn, {x, w}).to_tensor();
  EXPECT_EQ(got.dtype(), ScalarType::Float32);
  EXPECT_EQ(V(got.sizes().begin(), got.sizes().end()), (V{2, 4}));
}

}  // namespace
}  // namespace ampjit::script

namespace ampjit::script {
namespace {

// ---- Diagnostics: message, file:line:col, the source line and the caret ----

struct DiagCase {
  const char* name;
  const char* source;
  const char* message;  // a substring of the first line
  const char* where;    // "test.py:L:C"
};

const DiagCase kDiagnostics[] = {
    {"undefined", "def f(x):\n    return x + y\n", "undefined value y", "test.py:2:16"},
    {"arg_type", "def f(x):\n    return torch.relu('a')\n",
     "Expected a value of type 'Tensor' for argument 'self' but instead found type 'str'",
     "test.py:2:12"},
    {"no_such_method", "def f(x):\n    return x.frobnicate()\n",
     "'Tensor' object has no attribute or method 'frobnicate'", "test.py:2:12"},
    {"branch_mismatch",
     "def f(x, c: bool):\n    if c:\n        y = 1\n    else:\n        y = 1.5\n    return y\n",
     "Type mismatch: y is set to type int in the true branch and type float in the false branch",
     "test.py:2:5"},
    {"one_branch", "def f(x, c: bool):\n    if c:\n        y = x\n    return y\n",
     "y is not defined in the false branch", "test.py:4:12"},
    {"loop_type",
     "def f(x, n: int):\n    y = 0\n    for i in range(n):\n        y = x\n    return y\n",
     "Variable 'y' previously had type int but is now being assigned to a value of type Tensor",
     "test.py:4:9"},
    {"return_annot", "def f(x) -> int:\n    return x\n",
     "Return value was annotated as having type int but is actually of type Tensor",
     "test.py:2:12"},
    {"unknown_type", "def f(x: Foo):\n    return x\n", "Unknown type name 'Foo'", "test.py:1:10"},
    {"dict", "def f(x):\n    d = {'a': x, 1: x}\n    return x\n",
     "Dict keys must contain only a single type, expected: str but found int instead",
     "test.py:2:18"},
    {"nested_def", "def f(x):\n    def g(y):\n        return y\n    return x\n",
     "nested function definitions are not supported", "test.py:2:5"},
    {"with_other", "def f(x):\n    with x:\n        pass\n    return x\n",
     "`with` in script supports only autocast context managers", "test.py:2:10"},
    {"varargs", "def f(*xs):\n    return 1\n", "variable arguments", "test.py:1:7"},
    {"break_outside", "def f(x):\n    break\n", "'break' outside loop", "test.py:2:5"},
    {"decorator", "@torch.autocast('cpu')\ndef f(x):\n    return x\n",
     "TorchScript error: @autocast() decorator is not supported in script mode", "test.py:1:2"},
    {"bad_kwarg", "def f(x):\n    return torch.sum(x, dimm=1)\n", "Keyword argument dimm unknown.",
     "test.py:2:12"},
    {"not_iterable", "def f(x, n: int):\n    for i in n:\n        pass\n    return x\n",
     "'int' object is not iterable in script", "test.py:2:14"},
    {"list_types", "def f(x):\n    return [1, 2.5]\n", "Lists must contain only a single type",
     "test.py:2:12"},
};

TEST(ScriptCompilerDiagnostics, MessageLineColumnAndCaret) {
  for (const DiagCase& c : kDiagnostics) {
    const std::string err = compile_error(c.source);
    EXPECT_THAT(err, HasSubstr(c.message)) << c.name;
    EXPECT_EQ(err.rfind(std::string(c.where) + ": ", 0), 0u) << c.name << ": " << err;
    EXPECT_THAT(err, HasSubstr("~")) << c.name;  // the caret line
  }
}

TEST(ScriptCompilerDiagnostics, ErrorInCalleeCarriesTheCallChain) {
  const std::string err = compile_error(
      "def inner(x):\n"
      "    return x + undefined_thing\n"
      "def outer(x):\n"
      "    return inner(x) * 2\n");
  EXPECT_EQ(err.rfind("test.py:2:16: undefined value undefined_thing", 0), 0u) << err;
  EXPECT_THAT(err, HasSubstr("called from test.py:4:12"));
}

TEST(ScriptCompilerDiagnostics, SeveralOverloadsListEachReason) {
  const std::string err = compile_error("def f(x):\n    return torch.add(x, 'a')\n");
  EXPECT_THAT(err, HasSubstr("Arguments for call to aten::add are not valid."));
  EXPECT_THAT(
      err, HasSubstr("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"));
  EXPECT_THAT(err, HasSubstr("for argument 'other' but instead found type 'str'"));
}

// ---- Autocast regions ----

TEST(ScriptCompilerAutocast, WithAutocastBecomesEnterExitOnAnAutocastObject) {
  auto fn = compile(
      "def f(x, w):\n"
      "    with torch.autocast('cpu', dtype=torch.bfloat16):\n"
      "        y = torch.mm(x, w)\n"
      "    return y\n");
  const std::string g = fn->graph()->str();
  EXPECT_THAT(g, HasSubstr("__torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()"));
  EXPECT_THAT(g, HasSubstr("prim::SetAttr[name=\"_enabled\"]"));
  EXPECT_THAT(g, HasSubstr("prim::Enter"));
  EXPECT_THAT(g, HasSubstr("prim::Exit"));
  Tensor x = testing::random_tensor({2, 3}, ScalarType::Float32, 5);
  Tensor w = testing::random_tensor({3, 2}, ScalarType::Float32, 6);
  // torchscript semantics: the JIT autocast pass turns the region into casts: mm runs in bfloat16.
  Tensor y = run1(fn, {x, w}).to_tensor();
  EXPECT_EQ(y.dtype(), ScalarType::BFloat16);
  const std::string opt = fn->optimized_graph()->str();
  EXPECT_THAT(opt, HasSubstr("aten::_autocast_to_reduced_precision"));
}

TEST(ScriptCompilerAutocast, RuntimeEnabledIsTorchsConstantError) {
  auto fn = compile(
      "def f(x, on: bool):\n"
      "    with torch.autocast('cpu', enabled=on):\n"
      "        y = torch.mm(x, x)\n"
      "    return y\n");
  Tensor x = ops::ones(V{2, 2});
  try {
    run1(fn, {x, true});
    FAIL() << "expected the autocast pass's error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Autocast _enabled argument must be a constant"));
    EXPECT_THAT(e.what(), HasSubstr("test.py:2:"));
  }
}

// ---- Modules ----

std::shared_ptr<ModuleInfo> linear_module() {
  auto m = std::make_shared<ModuleInfo>();
  m->class_name = "__torch__.Lin";
  m->attrs.push_back({"training", Type::bool_(), false, {}, nullptr});
  m->attrs.push_back({"weight", Type::tensor(), false, {}, nullptr});
  m->attrs.push_back({"scale", Type::float_(), true, IValue(2.0), nullptr});
  m->methods["forward"] = std::make_shared<Source>(
      "def forward(self, x):\n    return self.helper(x) * self.scale\n", "lin.py");
  m->methods["helper"] = std::make_shared<Source>(
      "def helper(self, x):\n    return torch.nn.functional.linear(x, self.weight)\n", "lin.py", 3);
  m->resolver = builtin_resolver();
  return m;
}

TEST(ScriptCompilerModules, AttributesAreGetAttrAndConstantsInline) {
  auto info = linear_module();
  auto fn = compile_module(info);
  const std::string g = fn->graph()->str();
  EXPECT_THAT(g, HasSubstr("prim::CallFunction"));  // self.helper(x)
  auto obj = Ref<ModuleObject>(new ModuleObject(info->class_name));
  Tensor w = testing::random_tensor({2, 3}, ScalarType::Float32, 7);
  obj->set_attr("training", IValue(false));
  obj->set_attr("weight", IValue(w));
  Tensor x = testing::random_tensor({4, 3}, ScalarType::Float32, 8);
  Stack out = (*fn)({IValue(Ref<ObjectBase>(obj)), x});
  Tensor want = ops::mul_Scalar(ops::linear(x, w, std::nullopt), Scalar(2.0));
  EXPECT_EQ(testing::values(out[0].to_tensor()), testing::values(want));
  // The weight is read at run time: replacing it changes the result.
  obj->set_attr("weight", IValue(ops::zeros_like(w)));
  EXPECT_EQ(testing::values((*fn)({IValue(Ref<ObjectBase>(obj)), x})[0].to_tensor()),
            std::vector<double>(8, 0.0));
}

TEST(ScriptCompilerModules, UnknownAttributeNamesTheClass) {
  auto info = linear_module();
  info->methods["forward"] =
      std::make_shared<Source>("def forward(self, x):\n    return self.bias + x\n", "lin.py");
  try {
    compile_module(info);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("lin.py:2:12: Module '__torch__.Lin' has no attribute 'bias'"));
  }
}

// ---- Robustness: mutated sources never crash the compiler ----

TEST(ScriptCompilerFuzz, MutationsOfValidProgramsGiveErrorsNotCrashes) {
  const std::vector<std::string> seeds = {
      kControl,
      "def f(x, b: Optional[Tensor] = None):\n    if b is None:\n        return x\n    return x + "
      "b\n",
      "def f(n: int) -> int:\n    xs = [i * i for i in range(n) if i % 2 == 1]\n    return "
      "len(xs)\n",
      "def f(x):\n    with torch.autocast('cpu'):\n        y = x @ x\n    return y[0, 1:]\n"};
  std::mt19937 rng(1234);
  const std::string alphabet = "()[]:,.=+-*/%<>!&|^~ \n\t0123456789abcxyzNoneTrue'\"#\\@";
  int compiled = 0, errors = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = seeds[static_cast<size_t>(iter) % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits; ++e) {
      const size_t pos = rng() % (s.size() + 1);
      switch (rng() % 3) {
        case 0:
          s.insert(pos, 1, alphabet[rng() % alphabet.size()]);
          break;
        case 1:
          if (pos < s.size()) s.erase(pos, 1);
          break;
        default:
          if (pos < s.size()) s[pos] = alphabet[rng() % alphabet.size()];
          break;
      }
    }
    try {
      compile(s);
      ++compiled;
    } catch (const CompileError&) {
      ++errors;
    } catch (const Error&) {
      ++errors;  // e.g. the IR verifier or an op's own argument check
    }
  }
  EXPECT_GT(errors, 100);
  EXPECT_GT(compiled, 10);
}

}  // namespace
}  // namespace ampjit::script

namespace ampjit::script {
namespace {

TEST(ScriptCompiler, SubscriptedValueIsEvaluatedOnce) {
  auto fn = compile(
      "def f(ys: List[List[int]]) -> int:\n"
      "    return ys.pop()[0]\n");
  const std::string g = fn->graph()->str();
  EXPECT_EQ(g.find("aten::pop"), g.rfind("aten::pop")) << g;
  IValue ys = IValue::list(
      {IValue::list({IValue(int64_t{1})}), IValue::list({IValue(int64_t{7}), IValue(int64_t{8})})});
  EXPECT_EQ(run1(fn, {ys}).to_int(), 7);
  EXPECT_EQ(ys.list_elems().size(), 1u);
}

TEST(ScriptCompiler, GraphsRoundTripThroughTheTextForm) {
  // Hidden variables (exit flags, short-circuit temporaries) never name values in the text.
  auto fn = compile(
      "def f(n: int) -> int:\n"
      "    i = 0\n"
      "    while i < n:\n"
      "        if i == 3 and n > 1:\n"
      "            break\n"
      "        i += 1\n"
      "    return i\n");
  const std::string text = fn->graph()->str();
  EXPECT_EQ(text.find('$'), std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("block0(%"));
  auto parsed = parse_graph(text);
  EXPECT_EQ(parsed->str(), text);
  EXPECT_EQ(run1(fn, {int64_t{10}}).to_int(), 3);
  EXPECT_EQ(run1(fn, {int64_t{2}}).to_int(), 2);
}

TEST(ScriptCompiler, LoopIndexKeepsItsName) {
  auto fn = compile(
      "def f(n: int) -> int:\n    t = 0\n    for i in range(n):\n        t += i\n    return t\n");
  EXPECT_THAT(fn->graph()->str(), HasSubstr("block0(%i : int"));
}

TEST(ScriptCompilerAutocast, DecoratorIsARegionInEagerSemantics) {
  const std::string src =
      "@torch.autocast('cpu', dtype=torch.bfloat16)\n"
      "def f(x, w):\n"
      "    return torch.mm(x, w)\n";
  CompileOptions eager;
  eager.semantics = AutocastSemantics::Eager;
  auto fn =
      compile_source(std::make_shared<Source>(src, "test.py"), builtin_resolver(), eager).back();
  EXPECT_THAT(fn->graph()->str(), HasSubstr("prim::Enter"));
  Tensor x = testing::random_tensor({2, 3}, ScalarType::Float32, 9);
  Tensor w = testing::random_tensor({3, 2}, ScalarType::Float32, 10);
  EXPECT_EQ(run1(fn, {x, w}).to_tensor().dtype(), ScalarType::BFloat16);
  // torchscript semantics: torch's error, at the decorator.
  CompileOptions ts;
  ts.semantics = AutocastSemantics::TorchScript;
  try {
    compile_source(std::make_shared<Source>(src, "test.py"), builtin_resolver(), ts);
    FAIL();
  } catch (const CompileError& e) {
    EXPECT_EQ(
        std::string(e.what()).rfind(
            "test.py:1:2: TorchScript error: @autocast() decorator is not supported in script mode",
            0),
        0u);
  }
}

}  // namespace
}  // namespace ampjit::script

namespace ampjit::script {
namespace {

TEST(ScriptCompilerDiagnostics, FailedOverloadAttemptsLeaveNoNodesBehind) {
  // The tuple stride is unpacked into a list for the first overload tried (int padding), which
  // then fails on the string padding; `conv2d.padding` matches. The failed attempt's nodes are
  // removed (last first): one list is left, the matching overload's.
  auto fn = compile(
      "def f(x, w):\n"
      "    s = (1, 1)\n"
      "    return torch.conv2d(x, w, None, s, 'same')\n");
  const std::string g = fn->graph()->str();
  size_t lists = 0;
  for (size_t at = g.find("prim::ListConstruct"); at != std::string::npos;
       at = g.find("prim::ListConstruct", at + 1))
    ++lists;
  EXPECT_EQ(lists, 1u) << g;
  // With no overload matching, every attempt is undone and the error is a CompileError.
  const std::string err = compile_error(
      "def f(x, w):\n"
      "    s = (1, 1)\n"
      "    return torch.conv2d(x, w, None, s, 2.5)\n");
  EXPECT_EQ(err.rfind("test.py:3:12: ", 0), 0u) << err;
  EXPECT_THAT(err, HasSubstr("for argument 'padding' but instead found type 'float'"));
}

}  // namespace
}  // namespace ampjit::script

namespace ampjit::script {
namespace {

TEST(ScriptCompiler, OnlyATrailingListParameterTakesVarargs) {
  // conv2d's stride is followed by padding, dilation and groups: they are not packed into it.
  auto fn = compile(
      "def f(x, w):\n"
      "    return torch.nn.functional.conv2d(x, w, None, 2, 1)\n");
  const std::string g = fn->graph()->str();
  Tensor x = testing::random_tensor({1, 1, 5, 5}, ScalarType::Float32, 11);
  Tensor w = testing::random_tensor({1, 1, 3, 3}, ScalarType::Float32, 12);
  Tensor y = run1(fn, {x, w}).to_tensor();
  EXPECT_EQ(V(y.sizes().begin(), y.sizes().end()), (V{1, 1, 3, 3})) << g;  // stride 2, padding 1
  // A trailing list parameter still takes them: view(2, 3), zeros(2, 3).
  auto v = compile("def f(x):\n    return x.view(2, 3) + torch.zeros(2, 3)\n");
  Tensor r = run1(v, {Tensor(ops::arange(6, ScalarType::Float32))}).to_tensor();
  EXPECT_EQ(V(r.sizes().begin(), r.sizes().end()), (V{2, 3}));
}

}  // namespace
}  // namespace ampjit::script

// ---- Depth limits (Note [Call depth limit], Note [Nesting limit]) -----------------------------

namespace ampjit::script {
namespace {

// Runs `fn` on a thread with a stack of `bytes` (rethrowing what it throws), so a test can show a
// compilation fits in a stack smaller than the 8 MB main thread's.
template <class F>
void on_stack(size_t bytes, F fn) {
  std::exception_ptr error;
  auto body = [&] {
    try {
      fn();
    } catch (...) {
      error = std::current_exception();
    }
  };
  using Body = decltype(body);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, bytes);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* p) -> void* {
                  (*static_cast<Body*>(p))();
                  return nullptr;
                },
                &body),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
  if (error) std::rethrow_exception(error);
}

// A quarter of the main thread's 8 MB in a Release build; all of it under ASan, whose frames are
// three to four times larger. Passing here leaves the main thread four times the stack it needs.
// (gcc says ASan with __SANITIZE_ADDRESS__, clang with __has_feature.)
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AMPJIT_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(AMPJIT_TEST_ASAN)
constexpr size_t kTestStack = size_t{8} << 20;
#else
constexpr size_t kTestStack = size_t{2} << 20;
#endif

// f{n-1} calls f{n-2} ... calls f0. compile_source compiles the later defs first, so each callee is
// compiled inside its caller's compilation.
std::string call_chain(int n) {
  std::string src = "def f0(x: int):\n    return x\n";
  for (int i = 1; i < n; ++i)
    src += fmt::format("def f{}(x: int):\n    return f{}(x) + 1\n", i, i - 1);
  return src;
}

// Note [Script classes]: a file's class compiles with its methods; __init__ declares the
// attributes.
TEST(ScriptCompiler, FileClassesAreScriptClasses) {
  const std::string src =
      "class Acc:\n"
      "    def __init__(self, start: Tensor):\n"
      "        self.total = start\n"
      "        self.n = 0\n"
      "\n"
      "    def add(self, x: Tensor) -> \"Acc\":\n"
      "        self.total = self.total + x\n"
      "        self.n += 1\n"
      "        return self\n"
      "\n"
      "def run(x: Tensor) -> Tensor:\n"
      "    a = Acc(x)\n"
      "    a.add(x).add(x * 2)\n"
      "    d = {\"n\": a.n}\n"
      "    return a.total / d[\"n\"]\n";
  auto fn = compile(src);
  EXPECT_THAT(fn->graph()->str(), HasSubstr("%a : __torch__.Acc = prim::CreateObject()"));
  EXPECT_EQ(testing::values(run1(fn, {IValue(ops::full(V{2}, Scalar(3.0)))}).to_tensor()),
            (std::vector<double>{6.0, 6.0}));  // (3 + 3 + 6) / 2
  EXPECT_THAT(compile_error("class B:\n    def __init__(self):\n        self.k = 1\n"
                            "def f() -> int:\n    return B().zz\n"),
              HasSubstr("test.py:5:12: '__torch__.B' object has no attribute or method 'zz'"));
  EXPECT_THAT(compile_error("class B:\n    def __init__(self):\n        self.k = 1\n"
                            "    def g(self):\n        self.q = 2\n"
                            "def f():\n    B().g()\n"),
              HasSubstr("test.py:5:9: Tried to set nonexistent attribute: q."));
}

TEST(ScriptCompilerLimits, TheDeepestCallChainAllowedCompilesOnASmallStack) {
  // f199 calls f198 ... calls f0: 200 functions, each compiled inside its caller's compilation.
  on_stack(kTestStack, [] {
    auto fns =
        compile_source(std::make_shared<Source>(call_chain(200), "chain.py"), builtin_resolver());
    EXPECT_EQ(run1(fns.back(), {IValue(int64_t{1})}).to_int(), 200);
  });
}

TEST(ScriptCompilerLimits, ADeeperCallChainIsACompileErrorNotACrash) {
  const std::string e = compile_error(call_chain(2000));
  EXPECT_THAT(e, HasSubstr("calls nested too deeply to compile: 'f1799' is the 201th function "
                           "compiled inside its callers' compilation (the limit is 200)"));
}

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

// Compile time of `make(n)`, the best of three, in seconds.
template <class Make>
double compile_seconds(Make make, int n) {
  const std::string src = make(n);
  double best = 1e9;
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    compile(src);
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// Ten times the program compiles in at most 50 times the time: a ratio within one process, not a
// wall-clock bound. Linear is 10 and quadratic 100; the small program fits in the caches and the
// large one does not, which alone costs up to about three times.
template <class Make>
void expect_linear(const char* what, Make make, int n) {
  // The best of a few runs: a run preempted by the other tests of a parallel ctest is not the
  // compiler's time.
  const auto best = [&](int size, int runs) {
    double t = compile_seconds(make, size);
    for (int i = 1; i < runs; ++i) t = std::min(t, compile_seconds(make, size));
    return t;
  };
  const double small = best(n, 5), large = best(10 * n, 2);
  EXPECT_LT(large, 50 * std::max(small, 1e-3))
      << what << ": " << n << " in " << small << " s, " << 10 * n << " in " << large << " s";
}

TEST(ScriptCompilerLimits, CompileTimeIsLinearInTheProgram) {
  expect_linear(
      "straight statements",
      [](int n) {
        std::string s = "def f(x: int):\n";
        for (int i = 0; i < n; ++i) s += fmt::format("    x = x + {}\n", i % 7);
        return s + "    return x\n";
      },
      5000);
  expect_linear(
      "a chained comparison",
      [](int n) { return "def f(x: int):\n    return x" + repeat(" < x", n) + "\n"; }, 3000);
  // Nested loops: the exit analysis once walked each body twice per level (2^depth).
  expect_linear(
      "nested loops",
      [](int n) {
        std::string s = "def f(x: int):\n";
        for (int i = 0; i < n; ++i)
          s += std::string(static_cast<size_t>(4 * (i + 1)), ' ') +
               fmt::format("for i{} in range(2):\n", i);
        s += std::string(static_cast<size_t>(4 * (n + 1)), ' ') + "x = x + 1\n";
        return s + "    return x\n";
      },
      9);
}

TEST(ScriptCompilerLimits, TheDeepestNestingTheParserAllowsCompilesOnASmallStack) {
  // Each is just inside the parser's limit of 1000 levels; the emitter walks them recursively.
  const std::vector<std::string> bodies = {
      "    return " + repeat("not ", 990) + "b\n",
      "    return " + repeat("-", 990) + "x\n",
      "    return x" + repeat(" + x", 990) + "\n",
      "    return " + repeat("x if b else ", 990) + "x\n",
      "    return l" + repeat("[0]", 990) + "\n",
  };
  const std::vector<std::string> params = {"b: bool", "x: int", "x: int", "x: int, b: bool",
                                           "l: List[int]"};
  for (size_t i = 0; i < bodies.size(); ++i) {
    SCOPED_TRACE(params[i]);
    on_stack(kTestStack, [&] {
      try {
        compile("def f(" + params[i] + "):\n" + bodies[i]);
      } catch (const CompileError&) {
        // A type error deep inside is fine: the walk reached it without running out of stack.
      }
    });
  }
}

}  // namespace
}  // namespace ampjit::script
