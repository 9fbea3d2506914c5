// Matrix products (runtime/ops/linalg.def): mm, bmm, mv, dot, matmul, addmm, addmv, addbmm,
// baddbmm, linear, and their in-place and out= forms. Every product except dot is one call of
// `gemm` below, a batched C = alpha * A @ B + beta * addend:
//  - float32 runs on oneDNN, row- or column-major operands described by their strides (no
//    copies; other layouts are copied first);
//  - float16 and bfloat16 are widened to float32 for the same primitive and rounded once
//    (Note [oneDNN computes in float32 only] in onednn.h, Note [Widening bf16 for gemm] below);
//  - float64 and the integer types run an exact loop (integers wrap on overflow, as in torch).
// Bool has no products, as in torch.
#include <omp.h>

#include <exception>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/onednn.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

using onednn::cpp_type_name;

// Note [Widening bf16 for gemm]
// float16/bfloat16 operands are widened by hand into 64-byte-aligned float32 scratch, keeping each
// operand's orientation (a transposed operand is widened column by column and described to oneDNN
// as column-major), one float32 matmul runs, and C is rounded once into the result. A single
// product is split into per-thread row panels (Note [Row panels for reduced-precision gemm]);
// batched ones widen whole operands. Measured with bench/bench_gemm.cpp (2 threads, median of 5
// interleaved repetitions, GFLOP/s, on the 2-vCPU AVX-512 Xeon these sessions run on):
//                                   256^3   1024^3  2048^3
//   float32, ampjit::ops::mm          232     216     209   (oneDNN called directly: 222/224/202)
//   bfloat16, per-thread row panels   200     205     209   <- ampjit
//   bfloat16, whole operands          158     217     220
//   bfloat16, sequential A panels     133     199     194   (64 rows at 256, else 256 rows)
//   bfloat16, oneDNN's own bf16       144     142     139   (brgemm avx512_core_bf16)
//   float16, ampjit (row panels)      206     202     216
// Row panels win at small sizes, where cross-core traffic and the O(n^2) widening and rounding
// weigh most; from 1024^3 up the layouts tie within the run-to-run noise (~5%). oneDNN's own
// bf16 kernel is slower than widening on this CPU and absent on AVX2-only ones. The scratch is
// reused per thread (onednn::Scratch), so no page faults are paid per call; without its 64-byte
// alignment bfloat16 at 256^3 was ~25% slower.

bool is_float_type(ScalarType t) {
  return t == ScalarType::Float32 || t == ScalarType::Float16 || t == ScalarType::BFloat16;
}

// Rewrites a [batch, rows, cols] operand so that its matrices have a layout oneDNN's gemm takes
// (onednn::normalize_gemm_layout); a broadcast batch (stride 0) stays a broadcast.
Tensor gemm_operand(const Tensor& t) {
  int64_t rs = t.stride(1), cs = t.stride(2);
  if (onednn::normalize_gemm_layout(t.size(1), t.size(2), rs, cs)) return t;
  if (t.stride(0) == 0 && t.size(0) > 1) {
    return t.select(0, 0).contiguous().unsqueeze(0).expand(t.sizes());
  }
  return t.contiguous();
}

// A gemm operand as oneDNN sees it.
struct Staged {
  const float* data;
  int64_t bs, rs, cs;
};

// `t` (float32, layout from gemm_operand) as it is.
Staged stage_float(const Tensor& t) {
  Staged s{t.data<float>(), t.stride(0), t.stride(1), t.stride(2)};
  onednn::normalize_gemm_layout(t.size(1), t.size(2), s.rs, s.cs);
  return s;
}

// Widens `t` (float16/bfloat16, layout from gemm_operand) into dense float32 at buf, in the same
// orientation; returns the float32 view. Only one matrix is widened for a broadcast batch.
Staged stage_widened(const Tensor& t, float* buf) {
  const int64_t rows = t.size(1), cols = t.size(2);
  const int64_t nb = t.stride(0) == 0 ? 1 : t.size(0);
  int64_t rs = t.stride(1), cs = t.stride(2);
  onednn::normalize_gemm_layout(rows, cols, rs, cs);
  const int64_t bs = t.stride(0) == 0 ? 0 : rows * cols;
  if (cs == 1) {  // row-major: widen row by row
    onednn::widen_rows_to_float(t.raw_data(), t.dtype(), buf, nb, t.stride(0), rows, rs, cols);
    return {buf, bs, cols, 1};
  }
  onednn::widen_rows_to_float(t.raw_data(), t.dtype(), buf, nb, t.stride(0), cols, cs, rows);
  return {buf, bs, 1, rows};
}

