// Boxed CUDA kernels for the ops of runtime/ops/reduction.def: sum, mean, prod, amax/amin,
// max/min, argmax/argmin, cumsum/cumprod, logsumexp, var/std, norm, softmax and log_softmax.
// Argument checks, messages, result dtypes and shapes are the CPU kernels' own, from
// kernels/reduce_meta.h (Note [Reduction forms]); the device work is in reduce.cu.
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
#include <tuple>

#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/reduce.h"
#include "kernels/cuda/register.h"
#include "kernels/cuda/tensor_iter.h"
#include "kernels/reduce_meta.h"
#include "runtime/error.h"

namespace ampjit::cuda {
namespace {

using meta::AlongDim;
using meta::DimMask;
using meta::is_reduced;
using meta::Reduction;
using meta::SumKind;

// --- layouts and the reduction driver -----------------------------------------------------------

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
// `values` and/or `indices` (either may be undefined), allocated with the reduction's sizes.
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

// --- the entry points of Note [Reduction forms] -------------------------------------------------

// `op` over the reduction's dims of self cast to its compute dtype, cast to its result dtype.
Tensor reduce(ReduceOp op, const Tensor& self, const Reduction& reduction, double param = 0) {
  DeviceGuard guard(self.device());
  Tensor out = Tensor::empty(reduction.sizes, reduction.compute, self.device());
  run_reduction(op, cast(self, reduction.compute), reduction.mask, out, Tensor(), param);
  return cast(out, reduction.result);
}

Tensor sum_like(const Tensor& self, const Reduction& reduction, SumKind kind) {
  return reduce(kind == SumKind::Sum    ? ReduceOp::sum
                : kind == SumKind::Mean ? ReduceOp::mean
                                        : ReduceOp::prod,
                self, reduction);
}

// NaN is the extreme; ties and NaNs keep the first position.
std::tuple<Tensor, Tensor> extreme(const Tensor& self, const Reduction& reduction, bool is_max,
                                   bool want_values, bool want_indices) {
  DeviceGuard guard(self.device());
  Tensor values =
      want_values ? Tensor::empty(reduction.sizes, self.dtype(), self.device()) : Tensor();
  Tensor indices =
      want_indices ? Tensor::empty(reduction.sizes, ScalarType::Int64, self.device()) : Tensor();
  run_reduction(is_max ? ReduceOp::max : ReduceOp::min, self, reduction.mask, values, indices);
  return {values, indices};
}

Tensor cumulative(const Tensor& self, const AlongDim& along, bool is_prod) {
  DeviceGuard guard(self.device());
  const Tensor in = cast(self, along.compute).contiguous();
  Tensor out = Tensor::empty(self.sizes(), along.compute, self.device());
  launch_scan(is_prod, dt(along.compute), shape_along(in.sizes(), along.dim), in.raw_data(),
              out.raw_data());
  return cast(out, along.result);
}

// log(sum(exp(x))) shifted by the max (reduce.cu ExpSumReducer).
Tensor logsumexp(const Tensor& self, const Reduction& reduction) {
  return reduce(ReduceOp::logsumexp, self, reduction);
}

// Two passes (the mean, then squared deviations).
Tensor var_std(const Tensor& self, const Reduction& reduction, double correction, bool take_sqrt) {
  return reduce(take_sqrt ? ReduceOp::std : ReduceOp::var, self, reduction, correction);
}

// The vector p-norm (torch.linalg.vector_norm) of |x| (reduce.cu NormReducer).
Tensor norm(const Tensor& self, const Reduction& reduction, double ord) {
  return reduce(ReduceOp::norm, self, reduction, ord);
}

Tensor softmax(const Tensor& self, const AlongDim& along, bool log) {
  DeviceGuard guard(self.device());
  const Tensor x = cast(self, along.compute).contiguous();
  Tensor out = Tensor::empty(x.sizes(), along.compute, self.device());
  launch_softmax(log, dt(along.compute), shape_along(x.sizes(), along.dim), x.raw_data(),
                 out.raw_data());
  return cast(out, along.result);
}

struct DeviceLoops {
  static constexpr auto sum = sum_like;
  static constexpr auto extreme = cuda::extreme;
  static constexpr auto cumulative = cuda::cumulative;
  static constexpr auto logsumexp = cuda::logsumexp;
  static constexpr auto var_std = cuda::var_std;
  static constexpr auto norm = cuda::norm;
  static constexpr auto softmax = cuda::softmax;
};
using Forms = meta::ReductionForms<DeviceLoops>;

}  // namespace

void register_reduction_kernels() {
  AMPJIT_CUDA_KERNEL(sum, Forms::sum_k);
  AMPJIT_CUDA_KERNEL(sum_dim_IntList, Forms::sum_dim_k);
  AMPJIT_CUDA_KERNEL(mean, Forms::mean_k);
  AMPJIT_CUDA_KERNEL(mean_dim, Forms::mean_dim_k);
  AMPJIT_CUDA_KERNEL(prod, Forms::prod_k);
  AMPJIT_CUDA_KERNEL(prod_dim_int, Forms::prod_dim_k);
  AMPJIT_CUDA_KERNEL(amax, Forms::amax_k);
  AMPJIT_CUDA_KERNEL(amin, Forms::amin_k);
  AMPJIT_CUDA_KERNEL(max, Forms::max_k);
  AMPJIT_CUDA_KERNEL(max_dim, Forms::max_dim_k);
  AMPJIT_CUDA_KERNEL(min, Forms::min_k);
  AMPJIT_CUDA_KERNEL(min_dim, Forms::min_dim_k);
  AMPJIT_CUDA_KERNEL(argmax, Forms::argmax_k);
  AMPJIT_CUDA_KERNEL(argmin, Forms::argmin_k);
  AMPJIT_CUDA_KERNEL(cumsum, Forms::cumsum_k);
  AMPJIT_CUDA_KERNEL(cumprod, Forms::cumprod_k);
  AMPJIT_CUDA_KERNEL(logsumexp, Forms::logsumexp_k);
  AMPJIT_CUDA_KERNEL(var, Forms::var_k);
  AMPJIT_CUDA_KERNEL(var_dim, Forms::var_dim_k);
  AMPJIT_CUDA_KERNEL(var_correction, Forms::var_correction_k);
  AMPJIT_CUDA_KERNEL(std, Forms::std_k);
  AMPJIT_CUDA_KERNEL(std_dim, Forms::std_dim_k);
  AMPJIT_CUDA_KERNEL(std_correction, Forms::std_correction_k);
  AMPJIT_CUDA_KERNEL(norm_Scalar, Forms::norm_Scalar_k);
  AMPJIT_CUDA_KERNEL(norm_ScalarOpt_dim, Forms::norm_ScalarOpt_dim_k);
  AMPJIT_CUDA_KERNEL(norm_ScalarOpt_dtype, Forms::norm_ScalarOpt_dtype_k);
  AMPJIT_CUDA_KERNEL(norm_ScalarOpt_dim_dtype, Forms::norm_ScalarOpt_dim_dtype_k);
  AMPJIT_CUDA_KERNEL(softmax_int, Forms::softmax_k);
  AMPJIT_CUDA_KERNEL(log_softmax_int, Forms::log_softmax_k);
}

}  // namespace ampjit::cuda
