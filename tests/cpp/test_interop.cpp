// The interop layer (interop/): the autocast semantics switch and its environment variable, the
// prim::AutocastRegion node (IR, passes, run time under every outer state, exception safety),
// autocast objects' Enter/Exit per semantics, Function specialization per semantics,
// eager-semantics tracing from C++, the warning channel, and many threads with their own semantics
// and states.
#include <gmock/gmock.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>
#include <thread>

#include "runtime/autocast/autocast_regions.h"
#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/policy_profiles.h"
#include "runtime/autocast/semantics.h"
#include "runtime/diagnostic.h"
#include "runtime/interpreter.h"
#include "runtime/ir/filecheck.h"
#include "runtime/ir/python_print.h"
#include "runtime/ops.h"
#include "script/passes/autocast_pass.h"
#include "script/passes/common_subexpression_elimination.h"
#include "script/passes/constant_propagation.h"
#include "script/passes/dead_code_elimination.h"
#include "script/passes/inline_calls.h"
#include "tests/cpp/testing.h"
#include "tracer/tracer.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using ST = ScalarType;

constexpr const char* kAmp = "__torch__.torch.amp.autocast_mode.autocast";

// ---- Helpers ------------------------------------------------------------------------------------

std::unique_ptr<Graph> parsed(std::string_view text) {
  auto g = parse_graph(text);
  g->verify();
  return g;
}

void expect_checks(const Graph& g, std::string_view checks) {
  const std::string text = g.str(false);
  const FileCheckResult r = filecheck(text, checks);
  EXPECT_TRUE(r.ok) << r.message << "\n" << text;
}

Tensor rnd(uint64_t seed = 1, ST dt = ST::Float32) {
  return testing::random_tensor({3, 3}, dt, seed);
}

std::vector<ST> dtypes_of(const Stack& s) {
  std::vector<ST> out;
  for (const IValue& v : s) out.push_back(v.to_tensor().dtype());
  return out;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && std::ranges::equal(a.sizes(), b.sizes()) &&
         testing::values(a) == testing::values(b);
}

// The whole eager autocast state of this thread, to check that nothing leaks.
struct State {
  bool cpu, cuda;
  ST cpu_dtype, cuda_dtype;
  int nesting;
  bool cache;
  bool operator==(const State&) const = default;
};
State state_now() {
  return State{is_autocast_enabled(DeviceType::CPU),
               is_autocast_enabled(DeviceType::CUDA),
               get_autocast_dtype(DeviceType::CPU),
               get_autocast_dtype(DeviceType::CUDA),
               autocast_nesting(),
               is_autocast_cache_enabled()};
}

// An outer eager state a test runs under.
struct Outer {
  const char* name;
  bool cpu;
  ST dtype;
};
const Outer kOuters[] = {
    {"off", false, ST::BFloat16}, {"cpu-bf16", true, ST::BFloat16}, {"cpu-f16", true, ST::Float16}};

// Sets this thread's semantics default for a scope.
struct SemanticsScope {
  AutocastSemantics prev;
  explicit SemanticsScope(AutocastSemantics s) : prev(set_autocast_semantics(s)) {}
  ~SemanticsScope() { set_autocast_semantics(prev); }
};

// `f` under the outer state `o`.
template <typename F>
auto under(const Outer& o, F&& f) {
  AutocastGuard g(DeviceType::CPU, o.cpu, o.dtype);
  return f();
}

// Collects warnings instead of printing them.
std::vector<Diagnostic>* g_collected = nullptr;
void collect(const Diagnostic& w) {
  g_collected->push_back(w);
}
struct CollectWarnings {
  std::vector<Diagnostic> got;
  WarningHandler prev;
  CollectWarnings() {
    g_collected = &got;
    prev = set_warning_handler(collect);
  }
  ~CollectWarnings() {
    set_warning_handler(prev);
    g_collected = nullptr;
  }
};

// ---- The semantics switch -----------------------------------------------------------------------

struct EnvVar {
  std::optional<std::string> saved;
  explicit EnvVar(const char* value) {
    if (const char* v = std::getenv("AMPJIT_AUTOCAST_SEMANTICS")) saved = v;
    if (value)
      setenv("AMPJIT_AUTOCAST_SEMANTICS", value, 1);
    else
      unsetenv("AMPJIT_AUTOCAST_SEMANTICS");
    reset_autocast_semantics();
  }
  ~EnvVar() {
    if (saved)
      setenv("AMPJIT_AUTOCAST_SEMANTICS", saved->c_str(), 1);
    else
      unsetenv("AMPJIT_AUTOCAST_SEMANTICS");
    reset_autocast_semantics();
    set_autocast_semantics(AutocastSemantics::TorchScript);
  }
};

TEST(AutocastSemanticsSwitch, DefaultsToTorchScriptAndSetReturnsThePrevious) {
  EnvVar env(nullptr);
  EXPECT_EQ(autocast_semantics(), AutocastSemantics::TorchScript);
  EXPECT_EQ(set_autocast_semantics(AutocastSemantics::Eager), AutocastSemantics::TorchScript);
  EXPECT_EQ(autocast_semantics(), AutocastSemantics::Eager);
  EXPECT_EQ(set_autocast_semantics(AutocastSemantics::TorchScript), AutocastSemantics::Eager);
  EXPECT_STREQ(autocast_semantics_name(AutocastSemantics::Eager), "eager");
  EXPECT_STREQ(autocast_semantics_name(AutocastSemantics::TorchScript), "torchscript");
}