int64_t staged_numel(const Tensor& t) {
  return (t.stride(0) == 0 ? 1 : t.size(0)) * t.size(1) * t.size(2);
}

// Whether `addend` only varies along the last dim of an [.., n] result, so that oneDNN can add
// it as a bias vector.
bool is_row_vector(const Tensor& addend, int64_t n) {
  return addend.dim() >= 1 && addend.size(-1) == n && addend.numel() == n;
}

// Runs one float32 product, or, for an empty contraction (which oneDNN cannot take), fills C
// with what the product would give: beta * C (when it holds an addend) plus the bias.
void run_matmul(const onednn::MatmulArgs& g, const char* op) {
  if (g.k > 0) return onednn::matmul(g, op);
  for (int64_t i = 0; i < g.batch * g.m * g.n; ++i) {
    g.c[i] = (g.beta != 0.f ? g.beta * g.c[i] : 0.f) + (g.bias ? g.bias[i % g.n] : 0.f);
  }
}

// Note [Row panels for reduced-precision gemm]
// Widening the operands with one parallel loop and then running one 2-thread float32 gemm makes
// every thread read float32 lines that the other core just wrote; at 256^3 that cross-core
// traffic costs as much as the widening itself. So a single (unbatched) product splits its rows
// between the threads instead: each thread widens its rows of A, runs the gemm of its rows on its
// own (oneDNN runs single-threaded inside a parallel region) and rounds its rows of C, all still
// in its cache. B is needed by every thread: a small B (up to kPrivateB floats, L2-sized) is
// widened whole by each thread into its own copy, so no thread waits for or reads from another;
// a larger one is widened in shares into one copy, with a barrier before the gemms.
// Measured at 256^3 (2 threads, % of float32): whole-operand widening 62-77%, row panels with a
// shared B 76-81%, with private copies of B 80-91%. Row panels also win at 256x1024x1024 and
// 512^3 (~190 and ~205 GFLOP/s against ~150 and ~165) and tie at 1024^3 and 256x4096x1024, but
// lose when each thread gets few rows (64x1024x1024: ~125 against ~145), hence kMinPanelRows
// rows per thread at least.
constexpr int64_t kMinPanelRows = 64;
constexpr int64_t kPrivateB = int64_t{1} << 18;

// Scratch floats row_panel_gemm needs for B.
int64_t row_panel_b_floats(int64_t k, int64_t n) {
  const int64_t one = onednn::scratch_floats(k * n);
  return k * n <= kPrivateB ? one * max_threads() : one;
}

