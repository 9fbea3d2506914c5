// torch.linalg's factorizations and solvers on the CPU (runtime/ops/linalg_lapack.def), through
// LAPACK (LAPACKE's column-major `_work` entry points) and BLAS's triangular solve (CBLAS), from
// OpenBLAS as Debian's torch uses them, so results agree with torch's to the rounding: the same
// routines on the same column-major copies with the same workspace sizes (Note [LAPACK as torch
// calls it]). float32 and float64 only, as torch's CPU kernels; checks and messages are
// kernels/lapack_meta.h.
#define LAPACK_COMPLEX_CPP  // lapacke.h's complex types as std::complex (unused here)
#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "kernels/lapack_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// Note [LAPACK as torch calls it]
// torch's CPU linear algebra (aten/src/ATen/native/BatchLinearAlgebra.cpp) copies each operand
// into a batch of column-major matrices ("cloneBatchedColumnMajor"), calls one LAPACK routine per
// matrix, asks the routine for its optimal workspace first (lwork = -1), and returns the results
// in that column-major layout. The routines are the ones named in each kernel below (getrf, potrf,
// geqrf + orgqr, gesdd, syevd, geev, gelsy/gelsd/gelss/gels, sytrf/sytrs, ormqr; the triangular
// solve is BLAS trsm). Decompositions that are unique only up to signs (QR, SVD, eigenvectors)
// then come out with torch's signs, which op_db compares as they are.

// The LAPACK and BLAS routines of one real type.
template <typename T>
struct Lapack;

#define AMPJIT_LAPACK_TRAITS(T, P, CB)                                                             \
  template <>                                                                                      \
  struct Lapack<T> {                                                                               \
    static int getrf(int m, int n, T* a, int lda, int* ipiv) {                                     \
      return LAPACKE_##P##getrf_work(LAPACK_COL_MAJOR, m, n, a, lda, ipiv);                        \
    }                                                                                              \
    static int potrf(char uplo, int n, T* a, int lda) {                                            \
      return LAPACKE_##P##potrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda);                           \
    }                                                                                              \
    static int geqrf(int m, int n, T* a, int lda, T* tau, T* work, int lwork) {                    \
      return LAPACKE_##P##geqrf_work(LAPACK_COL_MAJOR, m, n, a, lda, tau, work, lwork);            \
    }                                                                                              \
    static int orgqr(int m, int n, int k, T* a, int lda, const T* tau, T* work, int lwork) {       \
      return LAPACKE_##P##orgqr_work(LAPACK_COL_MAJOR, m, n, k, a, lda, tau, work, lwork);         \
    }                                                                                              \
    static int ormqr(char side, char trans, int m, int n, int k, const T* a, int lda,              \
                     const T* tau, T* c, int ldc, T* work, int lwork) {                            \
      return LAPACKE_##P##ormqr_work(LAPACK_COL_MAJOR, side, trans, m, n, k, a, lda, tau, c, ldc,  \
                                     work, lwork);                                                 \
    }                                                                                              \
    static int gesdd(char jobz, int m, int n, T* a, int lda, T* s, T* u, int ldu, T* vt, int ldvt, \
                     T* work, int lwork, int* iwork) {                                             \
      return LAPACKE_##P##gesdd_work(LAPACK_COL_MAJOR, jobz, m, n, a, lda, s, u, ldu, vt, ldvt,    \
                                     work, lwork, iwork);                                          \
    }                                                                                              \
    static int syevd(char jobz, char uplo, int n, T* a, int lda, T* w, T* work, int lwork,         \
                     int* iwork, int liwork) {                                                     \
      return LAPACKE_##P##syevd_work(LAPACK_COL_MAJOR, jobz, uplo, n, a, lda, w, work, lwork,      \
                                     iwork, liwork);                                               \
    }                                                                                              \
    static int geev(char jobvl, char jobvr, int n, T* a, int lda, T* wr, T* wi, T* vl, int ldvl,   \
                    T* vr, int ldvr, T* work, int lwork) {                                         \
      return LAPACKE_##P##geev_work(LAPACK_COL_MAJOR, jobvl, jobvr, n, a, lda, wr, wi, vl, ldvl,   \
                                    vr, ldvr, work, lwork);                                        \
    }                                                                                              \
    static int gels(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* work, int lwork) {    \
      return LAPACKE_##P##gels_work(LAPACK_COL_MAJOR, 'N', m, n, nrhs, a, lda, b, ldb, work,       \
                                    lwork);                                                        \
    }                                                                                              \
    static int gelsy(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, int* jpvt, T rcond,     \
                     int* rank, T* work, int lwork) {                                              \
      return LAPACKE_##P##gelsy_work(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, jpvt, rcond,    \
                                     rank, work, lwork);                                           \
    }                                                                                              \
    static int gelsd(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond,          \
                     int* rank, T* work, int lwork, int* iwork) {                                  \
      return LAPACKE_##P##gelsd_work(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, \
                                     work, lwork, iwork);                                          \
    }                                                                                              \
    static int gelss(int m, int n, int nrhs, T* a, int lda, T* b, int ldb, T* s, T rcond,          \
                     int* rank, T* work, int lwork) {                                              \
      return LAPACKE_##P##gelss_work(LAPACK_COL_MAJOR, m, n, nrhs, a, lda, b, ldb, s, rcond, rank, \
                                     work, lwork);                                                 \
    }                                                                                              \
    static int sytrf(char uplo, int n, T* a, int lda, int* ipiv, T* work, int lwork) {             \
      return LAPACKE_##P##sytrf_work(LAPACK_COL_MAJOR, uplo, n, a, lda, ipiv, work, lwork);        \
    }                                                                                              \
    static int sytrs(char uplo, int n, int nrhs, const T* a, int lda, const int* ipiv, T* b,       \
                     int ldb) {                                                                    \
      return LAPACKE_##P##sytrs_work(LAPACK_COL_MAJOR, uplo, n, nrhs, a, lda, ipiv, b, ldb);       \
    }                                                                                              \
    static void trsm(bool left, bool upper, bool unit, int m, int n, const T* a, int lda, T* b,    \
                     int ldb) {                                                                    \
      cblas_##CB##trsm(CblasColMajor, left ? CblasLeft : CblasRight,                               \
                       upper ? CblasUpper : CblasLower, CblasNoTrans,                              \
                       unit ? CblasUnit : CblasNonUnit, m, n, T(1), a, lda, b, ldb);               \
    }                                                                                              \
  };
