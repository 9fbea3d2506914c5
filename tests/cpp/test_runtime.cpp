// The runtime core: dtype traits, type promotion (torch.result_type), schemas and argument
// binding, the op table, the three-layer dispatcher, factories and the random generator.
#include <gmock/gmock.h>

#include <algorithm>
#include <set>

#include "runtime/cpu_allocator.h"
#include "runtime/random.h"
#include "runtime/type_promotion.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using V = std::vector<int64_t>;
constexpr auto u8 = ScalarType::UInt8, i8 = ScalarType::Int8, i16 = ScalarType::Int16,
               i32 = ScalarType::Int32, i64 = ScalarType::Int64, f16 = ScalarType::Float16,
               f32 = ScalarType::Float32, f64 = ScalarType::Float64, b1 = ScalarType::Bool,
               bf = ScalarType::BFloat16;

TEST(DType, TraitsTable) {
  EXPECT_EQ(itemsize(f16), 2u);
  EXPECT_EQ(itemsize(bf), 2u);
  EXPECT_EQ(itemsize(i64), 8u);
  EXPECT_EQ(itemsize(b1), 1u);
  EXPECT_TRUE(is_floating(bf));
  EXPECT_FALSE(is_floating(i32));
  EXPECT_FALSE(is_integral(b1));
  EXPECT_TRUE(is_integral(b1, /*include_bool=*/true));
  EXPECT_STREQ(dtype_name(bf), "bfloat16");
  EXPECT_EQ(parse_dtype("half"), f16);
  EXPECT_EQ(parse_dtype("torch.float"), f32);
  EXPECT_EQ(parse_dtype("double"), f64);
  EXPECT_EQ(parse_dtype("long"), i64);
  EXPECT_EQ(parse_dtype("complex64"), std::nullopt);
}

TEST(DType, PromoteTypesMatchesTorch) {
  // Pairs checked against torch.promote_types.
  EXPECT_EQ(promote_types(u8, i8), i16);
  EXPECT_EQ(promote_types(f16, bf), f32);
  EXPECT_EQ(promote_types(bf, i64), bf);
  EXPECT_EQ(promote_types(b1, u8), u8);
  EXPECT_EQ(promote_types(i32, f16), f16);
  EXPECT_EQ(promote_types(f32, f64), f64);
  EXPECT_EQ(promote_types(b1, b1), b1);
  // Symmetric over the whole table.
  for (int a = 0; a < kNumScalarTypes; ++a)
    for (int b = 0; b < kNumScalarTypes; ++b)
      EXPECT_EQ(promote_types(ScalarType(a), ScalarType(b)),
                promote_types(ScalarType(b), ScalarType(a)));
}

Tensor t(ScalarType dt, V shape = {2}) {
  return ops::zeros(shape, dt);
}

TEST(DType, ResultTypeCategoriesAndZeroDim) {
  // Values checked against torch.result_type.
  EXPECT_EQ(result_type(t(i32), Scalar(2.5)), f32);          // int tensor, Python float
  EXPECT_EQ(result_type(t(f16), Scalar(2.5)), f16);          // float16 stays
  EXPECT_EQ(result_type(t(u8), Scalar(int64_t{1000})), u8);  // Python int never widens ints
  EXPECT_EQ(result_type(t(b1), Scalar(int64_t{1})), i64);    // bool tensor + int
  EXPECT_EQ(result_type(t(b1), Scalar(true)), b1);
  EXPECT_EQ(result_type(t(i64), t(f16, {})), f16);  // zero-dim float beats dim int
  EXPECT_EQ(result_type(t(f16), t(f64, {})), f16);  // zero-dim of same category: ignored
  EXPECT_EQ(result_type(t(i8), t(i64, {})), i8);
  EXPECT_EQ(result_type(t(f32, {}), t(f64, {})), f64);  // both zero-dim: ordinary promotion
  EXPECT_EQ(result_type(t(u8), t(i8)), i16);
  EXPECT_EQ(result_type(t(bf), t(f16)), f32);
  EXPECT_EQ(result_type(t(i32, {}), Scalar(1.5)), f32);
  EXPECT_EQ(result_type(t(f64, {}), Scalar(1.5)), f64);
  EXPECT_TRUE(can_cast(i64, f16));
  EXPECT_FALSE(can_cast(f32, i64));
  EXPECT_FALSE(can_cast(i32, b1));
}

