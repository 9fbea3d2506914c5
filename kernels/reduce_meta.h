// What the reductions, scans and softmax decide before any element is read, shared by the CPU
// kernels (kernels/cpu/reduce_ops.cpp, kernels/cpu/softmax_ops.cpp) and the CUDA ones
// (kernels/cuda/reduce_ops.cpp): the reduced dims and the result's shape, the result and compute
// dtypes, torch's argument checks with its messages, and every schema form of the ops
// (Note [Reduction forms]). A backend supplies only the loops, so the two cannot drift apart in
// what they accept or return.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "runtime/error.h"
#include "runtime/tensor.h"

namespace ampjit::meta {

// ---- dims and shapes ---------------------------------------------------------------------------

// Bit d set: dim d is reduced. Tensors have at most 64 dims here.
using DimMask = uint64_t;

inline DimMask all_dims_mask(int64_t ndim) {
  return ndim >= 64 ? ~DimMask{0} : (DimMask{1} << ndim) - 1;
}
inline bool is_reduced(DimMask m, int64_t d) {
  return (m >> d) & 1;
}

// Wraps and checks `dims` against `ndim` (an out-of-range dim is torch's IndexError naming the
// range; a repeated dim is an error). An empty list means every dim, as in torch.
inline DimMask make_dim_mask(std::span<const int64_t> dims, int64_t ndim) {
  AMPJIT_CHECK(ndim <= 64, "reductions support tensors of at most 64 dims, got {}", ndim);
  if (dims.empty()) return all_dims_mask(ndim);
  DimMask m = 0;
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim);
    AMPJIT_CHECK(!is_reduced(m, w), "dim {} appears multiple times in the list of dims", w);
    m |= DimMask{1} << w;
  }
  return m & all_dims_mask(ndim);  // a 0-dim tensor accepts dim 0 / -1 and has nothing to reduce
}

// dim=None means every dim, as the empty list does.
inline std::vector<int64_t> dims_or_all(const std::optional<std::vector<int64_t>>& dims) {
  return dims.value_or(std::vector<int64_t>{});
}

// The result shape: reduced dims dropped, or kept as size 1 with keepdim.
inline DimVector reduced_sizes(IntArrayRef sizes, DimMask mask, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!is_reduced(mask, static_cast<int64_t>(d)))
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

// torch's zero_numel_check_dims: ops without an identity (max, amax, argmax) refuse to reduce an
// empty dim. `dims` are as the caller gave them (torch prints them unwrapped).
inline void check_nonempty_dims(const Tensor& t, std::span<const int64_t> dims, const char* op) {
  if (t.numel() != 0) return;
  AMPJIT_CHECK(!dims.empty(),
               "{}: Expected reduction dim to be specified for input.numel() == 0. Specify the "
               "reduction dim with the 'dim' argument.",
               op);
  for (int64_t d : dims) {
    AMPJIT_CHECK_T(IndexError, t.size(d) != 0,
                   "{}: Expected reduction dim {} to have non-zero size.", op, d);
  }
}

// ---- what a reduction computes ------------------------------------------------------------------

// A reduction over a set of dims as both backends run it: the input is cast to `compute`, reduced
// over `mask` into a contiguous tensor of `sizes`, and cast to `result`.
struct Reduction {
  DimMask mask = 0;
  DimVector sizes;
  ScalarType result = ScalarType::Float32;
  ScalarType compute = ScalarType::Float32;
};

inline Reduction reduction(const Tensor& self, DimMask mask, bool keepdim, ScalarType result,
                           ScalarType compute) {
  return {mask, reduced_sizes(self.sizes(), mask, keepdim), result, compute};
}
// A reduction in the input's own dtype (max, min, var, std).
inline Reduction reduction_as_is(const Tensor& self, DimMask mask, bool keepdim) {
  return reduction(self, mask, keepdim, self.dtype(), self.dtype());
}

// An op along one dim (cumsum, cumprod, softmax): the input is cast to `compute` and the result,
// of the input's shape, is cast to `result`.
struct AlongDim {
  int64_t dim = 0;  // wrapped
  ScalarType result = ScalarType::Float32;
  ScalarType compute = ScalarType::Float32;
};

enum class SumKind { Sum, Mean, Prod };
inline const char* sum_kind_name(SumKind k) {
  return k == SumKind::Sum ? "sum" : k == SumKind::Mean ? "mean" : "prod";
}

// sum/prod/cumsum/cumprod: integers and bool widen to int64 unless a dtype is given.
inline ScalarType widened_type(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : self.dtype();
}