AMPJIT_LAPACK_TRAITS(float, s, s)
AMPJIT_LAPACK_TRAITS(double, d, d)
#undef AMPJIT_LAPACK_TRAITS

// float32 or float64 (the only types LAPACK computes in): f.template operator()<T>().
template <typename F>
decltype(auto) dispatch_lapack(ScalarType t, const char* op, F&& f) {
  if (t == ScalarType::Float32) return f.template operator()<float>();
  if (t == ScalarType::Float64) return f.template operator()<double>();
  throw_unsupported_dtype(op, t);
}

int lapack_dim(int64_t n, const char* op) {
  AMPJIT_CHECK(n <= std::numeric_limits<int>::max(),
               "{}: a dimension of {} is too large for LAPACK", op, n);
  return static_cast<int>(n);
}

std::vector<int64_t> with(std::vector<int64_t> batch, std::initializer_list<int64_t> tail) {
  batch.insert(batch.end(), tail);
  return batch;
}

// A copy of `t` [..., m, n] (its batch dimensions expanded to `batch`) whose matrices are
// column-major and packed one after another, as LAPACK reads and writes them: sizes
// [...batch, m, n], strides [..., 1, m]. Always a copy: LAPACK overwrites it.
Tensor column_major_copy(const Tensor& t, const std::vector<int64_t>& batch) {
  const int64_t m = t.size(-2), n = t.size(-1);
  Tensor out = Tensor::empty(with(batch, {n, m}), t.dtype()).transpose(-2, -1);
  out.copy_(t.expand(with(batch, {m, n})));
  return out;
}
Tensor column_major_copy(const Tensor& t) {
  return column_major_copy(t, meta::batch_shape(t));
}
Tensor column_major_empty(const std::vector<int64_t>& batch, int64_t m, int64_t n, ScalarType dt) {
  return Tensor::empty(with(batch, {n, m}), dt).transpose(-2, -1);
}

template <typename T>
T* matrix(const Tensor& t, int64_t b) {  // matrix b of a column_major_copy
  return t.data<T>() + b * t.size(-2) * t.size(-1);
}

Tensor zeros_of(const std::vector<int64_t>& sizes, ScalarType dt) {
  Tensor t = Tensor::empty(sizes, dt);
  t.fill_(0);
  return t;
}
Tensor empty0(ScalarType dt) {  // torch's placeholder for a result not computed: shape [0]
  return Tensor::empty(std::vector<int64_t>{0}, dt);
}

// Keeps the lower (or upper) triangle of each column-major matrix and zeros the rest, in place.
template <typename T>
void keep_triangle(const Tensor& a, bool upper, int64_t diagonal_offset = 0) {
  const int64_t m = a.size(-2), n = a.size(-1), nb = meta::product(meta::batch_shape(a));
  for (int64_t b = 0; b < nb; ++b) {
    T* p = matrix<T>(a, b);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const bool keep = upper ? j - i >= diagonal_offset : i - j >= -diagonal_offset;
        if (!keep) p[j * m + i] = T(0);
      }
  }
}

// The optimal workspace LAPACK asks for (the value a query with lwork = -1 wrote).
template <typename T>
int workspace(T query) {
  return std::max(1, static_cast<int>(query));
}

// ---- LU ---------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> lu_factor_ex_k(const Tensor& A, bool pivot, bool check_errors) {
  AMPJIT_CHECK(A.dim() >= 2,
               "torch.lu_factor: Expected tensor with 2 or more dimensions. Got size: {} instead",
               shape_str(A.sizes()));
  meta::check_floating(A, "linalg.lu_factor");
  AMPJIT_CHECK(pivot, "linalg.lu_factor: LU without pivoting is not implemented on the CPU");
  const std::vector<int64_t> batch = meta::batch_shape(A);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), nb = meta::product(batch);
  Tensor LU = column_major_copy(A);
  Tensor pivots = Tensor::empty(with(batch, {k}), ScalarType::Int32);
  Tensor info = zeros_of(batch, ScalarType::Int32);
  if (m > 0 && n > 0) {
    dispatch_lapack(A.dtype(), "linalg.lu_factor", [&]<typename T>() {
      for (int64_t b = 0; b < nb; ++b)
        info.data<int32_t>()[b] = Lapack<T>::getrf(
            lapack_dim(m, "linalg.lu_factor"), lapack_dim(n, "linalg.lu_factor"), matrix<T>(LU, b),
            static_cast<int>(std::max<int64_t>(1, m)), pivots.data<int32_t>() + b * k);
    });
  }
  if (check_errors) meta::check_lapack_errors(info, "torch.linalg.lu_factor_ex", A.dim() == 2);
  return {LU, pivots, info};
}

