// Tensors and views: shapes, strides, aliasing, converting copies, and their errors.
#include <gmock/gmock.h>

#include <algorithm>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using ::testing::HasSubstr;
using testing::random_tensor;
using testing::values;
using V = std::vector<int64_t>;

Tensor iota(V shape, ScalarType dt = ScalarType::Float32) {
  return Tensor(ops::arange(numel_of(shape), dt)).view(shape);
}

TEST(Tensor, EmptyIsContiguousWithRowMajorStrides) {
  Tensor t = Tensor::empty(V{2, 3, 4}, ScalarType::BFloat16);
  EXPECT_EQ(t.dim(), 3);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(V(t.strides().begin(), t.strides().end()), (V{12, 4, 1}));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.itemsize(), 2u);
  EXPECT_EQ(t.storage()->nbytes(), 48u);
}

TEST(Tensor, ViewSharesStorageAndSeesWrites) {
  Tensor a = iota({2, 6});
  Tensor v = a.view(V{3, -1});
  EXPECT_EQ(v.shape_str(), "[3, 4]");
  EXPECT_EQ(v.storage().get(), a.storage().get());
  EXPECT_TRUE(v.is_view());
  v.select(0, 1).fill_(Scalar(-1.0));
  EXPECT_EQ(values(a), (std::vector<double>{0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11}));
}

TEST(Tensor, ViewOfNonContiguousFailsButReshapeCopies) {
  Tensor a = iota({3, 4}).t();
  try {
    a.view(V{12});
    FAIL() << "view of a transposed tensor must fail";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("view size is not compatible"));
  }
  Tensor r = a.reshape(V{12});
  EXPECT_NE(r.storage().get(), a.storage().get());
  EXPECT_EQ(values(r), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // A reshape that is expressible as a view stays a view.
  Tensor b = iota({2, 3, 4}).transpose(0, 1);  // [3, 2, 4], inner dim contiguous
  Tensor rb = b.reshape(V{3, 2, 2, 2});
  EXPECT_EQ(rb.storage().get(), b.storage().get());
}

TEST(Tensor, TransposePermuteAndContiguous) {
  Tensor a = iota({2, 3, 4});
  Tensor p = a.permute(V{2, 0, 1});
  EXPECT_EQ(p.shape_str(), "[4, 2, 3]");
  EXPECT_EQ(V(p.strides().begin(), p.strides().end()), (V{1, 12, 4}));
  EXPECT_FALSE(p.is_contiguous());
  Tensor c = p.contiguous();
  EXPECT_TRUE(c.is_contiguous());
  testing::for_each_index({4, 2, 3}, [&](const V& i, int64_t lin) {
    EXPECT_EQ(values(c)[lin], static_cast<double>(i[1] * 12 + i[2] * 4 + i[0]));
  });
  EXPECT_TRUE(a.contiguous().is_same(a));  // no copy when already contiguous
}

TEST(Tensor, SelectSliceNarrow) {
  Tensor a = iota({4, 5});
  EXPECT_EQ(values(a.select(1, -1)), (std::vector<double>{4, 9, 14, 19}));
  EXPECT_EQ(values(a.slice(1, 1, std::nullopt, 2)),
            (std::vector<double>{1, 3, 6, 8, 11, 13, 16, 18}));
  EXPECT_EQ(values(a.slice(0, -2, 100)),
            (std::vector<double>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19}));
  EXPECT_EQ(a.slice(0, 3, 1).numel(), 0);  // empty, not an error (torch)
  EXPECT_EQ(values(a.narrow(0, 1, 1)), (std::vector<double>{5, 6, 7, 8, 9}));
}

TEST(Tensor, ExpandSqueezeUnsqueezeFlatten) {
  Tensor a = iota({3, 1});
  Tensor e = a.expand(V{2, 3, 4});
  EXPECT_EQ(V(e.strides().begin(), e.strides().end()), (V{0, 1, 0}));
  EXPECT_EQ(values(e)[5], 1.0);
  EXPECT_EQ(a.unsqueeze(0).shape_str(), "[1, 3, 1]");
  EXPECT_EQ(a.unsqueeze(-1).shape_str(), "[3, 1, 1]");
  EXPECT_EQ(a.squeeze().shape_str(), "[3]");
  EXPECT_EQ(a.squeeze(0).shape_str(), "[3, 1]");  // size 3: unchanged
  EXPECT_EQ(iota({2, 3, 4}).flatten(1).shape_str(), "[2, 12]");
  EXPECT_EQ(Tensor::empty(V{}).flatten().shape_str(), "[1]");
}

