// Matrix products and convolutions on CUDA (runtime/ops/linalg.def, runtime/ops/conv.def): mm,
// bmm, mv, dot, matmul, addmm, addmv, addbmm, baddbmm, linear and their in-place and out= forms,
// conv1d and conv2d. Every one is a batched GEMM through `gemm_into` (one cuBLAS call, Note
// [Row-major products on cuBLAS]); a convolution is im2col (blas.cu) plus GEMMs. Shapes, argument
// checks and messages mirror the CPU kernels (kernels/cpu/matmul_ops.cpp, conv_ops.cpp); the
// dtypes are torch's CUDA ones (Note [Floating products only on CUDA]).
#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/onednn.h"
#include "kernels/cuda/blas.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"

namespace ampjit::cuda {
namespace {

using cpu::onednn::cpp_type_name;
using Dims = std::vector<int64_t>;

// Note [Floating products only on CUDA]
// torch's CUDA products and convolutions take float16, bfloat16, float32 and float64 only; any
// other dtype raises NotImplementedError naming the ATen kernel that refused it, after the shape
// checks: "addmm_cuda" (mm, addmm, addbmm, linear, matmul of matrices), "baddbmm_cuda" (bmm,
// baddbmm, batched matmul), "addmv_impl_cuda" (mv, addmv), "dot" and "slow_conv2d_cuda"
// (conv1d, conv2d). ampjit raises the same messages (its CPU kernels do compute integer products,
// as torch's CPU does).
void check_floating(ScalarType dt, const char* torch_kernel) {
  AMPJIT_CHECK_T(NotImplementedError, is_floating(dt), "\"{}\" not implemented for '{}'",
                 torch_kernel, torch_type_name(dt));
}

cudaDataType blas_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return CUDA_R_16F;
    case ScalarType::BFloat16:
      return CUDA_R_16BF;
    case ScalarType::Float32:
      return CUDA_R_32F;
    default:
      return CUDA_R_64F;
  }
}

// Note [Row-major products on cuBLAS]
// cuBLAS is column-major, and a row-major [m, n] matrix is the column-major [n, m] one of its
// transpose; so C = A @ B is computed as C^T = B^T @ A^T, with B's data as cuBLAS's first operand
// and A's as its second. An operand whose matrices are row-major (unit column stride) is passed
// as stored (CUBLAS_OP_N, leading dimension its row stride); a column-major one (unit row
// stride: a transposed view, e.g. linear's weight.t()) is passed as stored with CUBLAS_OP_T
// (leading dimension its column stride); anything else is copied dense first. A single row or
// column may carry any stride along its unit dim, so strided vectors (mv, dot) need no copy.
// Batches are cuBLAS's strided batches, a batch stride of 0 broadcasting an operand over them
// (matmul's broadcast batch dims, a convolution's weight over its images).
//
// Note [One rounding in reduced-precision GEMMs]
// float16/bfloat16 products run on tensor cores with float32 accumulation (CUBLAS_COMPUTE_32F,
// alpha and beta in float32) and round once into the result, as the CPU kernels do. cuBLAS's
// default math mode would let split-K kernels reduce their partial sums in the output type
// (torch's allow_fp16/bf16_reduced_precision_reduction, on by default), rounding more than once;
// each GEMM here therefore sets CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION on top of the
// handle's CUBLAS_DEFAULT_MATH (which keeps float32 GEMMs off TF32, as torch's default). Setting
// the mode is a host-side store into the handle, so doing it per call costs nothing measurable.
// float64 computes in float64 (CUBLAS_COMPUTE_64F). The algorithm is CUBLAS_GEMM_DEFAULT: since
// cuBLAS 11 it uses tensor cores for float16/bfloat16 without being asked, while the deprecated
// CUBLAS_GEMM_DEFAULT_TENSOR_OP also allows CUBLAS_COMPUTE_32F_FAST_16F kernels, which would
// round float32 operands to float16.
constexpr cublasMath_t kGemmMathMode = static_cast<cublasMath_t>(
    CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);

// One [batch, rows, cols] GEMM operand as cuBLAS reads it (Note [Row-major products on cuBLAS]);
// `t` is the operand or the dense copy made of it, alive until the call is enqueued (stream order
// keeps a freed copy's memory from reuse before the GEMM ran: Note [One stream per device]).
struct BlasOperand {
  Tensor t;
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 0;
  int64_t batch_stride = 0;
};

