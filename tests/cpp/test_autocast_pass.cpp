// The JIT autocast pass (script/passes/autocast_pass.h), its cast ops, the interpreter's autocast
// objects, and Function specialization per eager autocast state (Note [Function specialization]).
// Graphs are written as text, in the form the script compiler emits for
// `with torch.autocast(device_type=..., dtype=..., enabled=...):`, and checked FileCheck style.
// The last part translates PyTorch's test/test_jit_autocast.py  for the cases that
// run on CPU and need no script frontend.
#include <gmock/gmock.h>

#include <atomic>
#include <thread>

#include "runtime/autocast/autocast_state.h"
#include "runtime/interpreter.h"
#include "runtime/ir/filecheck.h"
#include "runtime/ops.h"
#include "script/passes/autocast_pass.h"
#include "script/passes/pipeline.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::ampjit::testing::error_of;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using ST = ScalarType;

constexpr const char* kAmp = "__torch__.torch.amp.autocast_mode.autocast";
constexpr const char* kCudaAmp = "__torch__.torch.cuda.amp.autocast_mode.autocast";
constexpr const char* kCpuAmp = "__torch__.torch.cpu.amp.autocast_mode.autocast";
constexpr int kHalf = 5;  // torch's dtype codes, as graphs print them
constexpr int kBF16 = 15;

// The IR the script compiler emits for `with <cls>(device, dtype=<code>, enabled=<on>):`.
std::string open_region(const std::string& ac, const std::string& device, bool on, int dtype,
                        const std::string& cls = kAmp) {
  return fmt::format(
      "  %{0}_on : bool = prim::Constant[value={2}]()\n"
      "  %{0}_dev : str = prim::Constant[value=\"{1}\"]()\n"
      "  %{0}_dt : int = prim::Constant[value={3}]()\n"
      "  %{0} : {4} = prim::CreateObject()\n"
      "   = prim::SetAttr[name=\"_enabled\"](%{0}, %{0}_on)\n"
      "   = prim::SetAttr[name=\"device\"](%{0}, %{0}_dev)\n"
      "   = prim::SetAttr[name=\"fast_dtype\"](%{0}, %{0}_dt)\n"
      "  %{0}_enter : NoneType = prim::Enter(%{0})\n",
      ac, device, on ? 1 : 0, dtype, cls);
}
std::string close_region(const std::string& ac) {
  return fmt::format("  %{0}_exit : NoneType = prim::Exit(%{0})\n", ac);
}
std::string cpu_region(const std::string& ac, bool on = true) {
  return open_region(ac, "cpu", on, kBF16);
}

AutocastContext cpu_ctx(ST dt = ST::BFloat16) {
  AutocastContext c;
  c.cpu_enabled = true;
  c.cpu_dtype = dt;
  return c;
}
AutocastContext cuda_ctx() {
  AutocastContext c;
  c.cuda_enabled = true;
  return c;
}

std::unique_ptr<Graph> parsed(std::string_view text) {
  auto g = parse_graph(text);
  g->verify();
  return g;
}

// The graph after the pass, verified.
std::unique_ptr<Graph> autocast(std::string_view text, const AutocastContext& initial = {}) {
  auto g = parsed(text);
  autocast_pass(*g, initial);
  g->verify();
  return g;
}

void expect_checks(const Graph& g, std::string_view checks) {
  const std::string text = g.str(false);
  const FileCheckResult r = filecheck(text, checks);
  EXPECT_TRUE(r.ok) << r.message << "\n" << text;
}