// P, L, U from getrf's packed LU and its 1-based row interchanges: A = P L U.
std::tuple<Tensor, Tensor, Tensor> lu_unpack_k(const Tensor& LU, const Tensor& pivots,
                                               bool unpack_data, bool unpack_pivots) {
  AMPJIT_CHECK(LU.dim() >= 2,
               "torch.lu_unpack: Expected tensor with 2 or more dimensions. Got size: {} instead",
               shape_str(LU.sizes()));
  const int64_t m = LU.size(-2), n = LU.size(-1), k = std::min(m, n);
  if (unpack_pivots) {
    AMPJIT_CHECK(pivots.dtype() == ScalarType::Int32,
                 "torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of torch.int32 "
                 "dtype.\nNote: this function is intended to be used with the output produced by "
                 "torch.linalg.lu_factor");
    AMPJIT_CHECK(pivots.dim() >= 1 && pivots.size(-1) == k,
                 "torch.lu_unpack: Expected LU_pivots.size(-1) == min(m, n), but got {} != {}",
                 pivots.dim() >= 1 ? pivots.size(-1) : 0, k);
  }
  const std::vector<int64_t> batch = meta::batch_shape(LU);
  Tensor L = empty0(LU.dtype()), U = empty0(LU.dtype()), P = empty0(LU.dtype());
  if (unpack_data) {
    // L: the strict lower triangle of the first k columns and ones on the diagonal; U: the upper
    // triangle of the first k rows.
    L = LU.narrow(-1, 0, k).clone();
    U = LU.narrow(-2, 0, k).clone();
    dispatch_floating(LU.dtype(), "lu_unpack", [&]<typename T>() {
      const int64_t nb = meta::product(batch);
      T* pl = L.data<T>();
      T* pu = U.data<T>();
      for (int64_t b = 0; b < nb; ++b) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < k; ++j) {
            T& x = pl[(b * m + i) * k + j];
            if (j > i) x = T(0);
            if (j == i) x = T(1);
          }
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < std::min(i, n); ++j) pu[(b * k + i) * n + j] = T(0);
      }
    });
  }
  if (unpack_pivots) {
    const std::vector<int64_t> pbatch(pivots.sizes().begin(), pivots.sizes().end() - 1);
    const int64_t nb = meta::product(pbatch);
    P = zeros_of(with(pbatch, {m, m}), LU.dtype());
    const Tensor piv = pivots.contiguous();
    std::vector<int64_t> perm(static_cast<size_t>(m));
    dispatch_floating(LU.dtype(), "lu_unpack", [&]<typename T>() {
      for (int64_t b = 0; b < nb; ++b) {
        std::iota(perm.begin(), perm.end(), 0);
        for (int64_t i = 0; i < k; ++i) {
          const int64_t p = piv.data<int32_t>()[b * k + i] - 1;
          AMPJIT_CHECK(p >= i && p < m,
                       "torch.lu_unpack: pivots of LU_pivots must be between {} and {}, got {}",
                       i + 1, m, p + 1);
          std::swap(perm[i], perm[p]);
        }
        T* pp = P.data<T>() + b * m * m;
        for (int64_t i = 0; i < m; ++i) pp[perm[i] * m + i] = T(1);
      }
    });
  }
  return {P, L, U};
}

// ---- triangular solve ---------------------------------------------------------------------------

Tensor solve_triangular_k(const Tensor& A, const Tensor& B, bool upper, bool left,
                          bool unitriangular) {
  const char* f = "linalg.solve_triangular";
  meta::check_floating(A, f);
  meta::check_solver_inputs(A, B, left, f);
  meta::check_same_dtype(A, B, f);
  const std::vector<int64_t> batch = meta::broadcast_batch(A, B, f);
  const int64_t m = B.size(-2), n = B.size(-1), na = A.size(-1), nb = meta::product(batch);
  Tensor X = column_major_copy(B, batch);
  if (X.numel() == 0) return X;
  const Tensor a = column_major_copy(A, batch);
  dispatch_lapack(A.dtype(), f, [&]<typename T>() {
    for (int64_t b = 0; b < nb; ++b)
      Lapack<T>::trsm(left, upper, unitriangular, lapack_dim(m, f), lapack_dim(n, f),
                      matrix<T>(a, b), static_cast<int>(std::max<int64_t>(1, na)), matrix<T>(X, b),
                      static_cast<int>(std::max<int64_t>(1, m)));
  });
  return X;
}

// ---- Cholesky -----------------------------------------------------------------------------------

std::tuple<Tensor, Tensor> cholesky_ex_k(const Tensor& A, bool upper, bool check_errors) {
  meta::check_square(A, "linalg.cholesky");
  meta::check_floating(A, "linalg.cholesky");
  const std::vector<int64_t> batch = meta::batch_shape(A);
  const int64_t n = A.size(-1), nb = meta::product(batch);
  Tensor L = column_major_copy(A);
  Tensor info = zeros_of(batch, ScalarType::Int32);
  if (n > 0) {
    dispatch_lapack(A.dtype(), "linalg.cholesky", [&]<typename T>() {
      for (int64_t b = 0; b < nb; ++b)
        info.data<int32_t>()[b] =
            Lapack<T>::potrf(upper ? 'U' : 'L', lapack_dim(n, "linalg.cholesky"), matrix<T>(L, b),
                             static_cast<int>(n));
      keep_triangle<T>(L, upper);
    });
  }
  if (check_errors) meta::check_lapack_errors(info, "linalg.cholesky_ex", A.dim() == 2);
  return {L, info};
}

// ---- QR and Householder products ----------------------------------------------------------------