TEST(AutocastSemanticsSwitch, EnvironmentVariable) {
  {
    EnvVar env("eager");
    EXPECT_EQ(autocast_semantics(), AutocastSemantics::Eager);
  }
  {
    EnvVar env("torchscript");
    EXPECT_EQ(autocast_semantics(), AutocastSemantics::TorchScript);
  }
  {
    EnvVar env("");  // empty: unset
    EXPECT_EQ(autocast_semantics(), AutocastSemantics::TorchScript);
  }
  {
    // Malformed: an error at every use naming the variable and the allowed values, until set.
    EnvVar env("Eager");
    for (int i = 0; i < 2; ++i) {
      EXPECT_THAT([] { autocast_semantics(); },
                  ::testing::ThrowsMessage<ValueError>(AllOf(HasSubstr("AMPJIT_AUTOCAST_SEMANTICS"),
                                                             HasSubstr("'torchscript' or 'eager'"),
                                                             HasSubstr("'Eager'"))));
    }
    // A Function without its own setting needs the default at its call: the same error.
    Function fn("f", std::shared_ptr<Graph>(parsed("graph(%a : Tensor):\n  return (%a)\n")));
    EXPECT_THROW(fn({rnd()}), ValueError);
    fn.set_autocast_semantics(AutocastSemantics::Eager);
    EXPECT_NO_THROW(fn({rnd()}));
    EXPECT_EQ(set_autocast_semantics(AutocastSemantics::Eager), AutocastSemantics::TorchScript);
    EXPECT_EQ(autocast_semantics(), AutocastSemantics::Eager);
  }
}

TEST(AutocastSemanticsSwitch, ParseNamesTheAllowedValues) {
  EXPECT_EQ(parse_autocast_semantics("eager"), AutocastSemantics::Eager);
  EXPECT_EQ(parse_autocast_semantics("torchscript"), AutocastSemantics::TorchScript);
  for (const char* bad : {"", "TorchScript", "script", "eager "}) {
    EXPECT_THAT(
        [&] { parse_autocast_semantics(bad, "autocast_semantics"); },
        ::testing::ThrowsMessage<ValueError>(AllOf(
            HasSubstr("autocast_semantics: expected 'torchscript' or 'eager'"), HasSubstr(bad))));
  }
}

// ---- prim::AutocastRegion: IR -------------------------------------------------------------------

// y = mm(a, b) outside; inside `with autocast("cpu", dtype, enabled)`: z = mm(a, b), w = z * 2.
std::string region_graph(bool enabled, int dtype_code = 15, bool cache = false) {
  return fmt::format(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %two : float = prim::Constant[value=2.]()\n"
      "  %y : Tensor = aten::mm(%a, %b)\n"
      "  %z : Tensor, %w : Tensor = prim::AutocastRegion[device_type=\"cpu\", dtype={}, "
      "enabled={}, "
      "cache_enabled={}]() # f.py:3:4\n"
      "    block0():\n"
      "      %z0 : Tensor = aten::mm(%a, %b) # f.py:4:8\n"
      "      %w0 : Tensor = aten::mul(%z0, %two) # f.py:5:8\n"
      "      -> (%z0, %w0)\n"
      "  return (%y, %z, %w)\n",
      dtype_code, enabled ? 1 : 0, cache ? 1 : 0);
}

TEST(AutocastRegionIR, PrintsParsesVerifiesAndRoundTrips) {
  auto g = parsed(region_graph(false));
  const std::string text = g->str();
  EXPECT_THAT(
      text,
      HasSubstr(
          "prim::AutocastRegion[device_type=\"cpu\", dtype=15, enabled=0, cache_enabled=0]()"));
  EXPECT_EQ(parse_graph(text)->str(), text);
  // The parser gives the attributes back their types.
  Node* r = nullptr;
  for (Node* n : *g->block())
    if (n->kind() == sym::prim::AutocastRegion) r = n;
  ASSERT_NE(r, nullptr);
  EXPECT_TRUE(r->attr(sym::attr::enabled).is_bool());
  EXPECT_TRUE(r->attr(sym::attr::dtype).is_scalar_type());
  const AutocastRegionSpec spec = autocast_region_spec(*r);
  EXPECT_EQ(spec.device, DeviceType::CPU);
  EXPECT_FALSE(spec.enabled);
  EXPECT_EQ(spec.dtype, ST::BFloat16);
  EXPECT_EQ(spec.cache_enabled, false);
  // A copy keeps it.
  EXPECT_EQ(g->copy()->str(), text);
}

TEST(AutocastRegionIR, CreateMatchesTheTextForm) {
  Graph g;
  Node* r = create_autocast_region(g, AutocastRegionSpec{DeviceType::CPU, true, ST::Float16, true});
  g.block()->append(r);
  g.verify();
  EXPECT_THAT(
      g.str(),
      HasSubstr(
          "prim::AutocastRegion[device_type=\"cpu\", dtype=5, enabled=1, cache_enabled=1]()"));
  EXPECT_EQ(parse_graph(g.str())->str(), g.str());
}