std::optional<BlasOperand> as_blas_operand(const Tensor& t) {
  const int64_t rows = t.size(1), cols = t.size(2), rs = t.stride(1), cs = t.stride(2);
  const int64_t batch_stride = t.size(0) == 1 ? 0 : t.stride(0);
  if (cs == 1 || cols == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(cols, 1) : rs;
    if (ld >= std::max<int64_t>(cols, 1)) return BlasOperand{t, CUBLAS_OP_N, ld, batch_stride};
  }
  if (rs == 1 || rows == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(rows, 1) : cs;
    if (ld >= std::max<int64_t>(rows, 1)) return BlasOperand{t, CUBLAS_OP_T, ld, batch_stride};
  }
  return std::nullopt;
}

// `t` as cuBLAS reads it, copied dense when its layout is not one cuBLAS takes; a broadcast batch
// (stride 0) stays a broadcast, only its one matrix being copied.
BlasOperand blas_operand(const Tensor& t) {
  if (std::optional<BlasOperand> o = as_blas_operand(t)) return *o;
  const Tensor dense = t.stride(0) == 0 && t.size(0) > 1
                           ? t.select(0, 0).contiguous().unsqueeze(0).expand(t.sizes())
                           : t.contiguous();
  return *as_blas_operand(dense);
}

// cuBLAS's GEMM interface takes 32-bit sizes and leading dimensions.
int blas_int(int64_t v, const char* what) {
  AMPJIT_CHECK(v <= INT_MAX, "CUDA matrix product: {} = {} exceeds the 32-bit range of cuBLAS",
               what, v);
  return static_cast<int>(v);
}

