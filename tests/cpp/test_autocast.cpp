// Eager autocast: the thread-local state and AutocastGuard, every cast policy on every kind of
// input, the weight-cast cache, the policy profiles and per-op overrides, and bad input.
//
// The mechanism tests override the policy of aten::add (present from the start) so that they do
// not depend on which ops exist; the profile tests use the listed ops the op table has and assert
// how many of them it has. CUDA tensors are faked (a CPU tensor whose device says cuda) and a
// tracer-layer probe stands in for the missing CUDA kernels: the layer's decisions are visible in
// the calls that reach the probe.
#include <gmock/gmock.h>

#include <cstdio>
#include <cstdlib>
#include <thread>

#include "runtime/autocast/autocast_state.h"
#include "runtime/autocast/policy_profiles.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using V = std::vector<int64_t>;
using P = AutocastPolicy;
constexpr auto f16 = ScalarType::Float16, bf = ScalarType::BFloat16, f32 = ScalarType::Float32,
               f64 = ScalarType::Float64, i64 = ScalarType::Int64;
constexpr auto kCPU = DeviceType::CPU, kCUDA = DeviceType::CUDA;

Tensor rnd(V shape, ScalarType dtype, uint64_t seed) {
  return testing::random_tensor(std::move(shape), dtype, seed);
}
Tensor call(std::string_view op, std::vector<IValue> args, std::vector<Kwarg> kwargs = {}) {
  return call_op(op, std::move(args), std::move(kwargs));
}
// Same dtype and bit-identical values (the reference runs the same kernel on the same inputs).
::testing::AssertionResult same(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype())
    return ::testing::AssertionFailure()
           << dtype_name(got.dtype()) << " != " << dtype_name(want.dtype());
  if (testing::values(got) != testing::values(want))
    return ::testing::AssertionFailure() << got.str() << "\n!=\n" << want.str();
  return ::testing::AssertionSuccess();
}
bool has_op(std::string_view base) {
  return !find_overloads(base).empty();
}

// A tracer-layer probe: records every call that reaches it (below autocast) and runs it, except on
// fake CUDA tensors, where it returns a fake CUDA result of the dtype the kernel would produce.
struct Call {
  std::string op;
  std::vector<ScalarType> tensor_dtypes;  // of the tensor arguments, list elements flattened
  std::optional<ScalarType> dtype_arg;
};
std::vector<Call> g_calls;
Tensor fake_cuda(Tensor t) {
  t = t.contiguous().clone();
  t.impl()->device = Device(DeviceType::CUDA, 0);
  return t;
}
void probe(const OpEntry& op, Stack& s) {
  Call c{op.name, {}, std::nullopt};
  bool cuda = false;
  auto visit = [&](const IValue& v) {
    if (!v.is_tensor()) return;
    c.tensor_dtypes.push_back(v.tensor_impl()->dtype);
    cuda |= v.tensor_impl()->device.is_cuda();
  };
  for (const IValue& v : s) {
    if (v.is_list()) {
      for (const IValue& e : v.list_elems()) visit(e);
    } else {
      visit(v);
    }
  }
  if (op.dtype_arg >= 0 && !s[op.dtype_arg].is_none())
    c.dtype_arg = s[op.dtype_arg].to_scalar_type();
  g_calls.push_back(c);
  if (!cuda) return redispatch(DispatchLayer::Tracer, op, s);
  // Fake CUDA kernel: the result dtype is the cast's target, the explicit dtype, or the promoted
  // type of the floating arguments.
  ScalarType out = c.dtype_arg ? *c.dtype_arg : c.tensor_dtypes.at(0);
  if (!c.dtype_arg)
    for (ScalarType t : c.tensor_dtypes) out = promote_types(out, t);
  s.clear();
  s.emplace_back(fake_cuda(Tensor::empty(V{1}, out)));
}
size_t count_casts() {
  return std::count_if(g_calls.begin(), g_calls.end(),
                       [](const Call& c) { return c.op == "aten::to.dtype"; });
}

class Autocast : public ::testing::Test {
 protected:
  void SetUp() override {
    set_autocast_profile("torch-1.13");
    reset_op_policies();
    set_layer(DispatchLayer::Tracer, probe);
    g_calls.clear();
  }
  void TearDown() override {
    set_layer(DispatchLayer::Tracer, nullptr);
    reset_op_policies();
    set_autocast_profile("torch-1.13");
    EXPECT_FALSE(is_autocast_enabled(kCPU));
    EXPECT_FALSE(is_autocast_enabled(kCUDA));
    EXPECT_EQ(autocast_nesting(), 0);
    EXPECT_EQ(autocast_cache_size(), 0u);
  }
  LayerGuard tracing_{DispatchLayer::Tracer, LayerGuard::Include};
};

// ---- State and AutocastGuard ---------------------------------------------------------------