TEST(AutocastRegionIR, VerifyRejectsMalformedRegions) {
  auto bad = [](const std::string& attrs, const std::string& block = "    block0():\n      -> ()\n",
                const std::string& ins = "") {
    return "graph(%a : Tensor):\n  = prim::AutocastRegion[" + attrs + "](" + ins + ")\n" + block +
           "  return (%a)\n";
  };
  const std::string ok = "device_type=\"cpu\", dtype=15, enabled=1";
  EXPECT_NO_THROW(parse_graph(bad(ok))->verify());
  const std::pair<std::string, std::string> cases[] = {
      {bad("device_type=\"tpu\", dtype=15, enabled=1"), "device_type"},
      {bad("dtype=15, enabled=1"), "device_type"},
      {bad("device_type=\"cpu\", dtype=6, enabled=1"), "dtype float16 or bfloat16"},
      {bad("device_type=\"cpu\", dtype=15"), "enabled"},
      {bad("device_type=\"cpu\", dtype=15, enabled=2"), "enabled"},
      {bad(ok, ""), "one block"},
      {bad(ok, "    block0(%x : Tensor):\n      -> ()\n"), "without inputs"},
      {bad(ok, "    block0():\n      -> (%a)\n"), "one value per output"},
      {bad(ok, "    block0():\n      -> ()\n", "%a"), "no inputs"},
  };
  for (const auto& c : cases) {
    const std::string &text = c.first, &what = c.second;
    EXPECT_THAT([&] { parse_graph(text)->verify(); },
                ::testing::ThrowsMessage<Error>(HasSubstr(what)))
        << text;
  }
}

TEST(AutocastRegionIR, PythonPrintShowsAWithStatement) {
  auto g = parsed(region_graph(false));
  const std::string code = python_print(*g, "f");
  EXPECT_THAT(code, HasSubstr("with torch.autocast(\"cpu\", dtype=torch.bfloat16, enabled=False, "
                              "cache_enabled=False):\n"));
  // The region's ops are inside the with block (indented), the outer mm before it.
  const size_t with = code.find("with torch.autocast");
  EXPECT_NE(code.find("torch.mm(a, b)"), std::string::npos);
  EXPECT_LT(code.find("torch.mm(a, b)"), with);
  EXPECT_NE(code.find("    z, w = ", with), std::string::npos) << code;
}

// ---- prim::AutocastRegion: passes ---------------------------------------------------------------

TEST(AutocastRegionPasses, CseNeverMergesAcrossTheRegionBoundary) {
  // Inside and outside the region mm(a, b) is the same op on the same inputs, but not the same
  // result: the region changes the autocast state. The two inner muls do merge.
  auto g = parsed(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %two : float = prim::Constant[value=2.]()\n"
      "  %y : Tensor = aten::mm(%a, %b)\n"
      "  %z : Tensor = prim::AutocastRegion[device_type=\"cpu\", dtype=15, enabled=1, "
      "cache_enabled=0]()\n"
      "    block0():\n"
      "      %z0 : Tensor = aten::mm(%a, %b)\n"
      "      %m1 : Tensor = aten::mul(%z0, %two)\n"
      "      %m2 : Tensor = aten::mul(%z0, %two)\n"
      "      %s : Tensor = aten::add(%m1, %m2, %two)\n"
      "      -> (%s)\n"
      "  %after : Tensor = aten::mm(%a, %b)\n"
      "  return (%y, %z, %after)\n");
  common_subexpression_elimination(*g);
  g->verify();
  expect_checks(*g, R"(
    # CHECK: aten::mm(%a, %b)
    # CHECK: prim::AutocastRegion
    # CHECK: aten::mm(%a, %b)
    # CHECK: aten::mul(
    # CHECK-NOT: aten::mul(
    # CHECK: -> (
    # CHECK: aten::mm(%a, %b)
  )");
}

TEST(AutocastRegionPasses, DceKeepsTheRegionAndRemovesDeadOpsInside) {
  auto g = parsed(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %two : float = prim::Constant[value=2.]()\n"
      "  %z : Tensor = prim::AutocastRegion[device_type=\"cpu\", dtype=15, enabled=1, "
      "cache_enabled=0]()\n"
      "    block0():\n"
      "      %z0 : Tensor = aten::mm(%a, %b)\n"
      "      %dead : Tensor = aten::mul(%z0, %two)\n"
      "      -> (%z0)\n"
      "  return (%z)\n");
  dead_code_elimination(*g);
  g->verify();
  expect_checks(*g, "# CHECK: prim::AutocastRegion\n# CHECK: aten::mm\n# CHECK-NOT: aten::mul\n");
}

TEST(AutocastRegionPasses, ConstantPropagationAndInliningKeepTheRegion) {
  auto callee = std::make_shared<Function>(
      "helper", std::shared_ptr<Graph>(
                    parsed("graph(%x : Tensor, %y : Tensor):\n  %r : Tensor = aten::mm(%x, %y)\n  "
                           "return (%r)\n")));
  auto g = parsed(region_graph(true));
  // Put a call to `helper` inside the region.
  Node* region = nullptr;
  for (Node* n : *g->block())
    if (n->kind() == sym::prim::AutocastRegion) region = n;
  Block* body = region->blocks()[0];
  Node* call = g->create(sym::prim::CallFunction, {g->inputs()[0], g->inputs()[1]}, 1);
  call->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(callee))));
  body->append(call);
  body->register_output(call->output());
  g->register_output(region->add_output());
  g->verify();
  inline_calls(*g);
  constant_propagation(*g);
  g->verify();
  expect_checks(*g, R"(
    # CHECK: prim::AutocastRegion
    # CHECK-NOT: prim::CallFunction
    # CHECK: aten::mm(%a, %b)
    # CHECK: aten::mm(%a, %b)
    # CHECK: -> (
  )");
  AutocastGuard off(DeviceType::CPU, false);
  Stack out = {rnd(1), rnd(2)};
  Code(*g).run(out);
  EXPECT_EQ(out.back().to_tensor().dtype(), ST::BFloat16);  // the inlined call ran in the region
}

