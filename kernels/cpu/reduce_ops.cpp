// Reduction kernels (runtime/ops/reduction.def): sum, mean, prod, amax/amin, max/min,
// argmax/argmin, cumsum/cumprod, logsumexp, var/std and norm, plus the row plan they share
// (Note [Reduction rows] in kernels/cpu/reduce.h). Each op is one dtype dispatch around a loop
// over rows (Note [One dispatch per op] in kernels/cpu/elementwise.h).
#include <limits>

#include "kernels/cpu/reduce.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {

// --- shared helpers (declared in reduce.h) -----------------------------------------------------

DimMask make_dim_mask(std::span<const int64_t> dims, int64_t ndim) {
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

DimVector reduced_sizes(IntArrayRef sizes, DimMask mask, bool keepdim) {
  DimVector out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!is_reduced(mask, static_cast<int64_t>(d)))
      out.push_back(sizes[d]);
    else if (keepdim)
      out.push_back(1);
  }
  return out;
}

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

// The compute types of sum, prod, cumsum and cumprod: int64 and the floating types.
template <typename F>
void dispatch_compute(ScalarType t, const char* op, F&& f) {
  if (t == ScalarType::Int64)
    f.template operator()<int64_t>();
  else
    dispatch_floating(t, op, std::forward<F>(f));
}

// sum/prod/cumsum/cumprod: integers and bool widen to int64 unless a dtype is given.
ScalarType widened_type(const Tensor& self, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self.dtype(), /*include_bool=*/true) ? ScalarType::Int64 : self.dtype();
}

std::vector<int64_t> dims_or_all(const std::optional<std::vector<int64_t>>& dims) {
  return dims.value_or(std::vector<int64_t>{});
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

enum class SumKind { Sum, Mean, Prod };

// Integer results are computed in int64 and narrowed at the end: wrapping arithmetic commutes
// with the narrowing, so sum(x, dtype=int8) is exact, and only int64 is instantiated.
Tensor sum_like(const Tensor& self, std::span<const int64_t> dims, bool keepdim, ScalarType rt,
                SumKind kind, const char* op) {
  const ScalarType ct = is_integral(rt) ? ScalarType::Int64 : rt;
  const DimMask mask = make_dim_mask(dims, self.dim());
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), ct);
  const RowPlan p = plan_rows(cast(self, ct), mask);
  dispatch_compute(ct, op, [&]<typename T>() {
    using M = opmath_t<T>;
    T* dst = out.data<T>();
    if (kind == SumKind::Prod) {
      reduce_rows<T>(p, ProdReducer<M>{},
                     [&](int64_t r, acc_t<M> a) { dst[r] = static_cast<T>(a); });
      return;
    }
    const double n = static_cast<double>(p.row_len);
    const bool mean = kind == SumKind::Mean;  // floating only (mean_impl checks)
    reduce_rows<T>(p, SumReducer<M>{}, [&](int64_t r, acc_t<M> a) {
      if constexpr (std::is_floating_point_v<acc_t<M>>)
        dst[r] = static_cast<T>(mean ? a / n : a);
      else
        dst[r] = static_cast<T>(a);
    });
  });
  return cast(out, rt);
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
  return sum_like(self, {}, false, widened_type(self, dtype), SumKind::Prod, "prod");
}
Tensor prod_dim_k(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  const int64_t d[] = {dim};
  return sum_like(self, d, keepdim, widened_type(self, dtype), SumKind::Prod, "prod");
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

// Values and/or indices of the extreme over `mask`; an undefined tensor for the one not wanted.
std::tuple<Tensor, Tensor> extreme(const Tensor& self, DimMask mask, bool keepdim, bool is_max,
                                   bool want_values, bool want_indices) {
  const DimVector sizes = reduced_sizes(self.sizes(), mask, keepdim);
  Tensor values = want_values ? Tensor::empty(sizes, self.dtype()) : Tensor();
  Tensor indices = want_indices ? Tensor::empty(sizes, ScalarType::Int64) : Tensor();
  const RowPlan p = plan_rows(self, mask);
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

// --- cumsum, cumprod
// ------------------------------------------------------------------------------

Tensor cumulative(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype, bool is_prod) {
  const ScalarType rt = widened_type(self, dtype);
  const ScalarType ct = is_integral(rt) ? ScalarType::Int64 : rt;  // as in sum_like
  const int64_t d = wrap_dim(dim, self.dim());
  Tensor out = Tensor::empty(self.sizes(), ct);
  const RowPlan p = plan_rows_along(cast(self, ct), d, out);
  dispatch_compute(ct, is_prod ? "cumprod" : "cumsum", [&]<typename T>() {
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
  return cast(out, rt);
}
Tensor cumsum_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return cumulative(self, dim, dtype, false);
}
Tensor cumprod_k(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return cumulative(self, dim, dtype, true);
}

// --- logsumexp
// ------------------------------------------------------------------------------------

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
// +inf gives inf (torch). Integer inputs give float32.
Tensor logsumexp_k(const Tensor& self, std::vector<int64_t> dim, bool keepdim) {
  const ScalarType rt = is_integral(self.dtype(), true) ? ScalarType::Float32 : self.dtype();
  const DimMask mask = make_dim_mask(dim, self.dim());
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), rt);
  const RowPlan p = plan_rows(cast(self, rt), mask);
  dispatch_floating(rt, "logsumexp", [&]<typename T>() {
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
  return out;
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
Tensor var_std(const Tensor& self, std::span<const int64_t> dims, double correction, bool keepdim,
               bool take_sqrt) {
  AMPJIT_CHECK(is_floating(self.dtype()),
               "std and var only support floating point and complex dtypes");
  const DimMask mask = make_dim_mask(dims, self.dim());
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), self.dtype());
  const RowPlan p = plan_rows(self, mask);
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

// --- norm ---------------------------------------------------------------------------------------

// The vector p-norm (torch.linalg.vector_norm) of |x|, accumulated in double: p = 0 counts
// non-zeros, +-inf take the max/min (NaN propagates), otherwise sum |x|^p (the root is taken in
// norm_impl).
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
  Tensor out = Tensor::empty(reduced_sizes(self.sizes(), mask, keepdim), rt);
  const RowPlan p = plan_rows(cast(self, rt), mask);
  const NormKind kind = ord == 0          ? NormKind::Zero
                        : ord == 1        ? NormKind::One
                        : ord == 2        ? NormKind::Two
                        : std::isinf(ord) ? (ord > 0 ? NormKind::Inf : NormKind::NegInf)
                                          : NormKind::General;
  dispatch_floating(rt, "norm", [&]<typename T>() {
    T* dst = out.data<T>();
    reduce_rows<T>(p, NormReducer<opmath_t<T>>{kind, ord}, [&](int64_t r, double a) {
      if (kind == NormKind::Two)
        a = std::sqrt(a);
      else if (kind == NormKind::General)
        a = std::pow(a, 1.0 / ord);
      dst[r] = static_cast<T>(a);
    });
  });
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

}  // namespace

// --- internal entry points for the loss kernels (reduce.h) ---------------------------------------

Tensor sum_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                std::optional<ScalarType> dtype) {
  return sum_like(self, dims, keepdim, widened_type(self, dtype), SumKind::Sum, "sum");
}

Tensor mean_impl(const Tensor& self, std::span<const int64_t> dims, bool keepdim,
                 std::optional<ScalarType> dtype) {
  const ScalarType rt = dtype.value_or(self.dtype());
  AMPJIT_CHECK(is_floating(rt),
               "mean(): could not infer output dtype. {} dtype must be either a floating point or "
               "complex dtype. Got: {}",
               dtype ? "Optional" : "Input", torch_type_name(rt));
  return sum_like(self, dims, keepdim, rt, SumKind::Mean, "mean");
}

Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction) {
  if (reduction == 1) return mean_impl(loss, {}, false, {});
  if (reduction == 2) return sum_impl(loss, {}, false, {});
  return loss;
}

}  // namespace ampjit::cpu