size_t count(const Graph& g, std::string_view what) {
  const std::string s = g.str(false);
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
constexpr std::string_view kReduced = "aten::_autocast_to_reduced_precision(";
constexpr std::string_view kFull = "aten::_autocast_to_full_precision(";

Stack run(const Graph& g, Stack in) {
  Code(g).run(in);
  return in;
}

std::vector<ST> dtypes_of(const Stack& s) {
  std::vector<ST> out;
  for (const IValue& v : s) out.push_back(v.to_tensor().dtype());
  return out;
}

Tensor rnd(ST dt = ST::Float32, uint64_t seed = 1) {
  return testing::random_tensor({2, 2}, dt, seed);
}

// ---- The cast ops -------------------------------------------------------------------------------

// A tensor that says it lives on CUDA: its bytes are host memory never read, enough for the cast
// ops' pass-through decisions (they look at dtype and device only).
Tensor fake_cuda(ST dt) {
  static double buffer[8];
  Ref<TensorImpl> impl(new TensorImpl());
  impl->storage = Storage::wrap(
      buffer, sizeof buffer, Device(DeviceType::CUDA, 0), [](void*, void*) {}, nullptr);
  impl->sizes = {2};
  impl->strides = {1};
  impl->dtype = dt;
  impl->device = Device(DeviceType::CUDA, 0);
  impl->refresh();
  return Tensor(std::move(impl));
}

const ST kAllDtypes[] = {ST::Float32, ST::Float64, ST::Float16, ST::BFloat16,
                         ST::Int64,   ST::Int32,   ST::Bool};
const bool kFlags[] = {false, true};

TEST(AutocastCastOps, ReducedPrecisionConvertsOnlyFloat32OnAnEnabledDevice) {
  const bool cuda_can_convert = Storage::has_device_allocator(DeviceType::CUDA);
  for (ST dt : kAllDtypes) {
    for (DeviceType dev : {DeviceType::CPU, DeviceType::CUDA}) {
      for (bool cuda_on : kFlags) {
        for (bool cpu_on : kFlags) {
          for (auto dts :
               {std::pair{ST::Float16, ST::BFloat16}, std::pair{ST::BFloat16, ST::Float16}}) {
            const ST cuda_dt = dts.first, cpu_dt = dts.second;
            SCOPED_TRACE(
                fmt::format("{} on {}, cuda_enabled={} cpu_enabled={} cuda_dtype={} cpu_dtype={}",
                            dtype_name(dt), device_type_name(dev), cuda_on, cpu_on,
                            dtype_name(cuda_dt), dtype_name(cpu_dt)));
            const Tensor t = dev == DeviceType::CPU ? rnd(dt) : fake_cuda(dt);
            const bool converts = dt == ST::Float32 && (dev == DeviceType::CUDA ? cuda_on : cpu_on);
            auto cast = [&] {
              return Tensor(
                  ops::_autocast_to_reduced_precision(t, cuda_on, cpu_on, cuda_dt, cpu_dt));
            };
            if (!converts) {
              EXPECT_TRUE(cast().is_same(t));
            } else if (dev == DeviceType::CPU) {
              Tensor r = cast();
              EXPECT_EQ(r.dtype(), cpu_dt);
              EXPECT_EQ(testing::values(r), testing::values(t.to(cpu_dt)));
            } else if (cuda_can_convert) {
              EXPECT_EQ(cast().dtype(), cuda_dt);
            } else {
              // The conversion allocates on the device, which this build has no backend for.
              EXPECT_THAT(cast, ::testing::ThrowsMessage<Error>(
                                    ::testing::HasSubstr("device cuda:0 is not available")));
            }
          }
        }
      }
    }
  }
}

TEST(AutocastCastOps, FullPrecisionConvertsOnlyReducedFloatsOnAnEnabledDevice) {
  const bool cuda_can_convert = Storage::has_device_allocator(DeviceType::CUDA);
  for (ST dt : kAllDtypes) {
    for (DeviceType dev : {DeviceType::CPU, DeviceType::CUDA}) {
      for (bool cuda_on : kFlags) {
        for (bool cpu_on : kFlags) {
          SCOPED_TRACE(fmt::format("{} on {}, cuda_enabled={} cpu_enabled={}", dtype_name(dt),
                                   device_type_name(dev), cuda_on, cpu_on));
          const Tensor t = dev == DeviceType::CPU ? rnd(dt) : fake_cuda(dt);
          const bool converts = (dt == ST::Float16 || dt == ST::BFloat16) &&
                                (dev == DeviceType::CUDA ? cuda_on : cpu_on);
          auto cast = [&] { return Tensor(ops::_autocast_to_full_precision(t, cuda_on, cpu_on)); };
          if (!converts) {
            EXPECT_TRUE(cast().is_same(t));
          } else if (dev == DeviceType::CPU) {
            Tensor r = cast();
            EXPECT_EQ(r.dtype(), ST::Float32);
            EXPECT_EQ(testing::values(r), testing::values(t));  // widening is exact
          } else if (cuda_can_convert) {
            EXPECT_EQ(cast().dtype(), ST::Float32);
          } else {
            EXPECT_THAT(cast, ::testing::ThrowsMessage<Error>(
                                  ::testing::HasSubstr("device cuda:0 is not available")));
          }
        }
      }
    }
  }
}

TEST(AutocastCastOps, AreNeverAutocastThemselvesAndAliasTheirInput) {
  for (OpId id : {OpId::_autocast_to_reduced_precision, OpId::_autocast_to_full_precision}) {
    const OpEntry& op = op_entry(id);
    for (DeviceType d : {DeviceType::CPU, DeviceType::CUDA})
      EXPECT_EQ(op.autocast[static_cast<int>(d)], AutocastPolicy::None) << op.name;
    EXPECT_FALSE(op.schema.args[0].is_write);
  }
  // Under eager CPU autocast, a float32 input stays float32 when the op says the CPU is disabled:
  // the eager layer does not cast the op's argument first.
  AutocastGuard ac(DeviceType::CPU, true, ST::BFloat16, false);
  const Tensor t = rnd();
  EXPECT_TRUE(
      Tensor(ops::_autocast_to_reduced_precision(t, false, false, ST::Float16, ST::BFloat16))
          .is_same(t));
  const Tensor h = rnd(ST::BFloat16);
  EXPECT_EQ(Tensor(ops::_autocast_to_full_precision(h, false, true)).dtype(), ST::Float32);
}

TEST(AutocastCastOps, IsAutocastEnabledReadsThisThreadsEagerFlags) {
  EXPECT_FALSE(ops::is_autocast_cpu_enabled().value().to_bool());
  {
    AutocastGuard ac(DeviceType::CPU);
    EXPECT_TRUE(ops::is_autocast_cpu_enabled().value().to_bool());
    EXPECT_FALSE(ops::is_autocast_enabled().value().to_bool());
  }
  EXPECT_TRUE(op_entry(OpId::is_autocast_cpu_enabled).has(kNondeterministic));  // never folded
}

// ---- Autocast objects in the interpreter --------------------------------------------------------

TEST(AutocastObjects, CreateSetAttrEnterExitRunAndDoNothing) {
  const std::string text = "graph(%a : Tensor, %b : Tensor):\n" + cpu_region("ac") +
                           "  %y : Tensor = aten::mm(%a, %b)\n" + close_region("ac") +
                           "  return (%y, %ac_exit)\n";
  auto g = parsed(text);
  // Printed as torch prints nodes without outputs, and read back unchanged.
  EXPECT_THAT(g->str(), HasSubstr("\n   = prim::SetAttr[name=\"_enabled\"](%ac, %ac_on)\n"));
  EXPECT_EQ(parse_graph(g->str())->str(), g->str());
  // Without the pass, the region is inert (torchscript semantics: __enter__ returns early).
  Stack out = run(*g, {rnd(), rnd()});
  EXPECT_EQ(out[0].to_tensor().dtype(), ST::Float32);
  EXPECT_TRUE(out[1].is_none());
}

TEST(AutocastObjects, SetAttrStoresOnTheObjectTheGraphCreated) {
  auto g = parsed(
      "graph(%v : int):\n"
      "  %o : __torch__.Foo = prim::CreateObject()\n"
      "   = prim::SetAttr[name=\"x\"](%o, %v)\n"
      "  %r : int = prim::GetAttr[name=\"x\"](%o)\n"
      "  return (%r, %o)\n");
  Stack out = run(*g, {IValue(int64_t{7})});
  EXPECT_EQ(out[0].to_int(), 7);
  ASSERT_TRUE(out[1].is_object());
  EXPECT_STREQ(out[1].object()->type_name(), "__torch__.Foo");
}

TEST(AutocastObjects, WithOnAnotherObjectIsNotSupported) {
  auto g = parsed(
      "graph():\n"
      "  %o : __torch__.Foo = prim::CreateObject()\n"
      "  %e : NoneType = prim::Enter(%o)\n"
      "  %x : NoneType = prim::Exit(%o)\n"
      "  return ()\n");
  EXPECT_THAT([&] { run(*g, {}); }, ::testing::ThrowsMessage<NotImplementedError>(
                                        HasSubstr("`with` on a '__torch__.Foo' object")));
}

TEST(AutocastObjects, ClassNamesIgnoreTorchMangling) {
  EXPECT_TRUE(is_autocast_class_name(kAmp));
  EXPECT_TRUE(is_autocast_class_name(kCudaAmp));
  EXPECT_TRUE(is_autocast_class_name(kCpuAmp));
  EXPECT_TRUE(
      is_autocast_class_name("__torch__.torch.amp.autocast_mode.___torch_mangle_3.autocast"));
  EXPECT_FALSE(is_autocast_class_name("__torch__.torch.autocast_mode.autocast"));  // pre-1.10 name
  EXPECT_FALSE(is_autocast_class_name("__torch__.torch.amp.autocast_mode.autocastX"));
}

// ---- The pass: regions, policies ----------------------------------------------------------------

TEST(AutocastPass, CpuRegionCastsMatmulInputsToBFloat16) {
  auto g = autocast("graph(%a : Tensor, %b : Tensor):\n" + cpu_region("ac") +
                    "  %y : Tensor = aten::mm(%a, %b)\n" + close_region("ac") + "  return (%y)\n");
  // Per input, in input order: the four flags as constants, then the cast, right before the mm.
  expect_checks(*g, R"(
    # CHECK: prim::Enter
    # CHECK-NEXT: %0 : bool = prim::Constant[value=0]()
    # CHECK-NEXT: %1 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %2 : int = prim::Constant[value=5]()
    # CHECK-NEXT: %3 : int = prim::Constant[value=15]()
    # CHECK-NEXT: %4 : Tensor = aten::_autocast_to_reduced_precision(%a, %0, %1, %2, %3)
    # CHECK-NEXT: %5 : bool = prim::Constant[value=0]()
    # CHECK-NEXT: %6 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %7 : int = prim::Constant[value=5]()
    # CHECK-NEXT: %8 : int = prim::Constant[value=15]()
    # CHECK-NEXT: %9 : Tensor = aten::_autocast_to_reduced_precision(%b, %5, %6, %7, %8)
    # CHECK-NEXT: %y : Tensor = aten::mm(%4, %9)
    # CHECK-NEXT: prim::Exit
  )");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd()})), std::vector<ST>{ST::BFloat16});
  // The result prints and parses back (the dtype constants are ints, read as ScalarType).
  auto back = parse_graph(g->str());
  EXPECT_EQ(back->str(), g->str());
  EXPECT_EQ(dtypes_of(run(*back, {rnd(), rnd()})), std::vector<ST>{ST::BFloat16});
}

TEST(AutocastPass, NothingOutsideRegionsWhenEagerAutocastIsOff) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %y : Tensor = aten::mm(%a, %b)\n"
      "  %z : Tensor = aten::log(%y)\n"
      "  return (%z)\n");
  EXPECT_EQ(count(*g, "_autocast_to_"), 0u);
}

TEST(AutocastPass, InitialContextComesFromTheCaller) {
  const std::string text =
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %y : Tensor = aten::mm(%a, %b)\n"
      "  return (%y)\n";
  auto g = autocast(text, cpu_ctx(ST::Float16));
  expect_checks(*g, R"(
    # CHECK: %2 : int = prim::Constant[value=5]()
    # CHECK-NEXT: %3 : int = prim::Constant[value=5]()
    # CHECK-NEXT: aten::_autocast_to_reduced_precision(%a, %0, %1, %2, %3)
  )");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd()})), std::vector<ST>{ST::Float16});
  // Seeded from this thread's eager state.
  AutocastGuard ac(DeviceType::CPU, true, ST::BFloat16);
  EXPECT_EQ(current_autocast_context(), cpu_ctx(ST::BFloat16));
}