TEST(Schema, ParsesTypesDefaultsAndAnnotations) {
  FunctionSchema s = parse_schema(
      "aten::foo.bar(Tensor(a!) self, Tensor? w=None, int[2] stride=1, float eps=1e-05, "
      "Scalar alpha=1, *, ScalarType? dtype=None, str mode=\"mean\", int[] dims=[]) -> (Tensor a, "
      "Tensor b)");
  EXPECT_EQ(s.full_name(), "aten::foo.bar");
  EXPECT_EQ(s.qualified_name(), "aten::foo");
  ASSERT_EQ(s.args.size(), 8u);
  EXPECT_TRUE(s.args[0].is_write);
  EXPECT_TRUE(s.is_inplace());
  EXPECT_EQ(s.args[1].type->str(), "Tensor?");
  EXPECT_EQ(s.args[2].default_value->to_int_list(), (V{1, 1}));
  EXPECT_EQ(s.args[2].list_len, 2);
  EXPECT_DOUBLE_EQ(s.args[3].default_value->to_double(), 1e-5);
  EXPECT_TRUE(s.args[4].default_value->is_int());
  EXPECT_TRUE(s.args[5].kwarg_only);
  EXPECT_EQ(s.args[6].default_value->to_string_ref(), "mean");
  EXPECT_TRUE(s.args[7].default_value->to_int_list().empty());
  EXPECT_EQ(s.returns.size(), 2u);
}

