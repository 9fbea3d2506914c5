// The FFT primitives (runtime/ops/fft.def) against a direct float64 DFT written here, on every
// class of length KISS FFT treats apart (powers of two, its radix-3 and radix-5 butterflies,
// primes through its generic butterfly, mixed composites), every normalization, several dims and
// strided inputs; their pinned messages; and irfft through its decomposition.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>
#include <vector>

#include "runtime/ops.h"
#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using cpx = std::complex<double>;
using testing::error_of;
using testing::random_tensor;

// Lengths by class: 1, powers of two, products of 2, 3 and 5, primes, mixed with a large prime.
const std::vector<int64_t> kLengths = {1,  2, 4,  8,  64, 3,  5,  6,  9,   12, 15, 25,
                                       30, 7, 11, 13, 31, 97, 14, 22, 100, 77, 202};

// X[k] = sum_t x[t] exp(-+2 pi i k t / n), directly, in double.
std::vector<cpx> dft(const std::vector<cpx>& x, bool inverse) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<cpx> out(x.size());
  for (int64_t k = 0; k < n; ++k) {
    cpx s = 0;
    for (int64_t t = 0; t < n; ++t) {
      const double a = (inverse ? 2 : -2) * std::numbers::pi * static_cast<double>((k * t) % n) /
                       static_cast<double>(n);
      s += x[static_cast<size_t>(t)] * cpx(std::cos(a), std::sin(a));
    }
    out[static_cast<size_t>(k)] = s;
  }
  return out;
}

double scale_of(int64_t normalization, int64_t n) {
  return normalization == 0   ? 1.0
         : normalization == 1 ? 1.0 / std::sqrt(double(n))
                              : 1.0 / double(n);
}

// The complex values of a [n, 2] pairs tensor.
std::vector<cpx> complex_values(const Tensor& pairs) {
  const std::vector<double> v = testing::values(pairs);
  std::vector<cpx> out(v.size() / 2);
  for (size_t i = 0; i < out.size(); ++i) out[i] = cpx(v[2 * i], v[2 * i + 1]);
  return out;
}

std::vector<double> flat(const std::vector<cpx>& z) {
  std::vector<double> out;
  for (const cpx& c : z) {
    out.push_back(c.real());
    out.push_back(c.imag());
  }
  return out;
}

testing::Tol tol_of(ScalarType t, int64_t n) {
  // the reference is exact to ~1e-15; the result is rounded once, of values up to ~sqrt(n) * 2
  return t == ScalarType::Float64 ? testing::Tol{1e-12, 1e-12 * double(n)}
                                  : testing::Tol{2e-6, 2e-6 * std::sqrt(double(n))};
}

TEST(Fft, C2cMatchesTheDirectDftForEveryLengthClass) {
  for (ScalarType dt : {ScalarType::Float64, ScalarType::Float32})
    for (int64_t n : kLengths)
      for (int64_t norm : {0, 1, 2})
        for (bool forward : {true, false}) {
          const Tensor x = random_tensor({n, 2}, dt, static_cast<uint64_t>(n * 7 + norm));
          const Tensor y = ops::fft_c2c_pairs(x, std::vector<int64_t>{0}, norm, forward);
          std::vector<cpx> want = dft(complex_values(x), !forward);
          for (cpx& c : want) c *= scale_of(norm, n);
          EXPECT_EQ(y.dtype(), dt);
          EXPECT_TRUE(testing::close(y, flat(want), {n, 2}, tol_of(dt, n)))
              << "n=" << n << " norm=" << norm << " forward=" << forward;
        }
}

TEST(Fft, R2cIsTheDftOfRealValuesOneSidedOrFull) {
  for (ScalarType dt : {ScalarType::Float64, ScalarType::Float32})
    for (int64_t n : kLengths)
      for (bool onesided : {true, false}) {
        const Tensor x = random_tensor({n}, dt, static_cast<uint64_t>(n));
        const Tensor y = ops::fft_r2c_pairs(x, std::vector<int64_t>{0}, int64_t{2}, onesided);
        std::vector<cpx> in;
        for (double v : testing::values(x)) in.emplace_back(v, 0.0);
        std::vector<cpx> want = dft(in, false);
        want.resize(static_cast<size_t>(onesided ? n / 2 + 1 : n));
        for (cpx& c : want) c /= double(n);
        EXPECT_TRUE(testing::close(y, flat(want), {int64_t(want.size()), 2}, tol_of(dt, n)))
            << "n=" << n << " onesided=" << onesided;
      }
}

TEST(Fft, C2rCompletesTheHermitianHalfEvenAndOdd) {
  // The imaginary parts at 0 and (for even n) at n / 2 are dropped, as pocketfft drops them.
  for (ScalarType dt : {ScalarType::Float64, ScalarType::Float32})
    for (int64_t n : kLengths) {
      const int64_t half = n / 2 + 1;
      const Tensor x = random_tensor({half, 2}, dt, static_cast<uint64_t>(n + 100));
      const Tensor y = ops::fft_c2r_pairs(x, std::vector<int64_t>{0}, int64_t{1}, n);
      const std::vector<cpx> h = complex_values(x);
      std::vector<cpx> full(static_cast<size_t>(n));
      for (int64_t k = 0; k < half; ++k) {
        const bool real_only = k == 0 || 2 * k == n;
        const cpx v = real_only ? cpx(h[size_t(k)].real(), 0) : h[size_t(k)];
        full[size_t(k)] = v;
        if (!real_only) full[size_t(n - k)] = std::conj(v);
      }
      std::vector<double> want;
      for (const cpx& c : dft(full, true)) want.push_back(c.real() / std::sqrt(double(n)));
      EXPECT_TRUE(testing::close(y, want, {n}, tol_of(dt, n))) << "n=" << n;
    }
}

