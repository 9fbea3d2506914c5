// Reduction kernels (runtime/ops/reduction.def): sum, mean, prod, amax/amin, max/min,
// argmax/argmin, cumsum/cumprod, logsumexp, var/std and norm, plus the row plan they share
// (Note [Reduction rows] in kernels/cpu/reduce.h). The checks, dims, shapes and dtypes come
// decided from kernels/reduce_meta.h (Note [Reduction forms]); each op here is one dtype dispatch
// around a loop over rows (Note [One dispatch per op] in kernels/cpu/elementwise.h).
#include <limits>

#include "kernels/cpu/reduce.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {

using meta::AlongDim;
using meta::DimMask;
using meta::is_reduced;
using meta::Reduction;
using meta::SumKind;

// --- the row plans (declared in reduce.h) --------------------------------------------------------

RowPlan plan_rows(const Tensor& in, DimMask mask) {
  RowPlan p;
  const int64_t nd = in.dim();
  DimVector kept, reduced;  // reduced: the dims of size != 1, which alone decide the layout
  for (int64_t d = 0; d < nd; ++d) {
    if (!is_reduced(mask, d)) {
      kept.push_back(d);
      p.n_out *= in.sizes()[d];
    } else {
      p.row_len *= in.sizes()[d];
      if (in.sizes()[d] != 1) reduced.push_back(d);
    }
  }
  bool merges = true;
  for (size_t i = 0; i + 1 < reduced.size(); ++i) {
    const int64_t a = reduced[i], b = reduced[i + 1];
    merges &= in.strides()[a] == in.strides()[b] * in.sizes()[b];
  }
  p.in = in;
  if (merges) {
    p.row_stride = reduced.empty() ? 1 : in.strides()[reduced[reduced.size() - 1]];
  } else {
    // Move every reduced dim last and copy: each row is then one contiguous run.
    DimVector perm = kept;
    for (int64_t d = 0; d < nd; ++d) {
      if (is_reduced(mask, d)) perm.push_back(d);
    }
    p.in = in.permute(perm).contiguous();
    p.row_stride = 1;
  }
  for (size_t i = 0; i < kept.size(); ++i) {
    const int64_t d = merges ? kept[i] : static_cast<int64_t>(i);  // the dim's place in p.in
    if (p.in.sizes()[d] == 1) continue;
    p.outer_sizes.push_back(p.in.sizes()[d]);
    p.outer_strides.push_back(p.in.strides()[d]);
  }
  return p;
}

RowPlan plan_rows_along(const Tensor& in, int64_t dim, const Tensor& out) {
  RowPlan p;
  p.in = in;
  p.scan = true;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (d == dim || in.sizes()[d] == 1) continue;
    p.outer_sizes.push_back(in.sizes()[d]);
    p.outer_strides.push_back(in.strides()[d]);
    p.out_strides.push_back(out.strides()[d]);
    p.n_out *= in.sizes()[d];
  }
  if (in.dim() > 0) {
    p.row_len = in.sizes()[dim];
    p.row_stride = in.strides()[dim];
    p.out_row_stride = out.strides()[dim];
  }
  return p;
}