TEST(Schema, MalformedSchemaNamesTheColumn) {
  EXPECT_THAT([] { parse_schema("aten::foo(Tensr x) -> Tensor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("unknown type 'Tensr'")));
  EXPECT_THAT([] { parse_schema("aten::foo(Tensor x -> Tensor"); },
              ::testing::ThrowsMessage<Error>(HasSubstr("schema parse error at column")));
}

TEST(OpTable, EverySchemaParsesAndRoundTrips) {
  std::set<std::string> names;
  for (const OpEntry& op : all_ops()) {
    EXPECT_TRUE(names.insert(op.name).second) << "duplicate op " << op.name;
    EXPECT_NE(op.kernels[0], nullptr) << op.name;
    // The canonical text parses back to the same canonical text.
    EXPECT_EQ(parse_schema(op.schema.str()).str(), op.schema.str());
    // (dunders such as aten::__and__.bool end with '_' too)
    if (op.name.find('_') != std::string::npos && op.schema.name.back() == '_' &&
        !op.schema.name.starts_with("__")) {
      EXPECT_TRUE(op.is_inplace) << op.name << ": in-place ops write self";
    }
  }
  ASSERT_NE(find_op("aten::add.Tensor"), nullptr);
  EXPECT_EQ(find_op("aten::add.Tensor"), &op_entry(OpId::add));
  EXPECT_EQ(find_op("aten::view"), &op_entry(OpId::view));  // default overload by base name
  EXPECT_GE(find_overloads("aten::add").size(), 2u);
  EXPECT_EQ(find_op("aten::nope"), nullptr);
}

// Note [Derived op variants]: in-place and out= variants pair with their functional siblings from
// the schemas, and get a derived kernel wherever they have none of their own.
TEST(OpVariants, PairWithTheirFunctionalSiblingFromTheSchemas) {
  auto sibling = [](OpId v) { return op_entry(v).functional; };
  EXPECT_EQ(sibling(OpId::add_), &op_entry(OpId::add));
  EXPECT_EQ(sibling(OpId::add__Scalar), &op_entry(OpId::add_Scalar));
  EXPECT_EQ(sibling(OpId::add_out), &op_entry(OpId::add));
  EXPECT_EQ(sibling(OpId::mul_out), &op_entry(OpId::mul));
  EXPECT_EQ(sibling(OpId::div__Tensor_mode), &op_entry(OpId::div_Tensor_mode));
  EXPECT_EQ(sibling(OpId::div__Scalar_mode), &op_entry(OpId::div_Scalar_mode));
  EXPECT_EQ(sibling(OpId::round__decimals), &op_entry(OpId::round_decimals));
  // In place, the overload names need not match: the arguments decide.
  EXPECT_EQ(sibling(OpId::pow_), &op_entry(OpId::pow));  // pow.Tensor_Tensor
  EXPECT_EQ(sibling(OpId::pow__Scalar), &op_entry(OpId::pow_Tensor_Scalar));
  EXPECT_EQ(sibling(OpId::gelu_), &op_entry(OpId::gelu));
  EXPECT_EQ(sibling(OpId::addmm_), &op_entry(OpId::addmm));
  EXPECT_EQ(sibling(OpId::addmm_out), &op_entry(OpId::addmm));
  EXPECT_EQ(sibling(OpId::tril_), &op_entry(OpId::tril));
  EXPECT_EQ(sibling(OpId::add), nullptr);  // functional ops pair with nothing
  EXPECT_EQ(op_entry(OpId::add_).written_arg, 0);
  EXPECT_EQ(op_entry(OpId::mul_out).written_arg, 2);
  EXPECT_EQ(op_entry(OpId::mul).written_arg, -1);
}

// The variants nothing pairs with keep their own kernels on every device: a new one is a
// deliberate change of this list.
TEST(OpVariants, TheUnpairedVariantsAreThePinnedOnes) {
  std::vector<std::string> unpaired;
  for (const OpEntry* op : unpaired_variants()) unpaired.push_back(op->name);
  EXPECT_EQ(unpaired, (std::vector<std::string>{"aten::copy_",
                                                "aten::fill_.Scalar",
                                                "aten::zero_",
                                                "aten::resize_",
                                                "aten::resize_as_",
                                                "aten::requires_grad_",
                                                "aten::normal_",
                                                "aten::uniform_",
                                                "aten::bernoulli_.float",
                                                "aten::random_.from",
                                                "aten::random_.to",
                                                "aten::random_",
                                                "aten::polygamma_",
                                                "aten::dropout_",
                                                "aten::embedding_renorm_",
                                                "aten::__iand__.Tensor",
                                                "aten::__iand__.Scalar",
                                                "aten::__ior__.Tensor",
                                                "aten::__ior__.Scalar",
                                                "aten::__ixor__.Tensor",
                                                "aten::__ixor__.Scalar",
                                                "aten::feature_dropout_",
                                                "aten::alpha_dropout_",
                                                "aten::feature_alpha_dropout_"}));
}

TEST(OpVariants, EveryVariantHasACpuKernelDerivedUnlessItsOwn) {
  size_t variants = 0, derived = 0;
  for (const OpEntry& op : all_ops()) {
    if (op.written_arg < 0) continue;
    ++variants;
    EXPECT_NE(op.kernels[static_cast<int>(DeviceType::CPU)], nullptr) << op.name;
    derived += kernel_is_derived(op, DeviceType::CPU);
    if (!op.functional) {
      EXPECT_FALSE(kernel_is_derived(op, DeviceType::CPU)) << op.name;
    }
  }
  EXPECT_GT(derived, variants / 2);
  for (OpId id : {OpId::add_, OpId::add_out, OpId::mul_out, OpId::div__Tensor_mode, OpId::exp_,
                  OpId::logical_and_, OpId::addmm_, OpId::clamp_min__Tensor})
    EXPECT_TRUE(kernel_is_derived(op_entry(id), DeviceType::CPU)) << op_entry(id).name;
  // Their own kernels win: clamp_ names itself from inside the loop, the out= products check
  // out's dtype (meta::write_out), tril_ and index_copy_ are the functional ops' primitives.
  for (OpId id : {OpId::clamp_, OpId::clamp__Tensor, OpId::mm_out, OpId::addmm_out, OpId::tril_,
                  OpId::index_copy_, OpId::dropout_, OpId::copy_})
    EXPECT_FALSE(kernel_is_derived(op_entry(id), DeviceType::CPU)) << op_entry(id).name;
  EXPECT_FALSE(kernel_is_derived(op_entry(OpId::add), DeviceType::CPU));
}

TEST(OpVariants, DerivedInPlaceWritesSelfAndReturnsIt) {
  Tensor x = testing::random_tensor({2, 3}, ScalarType::Float32, 1);
  const Tensor y = testing::random_tensor({3}, ScalarType::Float32, 2);
  const Tensor want = ops::add(x, y, 2);
  void* data = x.raw_data();
  const Tensor r = ops::add_(x, y, 2);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_EQ(x.raw_data(), data);
  EXPECT_TRUE(ops::equal(x, want).value().to_bool());
  // A result of another dtype is cast into self's (logical_and_ writes 0 and 1 in float32).
  Tensor f = testing::random_tensor({4}, ScalarType::Float32, 3);
  const Tensor want_f = ops::logical_and(f, ops::gt_Scalar(f, 0)).tensor().to(ScalarType::Float32);
  ops::logical_and_(f, ops::gt_Scalar(f, 0));
  EXPECT_TRUE(ops::equal(f, want_f).value().to_bool());
}

TEST(OpVariants, DerivedOutWritesOutResizingItAndReturnsIt) {
  const Tensor a = testing::random_tensor({2, 3}, ScalarType::Float32, 4);
  const Tensor b = testing::random_tensor({2, 1}, ScalarType::Float32, 5);
  Tensor out = Tensor::empty(std::vector<int64_t>{1}, ScalarType::Float64);
  const Tensor r = ops::mul_out(a, b, out);
  EXPECT_TRUE(r.is_same(out));
  EXPECT_EQ(out.sizes().size(), 2u);
  EXPECT_TRUE(ops::equal(out, ops::mul(a, b).tensor().to(ScalarType::Float64)).value().to_bool());
  Tensor out2 = Tensor::empty(std::vector<int64_t>{2, 3}, ScalarType::Float32);
  void* data = out2.raw_data();
  EXPECT_TRUE(ops::add_out(a, b, 3, out2).tensor().is_same(out2));
  EXPECT_EQ(out2.raw_data(), data);  // the right shape already: written in place
  EXPECT_TRUE(ops::equal(out2, ops::add(a, b, 3)).value().to_bool());
}

TEST(OpVariants, DerivedVariantsRaiseTheHandWrittenKernelsErrors) {
  Tensor s = testing::random_tensor({3}, ScalarType::Float32, 6);
  const Tensor a = testing::random_tensor({2, 3}, ScalarType::Float32, 7);
  EXPECT_EQ(testing::error_of([&] { ops::add_(s, a); }),
            "add_: output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_EQ(testing::error_of([&] { ops::mul_(s, a); }),
            "mul_: output with shape [3] doesn't match the broadcast shape [2, 3]");
  EXPECT_EQ(s.sizes().size(), 1u);  // self was not resized
  Tensor i = testing::random_tensor({3}, ScalarType::Int64, 8, 1, 5);
  EXPECT_EQ(testing::error_of([&] { ops::div_(i, i); }),
            "div_: result type float32 can't be cast to the desired output type int64");
  Tensor out = Tensor::empty(std::vector<int64_t>{3}, ScalarType::Int64);
  EXPECT_EQ(testing::error_of([&] { ops::mul_out(s, s, out); }),
            "mul: result type float32 can't be cast to the desired output type int64");
  // The functional kernel's own checks name the functional op, as the hand-written wrappers did.
  EXPECT_THAT(
      testing::error_of([&] { ops::add_(a, testing::random_tensor({4}, ScalarType::Float32, 9)); }),
      HasSubstr("add: the size of tensor a (3) must match the size of tensor b (4)"));
}

// A backend that registers only the functional kernel serves the variants too, on its device's
// column; a variant's own kernel is never replaced.
TEST(OpVariants, RegisteringTheFunctionalKernelDerivesTheVariantsOnThatDevice) {
  const DeviceType cuda = DeviceType::CUDA;
  constexpr int kCuda = static_cast<int>(DeviceType::CUDA);
  const OpId touched[] = {OpId::add, OpId::add_, OpId::add_out, OpId::mm, OpId::mm_out};
  std::vector<BoxedKernel> saved;
  for (OpId id : touched) saved.push_back(op_entry(id).kernels[kCuda]);
  if (saved[0]) GTEST_SKIP() << "the CUDA backend is loaded in this process";
  auto fake_mm_out = [](Stack&) {};
  register_kernel(OpId::mm_out, cuda, +fake_mm_out);
  // "CUDA" kernels that are the CPU ones: the derived kernel must call the sibling's CUDA column.
  register_kernel(OpId::add, cuda, op_entry(OpId::add).kernels[static_cast<int>(DeviceType::CPU)]);
  register_kernel(OpId::mm, cuda, op_entry(OpId::mm).kernels[static_cast<int>(DeviceType::CPU)]);
  EXPECT_TRUE(kernel_is_derived(op_entry(OpId::add_), cuda));
  EXPECT_TRUE(kernel_is_derived(op_entry(OpId::add_out), cuda));
  EXPECT_FALSE(kernel_is_derived(op_entry(OpId::add__Scalar), cuda));  // add.Scalar has none
  EXPECT_EQ(op_entry(OpId::mm_out).kernels[kCuda], +fake_mm_out);
  const auto missing = ops_without_kernel(cuda);
  EXPECT_EQ(std::find(missing.begin(), missing.end(), &op_entry(OpId::add_)), missing.end());
  Tensor x = testing::random_tensor({2}, ScalarType::Float32, 10);
  const Tensor want = ops::add(x, x, 1);
  Stack s{x, x, Scalar(int64_t{1})};
  op_entry(OpId::add_).kernels[kCuda](s);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_TRUE(s[0].to_tensor().is_same(x));
  EXPECT_TRUE(ops::equal(x, want).value().to_bool());
  for (size_t i = 0; i < std::size(touched); ++i) register_kernel(touched[i], cuda, saved[i]);
}

TEST(Binding, KeywordsDefaultsAndConversions) {
  const OpEntry& op = op_entry(OpId::add);
  Stack s = bind_arguments(op.schema, {ops::ones(V{2}).tensor(), ops::ones(V{2}).tensor()},
                           {{"alpha", IValue(int64_t{3})}});
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[2].to_int(), 3);
  OpResult r = call_op("aten::add.Tensor", {ops::ones(V{2}).tensor(), ops::ones(V{2}).tensor()},
                       {{"alpha", IValue(2.0)}});
  EXPECT_EQ(testing::values(r.tensor()), (std::vector<double>{3, 3}));
  // int[N] accepts one int; Device accepts a string.
  Stack e = bind_arguments(op_entry(OpId::zeros).schema, {IValue(V{2})},
                           {{"device", IValue("cpu")}, {"dtype", IValue(ScalarType::Float16)}});
  EXPECT_TRUE(e[2].is_device());
}

TEST(Binding, ErrorsNameOpArgumentAndTypes) {
  const auto& add = op_entry(OpId::add).schema;
  Tensor x = ops::ones(V{2});
  EXPECT_THAT(
      [&] {
        bind_arguments(add, {x, IValue("two")});
      },
      ::testing::ThrowsMessage<TypeError>(
          HasSubstr("aten::add.Tensor(): argument 'other' (position 2) must be Tensor, not str")));
  EXPECT_THAT([&] { bind_arguments(add, {x}); },
              ::testing::ThrowsMessage<TypeError>(HasSubstr("missing required argument 'other'")));
  EXPECT_THAT(
      [&] {
        bind_arguments(add, {x, x}, {{"beta", IValue(1)}});
      },
      ::testing::ThrowsMessage<TypeError>(HasSubstr("unexpected keyword argument 'beta'")));
  EXPECT_THAT(
      [&] {
        bind_arguments(add, {x, x, IValue(1)});
      },
      ::testing::ThrowsMessage<TypeError>(
          HasSubstr("takes 2 positional arguments but 3 were given")));
  EXPECT_THAT(
      [&] {
        bind_arguments(add, {x}, {{"self", IValue(x)}});
      },
      ::testing::ThrowsMessage<TypeError>(HasSubstr("multiple values for argument 'self'")));
  EXPECT_THAT(
      [&] { call_op("aten::frobnicate", {}); },
      ::testing::ThrowsMessage<NotImplementedError>(HasSubstr("no op named 'aten::frobnicate'")));
}

// ---- Dispatcher layers ---------------------------------------------------------------------

std::vector<std::string> g_log;
void autocast_probe(const OpEntry& op, Stack& s) {
  g_log.push_back("autocast:" + op.name);
  redispatch(DispatchLayer::Autocast, op, s);
}
void tracer_probe(const OpEntry& op, Stack& s) {
  g_log.push_back("tracer:" + op.name);
  redispatch(DispatchLayer::Tracer, op, s);
}

TEST(Dispatcher, LayersRunInOrderOnlyWhenIncluded) {
  set_layer(DispatchLayer::Autocast, autocast_probe);
  set_layer(DispatchLayer::Tracer, tracer_probe);
  g_log.clear();
  Tensor x = ops::ones(V{2});
  g_log.clear();
  ops::add(x, x);
  EXPECT_TRUE(g_log.empty());  // nothing included: straight to the kernel
  {
    LayerGuard a(DispatchLayer::Autocast, LayerGuard::Include);
    LayerGuard t(DispatchLayer::Tracer, LayerGuard::Include);
    ops::add(x, x);
    EXPECT_EQ(g_log,
              (std::vector<std::string>{"autocast:aten::add.Tensor", "tracer:aten::add.Tensor"}));
    g_log.clear();
    {
      LayerGuard ex(DispatchLayer::Autocast, LayerGuard::Exclude);
      ops::add(x, x);
      EXPECT_EQ(g_log, (std::vector<std::string>{"tracer:aten::add.Tensor"}));
    }
  }
  g_log.clear();
  ops::add(x, x);
  EXPECT_TRUE(g_log.empty());  // guards restored the thread's state
  // The state is per thread.
  LayerGuard a(DispatchLayer::Autocast, LayerGuard::Include);
  std::thread([&] { ops::add(x, x); }).join();
  EXPECT_TRUE(g_log.empty());
  set_layer(DispatchLayer::Autocast, nullptr);
  set_layer(DispatchLayer::Tracer, nullptr);
}

TEST(Dispatcher, MixedDevicesAndMissingKernelsAreErrors) {
  Tensor x = ops::ones(V{2});
  Tensor fake_cuda = Tensor::make_view(x, x.sizes(), x.strides(), 0);
  fake_cuda.impl()->device = Device(DeviceType::CUDA, 0);
  EXPECT_THAT(
      [&] { ops::add(x, fake_cuda); },
      ::testing::ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device, "
                                                "but found at least two devices, cpu and cuda:0")));
  EXPECT_THAT([&] { ops::add(fake_cuda, fake_cuda); },
              ::testing::ThrowsMessage<NotImplementedError>(
                  HasSubstr("aten::add.Tensor: no kernel for device 'cuda:0'")));
  EXPECT_THAT([&] { ops::zeros(V{2}, std::nullopt, Device(DeviceType::CUDA, 0)); },
              ::testing::ThrowsMessage<Error>(HasSubstr("cuda")));
}

