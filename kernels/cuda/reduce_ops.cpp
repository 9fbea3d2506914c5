// Boxed CUDA kernels for the ops of runtime/ops/reduction.def: sum, mean, prod, amax/amin,
// max/min, argmax/argmin, cumsum/cumprod, logsumexp, var/std, norm, softmax and log_softmax.
// Argument checks, messages, result dtypes and shapes mirror kernels/cpu/reduce_ops.cpp and
// kernels/cpu/softmax_ops.cpp; the device work is in reduce.cu.
//
// Note [Reduction layout]
// Every op runs on a dense [outer, len, inner] array whose middle dim holds the elements that
// combine (reduce.h). A contiguous input whose reduced dims are adjacent (size-1 dims never
// matter) is used as it is: outer is the product of the dims before them and inner of those after,
// so reducing dim 0 of a [R, K] tensor reads it as [1, R, K] without a copy. Any other input is
// copied once with the kept dims first and the reduced dims last, each group in its order
// (inner = 1). Either way position j along len is the row-major index over the reduced dims,
// which argmax reports (a flat index with dim=None), and the [outer, inner] results are the kept
// dims in row-major order: the contiguous result tensor. Scans and softmax work along one dim, so
// a contiguous input (or copy) of it is always [before, size, after].
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "kernels/cpu/reduce.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "runtime/error.h"

