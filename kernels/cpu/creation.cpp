// Kernels for factories (runtime/ops/creation.def).
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "runtime/boxing.h"
#include "runtime/default_dtype.h"
#include "runtime/op_table.h"
#include "runtime/ops.h"
#include "runtime/random.h"
#include "runtime/strided_loop.h"

namespace ampjit {
namespace {

using OptDtype = std::optional<ScalarType>;
using OptDevice = std::optional<Device>;

// Allocates on the requested device: empty, zeros, ones, full and their *_like forms are
// kDeviceGeneric (Tensor::empty and fill_ go through the device backend, or raise a clear error
// where the device is unavailable).
Tensor make(IntArrayRef size, OptDtype dt, OptDevice dev, bool rg,
            ScalarType deflt = ScalarType::Undefined /* the default dtype */) {
  if (deflt == ScalarType::Undefined) deflt = default_float_dtype();
  Tensor t = Tensor::empty(size, dt.value_or(deflt), dev.value_or(Device()));
  if (rg) t.set_requires_grad(true);
  return t;
}

Tensor empty_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  return make(size, dt, dev, rg);
}
Tensor zeros_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  Tensor t = make(size, dt, dev, rg);
  t.fill_(Scalar(int64_t{0}));
  return t;
}
Tensor ones_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  Tensor t = make(size, dt, dev, rg);
  t.fill_(Scalar(int64_t{1}));
  return t;
}
// torch.full infers the dtype from the fill value: bool -> bool, int -> int64, float -> the
// default dtype.
ScalarType fill_dtype(const Scalar& v) {
  return v.is_bool()       ? ScalarType::Bool
         : v.is_integral() ? ScalarType::Int64
                           : default_float_dtype();
}
Tensor full_k(std::vector<int64_t> size, const Scalar& v, OptDtype dt, OptDevice dev, bool rg) {
  Tensor t = make(size, dt, dev, rg, fill_dtype(v));
  t.fill_(v);
  return t;
}