void row_panel_gemm(const Tensor& a, const Tensor& b, onednn::MatmulArgs g, float* a32, float* b32,
                    const Tensor& out, const char* op) {
  const ScalarType dt = out.dtype();
  const int64_t m = g.m, n = g.n, k = g.k;
  int64_t ars = a.stride(1), acs = a.stride(2), brs = b.stride(1), bcs = b.stride(2);
  onednn::normalize_gemm_layout(m, k, ars, acs);
  onednn::normalize_gemm_layout(k, n, brs, bcs);
  // B is widened run by run (rows if row-major, else columns) in its own orientation.
  const bool b_by_rows = bcs == 1;
  const int64_t b_runs = b_by_rows ? k : n, b_len = b_by_rows ? n : k, b_ld = b_by_rows ? brs : bcs;
  const bool private_b = k * n <= kPrivateB;
  g.b_rs = b_by_rows ? n : 1;
  g.b_cs = b_by_rows ? 1 : k;
  const auto* a16 = static_cast<const uint16_t*>(a.raw_data());
  const auto* b16 = static_cast<const uint16_t*>(b.raw_data());
  auto* o16 = static_cast<uint16_t*>(out.raw_data());
  std::exception_ptr error;
#pragma omp parallel num_threads(max_threads())
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    onednn::MatmulArgs mine = g;
    if (private_b) {
      mine.b = b32 + t * onednn::scratch_floats(k * n);
      onednn::widen_rows_to_float(b16, dt, const_cast<float*>(mine.b), 1, 0, b_runs, b_ld, b_len);
    } else {
      const int64_t q0 = b_runs * t / nt, q1 = b_runs * (t + 1) / nt;
      onednn::widen_rows_to_float(b16 + q0 * b_ld, dt, b32 + q0 * b_len, 1, 0, q1 - q0, b_ld,
                                  b_len);
      mine.b = b32;
    }
    const int64_t r0 = m * t / nt, rows = m * (t + 1) / nt - r0;
    mine.m = rows;
    mine.a = a32 + r0 * k;  // this thread's rows, dense, in A's orientation
    if (acs == 1) {
      onednn::widen_rows_to_float(a16 + r0 * ars, dt, a32 + r0 * k, 1, 0, rows, ars, k);
      mine.a_rs = k, mine.a_cs = 1;
    } else {
      onednn::widen_rows_to_float(a16 + r0 * ars, dt, a32 + r0 * k, 1, 0, k, acs, rows);
      mine.a_rs = 1, mine.a_cs = rows;
    }
    mine.c = g.c + r0 * n;
    if (!private_b) {
#pragma omp barrier
    }
    try {
      if (rows > 0) {
        onednn::matmul(mine, op);
        onednn::round_from_float(mine.c, o16 + r0 * n, dt, rows * n);
      }
    } catch (...) {
#pragma omp critical(ampjit_row_panel_gemm)
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
}

// out = alpha * a @ b (+ beta * addend) for float32/float16/bfloat16, through oneDNN.
void float_gemm(Tensor a, Tensor b, const Tensor& addend, double beta, double alpha, Tensor out,
                const char* op) {
  const ScalarType dt = out.dtype();
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  a = gemm_operand(a);
  b = gemm_operand(b);
  const bool use_bias = addend.defined() && beta == 1 && alpha == 1 && is_row_vector(addend, n);
  const bool use_addend = !use_bias && addend.defined() && beta != 0;
  const bool staged = dt != ScalarType::Float32;

  onednn::MatmulArgs args;
  args.batch = batch;
  args.m = m;
  args.n = n;
  args.k = k;
  args.alpha = static_cast<float>(alpha);
  args.beta = use_addend ? static_cast<float>(beta) : 0.f;
  args.c_bs = m * n;
  args.c_rs = n;
  Tensor bias_t = use_bias ? addend.reshape(std::vector<int64_t>{n}).contiguous() : Tensor();
  if (!staged) {
    const Staged sa = stage_float(a), sb = stage_float(b);
    args.a = sa.data;
    args.a_bs = sa.bs, args.a_rs = sa.rs, args.a_cs = sa.cs;
    args.b = sb.data;
    args.b_bs = sb.bs, args.b_rs = sb.rs, args.b_cs = sb.cs;
    args.c = out.data<float>();
    if (use_addend) out.copy_(addend);  // broadcasting
    if (use_bias) args.bias = bias_t.data<float>();
    run_matmul(args, op);
    return;
  }

  // float16/bfloat16: one aligned scratch for A, B, C (unless a float32 tensor holds C because it
  // starts as the addend) and the bias.
  const bool row_panels =
      batch == 1 && k > 0 && max_threads() > 1 && m >= kMinPanelRows * max_threads();
  const int64_t na = onednn::scratch_floats(staged_numel(a));
  const int64_t nb =
      row_panels ? row_panel_b_floats(k, n) : onednn::scratch_floats(staged_numel(b));
  const int64_t nc = use_addend ? 0 : onednn::scratch_floats(batch * m * n);
  onednn::Scratch scratch(na + nb + nc + (use_bias ? n : 0));
  float* const buf = scratch.data();
  Tensor c32;
  if (use_addend) {
    c32 = Tensor::empty(out.sizes(), ScalarType::Float32);
    c32.copy_(addend);  // broadcasting, converting
  }
  args.c = use_addend ? c32.data<float>() : buf + na + nb;
  if (use_bias) {
    float* bias32 = buf + na + nb + nc;
    onednn::widen_to_float(bias_t.raw_data(), dt, bias32, n);
    args.bias = bias32;
  }
  if (row_panels) {
    row_panel_gemm(a, b, args, buf, buf + na, out, op);
    return;
  }
  const Staged sa = stage_widened(a, buf), sb = stage_widened(b, buf + na);
  args.a = sa.data;
  args.a_bs = sa.bs, args.a_rs = sa.rs, args.a_cs = sa.cs;
  args.b = sb.data;
  args.b_bs = sb.bs, args.b_rs = sb.rs, args.b_cs = sb.cs;
  run_matmul(args, op);
  onednn::round_from_float(args.c, out.raw_data(), dt, batch * m * n);
}

// out = alpha * a @ b (+ beta * out) for float64 and the integer types: one row of C at a time,
// accumulated in double, or in uint64 for integers (so overflow wraps exactly as torch's
// same-type accumulation does, without signed-overflow UB).
template <typename T>
void exact_gemm(const Tensor& a, const Tensor& b, const Tensor& out, bool accumulate,
                const Scalar& beta_s, const Scalar& alpha_s) {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>;
  auto acc_of = [](auto v) { return static_cast<Acc>(v); };
  const Acc beta =
      std::is_floating_point_v<T> ? acc_of(beta_s.to_double()) : acc_of(beta_s.to_int());
  const Acc alpha =
      std::is_floating_point_v<T> ? acc_of(alpha_s.to_double()) : acc_of(alpha_s.to_int());
  const int64_t batch = out.size(0), m = out.size(1), n = out.size(2), k = a.size(2);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  const int64_t abs_ = a.stride(0), ars = a.stride(1), acs = a.stride(2);
  const int64_t bbs = b.stride(0), brs = b.stride(1), bcs = b.stride(2);
  const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n * k, 1));
  parallel_for(batch * m, grain, [&](int64_t r0, int64_t r1) {
    std::vector<Acc> row(static_cast<size_t>(n));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t bi = r / m, i = r % m;
      std::fill(row.begin(), row.end(), Acc(0));
      const T* arow = pa + bi * abs_ + i * ars;
      for (int64_t p = 0; p < k; ++p) {
        const Acc av = acc_of(arow[p * acs]);
        const T* brow = pb + bi * bbs + p * brs;
        for (int64_t j = 0; j < n; ++j) row[j] += av * acc_of(brow[j * bcs]);
      }
      T* crow = pc + r * n;
      for (int64_t j = 0; j < n; ++j) {
        const Acc v = accumulate ? beta * acc_of(crow[j]) + alpha * row[j] : alpha * row[j];
        crow[j] = static_cast<T>(v);
      }
    }
  });
}

