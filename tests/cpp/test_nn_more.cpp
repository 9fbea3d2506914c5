// The CTC loss kernels (kernels/cpu/ctc_loss_ops.cpp) against an independent reference: the
// probability of a target summed over every alignment of the input's length, enumerated one by
// one (C^T paths for small T), collapsed (repeats merged, then blanks dropped) and compared with
// the target. The gradient reference is a central difference of that brute-force loss with respect
// to the logits the log-probabilities are the log-softmax of: torch's _ctc_loss_backward is that
// gradient (the softmax minus the label posteriors), which is what autograd composes with
// log_softmax's backward.
#include <gmock/gmock.h>

#include <cmath>
#include <limits>

#include "runtime/ops.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using V = std::vector<int64_t>;

// log_softmax over the last dim of (T, N, C) logits, in double.
std::vector<double> log_softmax(const std::vector<double>& x, int64_t rows, int64_t C) {
  std::vector<double> out(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t c = 0; c < C; ++c) m = std::max(m, x[r * C + c]);
    for (int64_t c = 0; c < C; ++c) s += std::exp(x[r * C + c] - m);
    for (int64_t c = 0; c < C; ++c) out[r * C + c] = x[r * C + c] - m - std::log(s);
  }
  return out;
}

// -log of the summed probability of the alignments of batch element b that collapse to `target`.
double brute_force_nll(const std::vector<double>& lp, int64_t N, int64_t C, int64_t b,
                       int64_t input_length, const V& target, int64_t blank) {
  double total = 0;
  V path(input_length, 0);
  for (;;) {
    V collapsed;
    for (int64_t t = 0; t < input_length; ++t) {
      if (path[t] == blank) continue;
      if (t > 0 && path[t] == path[t - 1]) continue;
      collapsed.push_back(path[t]);
    }
    if (collapsed == target) {
      double p = 1;
      for (int64_t t = 0; t < input_length; ++t) p *= std::exp(lp[(t * N + b) * C + path[t]]);
      total += p;
    }
    int64_t t = 0;
    while (t < input_length && ++path[t] == C) path[t++] = 0;
    if (t == input_length) break;
  }
  return -std::log(total);
}

Tensor from_doubles(const std::vector<double>& v, const V& shape, ScalarType dt) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, ScalarType::Float64);
  std::copy(v.begin(), v.end(), t.data<double>());
  return t.view(shape).to(dt);
}

Tensor from_ints(const V& v, const V& shape) {
  Tensor t = Tensor::empty(V{static_cast<int64_t>(v.size())}, ScalarType::Int64);
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t.view(shape);
}

struct Problem {
  int64_t T = 5, N = 3, C = 3, blank = 0;
  V targets_padded = {1, 2, 0, 2, 2, 1, 1, 0, 0};  // (N, 3), rows padded past their length
  V targets_concat = {1, 2, 2, 2, 1, 1};
  V input_lengths = {5, 4, 3};
  V target_lengths = {2, 3, 1};
  std::vector<double> logits;

  Problem() {
    const Tensor x = testing::random_tensor(V{T, N, C}, ScalarType::Float64, 17);
    logits = testing::values(x);
  }
  V target(int64_t b) const {
    return V(targets_padded.begin() + b * 3, targets_padded.begin() + b * 3 + target_lengths[b]);
  }
};

TEST(CtcLoss, MatchesTheSumOverAllAlignments) {
  const Problem p;
  const std::vector<double> lp = log_softmax(p.logits, p.T * p.N, p.C);
  for (ScalarType dt : {ScalarType::Float64, ScalarType::Float32}) {
    for (bool concat : {false, true}) {
      SCOPED_TRACE(::testing::Message() << dtype_name(dt) << " concatenated=" << concat);
      const Tensor targets =
          concat ? from_ints(p.targets_concat, V{6}) : from_ints(p.targets_padded, V{p.N, 3});
      auto r = ops::_ctc_loss(from_doubles(lp, V{p.T, p.N, p.C}, dt), targets, p.input_lengths,
                              p.target_lengths, p.blank, false);
      std::vector<double> want;
      for (int64_t b = 0; b < p.N; ++b)
        want.push_back(brute_force_nll(lp, p.N, p.C, b, p.input_lengths[b], p.target(b), p.blank));
      EXPECT_TRUE(testing::close(r.tensor(0), want, V{p.N}, testing::tol_for(dt)));
      // log_alpha: (N, T, 2 S + 1), -inf where no prefix reaches
      EXPECT_EQ(r.tensor(1).shape_str(), "[3, 5, 7]");
    }
  }
}