// out[i] = alpha * a[i] @ b[i] + beta * out[i] for a [batch, m, k], b [batch, k, n] and out
// [batch, m, n] of one floating dtype on one device, k > 0, out's matrices row-major (unit column
// stride; any batch stride). beta == 0 never reads out, so NaNs there do not propagate (torch's
// beta == 0 semantics).
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, double alpha, double beta) {
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  const int64_t ldc = m == 1 ? n : out.stride(1);
  AMPJIT_CHECK((out.stride(2) == 1 || n == 1) && ldc >= n,
               "CUDA matrix product: the result's matrices must be row-major");
  const BlasOperand lhs = blas_operand(b), rhs = blas_operand(a);  // C^T = B^T @ A^T
  const ScalarType dt = out.dtype();
  const cudaDataType type = blas_type(dt);
  const bool f64 = dt == ScalarType::Float64;
  const float alpha_f = static_cast<float>(alpha), beta_f = static_cast<float>(beta);
  const void* alpha_p = f64 ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* beta_p = f64 ? static_cast<const void*>(&beta) : &beta_f;
  const cublasComputeType_t compute = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const int M = blas_int(n, "n"), N = blas_int(m, "m"), K = blas_int(k, "k");
  const int lda = blas_int(lhs.ld, "lda"), ldb = blas_int(rhs.ld, "ldb"),
            ldc_i = blas_int(ldc, "ldc");
  cublasHandle_t h = cublas_handle();
  AMPJIT_CUBLAS_CHECK(cublasSetMathMode(h, kGemmMathMode));
  if (batch == 1) {
    AMPJIT_CUBLAS_CHECK(cublasGemmEx(h, lhs.op, rhs.op, M, N, K, alpha_p, lhs.t.raw_data(), type,
                                     lda, rhs.t.raw_data(), type, ldb, beta_p, out.raw_data(), type,
                                     ldc_i, compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
  AMPJIT_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      h, lhs.op, rhs.op, M, N, K, alpha_p, lhs.t.raw_data(), type, lda, lhs.batch_stride,
      rhs.t.raw_data(), type, ldb, rhs.batch_stride, beta_p, out.raw_data(), type, ldc_i,
      out.stride(0), blas_int(batch, "batch"), compute, CUBLAS_GEMM_DEFAULT));
}

// A new [batch, m, n] = alpha * a @ b + beta * addend, with a [batch, m, k] and b [batch, k, n]
// of one dtype (either may have batch stride 0) and addend (undefined: none) broadcastable to the
// result, on a's device. The addend is copied into the result and the GEMM's beta adds it, so it
// is rounded once with the product.
Tensor gemm(const Tensor& a, const Tensor& b, const Tensor& addend, const Scalar& beta,
            const Scalar& alpha, const char* torch_kernel) {
  check_floating(a.dtype(), torch_kernel);
  Tensor out = Tensor::empty(Dims{a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  if (out.numel() == 0) return out;
  const bool accumulate = addend.defined() && beta.to_double() != 0;
  if (a.size(2) == 0) {  // an empty contraction (cuBLAS is not asked): beta * addend, or zeros
    if (accumulate) {
      DeviceGuard guard(out.device());
      launch_scale(make_iter(out, {addend}), beta.to_double());
    } else {
      out.fill_(0);
    }
    return out;
  }
  if (accumulate) out.copy_(addend);  // broadcasting
  gemm_into(out, a, b, alpha.to_double(), accumulate ? beta.to_double() : 0.0);
  return out;
}

Tensor as_batch1(const Tensor& t) {
  return t.unsqueeze(0);
}
Dims shape_of(IntArrayRef s) {
  return {s.begin(), s.end()};
}

// --- checks, with torch's messages (as the CPU kernels) -----------------------------------

void check_mm_shapes(const Tensor& m1, const Tensor& m2) {
  AMPJIT_CHECK(m1.size(1) == m2.size(0),
               "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", m1.size(0),
               m1.size(1), m2.size(0), m2.size(1));
}
void check_mm_dtypes(const Tensor& m1, const Tensor& m2) {
  AMPJIT_CHECK(m1.dtype() == m2.dtype(),
               "expected m1 and m2 to have the same dtype, but got: {} != {}",
               cpp_type_name(m1.dtype()), cpp_type_name(m2.dtype()));
}
void check_same_scalar_type(const Tensor& expected, const Tensor& found) {
  AMPJIT_CHECK(expected.dtype() == found.dtype(), "expected scalar type {} but found {}",
               torch_type_name(expected.dtype()), torch_type_name(found.dtype()));
}
void check_bmm(const Tensor& b1, const Tensor& b2) {
  AMPJIT_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  AMPJIT_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  AMPJIT_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
               "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: "
               "[{}, {}].",
               b1.size(0), b1.size(2), b2.size(0), b2.size(1));
  check_same_scalar_type(b1, b2);
}
// Out tensors of structured ops must already have the result's dtype.
Tensor write_out(Tensor out, const Tensor& result) {
  AMPJIT_CHECK(out.dtype() == result.dtype(),
               "Expected out tensor to have dtype {}, but got {} instead",
               cpp_type_name(result.dtype()), cpp_type_name(out.dtype()));
  cpu::resize_out(out, result.sizes());
  out.copy_(result);
  return out;
}

// --- matrix products ----------------------------------------------------------------------

Tensor mm_k(const Tensor& self, const Tensor& mat2) {
  AMPJIT_CHECK(self.dim() == 2, "self must be a matrix");
  AMPJIT_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  check_mm_shapes(self, mat2);
  check_mm_dtypes(self, mat2);
  return gemm(as_batch1(self), as_batch1(mat2), Tensor(), 0, 1, "addmm_cuda").squeeze(0);
}
Tensor mm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return write_out(out, mm_k(self, mat2));
}

// `self` (the addend of addmm and friends) may be a CPU scalar joining CUDA operands.
Tensor addmm_k(const Tensor& self_, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
               const Scalar& alpha) {
  AMPJIT_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got {}-D tensor", mat1.dim());
  AMPJIT_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got {}-D tensor", mat2.dim());
  check_mm_shapes(mat1, mat2);
  check_mm_dtypes(mat1, mat2);
  AMPJIT_CHECK(self_.dtype() == mat2.dtype(),
               "self and mat2 must have the same dtype, but got {} and {}",
               torch_type_name(self_.dtype()), torch_type_name(mat2.dtype()));
  const Tensor self = on_device(self_, mat1.device());
  const Tensor addend = self.expand(Dims{mat1.size(0), mat2.size(1)});
  return gemm(as_batch1(mat1), as_batch1(mat2), addend, beta, alpha, "addmm_cuda").squeeze(0);
}
Tensor addmm_inplace_k(Tensor self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                       const Scalar& alpha) {
  return cpu::write_result(self, addmm_k(self, mat1, mat2, beta, alpha), "addmm_", true);
}
Tensor addmm_out_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                   const Scalar& alpha, Tensor out) {
  return write_out(out, addmm_k(self, mat1, mat2, beta, alpha));
}

Tensor bmm_k(const Tensor& self, const Tensor& mat2) {
  check_bmm(self, mat2);
  return gemm(self, mat2, Tensor(), 0, 1, "baddbmm_cuda");
}
Tensor bmm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return write_out(out, bmm_k(self, mat2));
}