// The engine under every product: [batch, m, n] = alpha * a @ b + beta * addend, with a
// [batch, m, k] and b [batch, k, n] of one dtype (either may have batch stride 0, a broadcast),
// and addend broadcastable to [batch, m, n] (undefined: none; beta == 0 ignores it, NaNs
// included, as torch does).
Tensor gemm(const Tensor& a, const Tensor& b, const Tensor& addend, const Scalar& beta,
            const Scalar& alpha, const char* op) {
  const ScalarType dt = a.dtype();
  Tensor out = Tensor::empty(std::vector<int64_t>{a.size(0), a.size(1), b.size(2)}, dt);
  if (out.numel() == 0) return out;
  if (is_float_type(dt)) {
    float_gemm(a, b, addend, beta.to_double(), alpha.to_double(), out, op);
    return out;
  }
  const bool accumulate = addend.defined() && beta.to_double() != 0;
  if (accumulate) out.copy_(addend);
  switch (dt) {
    case ScalarType::Float64:
      exact_gemm<double>(a, b, out, accumulate, beta, alpha);
      break;
    case ScalarType::UInt8:
      exact_gemm<uint8_t>(a, b, out, accumulate, beta, alpha);
      break;
    case ScalarType::Int8:
      exact_gemm<int8_t>(a, b, out, accumulate, beta, alpha);
      break;
    case ScalarType::Int16:
      exact_gemm<int16_t>(a, b, out, accumulate, beta, alpha);
      break;
    case ScalarType::Int32:
      exact_gemm<int32_t>(a, b, out, accumulate, beta, alpha);
      break;
    case ScalarType::Int64:
      exact_gemm<int64_t>(a, b, out, accumulate, beta, alpha);
      break;
    default:
      throw_unsupported_dtype(op, dt);
  }
  return out;
}