namespace ampjit::cuda {
namespace {

// --- dims and shapes ----------------------------------------------------------------------------

using cpu::all_dims_mask;
using cpu::DimMask;
using cpu::is_reduced;
using cpu::make_dim_mask;
using cpu::reduced_sizes;

// torch's zero_numel_check_dims: ops without an identity (max, amax, argmax) refuse to reduce an
// empty dim. `dims` are as the caller gave them (torch prints them unwrapped).
void check_nonempty_dims(const Tensor& t, std::span<const int64_t> dims, const char* op) {
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

// sum/prod/cumsum/cumprod: integers and bool widen to int64 unless a dtype is given.
ScalarType widened_type(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : self.dtype();
}

// The compute dtype of sum, prod and the scans for result dtype `rt`: integer results are computed
// in int64 and narrowed at the end (wrapping commutes with narrowing), as on CPU.
ScalarType sum_compute_type(ScalarType rt, const char* op) {
  const ScalarType ct = is_integral(rt) ? ScalarType::Int64 : rt;
  if (ct != ScalarType::Int64 && !is_floating(ct)) throw_unsupported_dtype(op, ct);
  return ct;
}

std::vector<int64_t> dims_or_all(const std::optional<std::vector<int64_t>>& dims) {
  return dims.value_or(std::vector<int64_t>{});
}

// The [before, size, after] shape of a contiguous tensor of `sizes` along dim d.
ReduceShape shape_along(IntArrayRef sizes, int64_t d) {
  ReduceShape s;
  for (int64_t i = 0; i < static_cast<int64_t>(sizes.size()); ++i) {
    if (i < d)
      s.outer *= sizes[i];
    else if (i == d)
      s.len = sizes[i];
    else
      s.inner *= sizes[i];
  }
  return s;
}

// --- the reduction driver -----------------------------------------------------------------------

// The input of a reduction as a dense [outer, len, inner] array (Note [Reduction layout]).
struct ReducePlan {
  Tensor in;
  ReduceShape shape;
};

ReducePlan plan_reduction(const Tensor& t, DimMask mask) {
  const IntArrayRef sizes = t.sizes();
  const int64_t nd = t.dim();
  int64_t first = -1, last = -1, len = 1;  // the reduced dims of size != 1 span [first, last]
  for (int64_t d = 0; d < nd; ++d) {
    if (!is_reduced(mask, d)) continue;
    len *= sizes[d];
    if (sizes[d] == 1) continue;
    if (first < 0) first = d;
    last = d;
  }
  if (t.is_contiguous()) {
    bool adjacent = true;
    for (int64_t d = first + 1; d < last; ++d) adjacent &= is_reduced(mask, d) || sizes[d] == 1;
    if (adjacent) {
      ReduceShape s;
      s.len = len;
      if (first < 0) {
        s.outer = t.numel();
      } else {
        for (int64_t d = 0; d < first; ++d) s.outer *= sizes[d];
        for (int64_t d = last + 1; d < nd; ++d) s.inner *= sizes[d];
      }
      return {t, s};
    }
  }
  DimVector perm;
  ReduceShape s;
  s.len = len;
  for (int64_t d = 0; d < nd; ++d) {
    if (is_reduced(mask, d)) continue;
    perm.push_back(d);
    s.outer *= sizes[d];
  }
  for (int64_t d = 0; d < nd; ++d) {
    if (is_reduced(mask, d)) perm.push_back(d);
  }
  return {t.permute(perm).contiguous(), s};
}

// Runs `op` over the dims in `mask` of `self` (on the current device, in the compute dtype) into
// `values` and/or `indices` (either may be undefined), allocated with reduced_sizes.
void run_reduction(ReduceOp op, const Tensor& self, DimMask mask, const Tensor& values,
                   const Tensor& indices, double param = 0) {
  if ((values.defined() ? values : indices).numel() == 0) return;
  const ReducePlan p = plan_reduction(self, mask);
  ReduceArgs a;
  a.op = op;
  a.dtype = dt(self.dtype());
  a.shape = p.shape;
  a.in = p.in.raw_data();
  a.out = values.defined() ? values.raw_data() : nullptr;
  a.indices = indices.defined() ? indices.data<int64_t>() : nullptr;
  a.param = param;
  const size_t bytes = reduce_workspace_bytes(a);
  Tensor workspace;
  if (bytes > 0) {
    const int64_t words[] = {static_cast<int64_t>((bytes + 7) / 8)};
    workspace = Tensor::empty(words, ScalarType::Int64, self.device());
  }
  launch_reduce(a, bytes > 0 ? workspace.raw_data() : nullptr);
}

// --- sum, mean, prod -----------------------------------------------------------------------------

Tensor sum_like(const Tensor& self, std::span<const int64_t> dims, bool keepdim, ScalarType rt,
                ReduceOp op, const char* name) {
  const DimMask mask = make_dim_mask(dims, self.dim());
  const ScalarType ct = sum_compute_type(rt, name);
  DeviceGuard guard(self.device());
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), ct, self.device());
  run_reduction(op, cast(self, ct), mask, out, Tensor());
  return cast(out, rt);
}

Tensor sum_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                std::optional<ScalarType> dtype) {
  return sum_like(self, dims, keepdim, widened_type(self, dtype), ReduceOp::sum, "sum");
}
Tensor mean_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                 std::optional<ScalarType> dtype) {
  const ScalarType rt = dtype.value_or(self.dtype());
  AMPJIT_CHECK(is_floating(rt),
               "mean(): could not infer output dtype. {} dtype must be either a floating point or "
               "complex dtype. Got: {}",
               dtype ? "Optional" : "Input", torch_type_name(rt));
  return sum_like(self, dims, keepdim, rt, ReduceOp::mean, "mean");
}

Tensor sum_k(const Tensor& self, std::optional<ScalarType> dtype) {
  return sum_impl(self, {}, false, dtype);
}
Tensor sum_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                 std::optional<ScalarType> dtype) {
  return sum_impl(self, dims_or_all(dim), keepdim, dtype);
}
Tensor mean_k(const Tensor& self, std::optional<ScalarType> dtype) {
  return mean_impl(self, {}, false, dtype);
}
Tensor mean_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                  std::optional<ScalarType> dtype) {
  return mean_impl(self, dims_or_all(dim), keepdim, dtype);
}
Tensor prod_k(const Tensor& self, std::optional<ScalarType> dtype) {
  return sum_like(self, {}, false, widened_type(self, dtype), ReduceOp::prod, "prod");
}
Tensor prod_dim_k(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  const int64_t d[] = {dim};
  return sum_like(self, d, keepdim, widened_type(self, dtype), ReduceOp::prod, "prod");
}

// --- max, min, amax, amin, argmax, argmin --------------------------------------------------------