TEST(AutocastPass, EveryLowerPrecisionOpInTheOpTable) {
  // One representative call per op of the lower_precision_fp list that ampjit has.
  const char* calls[] = {
      "aten::mm(%a, %b)",
      "aten::matmul(%a, %b)",
      "aten::bmm(%a, %b)",
      "aten::mv(%a, %b)",
      "aten::addmm(%a, %b, %c, %one, %one)",
      "aten::addmv(%a, %b, %c, %one, %one)",
      "aten::addbmm(%a, %b, %c, %one, %one)",
      "aten::baddbmm(%a, %b, %c, %one, %one)",
      "aten::linear(%a, %b, %c)",
  };
  for (const char* call : calls) {
    SCOPED_TRACE(call);
    auto g = autocast(std::string("graph(%a : Tensor, %b : Tensor, %c : Tensor):\n"
                                  "  %one : int = prim::Constant[value=1]()\n") +
                      cpu_region("ac") + "  %y : Tensor = " + call + "\n" + close_region("ac") +
                      "  return (%y)\n");
    const size_t tensors = std::string(call).find("%c") == std::string::npos ? 2 : 3;
    EXPECT_EQ(count(*g, kReduced), tensors);
  }
  // conv2d: input, weight and the bias (a Tensor-typed value, though the schema says Tensor?).
  auto conv = autocast(
      "graph(%x : Tensor, %w : Tensor, %bias : Tensor, %s : int[], %p : int[], %d : int[], %gr : "
      "int):\n" +
      cpu_region("ac") + "  %y : Tensor = aten::conv2d(%x, %w, %bias, %s, %p, %d, %gr)\n" +
      close_region("ac") + "  return (%y)\n");
  EXPECT_EQ(count(*conv, kReduced), 3u);
}

TEST(AutocastPass, Fp32OpsGetFullPrecisionInputs) {
  for (const char* call :
       {"aten::log(%a)", "aten::exp(%a)", "aten::gelu(%a, %none_str)", "aten::pow(%a, %a)",
        "aten::mse_loss(%a, %b, %one)", "aten::layer_norm(%a, %shape, %b, %b, %eps, %t)"}) {
    SCOPED_TRACE(call);
    auto g =
        autocast(std::string("graph(%a : Tensor, %b : Tensor):\n"
                             "  %one : int = prim::Constant[value=1]()\n"
                             "  %t : bool = prim::Constant[value=1]()\n"
                             "  %eps : float = prim::Constant[value=1.0000000000000001e-05]()\n"
                             "  %shape : int[] = prim::Constant[value=[2]]()\n"
                             "  %none_str : str = prim::Constant[value=\"none\"]()\n") +
                 cpu_region("ac") + "  %y : Tensor = " + call + "\n" + close_region("ac") +
                 "  return (%y)\n");
    const bool two = std::string(call).find("%b") != std::string::npos;
    EXPECT_EQ(count(*g, kFull), two ? 2u : 1u);  // pow(a, a): one cast for the repeated input
    expect_checks(*g, "# CHECK: aten::_autocast_to_full_precision(%a, {{%[0-9]+}}, {{%[0-9]+}})");
  }
}

TEST(AutocastPass, Fp64IsNeverNarrowedAndReducedInputsAreWidened) {
  auto g = autocast("graph(%a : Tensor):\n" + cpu_region("ac") + "  %y : Tensor = aten::log(%a)\n" +
                    close_region("ac") + "  return (%y)\n");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(ST::Float64)})), std::vector<ST>{ST::Float64});
  EXPECT_EQ(dtypes_of(run(*g, {rnd(ST::BFloat16)})), std::vector<ST>{ST::Float32});
  EXPECT_EQ(dtypes_of(run(*g, {rnd(ST::Float16)})), std::vector<ST>{ST::Float32});
}

TEST(AutocastPass, SetOptDtypeOnlyWhenDtypeIsStaticallyNone) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %dtype : int?):\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %f64 : int = prim::Constant[value=7]()\n" +
      cpu_region("ac") +
      "  %ya : Tensor = aten::sum(%a, %none)\n"
      "  %yb : Tensor = aten::log_softmax(%b, %zero, %none)\n"
      "  %yc : Tensor = aten::sum(%c, %f64)\n"
      "  %yd : Tensor = aten::sum(%d, %dtype)\n" +
      close_region("ac") + "  return (%ya, %yb, %yc, %yd)\n");
  expect_checks(*g, R"(
    # CHECK: aten::_autocast_to_full_precision(%a,
    # CHECK: aten::sum(
    # CHECK: aten::_autocast_to_full_precision(%b,
    # CHECK: aten::log_softmax(
    # CHECK-NOT: _autocast_to
    # CHECK: return
  )");
  const Tensor h = rnd(ST::BFloat16);
  Stack out = run(*g, {h, h, h, h, IValue()});
  // An Optional[int] variable holding None still counts as explicit: bfloat16 stays.
  EXPECT_EQ(dtypes_of(Stack(out.begin(), out.end())),
            (std::vector<ST>{ST::Float32, ST::Float32, ST::Float64, ST::BFloat16}));
}

TEST(AutocastPass, SoftmaxIsCastOnCudaOnly) {
  const std::string body =
      "  %none : NoneType = prim::Constant()\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %y : Tensor = aten::softmax(%a, %zero, %none)\n";
  auto cpu = autocast("graph(%a : Tensor):\n" + cpu_region("ac") + body + close_region("ac") +
                      "  return (%y)\n");
  EXPECT_EQ(count(*cpu, kFull), 0u);  // context: CPU only, which softmax ignores
  auto both = autocast(
      "graph(%a : Tensor):\n" + cpu_region("ac") + body + close_region("ac") + "  return (%y)\n",
      cuda_ctx());
  // The CPU flag is cleared for softmax: a bfloat16 CPU tensor stays bfloat16.
  expect_checks(*both, R"(
    # CHECK: %0 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %1 : bool = prim::Constant[value=0]()
    # CHECK-NEXT: aten::_autocast_to_full_precision(%a, %0, %1)
  )");
  EXPECT_EQ(dtypes_of(run(*both, {rnd(ST::BFloat16)})), std::vector<ST>{ST::BFloat16});
}

TEST(AutocastPass, PromoteIsConservative) {
  const std::string tail =
      "  %y : Tensor = aten::add(%a, %b, %one)\n" + close_region("ac") + "  return (%y)\n";
  const std::string one = "  %one : int = prim::Constant[value=1]()\n";
  // Unknown dtype: every tensor input is cast.
  auto unknown = autocast("graph(%a : Tensor, %b : Tensor):\n" + one + cpu_region("ac") + tail);
  EXPECT_EQ(count(*unknown, kFull), 2u);
  // A known float32 input: every tensor input is cast.
  auto f32 =
      autocast("graph(%a : Float(2, 2), %b : BFloat16(2, 2)):\n" + one + cpu_region("ac") + tail);
  EXPECT_EQ(count(*f32, kFull), 2u);
  // Known, none float32: nothing.
  auto reduced =
      autocast("graph(%a : BFloat16(2, 2), %b : Double(2, 2)):\n" + one + cpu_region("ac") + tail);
  EXPECT_EQ(count(*reduced, kFull), 0u);
  // The result is float32 when an input is float32, whatever the other is.
  EXPECT_EQ(dtypes_of(run(*unknown, {rnd(ST::BFloat16), rnd()})), std::vector<ST>{ST::Float32});
}

TEST(AutocastPass, TensorListsAndOptionalTensorsAreNotCast) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %w : Tensor?):\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %l : Tensor[] = prim::ListConstruct(%a, %b)\n" +
      cpu_region("ac") +
      "  %y : Tensor = aten::cat(%l, %zero)\n"
      "  %z : Tensor = aten::linear(%a, %b, %w)\n" +
      close_region("ac") + "  return (%y, %z)\n");
  expect_checks(*g, R"(
    # CHECK-NOT: _autocast_to
    # CHECK: aten::cat(%l, %zero)
    # CHECK-COUNT-2: aten::_autocast_to_reduced_precision
    # CHECK-NOT: _autocast_to
    # CHECK: aten::linear({{%[0-9]+}}, {{%[0-9]+}}, %w)
  )");
}

TEST(AutocastPass, MutableSchemasAreSkipped) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n" +
      cpu_region("ac") +
      "  %e : Tensor = aten::addmm(%a, %b, %c, %one, %one)\n"
      "  %f : Tensor = aten::addmm(%a, %b, %c, %one, %one, %a)\n"
      "  %g : Tensor = aten::addmm_(%a, %b, %c, %one, %one)\n"
      "  %h : Tensor = aten::mm(%b, %c, %a)\n" +
      close_region("ac") + "  return (%e, %f, %g, %h)\n");
  EXPECT_EQ(g->outputs()[1]->node()->op()->name, "aten::addmm.out");
  EXPECT_EQ(count(*g, kReduced), 3u);  // only the functional addmm
  expect_checks(*g, R"(
    # CHECK: aten::addmm({{%[0-9]+}}, {{%[0-9]+}}, {{%[0-9]+}}, %one, %one)
    # CHECK-NEXT: aten::addmm(%a, %b, %c, %one, %one, %a)
    # CHECK-NEXT: aten::addmm_(%a, %b, %c, %one, %one)
    # CHECK-NEXT: aten::mm(%b, %c, %a)
  )");
}