TEST_F(Autocast, DefaultsAndSetters) {
  EXPECT_EQ(get_autocast_dtype(kCPU), bf);
  EXPECT_EQ(get_autocast_dtype(kCUDA), f16);
  EXPECT_TRUE(is_autocast_cache_enabled());
  const uint8_t bit = layer_bit(DispatchLayer::Autocast);
  EXPECT_EQ(dispatch_tls().included & bit, 0);  // a disabled thread never enters the layer
  set_autocast_enabled(kCUDA, true);
  EXPECT_TRUE(is_autocast_enabled(kCUDA));
  EXPECT_FALSE(is_autocast_enabled(kCPU));
  EXPECT_NE(dispatch_tls().included & bit, 0);
  set_autocast_enabled(kCUDA, false);
  EXPECT_EQ(dispatch_tls().included & bit, 0);
  set_autocast_dtype(kCPU, f16);
  EXPECT_EQ(get_autocast_dtype(kCPU), f16);
  set_autocast_dtype(kCPU, bf);
  EXPECT_THAT([] { set_autocast_dtype(kCPU, f32); },
              ThrowsMessage<ValueError>(HasSubstr(
                  "autocast on cpu supports the dtypes float16 and bfloat16, not float32")));
  EXPECT_EQ(autocast_increment_nesting(), 1);
  EXPECT_EQ(autocast_decrement_nesting(), 0);
  EXPECT_THROW(autocast_decrement_nesting(), Error);
}

TEST_F(Autocast, NestingAndDisabledSubRegions) {
  set_op_policy(kCPU, "aten::add", "lower_precision_fp");
  Tensor x = rnd(V{3}, f32, 1);
  EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), f32);
  {
    AutocastGuard outer(kCPU);
    EXPECT_TRUE(is_autocast_enabled(kCPU));
    EXPECT_EQ(autocast_nesting(), 1);
    EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), bf);
    {
      AutocastGuard off(kCPU, false);
      EXPECT_FALSE(is_autocast_enabled(kCPU));
      EXPECT_EQ(autocast_nesting(), 2);
      EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), f32);
      {
        AutocastGuard half(kCPU, true, f16, false);
        EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), f16);
        EXPECT_FALSE(is_autocast_cache_enabled());
      }
      EXPECT_TRUE(is_autocast_cache_enabled());
      EXPECT_EQ(get_autocast_dtype(kCPU), bf);
      EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), f32);
    }
    EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), bf);
    {
      AutocastGuard cuda(kCUDA);  // another device's region leaves cpu autocast on
      EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), bf);
    }
  }
  EXPECT_FALSE(is_autocast_enabled(kCPU));
  EXPECT_EQ(Tensor(ops::add(x, x)).dtype(), f32);
}

TEST_F(Autocast, StateIsPerThread) {
  set_op_policy(kCPU, "aten::add", "lower_precision_fp");
  Tensor x = rnd(V{3}, f32, 2);
  AutocastGuard ac(kCPU, true, f16);
  bool other_enabled = true;
  ScalarType other_dtype = f32, other_result = f16;
  int other_nesting = -1;
  std::thread([&] {
    other_enabled = is_autocast_enabled(kCPU);
    other_dtype = get_autocast_dtype(kCPU);
    other_nesting = autocast_nesting();
    other_result = Tensor(ops::add(x, x)).dtype();
    AutocastGuard own(kCPU);  // and enabling it there does not touch this thread
  }).join();
  EXPECT_FALSE(other_enabled);
  EXPECT_EQ(other_dtype, bf);
  EXPECT_EQ(other_nesting, 0);
  EXPECT_EQ(other_result, f32);
  EXPECT_EQ(get_autocast_dtype(kCPU), f16);
  EXPECT_EQ(autocast_nesting(), 1);
}

TEST_F(Autocast, StateRestoredWhenAnExceptionUnwinds) {
  set_op_policy(kCPU, "aten::add", "promote");
  Tensor w = rnd(V{3}, f32, 3).set_requires_grad(true);
  try {
    AutocastGuard ac(kCPU, true, std::nullopt, false);
    AutocastGuard inner(kCUDA, true, bf);
    autocast_cached_cast(bf, w, kCPU);
    ops::add(rnd(V{3}, f16, 4), rnd(V{3}, bf, 5));  // promote error
    FAIL() << "expected the promote error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("Unexpected floating ScalarType in at::autocast::prioritize"));
  }
  EXPECT_FALSE(is_autocast_enabled(kCPU));
  EXPECT_FALSE(is_autocast_enabled(kCUDA));
  EXPECT_EQ(get_autocast_dtype(kCUDA), f16);
  EXPECT_TRUE(is_autocast_cache_enabled());
  EXPECT_EQ(dispatch_tls().included & layer_bit(DispatchLayer::Autocast), 0);
  // A guard whose arguments are invalid changes nothing.
  EXPECT_THROW(AutocastGuard(kCPU, true, f64), ValueError);
  EXPECT_EQ(autocast_nesting(), 0);
  EXPECT_FALSE(is_autocast_enabled(kCPU));
}

// ---- Policies on every kind of input ---------------------------------------------------------

struct Case {
  ScalarType a, b;
  ScalarType cast_a, cast_b;  // what the kernel must see (the expected result runs on these)
};