Tensor arange_impl(const Scalar& start, const Scalar& end, const Scalar& step, OptDtype dt,
                   OptDevice dev, bool rg) {
  const bool any_float = start.is_floating() || end.is_floating() || step.is_floating();
  const ScalarType type = dt.value_or(any_float ? default_float_dtype() : ScalarType::Int64);
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  AMPJIT_CHECK(st != 0, "arange: step must be nonzero");
  AMPJIT_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: {} -> {}", s, e);
  AMPJIT_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
               "arange: upper bound and larger bound inconsistent with step sign");
  // The count in a type wide enough for any int64 or double range, checked before it is a size.
  long double count;
  if (is_floating(type) || any_float) {
    count = std::ceil(static_cast<long double>(e - s) / st);
  } else {
    const __int128 is = start.to_int(), ie = end.to_int(), ist = step.to_int();
    count = static_cast<long double>((ie - is + ist + (ist > 0 ? -1 : 1)) / ist);
  }
  AMPJIT_CHECK(count >= 0 && count <= static_cast<long double>(std::numeric_limits<int64_t>::max()),
               "invalid size, possible overflow?");
  const int64_t n = static_cast<int64_t>(count);
  Tensor t = make(std::vector<int64_t>{std::max<int64_t>(n, 0)}, type, dev, rg);
  dispatch_numeric(type, "arange", [&]<typename T>() {
    T* p = t.data<T>();
    if constexpr (std::is_integral_v<T>) {
      const int64_t is = start.to_int(), ist = step.to_int();
      if (!any_float) {
        for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(is + i * ist);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(s + static_cast<double>(i) * st);
  });
  return t;
}
Tensor arange_k(const Scalar& end, OptDtype dt, OptDevice dev, bool rg) {
  return arange_impl(Scalar(int64_t{0}), end, Scalar(int64_t{1}), dt, dev, rg);
}
Tensor arange_start_k(const Scalar& s, const Scalar& e, OptDtype dt, OptDevice dev, bool rg) {
  return arange_impl(s, e, Scalar(int64_t{1}), dt, dev, rg);
}
Tensor arange_start_step_k(const Scalar& s, const Scalar& e, const Scalar& st, OptDtype dt,
                           OptDevice dev, bool rg) {
  return arange_impl(s, e, st, dt, dev, rg);
}

// torch's linspace and logspace: the first half counts up from start and the second down from end,
// so both ends are exact. Each value is computed in double and rounded once to the dtype (integer
// dtypes truncate, as torch's double step does); torch's float, float16 and bfloat16 kernels step
// in their own arithmetic, within an ulp of these.
template <typename T, typename F>
void fill_space(T* p, int64_t steps, const Scalar& start, const Scalar& end, F value) {
  const double s = static_cast<double>(start.to<T>()), e = static_cast<double>(end.to<T>());
  const double step = (e - s) / static_cast<double>(steps - 1);
  const int64_t half = steps / 2;
  // Two branch-free halves, in parallel. Below 2^31 steps the index converts from int32, which
  // vectorizes (int64 -> double does not with AVX2).
  auto fill = [=]<typename I>(int64_t b, int64_t en) {
    const int64_t mid = std::clamp(half, b, en);
    for (I i = static_cast<I>(b); i < static_cast<I>(mid); ++i)
      p[i] = value(s + step * static_cast<double>(i));
    const I last = static_cast<I>(steps - 1);
    for (I i = static_cast<I>(mid); i < static_cast<I>(en); ++i)
      p[i] = value(e - step * static_cast<double>(last - i));
  };
  parallel_for(steps, kParallelGrain, [&](int64_t b, int64_t en) {
    if (steps <= std::numeric_limits<int32_t>::max())
      fill.template operator()<int32_t>(b, en);
    else
      fill.template operator()<int64_t>(b, en);
  });
}
Tensor linspace_k(const Scalar& start, const Scalar& end, int64_t steps, OptDtype dt, OptDevice dev,
                  bool rg) {
  AMPJIT_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor t = make(std::vector<int64_t>{steps}, dt.value_or(default_float_dtype()), dev, rg);
  if (steps == 0) return t;
  dispatch_numeric(t.dtype(), "linspace", [&]<typename T>() {
    T* p = t.data<T>();
    if (steps == 1) {
      p[0] = start.to<T>();
      return;
    }
    fill_space<T>(p, steps, start, end, [](double x) { return static_cast<T>(x); });
  });
  return t;
}
Tensor logspace_k(const Scalar& start, const Scalar& end, int64_t steps, double base, OptDtype dt,
                  OptDevice dev, bool rg) {
  AMPJIT_CHECK(steps >= 0, "number of steps must be non-negative");
  Tensor t = make(std::vector<int64_t>{steps}, dt.value_or(default_float_dtype()), dev, rg);
  if (steps == 0) return t;
  dispatch_numeric(t.dtype(), "logspace", [&]<typename T>() {
    T* p = t.data<T>();
    if (steps == 1) {
      p[0] = static_cast<T>(std::pow(base, static_cast<double>(start.to<T>())));
      return;
    }
    fill_space<T>(p, steps, start, end,
                  [base](double x) { return static_cast<T>(std::pow(base, x)); });
  });
  return t;
}

Tensor eye_m_k(int64_t n, int64_t m, OptDtype dt, OptDevice dev, bool rg) {
  AMPJIT_CHECK(n >= 0 && m >= 0, "eye: n and m must be non-negative, got n={} m={}", n, m);
  Tensor t = make(std::vector<int64_t>{n, m}, dt, dev, rg);
  t.fill_(Scalar(int64_t{0}));
  dispatch_all(t.dtype(), "eye", [&]<typename T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < std::min(n, m); ++i) p[i * m + i] = static_cast<T>(1);
  });
  return t;
}
Tensor eye_k(int64_t n, OptDtype dt, OptDevice dev, bool rg) {
  return eye_m_k(n, n, dt, dev, rg);
}