// The compute dtype of sum, mean, prod and the scans for result dtype `rt`: integer results are
// computed in int64 and narrowed at the end (wrapping arithmetic commutes with the narrowing, so
// sum(x, dtype=int8) is exact; a bool result is whether the int64 one is nonzero, as torch's),
// which leaves int64 and the floating types to instantiate.
inline ScalarType sum_compute_type(ScalarType rt, const char* op) {
  const ScalarType ct = is_integral(rt, /*include_bool=*/true) ? ScalarType::Int64 : rt;
  if (ct != ScalarType::Int64 && !is_floating(ct)) throw_unsupported_dtype(op, ct);
  return ct;
}

inline ScalarType mean_result_type(const Tensor& self, std::optional<ScalarType> dtype) {
  const ScalarType rt = dtype.value_or(self.dtype());
  AMPJIT_CHECK(is_floating(rt),
               "mean(): could not infer output dtype. {} dtype must be either a floating point or "
               "complex dtype. Got: {}",
               dtype ? "Optional" : "Input", torch_type_name(rt));
  return rt;
}

inline Reduction sum_reduction(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                               std::optional<ScalarType> dtype, SumKind kind) {
  const ScalarType rt =
      kind == SumKind::Mean ? mean_result_type(self, dtype) : widened_type(self, dtype);
  const DimMask mask = make_dim_mask(dims, self.dim());
  return reduction(self, mask, keepdim, rt, sum_compute_type(rt, sum_kind_name(kind)));
}

inline AlongDim cumulative_along(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype,
                                 bool is_prod) {
  const ScalarType rt = widened_type(self, dtype);
  const int64_t d = wrap_dim(dim, self.dim());
  return {d, rt, sum_compute_type(rt, is_prod ? "cumprod" : "cumsum")};
}

// Integer inputs give float32.
inline Reduction logsumexp_reduction(const Tensor& self, std::span<const int64_t> dims,
                                     bool keepdim) {
  const ScalarType rt = is_integral(self.dtype(), true) ? ScalarType::Float32 : self.dtype();
  return reduction(self, make_dim_mask(dims, self.dim()), keepdim, rt, rt);
}

inline Reduction var_std_reduction(const Tensor& self, std::span<const int64_t> dims,
                                   bool keepdim) {
  AMPJIT_CHECK(is_floating(self.dtype()),
               "std and var only support floating point and complex dtypes");
  return reduction_as_is(self, make_dim_mask(dims, self.dim()), keepdim);
}

// The vector p-norm (torch.linalg.vector_norm) of order `ord`, in `dtype` when given. Orders
// without an identity (negative, +inf) refuse empty dims.
inline Reduction norm_reduction(const Tensor& self, const Scalar& ord,
                                std::span<const int64_t> dims, bool keepdim,
                                std::optional<ScalarType> dtype) {
  AMPJIT_CHECK(is_floating(self.dtype()),
               "norm(): input dtype should be either floating point or complex. Got {} instead.",
               torch_type_name(self.dtype()));
  AMPJIT_CHECK(!dtype || is_floating(*dtype),
               "norm(): the desired output dtype should be either floating point or complex. Got "
               "{} instead.",
               dtype ? torch_type_name(*dtype) : "");
  const double p = ord.to_double();
  const DimMask mask = make_dim_mask(dims, self.dim());
  if (self.numel() == 0 && (p < 0 || p == std::numeric_limits<double>::infinity())) {
    AMPJIT_CHECK(!dims.empty(),
                 "linalg.vector_norm cannot compute the {} norm on an empty tensor because the "
                 "operation does not have an identity",
                 ord.str());
    for (int64_t d : dims) {
      AMPJIT_CHECK(self.size(d) != 0,
                   "linalg.vector_norm cannot compute the {} norm on the dimension {}because this "
                   "dimension is empty and the operation does not have an identity",
                   ord.str(), d);
    }
  }
  const ScalarType rt = dtype.value_or(self.dtype());
  return reduction(self, mask, keepdim, rt, rt);
}

// With `dtype` the input is cast first and the result has that dtype (torch).
inline AlongDim softmax_along(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype,
                              bool log) {
  const ScalarType rt = dtype.value_or(self.dtype());
  const int64_t d = wrap_dim(dim, self.dim());
  if (!is_floating(rt)) throw_unsupported_dtype(log ? "log_softmax" : "softmax", rt);
  return {d, rt, rt};
}

// ---- the schema forms ---------------------------------------------------------------------------

