// Indexing and joining ops (runtime/ops/indexing.def) against references written as naive loops
// over multi-indices: every dtype width, strided inputs and indices, negative dims, empty tensors,
// type promotion in cat, in-place variants, and the error messages.
#include <gmock/gmock.h>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::for_each_index;
using ::testing::HasSubstr;
using testing::random_tensor;
using ::testing::ThrowsMessage;
using testing::values;
using V = std::vector<int64_t>;
using Vd = std::vector<double>;

constexpr ScalarType f32 = ScalarType::Float32, f64 = ScalarType::Float64,
                     f16 = ScalarType::Float16, bf16 = ScalarType::BFloat16,
                     i64 = ScalarType::Int64, i32 = ScalarType::Int32, i16 = ScalarType::Int16,
                     u8 = ScalarType::UInt8, i8 = ScalarType::Int8, b8 = ScalarType::Bool;

// One dtype of every element size, floating and integral.
const std::vector<ScalarType>& all_widths() {
  static const std::vector<ScalarType> v = {f32, f64, f16, bf16, i64, i32, i16, u8, i8, b8};
  return v;
}

V shape_of(const Tensor& t) {
  return V(t.sizes().begin(), t.sizes().end());
}

// Row-major linear index of `idx` in `shape`.
int64_t linear(const V& idx, const V& shape) {
  int64_t l = 0;
  for (size_t d = 0; d < shape.size(); ++d) l = l * shape[d] + idx[d];
  return l;
}

Tensor tensor_of(const Vd& v, const V& shape, ScalarType dt) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, f64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.view(shape).to(dt);
}

// Random valid indices in [0, size), as int64 (or `dt`), optionally a strided view.
Tensor random_index(V shape, int64_t size, uint64_t seed, ScalarType dt = i64,
                    bool noncontig = false) {
  return random_tensor(shape, dt, seed, -0.49, static_cast<double>(size) - 0.51, noncontig);
}

// ---- cat, stack --------------------------------------------------------------------------------

// The concatenation of `parts` along `dim`, from their values.
Vd cat_ref(const std::vector<Tensor>& parts, int64_t dim, const V& out_shape) {
  Vd out(numel_of(out_shape));
  int64_t offset = 0;
  for (const Tensor& t : parts) {
    const V s = shape_of(t);
    const Vd v = values(t);
    for_each_index(s, [&](const V& idx, int64_t lin) {
      V o = idx;
      o[dim] += offset;
      out[linear(o, out_shape)] = v[lin];
    });
    offset += s[dim];
  }
  return out;
}

TEST(Cat, MatchesReferenceForEveryWidthDimAndLayout) {
  uint64_t seed = 1;
  for (ScalarType dt : all_widths()) {
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      const int64_t d = dim < 0 ? dim + 3 : dim;
      std::vector<Tensor> parts;
      V out_shape = {2, 3, 4};
      out_shape[d] = 0;
      for (int64_t n : {2, 1, 3}) {
        V s = {2, 3, 4};
        s[d] = n;
        out_shape[d] += n;
        parts.push_back(random_tensor(s, dt, seed++, -5, 5, /*noncontig=*/n != 1));
      }
      SCOPED_TRACE(fmt::format("{} dim={}", dtype_name(dt), dim));
      Tensor y = ops::cat(parts, dim);
      EXPECT_EQ(y.dtype(), dt);
      EXPECT_EQ(shape_of(y), out_shape);
      EXPECT_EQ(values(y), cat_ref(parts, d, out_shape));
    }
  }
}

TEST(Cat, PromotesAcrossInputs) {
  struct Case {
    ScalarType a, b, want;
  };
  for (Case c : {Case{i32, f16, f16}, Case{i64, f32, f32}, Case{b8, i8, i8}, Case{u8, i8, i16},
                 Case{bf16, f16, f32}, Case{f32, f64, f64}}) {
    Tensor a = random_tensor({2, 3}, c.a, 10, -3, 3), b = random_tensor({1, 3}, c.b, 11, -3, 3);
    Tensor y = ops::cat(std::vector<Tensor>{a, b});
    EXPECT_EQ(y.dtype(), c.want) << dtype_name(c.a) << " + " << dtype_name(c.b);
    EXPECT_EQ(values(y),
              values(ops::cat(std::vector<Tensor>{a.to(c.want), b.to(c.want)}).tensor()));
  }
}