// Note [Random fills as torch's]
// rand, randn, uniform_ and normal_ draw as torch 1.13's CPU kernels (Note [torch's CPU generator],
// random.h), in every floating dtype:
//  - a uniform of dtype T is one draw masked to T's digits (24 for float, 53 for double from a
//    64-bit draw, 11 for float16, 8 for bfloat16) times 2^-digits, then x * (to - from) + from in
//    T's accumulate type (float for the reduced types, with to - from rounded to T first, as c10's
//    arithmetic does), rounded once to T;
//  - a normal, for 16 or more contiguous elements, is torch's normal_fill: every uniform of T
//    first, then Box-Muller in blocks of 16 in T's own arithmetic (for float16 and bfloat16 each
//    step rounds to T, as c10's operators do), the last block redrawn when the count is not a
//    multiple of 16, then x * std + mean in T; fewer or strided elements draw one
//    normal_distribution<double> each. (torch's AVX2 normal_fill for float computes the same
//    formula with vectorized log/sin/cos, which can differ in the last bit.)
template <typename T>
constexpr int kDigits = std::is_same_v<T, Half>       ? 11
                        : std::is_same_v<T, BFloat16> ? 8
                                                      : 24;

template <typename T>
T uniform_of(Generator& g, T from, T to) {
  if constexpr (std::is_same_v<T, double>) {
    return g.next_double() * (to - from) + from;
  } else if constexpr (std::is_same_v<T, float>) {
    const float x = static_cast<float>(g.random() & ((1u << 24) - 1)) * 0x1p-24f;
    return x * (to - from) + from;
  } else {
    const float x = g.next_uniform_digits(kDigits<T>);
    const T span = static_cast<T>(static_cast<float>(to) - static_cast<float>(from));
    return static_cast<T>(x * static_cast<float>(span) + static_cast<float>(from));
  }
}

// torch's normal_fill_16 in T's arithmetic: float and double natively, float16 and bfloat16 by
// c10's rounding after each operation.
template <typename T>
void normal_fill_16(T* data, T mean, T std) {
  using F = std::conditional_t<std::is_same_v<T, double>, double, float>;
  auto r = [](F v) { return static_cast<F>(static_cast<T>(v)); };  // an operator's rounded result
  // c10's math functions of bfloat16 return bfloat16, and bfloat16 * bfloat16 is bfloat16, so
  // every step rounds; float16 converts to float for them and stays float in mixed arithmetic.
  constexpr bool kBF16 = std::is_same_v<T, BFloat16>;
  auto m = [&](F v) { return kBF16 ? r(v) : v; };
  const F sd = static_cast<F>(std), mu = static_cast<F>(mean);
  for (int j = 0; j < 8; ++j) {
    const F u1 = r(F(1) - static_cast<F>(data[j]));
    const F u2 = static_cast<F>(data[j + 8]);
    const F two_log = kBF16 ? r(F(-2) * m(std::log(u1))) : F(-2) * std::log(u1);
    const F radius = r(m(std::sqrt(two_log)));
    const F theta = r(static_cast<F>(2.0 * M_PI) * u2);
    data[j] = static_cast<T>(m(m(radius * m(std::cos(theta))) * sd) + mu);
    data[j + 8] = static_cast<T>(m(m(radius * m(std::sin(theta))) * sd) + mu);
  }
}

template <typename T>
void fill_uniform(Generator& g, T* p, int64_t n, double from, double to) {
  const T f = static_cast<T>(from), t = static_cast<T>(to);
  for (int64_t i = 0; i < n; ++i) p[i] = uniform_of<T>(g, f, t);
}