// geqrf on the column-major copy `a` in place; returns tau [..., min(m, n)].
template <typename T>
Tensor run_geqrf(const Tensor& a, const char* f) {
  const std::vector<int64_t> batch = meta::batch_shape(a);
  const int64_t m = a.size(-2), n = a.size(-1), k = std::min(m, n), nb = meta::product(batch);
  Tensor tau = zeros_of(with(batch, {k}), a.dtype());
  if (k == 0) return tau;
  const int lda = static_cast<int>(std::max<int64_t>(1, m));
  T query = 0;
  Lapack<T>::geqrf(lapack_dim(m, f), lapack_dim(n, f), matrix<T>(a, 0), lda, tau.data<T>(), &query,
                   -1);
  std::vector<T> work(static_cast<size_t>(workspace(query)));
  for (int64_t b = 0; b < nb; ++b)
    Lapack<T>::geqrf(static_cast<int>(m), static_cast<int>(n), matrix<T>(a, b), lda,
                     tau.data<T>() + b * k, work.data(), static_cast<int>(work.size()));
  return tau;
}

// orgqr in place on the column-major `q` [..., m, n] holding reflectors, with tau [..., k].
template <typename T>
void run_orgqr(const Tensor& q, const Tensor& tau, const char* f) {
  const int64_t m = q.size(-2), n = q.size(-1), k = tau.size(-1);
  const int64_t nb = meta::product(meta::batch_shape(q));
  if (m == 0 || n == 0 || nb == 0) return;
  const Tensor t = tau.contiguous();
  const int lda = static_cast<int>(std::max<int64_t>(1, m));
  T query = 0;
  Lapack<T>::orgqr(lapack_dim(m, f), lapack_dim(n, f), lapack_dim(k, f), matrix<T>(q, 0), lda,
                   t.data<T>(), &query, -1);
  std::vector<T> work(static_cast<size_t>(workspace(query)));
  for (int64_t b = 0; b < nb; ++b)
    Lapack<T>::orgqr(static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), matrix<T>(q, b),
                     lda, t.data<T>() + b * k, work.data(), static_cast<int>(work.size()));
}

std::tuple<Tensor, Tensor> geqrf_k(const Tensor& self) {
  AMPJIT_CHECK(self.dim() >= 2, "torch.geqrf: input must have at least 2 dimensions.");
  meta::check_floating(self, "torch.geqrf");
  Tensor a = column_major_copy(self);
  Tensor tau = dispatch_lapack(self.dtype(), "torch.geqrf",
                               [&]<typename T>() { return run_geqrf<T>(a, "torch.geqrf"); });
  return {a, tau};
}

std::tuple<Tensor, Tensor> qr_k(const Tensor& A, const std::string& mode) {
  meta::check_is_matrix(A, "linalg.qr");
  meta::check_floating(A, "linalg.qr");
  // plain variables, not a structured binding: the lambdas below capture them (clang before 16
  // cannot capture a binding)
  const auto qr_mode = meta::parse_qr_mode(mode);
  const bool compute_q = std::get<0>(qr_mode), reduced = std::get<1>(qr_mode);
  const std::vector<int64_t> batch = meta::batch_shape(A);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n);
  Tensor a = column_major_copy(A);
  Tensor Q = empty0(A.dtype()), R;
  dispatch_lapack(A.dtype(), "linalg.qr", [&]<typename T>() {
    const Tensor tau = run_geqrf<T>(a, "linalg.qr");
    // R: the upper triangle of the first k rows (reduced) or of all m rows (complete).
    R = column_major_copy(reduced ? a.narrow(-2, 0, k) : a);
    keep_triangle<T>(R, true);
    if (!compute_q) return;
    // Q: the product of the reflectors, m x k (reduced) or m x m (complete).
    const int64_t qcols = reduced ? k : m;
    Q = column_major_empty(batch, m, qcols, A.dtype());
    Q.fill_(0);
    const int64_t from_a = std::min(qcols, n);
    Q.narrow(-1, 0, from_a).copy_(a.narrow(-1, 0, from_a));
    run_orgqr<T>(Q, tau, "linalg.qr");
  });
  return {Q, R};
}

Tensor householder_product_k(const Tensor& input, const Tensor& tau) {
  const char* f = "torch.linalg.householder_product";
  AMPJIT_CHECK(input.dim() >= 2, "{}: input must have at least 2 dimensions.", f);
  AMPJIT_CHECK(input.size(-2) >= input.size(-1),
               "{}: input.shape[-2] must be greater than or equal to input.shape[-1]", f);
  AMPJIT_CHECK(tau.dim() >= 1 && input.size(-1) >= tau.size(-1),
               "{}: input.shape[-1] must be greater than or equal to tau.shape[-1]", f);
  AMPJIT_CHECK(input.dim() - tau.dim() == 1,
               "{}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
               "{} and input.ndim is equal to {}",
               f, tau.dim(), input.dim());
  const std::vector<int64_t> batch = meta::batch_shape(input);
  const std::vector<int64_t> tbatch = meta::batch_shape(tau, 1);
  AMPJIT_CHECK(batch == tbatch,
               "{}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {}",
               f, shape_str(tbatch));
  AMPJIT_CHECK(tau.dtype() == input.dtype(), "{}: tau dtype {} does not match input dtype {}", f,
               torch_type_name(tau.dtype()), torch_type_name(input.dtype()));
  meta::check_floating(input, f);
  Tensor q = column_major_copy(input);
  dispatch_lapack(input.dtype(), f, [&]<typename T>() { run_orgqr<T>(q, tau, f); });
  return q;
}

