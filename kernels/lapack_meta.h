// What torch.linalg's LAPACK-backed ops decide before LAPACK runs (runtime/ops/linalg_lapack.def):
// torch's argument checks with its messages (aten/src/ATen/native/LinearAlgebraUtils.h,
// BatchLinearAlgebra.cpp), the batch shapes two operands broadcast to, and the reading of the
// `info` codes LAPACK returns (torch's _linalg_check_errors). The CPU kernels are
// kernels/cpu/lapack_ops.cpp; the decompositions built on them (frontend/ampjit/_decompositions.py)
// raise the same messages.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/linalg_meta.h"
#include "runtime/error.h"
#include "runtime/tensor.h"

namespace ampjit::meta {

// checkIsMatrix: "linalg.cholesky: The input tensor A must have at least 2 dimensions."
inline void check_is_matrix(const Tensor& A, std::string_view f, std::string_view name = "A") {
  AMPJIT_CHECK(A.dim() >= 2, "{}: The input tensor {} must have at least 2 dimensions.", f, name);
}

// squareCheckInputs.
inline void check_square(const Tensor& A, std::string_view f, std::string_view name = "A") {
  check_is_matrix(A, f, name);
  AMPJIT_CHECK(A.size(-1) == A.size(-2),
               "{}: {} must be batches of square matrices, but they are {} by {} matrices", f, name,
               A.size(-2), A.size(-1));
}

// checkFloatingOrComplex. LAPACK computes in float32 and float64 only; torch's other floating
// types (float16, bfloat16) pass this check and then have no kernel, as in torch.
inline void check_floating(const Tensor& A, std::string_view f) {
  AMPJIT_CHECK(A.is_floating_point(),
               "{}: Expected a floating point or complex tensor as input. Got {}", f,
               torch_type_name(A.dtype()));
  AMPJIT_CHECK(A.dtype() == ScalarType::Float32 || A.dtype() == ScalarType::Float64,
               "{}: not implemented for '{}'", f, torch_type_name(A.dtype()));
}

inline void check_same_dtype(const Tensor& A, const Tensor& B, std::string_view f,
                             std::string_view a = "A", std::string_view b = "B") {
  AMPJIT_CHECK(A.dtype() == B.dtype(),
               "{}: Expected {} and {} to have the same dtype, but found {} of type {} and {} of "
               "type {} instead.",
               f, a, b, a, torch_type_name(A.dtype()), b, torch_type_name(B.dtype()));
}

// The dimensions before the last two.
inline std::vector<int64_t> batch_shape(const Tensor& A, int64_t matrix_dims = 2) {
  return {A.sizes().begin(), A.sizes().end() - matrix_dims};
}

inline int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t x : s) n *= x;
  return n;
}

// The batch shape of A [..., m, n] and B [..., p, q] broadcast together.
inline std::vector<int64_t> broadcast_batch(const Tensor& A, const Tensor& B, std::string_view f) {
  const std::vector<int64_t> a = batch_shape(A), b = batch_shape(B);
  const DimVector s = broadcast_shapes(a, b, std::string(f).c_str());
  return {s.begin(), s.end()};
}

// checkInputsSolver: A square, both matrices, shapes compatible for AX = B (left) or XA = B.
inline void check_solver_inputs(const Tensor& A, const Tensor& B, bool left, std::string_view f) {
  check_square(A, f, "A");
  check_is_matrix(B, f, "B");
  AMPJIT_CHECK(left ? A.size(-1) == B.size(-2) : A.size(-1) == B.size(-1),
               "{}: Incompatible shapes of A and B for the equation {} ({}x{} and {}x{})", f,
               left ? "AX = B" : "XA = B", A.size(-2), A.size(-1), B.size(-2), B.size(-1));
}

// torch's _linalg_check_errors: the first nonzero LAPACK `info` of a batch as torch's error.
// `infos` holds int32 codes; `is_matrix` drops the "(Batch element k)" of an unbatched call.
inline void check_lapack_errors(const Tensor& infos, std::string_view api, bool is_matrix) {
  const int64_t n = infos.numel();
  if (n == 0) return;
  const Tensor c = infos.contiguous();
  const int32_t* p = c.data<int32_t>();
  const int32_t* first = std::find_if(p, p + n, [](int32_t x) { return x != 0; });
  if (first == p + n) return;
  const int32_t info = *first;
  const std::string batch =
      is_matrix ? std::string() : fmt::format(": (Batch element {})", first - p);
  auto has = [&](std::string_view s) { return api.find(s) != std::string_view::npos; };
  if (info < 0) {
    AMPJIT_CHECK_T(LinAlgError, !has("svd"),
                   "{}{}: The algorithm failed to converge because the input matrix contained "
                   "non-finite values.",
                   api, batch);
    throw Error(fmt::format("{}{}: Argument {} has illegal value.", api, batch, -info));
  }
  if (has("inv"))
    throw LinAlgError(
        fmt::format("{}{}: The diagonal element {} is zero, the inversion could not "
                    "be completed because the input matrix is singular.",
                    api, batch, info));
  if (has("solve"))
    throw LinAlgError(
        fmt::format("{}{}: The solver failed because the input matrix is singular.", api, batch));
  if (has("cholesky"))
    throw LinAlgError(
        fmt::format("{}{}: The factorization could not be completed because the input is not "
                    "positive-definite (the leading minor of order {} is not positive-definite).",
                    api, batch, info));
  if (has("svd"))
    throw LinAlgError(fmt::format(
        "{}{}: The algorithm failed to converge because the input matrix is ill-conditioned or "
        "has too many repeated singular values (error code: {}).",
        api, batch, info));
  if (has("eig") || has("syevd"))
    throw LinAlgError(fmt::format(
        "{}{}: The algorithm failed to converge because the input matrix is ill-conditioned or "
        "has too many repeated eigenvalues (error code: {}).",
        api, batch, info));
  if (has("lstsq"))
    throw LinAlgError(fmt::format(
        "{}{}: The least squares solution could not be computed because the input matrix does "
        "not have full rank (error code: {}).",
        api, batch, info));
  if (has("lu_factor"))
    throw Error(fmt::format(
        "{}{}: U[{},{}] is zero and using it on lu_solve would result in a division by zero. If "
        "you still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
        "linalg.lu_factor_ex(A, pivot)",
        api, batch, info, info));
  throw Error(fmt::format("{}: Unknown error code: {}.", api, info));
}

// linalg.qr's mode: (compute Q, reduced).
inline std::pair<bool, bool> parse_qr_mode(std::string_view mode) {
  if (mode == "reduced") return {true, true};
  if (mode == "complete") return {true, false};
  if (mode == "r") return {false, true};
  throw Error(fmt::format(
      "qr received unrecognized mode '{}' but expected one of 'reduced' (default), 'r', or "
      "'complete'",
      mode));
}

inline void check_uplo(std::string_view uplo) {
  AMPJIT_CHECK(
      uplo.size() == 1 && (uplo[0] == 'U' || uplo[0] == 'L' || uplo[0] == 'u' || uplo[0] == 'l'),
      "Expected UPLO argument to be 'L' or 'U', but got {}", uplo);
}

}  // namespace ampjit::meta