// Values and/or indices of the extreme over `mask` (NaN is the extreme; ties and NaNs keep the
// first position); an undefined tensor for the one not wanted.
std::tuple<Tensor, Tensor> extreme(const Tensor& self, DimMask mask, bool keepdim, bool is_max,
                                   bool want_values, bool want_indices) {
  DeviceGuard guard(self.device());
  const DimVector sizes = reduced_sizes(self.sizes(), mask, keepdim);
  Tensor values = want_values ? Tensor::empty(sizes, self.dtype(), self.device()) : Tensor();
  Tensor indices = want_indices ? Tensor::empty(sizes, ScalarType::Int64, self.device()) : Tensor();
  run_reduction(is_max ? ReduceOp::max : ReduceOp::min, self, mask, values, indices);
  return {values, indices};
}

Tensor max_k(const Tensor& self) {
  check_nonempty_dims(self, {}, "max()");
  return std::get<0>(extreme(self, all_dims_mask(self.dim()), false, true, true, false));
}
Tensor min_k(const Tensor& self) {
  check_nonempty_dims(self, {}, "min()");
  return std::get<0>(extreme(self, all_dims_mask(self.dim()), false, false, true, false));
}
std::tuple<Tensor, Tensor> max_min_dim(const Tensor& self, int64_t dim, bool keepdim, bool is_max) {
  const int64_t d[] = {wrap_dim(dim, self.dim())};
  check_nonempty_dims(self, d, is_max ? "max()" : "min()");
  return extreme(self, make_dim_mask(d, self.dim()), keepdim, is_max, true, true);
}
std::tuple<Tensor, Tensor> max_dim_k(const Tensor& self, int64_t dim, bool keepdim) {
  return max_min_dim(self, dim, keepdim, true);
}
std::tuple<Tensor, Tensor> min_dim_k(const Tensor& self, int64_t dim, bool keepdim) {
  return max_min_dim(self, dim, keepdim, false);
}
Tensor amax_amin(const Tensor& self, const std::vector<int64_t>& dim, bool keepdim, bool is_max) {
  const DimMask mask = make_dim_mask(dim, self.dim());
  check_nonempty_dims(self, dim, is_max ? "amax()" : "amin()");
  return std::get<0>(extreme(self, mask, keepdim, is_max, true, false));
}
Tensor amax_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  return amax_amin(self, dim, keepdim, true);
}
Tensor amin_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  return amax_amin(self, dim, keepdim, false);
}
// dim=None reduces the flattened tensor; keepdim then keeps every dim as size 1 (torch 2.x).
Tensor arg_extreme(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax()" : "argmin()";
  // The CPU's message, word for word (tests/cuda compares messages across devices).
  AMPJIT_CHECK(self.dtype() != ScalarType::Bool, "\"{}_cpu\" not implemented for 'Bool'",
               is_max ? "argmax" : "argmin");
  if (!dim) {
    AMPJIT_CHECK_T(IndexError, self.numel() != 0,
                   "{}: Expected reduction dim to be specified for input.numel() == 0.", op);
    return std::get<1>(extreme(self, all_dims_mask(self.dim()), keepdim, is_max, false, true));
  }
  const int64_t d[] = {wrap_dim(*dim, self.dim())};
  check_nonempty_dims(self, d, op);
  return std::get<1>(extreme(self, make_dim_mask(d, self.dim()), keepdim, is_max, false, true));
}
Tensor argmax_k(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(self, dim, keepdim, true);
}
Tensor argmin_k(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_extreme(self, dim, keepdim, false);
}

// --- cumsum, cumprod -----------------------------------------------------------------------------

Tensor cumulative(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool is_prod) {
  const ScalarType rt = widened_type(self, dtype);
  const int64_t d = wrap_dim(dim, self.dim());
  const ScalarType ct = sum_compute_type(rt, is_prod ? "cumprod" : "cumsum");
  DeviceGuard guard(self.device());
  const Tensor in = cast(self, ct).contiguous();
  Tensor out = Tensor::empty(self.sizes(), ct, self.device());
  launch_scan(is_prod, dt(ct), shape_along(in.sizes(), d), in.raw_data(), out.raw_data());
  return cast(out, rt);
}
Tensor cumsum_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return cumulative(self, dim, dtype, false);
}
Tensor cumprod_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return cumulative(self, dim, dtype, true);
}

