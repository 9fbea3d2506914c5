// Matrix products and convolutions on CUDA (runtime/ops/linalg.def, runtime/ops/conv.def): mm,
// bmm, mv, dot, matmul, addmm, addmv, addbmm, baddbmm, linear and their out= forms (addmm_ and
// baddbmm_ are derived: Note [Derived op variants] in runtime/op_table.h), conv1d and conv2d. Every
// one is a batched GEMM through `gemm_into` (one cuBLAS call, Note [Row-major products on cuBLAS]);
// a convolution is im2col (blas.cu) plus GEMMs. Shapes, argument checks and messages are the CPU
// kernels' own (kernels/linalg_meta.h); the dtypes are torch's CUDA ones (Note [Floating products
// only on CUDA]).
#include <cublas_v2.h>

#include <algorithm>
#include <climits>
#include <optional>

#include "kernels/cuda/blas.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "kernels/linalg_meta.h"
#include "kernels/operands.h"

namespace ampjit::cuda {
namespace {

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

// --- matrix products (checks and shapes: kernels/linalg_meta.h) ----------------------------

Tensor mm_k(const Tensor& self, const Tensor& mat2) {
  meta::check_mm(self, mat2);
  return gemm(as_batch1(self), as_batch1(mat2), Tensor(), 0, 1, "addmm_cuda").squeeze(0);
}
Tensor mm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return meta::write_out(out, mm_k(self, mat2));
}

// `self` (the addend of addmm and friends) may be a CPU scalar joining CUDA operands.
Tensor addmm_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
               const Scalar& alpha) {
  const Dims shape = meta::addmm_shape(self, mat1, mat2);
  const Tensor addend = on_device(self, mat1.device()).expand(shape);
  return gemm(as_batch1(mat1), as_batch1(mat2), addend, beta, alpha, "addmm_cuda").squeeze(0);
}
Tensor addmm_out_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                   const Scalar& alpha, Tensor out) {
  return meta::write_out(out, addmm_k(self, mat1, mat2, beta, alpha));
}

Tensor bmm_k(const Tensor& self, const Tensor& mat2) {
  meta::check_bmm(self, mat2);
  return gemm(self, mat2, Tensor(), 0, 1, "baddbmm_cuda");
}
Tensor bmm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return meta::write_out(out, bmm_k(self, mat2));
}

Tensor baddbmm_k(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                 const Scalar& alpha) {
  const Dims shape = meta::baddbmm_shape(self, batch1, batch2);
  const Tensor addend = on_device(self, batch1.device()).expand(shape);
  return gemm(batch1, batch2, addend, beta, alpha, "baddbmm_cuda");
}

Tensor addbmm_k(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                const Scalar& alpha) {
  const meta::Product p = meta::addbmm_product(self, batch1, batch2);
  const Tensor addend = on_device(self, batch1.device()).expand(p.out_shape);
  return gemm(as_batch1(p.lhs), as_batch1(p.rhs), addend, beta, alpha, "addmm_cuda").squeeze(0);
}

// mat @ vec as [1, n, m] @ [1, m, 1].
Tensor mv_gemm(const Tensor& mat, const Tensor& vec, const Tensor& addend, const Scalar& beta,
               const Scalar& alpha) {
  const Tensor col = vec.unsqueeze(1).unsqueeze(0);
  const Tensor add = addend.defined() ? addend.expand(Dims{mat.size(0)}).unsqueeze(1) : addend;
  return gemm(as_batch1(mat), col, add, beta, alpha, "addmv_impl_cuda").view(Dims{mat.size(0)});
}
Tensor mv_k(const Tensor& self, const Tensor& vec) {
  meta::check_mv(self, vec);
  return mv_gemm(self, vec, Tensor(), 0, 1);
}
Tensor addmv_k(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
               const Scalar& alpha) {
  meta::check_addmv(self, mat, vec);
  return mv_gemm(mat, vec, on_device(self, mat.device()), beta, alpha);
}

// dot as the [1, 1, n] @ [1, n, 1] product: cuBLAS accumulates it in float32 (float64 for
// float64), as the CPU's dot does, and the result stays on the device (cublasDot's host result
// would synchronize).
Tensor dot_k(const Tensor& self, const Tensor& other) {
  meta::check_dot(self, other);
  const Tensor row = self.unsqueeze(0).unsqueeze(0), col = other.unsqueeze(1).unsqueeze(0);
  return gemm(row, col, Tensor(), 0, 1, "dot").view(IntArrayRef{});
}