Tensor baddbmm_k(const Tensor& self_, const Tensor& batch1, const Tensor& batch2,
                 const Scalar& beta, const Scalar& alpha) {
  AMPJIT_CHECK(self_.dtype() == batch1.dtype() && self_.dtype() == batch2.dtype(),
               "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
               cpp_type_name(self_.dtype()), cpp_type_name(batch1.dtype()),
               cpp_type_name(batch2.dtype()));
  check_bmm(batch1, batch2);
  const Tensor self = on_device(self_, batch1.device());
  const Tensor addend = self.expand(Dims{batch1.size(0), batch1.size(1), batch2.size(2)});
  return gemm(batch1, batch2, addend, beta, alpha, "baddbmm_cuda");
}
Tensor baddbmm_inplace_k(Tensor self, const Tensor& batch1, const Tensor& batch2,
                         const Scalar& beta, const Scalar& alpha) {
  return cpu::write_result(self, baddbmm_k(self, batch1, batch2, beta, alpha), "baddbmm_", true);
}

// sum_b batch1[b] @ batch2[b] is one product of the batches laid side by side:
// [n, B*m] @ [B*m, p].
Tensor addbmm_k(const Tensor& self_, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                const Scalar& alpha) {
  AMPJIT_CHECK(batch1.dim() == 3, "batch1 must be a 3D tensor");
  AMPJIT_CHECK(batch2.dim() == 3, "batch2 must be a 3D tensor");
  AMPJIT_CHECK(batch1.size(0) == batch2.size(0),
               "batch1 and batch2 must have same number of batches, got {} and {}", batch1.size(0),
               batch2.size(0));
  AMPJIT_CHECK(batch1.size(2) == batch2.size(1),
               "Incompatible matrix sizes for bmm ({}x{} and {}x{})", batch1.size(1),
               batch1.size(2), batch2.size(1), batch2.size(2));
  check_same_scalar_type(batch1, batch2);
  AMPJIT_CHECK(self_.dtype() == batch1.dtype(), "expected scalar type {} but found {}",
               torch_type_name(batch1.dtype()), torch_type_name(self_.dtype()));
  const int64_t nb = batch1.size(0), n = batch1.size(1), m = batch1.size(2), p = batch2.size(2);
  const Tensor addend = on_device(self_, batch1.device()).expand(Dims{n, p});
  const Tensor a = batch1.permute(Dims{1, 0, 2}).reshape(Dims{n, nb * m});
  const Tensor b = batch2.reshape(Dims{nb * m, p});
  return gemm(as_batch1(a), as_batch1(b), addend, beta, alpha, "addmm_cuda").squeeze(0);
}

void check_mv(const Tensor& mat, const Tensor& vec, int64_t self_dim, int64_t self_size) {
  AMPJIT_CHECK(mat.dim() == 2 && vec.dim() == 1 && self_dim <= 1,
               "vector + matrix @ vector expected, got {}, {}, {}", self_dim, mat.dim(), vec.dim());
  AMPJIT_CHECK(mat.size(1) == vec.size(0), "size mismatch, got input ({}), mat ({}x{}), vec ({})",
               self_size, mat.size(0), mat.size(1), vec.size(0));
  check_same_scalar_type(mat, vec);
}
// mat @ vec as [1, n, m] @ [1, m, 1].
Tensor mv_gemm(const Tensor& mat, const Tensor& vec, const Tensor& addend, const Scalar& beta,
               const Scalar& alpha) {
  const Tensor col = vec.unsqueeze(1).unsqueeze(0);
  const Tensor add = addend.defined() ? addend.expand(Dims{mat.size(0)}).unsqueeze(1) : addend;
  return gemm(as_batch1(mat), col, add, beta, alpha, "addmv_impl_cuda").view(Dims{mat.size(0)});
}
Tensor mv_k(const Tensor& self, const Tensor& vec) {
  check_mv(self, vec, 1, self.dim() >= 1 ? self.size(0) : 1);
  return mv_gemm(self, vec, Tensor(), 0, 1);
}
Tensor addmv_k(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
               const Scalar& alpha) {
  check_mv(mat, vec, self.dim(), self.dim() >= 1 ? self.size(0) : 1);
  AMPJIT_CHECK(self.numel() == mat.size(0) || self.numel() == 1,
               "size mismatch, got input ({}), mat ({}x{}), vec ({})",
               self.dim() ? self.size(0) : 1, mat.size(0), mat.size(1), vec.size(0));
  check_same_scalar_type(mat, self);
  return mv_gemm(mat, vec, on_device(self, mat.device()), beta, alpha);
}