TEST(Tensor, ZeroDimTensor) {
  Tensor s = ops::full(V{}, 2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(s.item<double>(), 2.5);
  EXPECT_EQ(s.unsqueeze(0).shape_str(), "[1]");
  EXPECT_EQ(s.str(), "tensor(2.5000)");
}

TEST(Tensor, CopyConvertsAndBroadcasts) {
  Tensor src = random_tensor({3, 1}, ScalarType::Float64, 7);
  for (ScalarType dt : {ScalarType::Float32, ScalarType::Float16, ScalarType::BFloat16,
                        ScalarType::Int32, ScalarType::Bool, ScalarType::UInt8}) {
    Tensor dst = Tensor::empty(V{2, 3, 4}, dt);
    dst.copy_(src);
    std::vector<double> sv = values(src), dv = values(dst);
    testing::for_each_index({2, 3, 4}, [&](const V& i, int64_t lin) {
      EXPECT_EQ(dv[lin], testing::round_to(sv[i[1]], dt)) << dtype_name(dt);
    });
  }
}

TEST(Tensor, CopyIntoNonContiguousDestination) {
  Tensor parent = Tensor::empty(V{4, 3}, ScalarType::Float32);
  parent.fill_(Scalar(0.0));
  Tensor dst = parent.t();  // [3, 4], strides (1, 3)
  dst.copy_(iota({3, 4}, ScalarType::Int64));
  EXPECT_EQ(values(parent), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
}

TEST(Tensor, ToRoundsOnceFromDouble) {
  // 1 + 2^-11 + 2^-40 rounds up to the next half directly; through float it would tie to even.
  Tensor d = ops::full(V{1}, 1.0 + 0x1p-11 + 0x1p-40, ScalarType::Float64);
  EXPECT_EQ(d.to(ScalarType::Float16).item<double>(), 1.0 + 0x1p-10);
  EXPECT_TRUE(d.to(ScalarType::Float64).is_same(d));  // same dtype: no copy
  EXPECT_FALSE(d.to(ScalarType::Float64, true).is_same(d));
}

TEST(Tensor, LargeCopyRunsInParallelChunksCorrectly) {
  Tensor a = iota({300, 400}, ScalarType::Float32).t();  // strided source, 120k elements
  Tensor c = a.contiguous();
  std::vector<double> v = values(c);
  for (int64_t i = 0; i < 400; ++i)
    for (int64_t j = 0; j < 300; j += 37)
      ASSERT_EQ(v[i * 300 + j], static_cast<double>(j * 400 + i));
}

TEST(Tensor, RequiresGradAndLeafFlags) {
  Tensor w = ops::ones(V{2, 2});
  EXPECT_FALSE(w.requires_grad());
  w.set_requires_grad(true);
  EXPECT_TRUE(w.is_leaf());
  // Tensor::view is the undispatched metadata view (what kernels use): autograd does not see it.
  EXPECT_TRUE(w.view(V{4}).is_leaf());
  EXPECT_FALSE(w.view(V{4}).requires_grad());
  // The op is recorded: a non-leaf that requires grad (runtime/autograd).
  Tensor v = ops::view(w, V{4});
  EXPECT_FALSE(v.is_leaf());
  EXPECT_TRUE(v.requires_grad());
  EXPECT_THAT([] { ops::ones(V{2}, ScalarType::Int64).tensor().set_requires_grad(true); },
              ::testing::ThrowsMessage<Error>(HasSubstr("only Tensors of floating point dtype")));
}

TEST(TensorErrors, BadViewsNameTheProblem) {
  Tensor a = iota({2, 3});
  EXPECT_THAT(
      [&] {
        a.view(V{4, -1});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("shape '[4, -1]' is invalid for input of size 6")));
  EXPECT_THAT(
      [&] {
        a.view(V{-1, -1});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("only one dimension can be inferred")));
  EXPECT_THAT([&] { a.transpose(0, 2); },
              ::testing::ThrowsMessage<IndexError>(HasSubstr(
                  "Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_THAT([&] { a.select(1, 3); },
              ::testing::ThrowsMessage<IndexError>(HasSubstr("index 3 out of range")));
  EXPECT_THAT(
      [&] {
        a.expand(V{4, 3, 4});
      },
      ::testing::ThrowsMessage<Error>(
          HasSubstr("The expanded size of the tensor (4) must match the existing size (3)")));
  EXPECT_THAT(
      [&] {
        a.permute(V{0, 0});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("repeated dim")));
  EXPECT_THAT(
      [&] {
        Tensor::empty(V{2, -3});
      },
      ::testing::ThrowsMessage<Error>(HasSubstr("negative dimension -3")));
  EXPECT_THAT([&] { a.item(); }, ::testing::ThrowsMessage<Error>(HasSubstr(
                                     "a Tensor with 6 elements cannot be converted to Scalar")));
  // torch's classes: a length past the end is a RuntimeError, a start out of range an IndexError.
  EXPECT_THAT([&] { a.narrow(1, 2, 2); },
              ::testing::ThrowsMessage<Error>(
                  ::testing::StrEq("start (2) + length (2) exceeds dimension size (3).")));
  EXPECT_THAT([&] { a.narrow(1, INT64_MAX, 1); },
              ::testing::ThrowsMessage<IndexError>(HasSubstr("but got 9223372036854775807")));
}

TEST(TensorPrint, MatchesTorchRepr) {
  EXPECT_EQ(Tensor(ops::arange(3, ScalarType::Float32)).str(), "tensor([0., 1., 2.])");
  EXPECT_EQ(Tensor(ops::arange(3)).str(), "tensor([0, 1, 2])");
  EXPECT_EQ(Tensor(ops::full(V{2}, 0.5, ScalarType::BFloat16)).str(),
            "tensor([0.5000, 0.5000], dtype=torch.bfloat16)");
  EXPECT_EQ(Tensor(ops::full(V{2, 2}, 1.0)).str(), "tensor([[1., 1.],\n        [1., 1.]])");
  EXPECT_EQ(Tensor(ops::full(V{2}, true)).str(), "tensor([True, True])");
  EXPECT_EQ(Tensor(ops::full(V{2}, 12345.678)).str(), "tensor([12345.6777, 12345.6777])");
  EXPECT_EQ(Tensor(ops::full(V{1}, 1e-5)).str(), "tensor([1.0000e-05])");
  EXPECT_EQ(Tensor(ops::zeros(V{0, 3})).str(), "tensor([], size=(0, 3))");
  EXPECT_EQ(Tensor(ops::zeros(V{0}, ScalarType::Float16)).str(), "tensor([], dtype=torch.float16)");
  EXPECT_EQ(Tensor(ops::arange(2000)).str(), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
}

// Every element of dst.copy_(src) is the copy of that one element (Note [Copy runs] in
// runtime/tensor.cpp: dense inner runs, fills from stride-0 sources and the strided walk must all
// give the element-wise conversion).
void expect_elementwise_copy(Tensor dst, const Tensor& src) {
  dst.copy_(src);
  Tensor s = src.expand(dst.sizes());
  testing::for_each_index(V(dst.sizes().begin(), dst.sizes().end()), [&](const V& i, int64_t) {
    Tensor d1 = dst, s1 = s;
    for (int64_t k : i) d1 = d1.select(0, k), s1 = s1.select(0, k);
    Tensor one = Tensor::empty(V{}, dst.dtype());
    one.copy_(s1);
    ASSERT_EQ(d1.to(ScalarType::Float64).item<double>(), one.to(ScalarType::Float64).item<double>())
        << dtype_name(src.dtype()) << " -> " << dtype_name(dst.dtype());
  });
}

TEST(Tensor, CopyOfExpandedStridedAndConvertedSourcesIsElementwise) {
  const ScalarType f32 = ScalarType::Float32;
  const std::vector<std::pair<ScalarType, ScalarType>> pairs = {
      {f32, f32},
      {f32, ScalarType::Float64},
      {f32, ScalarType::BFloat16},
      {f32, ScalarType::Float16},
      {f32, ScalarType::Int64},
      {f32, ScalarType::UInt8},
      {f32, ScalarType::Bool},
      {ScalarType::Bool, ScalarType::Int64},
      {ScalarType::Int64, f32},
      {ScalarType::BFloat16, f32},
      {ScalarType::Float64, ScalarType::Float16},
      {ScalarType::Int32, ScalarType::Int32}};
  uint64_t seed = 40;
  for (const auto& pair : pairs) {  // no structured binding: the lambda below captures `from`
    const ScalarType from = pair.first, to = pair.second;
    auto src = [&](V shape) { return random_tensor(shape, from, ++seed, 0.0, 9.0); };
    expect_elementwise_copy(Tensor::empty(V{4, 3, 5}, to), src({1, 3, 5}));  // tile: dense runs
    expect_elementwise_copy(Tensor::empty(V{3, 4, 5}, to),
                            src({3, 1, 5}).expand(V{3, 4, 5}));        // repeat_interleave
    expect_elementwise_copy(Tensor::empty(V{3, 6}, to), src({3, 1}));  // fills
    expect_elementwise_copy(Tensor::empty(V{4, 5}, to), src({4, 10}).slice(1, 0, 5));
    expect_elementwise_copy(Tensor::empty(V{4, 5}, to), src({5, 4}).t());  // strided walk
    expect_elementwise_copy(Tensor::empty(V{5, 4}, to).t(), src({4, 5}));  // strided dst
    expect_elementwise_copy(Tensor::empty(V{5, 4}, to).t(), src({4, 1}));  // strided fill
  }
}

TEST(Tensor, FillOfContiguousAndStridedTensors) {
  for (ScalarType dt : {ScalarType::Float32, ScalarType::BFloat16, ScalarType::Int64,
                        ScalarType::Bool, ScalarType::UInt8}) {
    for (int64_t n : {1, 37, 100003}) {  // 100003: parallel chunks
      Tensor t = Tensor::empty(V{n}, dt);
      t.fill_(Scalar(1.0));
      std::vector<double> v = values(t);
      EXPECT_EQ(std::count(v.begin(), v.end(), 1.0), n) << dtype_name(dt);
      t.slice(0, 0, std::nullopt, 2).fill_(Scalar(int64_t{0}));  // every other element
      v = values(t);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i % 2 ? 1.0 : 0.0) << dtype_name(dt);
    }
  }
}

}  // namespace
}  // namespace ampjit
