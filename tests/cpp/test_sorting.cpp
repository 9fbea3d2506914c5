// The sorting and selection ops (runtime/ops/sorting.def, kernels/cpu/sort_ops.cpp) against
// references written here with plain loops and std::stable_sort: ties, NaNs (the largest value),
// stability, empty and 0-dim inputs, non-contiguous inputs, every dtype each op takes; the out=
// forms; and torch 1.13's messages for bad input, word for word. Where torch leaves the order of
// ties to its algorithm (sort without `stable`, topk, kthvalue, mode; Note [Torch's order of ties]
// in sort_ops.cpp) the references check what is specified: the values, and that each index points
// at its value; tests/python/test_sorting.py compares those orders with torch itself.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using namespace testing::dtypes;
using testing::error_of;
using testing::random_tensor;
using testing::values;
using V = std::vector<int64_t>;
using D = std::vector<double>;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<ScalarType> kAll = {kF64, kF32, kBF16, kF16, kI64, kI32, kI16, kI8, kU8, kBool};
// The dtypes of topk, kthvalue and median: no float16, no bool (torch 1.13's CPU kernels).
const std::vector<ScalarType> kNoHalfNoBool = {kF64, kF32, kBF16, kI64, kI32, kI16, kI8, kU8};

V shape_of(const Tensor& t) {
  return V(t.sizes().begin(), t.sizes().end());
}

Tensor from(const D& v, const V& shape, ScalarType dt = kF32) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, kF64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.view(shape).to(dt);
}

// Values with many ties (small integers) and, for floating types, NaNs and infinities.
Tensor tied(const V& shape, ScalarType dt, uint64_t seed, bool noncontig = false) {
  Tensor t = random_tensor(shape, is_floating(dt) ? kF64 : dt, seed, -3.0, 3.0, noncontig);
  if (!is_floating(dt)) return t;
  D v = values(t);
  for (size_t i = 0; i < v.size(); ++i) {
    v[i] = std::round(v[i]);
    if (i % 7 == 3) v[i] = kNaN;
    if (i % 11 == 5) v[i] = i % 2 ? kInf : -kInf;
  }
  Tensor c = from(v, shape, dt);
  if (!noncontig || shape.size() < 2) return c;
  V ps = shape;
  std::swap(ps[ps.size() - 1], ps[ps.size() - 2]);
  Tensor parent = Tensor::empty(ps, dt);
  Tensor view = parent.transpose(-1, -2);
  view.copy_(c);
  return view;
}

// The rows of `x` along `dim` (wrapped): rows[r][i] is element i of row r, rows in row-major order
// of the other dims; `flat[r][i]` is that element's position in a tensor of x's shape.
struct Rows {
  std::vector<D> vals;
  std::vector<V> pos;
};
Rows rows_along(const Tensor& x, int64_t dim) {
  const V shape = shape_of(x);
  Rows r;
  if (shape.empty()) {
    r.vals = {values(x)};
    r.pos = {{0}};
    return r;
  }
  const int64_t nd = static_cast<int64_t>(shape.size());
  dim = (dim + nd) % nd;
  const D v = values(x);
  std::map<V, size_t> row_of;
  testing::for_each_index(shape, [&](const V& idx, int64_t lin) {
    V key = idx;
    key[static_cast<size_t>(dim)] = 0;
    auto [it, fresh] = row_of.emplace(key, r.vals.size());
    if (fresh) {
      r.vals.emplace_back();
      r.pos.emplace_back();
    }
    r.vals[it->second].push_back(v[static_cast<size_t>(lin)]);
    r.pos[it->second].push_back(lin);
  });
  return r;
}

// NaN is the largest value (torch's sort order).
bool less_nan_last(double a, double b) {
  return (!std::isnan(a) && std::isnan(b)) || a < b;
}
bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

// The stable order of a row's positions, ascending or descending, NaN largest.
V stable_order(const D& row, bool descending) {
  V o(row.size());
  std::iota(o.begin(), o.end(), int64_t{0});
  std::stable_sort(o.begin(), o.end(), [&](int64_t i, int64_t j) {
    return descending ? less_nan_last(row[j], row[i]) : less_nan_last(row[i], row[j]);
  });
  return o;
}