// --- logsumexp, var, std, norm -------------------------------------------------------------------

// log(sum(exp(x))) shifted by the max (reduce.cu ExpSumReducer). Integer inputs give float32.
Tensor logsumexp_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  const ScalarType rt = is_integral(self.dtype(), true) ? ScalarType::Float32 : self.dtype();
  const DimMask mask = make_dim_mask(dim, self.dim());
  DeviceGuard guard(self.device());
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), rt, self.device());
  run_reduction(ReduceOp::logsumexp, cast(self, rt), mask, out, Tensor());
  return out;
}

// Two passes (the mean, then squared deviations); the divisor is max(0, n - correction).
Tensor var_std(const Tensor& self, std::span<const int64_t> dims, double correction, bool keepdim,
               bool take_sqrt) {
  AMPJIT_CHECK(is_floating(self.dtype()),
               "std and var only support floating point and complex dtypes");
  const DimMask mask = make_dim_mask(dims, self.dim());
  DeviceGuard guard(self.device());
  Tensor out =
      Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), self.dtype(), self.device());
  run_reduction(take_sqrt ? ReduceOp::std : ReduceOp::var, self, mask, out, Tensor(), correction);
  return out;
}
Tensor var_k(const Tensor& self, bool unbiased) {
  return var_std(self, {}, unbiased, false, false);
}
Tensor var_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased,
                 bool keepdim) {
  return var_std(self, dims_or_all(dim), unbiased, keepdim, false);
}
Tensor var_correction_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                        std::optional<Scalar> correction, bool keepdim) {
  return var_std(self, dims_or_all(dim), correction ? correction->to_double() : 1.0, keepdim,
                 false);
}
Tensor std_k(const Tensor& self, bool unbiased) {
  return var_std(self, {}, unbiased, false, true);
}
Tensor std_dim_k(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool unbiased,
                 bool keepdim) {
  return var_std(self, dims_or_all(dim), unbiased, keepdim, true);
}
Tensor std_correction_k(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                        std::optional<Scalar> correction, bool keepdim) {
  return var_std(self, dims_or_all(dim), correction ? correction->to_double() : 1.0, keepdim, true);
}

// The vector p-norm (torch.linalg.vector_norm) of |x| (reduce.cu NormReducer).
Tensor norm_impl(const Tensor& self, std::optional<Scalar> p_opt, std::span<const int64_t> dims,
                 bool keepdim, std::optional<ScalarType> dtype) {
  AMPJIT_CHECK(is_floating(self.dtype()),
               "norm(): input dtype should be either floating point or complex. Got {} instead.",
               torch_type_name(self.dtype()));
  AMPJIT_CHECK(!dtype || is_floating(*dtype),
               "norm(): the desired output dtype should be either floating point or complex. Got "
               "{} instead.",
               dtype ? torch_type_name(*dtype) : "");
  const Scalar ord_s = p_opt.value_or(Scalar(2.0));
  const double ord = ord_s.to_double();
  const DimMask mask = make_dim_mask(dims, self.dim());
  if (self.numel() == 0 && (ord < 0 || ord == std::numeric_limits<double>::infinity())) {
    AMPJIT_CHECK(!dims.empty(),
                 "linalg.vector_norm cannot compute the {} norm on an empty tensor because the "
                 "operation does not have an identity",
                 ord_s.str());
    for (int64_t d : dims) {
      AMPJIT_CHECK(self.size(d) != 0,
                   "linalg.vector_norm cannot compute the {} norm on the dimension {}because this "
                   "dimension is empty and the operation does not have an identity",
                   ord_s.str(), d);
    }
  }
  const ScalarType rt = dtype.value_or(self.dtype());
  DeviceGuard guard(self.device());
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), rt, self.device());
  run_reduction(ReduceOp::norm, cast(self, rt), mask, out, Tensor(), ord);
  return out;
}
Tensor norm_Scalar_k(const Tensor& self, const Scalar& p) {
  return norm_impl(self, p, {}, false, {});
}
Tensor norm_ScalarOpt_dim_k(const Tensor& self, std::optional<Scalar> p, std::vector<int64_t> dim,
                            bool keepdim) {
  return norm_impl(self, p, dim, keepdim, {});
}
Tensor norm_ScalarOpt_dtype_k(const Tensor& self, std::optional<Scalar> p, ScalarType dtype) {
  return norm_impl(self, p, {}, false, dtype);
}
Tensor norm_ScalarOpt_dim_dtype_k(const Tensor& self, std::optional<Scalar> p,
                                  std::vector<int64_t> dim, bool keepdim, ScalarType dtype) {
  return norm_impl(self, p, dim, keepdim, dtype);
}