void check_binary(const char* policy, const std::vector<Case>& cases) {
  set_op_policy(kCPU, "aten::add", policy);
  uint64_t seed = 10;
  for (const Case& c : cases) {
    SCOPED_TRACE(fmt::format("{}: {} + {}", policy, dtype_name(c.a), dtype_name(c.b)));
    Tensor x = rnd(V{2, 3}, c.a, seed++), y = rnd(V{2, 3}, c.b, seed++);
    Tensor want = ops::add(x.to(c.cast_a), y.to(c.cast_b));
    AutocastGuard ac(kCPU);
    g_calls.clear();
    EXPECT_TRUE(same(ops::add(x, y), want));
    ASSERT_FALSE(g_calls.empty());
    EXPECT_EQ(g_calls.back().tensor_dtypes, (std::vector<ScalarType>{c.cast_a, c.cast_b}));
    EXPECT_EQ(count_casts(), size_t(c.a != c.cast_a) + size_t(c.b != c.cast_b));
  }
}

TEST_F(Autocast, LowerPrecisionFp) {
  check_binary("lower_precision_fp", {{f32, f32, bf, bf},
                                      {bf, bf, bf, bf},
                                      {f16, f16, bf, bf},
                                      {f64, f64, f64, f64},
                                      {i64, i64, i64, i64},
                                      {f32, f64, bf, f64},
                                      {i64, f32, i64, bf}});
}

TEST_F(Autocast, Fp32) {
  check_binary("fp32", {{f32, f32, f32, f32},
                        {bf, bf, f32, f32},
                        {f16, bf, f32, f32},
                        {f64, bf, f64, f32},
                        {i64, i64, i64, i64},
                        {i64, f16, i64, f32}});
}

TEST_F(Autocast, Promote) {
  // Start from bfloat16; float64 and non-floating tensors are skipped; any float32 wins.
  // The fold runs in argument order: a float32 first absorbs a later float16.
  check_binary("promote", {{bf, bf, bf, bf},
                           {bf, f32, f32, f32},
                           {f32, f16, f32, f32},
                           {f32, f32, f32, f32},
                           {f64, bf, f64, bf},
                           {f64, f32, f64, f32},
                           {i64, bf, i64, bf},
                           {i64, i64, i64, i64}});
  AutocastGuard ac(kCPU);
  for (auto ab :
       {std::pair{f16, bf}, std::pair{bf, f16}, std::pair{f16, f16}, std::pair{f16, f32}}) {
    const auto a = ab.first, b = ab.second;
    EXPECT_THAT([&] { ops::add(rnd(V{2}, a, 1), rnd(V{2}, b, 2)); },
                ThrowsMessage<Error>(
                    HasSubstr("Unexpected floating ScalarType in at::autocast::prioritize")));
  }
  AutocastGuard half(kCPU, true, f16);  // now float16 is the lower dtype, bfloat16 the stranger
  EXPECT_EQ(Tensor(ops::add(rnd(V{2}, f16, 1), rnd(V{2}, f16, 2))).dtype(), f16);
  EXPECT_THROW(ops::add(rnd(V{2}, bf, 1), rnd(V{2}, bf, 2)), Error);
}

TEST_F(Autocast, PromoteOnTensorListsAndIndexCopy) {
  // torch-1.13 promotes stack; cat is registered but casts nothing there (the measured `none`),
  // while amp.rst's CPU lists and 2.x list it as promote.
  const std::vector<std::pair<const char*, const char*>> cases = {{"aten::stack", "torch-1.13"},
                                                                  {"aten::cat", "torch-2"}};
  int present = 0;
  for (const auto& [op, profile] : cases) {
    if (!has_op(op)) continue;
    ++present;
    SCOPED_TRACE(op);
    EXPECT_EQ(get_op_policy(kCPU, op), std::string_view(op) == "aten::cat" ? P::None : P::Promote);
    set_autocast_profile(profile);
    ASSERT_EQ(get_op_policy(kCPU, op), P::Promote);
    Tensor a = rnd(V{2, 2}, bf, 1), b = rnd(V{2, 2}, f32, 2);
    const Tensor want = call(op, {std::vector<Tensor>{a.to(f32), b}, int64_t{0}});
    AutocastGuard ac(kCPU);
    g_calls.clear();
    IValue list(std::vector<Tensor>{a, b});
    EXPECT_TRUE(same(call(op, {list, int64_t{0}}), want));
    EXPECT_EQ(count_casts(), 1u);
    EXPECT_EQ(list.list_elems()[0].tensor_impl()->dtype, bf);  // the caller's list is unchanged
    EXPECT_EQ(Tensor(call(op, {std::vector<Tensor>{a, a}, int64_t{0}})).dtype(), bf);
    set_autocast_profile("torch-1.13");
  }
  if (has_op("aten::index_copy")) {  // promote in torch-1.13: self and source meet in float32
    ++present;
    EXPECT_EQ(get_op_policy(kCPU, "aten::index_copy"), P::Promote);
    Tensor self = rnd(V{3, 2}, bf, 1), source = rnd(V{2, 2}, f32, 2);
    Tensor index = ops::arange(int64_t{2});
    const Tensor want = call("aten::index_copy", {self.to(f32), int64_t{0}, index, source});
    AutocastGuard ac(kCPU);
    EXPECT_TRUE(same(call("aten::index_copy", {self, int64_t{0}, index, source}), want));
  }
  EXPECT_GE(present, 1) << "none of aten::stack, aten::cat, aten::index_copy is in the op table";
}