OpResult sort(const Tensor& x, int64_t dim, bool descending, std::optional<bool> stable = {}) {
  if (!stable) return ops::sort(x, dim, descending);
  return call_op(
      "aten::sort.stable", {IValue(x)},
      {{"stable", IValue(*stable)}, {"dim", IValue(dim)}, {"descending", IValue(descending)}});
}

// ---- sort ---------------------------------------------------------------------------------------

TEST(Sort, StableSortIsTheStableOrderInEveryDtypeLayoutAndDim) {
  uint64_t seed = 1;
  for (ScalarType dt : kAll) {
    for (bool noncontig : {false, true}) {
      for (int64_t dim : {0, 1, -1, -2}) {
        for (bool desc : {false, true}) {
          const Tensor x = tied({5, 37}, dt, seed++, noncontig);
          const OpResult r = sort(x, dim, desc, true);
          const Rows in = rows_along(x, dim), vs = rows_along(r.tensor(0), dim),
                     is = rows_along(r.tensor(1), dim);
          EXPECT_EQ(r.tensor(0).dtype(), dt);
          EXPECT_EQ(r.tensor(1).dtype(), kI64);
          for (size_t row = 0; row < in.vals.size(); ++row) {
            const V want = stable_order(in.vals[row], desc);
            for (size_t i = 0; i < want.size(); ++i) {
              ASSERT_EQ(is.vals[row][i], static_cast<double>(want[i]))
                  << dtype_name(dt) << " dim " << dim << " desc " << desc << " row " << row;
              ASSERT_TRUE(same(vs.vals[row][i], in.vals[row][static_cast<size_t>(want[i])]));
            }
          }
        }
      }
    }
  }
}

TEST(Sort, UnstableSortOrdersValuesAndItsIndicesPointAtThem) {
  uint64_t seed = 100;
  for (ScalarType dt : kAll) {
    for (bool desc : {false, true}) {
      const Tensor x = tied({3, 200}, dt, seed++, true);
      const OpResult r = sort(x, -1, desc);
      const Rows in = rows_along(x, -1), vs = rows_along(r.tensor(0), -1),
                 is = rows_along(r.tensor(1), -1);
      for (size_t row = 0; row < in.vals.size(); ++row) {
        const V want = stable_order(in.vals[row], desc);
        V seen;
        for (size_t i = 0; i < want.size(); ++i) {
          ASSERT_TRUE(same(vs.vals[row][i], in.vals[row][static_cast<size_t>(want[i])]))
              << dtype_name(dt);
          const auto at = static_cast<size_t>(is.vals[row][i]);
          ASSERT_TRUE(same(in.vals[row][at], vs.vals[row][i]));
          seen.push_back(static_cast<int64_t>(at));
        }
        std::sort(seen.begin(), seen.end());
        for (size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], static_cast<int64_t>(i));
      }
    }
  }
}

TEST(Sort, ZeroDimAndEmptyInputs) {
  const OpResult s = sort(from({2.5}, {}), 0, false);
  EXPECT_EQ(shape_of(s.tensor(0)), V{});
  EXPECT_EQ(values(s.tensor(0)), D{2.5});
  EXPECT_EQ(values(s.tensor(1)), D{0});
  const OpResult e = sort(Tensor::empty(V{0, 3}, kF32), 0, true);
  EXPECT_EQ(shape_of(e.tensor(0)), (V{0, 3}));
  EXPECT_EQ(shape_of(e.tensor(1)), (V{0, 3}));
  const OpResult e1 = sort(Tensor::empty(V{4, 0}, kI8), 0, false);
  EXPECT_EQ(shape_of(e1.tensor(1)), (V{4, 0}));
}

TEST(Sort, ArgsortAndMsortAreSortsIndicesAndValues) {
  const Tensor x = tied({6, 5}, kF32, 7);
  const OpResult s = sort(x, 0, true, true);
  const Tensor a = call_op(
      "aten::argsort.stable", {IValue(x)},
      {{"stable", IValue(true)}, {"dim", IValue(int64_t{0})}, {"descending", IValue(true)}});
  EXPECT_EQ(values(a), values(s.tensor(1)));
  const Tensor m = call_op("aten::msort", {IValue(x)});
  const D want = values(sort(x, 0, false).tensor(0));
  const D got = values(m);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(same(got[i], want[i]));
}