Tensor as_batch1(const Tensor& t) {
  return t.unsqueeze(0);
}
std::vector<int64_t> shape_of(IntArrayRef s) {
  return {s.begin(), s.end()};
}

// --- checks, with torch's messages ---------------------------------------------------------

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
  resize_out(out, result.sizes());
  out.copy_(result);
  return out;
}

// --- ops ------------------------------------------------------------------------------------

Tensor mm_k(const Tensor& self, const Tensor& mat2) {
  AMPJIT_CHECK(self.dim() == 2, "self must be a matrix");
  AMPJIT_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  check_mm_shapes(self, mat2);
  check_mm_dtypes(self, mat2);
  return gemm(as_batch1(self), as_batch1(mat2), Tensor(), 0, 1, "mm").squeeze(0);
}
Tensor mm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return write_out(out, mm_k(self, mat2));
}

Tensor addmm_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
               const Scalar& alpha) {
  AMPJIT_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got {}-D tensor", mat1.dim());
  AMPJIT_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got {}-D tensor", mat2.dim());
  check_mm_shapes(mat1, mat2);
  check_mm_dtypes(mat1, mat2);
  AMPJIT_CHECK(self.dtype() == mat2.dtype(),
               "self and mat2 must have the same dtype, but got {} and {}",
               torch_type_name(self.dtype()), torch_type_name(mat2.dtype()));
  const Tensor addend = self.expand(std::vector<int64_t>{mat1.size(0), mat2.size(1)});
  return gemm(as_batch1(mat1), as_batch1(mat2), addend, beta, alpha, "addmm").squeeze(0);
}
Tensor addmm_inplace_k(Tensor self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                       const Scalar& alpha) {
  return write_result(self, addmm_k(self, mat1, mat2, beta, alpha), "addmm_", true);
}
Tensor addmm_out_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                   const Scalar& alpha, Tensor out) {
  return write_out(out, addmm_k(self, mat1, mat2, beta, alpha));
}

Tensor bmm_k(const Tensor& self, const Tensor& mat2) {
  check_bmm(self, mat2);
  return gemm(self, mat2, Tensor(), 0, 1, "bmm");
}
Tensor bmm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return write_out(out, bmm_k(self, mat2));
}

Tensor baddbmm_k(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                 const Scalar& alpha) {
  AMPJIT_CHECK(self.dtype() == batch1.dtype() && self.dtype() == batch2.dtype(),
               "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
               cpp_type_name(self.dtype()), cpp_type_name(batch1.dtype()),
               cpp_type_name(batch2.dtype()));
  check_bmm(batch1, batch2);
  const Tensor addend =
      self.expand(std::vector<int64_t>{batch1.size(0), batch1.size(1), batch2.size(2)});
  return gemm(batch1, batch2, addend, beta, alpha, "baddbmm");
}
Tensor baddbmm_inplace_k(Tensor self, const Tensor& batch1, const Tensor& batch2,
                         const Scalar& beta, const Scalar& alpha) {
  return write_result(self, baddbmm_k(self, batch1, batch2, beta, alpha), "baddbmm_", true);
}

