// Matrix products (runtime/ops/linalg.def): mm, bmm, mv, dot, matmul, addmm, addmv, addbmm,
// baddbmm, linear, and their out= forms (addmm_ and baddbmm_ are derived: Note [Derived op
// variants] in runtime/op_table.h). Every product except dot is one call of
// `gemm` below, a batched C = alpha * A @ B + beta * addend:
//  - float32 runs on oneDNN, row- or column-major operands described by their strides (no
//    copies; other layouts are copied first);
//  - float16 and bfloat16 are widened to float32 for the same primitive and rounded once
//    (Note [oneDNN computes in float32 only] in onednn.h, Note [Widening bf16 for gemm] below);
//  - float64 and the integer types run an exact loop (integers wrap on overflow, as in torch).
// Bool has no products, as in torch. The checks, shapes and matmul's rank cases are
// kernels/linalg_meta.h, shared with the CUDA kernels.
#include <omp.h>

#include <exception>

#include "kernels/cpu/elementwise.h"
#include "kernels/cpu/onednn.h"
#include "kernels/linalg_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

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
  const void* data;
  int64_t bs, rs, cs;
};

// `t` (float32, or bfloat16 run natively; layout from gemm_operand) as it is.
Staged stage_as_is(const Tensor& t) {
  Staged s{t.raw_data(), t.stride(0), t.stride(1), t.stride(2)};
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

// Runs one float32 product, or, for an empty contraction (which oneDNN cannot take), fills C
// with what the product would give: beta * C (when it holds an addend) plus the bias.
void run_matmul(const onednn::MatmulArgs& g, const char* op) {
  if (g.k > 0) return onednn::matmul(g, op);
  auto* c = static_cast<float*>(g.c);  // float32: an empty contraction never runs natively
  const auto* bias = static_cast<const float*>(g.bias);
  for (int64_t i = 0; i < g.batch * g.m * g.n; ++i)
    c[i] = (g.beta != 0.f ? g.beta * c[i] : 0.f) + (bias ? bias[i % g.n] : 0.f);
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
      float* const my_b = b32 + t * onednn::scratch_floats(k * n);
      mine.b = my_b;
      onednn::widen_rows_to_float(b16, dt, my_b, 1, 0, b_runs, b_ld, b_len);
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
    float* const my_c = static_cast<float*>(g.c) + r0 * n;
    mine.c = my_c;
    if (!private_b) {
#pragma omp barrier
    }
    try {
      if (rows > 0) {
        onednn::matmul(mine, op);
        onednn::round_from_float(my_c, o16 + r0 * n, dt, rows * n);
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
  const bool use_bias =
      addend.defined() && beta == 1 && alpha == 1 && meta::is_row_vector(addend, n);
  const bool use_addend = !use_bias && addend.defined() && beta != 0;
  // bfloat16 runs natively where the CPU has AVX512-BF16 (Note [Native bf16 gemm]); an empty
  // contraction, which oneDNN cannot take, is staged.
  const bool native =
      dt == ScalarType::Float32 || (dt == ScalarType::BFloat16 && k > 0 && onednn::native_bf16());
  const bool staged = !native;

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
    const Staged sa = stage_as_is(a), sb = stage_as_is(b);
    args.type = dt;
    args.a = sa.data;
    args.a_bs = sa.bs, args.a_rs = sa.rs, args.a_cs = sa.cs;
    args.b = sb.data;
    args.b_bs = sb.bs, args.b_rs = sb.rs, args.b_cs = sb.cs;
    args.b_storage = b.storage().get();
    args.c = out.raw_data();
    if (use_addend) out.copy_(addend);  // broadcasting
    if (use_bias) args.bias = bias_t.raw_data();
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
  float* const c32p = use_addend ? c32.data<float>() : buf + na + nb;
  args.c = c32p;
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
  onednn::round_from_float(c32p, out.raw_data(), dt, batch * m * n);
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

// --- ops (checks and shapes: kernels/linalg_meta.h) -----------------------------------------

Tensor mm_k(const Tensor& self, const Tensor& mat2) {
  meta::check_mm(self, mat2);
  return gemm(as_batch1(self), as_batch1(mat2), Tensor(), 0, 1, "mm").squeeze(0);
}
Tensor mm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return meta::write_out(out, mm_k(self, mat2));
}

Tensor addmm_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
               const Scalar& alpha) {
  const Tensor addend = self.expand(meta::addmm_shape(self, mat1, mat2));
  return gemm(as_batch1(mat1), as_batch1(mat2), addend, beta, alpha, "addmm").squeeze(0);
}
Tensor addmm_out_k(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                   const Scalar& alpha, Tensor out) {
  return meta::write_out(out, addmm_k(self, mat1, mat2, beta, alpha));
}

Tensor bmm_k(const Tensor& self, const Tensor& mat2) {
  meta::check_bmm(self, mat2);
  return gemm(self, mat2, Tensor(), 0, 1, "bmm");
}
Tensor bmm_out_k(const Tensor& self, const Tensor& mat2, Tensor out) {
  return meta::write_out(out, bmm_k(self, mat2));
}

Tensor baddbmm_k(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                 const Scalar& alpha) {
  const Tensor addend = self.expand(meta::baddbmm_shape(self, batch1, batch2));
  return gemm(batch1, batch2, addend, beta, alpha, "baddbmm");
}

Tensor addbmm_k(const Tensor& self, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
                const Scalar& alpha) {
  const meta::Product p = meta::addbmm_product(self, batch1, batch2);
  return gemm(as_batch1(p.lhs), as_batch1(p.rhs), self.expand(p.out_shape), beta, alpha, "addbmm")
      .squeeze(0);
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
  meta::check_mv(self, vec);
  return mv_gemm(self, vec, Tensor(), 0, 1, "mv");
}
Tensor addmv_k(const Tensor& self, const Tensor& mat, const Tensor& vec, const Scalar& beta,
               const Scalar& alpha) {
  meta::check_addmv(self, mat, vec);
  return mv_gemm(mat, vec, self, beta, alpha, "addmv");
}

// dot: a reduction, not a gemm. Accumulates in the op-math type (float for float32 and the
// reduced types, like BLAS sdot; double for float64; wrapping uint64 for integers) with eight
// partial sums so the loop vectorizes.
Tensor dot_k(const Tensor& self, const Tensor& other) {
  meta::check_dot(self, other);
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

// Note [matmul's rank cases] in kernels/linalg_meta.h: dot, mv, mm, or one batched product whose
// broadcast operand oneDNN reads with batch stride 0.
Tensor matmul_k(const Tensor& t1, const Tensor& t2) {
  return meta::matmul(t1, t2, dot_k, mv_k, mm_k, [](const Tensor& a, const Tensor& b) {
    return gemm(a, b, Tensor(), 0, 1, "matmul");
  });
}
Tensor matmul_out_k(const Tensor& t1, const Tensor& t2, Tensor out) {
  return meta::write_out(out, matmul_k(t1, t2));
}

// linear: input [..., in] @ weight^T + bias in one product (meta::linear_product); a bias that
// only varies along the features is added by oneDNN.
Tensor linear_k(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  const meta::Product p = meta::linear_product(input, weight, bias);
  const Tensor addend = bias ? meta::linear_addend(*bias, weight, p) : Tensor();
  return gemm(as_batch1(p.lhs), as_batch1(p.rhs), addend, 1, 1, "linear").view(p.out_shape);
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
AMPJIT_KERNEL(addmm_out, cpu::addmm_out_k)
AMPJIT_KERNEL(addmv, cpu::addmv_k)
AMPJIT_KERNEL(addbmm, cpu::addbmm_k)
AMPJIT_KERNEL(baddbmm, cpu::baddbmm_k)
AMPJIT_KERNEL(linear, cpu::linear_k)