TEST(AutocastPass, NoDoubleCastAndRepeatedInputsCastOnce) {
  auto g =
      autocast("graph(%a : Tensor):\n" + cpu_region("ac") + "  %e : Tensor = aten::mm(%a, %a)\n" +
               "  %f : Tensor = aten::mm(%e, %e)\n" + close_region("ac") + "  return (%f)\n");
  EXPECT_EQ(count(*g, kReduced), 2u);  // one per distinct input
  // Running the pass again (torch: freezing re-runs it) adds nothing: inputs are already cast.
  const std::string once = g->str(false);
  autocast_pass(*g, {});
  EXPECT_EQ(g->str(false), once);
}

TEST(AutocastPass, BannedOpIsUnsafeOnlyInAnEnabledContext) {
  const std::string call =
      "  %y : Tensor = aten::binary_cross_entropy(%a, %b, %w, %one) # model.py:7:12\n";
  const std::string head =
      "graph(%a : Tensor, %b : Tensor, %w : Tensor?):\n  %one : int = prim::Constant[value=1]()\n";
  EXPECT_NO_THROW(autocast(head + call + "  return (%y)\n"));
  EXPECT_NO_THROW(
      autocast(head + cpu_region("ac", false) + call + close_region("ac") + "  return (%y)\n"));
  const std::string msg = error_of(
      [&] { autocast(head + cpu_region("ac") + call + close_region("ac") + "  return (%y)\n"); });
  EXPECT_EQ(msg, "Unsafe to autocast\nmodel.py:7:12");
  EXPECT_THAT(error_of([&] { autocast(head + call + "  return (%y)\n", cpu_ctx()); }),
              StartsWith("Unsafe to autocast"));
}

TEST(AutocastPass, IsAutocastEnabledBecomesTrueWhereThePassAutocasts) {
  const std::string text = "graph():\n" + cpu_region("ac") +
                           "  %c : bool = aten::is_autocast_cpu_enabled()\n"
                           "  %g : bool = aten::is_autocast_enabled()\n" +
                           close_region("ac") +
                           "  %o : bool = aten::is_autocast_cpu_enabled()\n  return (%c, %g, %o)\n";
  auto g = autocast(text);
  expect_checks(*g, R"(
    # CHECK: prim::Enter
    # CHECK-NEXT: %0 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %g : bool = aten::is_autocast_enabled()
    # CHECK: prim::Exit
    # CHECK-NEXT: %o : bool = aten::is_autocast_cpu_enabled()
    # CHECK-NEXT: return (%0, %g, %o)
  )");
}

// ---- The pass: nesting, blocks ------------------------------------------------------------------

TEST(AutocastPass, NestedCpuRegionKeepsCudaEnabled) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor):\n" + open_region("outer", "cuda", true, kHalf, kCudaAmp) +
      open_region("inner", "cpu", true, kBF16, kCpuAmp) + "  %y : Tensor = aten::mm(%a, %b)\n" +
      close_region("inner") + "  %z : Tensor = aten::mm(%a, %b)\n" + close_region("outer") +
      "  return (%y, %z)\n");
  expect_checks(*g, R"(
    # CHECK: prim::Enter(%inner)
    # CHECK-NEXT: %0 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %1 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %2 : int = prim::Constant[value=5]()
    # CHECK-NEXT: %3 : int = prim::Constant[value=15]()
    # CHECK: %y : Tensor = aten::mm(
    # CHECK: prim::Exit(%inner)
    # CHECK-NEXT: %10 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %11 : bool = prim::Constant[value=0]()
    # CHECK: %z : Tensor = aten::mm(
  )");
  // CPU tensors: bfloat16 inside the CPU region, untouched by the CUDA-only outer region.
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd()})), (std::vector<ST>{ST::BFloat16, ST::Float32}));
}

TEST(AutocastPass, SubBlocksStartFromTheCurrentContext) {
  auto g =
      autocast("graph(%a : Tensor, %b : Tensor, %cond : bool, %n : int):\n" + cpu_region("ac") +
               "  %r : Tensor = prim::If(%cond)\n"
               "    block0():\n"
               "      %t : Tensor = aten::mm(%a, %b)\n"
               "      -> (%t)\n"
               "    block1():\n"
               "      -> (%a)\n"
               "  %true : bool = prim::Constant[value=1]()\n"
               "  %l : Tensor = prim::Loop(%n, %true, %r)\n"
               "    block0(%i : int, %acc : Tensor):\n"
               "      %m : Tensor = aten::mm(%acc, %b)\n"
               "      -> (%true, %m)\n" +
               close_region("ac") +
               "  %after : Tensor = aten::mm(%l, %b)\n"
               "  return (%after)\n");
  expect_checks(*g, R"(
    # CHECK: block0():
    # CHECK-COUNT-2: aten::_autocast_to_reduced_precision
    # CHECK: block0(%i : int, %acc : Tensor):
    # CHECK-COUNT-2: aten::_autocast_to_reduced_precision
    # CHECK: prim::Exit
    # CHECK-NOT: _autocast_to
    # CHECK: aten::mm(%l, %b)
  )");
}

TEST(AutocastPass, RegionsInsideBranchesCloseThere) {
  // torch's test_divergent_autocast: instances made up front, entered in different branches.
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %cond : bool):\n"
      "  %on_v : bool = prim::Constant[value=1]()\n"
      "  %off_v : bool = prim::Constant[value=0]()\n"
      "  %dev : str = prim::Constant[value=\"cpu\"]()\n"
      "  %dt : int = prim::Constant[value=15]()\n"
      "  %on : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()\n"
      "   = prim::SetAttr[name=\"_enabled\"](%on, %on_v)\n"
      "   = prim::SetAttr[name=\"device\"](%on, %dev)\n"
      "   = prim::SetAttr[name=\"fast_dtype\"](%on, %dt)\n"
      "  %off : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()\n"
      "   = prim::SetAttr[name=\"_enabled\"](%off, %off_v)\n"
      "   = prim::SetAttr[name=\"device\"](%off, %dev)\n"
      "   = prim::SetAttr[name=\"fast_dtype\"](%off, %dt)\n"
      "  %r : Tensor = prim::If(%cond)\n"
      "    block0():\n"
      "      %e1 : NoneType = prim::Enter(%on)\n"
      "      %t : Tensor = aten::mm(%a, %b)\n"
      "      %x1 : NoneType = prim::Exit(%on)\n"
      "      -> (%t)\n"
      "    block1():\n"
      "      %e2 : NoneType = prim::Enter(%off)\n"
      "      %f : Tensor = aten::mm(%a, %b)\n"
      "      %x2 : NoneType = prim::Exit(%off)\n"
      "      -> (%f)\n"
      "  return (%r)\n");
  EXPECT_EQ(count(*g, kReduced), 2u);
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd(), IValue(true)})), std::vector<ST>{ST::BFloat16});
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd(), IValue(false)})), std::vector<ST>{ST::Float32});
  // An Enter in one block with its Exit in another is rejected.
  EXPECT_THAT(error_of([] {
                autocast("graph(%a : Tensor, %cond : bool):\n" + cpu_region("ac") +
                         "  %r : Tensor = prim::If(%cond)\n"
                         "    block0():\n"
                         "      %x : NoneType = prim::Exit(%ac)\n"
                         "      -> (%a)\n"
                         "    block1():\n"
                         "      -> (%a)\n"
                         "  return (%r)\n");
              }),
              HasSubstr("prim::Exit does not match the innermost prim::Enter of its block"));
}

// ---- The pass: diagnostics (torch's messages, then the location) --------------------------------