TEST(Sort, OutFormsWriteBothTensors) {
  const Tensor x = tied({4, 9}, kF64, 8);
  Tensor v = Tensor::empty(V{0}, kF64), i = Tensor::empty(V{0}, kI64);
  const OpResult r =
      call_op("aten::sort.values_stable", {IValue(x)},
              {{"stable", IValue(true)}, {"values", IValue(v)}, {"indices", IValue(i)}});
  EXPECT_TRUE(r.tensor(0).is_same(v));
  EXPECT_TRUE(r.tensor(1).is_same(i));
  const OpResult want = sort(x, -1, false, true);
  EXPECT_EQ(values(i), values(want.tensor(1)));
  EXPECT_EQ(shape_of(v), (V{4, 9}));
}

// ---- topk, kthvalue -----------------------------------------------------------------------------

TEST(Topk, TheKLargestOrSmallestInOrderWithIndicesPointingAtThem) {
  uint64_t seed = 200;
  for (ScalarType dt : kNoHalfNoBool) {
    for (int64_t k : {0, 1, 3, 40}) {  // 3 * 64 <= 300: partial sort; 40: nth_element
      for (bool largest : {true, false}) {
        const Tensor x = tied({2, 300}, dt, seed++, true);
        const OpResult r = ops::topk(x, k, 1, largest, true);
        EXPECT_EQ(shape_of(r.tensor(0)), (V{2, k}));
        const Rows in = rows_along(x, 1), vs = rows_along(r.tensor(0), 1),
                   is = rows_along(r.tensor(1), 1);
        for (size_t row = 0; row < 2 && k > 0; ++row) {
          const V want = stable_order(in.vals[row], largest);
          for (size_t j = 0; j < static_cast<size_t>(k); ++j) {
            ASSERT_TRUE(same(vs.vals[row][j], in.vals[row][static_cast<size_t>(want[j])]))
                << dtype_name(dt) << " k " << k << " largest " << largest;
            ASSERT_TRUE(same(in.vals[row][static_cast<size_t>(is.vals[row][j])], vs.vals[row][j]));
          }
        }
      }
    }
  }
}

TEST(Topk, ZeroDimAndErrors) {
  const OpResult r = ops::topk(from({4}, {}), int64_t{0});
  EXPECT_EQ(values(r.tensor(0)), D{4});  // torch copies a 0-dim input whatever k
  EXPECT_EQ(error_of([] {
              ops::topk(from({1, 2, 3}, {3}), int64_t{4});
            }),
            "selected index k out of range");
  EXPECT_EQ(error_of([] {
              ops::topk(from({1, 2, 3}, {3}), int64_t{-1});
            }),
            "selected index k out of range");
  EXPECT_EQ(error_of([] {
              ops::topk(from({1, 2, 3}, {3}, kF16), int64_t{1});
            }),
            "\"topk_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([] {
              ops::topk(from({1, 0}, {2}, kBool), int64_t{1});
            }),
            "\"topk_cpu\" not implemented for 'Bool'");
  EXPECT_EQ(error_of([] {
              ops::topk(from({1, 2, 3, 4}, {2, 2}), int64_t{1}, int64_t{3});
            }),
            "Dimension out of range (expected to be in range of [-2, 1], but got 3)");
}

TEST(Kthvalue, TheKthSmallestAlongADim) {
  uint64_t seed = 300;
  for (ScalarType dt : kNoHalfNoBool) {
    for (bool keepdim : {false, true}) {
      const Tensor x = tied({7, 5}, dt, seed++, true);
      for (int64_t k : {1, 4, 7}) {
        const OpResult r = ops::kthvalue(x, k, 0, keepdim);
        EXPECT_EQ(shape_of(r.tensor(0)), keepdim ? (V{1, 5}) : (V{5}));
        const Rows in = rows_along(x, 0);
        const D v = values(r.tensor(0)), ix = values(r.tensor(1));
        for (size_t c = 0; c < 5; ++c) {
          const V order = stable_order(in.vals[c], false);
          const double want = in.vals[c][static_cast<size_t>(order[static_cast<size_t>(k - 1)])];
          ASSERT_TRUE(same(v[c], want)) << dtype_name(dt) << " k " << k;
          ASSERT_TRUE(same(in.vals[c][static_cast<size_t>(ix[c])], want));
        }
      }
    }
  }
}

