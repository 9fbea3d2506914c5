// What the matrix products and convolutions decide before any product runs, shared by the CPU
// kernels (kernels/cpu/matmul_ops.cpp, kernels/cpu/conv_ops.cpp) and the CUDA ones
// (kernels/cuda/blas_ops.cpp): torch's argument checks with its messages, result shapes,
// matmul's rank cases, the products addbmm and linear reduce to, and a convolution's expanded
// parameters and output size. A backend supplies only the products (and the dtypes it computes:
// Note [Floating products only on CUDA] in kernels/cuda/blas_ops.cpp), so the two cannot drift
// apart in what shapes they accept or return.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernels/operands.h"
#include "runtime/error.h"
#include "runtime/tensor.h"

namespace ampjit::meta {

inline std::vector<int64_t> shape_of(IntArrayRef s) {
  return {s.begin(), s.end()};
}

// Out tensors of structured ops must already have the result's dtype. Device-generic: the resize
// and the copy go through the Tensor.
inline Tensor write_out(Tensor out, const Tensor& result) {
  AMPJIT_CHECK(out.dtype() == result.dtype(),
               "Expected out tensor to have dtype {}, but got {} instead",
               cpp_type_name(result.dtype()), cpp_type_name(out.dtype()));
  kernels::resize_out(out, result.sizes());
  out.copy_(result);
  return out;
}

// ---- matrix products --------------------------------------------------------------------------

inline void check_mm_shapes(const Tensor& m1, const Tensor& m2) {
  AMPJIT_CHECK(m1.size(1) == m2.size(0),
               "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})", m1.size(0),
               m1.size(1), m2.size(0), m2.size(1));
}
inline void check_mm_dtypes(const Tensor& m1, const Tensor& m2) {
  AMPJIT_CHECK(m1.dtype() == m2.dtype(),
               "expected m1 and m2 to have the same dtype, but got: {} != {}",
               cpp_type_name(m1.dtype()), cpp_type_name(m2.dtype()));
}
inline void check_same_scalar_type(const Tensor& expected, const Tensor& found) {
  AMPJIT_CHECK(expected.dtype() == found.dtype(), "expected scalar type {} but found {}",
               torch_type_name(expected.dtype()), torch_type_name(found.dtype()));
}

inline void check_mm(const Tensor& self, const Tensor& mat2) {
  AMPJIT_CHECK(self.dim() == 2, "self must be a matrix");
  AMPJIT_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  check_mm_shapes(self, mat2);
  check_mm_dtypes(self, mat2);
}

// addmm's checks; returns the result's shape, which self broadcasts to.
inline std::vector<int64_t> addmm_shape(const Tensor& self, const Tensor& mat1,
                                        const Tensor& mat2) {
  AMPJIT_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got {}-D tensor", mat1.dim());
  AMPJIT_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got {}-D tensor", mat2.dim());
  check_mm_shapes(mat1, mat2);
  check_mm_dtypes(mat1, mat2);
  AMPJIT_CHECK(self.dtype() == mat2.dtype(),
               "self and mat2 must have the same dtype, but got {} and {}",
               torch_type_name(self.dtype()), torch_type_name(mat2.dtype()));
  return {mat1.size(0), mat2.size(1)};
}

inline void check_bmm(const Tensor& b1, const Tensor& b2) {
  AMPJIT_CHECK(b1.dim() == 3, "batch1 must be a 3D tensor");
  AMPJIT_CHECK(b2.dim() == 3, "batch2 must be a 3D tensor");
  AMPJIT_CHECK(b2.size(0) == b1.size(0) && b2.size(1) == b1.size(2),
               "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: "
               "[{}, {}].",
               b1.size(0), b1.size(2), b2.size(0), b2.size(1));
  check_same_scalar_type(b1, b2);
}

// baddbmm's checks; returns the result's shape, which self broadcasts to.
inline std::vector<int64_t> baddbmm_shape(const Tensor& self, const Tensor& batch1,
                                          const Tensor& batch2) {
  AMPJIT_CHECK(self.dtype() == batch1.dtype() && self.dtype() == batch2.dtype(),
               "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
               cpp_type_name(self.dtype()), cpp_type_name(batch1.dtype()),
               cpp_type_name(batch2.dtype()));
  check_bmm(batch1, batch2);
  return {batch1.size(0), batch1.size(1), batch2.size(2)};
}

// A product as a backend runs it: lhs @ rhs, the result viewed as out_shape.
struct Product {
  Tensor lhs, rhs;
  std::vector<int64_t> out_shape;
};

// addbmm's checks and its one product: sum_b batch1[b] @ batch2[b] is the product of the batches
// laid side by side, [n, B*m] @ [B*m, p]. self broadcasts to out_shape [n, p].
inline Product addbmm_product(const Tensor& self, const Tensor& batch1, const Tensor& batch2) {
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
  return {batch1.permute(std::vector<int64_t>{1, 0, 2}).reshape(std::vector<int64_t>{n, nb * m}),
          batch2.reshape(std::vector<int64_t>{nb * m, p}),
          {n, p}};
}

// mat @ vec's checks; self_dim and self_size describe addmv's self (mv passes mat's rows).
inline void check_mv(const Tensor& mat, const Tensor& vec, int64_t self_dim, int64_t self_size) {
  AMPJIT_CHECK(mat.dim() == 2 && vec.dim() == 1 && self_dim <= 1,
               "vector + matrix @ vector expected, got {}, {}, {}", self_dim, mat.dim(), vec.dim());
  AMPJIT_CHECK(mat.size(1) == vec.size(0), "size mismatch, got input ({}), mat ({}x{}), vec ({})",
               self_size, mat.size(0), mat.size(1), vec.size(0));
  check_same_scalar_type(mat, vec);
}
inline void check_mv(const Tensor& mat, const Tensor& vec) {
  check_mv(mat, vec, 1, mat.dim() >= 1 ? mat.size(0) : 1);
}
inline void check_addmv(const Tensor& self, const Tensor& mat, const Tensor& vec) {
  check_mv(mat, vec, self.dim(), self.dim() >= 1 ? self.size(0) : 1);
  AMPJIT_CHECK(self.numel() == mat.size(0) || self.numel() == 1,
               "size mismatch, got input ({}), mat ({}x{}), vec ({})",
               self.dim() ? self.size(0) : 1, mat.size(0), mat.size(1), vec.size(0));
  check_same_scalar_type(mat, self);
}

inline void check_dot(const Tensor& self, const Tensor& other) {
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
}

// Note [matmul's rank cases]
// As torch.matmul: 1-D x 1-D is dot; 2-D x 1-D is mv; 1-D x 2-D is a [1, n] @ [n, p] product;
// 2-D x 2-D is mm; an N-D (N >= 3) left operand with a 1-D or 2-D right one folds its batch
// dims into the rows (one big product, no copies when it is contiguous); everything else
// broadcasts the batch dims and runs one batched product, keeping a fully broadcast operand as a
// batch stride of 0 (oneDNN and cuBLAS's strided batches broadcast it) rather than materializing
// it. A 1-D operand becomes a row (left) or column (right) whose dim is dropped from the result.

// matmul by its rank cases: a backend passes its dot, mv and mm kernels (which check their
// operands) and `bmm`, its batched product of two [batch, rows, cols] operands already checked.
template <typename Dot, typename Mv, typename Mm, typename Bmm>
Tensor matmul(const Tensor& t1, const Tensor& t2, Dot dot, Mv mv, Mm mm, Bmm bmm) {
  const int64_t d1 = t1.dim(), d2 = t2.dim();
  AMPJIT_CHECK(d1 > 0 && d2 > 0,
               "both arguments to matmul need to be at least 1D, but they are {}D and {}D", d1, d2);
  if (d1 == 1 && d2 == 1) return dot(t1, t2);
  if (d1 == 2 && d2 == 1) return mv(t1, t2);
  if (d1 == 1 && d2 == 2) return mm(t1.unsqueeze(0), t2).squeeze(0);
  if (d1 == 2 && d2 == 2) return mm(t1, t2);
  if (d1 >= 3 && d2 <= 2) {
    std::vector<int64_t> out_shape = shape_of(t1.sizes().first(static_cast<size_t>(d1 - 1)));
    // the rows counted, not inferred (-1 cannot be inferred when the last dim is 0)
    const Tensor folded = t1.reshape(std::vector<int64_t>{numel_of(out_shape), t1.size(-1)});
    if (d2 == 1) return mv(folded, t2).view(out_shape);
    out_shape.push_back(t2.size(1));
    return mm(folded, t2).view(out_shape);
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
  return bmm(a, b).view(out_shape);
}

// Whether `addend` only varies along the last dim of an [.., n] result, so that it can be added
// as a bias row.
inline bool is_row_vector(const Tensor& addend, int64_t n) {
  return addend.dim() >= 1 && addend.size(-1) == n && addend.numel() == n;
}

// linear's checks and its one product, as torch.nn.functional.linear: lhs is input [..., in]
// with its leading dims folded into the rows, rhs is weight^T (a 1-D weight as a column, which
// gives one output per row and no feature dim, as matmul(input, weight) does).
inline Product linear_product(const Tensor& input, const Tensor& weight,
                              const std::optional<Tensor>& bias) {
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
  return {x2, wt, out_shape};
}
// linear's bias (on the product's device) as the addend of its [rows, n] product: [n] when it
// only varies along the features (a bias row), else broadcast to the result and folded like it.
inline Tensor linear_addend(const Tensor& bias, const Tensor& weight, const Product& p) {
  const int64_t n = p.rhs.size(1);
  if (weight.dim() == 2 && is_row_vector(bias, n)) return bias.reshape(std::vector<int64_t>{n});
  return bias.expand(p.out_shape).reshape(std::vector<int64_t>{p.lhs.size(0), n});
}

// ---- convolutions -----------------------------------------------------------------------------

struct ConvParams {
  int nsp = 2;  // spatial dims
  bool transposed = false;
  int64_t groups = 1;
  int64_t stride[3] = {}, padding[3] = {}, dilation[3] = {}, output_padding[3] = {};
};

// torch accepts one value for every spatial dim, or one per dim.
inline void expand_conv_param(const char* name, const std::vector<int64_t>& v, int nsp,
                              int64_t* dst) {
  AMPJIT_CHECK(v.size() == 1 || v.size() == static_cast<size_t>(nsp),
               "expected {} to be a single integer value or a list of {} values to match the "
               "convolution dimensions, but got {}={}",
               name, nsp, name, shape_str(v));
  for (int i = 0; i < nsp; ++i) dst[i] = v.size() == 1 ? v[0] : v[i];
}

// "3 x 4", as torch's convolution messages print sizes.
inline std::string join_x(const int64_t* v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += (i ? " x " : "") + std::to_string(v[i]);
  return s;
}

// A convolution's checked arguments and shapes.
struct ConvPlan {
  ConvParams params;
  bool unbatched = false;
  Tensor input;  // batched: [N, C, *in]
  int64_t n = 0, ic = 0, oc = 0;
  int64_t in[3] = {}, k[3] = {}, out[3] = {};  // spatial sizes of input, kernel, output
  std::vector<int64_t> out_shape;              // [N, OC, *out]

  // No input channels or an empty image: the output is the bias, or zeros.
  bool nothing_to_convolve() const {
    int64_t in_numel = 1;
    for (int i = 0; i < params.nsp; ++i) in_numel *= in[i];
    return ic == 0 || in_numel == 0;
  }
  // [1, OC, 1, ...]: the bias viewed to broadcast over the output.
  std::vector<int64_t> bias_shape() const {
    std::vector<int64_t> s(static_cast<size_t>(params.nsp + 2), 1);
    s[1] = oc;
    return s;
  }
};

// conv1d/2d/3d (nsp spatial dims) and conv_transpose, batched or unbatched: torch's checks, in
// its order and with its messages, and the output size.
inline ConvPlan plan_conv(const char* op, int nsp, bool transposed, const Tensor& input_,
                          const Tensor& weight, const std::optional<Tensor>& bias,
                          const std::vector<int64_t>& stride, const std::vector<int64_t>& padding,
                          const std::vector<int64_t>& dilation,
                          const std::vector<int64_t>& output_padding, int64_t groups) {
  ConvPlan c;
  ConvParams& p = c.params;
  p.nsp = nsp;
  p.transposed = transposed;
  p.groups = groups;
  expand_conv_param("stride", stride, nsp, p.stride);
  expand_conv_param("padding", padding, nsp, p.padding);
  expand_conv_param("dilation", dilation, nsp, p.dilation);
  expand_conv_param("output_padding", output_padding, nsp, p.output_padding);
  AMPJIT_CHECK(input_.dim() == nsp + 1 || input_.dim() == nsp + 2,
               "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
               nsp + 1, nsp + 2, op, input_.shape_str());
  c.unbatched = input_.dim() == nsp + 1;
  c.input = c.unbatched ? input_.unsqueeze(0) : input_;
  const Tensor& input = c.input;
  AMPJIT_CHECK(
      weight.dim() == nsp + 2,
      "Expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional input of "
      "size {} instead",
      weight.dim(), weight.dim(), weight.shape_str(), input.dim(), input.shape_str());
  for (int i = 0; i < nsp; ++i) {
    AMPJIT_CHECK(p.stride[i] > 0, "non-positive stride is not supported");
    AMPJIT_CHECK(p.padding[i] >= 0, "negative padding is not supported");
    AMPJIT_CHECK(p.dilation[i] > 0, "dilation should be greater than zero");
    AMPJIT_CHECK(p.output_padding[i] >= 0, "negative output_padding is not supported");
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
  c.n = input.size(0);
  const int64_t ic = c.ic = input.size(1);
  AMPJIT_CHECK(
      weight.size(0) % groups == 0,
      "Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of "
      "size {} instead",
      groups, groups, weight.shape_str());
  if (!transposed) {
    c.oc = weight.size(0);
    AMPJIT_CHECK(
        ic == weight.size(1) * groups,
        "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} "
        "channels instead",
        groups, weight.shape_str(), input.shape_str(), weight.size(1) * groups, ic);
  } else {
    c.oc = weight.size(1) * groups;
    AMPJIT_CHECK(
        ic == weight.size(0),
        "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} "
        "channels instead",
        weight.shape_str(), input.shape_str(), weight.size(0), ic);
  }
  if (bias) {
    AMPJIT_CHECK(
        bias->dim() == 1 && bias->size(0) == c.oc,
        "Given {}weight of size {}, expected bias to be 1-dimensional with {} elements, but got "
        "bias of size {} instead",
        transposed ? "transposed=1, " : "", weight.shape_str(), c.oc, bias->shape_str());
  }
  int64_t* const in = c.in;
  int64_t* const k = c.k;
  int64_t* const out = c.out;
  for (int i = 0; i < nsp; ++i) {
    in[i] = input.size(2 + i);
    k[i] = weight.size(2 + i);
  }
  if (!transposed) {
    int64_t padded[3], dk[3];
    bool fits = true;
    for (int i = 0; i < nsp; ++i) {
      padded[i] = in[i] + 2 * p.padding[i];
      dk[i] = p.dilation[i] * (k[i] - 1) + 1;
      fits = fits && padded[i] >= dk[i];
    }
    AMPJIT_CHECK(
        fits,
        "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be "
        "greater than actual input size",
        join_x(padded, nsp), join_x(dk, nsp));
    for (int i = 0; i < nsp; ++i) out[i] = (padded[i] - dk[i]) / p.stride[i] + 1;
  } else {
    bool op_ok = true;
    for (int i = 0; i < nsp; ++i) {
      op_ok = op_ok && (p.output_padding[i] < p.stride[i] || p.output_padding[i] < p.dilation[i]);
    }
    AMPJIT_CHECK(
        op_ok,
        "output padding must be smaller than either stride or dilation, but got output_padding: "
        "({}), stride: ({}), dilation: ({})",
        join_x(p.output_padding, nsp), join_x(p.stride, nsp), join_x(p.dilation, nsp));
    bool positive = true;
    for (int i = 0; i < nsp; ++i) {
      out[i] = (in[i] - 1) * p.stride[i] - 2 * p.padding[i] + p.dilation[i] * (k[i] - 1) +
               p.output_padding[i] + 1;
      positive = positive && out[i] > 0;
    }
    AMPJIT_CHECK(
        positive,
        "Given input size per channel: ({}). Calculated output size per channel: ({}). Output size "
        "is too small",
        join_x(in, nsp), join_x(out, nsp));
  }
  c.out_shape = {c.n, c.oc};
  for (int i = 0; i < nsp; ++i) c.out_shape.push_back(out[i]);
  return c;
}

}  // namespace ampjit::meta