std::string region_with(const std::string& enabled, const std::string& device,
                        const std::string& dtype, const std::string& extra_inputs = "") {
  return "graph(%a : Tensor" + extra_inputs + "):\n" + enabled + device + dtype +
         "  %ac : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()\n"
         "   = prim::SetAttr[name=\"_enabled\"](%ac, %on) # f.py:3:9\n"
         "   = prim::SetAttr[name=\"device\"](%ac, %dev) # f.py:3:9\n"
         "   = prim::SetAttr[name=\"fast_dtype\"](%ac, %dt) # f.py:3:9\n"
         "  %e : NoneType = prim::Enter(%ac) # f.py:3:4\n"
         "  %x : NoneType = prim::Exit(%ac) # f.py:3:4\n"
         "  return (%a)\n";
}
const std::string kOn = "  %on : bool = prim::Constant[value=1]()\n";
const std::string kDev = "  %dev : str = prim::Constant[value=\"cpu\"]()\n";
const std::string kDt = "  %dt : int = prim::Constant[value=15]()\n";

TEST(AutocastPassDiagnostics, SettingsMustBeConstants) {
  EXPECT_EQ(error_of([] { autocast(region_with("", kDev, kDt, ", %on : bool")); }),
            "Autocast _enabled argument must be a constant\nf.py:3:9");
  EXPECT_EQ(error_of([] { autocast(region_with(kOn, "", kDt, ", %dev : str")); }),
            "Autocast device argument must be a constant\nf.py:3:9");
  EXPECT_EQ(error_of([] { autocast(region_with(kOn, kDev, "", ", %dt : int")); }),
            "Autocast dtype argument must be a constant and defined\nf.py:3:9");
  // A None dtype is not defined.
  EXPECT_EQ(
      error_of([] { autocast(region_with(kOn, kDev, "  %dt : NoneType = prim::Constant()\n")); }),
      "Autocast dtype argument must be a constant and defined\nf.py:3:9");
  // The same constants as ScalarType values are accepted.
  auto g = parsed(region_with(kOn, kDev, kDt));
  for (Node* n : g->block()->nodes())
    if (n->kind() == sym::prim::Constant && n->output()->debug_name() == "dt")
      n->set_attr(sym::attr::value, ST::Float16);
  EXPECT_NO_THROW(autocast_pass(*g, {}));
}

TEST(AutocastPassDiagnostics, MissingSettings) {
  auto without = [](const std::string& attr) {
    std::string text = open_region("ac", "cpu", true, kBF16) + close_region("ac");
    const size_t p = text.find("   = prim::SetAttr[name=\"" + attr + "\"]");
    text.erase(p, text.find('\n', p) - p + 1);
    return "graph():\n" + text + "  return ()\n";
  };
  EXPECT_EQ(error_of([&] { autocast(without("_enabled")); }),
            "Autocast missing _enabled attribute");
  EXPECT_EQ(error_of([&] { autocast(without("fast_dtype")); }),
            "Autocast missing fast_dtype attribute");
  EXPECT_EQ(error_of([&] { autocast(without("device")); }), "Autocast missing device attribute");
}

TEST(AutocastPassDiagnostics, UnsupportedSyntaxAndAs) {
  // `with on if cond else off:` (torch's test_conditional_autocast).
  const std::string cond =
      "graph(%a : Tensor, %cond : bool):\n" + open_region("on", "cpu", true, kBF16) +
      close_region("on") +
      "  %pick : __torch__.torch.amp.autocast_mode.autocast = prim::If(%cond)\n"
      "    block0():\n"
      "      -> (%on)\n"
      "    block1():\n"
      "      -> (%on)\n"
      "  %e : NoneType = prim::Enter(%pick) # f.py:5:4\n"
      "  %x : NoneType = prim::Exit(%pick)\n"
      "  return (%a)\n";
  EXPECT_EQ(error_of([&] { autocast(cond); }), "Unsupported autocast syntax\nf.py:5:4");
  // `with autocast() as x:` (the Enter's result is used).
  const std::string as =
      "graph(%a : Tensor):\n" + cpu_region("ac") + close_region("ac") + "  return (%ac_enter)\n";
  EXPECT_EQ(error_of([&] { autocast(as); }), "`with autocast() as ...` is not supported");
  // A missing Exit.
  EXPECT_THAT(
      error_of([] { autocast("graph(%a : Tensor):\n" + cpu_region("ac") + "  return (%a)\n"); }),
      HasSubstr("prim::Enter without a matching prim::Exit"));
}

TEST(AutocastPassDiagnostics, LocationsCarryTheSourceLine) {
  auto g = parsed(region_with("", kDev, kDt, ", %on : bool"));
  auto src = std::make_shared<Source>(
      "def f(a, on: bool):\n    with autocast(enabled=on):\n        pass\n", "f.py");
  for (Node* n : g->block()->nodes())
    if (n->kind() == sym::prim::SetAttr) n->set_source_range(SourceRange(src, 24, 49));
  EXPECT_EQ(error_of([&] { autocast_pass(*g, {}); }),
            "Autocast _enabled argument must be a constant\n"
            "f.py:2:5\n"
            "    with autocast(enabled=on):\n"
            "    ~~~~~~~~~~~~~~~~~~~~~~~~~");
}

TEST(AutocastPassDiagnostics, CallsUnderAnotherStateThanTheInitialOne) {
  // torch's test_jit_call_method_under_autocast: a call left in an autocast region.
  const std::string text =
      "graph(%a : Tensor):\n" + open_region("ac", "cuda", true, kHalf, kCudaAmp) +
      "  %y : Tensor = prim::CallFunction(%a)\n" + close_region("ac") + "  return (%y)\n";
  // Under eager autocast (as enabled as the region): allowed, its inputs made full precision.
  auto g = autocast(text, cpu_ctx());
  expect_checks(
      *g, "# CHECK: aten::_autocast_to_full_precision(%a,\n# CHECK-NEXT: prim::CallFunction(");
  // Without: torch's internal assert.
  EXPECT_THAT(error_of([&] { autocast(text); }),
              HasSubstr("Calls are not expected with AMP & JIT"));
  // A call outside any region in a block without regions is fine either way.
  EXPECT_NO_THROW(
      autocast("graph(%a : Tensor):\n  %y : Tensor = prim::CallFunction(%a)\n  return (%y)\n"));
}

// ---- Specialization per eager autocast state ----------------------------------------------------

std::shared_ptr<Function> make_function(const std::string& text, const std::string& name = "f") {
  return std::make_shared<Function>(name, std::shared_ptr<Graph>(parsed(text)));
}

const char* kMmGelu =
    "graph(%a : Tensor, %b : Tensor):\n"
    "  %none : str = prim::Constant[value=\"none\"]()\n"
    "  %y : Tensor = aten::mm(%a, %b)\n"
    "  %z : Tensor = aten::gelu(%y, %none)\n"
    "  return (%y, %z)\n";

TEST(FunctionSpecialization, OneOptimizedGraphPerEagerState) {
  auto fn = make_function(kMmGelu);
  const std::string plain = fn->graph()->str();
  auto off = fn->optimized_graph();
  EXPECT_EQ(count(*off, "_autocast_to_"), 0u);
  EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), (std::vector<ST>{ST::Float32, ST::Float32}));
  std::shared_ptr<const Graph> bf16, f16;
  {
    AutocastGuard ac(DeviceType::CPU, true, ST::BFloat16);
    bf16 = fn->optimized_graph();
    EXPECT_EQ(count(*bf16, kReduced), 2u);
    EXPECT_EQ(count(*bf16, kFull), 1u);
    // The JIT pass makes gelu float32 where eager 1.13 CPU autocast leaves it bfloat16.
    EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), (std::vector<ST>{ST::BFloat16, ST::Float32}));
    EXPECT_EQ(fn->optimized_graph(), bf16);  // built once
  }
  {
    AutocastGuard ac(DeviceType::CPU, true, ST::Float16);
    f16 = fn->optimized_graph();
    EXPECT_NE(f16, bf16);
    EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), (std::vector<ST>{ST::Float16, ST::Float32}));
  }
  {
    // CUDA autocast: casts in the graph, but CPU tensors pass through them.
    AutocastGuard ac(DeviceType::CUDA, true);
    auto cuda = fn->optimized_graph();
    EXPECT_EQ(count(*cuda, kReduced), 2u);
    EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), (std::vector<ST>{ST::Float32, ST::Float32}));
  }
  EXPECT_EQ(fn->optimized_graph(), off);
  EXPECT_EQ(fn->graph()->str(), plain);  // .graph never shows casts
}