// dot as the [1, 1, n] @ [1, n, 1] product: cuBLAS accumulates it in float32 (float64 for
// float64), as the CPU's dot does, and the result stays on the device (cublasDot's host result
// would synchronize).
Tensor dot_k(const Tensor& self, const Tensor& other) {
  AMPJIT_CHECK(self.dim() == 1 && other.dim() == 1,
               "1D tensors expected, but got {}D and {}D tensors", self.dim(), other.dim());
  AMPJIT_CHECK(self.dtype() == other.dtype(),
               "dot : expected both vectors to have same dtype, but found {} and {}",
               torch_type_name(self.dtype()), torch_type_name(other.dtype()));
  AMPJIT_CHECK(
      self.numel() == other.numel(),
      "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number "
      "of elements, but got {} and {} elements respectively",
      self.numel(), other.numel(), self.numel(), other.numel());
  const Tensor row = self.unsqueeze(0).unsqueeze(0), col = other.unsqueeze(1).unsqueeze(0);
  return gemm(row, col, Tensor(), 0, 1, "dot").view(IntArrayRef{});
}

// As the CPU's matmul (Note [matmul's rank cases] in kernels/cpu/matmul_ops.cpp): dot, mv, mm,
// a folded N-D @ 1-D/2-D product, or one batched product over the broadcast batch dims (a fully
// broadcast operand keeps batch stride 0, which cuBLAS's strided batches take as it is).
Tensor matmul_k(const Tensor& t1, const Tensor& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  AMPJIT_CHECK(d1 > 0 && d2 > 0,
               "both arguments to matmul need to be at least 1D, but they are {}D and {}D", d1, d2);
  if (d1 == 1 && d2 == 1) return dot_k(t1, t2);
  if (d1 == 2 && d2 == 1) return mv_k(t1, t2);
  if (d1 == 1 && d2 == 2) return mm_k(t1.unsqueeze(0), t2).squeeze(0);
  if (d1 == 2 && d2 == 2) return mm_k(t1, t2);
  if (d1 >= 3 && d2 <= 2) {
    Dims out_shape = shape_of(t1.sizes().first(static_cast<size_t>(d1 - 1)));
    const Tensor folded = t1.reshape(Dims{-1, t1.size(-1)});
    if (d2 == 1) return mv_k(folded, t2).view(out_shape);
    out_shape.push_back(t2.size(1));
    return mm_k(folded, t2).view(out_shape);
  }
  const int64_t n = d1 > 1 ? t1.size(-2) : 1, m1 = t1.size(-1);
  const int64_t m2 = d2 > 1 ? t2.size(-2) : t2.size(0), p = d2 > 1 ? t2.size(-1) : 1;
  const IntArrayRef batch1 = d1 > 2 ? t1.sizes().first(static_cast<size_t>(d1 - 2)) : IntArrayRef();
  const IntArrayRef batch2 = d2 > 2 ? t2.sizes().first(static_cast<size_t>(d2 - 2)) : IntArrayRef();
  const DimVector batch = broadcast_shapes(batch1, batch2, "matmul");
  const int64_t nbatch = numel_of(batch);
  auto to3d = [&](const Tensor& mat, int64_t rows, int64_t cols) {
    Dims full = shape_of(batch);
    full.push_back(rows);
    full.push_back(cols);
    return mat.expand(full).reshape(Dims{nbatch, rows, cols});
  };
  const Tensor a = to3d(d1 == 1 ? t1.unsqueeze(0) : t1, n, m1);
  const Tensor b = to3d(d2 == 1 ? t2.unsqueeze(1) : t2, m2, p);
  check_bmm(a, b);
  Dims out_shape = shape_of(batch);
  if (d1 > 1) out_shape.push_back(n);
  if (d2 > 1) out_shape.push_back(p);
  return gemm(a, b, Tensor(), 0, 1, "baddbmm_cuda").view(out_shape);
}
Tensor matmul_out_k(const Tensor& t1, const Tensor& t2, Tensor out) {
  return write_out(out, matmul_k(t1, t2));
}