TEST_F(Autocast, Fp32SetOptDtype) {
  ASSERT_TRUE(has_op("aten::sum"));
  set_op_policy(kCPU, "aten::sum", "fp32_set_opt_dtype");
  Tensor b = rnd(V{4, 3}, bf, 1), h = rnd(V{4, 3}, f16, 2), d = rnd(V{4, 3}, f64, 3);
  Tensor n = rnd(V{4, 3}, i64, 4), f = rnd(V{4, 3}, f32, 5);
  const Tensor want_b = call("aten::sum", {b}, {{"dtype", f32}});
  const Tensor want_h = call("aten::sum", {h}, {{"dtype", f32}});
  const Tensor want_d = call("aten::sum", {d}), want_n = call("aten::sum", {n});
  const Tensor want_f = call("aten::sum", {f}),
               want_explicit = call("aten::sum", {b}, {{"dtype", bf}});
  AutocastGuard ac(kCPU);
  g_calls.clear();
  EXPECT_TRUE(same(call("aten::sum", {b}), want_b));  // the input is not cast: dtype=float32
  EXPECT_EQ(count_casts(), 0u);
  EXPECT_EQ(g_calls.back().dtype_arg, f32);
  EXPECT_TRUE(same(call("aten::sum", {h}), want_h));
  EXPECT_TRUE(same(call("aten::sum", {f}), want_f));
  EXPECT_TRUE(same(call("aten::sum", {d}), want_d));  // ineligible first argument: unchanged
  EXPECT_FALSE(g_calls.back().dtype_arg.has_value());
  EXPECT_TRUE(same(call("aten::sum", {n}), want_n));
  EXPECT_FALSE(g_calls.back().dtype_arg.has_value());
  EXPECT_TRUE(same(call("aten::sum", {b}, {{"dtype", bf}}), want_explicit));  // explicit dtype wins
  EXPECT_EQ(g_calls.back().dtype_arg, bf);
  if (has_op("aten::sum.dim_IntList")) {
    Tensor r = call("aten::sum.dim_IntList", {b, V{1}});  // every overload of the base name
    EXPECT_EQ(r.dtype(), f32);
  }
}

TEST_F(Autocast, Fp32AppendDtypeRedispatchesToTheDtypeOverload) {
  if (!find_op("aten::norm.Scalar") || !find_op("aten::norm.ScalarOpt_dtype"))
    GTEST_SKIP() << "aten::norm overloads not in the op table yet";
  set_op_policy(kCPU, "aten::norm", "fp32_append_dtype");
  Tensor b = rnd(V{5}, bf, 1), d = rnd(V{5}, f64, 2);
  const Tensor want = call("aten::norm.ScalarOpt_dtype", {b, 2.0}, {{"dtype", f32}});
  AutocastGuard ac(kCPU);
  g_calls.clear();
  EXPECT_TRUE(same(call("aten::norm.Scalar", {b}), want));
  ASSERT_EQ(g_calls.size(), 1u);  // no cast: the dtype overload computes in float32
  EXPECT_EQ(g_calls[0].op, "aten::norm.ScalarOpt_dtype");
  EXPECT_EQ(g_calls[0].dtype_arg, f32);
  g_calls.clear();
  EXPECT_EQ(Tensor(call("aten::norm.Scalar", {d})).dtype(), f64);  // ineligible: its own dtype
  EXPECT_EQ(g_calls[0].dtype_arg, f64);
  if (find_op("aten::norm.ScalarOpt_dim_dtype")) {
    g_calls.clear();
    EXPECT_EQ(Tensor(call("aten::norm.ScalarOpt_dim", {b, 2.0, V{0}})).dtype(), f32);
    EXPECT_EQ(g_calls[0].op, "aten::norm.ScalarOpt_dim_dtype");
  }
}

TEST_F(Autocast, Fp32AppendDtypeWithoutADtypeOverloadRunsAsFp32) {
  set_op_policy(kCPU, "aten::add", "fp32_append_dtype");
  check_binary("fp32_append_dtype", {{bf, bf, f32, f32}, {f64, f16, f64, f32}});
}

TEST_F(Autocast, InPlaceOutAndExplicitDtypeAreNotAutocast) {
  set_op_policy(kCPU, "aten::add", "lower_precision_fp");
  set_op_policy(kCPU, "aten::sum", "lower_precision_fp");
  Tensor x = rnd(V{3}, f32, 1), y = rnd(V{3}, f32, 2);
  const Tensor want = ops::add(x, y);
  AutocastGuard ac(kCPU);
  g_calls.clear();
  Tensor z = x.clone();
  ops::add_(z, y);
  EXPECT_TRUE(same(z, want));
  Tensor out = Tensor::empty(V{3}, f32);
  ops::add_out(x, y, 1, out);
  EXPECT_TRUE(same(out, want));
  EXPECT_EQ(Tensor(call("aten::sum", {x}, {{"dtype", f32}})).dtype(), f32);
  EXPECT_EQ(count_casts(), 0u);
  EXPECT_EQ(Tensor(call("aten::sum", {x})).dtype(), bf);
}