TEST(AutocastRegionPasses, TheJitAutocastPassTreatsTheRegionAsAScope) {
  // torchscript semantics with eager CPU autocast on: the pass casts the outer mm, and nothing
  // inside a disabled region.
  AutocastContext on;
  on.cpu_enabled = true;
  auto g = parsed(region_graph(false));
  autocast_pass(*g, on);
  g->verify();
  expect_checks(*g, R"(
    # CHECK: aten::_autocast_to_reduced_precision(%a,
    # CHECK: aten::mm(
    # CHECK: prim::AutocastRegion
    # CHECK-NOT: aten::_autocast_to_reduced_precision
    # CHECK: -> (
  )");
  // An enabled region under an eager state that is off: the pass casts inside it.
  auto h = parsed(region_graph(true));
  autocast_pass(*h, AutocastContext{});
  expect_checks(*h, R"(
    # CHECK: aten::mm(%a, %b)
    # CHECK: prim::AutocastRegion
    # CHECK: aten::_autocast_to_reduced_precision(%a,
    # CHECK: aten::mm(
  )");
}

// ---- prim::AutocastRegion: run time -------------------------------------------------------------

// What the region graph gives, computed eagerly with the same settings.
Stack eager_region(const Tensor& a, const Tensor& b, bool enabled, ST dtype) {
  Tensor y = ops::mm(a, b);
  AutocastGuard g(DeviceType::CPU, enabled, enabled ? std::optional<ST>(dtype) : std::nullopt,
                  false);
  Tensor z = ops::mm(a, b);
  Tensor w = ops::mul_Scalar(z, Scalar(2.0));
  return {y, z, w};
}

TEST(AutocastRegionRun, EqualsEagerUnderEveryOuterStateInBothSemantics) {
  const Tensor a = rnd(1), b = rnd(2);
  for (const bool enabled : {false, true}) {
    for (const ST dt : {ST::BFloat16, ST::Float16}) {
      auto g = parsed(region_graph(enabled, static_cast<int>(torch_dtype_code(dt))));
      for (const Outer& o : kOuters) {
        const State before = state_now();
        for (const AutocastSemantics sem :
             {AutocastSemantics::TorchScript, AutocastSemantics::Eager}) {
          Stack got = under(o, [&] {
            Stack s{a, b};
            Code(*g, sem).run(s);
            return s;
          });
          Stack want = under(o, [&] { return eager_region(a, b, enabled, dt); });
          ASSERT_EQ(got.size(), 3u);
          for (size_t i = 0; i < 3; ++i)
            EXPECT_TRUE(same_bits(got[i].to_tensor(), want[i].to_tensor()))
                << o.name << " enabled=" << enabled << " dtype=" << dtype_name(dt) << " output "
                << i;
          const ST inner = enabled ? dt : ST::Float32;
          EXPECT_EQ(dtypes_of(got), (std::vector<ST>{o.cpu ? o.dtype : ST::Float32, inner, inner}))
              << o.name;
        }
        EXPECT_EQ(state_now(), before);
      }
    }
  }
}