TEST(FunctionSpecialization, JitAutocastModeIgnoreAmpAndOptimizable) {
  auto fn = make_function(kMmGelu);
  AutocastGuard ac(DeviceType::CPU);
  EXPECT_EQ(count(*fn->optimized_graph(), "_autocast_to_"), 3u);
  // Globally off: the pass is skipped; eager autocast still applies at run time.
  EXPECT_TRUE(set_jit_autocast_mode(false));
  EXPECT_FALSE(jit_autocast_mode());
  EXPECT_EQ(count(*fn->optimized_graph(), "_autocast_to_"), 0u);
  EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), (std::vector<ST>{ST::BFloat16, ST::BFloat16}));
  EXPECT_FALSE(set_jit_autocast_mode(true));
  EXPECT_EQ(count(*fn->optimized_graph(), "_autocast_to_"), 3u);
  // Per function (torch's _set_ignore_amp).
  fn->set_ignore_amp(true);
  EXPECT_EQ(count(*fn->optimized_graph(), "_autocast_to_"), 0u);
  fn->set_ignore_amp(false);
  // Not optimizable: the plain graph itself.
  fn->set_optimizable(false);
  EXPECT_EQ(fn->optimized_graph(), fn->graph());
}

TEST(FunctionSpecialization, CalleesAreInlinedBeforeThePass) {
  auto callee = make_function(
      "graph(%x : Tensor, %y : Tensor):\n  %r : Tensor = aten::mm(%x, %y)\n  return (%r)\n",
      "helper");
  auto g = std::make_shared<Graph>();
  Value* a = g->add_input("a");
  Value* b = g->add_input("b");
  Node* call = g->create(sym::prim::CallFunction, {a, b}, 1);
  call->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(callee))));
  g->block()->append(call);
  g->register_output(call->output());
  Function caller("caller", g);
  AutocastGuard ac(DeviceType::CPU);
  expect_checks(*caller.optimized_graph(), R"(
    # CHECK-NOT: prim::CallFunction
    # CHECK: aten::_autocast_to_reduced_precision(%a,
    # CHECK: aten::mm(
  )");
  EXPECT_EQ(dtypes_of(caller({rnd(), rnd()})), std::vector<ST>{ST::BFloat16});
}

TEST(FunctionSpecialization, DiagnosticsAreRaisedAtEveryCallAndNothingIsCached) {
  auto fn = make_function(region_with("", kDev, kDt, ", %on : bool"));
  for (int i = 0; i < 2; ++i) {
    EXPECT_THAT(
        [&] {
          (*fn)({rnd(), IValue(true)});
        },
        ::testing::ThrowsMessage<Error>(
            StartsWith("Autocast _enabled argument must be a constant")));
  }
  // The plain graph still runs when the function is not optimized.
  fn->set_optimizable(false);
  EXPECT_NO_THROW((*fn)({rnd(), IValue(true)}));
}

TEST(FunctionSpecialization, EightThreadsWithTheirOwnStates) {
  auto fn = make_function(kMmGelu);
  const Tensor a = rnd(ST::Float32, 3), b = rnd(ST::Float32, 4);
  struct Want {
    bool cpu;
    ST cpu_dtype;
    bool cuda;
    ST mm;
  };
  const Want wants[8] = {
      {false, ST::BFloat16, false, ST::Float32}, {true, ST::BFloat16, false, ST::BFloat16},
      {true, ST::Float16, false, ST::Float16},   {false, ST::BFloat16, true, ST::Float32},
      {true, ST::BFloat16, true, ST::BFloat16},  {true, ST::Float16, true, ST::Float16},
      {false, ST::Float16, false, ST::Float32},  {true, ST::BFloat16, false, ST::BFloat16}};
  // The reference results, one thread at a time.
  std::vector<Stack> expected(8);
  for (int i = 0; i < 8; ++i) {
    AutocastGuard cpu(DeviceType::CPU, wants[i].cpu, wants[i].cpu_dtype);
    AutocastGuard cuda(DeviceType::CUDA, wants[i].cuda);
    expected[i] = Function("ref", fn->graph())({a, b});
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      AutocastGuard cpu(DeviceType::CPU, wants[i].cpu, wants[i].cpu_dtype);
      AutocastGuard cuda(DeviceType::CUDA, wants[i].cuda);
      for (int k = 0; k < 50; ++k) {
        Stack s = (*fn)({a, b});
        const bool ok =
            s[0].to_tensor().dtype() == wants[i].mm && s[1].to_tensor().dtype() == ST::Float32 &&
            testing::values(s[0].to_tensor()) == testing::values(expected[i][0].to_tensor()) &&
            testing::values(s[1].to_tensor()) == testing::values(expected[i][1].to_tensor()) &&
            (count(*fn->optimized_graph(), "_autocast_to_") != 0) ==
                (wants[i].cpu || wants[i].cuda);
        if (!ok) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(Pipeline, OptimizeGraphInlinesThenAutocasts) {
  auto g = parsed(kMmGelu);
  optimize_graph(*g, cpu_ctx());
  EXPECT_EQ(count(*g, "_autocast_to_"), 3u);
  auto h = parsed(kMmGelu);
  optimize_graph(*h, cpu_ctx(), /*disable_autocast=*/true);
  EXPECT_EQ(count(*h, "_autocast_to_"), 0u);
}

// ---- torch's test/test_jit_autocast.py, CPU cases (numbered as there) -------------

// A graph of `fn(a, b, c, d)` with `body` inside `with torch.autocast("cpu", bfloat16, enabled):`.
std::unique_ptr<Graph> in_cpu_region(const std::string& body, const std::string& outputs,
                                     bool enabled = true, const std::string& cls = kAmp) {
  return autocast(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):\n"
      "  %one : int = prim::Constant[value=1]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %f32 : int = prim::Constant[value=6]()\n"
      "  %f64 : int = prim::Constant[value=7]()\n"
      "  %false : bool = prim::Constant[value=0]()\n" +
      open_region("ac", "cpu", enabled, kBF16, cls) + body + close_region("ac") + "  return (" +
      outputs + ")\n");
}

Stack run_fp32(const Graph& g) {
  return run(g,
             {rnd(ST::Float32, 1), rnd(ST::Float32, 2), rnd(ST::Float32, 3), rnd(ST::Float32, 4)});
}

TEST(TorchJitAutocastCpu, T02_Minimal_T03_LinearBf16) {
  auto g = in_cpu_region("  %x : Tensor = aten::mm(%a, %b)\n  %y : Tensor = aten::sum(%x, %none)\n",
                         "%x, %y");
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::BFloat16, ST::Float32}));
}

TEST(TorchJitAutocastCpu, T04_CudaRegionLeavesCpuTensors) {
  auto g = autocast("graph(%a : Tensor, %b : Tensor):\n" +
                    open_region("ac", "cuda", true, kHalf, kCudaAmp) +
                    "  %x : Tensor = aten::mm(%a, %b)\n" + close_region("ac") + "  return (%x)\n");
  EXPECT_EQ(count(*g, kReduced), 2u);
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd()})), std::vector<ST>{ST::Float32});
}

TEST(TorchJitAutocastCpu, T05_MinimalOff) {
  auto g = in_cpu_region("  %x : Tensor = aten::mm(%a, %b)\n", "%x", false);
  EXPECT_EQ(count(*g, "_autocast_to_"), 0u);
  EXPECT_EQ(dtypes_of(run_fp32(*g)), std::vector<ST>{ST::Float32});
}

TEST(TorchJitAutocastCpu, T06_T07_RuntimeEnabledIsAnError) {
  // enabled=use_amp (an argument), and enabled=True if a[0][0] > 0.5 else False (a prim::If).
  EXPECT_THAT(error_of([] { autocast(region_with("", kDev, kDt, ", %on : bool")); }),
              StartsWith("Autocast _enabled argument must be a constant"));
  const std::string expr = region_with(
      "  %t : bool = prim::Constant[value=1]()\n  %fl : bool = prim::Constant[value=0]()\n"
      "  %on : bool = prim::If(%cond)\n    block0():\n      -> (%t)\n    block1():\n      -> "
      "(%fl)\n",
      kDev, kDt, ", %cond : bool");
  EXPECT_THAT(error_of([&] { autocast(expr); }),
              StartsWith("Autocast _enabled argument must be a constant"));
}