// Note [Reduction forms]
// The ops of runtime/ops/reduction.def come in several schema forms each (sum and sum.dim_IntList,
// var with `unbiased` or with `correction`, norm with or without dims and dtype, max with or
// without a dim, ...). ReductionForms<B> writes every form once, with its checks and its plan,
// over the entry points a backend B supplies as static members (function pointers will do), each
// handed a decided plan:
//   Tensor sum(const Tensor& self, const Reduction& r, SumKind kind);
//   std::tuple<Tensor, Tensor> extreme(const Tensor& self, const Reduction& r, bool is_max,
//                                      bool want_values, bool want_indices);
//       // the values and/or the first positions of the max (is_max) or min, NaN the extreme;
//       // an undefined tensor for the one not wanted
//   Tensor cumulative(const Tensor& self, const AlongDim& a, bool is_prod);
//   Tensor logsumexp(const Tensor& self, const Reduction& r);
//   Tensor var_std(const Tensor& self, const Reduction& r, double correction, bool take_sqrt);
//       // the divisor is max(0, n - correction), as in torch
//   Tensor norm(const Tensor& self, const Reduction& r, double ord);
//   Tensor softmax(const Tensor& self, const AlongDim& a, bool log);
// A backend registers the forms by op id (AMPJIT_KERNEL(var_dim, cpu::Forms::var_dim_k)). Only
// the forms a backend registers are instantiated, so a file may supply some of the entry points.
template <typename B>
struct ReductionForms {
  // --- sum, mean, prod
  static Tensor sum_k(const Tensor& self, std::optional<ScalarType> dtype) {
    return sums(self, {}, false, dtype, SumKind::Sum);
  }
  static Tensor sum_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                          std::optional<ScalarType> dtype) {
    return sums(self, dims_or_all(dim), keepdim, dtype, SumKind::Sum);
  }
  static Tensor mean_k(const Tensor& self, std::optional<ScalarType> dtype) {
    return sums(self, {}, false, dtype, SumKind::Mean);
  }
  static Tensor mean_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                           bool keepdim, std::optional<ScalarType> dtype) {
    return sums(self, dims_or_all(dim), keepdim, dtype, SumKind::Mean);
  }
  static Tensor prod_k(const Tensor& self, std::optional<ScalarType> dtype) {
    return sums(self, {}, false, dtype, SumKind::Prod);
  }
  static Tensor prod_dim_k(const Tensor& self, int64_t dim, bool keepdim,
                           std::optional<ScalarType> dtype) {
    const int64_t d[] = {dim};
    return sums(self, d, keepdim, dtype, SumKind::Prod);
  }

  // --- max, min, amax, amin, argmax, argmin
  static Tensor max_k(const Tensor& self) { return extreme_of_all(self, true); }
  static Tensor min_k(const Tensor& self) { return extreme_of_all(self, false); }
  static std::tuple<Tensor, Tensor> max_dim_k(const Tensor& self, int64_t dim, bool keepdim) {
    return extreme_along(self, dim, keepdim, true);
  }
  static std::tuple<Tensor, Tensor> min_dim_k(const Tensor& self, int64_t dim, bool keepdim) {
    return extreme_along(self, dim, keepdim, false);
  }
  static Tensor amax_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
    return amax_amin(self, dim, keepdim, true);
  }
  static Tensor amin_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
    return amax_amin(self, dim, keepdim, false);
  }
  static Tensor argmax_k(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    return arg_extreme(self, dim, keepdim, true);
  }
  static Tensor argmin_k(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
    return arg_extreme(self, dim, keepdim, false);
  }

  // --- cumsum, cumprod, logsumexp
  static Tensor cumsum_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    return B::cumulative(self, cumulative_along(self, dim, dtype, false), false);
  }
  static Tensor cumprod_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    return B::cumulative(self, cumulative_along(self, dim, dtype, true), true);
  }
  static Tensor logsumexp_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
    return B::logsumexp(self, logsumexp_reduction(self, dim, keepdim));
  }

  // --- var, std: `unbiased` is correction 1 or 0; a missing correction is 1
  static Tensor var_k(const Tensor& self, bool unbiased) {
    return var_std(self, {}, unbiased, false, false);
  }
  static Tensor var_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                          bool unbiased, bool keepdim) {
    return var_std(self, dims_or_all(dim), unbiased, keepdim, false);
  }
  static Tensor var_correction_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                                 std::optional<Scalar> correction, bool keepdim) {
    return var_std(self, dims_or_all(dim), correction_or_one(correction), keepdim, false);
  }
  static Tensor std_k(const Tensor& self, bool unbiased) {
    return var_std(self, {}, unbiased, false, true);
  }
  static Tensor std_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                          bool unbiased, bool keepdim) {
    return var_std(self, dims_or_all(dim), unbiased, keepdim, true);
  }
  static Tensor std_correction_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                                 std::optional<Scalar> correction, bool keepdim) {
    return var_std(self, dims_or_all(dim), correction_or_one(correction), keepdim, true);
  }

  // --- norm: p defaults to 2
  static Tensor norm_Scalar_k(const Tensor& self, const Scalar& p) {
    return norm(self, p, {}, false, {});
  }
  static Tensor norm_ScalarOpt_dim_k(const Tensor& self, std::optional<Scalar> p,
                                     std::vector<int64_t> dim, bool keepdim) {
    return norm(self, p, dim, keepdim, {});
  }
  static Tensor norm_ScalarOpt_dtype_k(const Tensor& self, std::optional<Scalar> p,
                                       ScalarType dtype) {
    return norm(self, p, {}, false, dtype);
  }
  static Tensor norm_ScalarOpt_dim_dtype_k(const Tensor& self, std::optional<Scalar> p,
                                           std::vector<int64_t> dim, bool keepdim,
                                           ScalarType dtype) {
    return norm(self, p, dim, keepdim, dtype);
  }

  // --- softmax, log_softmax
  static Tensor softmax_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    return B::softmax(self, softmax_along(self, dim, dtype, false), false);
  }
  static Tensor log_softmax_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
    return B::softmax(self, softmax_along(self, dim, dtype, true), true);
  }

 private:
  static Tensor sums(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                     std::optional<ScalarType> dtype, SumKind kind) {
    return B::sum(self, sum_reduction(self, dims, keepdim, dtype, kind), kind);
  }

  static Tensor extreme_of_all(const Tensor& self, bool is_max) {
    check_nonempty_dims(self, {}, is_max ? "max()" : "min()");
    const Reduction r = reduction_as_is(self, all_dims_mask(self.dim()), false);
    return std::get<0>(B::extreme(self, r, is_max, true, false));
  }
  static std::tuple<Tensor, Tensor> extreme_along(const Tensor& self, int64_t dim, bool keepdim,
                                                  bool is_max) {
    const int64_t d[] = {wrap_dim(dim, self.dim())};
    check_nonempty_dims(self, d, is_max ? "max()" : "min()");
    const Reduction r = reduction_as_is(self, make_dim_mask(d, self.dim()), keepdim);
    return B::extreme(self, r, is_max, true, true);
  }
  static Tensor amax_amin(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim,
                          bool is_max) {
    const DimMask mask = make_dim_mask(dim, self.dim());
    check_nonempty_dims(self, dim, is_max ? "amax()" : "amin()");
    return std::get<0>(B::extreme(self, reduction_as_is(self, mask, keepdim), is_max, true, false));
  }
  // dim=None reduces the flattened tensor; keepdim then keeps every dim as size 1 (torch 2.x).
  static Tensor arg_extreme(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                            bool is_max) {
    const char* op = is_max ? "argmax()" : "argmin()";
    // The CPU's message on every device (tests/cuda compares messages across devices).
    AMPJIT_CHECK(self.dtype() != ScalarType::Bool, "\"{}_cpu\" not implemented for 'Bool'",
                 is_max ? "argmax" : "argmin");
    DimMask mask = all_dims_mask(self.dim());
    if (!dim) {
      AMPJIT_CHECK_T(IndexError, self.numel() != 0,
                     "{}: Expected reduction dim to be specified for input.numel() == 0.", op);
    } else {
      const int64_t d[] = {wrap_dim(*dim, self.dim())};
      check_nonempty_dims(self, d, op);
      mask = make_dim_mask(d, self.dim());
    }
    return std::get<1>(B::extreme(self, reduction_as_is(self, mask, keepdim), is_max, false, true));
  }

  static double correction_or_one(const std::optional<Scalar>& correction) {
    return correction ? correction->to_double() : 1.0;
  }
  static Tensor var_std(const Tensor& self, std::span<const int64_t> dims, double correction,
                        bool keepdim, bool take_sqrt) {
    return B::var_std(self, var_std_reduction(self, dims, keepdim), correction, take_sqrt);
  }

  static Tensor norm(const Tensor& self, const std::optional<Scalar>& p,
                     std::span<const int64_t> dims, bool keepdim, std::optional<ScalarType> dtype) {
    const Scalar ord = p.value_or(Scalar(2.0));
    const Reduction r = norm_reduction(self, ord, dims, keepdim, dtype);
    return B::norm(self, r, ord.to_double());
  }
};

}  // namespace ampjit::meta