// sum_b batch1[b] @ batch2[b] is one product of the batches laid side by side:
// [n, B*m] @ [B*m, p].
Tensor addbmm_k(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
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
  AMPJIT_CHECK(self.dtype() == batch1.dtype(), "expected scalar type {} but found {}",
               torch_type_name(batch1.dtype()), torch_type_name(self.dtype()));
  const int64_t nb = batch1.size(0), n = batch1.size(1), m = batch1.size(2), p = batch2.size(2);
  const Tensor addend = self.expand(std::vector<int64_t>{n, p});
  const Tensor a =
      batch1.permute(std::vector<int64_t>{1, 0, 2}).reshape(std::vector<int64_t>{n, nb * m});
  const Tensor b = batch2.reshape(std::vector<int64_t>{nb * m, p});
  return gemm(as_batch1(a), as_batch1(b), addend, beta, alpha, "addbmm").squeeze(0);
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
               const Scalar& alpha, const char* op) {
  const Tensor col = vec.unsqueeze(1).unsqueeze(0);
  const Tensor add =
      addend.defined() ? addend.expand(std::vector<int64_t>{mat.size(0)}).unsqueeze(1) : addend;
  return gemm(as_batch1(mat), col, add, beta, alpha, op).view(std::vector<int64_t>{mat.size(0)});
}
Tensor mv_k(const Tensor& self, const Tensor& vec) {
  check_mv(self, vec, 1, self.dim() >= 1 ? self.size(0) : 1);
  return mv_gemm(self, vec, Tensor(), 0, 1, "mv");
}
Tensor addmv_k(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
               const Scalar& alpha) {
  check_mv(mat, vec, self.dim(), self.dim() >= 1 ? self.size(0) : 1);
  AMPJIT_CHECK(self.numel() == mat.size(0) || self.numel() == 1,
               "size mismatch, got input ({}), mat ({}x{}), vec ({})",
               self.dim() ? self.size(0) : 1, mat.size(0), mat.size(1), vec.size(0));
  check_same_scalar_type(mat, self);
  return mv_gemm(mat, vec, self, beta, alpha, "addmv");
}

// dot: a reduction, not a gemm. Accumulates in the op-math type (float for float32 and the
// reduced types, like BLAS sdot; double for float64; wrapping uint64 for integers) with eight
// partial sums so the loop vectorizes.
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
  const ScalarType dt = self.dtype();
  Tensor out = Tensor::empty(std::vector<int64_t>{}, dt);
  dispatch_numeric(dt, "dot", [&]<typename T>() {
    using M = opmath_t<T>;
    using Acc = std::conditional_t<std::is_integral_v<T>, uint64_t, M>;
    const T* x = self.data<T>();
    const T* y = other.data<T>();
    const int64_t n = self.numel(), sx = self.stride(0), sy = other.stride(0);
    Acc part[8] = {};
    int64_t i = 0;
    if (sx == 1 && sy == 1) {
      for (; i + 8 <= n; i += 8) {
        for (int j = 0; j < 8; ++j)
          part[j] += static_cast<Acc>(static_cast<M>(x[i + j])) *
                     static_cast<Acc>(static_cast<M>(y[i + j]));
      }
    }
    for (; i < n; ++i)
      part[0] +=
          static_cast<Acc>(static_cast<M>(x[i * sx])) * static_cast<Acc>(static_cast<M>(y[i * sy]));
    Acc sum = 0;
    for (Acc v : part) sum += v;
    *out.data<T>() = static_cast<T>(sum);
  });
  return out;
}