TEST_F(Autocast, BannedOnCudaRaisesPyTorchsMessage) {
  ASSERT_TRUE(has_op("aten::binary_cross_entropy"));
  Tensor p = fake_cuda(rnd(V{3}, f32, 1)), t = fake_cuda(rnd(V{3}, f32, 2));
  AutocastGuard ac(kCUDA);
  EXPECT_EQ(get_op_policy(kCUDA, "aten::binary_cross_entropy"), P::Banned);
  EXPECT_THAT(
      [&] {
        call("aten::binary_cross_entropy", {p, t});
      },
      ThrowsMessage<Error>(::testing::StrEq(
          "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
          "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
          "In this case, combine the two layers using "
          "torch.nn.functional.binary_cross_entropy_with_logits\n"
          "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
          "safe to autocast.")));
  EXPECT_TRUE(g_calls.empty());  // raised before anything ran
  // On CPU the same op is fp32, not banned.
  EXPECT_EQ(get_op_policy(kCPU, "aten::binary_cross_entropy"), P::Fp32);
  Tensor pb = testing::random_tensor(V{3}, bf, 3, 0.1, 0.9),
         tb = testing::random_tensor(V{3}, bf, 4, 0.0, 1.0);
  const Tensor want = call("aten::binary_cross_entropy", {pb.to(f32), tb.to(f32)});
  AutocastGuard cpu(kCPU);
  EXPECT_TRUE(same(call("aten::binary_cross_entropy", {pb, tb}), want));
}

// CUDA policies seen through the fake CUDA kernel: what reaches the kernel.
TEST_F(Autocast, CudaPoliciesOnFakeCudaTensors) {
  Tensor a = fake_cuda(rnd(V{2, 2}, f32, 1)), h = fake_cuda(rnd(V{2, 2}, f16, 2));
  Tensor cpu_scalar = rnd(V{}, f32, 3);
  AutocastGuard ac(kCUDA);
  int checked = 0;
  if (has_op("aten::mm")) {  // lower_precision_fp: float16 on CUDA
    g_calls.clear();
    EXPECT_EQ(Tensor(call("aten::mm", {a, a})).dtype(), f16);
    EXPECT_EQ(g_calls.back().tensor_dtypes, (std::vector<ScalarType>{f16, f16}));
    ++checked;
  }
  if (has_op("aten::softmax")) {  // fp32_set_opt_dtype
    g_calls.clear();
    EXPECT_EQ(Tensor(call("aten::softmax.int", {h, int64_t{1}})).dtype(), f32);
    EXPECT_EQ(g_calls.back().dtype_arg, f32);
    EXPECT_EQ(count_casts(), 0u);
    ++checked;
  }
  if (find_op("aten::norm.ScalarOpt_dtype")) {  // fp32_append_dtype
    g_calls.clear();
    call("aten::norm.Scalar", {h});
    EXPECT_EQ(g_calls.back().op, "aten::norm.ScalarOpt_dtype");
    ++checked;
  }
  for (const char* op : {"aten::exp", "aten::log", "aten::log1p", "aten::rsqrt", "aten::reciprocal",
                         "aten::tan"}) {  // fp32
    if (!has_op(op)) continue;
    g_calls.clear();
    EXPECT_EQ(Tensor(call(op, {h})).dtype(), f32) << op;
    EXPECT_EQ(g_calls.back().tensor_dtypes, std::vector<ScalarType>{f32}) << op;
    ++checked;
  }
  if (has_op("aten::addcmul")) {  // promote; a CPU 0-dim tensor is not eligible on CUDA
    g_calls.clear();
    call("aten::addcmul", {h, a, h});
    EXPECT_EQ(g_calls.back().tensor_dtypes, (std::vector<ScalarType>{f32, f32, f32}));
    ++checked;
  }
  // Whatever ops exist, the CUDA column is filled from the profile, not the CPU one.
  EXPECT_EQ(get_op_policy(kCUDA, "aten::sum"), P::Fp32SetOptDtype);
  EXPECT_EQ(get_op_policy(kCPU, "aten::sum"), P::None);
  EXPECT_GE(checked, 6);
  set_op_policy(kCUDA, "aten::add", "lower_precision_fp");
  g_calls.clear();
  call("aten::add.Tensor", {a, cpu_scalar});
  EXPECT_EQ(g_calls.back().tensor_dtypes, (std::vector<ScalarType>{f16, f32}));
}