Tensor ormqr_k(const Tensor& input, const Tensor& tau, const Tensor& other, bool left,
               bool transpose) {
  const char* f = "torch.ormqr";
  AMPJIT_CHECK(input.dim() >= 2, "{}: input must have at least 2 dimensions.", f);
  AMPJIT_CHECK(other.dim() >= 2, "{}: other must have at least 2 dimensions.", f);
  const int64_t side = left ? -2 : -1;
  AMPJIT_CHECK(tau.dim() >= 1 && other.size(side) >= tau.size(-1),
               "{}: other.shape[{}] must be greater than or equal to tau.shape[-1]", f, side);
  AMPJIT_CHECK(other.size(side) == input.size(-2),
               "{}: other.shape[{}] must be equal to input.shape[-2]", f, side);
  AMPJIT_CHECK(tau.size(-1) <= input.size(-1),
               "{}: tau.shape[-1] must be less than or equal to input.shape[-1]", f);
  AMPJIT_CHECK(input.dim() - tau.dim() == 1,
               "{}: Expected tau to have one dimension less than input, but got tau.ndim equal to "
               "{} and input.ndim is equal to {}",
               f, tau.dim(), input.dim());
  AMPJIT_CHECK(input.dim() == other.dim(),
               "{}: Expected other to have the same number of dimensions as input, but got "
               "other.ndim equal to {} and input.ndim is equal to {}",
               f, other.dim(), input.dim());
  const std::vector<int64_t> batch = meta::batch_shape(input);
  AMPJIT_CHECK(meta::batch_shape(tau, 1) == batch,
               "{}: Expected batch dimensions of tau to be equal to input.shape[:-2], but got {}",
               f, shape_str(meta::batch_shape(tau, 1)));
  AMPJIT_CHECK(meta::batch_shape(other) == batch,
               "{}: Expected batch dimensions of other to be equal to input.shape[:-2], but got {}",
               f, shape_str(meta::batch_shape(other)));
  AMPJIT_CHECK(tau.dtype() == input.dtype(),
               "{}: Expected input and tau to have the same dtype, but input has dtype {} and tau "
               "has dtype {}",
               f, torch_type_name(input.dtype()), torch_type_name(tau.dtype()));
  AMPJIT_CHECK(other.dtype() == input.dtype(),
               "{}: Expected input and other to have the same dtype, but input has dtype {} and "
               "other has dtype {}",
               f, torch_type_name(input.dtype()), torch_type_name(other.dtype()));
  meta::check_floating(input, f);
  Tensor c = column_major_copy(other);
  const int64_t m = c.size(-2), n = c.size(-1), k = tau.size(-1), ma = input.size(-2);
  const int64_t nb = meta::product(batch);
  if (c.numel() == 0 || k == 0) return c;
  const Tensor a = column_major_copy(input.narrow(-1, 0, k));
  const Tensor t = tau.contiguous();
  dispatch_lapack(input.dtype(), f, [&]<typename T>() {
    const char s = left ? 'L' : 'R', tr = transpose ? 'T' : 'N';
    const int lda = static_cast<int>(std::max<int64_t>(1, ma)), ldc = static_cast<int>(m);
    T query = 0;
    Lapack<T>::ormqr(s, tr, lapack_dim(m, f), lapack_dim(n, f), lapack_dim(k, f), matrix<T>(a, 0),
                     lda, t.data<T>(), matrix<T>(c, 0), ldc, &query, -1);
    std::vector<T> work(static_cast<size_t>(workspace(query)));
    for (int64_t b = 0; b < nb; ++b)
      Lapack<T>::ormqr(s, tr, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                       matrix<T>(a, b), lda, t.data<T>() + b * k, matrix<T>(c, b), ldc, work.data(),
                       static_cast<int>(work.size()));
  });
  return c;
}

// ---- SVD and symmetric eigenproblems --------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> svd_k(const Tensor& A, bool full_matrices, bool compute_uv,
                                         const std::optional<std::string>& driver) {
  const char* f = "linalg.svd";
  meta::check_is_matrix(A, f);
  meta::check_floating(A, f);
  AMPJIT_CHECK(!driver,
               "torch.linalg.svd: keyword argument `driver=` is only supported on CUDA inputs with "
               "cuSOLVER backend.");
  const std::vector<int64_t> batch = meta::batch_shape(A);
  const int64_t m = A.size(-2), n = A.size(-1), k = std::min(m, n), nb = meta::product(batch);
  const int64_t ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor a = column_major_copy(A);
  Tensor S = Tensor::empty(with(batch, {k}), A.dtype());
  Tensor U = empty0(A.dtype()), Vh = empty0(A.dtype());
  if (compute_uv) {
    U = column_major_empty(batch, m, ucols, A.dtype());
    Vh = column_major_empty(batch, vrows, n, A.dtype());
  }
  if (k == 0) {  // an empty matrix: no singular values; U and V^H are (the top of) identities
    if (compute_uv) {
      U.fill_(0);
      Vh.fill_(0);
      if (full_matrices) {
        dispatch_lapack(A.dtype(), f, [&]<typename T>() {
          for (int64_t b = 0; b < nb; ++b) {
            for (int64_t i = 0; i < m; ++i) matrix<T>(U, b)[i * m + i] = T(1);
            for (int64_t i = 0; i < n; ++i) matrix<T>(Vh, b)[i * n + i] = T(1);
          }
        });
      }
    }
    return {U, S, Vh};
  }
  Tensor info = zeros_of(batch, ScalarType::Int32);
  dispatch_lapack(A.dtype(), f, [&]<typename T>() {
    const char jobz = compute_uv ? (full_matrices ? 'A' : 'S') : 'N';
    const int lda = static_cast<int>(m), ldu = static_cast<int>(m);
    const int ldvt = static_cast<int>(std::max<int64_t>(1, vrows));
    std::vector<int> iwork(static_cast<size_t>(8 * k));
    T dummy_u = 0, dummy_vt = 0;
    auto u_of = [&](int64_t b) { return compute_uv ? matrix<T>(U, b) : &dummy_u; };
    auto vt_of = [&](int64_t b) { return compute_uv ? matrix<T>(Vh, b) : &dummy_vt; };
    T query = 0;
    Lapack<T>::gesdd(jobz, lapack_dim(m, f), lapack_dim(n, f), matrix<T>(a, 0), lda, S.data<T>(),
                     u_of(0), ldu, vt_of(0), ldvt, &query, -1, iwork.data());
    std::vector<T> work(static_cast<size_t>(workspace(query)));
    for (int64_t b = 0; b < nb; ++b)
      info.data<int32_t>()[b] = Lapack<T>::gesdd(
          jobz, static_cast<int>(m), static_cast<int>(n), matrix<T>(a, b), lda, S.data<T>() + b * k,
          u_of(b), ldu, vt_of(b), ldvt, work.data(), static_cast<int>(work.size()), iwork.data());
  });
  meta::check_lapack_errors(info, "linalg.svd", A.dim() == 2);
  return {U, S, Vh};
}