TEST(TorchJitAutocastCpu, T08_ExplicitCasts) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):\n"
      "  %f64 : int = prim::Constant[value=7]()\n"
      "  %f32 : int = prim::Constant[value=6]()\n"
      "  %false : bool = prim::Constant[value=0]()\n" +
      cpu_region("ac") +
      "  %ad : Tensor = aten::to(%a, %f64, %false, %false)\n"
      "  %bd : Tensor = aten::to(%b, %f64, %false, %false)\n"
      "  %m : Tensor = aten::mm(%ad, %bd)\n"
      "  %e : Tensor = aten::to(%m, %f32, %false, %false)\n"
      "  %cd : Tensor = aten::mm(%c, %d)\n"
      "  %f : Tensor = aten::to(%cd, %f64, %false, %false)\n" +
      close_region("ac") +
      "  %c64 : Tensor = aten::to(%c, %f64, %false, %false)\n"
      "  %g : Tensor = aten::mm(%c64, %f)\n"
      "  return (%e, %f, %g)\n");
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::Float32, ST::Float64, ST::Float64}));
}

TEST(TorchJitAutocastCpu, T09_DuplicateInputs) {
  auto g = in_cpu_region("  %e : Tensor = aten::mm(%a, %a)\n  %f : Tensor = aten::mm(%e, %e)\n",
                         "%e, %f");
  EXPECT_EQ(count(*g, kReduced), 2u);
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::BFloat16, ST::BFloat16}));
}

TEST(TorchJitAutocastCpu, T10_T11_Fp32Policy) {
  auto g = in_cpu_region("  %y : Tensor = aten::log(%a)\n", "%y");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(ST::BFloat16), rnd(), rnd(), rnd()})),
            std::vector<ST>{ST::Float32});
  EXPECT_EQ(dtypes_of(run(*g, {rnd(ST::Float64), rnd(), rnd(), rnd()})),
            std::vector<ST>{ST::Float64});
}

TEST(TorchJitAutocastCpu, T12_T13_PromotePolicy) {
  auto g = in_cpu_region(
      "  %v : float = prim::Constant[value=0.10000000000000001]()\n"
      "  %e : Tensor = aten::mm(%a, %b)\n"
      "  %f : Tensor = aten::addcmul(%e, %c, %d, %v)\n",
      "%e, %f");
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::BFloat16, ST::Float32}));
  auto g64 = in_cpu_region(
      "  %v : float = prim::Constant[value=0.10000000000000001]()\n"
      "  %f : Tensor = aten::addcmul(%a, %b, %c, %v)\n",
      "%f");
  EXPECT_EQ(dtypes_of(run(
                *g64, {rnd(ST::Float64), rnd(ST::Float64), rnd(ST::Float64), rnd(ST::Float64)})),
            std::vector<ST>{ST::Float64});
}

TEST(TorchJitAutocastCpu, T14_T15_SetOptDtypePolicy) {
  // torch's test uses softmax on CUDA; on CPU the same mechanism shows with log_softmax.
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %dtype : int?):\n"
      "  %zero : int = prim::Constant[value=0]()\n"
      "  %none : NoneType = prim::Constant()\n"
      "  %f64 : int = prim::Constant[value=7]()\n" +
      cpu_region("ac") +
      "  %w : Tensor = aten::log_softmax(%a, %zero, %none)\n"
      "  %x : Tensor = aten::log_softmax(%b, %zero, %none)\n"
      "  %y : Tensor = aten::log_softmax(%c, %zero, %f64)\n"
      "  %z : Tensor = aten::log_softmax(%d, %zero, %dtype)\n" +
      close_region("ac") + "  return (%w, %x, %y, %z)\n");
  const Tensor h = rnd(ST::BFloat16);
  EXPECT_EQ(dtypes_of(run(*g, {h, h, h, h, IValue()})),
            (std::vector<ST>{ST::Float32, ST::Float32, ST::Float64, ST::BFloat16}));
  const Tensor d = rnd(ST::Float64);
  EXPECT_EQ(dtypes_of(run(*g, {d, d, d, d, IValue()})),
            (std::vector<ST>{ST::Float64, ST::Float64, ST::Float64, ST::Float64}));
}

TEST(TorchJitAutocastCpu, T17_DivergentTypes) {
  auto g = autocast(
      "graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor, %cond : bool):\n"
      "  %f32 : int = prim::Constant[value=6]()\n"
      "  %false : bool = prim::Constant[value=0]()\n" +
      cpu_region("ac") +
      "  %e : Tensor, %f : Tensor = prim::If(%cond)\n"
      "    block0():\n"
      "      %e1 : Tensor = aten::mm(%a, %b)\n"
      "      %f0 : Tensor = aten::mm(%a, %b)\n"
      "      %f1 : Tensor = aten::to(%f0, %f32, %false, %false)\n"
      "      -> (%e1, %f1)\n"
      "    block1():\n"
      "      %e0 : Tensor = aten::mm(%c, %d)\n"
      "      %e2 : Tensor = aten::to(%e0, %f32, %false, %false)\n"
      "      %f2 : Tensor = aten::mm(%a, %b)\n"
      "      -> (%e2, %f2)\n" +
      close_region("ac") +
      "  %ef : Tensor = aten::to(%e, %f32, %false, %false)\n"
      "  %ff : Tensor = aten::to(%f, %f32, %false, %false)\n"
      "  %r : Tensor = aten::mm(%ef, %ff)\n"
      "  return (%r)\n");
  for (bool cond : kFlags)
    EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd(), rnd(), rnd(), IValue(cond)})),
              std::vector<ST>{ST::Float32});
}

TEST(TorchJitAutocastCpu, T20_NestedAutocast) {
  auto g = autocast("graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):\n" +
                    cpu_region("off1", false) + "  %e : Tensor = aten::mm(%a, %b)\n" +
                    cpu_region("on", true) + "  %f : Tensor = aten::mm(%e, %c)\n" +
                    cpu_region("off2", false) + "  %g : Tensor = aten::mm(%e, %d)\n" +
                    close_region("off2") + close_region("on") + close_region("off1") +
                    "  return (%e, %f, %g)\n");
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::Float32, ST::BFloat16, ST::Float32}));
}

TEST(TorchJitAutocastCpu, T21_ImplicitlyNested) {
  // with autocast(False), autocast(True):
  auto g = autocast("graph(%a : Tensor, %b : Tensor):\n" + cpu_region("off", false) +
                    cpu_region("on", true) + "  %e : Tensor = aten::mm(%a, %b)\n" +
                    close_region("on") + close_region("off") + "  return (%e)\n");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd()})), std::vector<ST>{ST::BFloat16});
}

TEST(TorchJitAutocastCpu, T22_ReusedAutocast) {
  // One instance entered, then re-entered nested; after the region g = mm(e, f) of bfloat16 inputs.
  auto g =
      autocast("graph(%a : Tensor, %b : Tensor, %c : Tensor, %d : Tensor):\n" + cpu_region("ac") +
               "  %e : Tensor = aten::mm(%a, %b)\n"
               "  %again : NoneType = prim::Enter(%ac)\n"
               "  %f : Tensor = aten::mm(%c, %d)\n"
               "  %again_x : NoneType = prim::Exit(%ac)\n" +
               close_region("ac") + "  %g : Tensor = aten::mm(%e, %f)\n  return (%e, %f, %g)\n");
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::BFloat16, ST::BFloat16, ST::BFloat16}));
}

std::shared_ptr<Function> helper_with(const std::string& region_body) {
  return make_function("graph(%x : Tensor, %y : Tensor):\n" + region_body + "  return (%r)\n",
                       "helper");
}

// caller(a, b) = helper(a, b) inside `with torch.autocast("cpu", enabled=enabled):`.
Stack call_in_region(const std::shared_ptr<Function>& helper, bool enabled, const Tensor& a,
                     const Tensor& b) {
  // The caller is written with an mm where the call goes, which is then replaced by the call (graph
  // text has no form for a function constant).
  std::shared_ptr<Graph> g(
      parse_graph("graph(%a : Tensor, %b : Tensor):\n" + cpu_region("ac", enabled) +
                  "  %r : Tensor = aten::mm(%a, %b)\n" + close_region("ac") + "  return (%r)\n"));
  Node* mm = g->outputs()[0]->node();
  Node* call = g->create(sym::prim::CallFunction, {mm->input(0), mm->input(1)}, 1);
  call->set_attr(sym::attr::value, IValue(Ref<ObjectBase>(new FunctionObject(helper))));
  call->insert_before(mm);
  mm->output()->replace_all_uses_with(call->output());
  mm->destroy();
  g->verify();
  return Function("caller", g)({a, b});
}