TEST(CtcLoss, GradientIsTheLogitsGradientOfTheBruteForceLoss) {
  const Problem p;
  const std::vector<double> lp = log_softmax(p.logits, p.T * p.N, p.C);
  const Tensor lpt = from_doubles(lp, V{p.T, p.N, p.C}, ScalarType::Float64);
  const Tensor targets = from_ints(p.targets_padded, V{p.N, 3});
  auto r = ops::_ctc_loss(lpt, targets, p.input_lengths, p.target_lengths, p.blank, false);
  const std::vector<double> go = {1.0, -0.5, 2.0};
  const Tensor grad = ops::_ctc_loss_backward(from_doubles(go, V{p.N}, ScalarType::Float64), lpt,
                                              targets, p.input_lengths, p.target_lengths,
                                              r.tensor(0), r.tensor(1), p.blank, false);
  std::vector<double> want(p.logits.size());
  const double h = 1e-6;
  for (size_t i = 0; i < p.logits.size(); ++i) {
    const int64_t b = static_cast<int64_t>(i / p.C) % p.N;
    std::vector<double> up = p.logits, down = p.logits;
    up[i] += h;
    down[i] -= h;
    const double f_up = brute_force_nll(log_softmax(up, p.T * p.N, p.C), p.N, p.C, b,
                                        p.input_lengths[b], p.target(b), p.blank);
    const double f_down = brute_force_nll(log_softmax(down, p.T * p.N, p.C), p.N, p.C, b,
                                          p.input_lengths[b], p.target(b), p.blank);
    want[i] = go[b] * (f_up - f_down) / (2 * h);
  }
  EXPECT_TRUE(testing::close(grad, want, V{p.T, p.N, p.C}, {1e-6, 1e-8}));
}

TEST(CtcLoss, EmptyTargetsAndEmptyInputs) {
  // An empty target is the all-blank path; an empty input explains only an empty target.
  const std::vector<double> lp = log_softmax(
      testing::values(testing::random_tensor(V{3, 2, 4}, ScalarType::Float64, 3)), 6, 4);
  auto r = ops::_ctc_loss(from_doubles(lp, V{3, 2, 4}, ScalarType::Float64), from_ints(V{2}, V{1}),
                          V{3, 0}, V{0, 1}, int64_t{0}, false);
  const double blank_path = -(lp[0] + lp[8] + lp[16]);
  EXPECT_TRUE(testing::close(r.tensor(0), {blank_path, std::numeric_limits<double>::infinity()},
                             V{2}, {1e-12, 1e-12}));
}

TEST(CtcLoss, ZeroInfinityZeroesTheGradientOfInfeasibleTargets) {
  // Three labels with a repeat need four steps; two cannot explain them.
  const std::vector<double> lp = log_softmax(
      testing::values(testing::random_tensor(V{2, 1, 3}, ScalarType::Float64, 5)), 2, 3);
  const Tensor lpt = from_doubles(lp, V{2, 1, 3}, ScalarType::Float64);
  const Tensor targets = from_ints(V{1, 1, 2}, V{1, 3});
  auto r = ops::_ctc_loss(lpt, targets, V{2}, V{3}, int64_t{0}, true);
  EXPECT_TRUE(std::isinf(r.tensor(0).item<double>()));
  const Tensor g =
      ops::_ctc_loss_backward(from_doubles({1.0}, V{1}, ScalarType::Float64), lpt, targets, V{2},
                              V{3}, r.tensor(0), r.tensor(1), int64_t{0}, true);
  EXPECT_TRUE(testing::close(g, std::vector<double>(6, 0.0), V{2, 1, 3}, {0, 0}));
}

TEST(CtcLoss, TorchsErrors) {
  const Tensor lp = Tensor::empty(V{4, 2, 3}, ScalarType::Float32).fill_(Scalar(-1.0));
  const Tensor targets = from_ints(V{1, 1, 2, 2}, V{2, 2});
  EXPECT_EQ(error_of([&] {
              ops::_ctc_loss(lp, targets, V{4, 4}, V{2, 2}, int64_t{3}, false);
            }),
            "blank must be in label range");
  EXPECT_EQ(error_of([&] {
              ops::_ctc_loss(lp, targets, V{4}, V{2, 2}, int64_t{0}, false);
            }),
            "input_lengths must be of size batch_size");
  EXPECT_EQ(error_of([&] {
              ops::_ctc_loss(lp, targets, V{5, 4}, V{2, 2}, int64_t{0}, false);
            }),
            "Expected input_lengths to have value at most 4, but got value 5 (while checking "
            "arguments for ctc_loss_cpu)");
  EXPECT_EQ(error_of([&] {
              ops::_ctc_loss(lp, targets, V{4, 4}, V{3, 2}, int64_t{0}, false);
            }),
            "Expected tensor to have size at least 3 at dimension 1, but got size 2 for argument "
            "#2 'targets' (while checking arguments for ctc_loss_cpu)");
  EXPECT_THAT(
      error_of([&] {
        ops::_ctc_loss(lp.to(ScalarType::BFloat16), targets, V{4, 4}, V{2, 2}, int64_t{0}, false);
      }),
      HasSubstr("ctc_loss_cpu"));
}

}  // namespace
}  // namespace ampjit