// Note [matmul's rank cases] in kernels/linalg_meta.h: dot, mv, mm, or one batched product whose
// fully broadcast operand keeps batch stride 0, which cuBLAS's strided batches take as it is.
Tensor matmul_k(const Tensor& t1, const Tensor& t2) {
  return meta::matmul(t1, t2, dot_k, mv_k, mm_k, [](const Tensor& a, const Tensor& b) {
    return gemm(a, b, Tensor(), 0, 1, "baddbmm_cuda");
  });
}
Tensor matmul_out_k(const Tensor& t1, const Tensor& t2, Tensor out) {
  return meta::write_out(out, matmul_k(t1, t2));
}

// linear: input [..., in] @ weight^T + bias in one GEMM (meta::linear_product): weight^T is
// weight read column-major (no copy), and the bias, copied into the result, is added by the
// GEMM's beta = 1.
Tensor linear_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const meta::Product p = meta::linear_product(input, weight, bias);
  const Tensor addend =
      bias ? meta::linear_addend(on_device(*bias, input.device()), weight, p) : Tensor();
  return gemm(as_batch1(p.lhs), as_batch1(p.rhs), addend, 1, 1, "addmm_cuda").view(p.out_shape);
}

// --- convolutions ---------------------------------------------------------------------------

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

// conv1d / conv2d (nsp = 1 / 2), batched or unbatched, with the CPU kernel's checks and output
// size (meta::plan_conv).
Tensor convolution(const char* op, int nsp, const Tensor& input, const Tensor& weight,
                   const std::optional<Tensor>& bias, const Dims& stride, const Dims& padding,
                   const Dims& dilation, int64_t groups) {
  const meta::ConvPlan c =
      meta::plan_conv(op, nsp, false, input, weight, bias, stride, padding, dilation, {0}, groups);
  const meta::ConvParams& p = c.params;
  const ScalarType dtype = c.input.dtype();
  check_floating(dtype, "slow_conv2d_cuda");

  Tensor y = Tensor::empty(c.out_shape, dtype, c.input.device());
  if (y.numel() == 0) return c.unbatched ? y.squeeze(0) : y;
  if (bias) y.copy_(bias->reshape(c.bias_shape()));
  if (c.nothing_to_convolve()) {  // the bias, or zeros
    if (!bias) y.fill_(0);
    return c.unbatched ? y.squeeze(0) : y;
  }
  // conv1d is conv2d over a height of 1: its one spatial dim is the width.
  const int sp = nsp - 1;  // index of the width in the plan's spatial arrays
  Conv2dGeometry g;
  g.n = c.n;
  g.c = c.ic;
  g.oc = c.oc;
  g.groups = groups;
  g.h = nsp == 2 ? c.in[0] : 1;
  g.w = c.in[sp];
  g.kh = nsp == 2 ? c.k[0] : 1;
  g.kw = c.k[sp];
  g.oh = nsp == 2 ? c.out[0] : 1;
  g.ow = c.out[sp];
  g.stride[0] = nsp == 2 ? p.stride[0] : 1;
  g.padding[0] = nsp == 2 ? p.padding[0] : 0;
  g.dilation[0] = nsp == 2 ? p.dilation[0] : 1;
  g.stride[1] = p.stride[sp];
  g.padding[1] = p.padding[sp];
  g.dilation[1] = p.dilation[sp];
  conv2d_gemm(c.input.contiguous(), weight.contiguous(), y, g, bias.has_value());
  return c.unbatched ? y.squeeze(0) : y;
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
  AMPJIT_CUDA_KERNEL(addmm_out, addmm_out_k);
  AMPJIT_CUDA_KERNEL(addmv, addmv_k);
  AMPJIT_CUDA_KERNEL(addbmm, addbmm_k);
  AMPJIT_CUDA_KERNEL(baddbmm, baddbmm_k);
  AMPJIT_CUDA_KERNEL(linear, linear_k);
  AMPJIT_CUDA_KERNEL(conv1d, conv1d_k);
  AMPJIT_CUDA_KERNEL(conv2d, conv2d_k);
}

}  // namespace ampjit::cuda