TEST(TorchJitAutocastCpu, T24_T25_T26_T28_Callees) {
  // 24 / 28: a plain (or traced) helper called in a region is inlined and autocast.
  auto plain = helper_with("  %r : Tensor = aten::mm(%x, %y)\n");
  EXPECT_EQ(dtypes_of(call_in_region(plain, true, rnd(), rnd())), std::vector<ST>{ST::BFloat16});
  // 25: the helper's autocast(True) wins over the caller's autocast(False).
  auto on = helper_with(cpu_region("h") + "  %r : Tensor = aten::mm(%x, %y)\n" + close_region("h"));
  EXPECT_EQ(dtypes_of(call_in_region(on, false, rnd(), rnd())), std::vector<ST>{ST::BFloat16});
  // 26: the helper's autocast(False) wins over the caller's autocast(True).
  auto off = helper_with(cpu_region("h", false) + "  %r : Tensor = aten::mm(%x, %y)\n" +
                         close_region("h"));
  EXPECT_EQ(dtypes_of(call_in_region(off, true, rnd(), rnd())), std::vector<ST>{ST::Float32});
}

TEST(TorchJitAutocastCpu, T27_EagerAndScript) {
  auto fn = make_function(
      "graph(%a : Tensor, %b : Tensor):\n  %x : Tensor = aten::mm(%a, %b)\n  return (%x)\n");
  for (int i = 0; i < 8; ++i) {
    AutocastGuard ac(DeviceType::CPU, i % 2 == 0);
    EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})),
              std::vector<ST>{i % 2 == 0 ? ST::BFloat16 : ST::Float32});
  }
}

TEST(TorchJitAutocastCpu, T35_Inplace) {
  auto g = in_cpu_region(
      "  %e : Tensor = aten::addmm(%a, %b, %c, %one, %one)\n"
      "  %f : Tensor = aten::addmm(%a, %b, %c, %one, %one, %a)\n"
      "  %g : Tensor = aten::addmm_(%a, %b, %c, %one, %one)\n",
      "%e, %f, %g");
  EXPECT_EQ(dtypes_of(run_fp32(*g)), (std::vector<ST>{ST::BFloat16, ST::Float32, ST::Float32}));
}

TEST(TorchJitAutocastCpu, T36_AutocastApiClasses) {
  // torch.autocast("cpu", dtype=bfloat16) and torch.cpu.amp.autocast(): the cast op is in the
  // optimized graph and the dtypes are eager's.
  Tensor a = rnd(), b = rnd();
  Tensor eager;
  {
    AutocastGuard ac(DeviceType::CPU, true, ST::BFloat16);
    eager = ops::mm(a, b);
  }
  for (const char* cls : {kAmp, kCpuAmp}) {
    auto g = in_cpu_region("  %x : Tensor = aten::mm(%a, %b)\n", "%x", true, cls);
    EXPECT_EQ(count(*g, kReduced), 2u) << cls;
    Stack out = run(*g, {a, b, rnd(), rnd()});
    EXPECT_EQ(out[0].to_tensor().dtype(), eager.dtype());
    EXPECT_EQ(testing::values(out[0].to_tensor()), testing::values(eager));
  }
}

TEST(TorchJitAutocastCpu, T38_MixedDtypes) {
  auto g =
      autocast("graph(%a : Tensor, %b : Tensor):\n" + open_region("cpu_ac", "cpu", true, kBF16) +
               open_region("cuda_ac", "cuda", true, kHalf) + "  %x : Tensor = aten::mm(%a, %b)\n" +
               close_region("cuda_ac") + close_region("cpu_ac") + "  return (%x)\n");
  expect_checks(*g, R"(
    # CHECK: prim::Enter(%cuda_ac)
    # CHECK-NEXT: %0 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %1 : bool = prim::Constant[value=1]()
    # CHECK-NEXT: %2 : int = prim::Constant[value=5]()
    # CHECK-NEXT: %3 : int = prim::Constant[value=15]()
  )");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(), rnd()})),
            std::vector<ST>{ST::BFloat16});  // CPU: the CPU dtype
}

TEST(TorchJitAutocastCpu, T39_ExecutorUnderAutocast) {
  auto fn = make_function(
      "graph(%a : Tensor, %b : Tensor):\n  %x : Tensor = aten::mm(%a, %b)\n  return (%x)\n");
  {
    AutocastGuard ac(DeviceType::CPU);
    EXPECT_EQ(count(*fn->optimized_graph(), kReduced), 2u);
    EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), std::vector<ST>{ST::BFloat16});
  }
  EXPECT_EQ(count(*fn->optimized_graph(), kReduced), 0u);
  EXPECT_EQ(dtypes_of((*fn)({rnd(), rnd()})), std::vector<ST>{ST::Float32});
}

TEST(TorchJitAutocastCpu, T44_SoftmaxStaysBFloat16OnCpu) {
  auto g = autocast(
      "graph(%a : Tensor):\n  %zero : int = prim::Constant[value=0]()\n"
      "  %none : NoneType = prim::Constant()\n" +
      open_region("ac", "cpu", true, kBF16, kCpuAmp) +
      "  %y : Tensor = aten::softmax(%a, %zero, %none)\n" + close_region("ac") + "  return (%y)\n");
  EXPECT_EQ(dtypes_of(run(*g, {rnd(ST::BFloat16)})), std::vector<ST>{ST::BFloat16});
}

TEST(TorchJitAutocastCpu, T46_IgnoreAmp) {
  auto fn = make_function(
      "graph(%a : Tensor, %b : Tensor):\n  %x : Tensor = aten::mm(%a, %b)\n  return (%x)\n");
  fn->set_ignore_amp(true);
  AutocastGuard ac(DeviceType::CPU, true, ST::BFloat16, false);
  (*fn)({rnd(), rnd()});
  EXPECT_EQ(count(*fn->optimized_graph(), "_autocast_to_reduced"), 0u);
}

TEST(TorchJitAutocastCpu, T51_IsAutocastCpuEnabledBranch) {
  // if torch.is_autocast_cpu_enabled(): relu else sin, under eager CPU autocast: equals eager.
  auto fn = make_function(
      "graph(%a : Tensor):\n"
      "  %c : bool = aten::is_autocast_cpu_enabled()\n"
      "  %r : Tensor = prim::If(%c)\n"
      "    block0():\n"
      "      %x : Tensor = aten::relu(%a)\n"
      "      -> (%x)\n"
      "    block1():\n"
      "      %y : Tensor = aten::sin(%a)\n"
      "      -> (%y)\n"
      "  return (%r)\n");
  const Tensor a = rnd();
  for (bool on : kFlags) {
    AutocastGuard ac(DeviceType::CPU, on);
    const Tensor want = on ? Tensor(ops::relu(a)) : Tensor(ops::sin(a));
    EXPECT_EQ(testing::values(Tensor((*fn)({a})[0].to_tensor())), testing::values(want));
  }
  EXPECT_THAT(fn->graph()->str(), HasSubstr("aten::is_autocast_cpu_enabled()"));
}

TEST(TorchJitAutocastCpu, T54_EnableAndCheck) {
  // (mm, is_autocast_cpu_enabled()) outside, in autocast(True), in a nested autocast(False): the
  // flag is true exactly when the mm result is not float32, with eager autocast off and on.
  auto fn = make_function(
      "graph(%a : Tensor, %b : Tensor):\n"
      "  %x0 : Tensor = aten::mm(%a, %b)\n"
      "  %c0 : bool = aten::is_autocast_cpu_enabled()\n" +
      cpu_region("on") +
      "  %x1 : Tensor = aten::mm(%a, %b)\n"
      "  %c1 : bool = aten::is_autocast_cpu_enabled()\n" +
      cpu_region("off", false) +
      "  %x2 : Tensor = aten::mm(%a, %b)\n"
      "  %c2 : bool = aten::is_autocast_cpu_enabled()\n" +
      close_region("off") + close_region("on") + "  return (%x0, %c0, %x1, %c1, %x2, %c2)\n");
  for (bool eager : kFlags) {
    AutocastGuard ac(DeviceType::CPU, eager);
    Stack out = (*fn)({rnd(), rnd()});
    for (size_t i = 0; i < 6; i += 2) {
      EXPECT_EQ(out[i + 1].to_bool(), out[i].to_tensor().dtype() != ST::Float32)
          << "eager " << eager << " level " << i / 2;
    }
  }
}

}  // namespace
}  // namespace ampjit