AMPJIT_KERNEL(sum, cpu::sum_k)
AMPJIT_KERNEL(sum_dim_IntList, cpu::sum_dim_k)
AMPJIT_KERNEL(mean, cpu::mean_k)
AMPJIT_KERNEL(mean_dim, cpu::mean_dim_k)
AMPJIT_KERNEL(prod, cpu::prod_k)
AMPJIT_KERNEL(prod_dim_int, cpu::prod_dim_k)
AMPJIT_KERNEL(amax, cpu::amax_k)
AMPJIT_KERNEL(amin, cpu::amin_k)
AMPJIT_KERNEL(max, cpu::max_k)
AMPJIT_KERNEL(max_dim, cpu::max_dim_k)
AMPJIT_KERNEL(min, cpu::min_k)
AMPJIT_KERNEL(min_dim, cpu::min_dim_k)
AMPJIT_KERNEL(argmax, cpu::argmax_k)
AMPJIT_KERNEL(argmin, cpu::argmin_k)
AMPJIT_KERNEL(cumsum, cpu::cumsum_k)
AMPJIT_KERNEL(cumprod, cpu::cumprod_k)
AMPJIT_KERNEL(logsumexp, cpu::logsumexp_k)
AMPJIT_KERNEL(var, cpu::var_k)
AMPJIT_KERNEL(var_dim, cpu::var_dim_k)
AMPJIT_KERNEL(var_correction, cpu::var_correction_k)
AMPJIT_KERNEL(std, cpu::std_k)
AMPJIT_KERNEL(std_dim, cpu::std_dim_k)
AMPJIT_KERNEL(std_correction, cpu::std_correction_k)
AMPJIT_KERNEL(norm_Scalar, cpu::norm_Scalar_k)
AMPJIT_KERNEL(norm_ScalarOpt_dim, cpu::norm_ScalarOpt_dim_k)
AMPJIT_KERNEL(norm_ScalarOpt_dtype, cpu::norm_ScalarOpt_dtype_k)
AMPJIT_KERNEL(norm_ScalarOpt_dim_dtype, cpu::norm_ScalarOpt_dim_dtype_k)