// The listed ops of the default profile that the op table has, on CPU: results equal the op run
// on explicitly cast inputs.
TEST_F(Autocast, Torch113CpuListsOnRealOps) {
  struct OpCase {
    const char* op;
    P policy;
    std::vector<V> shapes;
  };
  const std::vector<OpCase> cases = {
      {"aten::mm", P::LowerPrecisionFp, {{2, 3}, {3, 4}}},
      {"aten::matmul", P::LowerPrecisionFp, {{2, 3}, {3, 4}}},
      {"aten::bmm", P::LowerPrecisionFp, {{2, 2, 3}, {2, 3, 2}}},
      {"aten::addmm", P::LowerPrecisionFp, {{2, 4}, {2, 3}, {3, 4}}},
      {"aten::linear", P::LowerPrecisionFp, {{2, 3}, {4, 3}, {4}}},
      {"aten::conv2d", P::LowerPrecisionFp, {{1, 2, 5, 5}, {3, 2, 3, 3}, {3}}},
      {"aten::mse_loss", P::Fp32, {{2, 3}, {2, 3}}},
      {"aten::l1_loss", P::Fp32, {{2, 3}, {2, 3}}},
      {"aten::binary_cross_entropy_with_logits", P::Fp32, {{2, 3}, {2, 3}}},
  };
  int present = 0;
  for (const OpCase& c : cases) {
    const OpEntry* op = find_op(c.op);
    if (!op) continue;
    ++present;
    SCOPED_TRACE(c.op);
    EXPECT_EQ(op->autocast[0], c.policy);
    for (ScalarType dt : {f32, bf, f16, f64}) {
      std::vector<IValue> args, cast_args;
      uint64_t seed = 100;
      const ScalarType to = dt == f64 ? f64 : c.policy == P::Fp32 ? f32 : bf;
      for (const V& s : c.shapes) {
        Tensor t = rnd(s, dt, seed++);
        args.emplace_back(t);
        cast_args.emplace_back(t.to(to));
      }
      const Tensor want = call(c.op, cast_args);
      AutocastGuard ac(kCPU);
      EXPECT_TRUE(same(call(c.op, args), want)) << dtype_name(dt);
    }
  }
  EXPECT_GE(present, 2) << "expected at least mm and mse_loss in the op table";
}

// ---- The weight-cast cache -------------------------------------------------------------------

TEST_F(Autocast, CacheCastsAWeightOncePerRegion) {
  set_op_policy(kCPU, "aten::add", "lower_precision_fp");
  Tensor w = rnd(V{4}, f32, 1).set_requires_grad(true);
  Tensor x = rnd(V{4}, f32, 2);
  {
    AutocastGuard ac(kCPU);
    g_calls.clear();
    Tensor r1 = ops::add(x, w), r2 = ops::add(x, w), r3 = ops::add(w, w);
    EXPECT_EQ(count_casts(), 3u);  // x twice (not cached), w once
    EXPECT_EQ(autocast_cache_size(), 1u);
    EXPECT_TRUE(same(r1, ops::add(x.to(bf), w.to(bf))));
    EXPECT_TRUE(same(r1, r2));
    {
      AutocastGuard nested(kCPU);  // a nested region shares the cache and does not clear it
      ops::add(x, w);
    }
    EXPECT_EQ(autocast_cache_size(), 1u);
    EXPECT_EQ(count_casts(), 4u);
    {
      AutocastGuard half(kCPU, true, f16);  // keyed by dtype too: never the bfloat16 cast
      EXPECT_EQ(Tensor(ops::add(w, w)).dtype(), f16);
      EXPECT_EQ(autocast_cache_size(), 2u);
    }
  }
  EXPECT_EQ(autocast_cache_size(), 0u);  // cleared at the outermost exit, nothing kept alive
  EXPECT_EQ(w.impl()->use_count(), 1u);
  // cache_enabled=False: cast every time.
  AutocastGuard ac(kCPU, true, std::nullopt, false);
  g_calls.clear();
  ops::add(w, x);
  ops::add(w, x);
  EXPECT_EQ(count_casts(), 4u);
  EXPECT_EQ(autocast_cache_size(), 0u);
}

TEST_F(Autocast, CacheHoldsOnlyFloat32LeafWeightsCastToTheLowerDtype) {
  set_op_policy(kCPU, "aten::add", "lower_precision_fp");
  Tensor base = rnd(V{2, 4}, f32, 1);
  Tensor no_grad = rnd(V{4}, f32, 2);
  Tensor non_leaf = rnd(V{4}, f32, 3).set_requires_grad(true);
  non_leaf.impl()->is_leaf = false;
  Tensor view = base.select(0, 1).set_requires_grad(true);
  ASSERT_TRUE(view.is_view());
  Tensor half_weight = rnd(V{4}, f16, 4).set_requires_grad(true);
  AutocastGuard ac(kCPU);
  for (const Tensor& t : {no_grad, non_leaf, view, half_weight}) {
    g_calls.clear();
    EXPECT_EQ(Tensor(ops::add(t, t)).dtype(), bf);
    EXPECT_EQ(count_casts(), 2u);
    EXPECT_EQ(autocast_cache_size(), 0u);
  }
  set_op_policy(kCPU, "aten::add", "fp32");  // casts to float32 are never cached
  Tensor bf_weight = rnd(V{4}, bf, 5).set_requires_grad(true);
  ops::add(bf_weight, bf_weight);
  EXPECT_EQ(autocast_cache_size(), 0u);
}