std::tuple<Tensor, Tensor> eigh_k(const Tensor& A, const std::string& uplo) {
  const char* f = "linalg.eigh";
  meta::check_square(A, f);
  meta::check_uplo(uplo);
  meta::check_floating(A, f);
  const std::vector<int64_t> batch = meta::batch_shape(A);
  const int64_t n = A.size(-1), nb = meta::product(batch);
  Tensor V = column_major_copy(A);
  Tensor L = Tensor::empty(with(batch, {n}), A.dtype());
  if (n == 0 || nb == 0) return {L, V};
  Tensor info = zeros_of(batch, ScalarType::Int32);
  dispatch_lapack(A.dtype(), f, [&]<typename T>() {
    const char ul = static_cast<char>(std::toupper(uplo[0]));
    T query = 0;
    int iquery = 0;
    Lapack<T>::syevd('V', ul, lapack_dim(n, f), matrix<T>(V, 0), static_cast<int>(n), L.data<T>(),
                     &query, -1, &iquery, -1);
    std::vector<T> work(static_cast<size_t>(workspace(query)));
    std::vector<int> iwork(static_cast<size_t>(std::max(1, iquery)));
    for (int64_t b = 0; b < nb; ++b)
      info.data<int32_t>()[b] = Lapack<T>::syevd(
          'V', ul, static_cast<int>(n), matrix<T>(V, b), static_cast<int>(n), L.data<T>() + b * n,
          work.data(), static_cast<int>(work.size()), iwork.data(), static_cast<int>(iwork.size()));
  });
  meta::check_lapack_errors(info, f, A.dim() == 2);
  return {L, V};
}

// Note [Real eigendecompositions only]
// geev's eigenvalues of a real matrix come in complex-conjugate pairs, and torch returns them
// (and the eigenvectors) as complex tensors whatever they are. ampjit has no complex dtype: a
// matrix whose spectrum is real gets its eigenvalues and (unit-norm, real) eigenvectors as real
// tensors of its dtype; any other raises NotImplementedError naming the complex results.
std::tuple<Tensor, Tensor> eig_k(const Tensor& A) {
  const char* f = "linalg.eig";
  meta::check_square(A, f);
  meta::check_floating(A, f);
  const std::vector<int64_t> batch = meta::batch_shape(A);
  const int64_t n = A.size(-1), nb = meta::product(batch);
  Tensor a = column_major_copy(A);
  Tensor L = Tensor::empty(with(batch, {n}), A.dtype());
  Tensor V = column_major_empty(batch, n, n, A.dtype());
  if (n == 0 || nb == 0) return {L, V};
  Tensor info = zeros_of(batch, ScalarType::Int32);
  bool complex_spectrum = false;
  dispatch_lapack(A.dtype(), f, [&]<typename T>() {
    std::vector<T> wi(static_cast<size_t>(n));
    T dummy = 0, query = 0;
    const int ni = lapack_dim(n, f);
    Lapack<T>::geev('N', 'V', ni, matrix<T>(a, 0), ni, L.data<T>(), wi.data(), &dummy, 1,
                    matrix<T>(V, 0), ni, &query, -1);
    std::vector<T> work(static_cast<size_t>(workspace(query)));
    for (int64_t b = 0; b < nb && !complex_spectrum; ++b) {
      info.data<int32_t>()[b] =
          Lapack<T>::geev('N', 'V', ni, matrix<T>(a, b), ni, L.data<T>() + b * n, wi.data(), &dummy,
                          1, matrix<T>(V, b), ni, work.data(), static_cast<int>(work.size()));
      complex_spectrum = std::any_of(wi.begin(), wi.end(), [](T x) { return x != T(0); });
    }
  });
  meta::check_lapack_errors(info, f, A.dim() == 2);
  AMPJIT_CHECK_T(NotImplementedError, !complex_spectrum,
                 "linalg.eig: the matrix has complex eigenvalues, and ampjit has no complex dtype "
                 "for the complex results torch returns (Note [Real eigendecompositions only])");
  return {L, V};
}