TEST(Kthvalue, ErrorsAndTheOutFormsOverlapCheck) {
  const Tensor x = from({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(error_of([&] { ops::kthvalue(x, int64_t{3}, int64_t{0}); }),
            "kthvalue(): selected number k out of range for dimension 0");
  EXPECT_EQ(error_of([&] { ops::kthvalue(x, int64_t{0}); }),
            "kthvalue(): selected number k out of range for dimension 1");
  EXPECT_EQ(error_of([] {
              ops::kthvalue(Tensor::empty(V{0, 3}), int64_t{1}, int64_t{0});
            }),
            "kthvalue(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of([] { ops::kthvalue(from({1}, {1}, kF16), int64_t{1}); }),
            "\"kthvalue_cpu\" not implemented for 'Half'");
  const OpResult s = ops::kthvalue(from({3}, {}), int64_t{1});
  EXPECT_EQ(values(s.tensor(0)), D{3});
  Tensor t = from({5, 1, 4, 2, 3}, {5});
  Tensor idx = Tensor::empty(V{}, kI64);
  EXPECT_EQ(error_of([&] {
              call_op("aten::kthvalue.values", {IValue(t), IValue(int64_t{2})},
                      {{"values", IValue(t)}, {"indices", IValue(idx)}});
            }),
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing the "
            "operation.");
  Tensor v = Tensor::empty(V{}, kF32);
  call_op("aten::kthvalue.values", {IValue(t), IValue(int64_t{2})},
          {{"values", IValue(v)}, {"indices", IValue(idx)}});
  EXPECT_EQ(values(v), D{2});
  EXPECT_EQ(values(idx), D{3});
}

// ---- median, nanmedian, mode --------------------------------------------------------------------

TEST(Median, TheLowerMedianOfAllWithNaNs) {
  for (ScalarType dt : kNoHalfNoBool) {
    const Tensor x = from({5, 1, 4, 2, 3, 6}, {2, 3}, dt);
    EXPECT_EQ(values(ops::median(x)), D{3}) << dtype_name(dt);
    EXPECT_EQ(values(ops::nanmedian(x)), D{3});
  }
  const Tensor n = from({5, kNaN, 4, 2}, {4});
  EXPECT_TRUE(std::isnan(values(ops::median(n))[0]));
  EXPECT_EQ(values(ops::nanmedian(n)), D{4});
  EXPECT_TRUE(std::isnan(values(ops::nanmedian(from({kNaN, kNaN}, {2})))[0]));
  EXPECT_TRUE(std::isnan(values(ops::median(Tensor::empty(V{0})))[0]));
  EXPECT_EQ(values(ops::median(Tensor::empty(V{0}, kI64)))[0],
            static_cast<double>(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ(error_of([] { ops::median(from({1}, {1}, kF16)); }),
            "\"median_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([] { ops::nanmedian(from({1}, {1}, kBool)); }),
            "\"median_cpu\" not implemented for 'Bool'");
}

TEST(Median, AlongADimTheIndexIsTheMediansInValueThenIndexOrder) {
  uint64_t seed = 400;
  for (ScalarType dt : kNoHalfNoBool) {
    for (bool nan : {false, true}) {
      const Tensor x = tied({4, 9}, dt, seed++, true);
      const OpResult r = nan ? ops::nanmedian_dim(x, int64_t{1}) : ops::median_dim(x, int64_t{1});
      const Rows in = rows_along(x, 1);
      const D v = values(r.tensor(0)), ix = values(r.tensor(1));
      for (size_t row = 0; row < 4; ++row) {
        const D& vals = in.vals[row];
        const auto first_nan =
            std::find_if(vals.begin(), vals.end(), [](double e) { return std::isnan(e); });
        if (!nan && first_nan != vals.end()) {
          EXPECT_TRUE(std::isnan(v[row]));
          EXPECT_EQ(ix[row], static_cast<double>(first_nan - vals.begin()));
          continue;
        }
        V order = stable_order(vals, false);  // value, then index: the stable order
        const int64_t nans =
            std::count_if(vals.begin(), vals.end(), [](double e) { return std::isnan(e); });
        const int64_t n = static_cast<int64_t>(vals.size()) - (nan ? nans : 0);
        if (n == 0) continue;
        const int64_t want = order[static_cast<size_t>((n - 1) / 2)];
        EXPECT_EQ(ix[row], static_cast<double>(want)) << dtype_name(dt) << " row " << row;
        EXPECT_TRUE(same(v[row], vals[static_cast<size_t>(want)]));
      }
    }
  }
  EXPECT_EQ(error_of([] {
              ops::median_dim(Tensor::empty(V{0, 3}), int64_t{0});
            }),
            "median(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of([] {
              ops::nanmedian_dim(Tensor::empty(V{0, 3}), int64_t{0});
            }),
            "median(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(error_of([] { ops::median_dim(from({1}, {1}, kF16), int64_t{0}); }),
            "\"median_out\" not implemented for 'Half'");
  const OpResult s = ops::median_dim(from({7}, {}), int64_t{0});
  EXPECT_EQ(values(s.tensor(0)), D{7});
  EXPECT_EQ(values(s.tensor(1)), D{0});
}

TEST(Mode, TheMostFrequentValueSmallestFirstAndAnIndexOfIt) {
  uint64_t seed = 500;
  for (ScalarType dt : kAll) {
    const Tensor x = random_tensor({6, 25}, dt, seed++, -3.0, 3.0, true);
    const OpResult r = ops::mode(x, int64_t{1}, true);
    EXPECT_EQ(shape_of(r.tensor(0)), (V{6, 1}));
    const Rows in = rows_along(x, 1);
    const D v = values(r.tensor(0)), ix = values(r.tensor(1));
    for (size_t row = 0; row < 6; ++row) {
      std::map<double, int> freq;
      for (double e : in.vals[row]) ++freq[e];
      double want = 0;
      int best = 0;
      for (auto [val, f] : freq)
        if (f > best) best = f, want = val;
      EXPECT_EQ(v[row], want) << dtype_name(dt);
      EXPECT_EQ(in.vals[row][static_cast<size_t>(ix[row])], want);
    }
  }
  EXPECT_EQ(error_of([] {
              ops::mode(Tensor::empty(V{0, 3}), int64_t{0});
            }),
            "mode(): Expected reduction dim 0 to have non-zero size.");
  EXPECT_EQ(values(ops::mode(from({3}, {})).tensor(0)), D{3});
}

// ---- unique -------------------------------------------------------------------------------------

TEST(Unique, SortedValuesInverseAndCounts) {
  uint64_t seed = 600;
  for (ScalarType dt : {kF64, kF32, kBF16, kI64, kI32, kI16, kI8, kU8, kBool}) {
    const Tensor x = random_tensor({4, 6}, dt, seed++, 0.0, 5.0, true);  // no -0.0
    const OpResult r = ops::_unique2(x, true, true, true);
    const D in = values(x);
    std::map<double, int64_t> counts;
    for (double e : in) ++counts[e];
    D want_vals, want_counts;
    for (auto [v, c] : counts)
      want_vals.push_back(v), want_counts.push_back(static_cast<double>(c));
    EXPECT_EQ(values(r.tensor(0)), want_vals) << dtype_name(dt);
    EXPECT_EQ(values(r.tensor(2)), want_counts);
    EXPECT_EQ(shape_of(r.tensor(1)), (V{4, 6}));
    const D inv = values(r.tensor(1));
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(want_vals[static_cast<size_t>(inv[i])], in[i]);
    // Unsorted: the same set of values, the inverse still pointing at them.
    const OpResult u = ops::_unique2(x, false, true);
    D got = values(u.tensor(0));
    const D uinv = values(u.tensor(1));
    for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(got[static_cast<size_t>(uinv[i])], in[i]);
    std::sort(got.begin(), got.end());
    EXPECT_EQ(got, want_vals);
  }
  const OpResult z = ops::_unique2(from({2}, {}), true, true, true);
  EXPECT_EQ(shape_of(z.tensor(0)), V{1});
  EXPECT_EQ(shape_of(z.tensor(1)), V{});
  EXPECT_EQ(error_of([] { ops::_unique2(from({1}, {1}, kF16)); }),
            "\"unique\" not implemented for 'Half'");
}

TEST(Unique, AlongADimAndConsecutive) {
  const Tensor x = from({1, 2, 0, 1, 2, 0, 0, 5, 1}, {3, 3}, kI64);  // rows 0 and 1 are equal
  const OpResult r = ops::unique_dim(x, int64_t{0});
  EXPECT_EQ(values(r.tensor(0)), (D{0, 5, 1, 1, 2, 0}));
  EXPECT_EQ(values(r.tensor(1)), (D{1, 1, 0}));
  EXPECT_EQ(values(r.tensor(2)), (D{1, 2}));
  const OpResult c = ops::unique_dim(x, int64_t{1});
  EXPECT_EQ(values(c.tensor(0)), (D{0, 1, 2, 0, 1, 2, 1, 0, 5}));
  EXPECT_EQ(values(c.tensor(1)), (D{1, 2, 0}));
  const Tensor y = from({1, 1, 2, 2, 2, 1, kNaN, kNaN}, {8});
  const OpResult q = ops::unique_consecutive(y, true, true);
  const D qv = values(q.tensor(0));
  EXPECT_EQ(qv.size(), 5u);  // NaN equals nothing, not even NaN
  EXPECT_EQ(values(q.tensor(1)), (D{0, 0, 1, 1, 1, 2, 3, 4}));
  EXPECT_EQ(values(q.tensor(2)), (D{2, 3, 1, 1, 1}));
  const OpResult q0 = ops::unique_consecutive(y);
  EXPECT_EQ(shape_of(q0.tensor(1)), V{0});
  EXPECT_EQ(shape_of(q0.tensor(2)), V{0});
  const OpResult qd = ops::unique_consecutive(x, false, true, int64_t{0});
  EXPECT_EQ(values(qd.tensor(2)), (D{2, 1}));
  EXPECT_EQ(error_of([] { ops::unique_dim(from({1}, {}), int64_t{0}); }),
            "Dimension specified as 0 but tensor has no dimensions");
  EXPECT_EQ(error_of([] {
              ops::unique_dim(Tensor::empty(V{0, 3}), int64_t{1});
            }),
            "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied");
  EXPECT_EQ(error_of([] {
              ops::unique_dim(from({1, 2}, {2}, kF16), int64_t{0});
            }),
            "\"unique_dim\" not implemented for 'Half'");
  const OpResult e = ops::unique_dim(Tensor::empty(V{0, 3}), int64_t{0});
  EXPECT_EQ(shape_of(e.tensor(0)), (V{0, 3}));
}

// ---- searchsorted, bucketize --------------------------------------------------------------------

// The bound of v in a sorted row by counting: left counts b < v, right counts b <= v.
int64_t count_bound(const D& row, double v, bool right) {
  int64_t n = 0;
  for (double b : row) n += right ? !(b > v) : !(b >= v);
  return n;
}

TEST(Searchsorted, BoundsIn1dAndNdBoundariesEveryDtype) {
  for (ScalarType dt : {kF64, kF32, kBF16, kF16, kI64, kI32, kI16, kI8, kU8}) {
    const D bd = {0, 1, 1, 2, 4, 4, 5};  // representable in every dtype (uint8 included)
    const Tensor b = from(bd, {7}, dt);
    const Tensor x = random_tensor({3, 5}, dt, 700, 0.0, 6.0, true);
    for (bool right : {false, true}) {
      const Tensor r = ops::searchsorted_Tensor(b, x, false, right);
      EXPECT_EQ(r.dtype(), kI64);
      const D xv = values(x), rv = values(r);
      for (size_t i = 0; i < xv.size(); ++i)
        ASSERT_EQ(rv[i], count_bound(bd, xv[i], right)) << dtype_name(dt);
      const Tensor bk = ops::bucketize_Tensor(x, b, true, right);
      EXPECT_EQ(bk.dtype(), kI32);
      EXPECT_EQ(values(bk), rv);
    }
  }
  // N-d boundaries: row i of the input searches row i of the boundaries; a sorter orders them.
  const Tensor b2 = from({0, 1, 2, 3, 4, 5}, {2, 3});
  const Tensor x2 = from({1.5, 0, 4, 6}, {2, 2});
  EXPECT_EQ(values(ops::searchsorted_Tensor(b2, x2)), (D{2, 0, 1, 3}));
  const Tensor unsorted = from({2, 0, 1}, {3});
  const Tensor sorter = from({1, 2, 0}, {3}, kI64);
  EXPECT_EQ(values(call_op("aten::searchsorted.Tensor",
                           {IValue(unsorted), IValue(from({1.5, -1, 9}, {3}))},
                           {{"side", IValue("right")}, {"sorter", IValue(sorter)}})),
            (D{2, 0, 3}));
  // A Python number, and mixed dtypes compared in their result type.
  EXPECT_EQ(values(ops::searchsorted_Scalar(from({0, 1, 2}, {3}, kI64), Scalar(1.5))), D{2});
  EXPECT_EQ(values(ops::bucketize_Scalar(Scalar(int64_t{2}), from({1, 3}, {2}))), D{1});
  EXPECT_EQ(values(ops::searchsorted_Tensor(from({0, 0.5, 1}, {3}), from({1, 0}, {2}, kBool))),
            (D{2, 0}));
  EXPECT_EQ(shape_of(ops::searchsorted_Tensor(from({1}, {1}), Tensor::empty(V{0}, kBool))), V{0});
}

TEST(Searchsorted, TorchsMessages) {
  const Tensor b = from({1, 3, 5, 7}, {4});
  const Tensor v = from({2}, {1});
  auto ss = [](const Tensor& bd, const Tensor& x, std::vector<Kwarg> kw = {}) {
    call_op("aten::searchsorted.Tensor", {IValue(bd), IValue(x)}, std::move(kw));
  };
  EXPECT_EQ(error_of([&] {
              ss(b, v, {{"side", IValue("middle")}});
            }),
            "torch.searchsorted(): side can only be 'left' or 'right' but got middle");
  EXPECT_EQ(error_of([&] {
              ss(b, v, {{"side", IValue("left")}, {"right", IValue(true)}});
            }),
            "torch.searchsorted(): side and right can't be set to opposites, got side of left "
            "while right was True");
  EXPECT_EQ(error_of([&] {
              ss(b, v, {{"sorter", IValue(from({0, 1, 2, 3}, {4}, kI32))}});
            }),
            "torch.searchsorted(): sorter must be a tensor of long dtype but got dtype Int");
  EXPECT_EQ(error_of([&] {
              ss(b, v, {{"sorter", IValue(from({0, 1, 2}, {3}, kI64))}});
            }),
            "torch.searchsorted(): boundary and sorter must have the same size, but got "
            "boundary tensor [4]and got sorter tensor [3]");
  EXPECT_EQ(error_of([&] { ss(from({1}, {}), v); }),
            "torch.searchsorted(): boundaries tensor should have positive dimension, but got 0 "
            "dimension");
  EXPECT_EQ(error_of([&] {
              ss(b.view(V{2, 2}), from({4}, {}));
            }),
            "torch.searchsorted(): input value can be a scalar only when boundaries tensor "
            "dimension is 1, but we got boundaries tensor dim(2) and input value's dim(0) "
            "numel(1)");
  EXPECT_EQ(error_of([&] {
              ss(b.view(V{2, 2}), from({1, 2, 3}, {3}));
            }),
            "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            "dimensions of boundaries tensor and input value tensor must match, but we got "
            "boundaries tensor [2, 2] and input value tensor [3]");
  EXPECT_EQ(error_of([&] {
              ss(from({1, 0}, {2}, kBool), from({1}, {1}, kBool));
            }),
            "\"searchsorted_out_cpu\" not implemented for 'Bool'");
  EXPECT_EQ(error_of([&] {
              ops::bucketize_Tensor(v, b.view(V{2, 2}));
            }),
            "boundaries tensor must be 1 dimension, but got dim(2)");
  EXPECT_EQ(error_of([&] {
              ss(b, v, {{"sorter", IValue(from({0, 1, 2, 9}, {4}, kI64))}});
            }),
            "torch.searchsorted(): sorter index out of range");
  // out= takes no cast: int32 exactly with out_int32, else int64.
  const std::string wrong_out =
      "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
      "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype ";
  EXPECT_EQ(error_of([&] {
              call_op("aten::searchsorted.Tensor_out", {IValue(b), IValue(v)},
                      {{"out", IValue(Tensor::empty(V{1}, kI32))}});
            }),
            wrong_out + "Int and out_int32 flag is False");
  EXPECT_EQ(error_of([&] {
              call_op("aten::bucketize.Tensor_out", {IValue(v), IValue(b)},
                      {{"out_int32", IValue(true)}, {"out", IValue(Tensor::empty(V{1}, kI64))}});
            }),
            wrong_out + "Long and out_int32 flag is True");
  Tensor out = Tensor::empty(V{0}, kI32);
  call_op("aten::bucketize.Tensor_out", {IValue(from({4, 0}, {2})), IValue(b)},
          {{"out_int32", IValue(true)}, {"right", IValue(true)}, {"out", IValue(out)}});
  EXPECT_EQ(values(out), (D{2, 0}));
}

// ---- cummax, cummin, logcumsumexp ---------------------------------------------------------------

TEST(Cummax, RunningExtremesTiesTakeTheLaterIndexNaNStays) {
  uint64_t seed = 800;
  for (ScalarType dt : {kF64, kF32, kBF16, kI64, kI32, kI16, kI8, kU8, kBool}) {
    for (bool is_max : {true, false}) {
      const Tensor x = tied({4, 13}, dt, seed++, true);
      const OpResult r = is_max ? ops::cummax(x, int64_t{1}) : ops::cummin(x, int64_t{1});
      const Rows in = rows_along(x, 1), vs = rows_along(r.tensor(0), 1),
                 is = rows_along(r.tensor(1), 1);
      for (size_t row = 0; row < 4; ++row) {
        double best = in.vals[row][0];
        int64_t at = 0;
        for (size_t i = 0; i < in.vals[row].size(); ++i) {
          const double e = in.vals[row][i];
          if (std::isnan(e) || (!std::isnan(best) && (is_max ? e >= best : e <= best))) {
            best = e;
            at = static_cast<int64_t>(i);
          }
          ASSERT_TRUE(same(vs.vals[row][i], best)) << dtype_name(dt);
          ASSERT_EQ(is.vals[row][i], static_cast<double>(at)) << dtype_name(dt) << " " << i;
        }
      }
    }
  }
  // A 0-dim or empty input takes any dim, as torch's does.
  EXPECT_EQ(values(ops::cummax(from({3}, {}), int64_t{5}).tensor(0)), D{3});
  EXPECT_EQ(shape_of(ops::cummin(Tensor::empty(V{0, 2}), int64_t{5}).tensor(1)), (V{0, 2}));
  EXPECT_EQ(error_of([] {
              ops::cummax(from({1, 2}, {2}, kF16), int64_t{0});
            }),
            "\"cummax_cpu\" not implemented for 'Half'");
  EXPECT_EQ(error_of([] {
              ops::cummin(from({1, 2}, {2}), int64_t{1});
            }),
            "Dimension out of range (expected to be in range of [-1, 0], but got 1)");
}

TEST(Logcumsumexp, LogOfRunningSumsOfExp) {
  for (ScalarType dt : {kF64, kF32, kBF16}) {
    const Tensor x = random_tensor({3, 50}, dt, 900, -20.0, 20.0, true);
    const Tensor y = ops::logcumsumexp(x, int64_t{1});
    const Rows in = rows_along(x, 1), out = rows_along(y, 1);
    const testing::Tol tol = testing::tol_for(dt);
    for (size_t row = 0; row < 3; ++row) {
      long double s = 0;
      for (size_t i = 0; i < in.vals[row].size(); ++i) {
        s += std::exp(static_cast<long double>(in.vals[row][i]));
        const double want = testing::round_to(static_cast<double>(std::log(s)), dt);
        ASSERT_NEAR(out.vals[row][i], want, tol.atol + 2 * tol.rtol * std::fabs(want));
      }
    }
  }
  const D special = values(ops::logcumsumexp(from({-kInf, -kInf, kInf, 1, kNaN, 2}, {6}), 0));
  EXPECT_EQ(special[0], -kInf);
  EXPECT_EQ(special[1], -kInf);
  EXPECT_EQ(special[2], kInf);
  EXPECT_EQ(special[3], kInf);
  EXPECT_TRUE(std::isnan(special[4]) && std::isnan(special[5]));
  EXPECT_EQ(values(ops::logcumsumexp(from({3}, {}), int64_t{0})), D{3});
  EXPECT_EQ(error_of([] { ops::logcumsumexp(from({1}, {1}, kI64), int64_t{0}); }),
            "\"logcumsumexp_out_cpu\" not implemented for 'Long'");
  EXPECT_EQ(error_of([] { ops::logcumsumexp(from({1}, {1}, kF16), int64_t{0}); }),
            "\"logcumsumexp_out_cpu\" not implemented for 'Half'");
}

TEST(Sorting, StableAsNoneIsTorchsInternalAssert) {
  EXPECT_EQ(error_of([] {
              call_op("aten::sort.stable", {IValue(from({1}, {1}))}, {{"stable", IValue()}});
            }),
            "sort(): c10::optional<bool> for stable has to have value.");
}

}  // namespace
}  // namespace ampjit