namespace {

Tensor cast(const Tensor& t, ScalarType dt) {
  return t.dtype() == dt ? t : t.to(dt);
}

// The compute types of sum, prod, cumsum and cumprod (meta::sum_compute_type): int64 and the
// floating types.
template <typename F>
void dispatch_compute(ScalarType t, const char* op, F&& f) {
  if (t == ScalarType::Int64)
    f.template operator()<int64_t>();
  else
    dispatch_floating(t, op, std::forward<F>(f));
}

// --- sum, mean, prod -----------------------------------------------------------------------------

// Reducers (Note [Reducers] in reduce.h) over op-math values M.
template <typename M>
struct SumReducer {
  using Acc = acc_t<M>;
  Acc init(int64_t) const { return Acc(0); }
  void add(Acc& a, M v, int64_t) const { a += static_cast<Acc>(v); }
  void combine(Acc& a, const Acc& b) const { a += b; }
};

template <typename M>
struct ProdReducer {
  using Acc = acc_t<M>;
  Acc init(int64_t) const { return Acc(1); }
  void add(Acc& a, M v, int64_t) const { a *= static_cast<Acc>(v); }
  void combine(Acc& a, const Acc& b) const { a *= b; }
};

Tensor sum_like(const Tensor& self, const Reduction& reduction, SumKind kind) {
  Tensor out = Tensor::empty(reduction.sizes, reduction.compute);
  const RowPlan p = plan_rows(cast(self, reduction.compute), reduction.mask);
  dispatch_compute(reduction.compute, meta::sum_kind_name(kind), [&]<typename T>() {
    using M = opmath_t<T>;
    T* dst = out.data<T>();
    if (kind == SumKind::Prod) {
      reduce_rows<T>(p, ProdReducer<M>{},
                     [&](int64_t r, acc_t<M> a) { dst[r] = static_cast<T>(a); });
      return;
    }
    const double n = static_cast<double>(p.row_len);
    const bool mean = kind == SumKind::Mean;  // floating only (meta::mean_result_type)
    reduce_rows<T>(p, SumReducer<M>{}, [&](int64_t r, acc_t<M> a) {
      if constexpr (std::is_floating_point_v<acc_t<M>>)
        dst[r] = static_cast<T>(mean ? a / n : a);
      else
        dst[r] = static_cast<T>(a);
    });
  });
  return cast(out, reduction.result);
}

// --- max, min, amax, amin, argmax, argmin --------------------------------------------------------

// The largest (is_max) or smallest value of a row and its first position. NaN counts as the
// extreme, so the first NaN wins, as in torch. (max and min share one instantiation per dtype.)
template <typename M>
struct ExtremeReducer {
  bool is_max;
  struct Acc {
    M v{};
    int64_t i = -1;  // -1: no element yet
  };
  // Whether element (v, i) replaces the state a.
  bool beats(M v, int64_t i, const Acc& a) const {
    if (a.i < 0) return true;
    if (is_nan_value(a.v)) return is_nan_value(v) && i < a.i;
    if (is_nan_value(v)) return true;
    if (is_max ? v > a.v : v < a.v) return true;
    return v == a.v && i < a.i;
  }
  Acc init(int64_t) const { return {}; }
  void add(Acc& a, M v, int64_t i) const {
    if (beats(v, i, a)) a = {v, i};
  }
  void combine(Acc& a, const Acc& b) const {
    if (b.i >= 0 && beats(b.v, b.i, a)) a = b;
  }
};

// Values and/or indices of the extreme over the reduced dims; an undefined tensor for the one not
// wanted.
std::tuple<Tensor, Tensor> extreme(const Tensor& self, const Reduction& reduction, bool is_max,
                                   bool want_values, bool want_indices) {
  Tensor values = want_values ? Tensor::empty(reduction.sizes, self.dtype()) : Tensor();
  Tensor indices = want_indices ? Tensor::empty(reduction.sizes, ScalarType::Int64) : Tensor();
  const RowPlan p = plan_rows(self, reduction.mask);
  dispatch_all(self.dtype(), is_max ? "max" : "min", [&]<typename T>() {
    using M = opmath_t<T>;
    T* v = want_values ? values.data<T>() : nullptr;
    int64_t* ix = want_indices ? indices.data<int64_t>() : nullptr;
    reduce_rows<T>(p, ExtremeReducer<M>{is_max}, [&](int64_t r, const auto& a) {
      if (v) v[r] = static_cast<T>(a.v);  // a value of T itself: exact, NaN payloads included
      if (ix) ix[r] = a.i;
    });
  });
  return {values, indices};
}

// --- cumsum, cumprod ----------------------------------------------------------------------------

Tensor cumulative(const Tensor& self, const AlongDim& along, bool is_prod) {
  Tensor out = Tensor::empty(self.sizes(), along.compute);
  const RowPlan p = plan_rows_along(cast(self, along.compute), along.dim, out);
  dispatch_compute(along.compute, is_prod ? "cumprod" : "cumsum", [&]<typename T>() {
    using A = acc_t<opmath_t<T>>;
    const T* src = p.in.data<T>();
    T* dst = out.data<T>();
    const int64_t n = p.row_len, is = p.row_stride, os = p.out_row_stride;
    const A init = is_prod ? A(1) : A(0);
    if (use_column_blocks(p)) {  // Note [Column blocks]
      for_each_column_block(p, [&](int64_t, int64_t cnt, int64_t io, int64_t oo) {
        A acc[kColumnBlock];
        std::fill(acc, acc + cnt, init);
        for (int64_t i = 0; i < n; ++i) {
          const T* x = src + io + i * is;
          T* y = dst + oo + i * os;
          for (int64_t b = 0; b < cnt; ++b) {
            acc[b] = is_prod ? acc[b] * static_cast<A>(x[b]) : acc[b] + static_cast<A>(x[b]);
            y[b] = static_cast<T>(acc[b]);
          }
        }
      });
      return;
    }
    for_each_row(p, [&](int64_t, int64_t io, int64_t oo) {
      A acc = init;
      for (int64_t i = 0; i < n; ++i) {
        const A v = static_cast<A>(src[io + i * is]);
        acc = is_prod ? acc * v : acc + v;
        dst[oo + i * os] = static_cast<T>(acc);
      }
    });
  });
  return cast(out, along.result);
}

// --- logsumexp -----------------------------------------------------------------------------------

// The row max, NaN ignored (a NaN reaches the result through the sum of exponentials).
template <typename M>
struct MaxReducer {
  using Acc = M;
  Acc init(int64_t) const { return -std::numeric_limits<M>::infinity(); }
  void add(Acc& a, M v, int64_t) const { a = std::max(a, v); }
  void combine(Acc& a, const Acc& b) const { a = std::max(a, b); }
};

// sum(exp(x - shift[row])) in double.
template <typename M>
struct ExpSumReducer {
  const M* shift;
  struct Acc {
    M shift{};
    double s = 0;
  };
  Acc init(int64_t r) const { return {shift[r], 0.0}; }
  void add(Acc& a, M v, int64_t) const { a.s += std::exp(v - a.shift); }
  void combine(Acc& a, const Acc& b) const { a.s += b.s; }
};

// log(sum(exp(x))) shifted by the row max; an infinite max shifts by 0 so all -inf gives -inf and
// +inf gives inf (torch).
Tensor logsumexp(const Tensor& self, const Reduction& reduction) {
  Tensor out = Tensor::empty(reduction.sizes, reduction.compute);
  const RowPlan p = plan_rows(cast(self, reduction.compute), reduction.mask);
  dispatch_floating(reduction.compute, "logsumexp", [&]<typename T>() {
    using M = opmath_t<T>;
    std::vector<M> shift(static_cast<size_t>(p.n_out));
    reduce_rows<T>(p, MaxReducer<M>{}, [&](int64_t r, M m) {
      shift[static_cast<size_t>(r)] = std::isinf(m) ? M(0) : m;
    });
    T* dst = out.data<T>();
    reduce_rows<T>(p, ExpSumReducer<M>{shift.data()}, [&](int64_t r, const auto& a) {
      dst[r] = static_cast<T>(std::log(a.s) + static_cast<double>(a.shift));
    });
  });
  return cast(out, reduction.result);
}

// --- var, std -----------------------------------------------------------------------------------

// sum((x - mean[row])^2) in double: the second of var's two passes.
template <typename M>
struct SquaredDeviationReducer {
  const double* mean;
  struct Acc {
    double mean = 0, m2 = 0;
  };
  Acc init(int64_t r) const { return {mean[r], 0.0}; }
  void add(Acc& a, M v, int64_t) const {
    const double d = static_cast<double>(v) - a.mean;
    a.m2 += d * d;
  }
  void combine(Acc& a, const Acc& b) const { a.m2 += b.m2; }
};

// Two passes in double (the mean, then squared deviations); the divisor is max(0, n - correction)
// as in torch, so too few elements give nan or inf.
Tensor var_std(const Tensor& self, const Reduction& reduction, double correction, bool take_sqrt) {
  Tensor out = Tensor::empty(reduction.sizes, self.dtype());
  const RowPlan p = plan_rows(self, reduction.mask);
  dispatch_floating(self.dtype(), take_sqrt ? "std" : "var", [&]<typename T>() {
    using M = opmath_t<T>;
    const double n = static_cast<double>(p.row_len);
    std::vector<double> mean(static_cast<size_t>(p.n_out));
    reduce_rows<T>(p, SumReducer<M>{},
                   [&](int64_t r, double s) { mean[static_cast<size_t>(r)] = s / n; });
    T* dst = out.data<T>();
    const double divisor = std::max(0.0, n - correction);
    reduce_rows<T>(p, SquaredDeviationReducer<M>{mean.data()}, [&](int64_t r, const auto& a) {
      const double v = a.m2 / divisor;
      dst[r] = static_cast<T>(take_sqrt ? std::sqrt(v) : v);
    });
  });
  return out;
}

// --- norm ---------------------------------------------------------------------------------------

// The vector p-norm (torch.linalg.vector_norm) of |x|, accumulated in double: p = 0 counts
// non-zeros, +-inf take the max/min (NaN propagates), otherwise sum |x|^p (the root is taken in
// norm).
enum class NormKind { Zero, One, Two, Inf, NegInf, General };
template <typename M>
struct NormReducer {
  NormKind kind;
  double ord;
  using Acc = double;
  Acc init(int64_t) const {
    return kind == NormKind::NegInf ? std::numeric_limits<double>::infinity() : 0.0;
  }
  void add(Acc& a, M v, int64_t) const {
    const double x = std::fabs(static_cast<double>(v));
    switch (kind) {
      case NormKind::Zero:
        a += x != 0 ? 1.0 : 0.0;
        break;
      case NormKind::One:
        a += x;
        break;
      case NormKind::Two:
        a += x * x;
        break;
      case NormKind::General:
        a += std::pow(x, ord);
        break;
      case NormKind::Inf:
      case NormKind::NegInf:
        combine(a, x);
        break;
    }
  }
  void combine(Acc& a, const Acc& b) const {
    if (kind == NormKind::Inf)
      a = std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    else if (kind == NormKind::NegInf)
      a = std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    else
      a += b;
  }
};

Tensor norm(const Tensor& self, const Reduction& reduction, double ord) {
  Tensor out = Tensor::empty(reduction.sizes, reduction.compute);
  const RowPlan p = plan_rows(cast(self, reduction.compute), reduction.mask);
  const NormKind kind = ord == 0          ? NormKind::Zero
                        : ord == 1        ? NormKind::One
                        : ord == 2        ? NormKind::Two
                        : std::isinf(ord) ? (ord > 0 ? NormKind::Inf : NormKind::NegInf)
                                          : NormKind::General;
  dispatch_floating(reduction.compute, "norm", [&]<typename T>() {
    T* dst = out.data<T>();
    reduce_rows<T>(p, NormReducer<opmath_t<T>>{kind, ord}, [&](int64_t r, double a) {
      if (kind == NormKind::Two)
        a = std::sqrt(a);
      else if (kind == NormKind::General)
        a = std::pow(a, 1.0 / ord);
      dst[r] = static_cast<T>(a);
    });
  });
  return cast(out, reduction.result);
}

// The entry points of Note [Reduction forms] in kernels/reduce_meta.h.
struct RowLoops {
  static constexpr auto sum = sum_like;
  static constexpr auto extreme = cpu::extreme;
  static constexpr auto cumulative = cpu::cumulative;
  static constexpr auto logsumexp = cpu::logsumexp;
  static constexpr auto var_std = cpu::var_std;
  static constexpr auto norm = cpu::norm;
};
using Forms = meta::ReductionForms<RowLoops>;

}  // namespace