TEST_F(Autocast, CacheNeverReturnsAStaleCastForAReusedAddress) {
  set_op_policy(kCPU, "aten::add", "lower_precision_fp");
  Tensor zero = ops::zeros(V{4}, bf);
  AutocastGuard ac(kCPU);
  for (int i = 0; i < 300; ++i) {
    const double v = i % 100;  // exact in bfloat16
    Tensor w = ops::full(V{4}, v, f32);
    w.set_requires_grad(true);
    Tensor r = ops::add(zero, w);
    ASSERT_EQ(testing::values(r), std::vector<double>(4, v)) << "iteration " << i;
    AutocastGuard half(kCPU, true, f16);  // a second cast of the same weight
    ASSERT_EQ(testing::values(ops::add(w, w)), std::vector<double>(4, 2 * v)) << "iteration " << i;
  }
  // Dropped weights are swept, not held for the whole region.
  EXPECT_LE(autocast_cache_size(), 2 * 64u);
}

// ---- Profiles and overrides -----------------------------------------------------------------

TEST_F(Autocast, ProfileNamesAndGeneratedTable) {
  EXPECT_EQ(autocast_profile_names(),
            (std::vector<std::string>{"torch-1.13", "documented", "torch-2"}));
  EXPECT_EQ(get_autocast_profile(), "torch-1.13");
  // Sizes of the source lists (cpu-autocast-torch-1.13.json: 12 + 96 + 2, less _convolution,
  // whose listed policy torch registers for another overload; amp.rst: 10 + 136 + 3).
  EXPECT_EQ(autocast_data::kProfiles[0].lists[0].size(), 109u);
  EXPECT_EQ(autocast_data::kProfiles[1].lists[0].size(), 149u);
  // Every entry is applied to the op table or reported as skipped.
  for (const std::string& name : autocast_profile_names()) {
    set_autocast_profile(name);
    const std::vector<SkippedOp> skipped = autocast_skipped_ops(name);
    size_t applied = 0;
    for (const auto& profile : std::span(autocast_data::kProfiles, autocast_data::kNumProfiles)) {
      if (profile.name != name) continue;
      for (int d = 0; d < kNumDeviceTypes; ++d) {
        for (const auto& e : profile.lists[d]) {
          const std::string op = std::string("aten::") + e.op;
          if (!has_op(op)) continue;
          ++applied;
          for (const OpEntry* o : find_overloads(op))
            EXPECT_EQ(o->autocast[d], e.policy) << o->name;
        }
      }
      size_t total = profile.lists[0].size() + profile.lists[1].size();
      EXPECT_EQ(applied + skipped.size(), total) << name;
    }
    for (const SkippedOp& s : skipped) EXPECT_FALSE(has_op(s.op)) << s.op;
  }
  // torch 1.13 lists _convolution for CPU, but registers the policy only for its deprecated
  // overload: the one its tracer records (and ampjit has) does not autocast.
  set_autocast_profile("torch-1.13");
  ASSERT_TRUE(has_op("aten::_convolution"));
  for (const OpEntry* o : find_overloads("aten::_convolution"))
    EXPECT_EQ(o->autocast[static_cast<int>(kCPU)], P::None) << o->name;
}

TEST_F(Autocast, SwitchingProfiles) {
  // amp.rst's CPU lists have these as fp32; PyTorch 1.13 does not autocast them.
  int present = 0;
  for (const char* op : {"aten::batch_norm", "aten::avg_pool2d", "aten::cumsum", "aten::gelu",
                         "aten::dropout", "aten::cumprod"}) {
    if (!has_op(op)) continue;
    ++present;
    set_autocast_profile("torch-1.13");
    EXPECT_EQ(get_op_policy(kCPU, op), P::None) << op;
    set_autocast_profile("documented");
    EXPECT_EQ(get_op_policy(kCPU, op), P::Fp32) << op;
  }
  EXPECT_GE(present, 4);
  // And the layer follows the switch.
  Tensor b = rnd(V{2, 3}, bf, 1);
  set_autocast_profile("documented");
  {
    AutocastGuard ac(kCPU);
    EXPECT_EQ(Tensor(call("aten::cumsum", {b, int64_t{1}})).dtype(), f32);
  }
  set_autocast_profile("torch-1.13");
  {
    AutocastGuard ac(kCPU);
    EXPECT_EQ(Tensor(call("aten::cumsum", {b, int64_t{1}})).dtype(), bf);
  }
  // torch-2 CPU: binary_cross_entropy fp32, softmax unlisted; CUDA docs map Python names.
  set_autocast_profile("torch-2");
  EXPECT_EQ(get_op_policy(kCPU, "aten::binary_cross_entropy"), P::Fp32);
  EXPECT_EQ(get_op_policy(kCPU, "aten::softmax.int"), P::None);
  set_autocast_profile("documented");
  EXPECT_EQ(get_op_policy(kCUDA, "aten::softmax.int"), P::Fp32SetOptDtype);  // docs: float32
  EXPECT_EQ(get_op_policy(kCUDA, "aten::norm"), P::Fp32AppendDtype);
  EXPECT_EQ(get_op_policy(kCUDA, "aten::cross_entropy_loss"), P::Fp32);  // cross_entropy
  EXPECT_EQ(get_op_policy(kCUDA, "aten::logsumexp"), P::None);  // 2.x lists it, the docs do not
  set_autocast_profile("torch-1.13");
  EXPECT_EQ(get_op_policy(kCUDA, "aten::logsumexp"), P::Fp32);
}