// Note [matmul's rank cases]
// As torch.matmul: 1-D x 1-D is dot; 2-D x 1-D is mv; 1-D x 2-D is a [1, n] @ [n, p] product;
// 2-D x 2-D is mm; an N-D (N >= 3) left operand with a 1-D or 2-D right one folds its batch
// dims into the rows (one big product, no copies when it is contiguous); everything else
// broadcasts the batch dims and runs one batched product, keeping a fully broadcast operand as a
// batch stride of 0 (oneDNN broadcasts it) rather than materializing it. A 1-D operand becomes
// a row (left) or column (right) whose dim is dropped from the result.
Tensor matmul_k(const Tensor& t1, const Tensor& t2) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  AMPJIT_CHECK(d1 > 0 && d2 > 0,
               "both arguments to matmul need to be at least 1D, but they are {}D and {}D", d1, d2);
  if (d1 == 1 && d2 == 1) return dot_k(t1, t2);
  if (d1 == 2 && d2 == 1) return mv_k(t1, t2);
  if (d1 == 1 && d2 == 2) return mm_k(t1.unsqueeze(0), t2).squeeze(0);
  if (d1 == 2 && d2 == 2) return mm_k(t1, t2);
  if (d1 >= 3 && d2 <= 2) {
    std::vector<int64_t> out_shape = shape_of(t1.sizes().first(static_cast<size_t>(d1 - 1)));
    const Tensor folded = t1.reshape(std::vector<int64_t>{-1, t1.size(-1)});
    if (d2 == 1) return mv_k(folded, t2).view(out_shape);
    out_shape.push_back(t2.size(1));
    return mm_k(folded, t2).view(out_shape);
  }
  // Batched, with broadcasting of the batch dims.
  const int64_t n = d1 > 1 ? t1.size(-2) : 1, m1 = t1.size(-1);
  const int64_t m2 = d2 > 1 ? t2.size(-2) : t2.size(0), p = d2 > 1 ? t2.size(-1) : 1;
  const IntArrayRef batch1 = d1 > 2 ? t1.sizes().first(static_cast<size_t>(d1 - 2)) : IntArrayRef();
  const IntArrayRef batch2 = d2 > 2 ? t2.sizes().first(static_cast<size_t>(d2 - 2)) : IntArrayRef();
  const DimVector batch = broadcast_shapes(batch1, batch2, "matmul");
  const int64_t nbatch = numel_of(batch);
  auto to3d = [&](const Tensor& mat, int64_t rows, int64_t cols) {
    std::vector<int64_t> full = shape_of(batch);
    full.push_back(rows);
    full.push_back(cols);
    return mat.expand(full).reshape(std::vector<int64_t>{nbatch, rows, cols});
  };
  const Tensor a = to3d(d1 == 1 ? t1.unsqueeze(0) : t1, n, m1);
  const Tensor b = to3d(d2 == 1 ? t2.unsqueeze(1) : t2, m2, p);
  check_bmm(a, b);
  std::vector<int64_t> out_shape = shape_of(batch);
  if (d1 > 1) out_shape.push_back(n);
  if (d2 > 1) out_shape.push_back(p);
  return gemm(a, b, Tensor(), 0, 1, "matmul").view(out_shape);
}
Tensor matmul_out_k(const Tensor& t1, const Tensor& t2, Tensor out) {
  return write_out(out, matmul_k(t1, t2));
}

// linear: input [..., in] @ weight^T + bias, as torch.nn.functional.linear: input's leading dims
// fold into the rows of one product, and a bias that only varies along the features is added by
// oneDNN. A 1-D weight gives one output per row (no feature dim), as matmul(input, weight) does.
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
  const Tensor x2 = input.reshape(std::vector<int64_t>{-1, input.size(-1)});
  check_mm_shapes(x2, wt);
  check_mm_dtypes(x2, wt);
  std::vector<int64_t> out_shape =
      shape_of(input.sizes().first(static_cast<size_t>(input.dim() - 1)));
  if (weight.dim() == 2) out_shape.push_back(weight.size(0));
  Tensor addend;
  if (bias) {
    addend = weight.dim() == 2 && is_row_vector(*bias, weight.size(0))
                 ? *bias
                 : bias->expand(out_shape).reshape(std::vector<int64_t>{x2.size(0), wt.size(1)});
  }
  return gemm(as_batch1(x2), as_batch1(wt), addend, 1, 1, "linear").view(out_shape);
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(mm, cpu::mm_k)
AMPJIT_KERNEL(mm_out, cpu::mm_out_k)
AMPJIT_KERNEL(bmm, cpu::bmm_k)
AMPJIT_KERNEL(bmm_out, cpu::bmm_out_k)
AMPJIT_KERNEL(mv, cpu::mv_k)
AMPJIT_KERNEL(dot, cpu::dot_k)
AMPJIT_KERNEL(matmul, cpu::matmul_k)
AMPJIT_KERNEL(matmul_out, cpu::matmul_out_k)
AMPJIT_KERNEL(addmm, cpu::addmm_k)
AMPJIT_KERNEL(addmm_, cpu::addmm_inplace_k)
AMPJIT_KERNEL(addmm_out, cpu::addmm_out_k)
AMPJIT_KERNEL(addmv, cpu::addmv_k)
AMPJIT_KERNEL(addbmm, cpu::addbmm_k)
AMPJIT_KERNEL(baddbmm, cpu::baddbmm_k)
AMPJIT_KERNEL(baddbmm_, cpu::baddbmm_inplace_k)
AMPJIT_KERNEL(linear, cpu::linear_k)