TEST(Cat, LegacyEmptyOneDimensionalInputsAreSkipped) {
  Tensor e64 = Tensor::empty(V{0}, f64);
  Tensor a = random_tensor({2, 3}, f32, 12);
  // Skipped for the shape check, but still part of the result type (as in torch).
  Tensor y = ops::cat(std::vector<Tensor>{e64, a, e64}, 1);
  EXPECT_EQ(shape_of(y), (V{2, 3}));
  EXPECT_EQ(y.dtype(), f64);
  EXPECT_EQ(values(y), values(a));
  Tensor all_empty = ops::cat(std::vector<Tensor>{e64, Tensor::empty(V{0}, f32)});
  EXPECT_EQ(shape_of(all_empty), (V{0}));
  // Empty tensors with the right number of dims take part normally.
  Tensor z = ops::cat(std::vector<Tensor>{Tensor::empty(V{0, 3}), a});
  EXPECT_EQ(values(z), values(a));
}

TEST(Cat, Errors) {
  Tensor a = ops::ones(V{2, 3}), b = ops::ones(V{2, 4});
  EXPECT_THAT(
      [&] {
        ops::cat(std::vector<Tensor>{a, b}, 0);
      },
      ThrowsMessage<Error>(HasSubstr(
          "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 4 "
          "for tensor number 1 in the list.")));
  EXPECT_THAT(
      [&] {
        ops::cat(std::vector<Tensor>{a, ops::ones(V{2, 3, 1}).tensor()});
      },
      ThrowsMessage<Error>(HasSubstr("Tensors must have same number of dimensions: got 2 and 3")));
  EXPECT_THAT(
      [&] {
        ops::cat(std::vector<Tensor>{a, ops::ones(V{}).tensor()});
      },
      ThrowsMessage<Error>(
          HasSubstr("zero-dimensional tensor (at position 1) cannot be concatenated")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{}); },
              ThrowsMessage<Error>(HasSubstr("expected a non-empty list of Tensors")));
  EXPECT_THAT(
      [&] {
        ops::cat(std::vector<Tensor>{a, a}, 2);
      },
      ThrowsMessage<IndexError>(HasSubstr("Dimension out of range")));
}

TEST(Stack, MatchesReferenceForEveryDim) {
  uint64_t seed = 20;
  for (ScalarType dt : {f32, f16, i64, b8}) {
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      std::vector<Tensor> parts;
      for (int k = 0; k < 3; ++k) parts.push_back(random_tensor({2, 4}, dt, seed++, -5, 5, k == 1));
      const int64_t d = dim < 0 ? dim + 3 : dim;
      V out_shape = {2, 4};
      out_shape.insert(out_shape.begin() + d, 3);
      Tensor y = ops::stack(parts, dim);
      Vd want(numel_of(out_shape));
      for_each_index(out_shape, [&](const V& idx, int64_t lin) {
        V src = idx;
        src.erase(src.begin() + d);
        want[lin] = values(parts[idx[d]])[linear(src, {2, 4})];
      });
      EXPECT_EQ(values(y), want) << dtype_name(dt) << " dim=" << dim;
      EXPECT_EQ(shape_of(y), out_shape);
    }
  }
  EXPECT_EQ(shape_of(ops::stack(std::vector<Tensor>{Tensor::empty(V{0}), Tensor::empty(V{0})})),
            (V{2, 0}));
}

TEST(Stack, Errors) {
  EXPECT_THAT(
      [] {
        ops::stack(std::vector<Tensor>{ops::ones(V{2, 3}), ops::ones(V{3, 2})});
      },
      ThrowsMessage<Error>(HasSubstr(
          "stack expects each tensor to be equal size, but got [2, 3] at entry 0 and [3, 2] "
          "at entry 1")));
  EXPECT_THAT([] { ops::stack(std::vector<Tensor>{}); },
              ThrowsMessage<Error>(HasSubstr("stack expects a non-empty TensorList")));
}

