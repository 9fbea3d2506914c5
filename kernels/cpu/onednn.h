// The CPU kernels' window onto oneDNN: matmul and convolution behind plain structs, so that only
// onednn.cpp includes <oneapi/dnnl/dnnl.hpp> (a 1.7 s header), plus the float32 staging that lets
// float16 and bfloat16 operands use the float32 primitives where the CPU has no faster way.
//
// Note [Native bf16 gemm]
// oneDNN 2.6 has no float64 primitives and no float16 ones on x64; its bfloat16 ones need
// avx512_core and are only fast with AVX512-BF16 (or AMX). How fast depends on the CPU: on the
// AVX512-BF16 Xeon of earlier sessions oneDNN's bf16 brgemm was slower than widening to float32
// (~140 against ~205-230 GFLOP/s at 2 threads); on the AVX512-BF16 EPYC of this one it is twice
// float32 (1024^3, 2 threads: 679 against 331 GFLOP/s; widening gave 310). So:
//  - float32 tensors go straight in (strided operands described by their strides);
//  - bfloat16 tensors go straight in as bfloat16 where cpu_isa() >= kAvx512Bf16 (Note [CPU
//    dispatch] in runtime/cpu_features.h): oneDNN accumulates in float32 and rounds the result
//    once, as torch's bf16 CPU gemm does;
//  - elsewhere (and float16 always) they are widened by hand into float32 scratch, computed in
//    float32 and rounded once into the result; Note [Widening bf16 for gemm] in matmul_ops.cpp
//    has the measurements behind the layout;
//  - float64 and integer tensors use the simple loops in the op files.
// The two bfloat16 paths differ only in float32 summation order (tests compare both with a
// float64 reference).
// Every dnnl::error becomes an ampjit::Error naming the op; problems oneDNN cannot take
// (zero-sized dimensions crash it with SIGFPE) are handled by the callers before they get here.
#pragma once
#include <cstdint>
#include <memory>

#include "runtime/cpu_features.h"
#include "runtime/dtype.h"

namespace ampjit {
class Storage;
}

namespace ampjit::cpu::onednn {

// Whether bfloat16 matmul and convolution run natively (Note [Native bf16 gemm]).
inline bool native_bf16() {
  return cpu_isa() >= CpuIsa::kAvx512Bf16;
}

// C[b] = alpha * A[b] @ B[b] (+ beta * C[b]) (+ bias), every operand given by element strides.
// A is batch x m x k, B batch x k x n, C batch x m x n with unit column stride. A batch stride
// of 0 broadcasts that operand over the batch. The strides of A and B must have passed
// normalize_gemm_layout(). All sizes are > 0. Every operand has `type`: Float32, or BFloat16
// where native_bf16().
struct MatmulArgs {
  ScalarType type = ScalarType::Float32;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  const void* a = nullptr;
  int64_t a_bs = 0, a_rs = 0, a_cs = 1;
  const void* b = nullptr;
  int64_t b_bs = 0, b_rs = 0, b_cs = 1;
  void* c = nullptr;
  int64_t c_bs = 0, c_rs = 0;
  const void* bias = nullptr;  // n values added to every row; only with alpha == 1
  float alpha = 1.f;
  float beta = 0.f;  // != 0: C holds the addend on entry
  // The storage `b` points into, where the caller knows it: a frozen B of an unbatched product
  // (a frozen linear weight) is kept pre-packed (Note [Pre-packed weights] in onednn.cpp).
  const Storage* b_storage = nullptr;
};
void matmul(const MatmulArgs& args, const char* op);

// Whether a rows x cols matrix with these element strides is one oneDNN's gemm kernels take:
// row-major (col_stride 1, row_stride >= cols) or column-major (row_stride 1, col_stride >=
// rows). Strides of size-1 dimensions are rewritten to fit. Anything else (stride 0 from expand,
// two non-unit strides) would fall to oneDNN's slow reference kernel, so callers copy it first.
bool normalize_gemm_layout(int64_t rows, int64_t cols, int64_t& row_stride, int64_t& col_stride);

// Convolution (or transposed convolution) over 1 to 3 spatial dims, all tensors of `type`
// (Float32, or BFloat16 where native_bf16()) and contiguous in torch's layouts: src N x IC x S...,
// dst N x OC x O..., weight OC x IC/G x K... (transposed: IC x OC/G x K...), bias OC floats or
// null. Padding is torch's symmetric padding; output_padding (transposed only) extends the far
// side. dilation is torch's (1 = dense).
struct ConvArgs {
  ScalarType type = ScalarType::Float32;
  int nsp = 2;
  bool transposed = false;
  int64_t n = 0, ic = 0, oc = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1};
  int64_t output_padding[3] = {0, 0, 0};
  const void* src = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* dst = nullptr;
  // src and dst in channels-last layout (N x H x W x C in memory; 2-D convolutions only), and
  // the weight (OC x KH x KW x IC/G in memory; not transposed).
  bool channels_last = false, weight_channels_last = false;
  // The storage `weight` points into, where the caller knows it: a frozen one keeps the weight
  // pre-packed in the primitive's layout (Note [Pre-packed weights] in onednn.cpp).
  const Storage* weight_storage = nullptr;
  // A ReLU applied as the convolution writes dst (a oneDNN post-op): relu(conv(x)).
  bool relu = false;
};
void convolution(const ConvArgs& args, const char* op);

// Convolution backward: oneDNN's convolution_backward_data and convolution_backward_weights, what
// torch's CPU backward calls (Note [Convolution backward primitives] in onednn.cpp). `fwd`
// describes the forward (not transposed, no ReLU; src and weight point at its input and weight,
// dst and bias are ignored). From diff_dst (in dst's layout) it writes diff_src (src's layout),
// diff_weight (the weight's dense layout, OC x IC/G x K...) and diff_bias (OC values, Float32 only)
// where they are not null.
struct ConvBackwardArgs {
  ConvArgs fwd;
  const void* diff_dst = nullptr;
  void* diff_src = nullptr;
  void* diff_weight = nullptr;
  void* diff_bias = nullptr;
};
void convolution_backward(const ConvBackwardArgs& args, const char* op);

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