template <typename T>
void fill_normal(Generator& g, T* p, int64_t n, double mean, double std, bool contiguous) {
  if (n >= 16 && contiguous) {
    const T zero = static_cast<T>(0.0), one = static_cast<T>(1.0);
    const T m = static_cast<T>(mean), s = static_cast<T>(std);
    for (int64_t i = 0; i < n; ++i) p[i] = uniform_of<T>(g, zero, one);
    for (int64_t i = 0; i + 16 <= n; i += 16) normal_fill_16(p + i, m, s);
    if (n % 16 != 0) {  // recompute the last 16 values
      T* last = p + n - 16;
      for (int j = 0; j < 16; ++j) last[j] = uniform_of<T>(g, zero, one);
      normal_fill_16(last, m, s);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(g.next_normal() * std + mean);
  }
}

// Fills a CPU tensor of a floating dtype as torch's uniform_ (Normal = false) or normal_ does.
template <bool Normal>
void random_fill(Tensor& t, double a, double b, const char* op) {
  AMPJIT_CHECK(t.is_floating_point(), "\"{}\" not implemented for '{}'", op,
               torch_type_name(t.dtype()));
  Generator& g = default_generator(DeviceType::CPU);
  std::lock_guard<std::mutex> lock(g.mutex());
  const bool dense = t.is_contiguous();
  Tensor target = dense ? t : Tensor::empty(t.sizes(), t.dtype(), t.device());
  dispatch_floating(t.dtype(), op, [&]<typename T>() {
    T* p = target.data<T>();
    if constexpr (Normal)
      fill_normal<T>(g, p, target.numel(), a, b, dense);
    else
      fill_uniform<T>(g, p, target.numel(), a, b);
  });
  if (!dense) t.copy_(target);
}

template <bool Normal>
Tensor random_impl(IntArrayRef size, OptDtype dt, OptDevice dev, bool rg) {
  Tensor t = make(size, dt, dev, rg);
  AMPJIT_CHECK(t.is_floating_point(), "{}: expected a floating point dtype, got {}",
               Normal ? "randn" : "rand", dtype_name(t.dtype()));
  random_fill<Normal>(t, Normal ? 0.0 : 0.0, 1.0,
                      Normal ? "normal_kernel_cpu" : "uniform_kernel_cpu");
  return t;
}
}  // namespace

// For normal_ and uniform_ (kernels/cpu/composite_ops.cpp).
void cpu_random_fill(Tensor& t, bool normal, double a, double b) {
  if (normal)
    random_fill<true>(t, a, b, "normal_kernel_cpu");
  else
    random_fill<false>(t, a, b, "uniform_kernel_cpu");
}

namespace {

// torch's random_: integers drawn uniformly from [from, to) as (draw % (to - from)) + from, one
// 32-bit draw per element, or a 64-bit one when the range needs it (Note [torch's CPU generator]);
// without a range, the dtype's whole range of exactly representable integers (2^digits + 1 values
// for the floating types, [0, max] for the integers, 0 and 1 for bool).
Tensor random_impl_(Tensor self, std::optional<int64_t> from, std::optional<int64_t> to) {
  const ScalarType dt = self.dtype();
  const int64_t lo = from.value_or(0);
  std::optional<uint64_t> range;
  if (to) {
    AMPJIT_CHECK(lo < *to, "random_ expects 'from' to be less than 'to', but got from={} >= to={}",
                 lo, *to);
    range = static_cast<uint64_t>(*to - lo);
  } else if (from) {  // [from, the dtype's largest exactly representable integer]
    const int64_t hi =
        dt == ScalarType::Float64    ? (int64_t{1} << 53)
        : dt == ScalarType::Float32  ? (int64_t{1} << 24)
        : dt == ScalarType::Float16  ? (int64_t{1} << 11)
        : dt == ScalarType::BFloat16 ? (int64_t{1} << 8)
        : dt == ScalarType::Bool
            ? 1
            : static_cast<int64_t>(dispatch_integral(dt, "random_", []<typename T>() {
                return static_cast<int64_t>(std::numeric_limits<T>::max());
              }));
    AMPJIT_CHECK(lo <= hi,
                 "random_ expects 'from' casted to dtype to be less than or equal to "
                 "'to_inc' casted to dtype, but got from={} > to_inc={}",
                 lo, hi);
    range = static_cast<uint64_t>(hi - lo) + 1;
  }
  Generator& g = default_generator(DeviceType::CPU);
  std::lock_guard<std::mutex> lock(g.mutex());
  const bool dense = self.is_contiguous();
  Tensor target = dense ? self : Tensor::empty(self.sizes(), dt, self.device());
  dispatch_all(dt, "random_", [&]<typename T>() {
    T* p = target.data<T>();
    const int64_t n = target.numel();
    for (int64_t i = 0; i < n; ++i) {
      if (range) {
        const uint64_t v = *range >= (uint64_t{1} << 32) ? g.random64() : g.random();
        p[i] = static_cast<T>(static_cast<int64_t>(v % *range + static_cast<uint64_t>(lo)));
      } else if constexpr (std::is_same_v<T, bool>) {
        p[i] = (g.random() & 1) != 0;
      } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Half> ||
                           std::is_same_v<T, BFloat16>) {
        constexpr int digits = std::is_same_v<T, double> ? 53 : kDigits<T>;
        const uint64_t v = std::is_same_v<T, double> ? g.random64() : g.random();
        p[i] = static_cast<T>(static_cast<double>(v % ((uint64_t{1} << digits) + 1)));
      } else {
        const uint64_t v = std::is_same_v<T, int64_t> ? g.random64() : g.random();
        p[i] = static_cast<T>(v % (static_cast<uint64_t>(std::numeric_limits<T>::max()) + 1));
      }
    }
  });
  if (!dense) self.copy_(target);
  return self;
}
Tensor random_from_k(Tensor self, int64_t from, std::optional<int64_t> to) {
  return random_impl_(self, from, to);
}
Tensor random_to_k(Tensor self, int64_t to) {
  return random_impl_(self, 0, to);
}
Tensor random_k(Tensor self) {
  return random_impl_(self, std::nullopt, std::nullopt);
}

