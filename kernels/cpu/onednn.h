// The CPU kernels' window onto oneDNN: float32 matmul and convolution behind plain structs, so
// that only onednn.cpp includes <oneapi/dnnl/dnnl.hpp> (a 1.7 s header), plus the float32 staging
// that lets float16 and bfloat16 operands use the float32 primitives.
//
// Note [oneDNN computes in float32 only]
// oneDNN 2.6 has no float64 primitives, and its bfloat16/float16 ones are either missing
// (bf16 needs avx512_core, f16 is never implemented on x64) or, where bf16 exists, slower than
// widening to float32 (AVX-512-BF16 Xeon, 2 threads: bf16 brgemm ~140 GFLOP/s against ~205-230
// for f32). So every primitive here is float32:
//  - float32 tensors go straight in (strided operands described by their strides);
//  - float16/bfloat16 tensors are widened by hand into float32 scratch, computed in float32 and
//    rounded once into the result (the same single rounding as torch's float accumulation);
//    Note [Widening bf16 for gemm] in matmul_ops.cpp has the measurements behind the layout;
//  - float64 and integer tensors use the simple loops in the op files.
// Every dnnl::error becomes an ampjit::Error naming the op; problems oneDNN cannot take
// (zero-sized dimensions crash it with SIGFPE) are handled by the callers before they get here.
#pragma once
#include <cstdint>
#include <memory>

#include "runtime/dtype.h"

namespace ampjit::cpu::onednn {

// C[b] = alpha * A[b] @ B[b] (+ beta * C[b]) (+ bias), float32, every operand given by element
// strides. A is batch x m x k, B batch x k x n, C batch x m x n with unit column stride.
// A batch stride of 0 broadcasts that operand over the batch. The strides of A and B must have
// passed normalize_gemm_layout(). All sizes are > 0.
struct MatmulArgs {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t a_bs = 0, a_rs = 0, a_cs = 1;
  const float* b = nullptr;
  int64_t b_bs = 0, b_rs = 0, b_cs = 1;
  float* c = nullptr;
  int64_t c_bs = 0, c_rs = 0;
  const float* bias = nullptr;  // n floats added to every row; only with alpha == 1
  float alpha = 1.f;
  float beta = 0.f;  // != 0: C holds the addend on entry
};
void matmul(const MatmulArgs& args, const char* op);

// Whether a rows x cols matrix with these element strides is one oneDNN's gemm kernels take:
// row-major (col_stride 1, row_stride >= cols) or column-major (row_stride 1, col_stride >=
// rows). Strides of size-1 dimensions are rewritten to fit. Anything else (stride 0 from expand,
// two non-unit strides) would fall to oneDNN's slow reference kernel, so callers copy it first.
bool normalize_gemm_layout(int64_t rows, int64_t cols, int64_t& row_stride, int64_t& col_stride);

// Convolution (or transposed convolution) over 1 to 3 spatial dims, float32, all tensors
// contiguous in torch's layouts: src N x IC x S..., dst N x OC x O..., weight OC x IC/G x K...
// (transposed: IC x OC/G x K...), bias OC floats or null. Padding is torch's symmetric padding;
// output_padding (transposed only) extends the far side. dilation is torch's (1 = dense).
struct ConvArgs {
  int nsp = 2;
  bool transposed = false;
  int64_t n = 0, ic = 0, oc = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int64_t output_padding[3] = {0, 0, 0};
  const float* src = nullptr;
  const float* weight = nullptr;
  const float* bias = nullptr;
  float* dst = nullptr;
};
void convolution(const ConvArgs& args, const char* op);

// --- float32 staging for float16 / bfloat16 (vectorized, split across threads) -------------
// Widens n values of `type` (Float16 or BFloat16) at src into float32.
void widen_to_float(const void* src, ScalarType type, float* dst, int64_t n);
// Widens a strided batch of rows: rows [b][r] of `len` contiguous elements at
// src + (b * batch_stride + r * row_stride) elements, into dense dst[(b * nrows + r) * len + i].
void widen_rows_to_float(const void* src, ScalarType type, float* dst, int64_t nbatch,
                         int64_t batch_stride, int64_t nrows, int64_t row_stride, int64_t len);
// Rounds n floats into `type` (Float16 or BFloat16), to nearest even, NaN kept.
void round_from_float(const float* src, void* dst, ScalarType type, int64_t n);

// A per-thread float32 scratch buffer reused across calls (fresh pages for every large gemm would
// cost a page fault per 4 KiB), 64-byte aligned like tensor storage (oneDNN's AVX-512 kernels
// lose ~10-30% on operands that are not). Requests up to 64 MiB reuse the thread's buffer;
// larger ones get their own allocation, released when the Scratch dies. Carve it with
// scratch_floats() so that every part stays aligned.
class Scratch {
 public:
  explicit Scratch(int64_t nfloats);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  float* data() const { return data_; }

  struct AlignedDelete {
    void operator()(float* p) const;
  };
  using Buffer = std::unique_ptr<float, AlignedDelete>;
  static Buffer allocate(int64_t nfloats);

 private:
  float* data_;
  Buffer own_;
  bool borrowed_ = false;
};
// n rounded up to whole 64-byte lines, the size of one part of a Scratch.
constexpr int64_t scratch_floats(int64_t n) {
  return (n + 15) / 16 * 16;
}

}  // namespace ampjit::cpu::onednn