// linear: input [..., in] @ weight^T + bias in one GEMM: input's leading dims fold into the rows,
// weight^T is weight read column-major (no copy), and the bias, copied into the result, is added
// by the GEMM's beta = 1. A 1-D weight gives one output per row (no feature dim), as
// matmul(input, weight) does.
Tensor linear_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  AMPJIT_CHECK(weight.dim() <= 2, "t() expects a tensor with <= 2 dimensions, but self is {}D",
               weight.dim());
  AMPJIT_CHECK(input.dim() >= 1 && weight.dim() >= 1,
               "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
               input.dim(), weight.dim());
  if (bias) {
    AMPJIT_CHECK(bias->dtype() == weight.dtype(),
                 "self and mat2 must have the same dtype, but got {} and {}",
                 torch_type_name(bias->dtype()), torch_type_name(weight.dtype()));
  }
  const Tensor wt = weight.dim() == 2 ? weight.t() : weight.unsqueeze(1);
  const Tensor x2 = input.reshape(Dims{-1, input.size(-1)});
  check_mm_shapes(x2, wt);
  check_mm_dtypes(x2, wt);
  Dims out_shape = shape_of(input.sizes().first(static_cast<size_t>(input.dim() - 1)));
  if (weight.dim() == 2) out_shape.push_back(weight.size(0));
  Tensor addend;
  if (bias) {
    const Tensor b = on_device(*bias, input.device());
    const int64_t n = wt.size(1);
    const bool features_only =
        weight.dim() == 2 && b.dim() >= 1 && b.size(-1) == n && b.numel() == n;
    addend = features_only ? b.reshape(Dims{n}) : b.expand(out_shape).reshape(Dims{x2.size(0), n});
  }
  return gemm(as_batch1(x2), as_batch1(wt), addend, 1, 1, "addmm_cuda").view(out_shape);
}

// --- convolutions ---------------------------------------------------------------------------

// torch accepts one value for every spatial dim, or one per dim.
void expand_param(const char* name, const Dims& v, int nsp, int64_t* dst) {
  AMPJIT_CHECK(v.size() == 1 || v.size() == static_cast<size_t>(nsp),
               "expected {} to be a single integer value or a list of {} values to match the "
               "convolution dimensions, but got {}={}",
               name, nsp, name, shape_str(v));
  for (int i = 0; i < nsp; ++i) dst[i] = v.size() == 1 ? v[0] : v[i];
}

std::string join_x(const int64_t* v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

// Note [Convolution as im2col + GEMM]
// Each group of a convolution is weight_g [OC/G, C/G*KH*KW] @ columns_g [C/G*KH*KW, OH*OW] per
// image, with the columns from im2col (blas.cu) and the result written in place into the output
// [N, OC, OH*OW]; a bias is copied into the output first and added by the GEMM's beta = 1, so
// it rounds once with the product (as the CPU's float32 bias does). The GEMMs are batched over
// the images (the weight broadcast with batch stride 0), one call per group, or over the groups,
// one call per image, whichever makes fewer calls (depthwise convolutions have many groups).
// The column matrix of a batch is KH*KW times the input, so images go through it in chunks of at
// most kColumnBytes; a 1x1 convolution with unit stride and no padding is its own column matrix
// and skips im2col. conv1d is conv2d over a height of 1.
constexpr int64_t kColumnBytes = int64_t{256} << 20;

struct Conv2dGeometry {
  int64_t n, c, h, w, oc, kh, kw, oh, ow, groups;
  int64_t stride[2], padding[2], dilation[2];
};

// y [N, OC, OH, OW] (dense; holds the bias when has_bias) += conv(x [N, C, H, W], w [OC, C/G,
// KH, KW]), x and w dense.
void conv2d_gemm(const Tensor& x, const Tensor& w, const Tensor& y, const Conv2dGeometry& g,
                 bool has_bias) {
  const int64_t kk = g.kh * g.kw, ohw = g.oh * g.ow, ocg = g.oc / g.groups;
  const int64_t rows = g.c / g.groups * kk;  // the GEMM's contraction
  const bool direct =
      kk == 1 && g.stride[0] == 1 && g.stride[1] == 1 && g.padding[0] == 0 && g.padding[1] == 0;
  const int64_t image_bytes = g.c * kk * ohw * static_cast<int64_t>(x.itemsize());
  const int64_t chunk =
      direct ? g.n : std::clamp<int64_t>(kColumnBytes / std::max<int64_t>(image_bytes, 1), 1, g.n);
  const Tensor columns =
      direct ? Tensor() : Tensor::empty(Dims{chunk, g.c * kk, ohw}, x.dtype(), x.device());
  const Tensor weights = w.view(Dims{g.groups, ocg, rows});
  const double beta = has_bias ? 1.0 : 0.0;
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t nc = std::min(chunk, g.n - n0);
    const Tensor images = x.narrow(0, n0, nc);
    Tensor col;
    if (direct) {
      col = images.view(Dims{nc, g.c, ohw});
    } else {
      col = columns.narrow(0, 0, nc);
      Im2colArgs a;
      a.input = images.raw_data();
      a.columns = col.raw_data();
      a.dtype = dt(x.dtype());
      a.batch = nc;
      a.channels = g.c;
      a.height = g.h;
      a.width = g.w;
      a.kernel_h = g.kh;
      a.kernel_w = g.kw;
      a.out_h = g.oh;
      a.out_w = g.ow;
      a.stride_h = g.stride[0];
      a.stride_w = g.stride[1];
      a.pad_h = g.padding[0];
      a.pad_w = g.padding[1];
      a.dilation_h = g.dilation[0];
      a.dilation_w = g.dilation[1];
      DeviceGuard guard(x.device());
      launch_im2col(a);
    }
    const Tensor col_g = col.view(Dims{nc, g.groups, rows, ohw});
    const Tensor y_g = y.narrow(0, n0, nc).view(Dims{nc, g.groups, ocg, ohw});
    if (g.groups <= nc) {
      for (int64_t gi = 0; gi < g.groups; ++gi) {
        const Tensor wg = weights.select(0, gi).unsqueeze(0).expand(Dims{nc, ocg, rows});
        gemm_into(y_g.select(1, gi), wg, col_g.select(1, gi), 1.0, beta);
      }
    } else {
      for (int64_t i = 0; i < nc; ++i)
        gemm_into(y_g.select(0, i), weights, col_g.select(0, i), 1.0, beta);
    }
  }
}