Tensor rand_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  return random_impl<false>(size, dt, dev, rg);
}
Tensor randn_k(std::vector<int64_t> size, OptDtype dt, OptDevice dev, bool rg) {
  return random_impl<true>(size, dt, dev, rg);
}

OptDtype like_dtype(const Tensor& s, OptDtype dt) {
  return dt ? dt : OptDtype(s.dtype());
}
OptDevice like_device(const Tensor& s, OptDevice d) {
  return d ? d : OptDevice(s.device());
}
Tensor empty_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  return empty_k(s.sizes().size() ? std::vector<int64_t>(s.sizes().begin(), s.sizes().end())
                                  : std::vector<int64_t>{},
                 like_dtype(s, dt), like_device(s, d), rg);
}
std::vector<int64_t> shape_of(const Tensor& s) {
  return {s.sizes().begin(), s.sizes().end()};
}
Tensor zeros_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  return zeros_k(shape_of(s), like_dtype(s, dt), like_device(s, d), rg);
}
Tensor ones_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  return ones_k(shape_of(s), like_dtype(s, dt), like_device(s, d), rg);
}
Tensor full_like_k(const Tensor& s, const Scalar& v, OptDtype dt, OptDevice d, bool rg) {
  return full_k(shape_of(s), v, like_dtype(s, dt), like_device(s, d), rg);
}
// The generators write host memory: a CPU tensor's *_like asking for another device draws there.
Tensor rand_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  if (!like_device(s, d)->is_cpu()) return ops::rand(shape_of(s), like_dtype(s, dt), d, rg);
  return rand_k(shape_of(s), like_dtype(s, dt), like_device(s, d), rg);
}
Tensor randn_like_k(const Tensor& s, OptDtype dt, OptDevice d, bool rg) {
  if (!like_device(s, d)->is_cpu()) return ops::randn(shape_of(s), like_dtype(s, dt), d, rg);
  return randn_k(shape_of(s), like_dtype(s, dt), like_device(s, d), rg);
}

}  // namespace
}  // namespace ampjit

AMPJIT_KERNEL(empty, empty_k)
AMPJIT_KERNEL(zeros, zeros_k)
AMPJIT_KERNEL(ones, ones_k)
AMPJIT_KERNEL(full, full_k)
AMPJIT_KERNEL(arange, arange_k)
AMPJIT_KERNEL(arange_start, arange_start_k)
AMPJIT_KERNEL(arange_start_step, arange_start_step_k)
AMPJIT_KERNEL(eye, eye_k)
AMPJIT_KERNEL(random__from, random_from_k)
AMPJIT_KERNEL(random__to, random_to_k)
AMPJIT_KERNEL(random_, random_k)
AMPJIT_KERNEL(linspace, linspace_k)
AMPJIT_KERNEL(logspace, logspace_k)
AMPJIT_KERNEL(eye_m, eye_m_k)
AMPJIT_KERNEL(rand, rand_k)
AMPJIT_KERNEL(randn, randn_k)
AMPJIT_KERNEL(empty_like, empty_like_k)
AMPJIT_KERNEL(zeros_like, zeros_like_k)
AMPJIT_KERNEL(ones_like, ones_like_k)
AMPJIT_KERNEL(full_like, full_like_k)
AMPJIT_KERNEL(rand_like, rand_like_k)
AMPJIT_KERNEL(randn_like, randn_like_k)