// --- softmax, log_softmax ------------------------------------------------------------------------

// With `dtype` the input is cast first and the result has that dtype (torch).
Tensor softmax_impl(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool log) {
  DeviceGuard guard(self.device());
  const Tensor in = dtype && *dtype != self.dtype() ? self.to(*dtype) : self;
  const int64_t d = wrap_dim(dim, in.dim());
  if (!is_floating(in.dtype()))
    throw_unsupported_dtype(log ? "log_softmax" : "softmax", in.dtype());
  const Tensor x = in.contiguous();
  Tensor out = Tensor::empty(in.sizes(), in.dtype(), in.device());
  launch_softmax(log, dt(in.dtype()), shape_along(x.sizes(), d), x.raw_data(), out.raw_data());
  return out;
}
Tensor softmax_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(self, dim, dtype, false);
}
Tensor log_softmax_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return softmax_impl(self, dim, dtype, true);
}

}  // namespace

void register_reduction_kernels() {
  AMPJIT_CUDA_KERNEL(sum, sum_k);
  AMPJIT_CUDA_KERNEL(sum_dim_IntList, sum_dim_k);
  AMPJIT_CUDA_KERNEL(mean, mean_k);
  AMPJIT_CUDA_KERNEL(mean_dim, mean_dim_k);
  AMPJIT_CUDA_KERNEL(prod, prod_k);
  AMPJIT_CUDA_KERNEL(prod_dim_int, prod_dim_k);
  AMPJIT_CUDA_KERNEL(amax, amax_k);
  AMPJIT_CUDA_KERNEL(amin, amin_k);
  AMPJIT_CUDA_KERNEL(max, max_k);
  AMPJIT_CUDA_KERNEL(max_dim, max_dim_k);
  AMPJIT_CUDA_KERNEL(min, min_k);
  AMPJIT_CUDA_KERNEL(min_dim, min_dim_k);
  AMPJIT_CUDA_KERNEL(argmax, argmax_k);
  AMPJIT_CUDA_KERNEL(argmin, argmin_k);
  AMPJIT_CUDA_KERNEL(cumsum, cumsum_k);
  AMPJIT_CUDA_KERNEL(cumprod, cumprod_k);
  AMPJIT_CUDA_KERNEL(logsumexp, logsumexp_k);
  AMPJIT_CUDA_KERNEL(var, var_k);
  AMPJIT_CUDA_KERNEL(var_dim, var_dim_k);
  AMPJIT_CUDA_KERNEL(var_correction, var_correction_k);
  AMPJIT_CUDA_KERNEL(std, std_k);
  AMPJIT_CUDA_KERNEL(std_dim, std_dim_k);
  AMPJIT_CUDA_KERNEL(std_correction, std_correction_k);
  AMPJIT_CUDA_KERNEL(norm_Scalar, norm_Scalar_k);
  AMPJIT_CUDA_KERNEL(norm_ScalarOpt_dim, norm_ScalarOpt_dim_k);
  AMPJIT_CUDA_KERNEL(norm_ScalarOpt_dtype, norm_ScalarOpt_dtype_k);
  AMPJIT_CUDA_KERNEL(norm_ScalarOpt_dim_dtype, norm_ScalarOpt_dim_dtype_k);
  AMPJIT_CUDA_KERNEL(softmax_int, softmax_k);
  AMPJIT_CUDA_KERNEL(log_softmax_int, log_softmax_k);
}

}  // namespace ampjit::cuda