// conv1d / conv2d (nsp = 1 / 2), batched or unbatched, with the CPU kernel's checks and messages.
Tensor convolution(const char* op, int nsp, const Tensor& input_, const Tensor& weight,
                   const std::optional<Tensor>& bias, const Dims& stride, const Dims& padding,
                   const Dims& dilation, int64_t groups) {
  int64_t st[2], pad[2], dil[2];
  expand_param("stride", stride, nsp, st);
  expand_param("padding", padding, nsp, pad);
  expand_param("dilation", dilation, nsp, dil);
  AMPJIT_CHECK(input_.dim() == nsp + 1 || input_.dim() == nsp + 2,
               "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
               nsp + 1, nsp + 2, op, input_.shape_str());
  const bool unbatched = input_.dim() == nsp + 1;
  const Tensor input = unbatched ? input_.unsqueeze(0) : input_;
  AMPJIT_CHECK(
      weight.dim() == nsp + 2,
      "Expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional input of "
      "size {} instead",
      weight.dim(), weight.dim(), weight.shape_str(), input.dim(), input.shape_str());
  for (int i = 0; i < nsp; ++i) {
    AMPJIT_CHECK(st[i] > 0, "non-positive stride is not supported");
    AMPJIT_CHECK(pad[i] >= 0, "negative padding is not supported");
    AMPJIT_CHECK(dil[i] > 0, "dilation should be greater than zero");
  }
  AMPJIT_CHECK(groups > 0, "non-positive groups is not supported");
  AMPJIT_CHECK(input.dtype() == weight.dtype(),
               "Input type ({}) and weight type ({}) should be the same",
               cpp_type_name(input.dtype()), cpp_type_name(weight.dtype()));
  if (bias) {
    AMPJIT_CHECK(input.dtype() == bias->dtype(),
                 "Input type ({}) and bias type ({}) should be the same",
                 cpp_type_name(input.dtype()), cpp_type_name(bias->dtype()));
  }
  const int64_t n = input.size(0), ic = input.size(1), oc = weight.size(0);
  AMPJIT_CHECK(
      oc % groups == 0,
      "Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of "
      "size {} instead",
      groups, groups, weight.shape_str());
  AMPJIT_CHECK(
      ic == weight.size(1) * groups,
      "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} "
      "channels instead",
      groups, weight.shape_str(), input.shape_str(), weight.size(1) * groups, ic);
  if (bias) {
    AMPJIT_CHECK(
        bias->dim() == 1 && bias->size(0) == oc,
        "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got "
        "bias of size {} instead",
        weight.shape_str(), oc, bias->shape_str());
  }
  int64_t in[2], k[2], padded[2], dk[2], out[2];
  bool fits = true;
  for (int i = 0; i < nsp; ++i) {
    in[i] = input.size(2 + i);
    k[i] = weight.size(2 + i);
    padded[i] = in[i] + 2 * pad[i];
    dk[i] = dil[i] * (k[i] - 1) + 1;
    fits = fits && padded[i] >= dk[i];
  }
  AMPJIT_CHECK(
      fits,
      "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be "
      "greater than actual input size",
      join_x(padded, nsp), join_x(dk, nsp));
  for (int i = 0; i < nsp; ++i) out[i] = (padded[i] - dk[i]) / st[i] + 1;
  const ScalarType dtype = input.dtype();
  check_floating(dtype, "slow_conv2d_cuda");

  Dims out_shape = {n, oc};
  for (int i = 0; i < nsp; ++i) out_shape.push_back(out[i]);
  const Device device = input.device();
  Tensor y = Tensor::empty(out_shape, dtype, device);
  if (y.numel() == 0) return unbatched ? y.squeeze(0) : y;
  Dims per_channel(static_cast<size_t>(nsp + 2), 1);
  per_channel[1] = oc;
  if (bias) y.copy_(bias->reshape(per_channel));
  int64_t in_numel = 1;
  for (int i = 0; i < nsp; ++i) in_numel *= in[i];
  if (ic == 0 || in_numel == 0) {  // nothing to convolve: the bias, or zeros
    if (!bias) y.fill_(0);
    return unbatched ? y.squeeze(0) : y;
  }
  // conv1d is conv2d over a height of 1: its one spatial dim is the width.
  const int sp = nsp - 1;  // index of the width in in/k/out/st/pad/dil
  Conv2dGeometry g;
  g.n = n;
  g.c = ic;
  g.oc = oc;
  g.groups = groups;
  g.h = nsp == 2 ? in[0] : 1;
  g.w = in[sp];
  g.kh = nsp == 2 ? k[0] : 1;
  g.kw = k[sp];
  g.oh = nsp == 2 ? out[0] : 1;
  g.ow = out[sp];
  g.stride[0] = nsp == 2 ? st[0] : 1;
  g.padding[0] = nsp == 2 ? pad[0] : 0;
  g.dilation[0] = nsp == 2 ? dil[0] : 1;
  g.stride[1] = st[sp];
  g.padding[1] = pad[sp];
  g.dilation[1] = dil[sp];
  conv2d_gemm(input.contiguous(), weight.contiguous(), y, g, bias.has_value());
  return unbatched ? y.squeeze(0) : y;
}