// ---- least squares --------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor, Tensor> lstsq_k(const Tensor& A, const Tensor& B,
                                                   std::optional<double> rcond,
                                                   const std::optional<std::string>& driver_arg) {
  const char* f = "torch.linalg.lstsq";
  AMPJIT_CHECK(A.dim() >= 2, "{}: input must have at least 2 dimensions.", f);
  AMPJIT_CHECK(B.dim() >= 1, "{}: other must have at least 1 dimension.", f);
  AMPJIT_CHECK(A.dtype() == B.dtype(),
               "{}: Expected input and other to have the same dtype, but got input's dtype {} and "
               "other's dtype {}",
               f, torch_type_name(A.dtype()), torch_type_name(B.dtype()));
  const int64_t dim_diff = A.dim() - B.dim();
  AMPJIT_CHECK(0 <= dim_diff && dim_diff <= 1,
               "{}: input.dim() must be greater or equal to other.dim() and (input.dim() - "
               "other.dim()) <= 1",
               f);
  const bool vector_case = dim_diff == 1;
  const Tensor B2 = vector_case ? B.unsqueeze(-1) : B;
  AMPJIT_CHECK(A.size(-2) == B2.size(-2), "{}: input.size(-2) should match other.size({})", f,
               vector_case ? -1 : -2);
  meta::check_floating(A, f);
  const std::string driver = driver_arg.value_or("gelsy");
  AMPJIT_CHECK(driver == "gels" || driver == "gelsy" || driver == "gelsd" || driver == "gelss",
               "{}: parameter `driver` should be one of (gels, gelsy, gelsd, gelss)", f);
  const std::vector<int64_t> batch = meta::broadcast_batch(A, B2, f);
  const int64_t m = A.size(-2), n = A.size(-1), nrhs = B2.size(-1), k = std::min(m, n);
  const int64_t rows = std::max(m, n), nb = meta::product(batch);
  const double eps = A.dtype() == ScalarType::Float32 ? std::numeric_limits<float>::epsilon()
                                                      : std::numeric_limits<double>::epsilon();
  const double rc = rcond.value_or(eps * static_cast<double>(std::max(m, n)));
  Tensor a = column_major_copy(A, batch);
  // B padded to max(m, n) rows: LAPACK writes the n rows of the solution there.
  Tensor x = column_major_empty(batch, rows, nrhs, A.dtype());
  x.fill_(0);
  x.narrow(-2, 0, m).copy_(B2.expand(with(batch, {m, nrhs})));
  const bool has_rank = driver != "gels", has_sv = driver == "gelsd" || driver == "gelss";
  Tensor rank = has_rank ? zeros_of(batch, ScalarType::Int64) : empty0(ScalarType::Int64);
  Tensor sv = has_sv ? zeros_of(with(batch, {k}), A.dtype()) : empty0(A.dtype());
  Tensor info = zeros_of(batch, ScalarType::Int32);
  if (m > 0 && n > 0 && nrhs > 0 && nb > 0) {
    dispatch_lapack(A.dtype(), f, [&]<typename T>() {
      const int mi = lapack_dim(m, f), ni = lapack_dim(n, f), ri = lapack_dim(nrhs, f);
      const int lda = mi, ldb = static_cast<int>(rows);
      const T rct = static_cast<T>(rc);
      std::vector<int> jpvt(static_cast<size_t>(n));
      int r = 0;
      T query = 0;
      int iquery = 0;
      T* s0 = has_sv ? sv.data<T>() : nullptr;
      if (driver == "gels")
        Lapack<T>::gels(mi, ni, ri, matrix<T>(a, 0), lda, matrix<T>(x, 0), ldb, &query, -1);
      else if (driver == "gelsy")
        Lapack<T>::gelsy(mi, ni, ri, matrix<T>(a, 0), lda, matrix<T>(x, 0), ldb, jpvt.data(), rct,
                         &r, &query, -1);
      else if (driver == "gelsd")
        Lapack<T>::gelsd(mi, ni, ri, matrix<T>(a, 0), lda, matrix<T>(x, 0), ldb, s0, rct, &r,
                         &query, -1, &iquery);
      else
        Lapack<T>::gelss(mi, ni, ri, matrix<T>(a, 0), lda, matrix<T>(x, 0), ldb, s0, rct, &r,
                         &query, -1);
      std::vector<T> work(static_cast<size_t>(workspace(query)));
      std::vector<int> iwork(static_cast<size_t>(std::max(1, iquery)));
      const int lw = static_cast<int>(work.size());
      for (int64_t b = 0; b < nb; ++b) {
        T* ab = matrix<T>(a, b);
        T* xb = matrix<T>(x, b);
        T* sb = has_sv ? sv.data<T>() + b * k : nullptr;
        int code = 0;
        if (driver == "gels") {
          code = Lapack<T>::gels(mi, ni, ri, ab, lda, xb, ldb, work.data(), lw);
        } else if (driver == "gelsy") {
          std::fill(jpvt.begin(), jpvt.end(), 0);  // no column is fixed in front
          code =
              Lapack<T>::gelsy(mi, ni, ri, ab, lda, xb, ldb, jpvt.data(), rct, &r, work.data(), lw);
        } else if (driver == "gelsd") {
          code = Lapack<T>::gelsd(mi, ni, ri, ab, lda, xb, ldb, sb, rct, &r, work.data(), lw,
                                  iwork.data());
        } else {
          code = Lapack<T>::gelss(mi, ni, ri, ab, lda, xb, ldb, sb, rct, &r, work.data(), lw);
        }
        info.data<int32_t>()[b] = code;
        if (has_rank) rank.data<int64_t>()[b] = r;
      }
    });
  }
  meta::check_lapack_errors(info, f, A.dim() == 2);
  // Residuals: the squared norms of rows n..m of what LAPACK left in x, where it leaves them (a
  // tall system, a driver other than gelsy, and for gelsd/gelss a full-rank matrix).
  Tensor residuals = empty0(A.dtype());
  if (m > n && driver != "gelsy") {
    bool full_rank = true;
    if (has_sv)
      for (int64_t b = 0; b < nb; ++b) full_rank = full_rank && rank.data<int64_t>()[b] == n;
    if (full_rank) {
      residuals = zeros_of(with(batch, {nrhs}), A.dtype());
      dispatch_lapack(A.dtype(), f, [&]<typename T>() {
        for (int64_t b = 0; b < nb; ++b)
          for (int64_t j = 0; j < nrhs; ++j) {
            T s = 0;
            const T* col = matrix<T>(x, b) + j * rows;
            for (int64_t i = n; i < m; ++i) s += col[i] * col[i];
            residuals.data<T>()[b * nrhs + j] = s;
          }
      });
    }
  }
  Tensor solution = x.narrow(-2, 0, n);
  if (m == 0) solution.fill_(0);
  if (vector_case) solution = solution.squeeze(-1);
  return {solution, residuals, rank, sv};
}