TEST(Fft, SeveralDimsOfAStridedInputTransformOneAfterAnother) {
  // [5, 3, 6] pairs made from a transposed parent; transform dims 2 and 0, then compare with the
  // direct DFT along dim 2 then along dim 0.
  const Tensor parent = random_tensor({5, 6, 3, 2}, ScalarType::Float64, 42);
  const Tensor x = parent.transpose(1, 2);
  ASSERT_FALSE(x.is_contiguous());
  const Tensor y = ops::fft_c2c_pairs(x, std::vector<int64_t>{2, 0}, int64_t{0}, true);
  const std::vector<cpx> in = complex_values(x);
  std::vector<cpx> z = in;
  auto at = [](int64_t i, int64_t j, int64_t k) { return size_t((i * 3 + j) * 6 + k); };
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      std::vector<cpx> line(6);
      for (int64_t k = 0; k < 6; ++k) line[size_t(k)] = z[at(i, j, k)];
      line = dft(line, false);
      for (int64_t k = 0; k < 6; ++k) z[at(i, j, k)] = line[size_t(k)];
    }
  for (int64_t j = 0; j < 3; ++j)
    for (int64_t k = 0; k < 6; ++k) {
      std::vector<cpx> line(5);
      for (int64_t i = 0; i < 5; ++i) line[size_t(i)] = z[at(i, j, k)];
      line = dft(line, false);
      for (int64_t i = 0; i < 5; ++i) z[at(i, j, k)] = line[size_t(i)];
    }
  EXPECT_TRUE(testing::close(y, flat(z), {5, 3, 6, 2}, testing::Tol{1e-12, 1e-12}));
}

TEST(Fft, IrfftOfARealInputThroughItsDecomposition) {
  // torch.fft.irfft reads a real input as complex with zero imaginary parts: a cosine series.
  const int64_t n = 9;
  const Tensor x = random_tensor({5}, ScalarType::Float64, 3);
  const Tensor y = call_op("aten::fft_irfft", {IValue(x), IValue(n)}).tensor();
  const std::vector<double> v = testing::values(x);
  std::vector<double> want;
  for (int64_t t = 0; t < n; ++t) {
    double s = v[0];
    for (int64_t k = 1; k < 5; ++k)
      s += 2 * v[size_t(k)] * std::cos(2 * std::numbers::pi * double(k * t) / double(n));
    want.push_back(s / double(n));
  }
  EXPECT_TRUE(testing::close(y, want, {n}, testing::Tol{1e-12, 1e-12}));
}

TEST(Fft, MessagesArePinned) {
  const Tensor x = random_tensor({3, 4}, ScalarType::Float64, 1);
  EXPECT_EQ(error_of([&] { ops::fft_c2c_pairs(x, std::vector<int64_t>{0}, int64_t{0}, true); }),
            "_fft_c2c expects the complex values as (real, imaginary) pairs in a last dimension "
            "of size 2, but got a tensor of shape [3, 4]");
  EXPECT_EQ(error_of([&] {
              ops::fft_r2c_pairs(x, std::vector<int64_t>{1, -1}, int64_t{0}, true);
            }),
            "FFT dims must be unique");
  EXPECT_EQ(error_of([&] { ops::fft_r2c_pairs(x, std::vector<int64_t>{}, int64_t{0}, true); }),
            "_fft_r2c must transform at least one axis");
  EXPECT_EQ(error_of([&] {
              ops::fft_r2c_pairs(x.to(ScalarType::Int64), std::vector<int64_t>{0}, int64_t{0},
                                 true);
            }),
            "Unsupported dtype Long");
  const Tensor h = random_tensor({5, 2}, ScalarType::Float64, 2);
  EXPECT_EQ(error_of([&] { ops::fft_c2r_pairs(h, std::vector<int64_t>{0}, int64_t{0}, 4); }),
            "_fft_c2r: expected 3 values along dim 0 for last_dim_size=4, but got 5");
  EXPECT_EQ(error_of([&] { ops::fft_c2r_pairs(h, std::vector<int64_t>{0}, int64_t{0}, 0); }),
            "Invalid number of data points (0) specified");
  EXPECT_EQ(error_of([&] {
              call_op("aten::fft_irfft", {IValue(x), IValue(int64_t{0})});
            }),
            "Invalid number of data points (0) specified");
  EXPECT_EQ(error_of([&] { call_op("aten::fft_rfft", {IValue(x)}); }),
            "torch.fft.rfft returns a complex tensor: complex tensors are out of scope in ampjit "
            "(of torch.fft, irfft, hfft and their 2-d and n-d forms return real tensors)");
}

}  // namespace
}  // namespace ampjit