TEST_F(Autocast, PerOpOverrides) {
  EXPECT_EQ(get_op_policy(kCPU, "aten::add"), P::None);
  set_op_policy(kCPU, "aten::add", "fp32");
  for (const char* o : {"aten::add.Tensor", "aten::add.Scalar", "aten::add.out"})
    EXPECT_EQ(get_op_policy(kCPU, o), P::Fp32) << o;
  EXPECT_EQ(get_op_policy(kCUDA, "aten::add"), P::None);  // per device
  set_autocast_profile("documented");                     // overrides survive profile switches
  EXPECT_EQ(get_op_policy(kCPU, "aten::add"), P::Fp32);
  set_op_policy(kCPU, "cumsum", "none");  // a listed op turned off; "aten::" is implied
  EXPECT_EQ(get_op_policy(kCPU, "aten::cumsum"), P::None);
  reset_op_policy(kCPU, "aten::cumsum");
  EXPECT_EQ(get_op_policy(kCPU, "aten::cumsum"), P::Fp32);  // back to the profile
  reset_op_policy(kCPU, "aten::add");
  EXPECT_EQ(get_op_policy(kCPU, "aten::add"), P::None);
  set_op_policy(kCUDA, "aten::sum", P::Fp32);
  reset_op_policies();
  EXPECT_EQ(get_op_policy(kCUDA, "aten::sum"), P::Fp32SetOptDtype);
}

TEST_F(Autocast, BadInput) {
  EXPECT_THAT(
      [] { set_autocast_profile("torch-1.12"); },
      ThrowsMessage<ValueError>(HasSubstr(
          "'torch-1.12' is not an autocast profile; valid profiles: torch-1.13 (the default), "
          "documented, torch-2")));
  EXPECT_EQ(get_autocast_profile(), "torch-1.13");
  EXPECT_THROW(autocast_skipped_ops("nope"), ValueError);
  EXPECT_THAT([] { set_op_policy(kCPU, "aten::add", "fp16"); },
              ThrowsMessage<ValueError>(HasSubstr(
                  "unknown autocast policy 'fp16'; valid policies: none, lower_precision_fp, fp32, "
                  "fp32_set_opt_dtype, fp32_append_dtype, promote, banned")));
  EXPECT_THAT(
      [] { set_op_policy(kCPU, "aten::addd", "fp32"); },
      ThrowsMessage<ValueError>(HasSubstr("unknown op 'aten::addd' (the op table has no such "
                                          "base name); did you mean 'aten::add'")));
  EXPECT_THAT([] { set_op_policy(kCPU, "aten::add.Tensor", "fp32"); },
              ThrowsMessage<ValueError>(HasSubstr("'aten::add.Tensor' is an overload")));
  EXPECT_THAT([] { get_op_policy(kCPU, "aten::frobnicate"); },
              ThrowsMessage<ValueError>(HasSubstr("get_op_policy: unknown op 'aten::frobnicate'")));
  EXPECT_EQ(get_op_policy(kCPU, "aten::add"), P::None);  // nothing changed
  // A banned override on an op without a PyTorch message gets a generic one.
  set_op_policy(kCUDA, "aten::add", "banned");
  AutocastGuard ac(kCUDA);
  Tensor c = fake_cuda(rnd(V{2}, f32, 1));
  EXPECT_THAT([&] { ops::add(c, c); },
              ThrowsMessage<Error>(HasSubstr("aten::add is unsafe to autocast on this device")));
}

// The environment variable is read once, at first use: these run in a fresh process.
TEST(AutocastProfileEnv, ReadAtFirstUse) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("AMPJIT_AUTOCAST_PROFILE", "documented", 1);
        set_autocast_enabled(kCPU, true);
        std::exit(get_autocast_profile() == "documented" &&
                          get_op_policy(kCPU, "aten::cumsum") == P::Fp32
                      ? 0
                      : 1);
      },
      ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(
      {
        setenv("AMPJIT_AUTOCAST_PROFILE", "bogus", 1);
        try {
          AutocastGuard ac(kCPU);
        } catch (const ValueError& e) {
          std::fprintf(stderr, "%s\n", e.what());
          std::exit(is_autocast_enabled(kCPU) ? 1 : 3);
        }
        std::exit(2);
      },
      ::testing::ExitedWithCode(3),
      "AMPJIT_AUTOCAST_PROFILE='bogus' is not an autocast profile; valid profiles: torch-1.13 "
      "\\(the default\\), documented, torch-2");
}

}  // namespace
}  // namespace ampjit