Tensor conv1d_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const Dims& stride, const Dims& padding, const Dims& dilation, int64_t groups) {
  return convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv2d_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const Dims& stride, const Dims& padding, const Dims& dilation, int64_t groups) {
  return convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups);
}

}  // namespace

void register_blas_kernels() {
  AMPJIT_CUDA_KERNEL(mm, mm_k);
  AMPJIT_CUDA_KERNEL(mm_out, mm_out_k);
  AMPJIT_CUDA_KERNEL(bmm, bmm_k);
  AMPJIT_CUDA_KERNEL(bmm_out, bmm_out_k);
  AMPJIT_CUDA_KERNEL(mv, mv_k);
  AMPJIT_CUDA_KERNEL(dot, dot_k);
  AMPJIT_CUDA_KERNEL(matmul, matmul_k);
  AMPJIT_CUDA_KERNEL(matmul_out, matmul_out_k);
  AMPJIT_CUDA_KERNEL(addmm, addmm_k);
  AMPJIT_CUDA_KERNEL(addmm_, addmm_inplace_k);
  AMPJIT_CUDA_KERNEL(addmm_out, addmm_out_k);
  AMPJIT_CUDA_KERNEL(addmv, addmv_k);
  AMPJIT_CUDA_KERNEL(addbmm, addbmm_k);
  AMPJIT_CUDA_KERNEL(baddbmm, baddbmm_k);
  AMPJIT_CUDA_KERNEL(baddbmm_, baddbmm_inplace_k);
  AMPJIT_CUDA_KERNEL(linear, linear_k);
  AMPJIT_CUDA_KERNEL(conv1d, conv1d_k);
  AMPJIT_CUDA_KERNEL(conv2d, conv2d_k);
}

}  // namespace ampjit::cuda