// --- internal entry points for the loss kernels (reduce.h) ---------------------------------------

Tensor sum_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                std::optional<ScalarType> dtype) {
  return sum_like(self, meta::sum_reduction(self, dims, keepdim, dtype, SumKind::Sum),
                  SumKind::Sum);
}

Tensor mean_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                 std::optional<ScalarType> dtype) {
  return sum_like(self, meta::sum_reduction(self, dims, keepdim, dtype, SumKind::Mean),
                  SumKind::Mean);
}

Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction) {
  if (reduction == 1) return mean_impl(loss, {}, false, {});
  if (reduction == 2) return sum_impl(loss, {}, false, {});
  return loss;
}

}  // namespace ampjit::cpu

AMPJIT_KERNEL(sum, cpu::Forms::sum_k)
AMPJIT_KERNEL(sum_dim_IntList, cpu::Forms::sum_dim_k)
AMPJIT_KERNEL(mean, cpu::Forms::mean_k)
AMPJIT_KERNEL(mean_dim, cpu::Forms::mean_dim_k)
AMPJIT_KERNEL(prod, cpu::Forms::prod_k)
AMPJIT_KERNEL(prod_dim_int, cpu::Forms::prod_dim_k)
AMPJIT_KERNEL(amax, cpu::Forms::amax_k)
AMPJIT_KERNEL(amin, cpu::Forms::amin_k)
AMPJIT_KERNEL(max, cpu::Forms::max_k)
AMPJIT_KERNEL(max_dim, cpu::Forms::max_dim_k)
AMPJIT_KERNEL(min, cpu::Forms::min_k)
AMPJIT_KERNEL(min_dim, cpu::Forms::min_dim_k)
AMPJIT_KERNEL(argmax, cpu::Forms::argmax_k)
AMPJIT_KERNEL(argmin, cpu::Forms::argmin_k)
AMPJIT_KERNEL(cumsum, cpu::Forms::cumsum_k)
AMPJIT_KERNEL(cumprod, cpu::Forms::cumprod_k)
AMPJIT_KERNEL(logsumexp, cpu::Forms::logsumexp_k)
AMPJIT_KERNEL(var, cpu::Forms::var_k)
AMPJIT_KERNEL(var_dim, cpu::Forms::var_dim_k)
AMPJIT_KERNEL(var_correction, cpu::Forms::var_correction_k)
AMPJIT_KERNEL(std, cpu::Forms::std_k)
AMPJIT_KERNEL(std_dim, cpu::Forms::std_dim_k)
AMPJIT_KERNEL(std_correction, cpu::Forms::std_correction_k)
AMPJIT_KERNEL(norm_Scalar, cpu::Forms::norm_Scalar_k)
AMPJIT_KERNEL(norm_ScalarOpt_dim, cpu::Forms::norm_ScalarOpt_dim_k)
AMPJIT_KERNEL(norm_ScalarOpt_dtype, cpu::Forms::norm_ScalarOpt_dtype_k)
AMPJIT_KERNEL(norm_ScalarOpt_dim_dtype, cpu::Forms::norm_ScalarOpt_dim_dtype_k)