// ---- LDL^T ------------------------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> ldl_factor_ex_k(const Tensor& self, bool hermitian,
                                                   bool check_errors) {
  const char* f = "torch.linalg.ldl_factor_ex";
  meta::check_square(self, f);
  meta::check_floating(self, f);
  (void)hermitian;  // a real symmetric matrix is hermitian: sytrf either way
  const std::vector<int64_t> batch = meta::batch_shape(self);
  const int64_t n = self.size(-1), nb = meta::product(batch);
  Tensor LD = column_major_copy(self);
  Tensor pivots = zeros_of(with(batch, {n}), ScalarType::Int32);
  Tensor info = zeros_of(batch, ScalarType::Int32);
  dispatch_lapack(self.dtype(), f, [&]<typename T>() {
    keep_triangle<T>(LD, false);  // torch factors tril(A) (uplo 'L'); the upper part stays zero
    if (n == 0 || nb == 0) return;
    T query = 0;
    Lapack<T>::sytrf('L', lapack_dim(n, f), matrix<T>(LD, 0), static_cast<int>(n),
                     pivots.data<int32_t>(), &query, -1);
    std::vector<T> work(static_cast<size_t>(workspace(query)));
    for (int64_t b = 0; b < nb; ++b)
      info.data<int32_t>()[b] = Lapack<T>::sytrf(
          'L', static_cast<int>(n), matrix<T>(LD, b), static_cast<int>(n),
          pivots.data<int32_t>() + b * n, work.data(), static_cast<int>(work.size()));
  });
  if (check_errors) meta::check_lapack_errors(info, f, self.dim() == 2);
  return {LD, pivots, info};
}

Tensor ldl_solve_k(const Tensor& LD, const Tensor& pivots, const Tensor& B, bool hermitian) {
  const char* f = "torch.linalg.ldl_solve";
  meta::check_square(LD, f, "LD");
  meta::check_floating(LD, f);
  AMPJIT_CHECK(B.dim() >= 2,
               "{}: Expected B to have at least 2 dimensions, but it has {} dimensions.", f,
               B.dim());
  const std::vector<int64_t> pshape(LD.sizes().begin(), LD.sizes().end() - 1);
  AMPJIT_CHECK(std::vector<int64_t>(pivots.sizes().begin(), pivots.sizes().end()) == pshape,
               "{}: Expected LD.shape[:-1] and pivots.shape to be the same, but got pivots with "
               "shape {} instead",
               f, shape_str(pivots.sizes()));
  AMPJIT_CHECK(pivots.dtype() == ScalarType::Int32 || pivots.dtype() == ScalarType::Int64,
               "{}: Expected pivots to be integers. Got {}", f, torch_type_name(pivots.dtype()));
  AMPJIT_CHECK(LD.dtype() == B.dtype(), "{}: LD dtype{} does not match b dtype {}", f,
               torch_type_name(LD.dtype()), torch_type_name(B.dtype()));
  AMPJIT_CHECK(LD.size(-1) == B.size(-2),
               "{}: Incompatible shapes of A and B for the equation AX = B ({}x{} and {}x{})", f,
               LD.size(-2), LD.size(-1), B.size(-2), B.size(-1));
  (void)hermitian;
  const std::vector<int64_t> batch = meta::broadcast_batch(LD, B, f);
  const int64_t n = LD.size(-1), nrhs = B.size(-1), nb = meta::product(batch);
  Tensor X = column_major_copy(B, batch);
  if (X.numel() == 0 || n == 0) return X;
  const Tensor ld = column_major_copy(LD, batch);
  Tensor piv = Tensor::empty(with(batch, {n}), ScalarType::Int32);
  piv.copy_(pivots.expand(with(batch, {n})));
  dispatch_lapack(LD.dtype(), f, [&]<typename T>() {
    for (int64_t b = 0; b < nb; ++b)
      Lapack<T>::sytrs('L', lapack_dim(n, f), lapack_dim(nrhs, f), matrix<T>(ld, b),
                       static_cast<int>(n), piv.data<int32_t>() + b * n, matrix<T>(X, b),
                       static_cast<int>(n));
  });
  return X;
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(linalg_lu_factor_ex, cpu::lu_factor_ex_k)
AMPJIT_KERNEL(lu_unpack, cpu::lu_unpack_k)
AMPJIT_KERNEL(linalg_solve_triangular, cpu::solve_triangular_k)
AMPJIT_KERNEL(linalg_cholesky_ex, cpu::cholesky_ex_k)
AMPJIT_KERNEL(linalg_qr, cpu::qr_k)
AMPJIT_KERNEL(geqrf, cpu::geqrf_k)
AMPJIT_KERNEL(linalg_householder_product, cpu::householder_product_k)
AMPJIT_KERNEL(ormqr, cpu::ormqr_k)
AMPJIT_KERNEL(_linalg_svd, cpu::svd_k)
AMPJIT_KERNEL(linalg_eigh, cpu::eigh_k)
AMPJIT_KERNEL(linalg_eig, cpu::eig_k)
AMPJIT_KERNEL(linalg_lstsq, cpu::lstsq_k)
AMPJIT_KERNEL(linalg_ldl_factor_ex, cpu::ldl_factor_ex_k)
AMPJIT_KERNEL(linalg_ldl_solve, cpu::ldl_solve_k)