// ---- Factories and random numbers --------------------------------------------------------

TEST(Factories, DtypesAndValues) {
  EXPECT_EQ(Tensor(ops::zeros(V{2, 3})).dtype(), f32);
  EXPECT_EQ(Tensor(ops::full(V{2}, int64_t{7})).dtype(), i64);  // inferred from the fill value
  EXPECT_EQ(Tensor(ops::full(V{2}, true)).dtype(), b1);
  EXPECT_EQ(Tensor(ops::full(V{2}, 1.5, bf)).dtype(), bf);
  EXPECT_EQ(testing::values(ops::arange(5)), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_EQ(Tensor(ops::arange(5)).dtype(), i64);
  EXPECT_EQ(Tensor(ops::arange(5.0)).dtype(), f32);
  EXPECT_EQ(testing::values(ops::arange_start_step(1, 2.0, 0.25)),
            (std::vector<double>{1, 1.25, 1.5, 1.75}));
  EXPECT_EQ(testing::values(ops::arange_start_step(10, 0, -3)), (std::vector<double>{10, 7, 4, 1}));
  EXPECT_EQ(testing::values(ops::eye_m(2, 3)), (std::vector<double>{1, 0, 0, 0, 1, 0}));
  Tensor like = ops::ones_like(ops::zeros(V{2, 2}, f16));
  EXPECT_EQ(like.dtype(), f16);
  EXPECT_EQ(testing::values(like), (std::vector<double>{1, 1, 1, 1}));
  Tensor rg = ops::zeros(V{2}, f32, std::nullopt, true);
  EXPECT_TRUE(rg.requires_grad());
  EXPECT_THAT([] { ops::arange_start_step(0, 5, 0); },
              ::testing::ThrowsMessage<Error>(HasSubstr("step must be nonzero")));
  EXPECT_THAT([] { ops::arange_start_step(5, 0, 1); },
              ::testing::ThrowsMessage<Error>(HasSubstr("inconsistent with step sign")));
  EXPECT_THAT([] { ops::rand(V{2}, i64); },
              ::testing::ThrowsMessage<Error>(HasSubstr("expected a floating point dtype")));
}

TEST(Random, DeterministicPerSeedAndWellDistributed) {
  manual_seed(42);
  std::vector<double> a = testing::values(ops::rand(V{10000}));
  std::vector<double> n1 = testing::values(ops::randn(V{10000}));
  manual_seed(42);
  EXPECT_EQ(testing::values(ops::rand(V{10000})), a);
  EXPECT_EQ(testing::values(ops::randn(V{10000})), n1);
  manual_seed(43);
  EXPECT_NE(testing::values(ops::rand(V{10000})), a);
  double sum = 0, mn = 1, mx = 0;
  for (double v : a) sum += v, mn = std::min(mn, v), mx = std::max(mx, v);
  EXPECT_NEAR(sum / a.size(), 0.5, 0.02);  // 5 sigma for 10k uniforms is ~0.014
  EXPECT_GE(mn, 0.0);
  EXPECT_LT(mx, 1.0);
  double s = 0, s2 = 0;
  for (double v : n1) s += v, s2 += v * v;
  EXPECT_NEAR(s / n1.size(), 0.0, 0.05);
  EXPECT_NEAR(s2 / n1.size(), 1.0, 0.07);
  for (ScalarType dt : {bf, f16}) {
    for (double v : testing::values(ops::rand(V{5000}, dt))) ASSERT_LT(v, 1.0) << dtype_name(dt);
  }
}

TEST(IValue, TagsConversionsAndEquality) {
  IValue i(int64_t{3}), d(2.5), b(true), n;
  EXPECT_TRUE(i.is_int());
  EXPECT_DOUBLE_EQ(i.to_double(), 3.0);  // ints widen to float where floats are expected
  EXPECT_THROW(d.to_int(), TypeError);
  EXPECT_TRUE(n.is_none());
  EXPECT_TRUE(IValue(V{1, 2}).equals(IValue(V{1, 2})));
  EXPECT_FALSE(IValue(V{1, 2}).equals(IValue(V{1, 3})));
  EXPECT_EQ(IValue::tuple({i, d}).repr(), "(3, 2.5)");
  Tensor x = ops::ones(V{2});
  const uint32_t before = x.impl()->use_count();
  {
    IValue held(x);
    IValue copy = held;
    EXPECT_EQ(x.impl()->use_count(), before + 2);
  }
  EXPECT_EQ(x.impl()->use_count(), before);
}

// Note [Large CPU buffers]: a freed large tensor's block serves the next tensor of its size
// class; small tensors stay inline.
TEST(CpuAllocator, LargeTensorsReuseTheirBlocks) {
  cpu_empty_cache();
  const CachingAllocator::Stats before = cpu_cache_stats();
  const void* first = nullptr;
  {
    Tensor t = Tensor::empty(V{512, 1024}, f32);  // 2 MiB
    first = t.raw_data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  }
  Tensor again = Tensor::empty(V{1024, 512}, f32);  // the same size class
  EXPECT_EQ(again.raw_data(), first);
  const CachingAllocator::Stats s = cpu_cache_stats();
  EXPECT_EQ(s.num_allocs - before.num_allocs, 2u);
  EXPECT_EQ(s.num_cache_hits - before.num_cache_hits, 1u);
  Tensor small = Tensor::empty(V{1000}, f32);  // 4 KB: inline, not counted
  EXPECT_EQ(cpu_cache_stats().num_allocs, s.num_allocs);
  again = Tensor();
  EXPECT_GT(cpu_cache_stats().reserved_bytes, cpu_cache_stats().allocated_bytes);
  cpu_empty_cache();
  EXPECT_EQ(cpu_cache_stats().reserved_bytes, cpu_cache_stats().allocated_bytes);
}

// The vectorized float32 <-> float16/bfloat16 copies give the element loop's values exactly
// (ties to even, NaN, infinities, subnormals, overflow to infinity).
TEST(CopyConversions, ContiguousRunsMatchTheElementLoop) {
  std::vector<float> special = {0.f,     -0.f,  1.f,      1.00390625f, 1.01171875f, 65504.f,
                                65520.f, 1e-8f, -3.4e38f, 1e-40f,      INFINITY,    -INFINITY,
                                NAN,     0.1f,  -2.5f,    3.14159265f, 6.1e-5f,     1.0000001f};
  Tensor src = Tensor::empty(V{static_cast<int64_t>(special.size()) * 2000}, f32);
  for (int64_t i = 0; i < src.numel(); ++i)
    src.data<float>()[i] =
        i < static_cast<int64_t>(special.size())
            ? special[static_cast<size_t>(i)]
            : std::ldexp(static_cast<float>(i % 977) - 488.f, static_cast<int>(i % 41) - 20);
  for (ScalarType t : {ScalarType::BFloat16, ScalarType::Float16}) {
    Tensor fast = Tensor::empty(src.sizes(), t);
    fast.copy_(src);
    // the element loop: the same copy through strided (non-contiguous) views
    Tensor slow_dst = Tensor::empty(V{src.numel(), 2}, t);
    Tensor slow = slow_dst.select(1, 0);
    slow.copy_(src);
    for (int64_t i = 0; i < src.numel(); ++i)
      ASSERT_EQ(static_cast<const uint16_t*>(fast.raw_data())[i],
                static_cast<const uint16_t*>(slow_dst.raw_data())[2 * i])
          << dtype_name(t) << " at " << i << " from " << src.data<float>()[i];
    Tensor back = Tensor::empty(src.sizes(), f32);
    back.copy_(fast);
    Tensor back_slow_dst = Tensor::empty(V{src.numel(), 2}, f32);
    back_slow_dst.select(1, 0).copy_(fast);
    for (int64_t i = 0; i < src.numel(); ++i) {
      const float a = back.data<float>()[i], b = back_slow_dst.data<float>()[2 * i];
      ASSERT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << dtype_name(t) << " at " << i;
    }
  }
}

TEST(IValue, AWrongKindIsATypeErrorNamingBoth) {
  // (It once crashed: the message was built from a probe value holding a null heap pointer.)
  EXPECT_EQ(testing::error_of([] { IValue(2.5).to_tensor(); }),
            "expected a value of type Tensor but got float");
  EXPECT_THROW(IValue(std::string("s")).list_elems(), TypeError);
  EXPECT_THROW(ops::mul(ops::ones(V{1}), Scalar(2.0)), TypeError);  // mul.Tensor takes a tensor
}

TEST(IValue, DictsKeepInsertionOrderAndFindAfterErase) {
  Ref<DictObj> d(new DictObj());
  for (int64_t k = 0; k < 100; ++k) d->set(IValue(std::to_string(k)), IValue(k * k));
  d->set(IValue(std::string("5")), IValue(int64_t{-1}));  // replaced in place
  ASSERT_EQ(d->size(), 100u);
  EXPECT_EQ(d->items()[5].second.to_int(), -1);
  EXPECT_TRUE(d->erase(IValue(std::string("0"))));
  EXPECT_FALSE(d->erase(IValue(std::string("0"))));
  EXPECT_EQ(d->items().front().first.to_string_ref(), "1");
  for (int64_t k = 1; k < 100; ++k) {  // every position moved; the index follows
    const IValue* v = d->find(IValue(std::to_string(k)));
    ASSERT_NE(v, nullptr) << k;
    EXPECT_EQ(v->to_int(), k == 5 ? -1 : k * k);
  }
  EXPECT_EQ(d->find(IValue(int64_t{1})), nullptr);  // an int is not the str "1"
  Tensor a = ops::ones(V{1}), b = ops::ones(V{1});
  Ref<DictObj> by_tensor(new DictObj());
  by_tensor->set(IValue(a), IValue(1.0));
  EXPECT_NE(by_tensor->find(IValue(a)), nullptr);
  EXPECT_EQ(by_tensor->find(IValue(b)), nullptr);  // tensors are keys by identity
  EXPECT_THROW(by_tensor->set(IValue::list({}), IValue()), Error);
  IValue held(d);
  EXPECT_EQ(IValue(Ref<DictObj>(new DictObj())).repr(), "{}");
  EXPECT_TRUE(held.is_dict());
  EXPECT_EQ(std::string(held.tag_name()), "dict");
}

TEST(Type, UnionsFlattenDedupAndOrderAsTorch) {
  auto u = Type::union_({Type::str_(), Type::int_(), Type::list(Type::int_())});
  EXPECT_EQ(u->str(), "Union(int[], int, str)");
  EXPECT_EQ(u->annotation_str(), "Union[List[int], int, str]");
  EXPECT_EQ(Type::union_({Type::int_(), Type::float_(), Type::none()})->str(),
            "Union(float, int, NoneType)");
  EXPECT_EQ(Type::union_({Type::int_(), Type::none()})->str(), "int?");  // Optional[int]
  EXPECT_EQ(Type::union_({Type::int_(), Type::int_()})->str(), "int");
  EXPECT_EQ(Type::union_({u, Type::optional(Type::float_())})->str(),
            "Union(int[], float, int, NoneType, str)");
  EXPECT_TRUE(Type::int_()->is_subtype_of(*u));
  EXPECT_FALSE(Type::float_()->is_subtype_of(*u));
  EXPECT_FALSE(u->is_subtype_of(*Type::int_()));
  EXPECT_TRUE(Type::optional(Type::int_())
                  ->is_subtype_of(*Type::union_({Type::int_(), Type::str_(), Type::none()})));
  auto d = Type::dict(Type::str_(), Type::tensor());
  EXPECT_EQ(d->str(), "Dict(str, Tensor)");
  EXPECT_EQ(d->annotation_str(), "Dict[str, Tensor]");
  EXPECT_FALSE(d->is_subtype_of(*Type::dict(Type::str_(), Type::int_())));
}

}  // namespace
}  // namespace ampjit