// ---- index_select, embedding -------------------------------------------------------------------

Vd index_select_ref(const Tensor& self, int64_t dim, const Vd& index, const V& out_shape) {
  const Vd v = values(self);
  Vd out(numel_of(out_shape));
  for_each_index(out_shape, [&](const V& idx, int64_t lin) {
    V src = idx;
    src[dim] = static_cast<int64_t>(index[idx[dim]]);
    out[lin] = v[linear(src, shape_of(self))];
  });
  return out;
}

TEST(IndexSelect, MatchesReferenceForEveryWidthDimAndLayout) {
  uint64_t seed = 100;
  for (ScalarType dt : all_widths()) {
    for (int64_t dim : {0, 1, 2, -1, -2}) {
      for (ScalarType idx_dt : {i64, i32}) {
        for (bool noncontig : {false, true}) {
          SCOPED_TRACE(fmt::format("{} dim={} index {} noncontig={}", dtype_name(dt), dim,
                                   dtype_name(idx_dt), noncontig));
          const V shape = {3, 4, 5};
          const int64_t d = dim < 0 ? dim + 3 : dim;
          Tensor x = random_tensor(shape, dt, seed++, -5, 5, noncontig);
          Tensor index = random_index({7}, shape[d], seed++, idx_dt, noncontig);  // with repeats
          Tensor y = ops::index_select(x, dim, index);
          V out_shape = shape;
          out_shape[d] = 7;
          EXPECT_EQ(y.dtype(), dt);
          EXPECT_EQ(values(y), index_select_ref(x, d, values(index), out_shape));
          EXPECT_EQ(shape_of(y), out_shape);
        }
      }
    }
  }
}

TEST(IndexSelect, EmptyScalarAndZeroDimIndex) {
  Tensor x = random_tensor({4, 3}, f32, 110);
  EXPECT_EQ(shape_of(ops::index_select(x, 0, Tensor::empty(V{0}, i64))), (V{0, 3}));
  EXPECT_EQ(shape_of(ops::index_select(Tensor::empty(V{0, 3}), 1, tensor_of({2, 0}, {2}, i64))),
            (V{0, 2}));
  // A 0-dim index selects one slice and keeps the dim (size 1), as in torch.
  Tensor y = ops::index_select(x, 1, tensor_of({2}, {}, i64));
  EXPECT_EQ(shape_of(y), (V{4, 1}));
  EXPECT_EQ(values(y), values(x.select(1, 2)));
  // A 0-dim self with a one-element index gives a 0-dim result.
  Tensor s = ops::index_select(tensor_of({7.5}, {}, f32), 0, tensor_of({0}, {1}, i64));
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(values(s), Vd{7.5});
}