TEST(AutocastRegionRun, NestedRegionsAndTheCacheFlag) {
  // with autocast(cpu, bf16): x = mm; with autocast(cpu, enabled=False): y = mm; z = mm.
  auto g = parsed(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %x : Tensor, %y : Tensor, %z : Tensor = prim::AutocastRegion[device_type=\"cpu\", "
      "dtype=15, enabled=1, "
      "cache_enabled=0]()\n"
      "    block0():\n"
      "      %x0 : Tensor = aten::mm(%a, %b)\n"
      "      %y0 : Tensor = prim::AutocastRegion[device_type=\"cpu\", dtype=15, enabled=0, "
      "cache_enabled=1]()\n"
      "        block0():\n"
      "          %y1 : Tensor = aten::mm(%a, %b)\n"
      "          -> (%y1)\n"
      "      %z0 : Tensor = aten::mm(%a, %b)\n"
      "      -> (%x0, %y0, %z0)\n"
      "  return (%x, %y, %z)\n");
  for (const Outer& o : kOuters) {
    Stack s = under(o, [&] {
      Stack in{rnd(1), rnd(2)};
      Code(*g).run(in);
      return in;
    });
    EXPECT_EQ(dtypes_of(s), (std::vector<ST>{ST::BFloat16, ST::Float32, ST::BFloat16})) << o.name;
  }
  EXPECT_EQ(autocast_nesting(), 0);
  EXPECT_TRUE(is_autocast_cache_enabled());
}

TEST(AutocastRegionRun, AnExceptionLeavesTheStateAsItWas) {
  // An op that fails inside nested regions (mm of mismatched shapes), and a raise.
  auto failing = parsed(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %z : Tensor = prim::AutocastRegion[device_type=\"cpu\", dtype=5, enabled=1, "
      "cache_enabled=0]()\n"
      "    block0():\n"
      "      %w : Tensor = prim::AutocastRegion[device_type=\"cuda\", dtype=15, enabled=0, "
      "cache_enabled=1]()\n"
      "        block0():\n"
      "          %bad : Tensor = aten::mm(%a, %b) # f.py:9:4\n"
      "          -> (%bad)\n"
      "      -> (%w)\n"
      "  return (%z)\n");
  auto raising = parsed(
      "graph(%a : Tensor):\n"
      "  %msg : str = prim::Constant[value=\"boom\"]()\n"
      "  = prim::AutocastRegion[device_type=\"cpu\", dtype=15, enabled=0, cache_enabled=0]()\n"
      "    block0():\n"
      "       = prim::RaiseException(%msg)\n"
      "      -> ()\n"
      "  return (%a)\n");
  for (const Outer& o : kOuters) {
    AutocastGuard outer(DeviceType::CPU, o.cpu, o.dtype);
    const State before = state_now();
    Stack s{testing::random_tensor({2, 3}, ST::Float32, 1),
            testing::random_tensor({2, 3}, ST::Float32, 2)};
    EXPECT_THAT([&] { Code(*failing).run(s); },
                ::testing::ThrowsMessage<Error>(HasSubstr("f.py:9:4")));
    EXPECT_EQ(state_now(), before) << o.name;
    Stack r{rnd()};
    EXPECT_THAT([&] { Code(*raising).run(r); }, ::testing::ThrowsMessage<Error>(HasSubstr("boom")));
    EXPECT_EQ(state_now(), before) << o.name;
  }
}

TEST(AutocastRegionRun, RegionsInLoopsAndBranches) {
  // for i in range(3): with autocast(cpu, enabled=c): acc = mm(acc, b)
  auto g = parsed(
      "graph(%a : Tensor, %b : Tensor, %c : bool):\n"
      "  %n : int = prim::Constant[value=3]()\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %r : Tensor = prim::Loop(%n, %t, %a)\n"
      "    block0(%i : int, %acc : Tensor):\n"
      "      %nxt : Tensor = prim::If(%c)\n"
      "        block0():\n"
      "          %on : Tensor = prim::AutocastRegion[device_type=\"cpu\", dtype=15, enabled=1, "
      "cache_enabled=0]()\n"
      "            block0():\n"
      "              %m : Tensor = aten::mm(%acc, %b)\n"
      "              -> (%m)\n"
      "          -> (%on)\n"
      "        block1():\n"
      "          %m2 : Tensor = aten::mm(%acc, %b)\n"
      "          -> (%m2)\n"
      "      -> (%t, %nxt)\n"
      "  return (%r)\n");
  for (const bool c : {false, true}) {
    Stack s{rnd(1), rnd(2), IValue(c)};
    Code(*g).run(s);
    EXPECT_EQ(s[0].to_tensor().dtype(), c ? ST::BFloat16 : ST::Float32);
    EXPECT_EQ(autocast_nesting(), 0);
    EXPECT_FALSE(is_autocast_enabled(DeviceType::CPU));
  }
}

// ---- Autocast objects: prim::Enter / prim::Exit per semantics -----------------------------------

// `with autocast(<device>, dtype=<dtype>, enabled=<enabled>):` as the script compiler emits it, the
// settings given as values (so `enabled` may be a graph input), around z = mm(a, b). `prelude`
// adds constants.
std::string with_graph(const std::string& enabled, const std::string& dtype = "%dt",
                       const std::string& extra_inputs = "", const std::string& prelude = "",
                       const std::string& device = "%dev") {
  return fmt::format(
      "graph(%a : Tensor, %b : Tensor{0}):\n"
      "  %on : bool = prim::Constant[value=0]()\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %dev : str = prim::Constant[value=\"cpu\"]()\n"
      "  %dt : int = prim::Constant[value=15]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "{1}"
      "  %ac : {2} = prim::CreateObject()\n"
      "   = prim::SetAttr[name=\"_enabled\"](%ac, {3})\n"
      "   = prim::SetAttr[name=\"device\"](%ac, {4})\n"
      "   = prim::SetAttr[name=\"fast_dtype\"](%ac, {5})\n"
      "  %e : NoneType = prim::Enter(%ac) # f.py:2:4\n"
      "  %z : Tensor = aten::mm(%a, %b) # f.py:3:8\n"
      "  %x : NoneType = prim::Exit(%ac)\n"
      "  return (%z)\n",
      extra_inputs, prelude, kAmp, enabled, device, dtype);
}

TEST(AutocastObjects, EnterExitAreInertInTorchScriptAndLiveInEager) {
  // Seed 000 "Disabling eager autocast with scripted autocast": with eager autocast on, a scripted
  // autocast(enabled=False) still autocasts in torchscript semantics; in eager semantics it wins.
  auto g = parsed(with_graph("%on"));
  for (const Outer& o : kOuters) {
    const State before = state_now();
    auto run = [&](AutocastSemantics sem) {
      return under(o, [&] {
        Stack s{rnd(1), rnd(2)};
        Code(*g, sem).run(s);
        return s[0].to_tensor().dtype();
      });
    };
    EXPECT_EQ(run(AutocastSemantics::TorchScript), o.cpu ? o.dtype : ST::Float32) << o.name;
    EXPECT_EQ(run(AutocastSemantics::Eager), ST::Float32) << o.name;
    EXPECT_EQ(state_now(), before);
  }
}

TEST(AutocastObjects, EagerReadsSettingsAtRunTime) {
  // A runtime `enabled` (in torchscript semantics: "must be a constant" at the first call).
  auto g = parsed(with_graph("%use_amp", "%dt", ", %use_amp : bool"));
  for (const bool use_amp : {false, true}) {
    Stack s{rnd(1), rnd(2), IValue(use_amp)};
    Code(*g, AutocastSemantics::Eager).run(s);
    EXPECT_EQ(s[0].to_tensor().dtype(), use_amp ? ST::BFloat16 : ST::Float32);
  }
  Function fn("f",
              std::shared_ptr<Graph>(parsed(with_graph("%use_amp", "%dt", ", %use_amp : bool"))));
  fn.set_autocast_semantics(AutocastSemantics::TorchScript);
  EXPECT_THAT(
      [&] {
        fn({rnd(1), rnd(2), IValue(true)});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("Autocast _enabled argument must be a constant")));
  fn.set_autocast_semantics(AutocastSemantics::Eager);
  EXPECT_EQ(fn({rnd(1), rnd(2), IValue(true)})[0].to_tensor().dtype(), ST::BFloat16);
  // fast_dtype None: the dtype autocast has for the device now (what eager's __init__ reads;
  // CPU float16 needs the torch-2 profile, as in eager).
  auto h = parsed(with_graph("%t", "%none"));
  const std::string profile = get_autocast_profile();
  set_autocast_profile("torch-2");
  {
    AutocastGuard outer(DeviceType::CPU, false, ST::Float16);
    Stack s{rnd(1), rnd(2)};
    Code(*h, AutocastSemantics::Eager).run(s);
    EXPECT_EQ(s[0].to_tensor().dtype(), ST::Float16);
  }
  set_autocast_profile(profile);
}

TEST(AutocastObjects, EagerEnterReturnsTheObjectAndTheSameObjectNests) {
  // with autocast(cpu) as ac: with ac: z = mm   (torchscript: "`with autocast() as ...` is not
  // supported")
  auto g = parsed(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %t : bool = prim::Constant[value=1]()\n"
      "  %dev : str = prim::Constant[value=\"cpu\"]()\n"
      "  %dt : int = prim::Constant[value=15]()\n"
      "  %ac : " +
      std::string(kAmp) +
      " = prim::CreateObject()\n"
      "   = prim::SetAttr[name=\"_enabled\"](%ac, %t)\n"
      "   = prim::SetAttr[name=\"device\"](%ac, %dev)\n"
      "   = prim::SetAttr[name=\"fast_dtype\"](%ac, %dt)\n"
      "  %as : " +
      std::string(kAmp) +
      " = prim::Enter(%ac)\n"
      "  %e2 : " +
      std::string(kAmp) +
      " = prim::Enter(%as)\n"
      "  %z : Tensor = aten::mm(%a, %b)\n"
      "  %x2 : NoneType = prim::Exit(%as)\n"
      "  %w : Tensor = aten::mm(%a, %b)\n"
      "  %x : NoneType = prim::Exit(%ac)\n"
      "  %after : Tensor = aten::mm(%a, %b)\n"
      "  return (%z, %w, %after)\n");
  Stack s{rnd(1), rnd(2)};
  Code(*g, AutocastSemantics::Eager).run(s);
  EXPECT_EQ(dtypes_of(s), (std::vector<ST>{ST::BFloat16, ST::BFloat16, ST::Float32}));
  EXPECT_EQ(autocast_nesting(), 0);
}

TEST(AutocastObjects, EagerChecksAndWarnsAsEagerInit) {
  CollectWarnings w;
  // CPU float16 under the torch-1.13 profile: disabled, with eager's UserWarning at the with line.
  auto f16 = parsed(with_graph("%t", "%f16", "", "  %f16 : int = prim::Constant[value=5]()\n"));
  Stack s{rnd(1), rnd(2)};
  Code(*f16, AutocastSemantics::Eager).run(s);
  EXPECT_EQ(s[0].to_tensor().dtype(), ST::Float32);
  ASSERT_EQ(w.got.size(), 1u);
  EXPECT_EQ(w.got[0].category, WarningCategory::User);
  EXPECT_THAT(w.got[0].message,
              HasSubstr("In CPU autocast, but the target dtype is not supported"));
  EXPECT_EQ(w.got[0].range.location_str(), "f.py:2:4");
  // An unknown device is an error naming it, with the location.
  auto tpu = parsed(
      with_graph("%t", "%dt", "", "  %tpu : str = prim::Constant[value=\"tpu\"]()\n", "%tpu"));
  Stack t{rnd(1), rnd(2)};
  EXPECT_THAT([&] { Code(*tpu, AutocastSemantics::Eager).run(t); },
              ::testing::ThrowsMessage<Error>(AllOf(
                  HasSubstr("must be 'cuda' or 'cpu', but got 'tpu'"), HasSubstr("f.py:2:4"))));
  EXPECT_EQ(autocast_nesting(), 0);
}

TEST(AutocastObjects, WithOnAnotherObjectIsNotSupportedInEitherSemantics) {
  auto g = parsed(
      "graph(%a : Tensor):\n"
      "  %o : __torch__.Foo = prim::CreateObject()\n"
      "  %e : NoneType = prim::Enter(%o)\n"
      "  %x : NoneType = prim::Exit(%o)\n"
      "  return (%a)\n");
  for (const AutocastSemantics sem : {AutocastSemantics::TorchScript, AutocastSemantics::Eager}) {
    Stack s{rnd()};
    EXPECT_THROW(Code(*g, sem).run(s), NotImplementedError);
  }
}

// ---- Function specialization per semantics ------------------------------------------------------

TEST(FunctionSemantics, OwnSettingBeatsTheGlobalOneAndIsPartOfTheKey) {
  auto g = std::shared_ptr<Graph>(parsed(with_graph("%on")));
  Function fn("f", g);
  EXPECT_EQ(fn.own_autocast_semantics(), std::nullopt);
  AutocastGuard outer(DeviceType::CPU, true, ST::BFloat16);
  auto dtype = [&] { return fn({rnd(1), rnd(2)})[0].to_tensor().dtype(); };
  {
    SemanticsScope ts(AutocastSemantics::TorchScript);
    EXPECT_EQ(fn.effective_autocast_semantics(), AutocastSemantics::TorchScript);
    EXPECT_EQ(dtype(), ST::BFloat16);  // the limitation: eager autocast wins
    EXPECT_EQ(fn.code().semantics(), AutocastSemantics::TorchScript);
  }
  {
    SemanticsScope eager(AutocastSemantics::Eager);
    EXPECT_EQ(fn.effective_autocast_semantics(), AutocastSemantics::Eager);
    EXPECT_EQ(dtype(), ST::Float32);  // the script's disable wins
    auto opt = fn.optimized_graph();
    EXPECT_EQ(opt->str().find("_autocast_to_"), std::string::npos);  // no JIT autocast pass
    EXPECT_EQ(fn.code().semantics(), AutocastSemantics::Eager);
    // Its own setting wins over the global one.
    fn.set_autocast_semantics(AutocastSemantics::TorchScript);
    EXPECT_EQ(dtype(), ST::BFloat16);
  }
  {
    SemanticsScope ts(AutocastSemantics::TorchScript);
    fn.set_autocast_semantics(AutocastSemantics::Eager);
    EXPECT_EQ(dtype(), ST::Float32);
    fn.set_autocast_semantics(std::nullopt);
    EXPECT_EQ(dtype(), ST::BFloat16);
  }
}

TEST(FunctionSemantics, EagerRunsNoJitPassEvenForPlainOps) {
  // torchscript semantics under CPU autocast: mm then gelu: the pass makes gelu float32 (its
  // fp32 list); eager 1.13 CPU autocast leaves it bfloat16. Eager semantics equals eager.
  auto fn = std::make_shared<Function>(
      "f", std::shared_ptr<Graph>(parsed("graph(%a : Tensor, %b : Tensor):\n"
                                         "  %none : str = prim::Constant[value=\"none\"]()\n"
                                         "  %y : Tensor = aten::mm(%a, %b)\n"
                                         "  %z : Tensor = aten::gelu(%y, %none)\n"
                                         "  return (%z)\n")));
  AutocastGuard outer(DeviceType::CPU, true, ST::BFloat16);
  const Tensor a = rnd(1), b = rnd(2);
  const Tensor want = ops::gelu(ops::mm(a, b), "none");
  fn->set_autocast_semantics(AutocastSemantics::TorchScript);
  EXPECT_EQ((*fn)({a, b})[0].to_tensor().dtype(), ST::Float32);
  fn->set_autocast_semantics(AutocastSemantics::Eager);
  const Tensor got = (*fn)({a, b})[0].to_tensor();
  EXPECT_TRUE(same_bits(got, want));
}

TEST(FunctionSemantics, EightThreadsWithTheirOwnSemanticsAndStates) {
  auto g = std::shared_ptr<Graph>(parsed(with_graph("%on")));
  auto ts = std::make_shared<Function>("ts", g);
  ts->set_autocast_semantics(AutocastSemantics::TorchScript);
  auto eager = std::make_shared<Function>("eager", g);
  eager->set_autocast_semantics(AutocastSemantics::Eager);
  auto region =
      std::make_shared<Function>("region", std::shared_ptr<Graph>(parsed(region_graph(false))));
  const Tensor a = rnd(3), b = rnd(4);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      const Outer& o = kOuters[i % 3];
      const bool use_ts = i % 2 == 0;
      AutocastGuard outer(DeviceType::CPU, o.cpu, o.dtype);
      const State before = state_now();
      const ST outer_dt = o.cpu ? o.dtype : ST::Float32;
      for (int k = 0; k < 40; ++k) {
        const ST want = use_ts ? outer_dt : ST::Float32;
        const ST got = (*(use_ts ? ts : eager))({a, b})[0].to_tensor().dtype();
        Stack r = (*region)({a, b});
        const bool ok = got == want && r[0].to_tensor().dtype() == outer_dt &&
                        r[1].to_tensor().dtype() == ST::Float32 && state_now() == before;
        if (!ok) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

// ---- Eager-semantics tracing from C++ -----------------------------------------------------------

// Traces f(a, b) in `sem`; regions are entered through the interop stack, as the interpreter does.
template <typename F>
std::shared_ptr<Function> trace_fn(AutocastSemantics sem, const Tensor& a, const Tensor& b, F f) {
  auto st = std::make_shared<tracer::TracingState>();
  st->semantics = sem;
  st->add_input(a, "a");
  st->add_input(b, "b");
  {
    tracer::TracingGuard guard(st);
    for (const Tensor& t : f(a, b)) st->graph->register_output(st->value_of(t));
  }
  st->graph->verify();
  auto fn = std::make_shared<Function>("traced", st->graph);
  fn->set_autocast_semantics(sem);
  return fn;
}

std::vector<Tensor> traced_body(const Tensor& a, const Tensor& b) {
  Tensor y = ops::mm(a, b);
  Tensor z, w;
  {
    AutocastRegionStack regions;
    regions.enter(AutocastRegionSpec{DeviceType::CPU, false, ST::BFloat16, false}, &regions);
    z = ops::mm(a, b);
    regions.exit(&regions);
  }
  w = ops::mul_Scalar(z, Scalar(2.0));  // uses a value recorded in the region: lifted out of it
  return {y, z, w};
}

TEST(EagerTracing, RecordsOpsAsCalledAndRegionsAsNodes) {
  const Tensor a = rnd(1), b = rnd(2);
  for (const Outer& trace_state : kOuters) {
    auto fn =
        under(trace_state, [&] { return trace_fn(AutocastSemantics::Eager, a, b, traced_body); });
    expect_checks(*fn->graph(), R"(
      # CHECK-NOT: aten::to
      # CHECK: aten::mm(%a, %b)
      # CHECK: prim::AutocastRegion[device_type="cpu", dtype=15, enabled=0, cache_enabled=0]()
      # CHECK-NEXT: block0():
      # CHECK-NEXT: aten::mm(%a, %b)
      # CHECK-NEXT: -> (
      # CHECK: aten::mul(
      # CHECK-NOT: aten::to
    )");
    // The same graph whatever the state at trace time, and eager results under every later state.
    for (const Outer& call_state : kOuters) {
      Stack got = under(call_state, [&] { return (*fn)({a, b}); });
      std::vector<Tensor> want = under(call_state, [&] { return traced_body(a, b); });
      for (size_t i = 0; i < 3; ++i)
        EXPECT_TRUE(same_bits(got[i].to_tensor(), want[i]))
            << trace_state.name << " -> " << call_state.name << " #" << i;
    }
  }
}

TEST(EagerTracing, TorchScriptSemanticsStillBakesCasts) {
  const Tensor a = rnd(1), b = rnd(2);
  auto fn = under(kOuters[1],
                  [&] { return trace_fn(AutocastSemantics::TorchScript, a, b, traced_body); });
  const std::string text = fn->graph()->str(false);
  EXPECT_THAT(text, HasSubstr("aten::to("));
  EXPECT_EQ(text.find("prim::AutocastRegion"), std::string::npos);
  // Called outside autocast, the baked casts stay: the outer mm is bfloat16.
  EXPECT_EQ((*fn)({a, b})[0].to_tensor().dtype(), ST::BFloat16);
}

TEST(EagerTracing, AGraphRunDuringTracingRecordsItsRegions) {
  // A function with a region, called while tracing: its region is recorded too.
  auto inner =
      std::make_shared<Function>("inner", std::shared_ptr<Graph>(parsed(region_graph(true))));
  inner->set_autocast_semantics(AutocastSemantics::Eager);
  const Tensor a = rnd(1), b = rnd(2);
  auto fn = trace_fn(AutocastSemantics::Eager, a, b, [&](const Tensor& x, const Tensor& y) {
    Stack s = (*inner)({x, y});
    return std::vector<Tensor>{s[1].to_tensor()};
  });
  expect_checks(
      *fn->graph(),
      "# CHECK-NOT: _autocast_to\n# CHECK: prim::AutocastRegion[device_type=\"cpu\", dtype=15, "
      "enabled=1\n# CHECK: aten::mm(%a, %b)\n# CHECK-NOT: _autocast_to\n");
  EXPECT_EQ((*fn)({a, b})[0].to_tensor().dtype(), ST::BFloat16);
}

// ---- The warning channel ------------------------------------------------------------------------

TEST(InteropWarnings, HandlerGetsCategoryMessageAndLocation) {
  CollectWarnings w;
  warn_autocast_interop("the traced autocast(enabled=False) is lost",
                        SourceRange::location("m.py", 7, 4));
  ASSERT_EQ(w.got.size(), 1u);
  EXPECT_EQ(w.got[0].category, WarningCategory::AutocastInterop);
  EXPECT_EQ(w.got[0].message, "the traced autocast(enabled=False) is lost");
  EXPECT_EQ(w.got[0].range.location_str(), "m.py:7:4");
  EXPECT_STREQ(warning_category_name(WarningCategory::AutocastInterop), "AutocastInteropWarning");
  EXPECT_STREQ(warning_category_name(WarningCategory::User), "UserWarning");
}

TEST(InteropWarnings, WithoutAHandlerEachGoesToStderrOnce) {
  WarningHandler prev = set_warning_handler(nullptr);
  ::testing::internal::CaptureStderr();
  for (int i = 0; i < 3; ++i)
    warn_autocast_interop("once only", SourceRange::location("m.py", 8, 0));
  warn_autocast_interop("once only", SourceRange::location("m.py", 9, 0));
  const std::string err = ::testing::internal::GetCapturedStderr();
  set_warning_handler(prev);
  EXPECT_EQ(
      err,
      "m.py:8:0: AutocastInteropWarning: once only\nm.py:9:0: AutocastInteropWarning: once only\n");
}

}  // namespace
}  // namespace ampjit
