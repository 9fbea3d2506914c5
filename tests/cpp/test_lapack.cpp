// The LAPACK-backed kernels (kernels/cpu/lapack_ops.cpp) by their defining properties, checked in
// float64 with products written out here: A = P L U, Q^T Q = I and A = Q R, A = L L^T,
// A = U diag(S) V^H, A V = V diag(L), triangular and least-squares solves, LDL^T solves, the
// Householder products; over batches, non-contiguous inputs and empty matrices; and the pinned
// messages and classes of bad inputs (LinAlgError, NotImplementedError for complex results).
#include <gmock/gmock.h>

#include "tests/cpp/testing.h"

namespace ampjit {
namespace {

using testing::error_of;
using testing::random_tensor;
using V = std::vector<int64_t>;
constexpr ScalarType f32 = ScalarType::Float32, f64 = ScalarType::Float64;

// A row-major float64 copy of matrix b of a [..., m, n] tensor.
struct Mat {
  int64_t m = 0, n = 0;
  std::vector<double> v;
  double operator()(int64_t i, int64_t j) const { return v[i * n + j]; }
};
Mat mat(const Tensor& t, int64_t b = 0) {
  const int64_t m = t.size(-2), n = t.size(-1);
  const std::vector<double> all = testing::values(t);
  Mat r{m, n, {}};
  r.v.assign(all.begin() + b * m * n, all.begin() + (b + 1) * m * n);
  return r;
}
Mat mul(const Mat& a, const Mat& b) {
  EXPECT_EQ(a.n, b.m);
  Mat r{a.m, b.n, std::vector<double>(a.m * b.n, 0.0)};
  for (int64_t i = 0; i < a.m; ++i)
    for (int64_t k = 0; k < a.n; ++k)
      for (int64_t j = 0; j < b.n; ++j) r.v[i * b.n + j] += a(i, k) * b(k, j);
  return r;
}
Mat transpose(const Mat& a) {
  Mat r{a.n, a.m, std::vector<double>(a.v.size())};
  for (int64_t i = 0; i < a.m; ++i)
    for (int64_t j = 0; j < a.n; ++j) r.v[j * a.m + i] = a(i, j);
  return r;
}
Mat eye(int64_t n) {
  Mat r{n, n, std::vector<double>(n * n, 0.0)};
  for (int64_t i = 0; i < n; ++i) r.v[i * n + i] = 1;
  return r;
}
::testing::AssertionResult near(const Mat& got, const Mat& want, double tol = 1e-10) {
  if (got.m != want.m || got.n != want.n)
    return ::testing::AssertionFailure()
           << got.m << "x" << got.n << " != " << want.m << "x" << want.n;
  for (size_t i = 0; i < got.v.size(); ++i)
    if (std::fabs(got.v[i] - want.v[i]) > tol * (1 + std::fabs(want.v[i])))
      return ::testing::AssertionFailure() << "[" << i << "] " << got.v[i] << " != " << want.v[i];
  return ::testing::AssertionSuccess();
}
int64_t batch_of(const Tensor& t) {
  int64_t n = 1;
  for (int64_t i = 0; i + 2 < t.dim(); ++i) n *= t.size(i);
  return n;
}
// A symmetric positive-definite batch: X X^T + n I.
Tensor spd(V shape, uint64_t seed) {
  const Tensor x = random_tensor(shape, f64, seed);
  const int64_t n = shape.back();
  Tensor a = ops::matmul(x, ops::transpose(x, -2, -1));
  return ops::add(a, ops::mul_Scalar(ops::eye(n, f64), static_cast<double>(n)));
}

TEST(Lapack, LuFactorsTheMatrixWithRowInterchanges) {
  for (const V& shape : {V{4, 4}, V{3, 5, 2}, V{2, 3, 4}, V{2, 2, 3, 3}}) {
    for (bool noncontig : {false, true}) {
      const Tensor A = random_tensor(shape, f64, 1, -2, 2, noncontig);
      const OpResult lu = ops::linalg_lu_factor_ex(A);
      EXPECT_EQ(lu.tensor(1).dtype(), ScalarType::Int32);
      EXPECT_EQ(lu.tensor(2).dtype(), ScalarType::Int32);
      const OpResult plu = ops::lu_unpack(lu.tensor(0), lu.tensor(1));
      for (int64_t b = 0; b < batch_of(A); ++b)
        EXPECT_TRUE(
            near(mul(mat(plu.tensor(0), b), mul(mat(plu.tensor(1), b), mat(plu.tensor(2), b))),
                 mat(A, b)))
            << shape_str(shape) << " batch " << b;
    }
  }
}

TEST(Lapack, LuOfASingularMatrixReportsTheZeroPivot) {
  Tensor A = ops::zeros(V{3, 3}, f64);
  const OpResult lu = ops::linalg_lu_factor_ex(A);
  EXPECT_EQ(lu.tensor(2).item<int32_t>(), 1);
  EXPECT_EQ(error_of([&] { ops::linalg_lu_factor_ex(A, true, true); }),
            "torch.linalg.lu_factor_ex: U[1,1] is zero and using it on lu_solve would result in a "
            "division by zero. If you still want to perform the factorization, consider calling "
            "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
  EXPECT_EQ(error_of([&] { ops::linalg_lu_factor_ex(A, false); }),
            "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
}

TEST(Lapack, QrIsOrthogonalTimesUpperTriangular) {
  for (const V& shape : {V{5, 3}, V{3, 5}, V{2, 4, 4}}) {
    for (const char* mode : {"reduced", "complete"}) {
      const Tensor A = random_tensor(shape, f64, 2, -2, 2, true);
      const OpResult qr = ops::linalg_qr(A, std::string(mode));
      for (int64_t b = 0; b < batch_of(A); ++b) {
        const Mat Q = mat(qr.tensor(0), b), R = mat(qr.tensor(1), b);
        EXPECT_TRUE(near(mul(transpose(Q), Q), eye(Q.n))) << mode;
        EXPECT_TRUE(near(mul(Q, R), mat(A, b))) << mode;
        for (int64_t i = 0; i < R.m; ++i)
          for (int64_t j = 0; j < std::min(i, R.n); ++j) EXPECT_EQ(R(i, j), 0.0);
      }
    }
  }
  const OpResult r_only = ops::linalg_qr(random_tensor(V{4, 3}, f64, 3), std::string("r"));
  EXPECT_EQ(r_only.tensor(0).numel(), 0);
  EXPECT_EQ(error_of([] {
              ops::linalg_qr(ops::zeros(V{2, 2}, f64), std::string("full"));
            }),
            "qr received unrecognized mode 'full' but expected one of 'reduced' (default), 'r', "
            "or 'complete'");
}

TEST(Lapack, GeqrfReflectorsGiveQThroughHouseholderProductAndOrmqr) {
  const Tensor A = random_tensor(V{6, 4}, f64, 4);
  const OpResult g = ops::geqrf(A);
  const Tensor Q = ops::linalg_householder_product(g.tensor(0), g.tensor(1));
  const Tensor Q_ref = ops::linalg_qr(A).tensor(0);
  EXPECT_TRUE(near(mat(Q), mat(Q_ref)));
  const Tensor C = random_tensor(V{6, 2}, f64, 5);
  // ormqr(left, transpose) is Q^T C with the full 6x6 Q
  const Tensor QtC = ops::ormqr(g.tensor(0), g.tensor(1), C, true, true);
  const Tensor Q_full = ops::linalg_qr(A, std::string("complete")).tensor(0);
  EXPECT_TRUE(near(mat(QtC), mul(transpose(mat(Q_full)), mat(C))));
  EXPECT_EQ(error_of([] {
              ops::ormqr(ops::zeros(V{5, 0}, f64), ops::zeros(V{5}, f64), ops::zeros(V{5, 5}, f64));
            }),
            "torch.ormqr: tau.shape[-1] must be less than or equal to input.shape[-1]");
}

TEST(Lapack, CholeskyReconstructsAndRefusesIndefiniteMatrices) {
  const Tensor A = spd(V{3, 4, 4}, 6);
  for (bool upper : {false, true}) {
    const OpResult c = ops::linalg_cholesky_ex(A, upper);
    for (int64_t b = 0; b < 3; ++b) {
      const Mat L = mat(c.tensor(0), b);
      EXPECT_TRUE(near(upper ? mul(transpose(L), L) : mul(L, transpose(L)), mat(A, b)));
    }
    EXPECT_EQ(testing::values(c.tensor(1)), std::vector<double>({0, 0, 0}));
  }
  Tensor bad = ops::eye(3, f64);
  bad.data<double>()[4] = -1;  // the leading minor of order 2 is negative
  const OpResult c = ops::linalg_cholesky_ex(bad);
  EXPECT_EQ(c.tensor(1).item<int32_t>(), 2);
  try {
    ops::linalg_cholesky_ex(bad, false, true);
    ADD_FAILURE() << "no error";
  } catch (const LinAlgError& e) {
    EXPECT_EQ(e.message(),
              "linalg.cholesky_ex: The factorization could not be completed because the input is "
              "not positive-definite (the leading minor of order 2 is not positive-definite).");
  }
}

TEST(Lapack, SvdReconstructsWithOrthonormalFactors) {
  for (const V& shape : {V{5, 3}, V{3, 5}, V{2, 4, 4}}) {
    for (bool full : {false, true}) {
      const Tensor A = random_tensor(shape, f64, 7, -2, 2, true);
      const OpResult r = ops::_linalg_svd(A, full);
      const int64_t k = std::min(shape[shape.size() - 2], shape.back());
      for (int64_t b = 0; b < batch_of(A); ++b) {
        const Mat U = mat(r.tensor(0), b), Vh = mat(r.tensor(2), b);
        const std::vector<double> S = testing::values(r.tensor(1));
        EXPECT_TRUE(near(mul(transpose(U), U), eye(U.n)));
        EXPECT_TRUE(near(mul(Vh, transpose(Vh)), eye(Vh.m)));
        Mat Sigma{U.n, Vh.m, std::vector<double>(U.n * Vh.m, 0.0)};
        for (int64_t j = 0; j < k; ++j) Sigma.v[j * Vh.m + j] = S[b * k + j];
        EXPECT_TRUE(near(mul(mul(U, Sigma), Vh), mat(A, b)));
        for (int64_t j = 1; j < k; ++j) EXPECT_GE(S[b * k + j - 1], S[b * k + j]);
      }
    }
  }
  const OpResult s_only = ops::_linalg_svd(random_tensor(V{3, 3}, f32, 8), false, false);
  EXPECT_EQ(s_only.tensor(0).numel(), 0);
  EXPECT_EQ(s_only.tensor(1).dtype(), f32);
}

TEST(Lapack, EighDiagonalizesSymmetricMatrices) {
  const Tensor A = spd(V{2, 5, 5}, 9);
  for (const char* uplo : {"L", "U"}) {
    const OpResult e = ops::linalg_eigh(A, std::string(uplo));
    for (int64_t b = 0; b < 2; ++b) {
      const Mat Q = mat(e.tensor(1), b);
      const std::vector<double> L = testing::values(e.tensor(0));
      Mat QL = Q;
      for (int64_t i = 0; i < 5; ++i)
        for (int64_t j = 0; j < 5; ++j) QL.v[i * 5 + j] *= L[b * 5 + j];
      EXPECT_TRUE(near(mul(mat(A, b), Q), QL, 1e-9));
      EXPECT_TRUE(near(mul(transpose(Q), Q), eye(5)));
    }
  }
  EXPECT_EQ(error_of([&] { ops::linalg_eigh(A, std::string("X")); }),
            "Expected UPLO argument to be 'L' or 'U', but got X");
}

TEST(Lapack, EigOfARealSpectrumAndTheComplexOnesRefused) {
  // upper triangular: eigenvalues on the diagonal, all real
  Tensor A = ops::triu(random_tensor(V{4, 4}, f64, 10));
  const OpResult e = ops::linalg_eig(A);
  const Mat Q = mat(e.tensor(1));
  const std::vector<double> L = testing::values(e.tensor(0));
  Mat QL = Q;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) QL.v[i * 4 + j] *= L[j];
  EXPECT_TRUE(near(mul(mat(A), Q), QL, 1e-9));
  // a rotation has eigenvalues +-i
  Tensor R = ops::zeros(V{2, 2}, f64);
  R.data<double>()[1] = -1;
  R.data<double>()[2] = 1;
  EXPECT_THAT(error_of([&] { ops::linalg_eig(R); }),
              ::testing::HasSubstr("ampjit has no complex dtype"));
  try {
    ops::linalg_eig(R);
  } catch (const NotImplementedError&) {
  }
}

TEST(Lapack, TriangularSolvesFromEitherSide) {
  const Tensor A = ops::add(ops::triu(random_tensor(V{2, 4, 4}, f64, 11)),
                            ops::mul_Scalar(ops::eye(4, f64), 4.0));
  const Tensor B = random_tensor(V{4, 3}, f64, 12);  // broadcast over A's batch
  const Tensor X = ops::linalg_solve_triangular(A, B, true);
  EXPECT_EQ(X.sizes()[0], 2);
  for (int64_t b = 0; b < 2; ++b) EXPECT_TRUE(near(mul(mat(A, b), mat(X, b)), mat(B)));
  const Tensor Bt = random_tensor(V{3, 4}, f64, 13);
  const Tensor Xr = ops::linalg_solve_triangular(A, Bt, true, false);
  for (int64_t b = 0; b < 2; ++b) EXPECT_TRUE(near(mul(mat(Xr, b), mat(A, b)), mat(Bt)));
  EXPECT_EQ(error_of([&] { ops::linalg_solve_triangular(A, Bt, true); }),
            "linalg.solve_triangular: Incompatible shapes of A and B for the equation AX = B (4x4 "
            "and 3x4)");
}

TEST(Lapack, LeastSquaresWithEveryDriver) {
  const Tensor A = random_tensor(V{6, 3}, f64, 14), B = random_tensor(V{6, 2}, f64, 15);
  // the normal equations: A^T A X = A^T B
  for (const char* driver : {"gels", "gelsy", "gelsd", "gelss"}) {
    const OpResult r = ops::linalg_lstsq(A, B, std::nullopt, std::string(driver));
    const Mat X = mat(r.tensor(0));
    EXPECT_TRUE(near(mul(mul(transpose(mat(A)), mat(A)), X), mul(transpose(mat(A)), mat(B)), 1e-9))
        << driver;
    EXPECT_EQ(r.tensor(2).numel(), std::string(driver) == "gels" ? 0 : 1) << driver;
  }
  EXPECT_EQ(error_of([&] { ops::linalg_lstsq(A, B, std::nullopt, std::string("gelsx")); }),
            "torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)");
  EXPECT_EQ(error_of([&] { ops::linalg_lstsq(ops::zeros(V{}, f64), ops::zeros(V{}, f64)); }),
            "torch.linalg.lstsq: input must have at least 2 dimensions.");
}

TEST(Lapack, LdlFactorsSolveSymmetricSystems) {
  Tensor A = random_tensor(V{5, 5}, f64, 16);
  A = ops::add(A, ops::transpose(A, 0, 1));  // symmetric, indefinite
  const OpResult f = ops::linalg_ldl_factor_ex(A);
  EXPECT_EQ(f.tensor(2).item<int32_t>(), 0);
  const Tensor B = random_tensor(V{5, 2}, f64, 17);
  const Tensor X = ops::linalg_ldl_solve(f.tensor(0), f.tensor(1), B);
  EXPECT_TRUE(near(mul(mat(A), mat(X)), mat(B), 1e-9));
}

TEST(Lapack, EmptyMatricesAndLowPrecisionDtypes) {
  const OpResult lu = ops::linalg_lu_factor_ex(ops::zeros(V{2, 0, 0}, f32));
  EXPECT_EQ(lu.tensor(0).numel(), 0);
  EXPECT_EQ(lu.tensor(2).numel(), 2);
  const OpResult svd = ops::_linalg_svd(ops::zeros(V{0, 3}, f64), true);
  EXPECT_TRUE(near(mat(svd.tensor(2)), eye(3)));
  EXPECT_EQ(error_of([] {
              ops::linalg_cholesky_ex(ops::zeros(V{2, 2}, ScalarType::Int64));
            }),
            "linalg.cholesky: Expected a floating point or complex tensor as input. Got Long");
  EXPECT_EQ(error_of([] {
              ops::linalg_cholesky_ex(ops::zeros(V{2, 3}, f32));
            }),
            "linalg.cholesky: A must be batches of square matrices, but they are 2 by 3 matrices");
  EXPECT_EQ(error_of([] {
              ops::linalg_cholesky_ex(ops::zeros(V{2, 2}, ScalarType::Float16));
            }),
            "linalg.cholesky: not implemented for 'Half'");
}

}  // namespace
}  // namespace ampjit