TEST(IndexSelect, Errors) {
  Tensor x = ops::ones(V{5, 2});
  EXPECT_THAT(
      [&] {
        ops::index_select(x, 0, tensor_of({1, 7}, {2}, i64));
      },
      ThrowsMessage<IndexError>(
          HasSubstr("index_select(): index 7 is out of bounds for dimension 0 with size 5")));
  EXPECT_THAT([&] { ops::index_select(x, -1, tensor_of({-1}, {1}, i32)); },
              ThrowsMessage<IndexError>(
                  HasSubstr("index -1 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::index_select(x, 0, tensor_of({1}, {1}, f32)); },
              ThrowsMessage<IndexError>(HasSubstr(
                  "index_select(): Expected dtype int32 or int64 for index, but got float32")));
  EXPECT_THAT(
      [&] {
        ops::index_select(x, 0, tensor_of({1, 1}, {1, 2}, i64));
      },
      ThrowsMessage<IndexError>(HasSubstr("Index is supposed to be a vector")));
  EXPECT_THAT([&] { ops::index_select(x, 2, tensor_of({1}, {1}, i64)); },
              ThrowsMessage<IndexError>(HasSubstr("Dimension out of range")));
}

TEST(Embedding, LooksUpRowsForAnyIndexShape) {
  uint64_t seed = 120;
  for (ScalarType dt : {f32, f16, bf16, f64}) {
    for (ScalarType idx_dt : {i64, i32}) {
      Tensor w = random_tensor({10, 4}, dt, seed++, -3, 3, true);
      Tensor idx = random_index({2, 3}, 10, seed++, idx_dt, true);
      Tensor y = ops::embedding(w, idx, 0);  // padding_idx only changes the gradient
      EXPECT_EQ(shape_of(y), (V{2, 3, 4}));
      Vd want;
      const Vd wv = values(w);
      for (double i : values(idx))
        for (int64_t k = 0; k < 4; ++k) want.push_back(wv[static_cast<int64_t>(i) * 4 + k]);
      EXPECT_EQ(values(y), want) << dtype_name(dt);
    }
  }
  EXPECT_EQ(shape_of(ops::embedding(ops::ones(V{3, 2}), Tensor::empty(V{0}, i64))), (V{0, 2}));
  EXPECT_EQ(shape_of(ops::embedding(ops::ones(V{3, 2}), tensor_of({1}, {}, i64))), (V{2}));
}

TEST(Embedding, Errors) {
  EXPECT_THAT(
      [] {
        ops::embedding(ops::ones(V{5, 2}), tensor_of({0, 5}, {2}, i64));
      },
      ThrowsMessage<IndexError>(
          HasSubstr("embedding(): index 5 is out of bounds for dimension 0 with size 5")));
  EXPECT_THAT(
      [] {
        ops::embedding(ops::ones(V{5, 2}), tensor_of({0}, {1}, f32));
      },
      ThrowsMessage<IndexError>(
          HasSubstr("Expected dtype int32 or int64 for index, but got float32")));
  EXPECT_THAT([] { ops::embedding(ops::ones(V{5}), tensor_of({0}, {1}, i64)); },
              ThrowsMessage<Error>(HasSubstr("'weight' must be 2-D")));
}

// ---- gather ------------------------------------------------------------------------------------

TEST(Gather, MatchesReferenceForEveryWidthDimAndLayout) {
  uint64_t seed = 200;
  for (ScalarType dt : all_widths()) {
    for (int64_t dim : {0, 1, 2, -1}) {
      for (bool noncontig : {false, true}) {
        SCOPED_TRACE(fmt::format("{} dim={} noncontig={}", dtype_name(dt), dim, noncontig));
        const V shape = {4, 5, 6};
        const int64_t d = dim < 0 ? dim + 3 : dim;
        Tensor x = random_tensor(shape, dt, seed++, -5, 5, noncontig);
        // The index may be smaller than self in every dim, and larger along `dim`.
        V ishape = {3, 4, 2};
        ishape[d] = 7;
        Tensor index = random_index(ishape, shape[d], seed++, i64, noncontig);
        Tensor y = ops::gather(x, dim, index);
        const Vd xv = values(x), iv = values(index);
        Vd want(numel_of(ishape));
        for_each_index(ishape, [&](const V& idx, int64_t lin) {
          V src = idx;
          src[d] = static_cast<int64_t>(iv[lin]);
          want[lin] = xv[linear(src, shape)];
        });
        EXPECT_EQ(shape_of(y), ishape);
        EXPECT_EQ(values(y), want);
      }
    }
  }
}

TEST(Gather, ZeroDimAndEmpty) {
  EXPECT_EQ(values(ops::gather(tensor_of({3}, {}, f32), 0, tensor_of({0}, {}, i64))), Vd{3});
  EXPECT_EQ(shape_of(ops::gather(ops::ones(V{2, 3}), 1, Tensor::empty(V{2, 0}, i64))), (V{2, 0}));
}

TEST(Gather, Errors) {
  Tensor x = ops::ones(V{5, 3});
  EXPECT_THAT(
      [&] {
        ops::gather(x, 0, tensor_of({0, 7}, {2, 1}, i64));
      },
      // torch's gather: a RuntimeError without the op's name
      ThrowsMessage<Error>(HasSubstr("index 7 is out of bounds for dimension 0 with size 5")));
  EXPECT_THAT(
      [&] {
        ops::gather(x, 0, tensor_of({0, 1}, {2, 1}, i32));
      },
      // torch's gather meta: a RuntimeError, checked only for an index with elements
      ThrowsMessage<Error>(HasSubstr("gather(): Expected dtype int64 for index")));
  EXPECT_EQ(Tensor(ops::gather(x, 0, tensor_of({}, {0, 1}, i32))).numel(), 0);
  EXPECT_THAT(
      [&] {
        ops::gather(x, 0, tensor_of({0, 1}, {2}, i64));
      },
      ThrowsMessage<Error>(
          HasSubstr("Index tensor must have the same number of dimensions as input tensor")));
  EXPECT_THAT(
      [&] {
        ops::gather(x, 0, tensor_of({0, 1, 0, 1}, {1, 4}, i64));
      },
      ThrowsMessage<Error>(HasSubstr("Size does not match at dimension 1")));
}

// ---- index_copy --------------------------------------------------------------------------------

TEST(IndexCopy, MatchesReferenceForEveryWidthDimAndLayout) {
  uint64_t seed = 300;
  for (ScalarType dt : all_widths()) {
    for (int64_t dim : {0, 1, -1}) {
      for (bool noncontig : {false, true}) {
        SCOPED_TRACE(fmt::format("{} dim={} noncontig={}", dtype_name(dt), dim, noncontig));
        const V shape = {4, 5, 6};
        const int64_t d = dim < 0 ? dim + 3 : dim;
        Tensor self = random_tensor(shape, dt, seed++, -5, 5, noncontig);
        // Distinct indices (a repeated index has no defined winner, as in torch).
        Vd perm = {3, 0, 2};
        Tensor index = tensor_of(perm, {3}, i64);
        V sshape = shape;
        sshape[d] = 3;
        Tensor source = random_tensor(sshape, dt, seed++, -5, 5, noncontig);
        Vd want = values(self);
        const Vd sv = values(source);
        for_each_index(sshape, [&](const V& idx, int64_t lin) {
          V dst = idx;
          dst[d] = static_cast<int64_t>(perm[idx[d]]);
          want[linear(dst, shape)] = sv[lin];
        });
        const Vd before = values(self);
        Tensor y = ops::index_copy(self, dim, index, source);
        EXPECT_EQ(values(y), want);
        EXPECT_EQ(values(self), before);  // out of place
        Tensor r = ops::index_copy_(self, dim, index, source);
        EXPECT_TRUE(r.is_same(self));
        EXPECT_EQ(values(self), want);
      }
    }
  }
}

TEST(IndexCopy, EmptyAndZeroDim) {
  Tensor self = random_tensor({3, 2}, f32, 310);
  EXPECT_EQ(values(ops::index_copy(self, 0, Tensor::empty(V{0}, i64), Tensor::empty(V{0, 2}))),
            values(self));
  Tensor s = tensor_of({1}, {}, f32);
  ops::index_copy_(s, 0, tensor_of({0}, {}, i64), tensor_of({9}, {}, f32));
  EXPECT_EQ(values(s), Vd{9});
}

TEST(IndexCopy, Errors) {
  Tensor self = ops::zeros(V{5, 2});
  EXPECT_THAT(
      [&] {
        ops::index_copy_(self, 0, tensor_of({7}, {1}, i64), ops::ones(V{1, 2}).tensor());
      },
      ThrowsMessage<IndexError>(
          HasSubstr("index_copy_(): index 7 is out of bounds for dimension 0 with size 5")));
  EXPECT_THAT(
      [&] {
        ops::index_copy(self, 0, tensor_of({1}, {1}, i32), ops::ones(V{1, 2}).tensor());
      },
      ThrowsMessage<IndexError>(
          HasSubstr("index_copy_(): Expected dtype int64 for index, but got int32")));
  EXPECT_THAT(
      [&] {
        ops::index_copy(self, 0, tensor_of({1}, {1}, i64), ops::ones(V{1, 2}, f64).tensor());
      },
      ThrowsMessage<Error>(HasSubstr(
          "index_copy_(): self and source expected to have the same dtype, but got (self) "
          "float32 and (source) float64")));
  EXPECT_THAT(
      [&] {
        ops::index_copy(self, 0, tensor_of({1, 2}, {2}, i64), ops::ones(V{1, 2}).tensor());
      },
      ThrowsMessage<IndexError>(
          HasSubstr("Number of indices (2) should be equal to source.size(dim) (1)")));
  EXPECT_THAT(
      [&] {
        ops::index_copy(self, 0, tensor_of({1}, {1}, i64), ops::ones(V{1, 3}).tensor());
      },
      ThrowsMessage<Error>(HasSubstr("must have the same shape except in dimension 0")));
  EXPECT_EQ(values(self), Vd(10, 0.0));  // nothing was written by the failed calls
}

// ---- tril, triu --------------------------------------------------------------------------------

TEST(Triangle, MatchesReferenceForEveryDiagonal) {
  uint64_t seed = 400;
  for (ScalarType dt : all_widths()) {
    for (V shape : {V{3, 5}, V{5, 3}, V{2, 4, 4}, V{2, 1, 3, 2}}) {
      for (int64_t k : {-7, -2, -1, 0, 1, 3, 9}) {
        for (bool noncontig : {false, true}) {
          SCOPED_TRACE(fmt::format("{} {} k={} noncontig={}", dtype_name(dt), shape_str(shape), k,
                                   noncontig));
          Tensor x = random_tensor(shape, dt, seed++, 1, 5, noncontig);  // nonzero values
          const Vd xv = values(x);
          Vd lower(xv.size()), upper(xv.size());
          for_each_index(shape, [&](const V& idx, int64_t lin) {
            const int64_t i = idx[idx.size() - 2], j = idx.back();
            lower[lin] = j - i <= k ? xv[lin] : 0;
            upper[lin] = j - i >= k ? xv[lin] : 0;
          });
          EXPECT_EQ(values(ops::tril(x, k)), lower);
          EXPECT_EQ(values(ops::triu(x, k)), upper);
          EXPECT_EQ(values(x), xv);
          Tensor y = x.clone();
          if (noncontig) y = random_tensor(shape, dt, seed - 1, 1, 5, true);
          EXPECT_TRUE(ops::tril_(y, k).tensor().is_same(y));
          EXPECT_EQ(values(y), lower);
          Tensor z = noncontig ? random_tensor(shape, dt, seed - 1, 1, 5, true) : x.clone();
          EXPECT_TRUE(ops::triu_(z, k).tensor().is_same(z));
          EXPECT_EQ(values(z), upper);
        }
      }
    }
  }
  EXPECT_EQ(shape_of(ops::tril(Tensor::empty(V{0, 3}))), (V{0, 3}));
  EXPECT_EQ(shape_of(ops::triu(Tensor::empty(V{2, 3, 0}))), (V{2, 3, 0}));
}

TEST(Triangle, DefaultsAndErrors) {
  Tensor x = ops::ones(V{2, 2});
  EXPECT_EQ(values(ops::tril(x)), (Vd{1, 0, 1, 1}));
  EXPECT_EQ(values(ops::triu(x)), (Vd{1, 1, 0, 1}));
  EXPECT_THAT(
      [] { ops::tril(ops::ones(V{3})); },
      ThrowsMessage<Error>(HasSubstr("tril: input tensor must have at least 2 dimensions")));
  EXPECT_THAT(
      [] { ops::triu_(ops::ones(V{3})); },
      ThrowsMessage<Error>(HasSubstr("triu: input tensor must have at least 2 dimensions")));
}

}  // namespace
}  // namespace ampjit
