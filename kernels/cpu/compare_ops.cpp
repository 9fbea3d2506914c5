// Comparison, selection and logical kernels (runtime/ops/pointwise.def): eq, ne, lt, le, gt, ge,
// maximum, minimum, where and logical_and/or/xor/not.
//
// Comparisons compute in the promoted type of their operands and return bool. gt and ge are lt
// and le with the operands swapped, so four loops per dtype serve the six ops; their Scalar
// overloads compare with a 0-dim wrapped-number tensor, which promotes as the Python number does
// (Note [One dispatch per op] in kernels/cpu/elementwise.h).
#include <cmath>
#include <limits>

#include "kernels/cpu/elementwise.h"
#include "kernels/pointwise_meta.h"
#include "runtime/boxing.h"
#include "runtime/op_table.h"

namespace ampjit::cpu {
namespace {

// A Python number as a 0-dim wrapped-number tensor: it promotes like the Scalar it came from.

// ---- eq, ne, lt, le, gt, ge --------------------------------------------------------------------

enum class Cmp { Eq, Ne, Lt, Le };

Tensor compare(const char* op, Cmp cmp, const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  const std::array ab{a, b};
  return dispatch_all(rt, op, [&]<typename T>() {
    using M = opmath_t<T>;
    constexpr ScalarType kBool = ScalarType::Bool;
    if (cmp == Cmp::Eq) return map<T, bool>(op, ab, kBool, [](M x, M y) { return x == y; });
    if (cmp == Cmp::Ne) return map<T, bool>(op, ab, kBool, [](M x, M y) { return x != y; });
    if (cmp == Cmp::Lt) return map<T, bool>(op, ab, kBool, [](M x, M y) { return x < y; });
    return map<T, bool>(op, ab, kBool, [](M x, M y) { return x <= y; });
  });
}
// a > b is b < a; the shapes are checked first so an error names them in the caller's order.
Tensor compare_swapped(const char* op, Cmp cmp, const Tensor& a, const Tensor& b) {
  broadcast_shapes(a.sizes(), b.sizes(), op);
  return compare(op, cmp, b, a);
}

Tensor eq_k(const Tensor& a, const Tensor& b) {
  return compare("eq", Cmp::Eq, a, b);
}
Tensor ne_k(const Tensor& a, const Tensor& b) {
  return compare("ne", Cmp::Ne, a, b);
}
Tensor lt_k(const Tensor& a, const Tensor& b) {
  return compare("lt", Cmp::Lt, a, b);
}
Tensor le_k(const Tensor& a, const Tensor& b) {
  return compare("le", Cmp::Le, a, b);
}
Tensor gt_k(const Tensor& a, const Tensor& b) {
  return compare_swapped("gt", Cmp::Lt, a, b);
}
Tensor ge_k(const Tensor& a, const Tensor& b) {
  return compare_swapped("ge", Cmp::Le, a, b);
}
Tensor eq_scalar_k(const Tensor& a, const Scalar& b) {
  return eq_k(a, wrap_scalar(b));
}
Tensor ne_scalar_k(const Tensor& a, const Scalar& b) {
  return ne_k(a, wrap_scalar(b));
}
Tensor lt_scalar_k(const Tensor& a, const Scalar& b) {
  return lt_k(a, wrap_scalar(b));
}
Tensor le_scalar_k(const Tensor& a, const Scalar& b) {
  return le_k(a, wrap_scalar(b));
}
Tensor gt_scalar_k(const Tensor& a, const Scalar& b) {
  return gt_k(a, wrap_scalar(b));
}
Tensor ge_scalar_k(const Tensor& a, const Scalar& b) {
  return ge_k(a, wrap_scalar(b));
}

// ---- maximum, minimum --------------------------------------------------------------------------

// torch's maximum/minimum kernels: a NaN in either operand gives NaN; bool is or/and.
Tensor maximum_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool)
    return map<bool>("maximum", std::array{a, b}, rt, [](bool x, bool y) { return x || y; });
  return dispatch_numeric(rt, "maximum", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("maximum", std::array{a, b}, rt, [](M x, M y) -> M {
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<M>::quiet_NaN();
      }
      return std::max(x, y);
    });
  });
}
Tensor minimum_k(const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  if (rt == ScalarType::Bool)
    return map<bool>("minimum", std::array{a, b}, rt, [](bool x, bool y) { return x && y; });
  return dispatch_numeric(rt, "minimum", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("minimum", std::array{a, b}, rt, [](M x, M y) -> M {
      if constexpr (std::is_floating_point_v<M>) {
        if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<M>::quiet_NaN();
      }
      return std::min(x, y);
    });
  });
}

// ---- where -------------------------------------------------------------------------------------

// The condition (bool, or uint8 as torch still accepts) joins the loop converted to the value
// dtype: one input type per loop, one loop per dtype.
Tensor where_k(const Tensor& cond, const Tensor& a, const Tensor& b) {
  meta::check_where_condition(cond);
  const ScalarType rt = result_type(a, b);
  return dispatch_all(rt, "where", [&]<typename T>() {
    using M = opmath_t<T>;
    return map<T>("where", std::array{cond, a, b}, rt,
                  [](M c, M x, M y) { return c != M(0) ? x : y; });
  });
}
Tensor where_scalar_self_k(const Tensor& cond, const Scalar& a, const Tensor& b) {
  return where_k(cond, wrap_scalar(a), b);
}
Tensor where_scalar_other_k(const Tensor& cond, const Tensor& a, const Scalar& b) {
  return where_k(cond, a, wrap_scalar(b));
}
Tensor where_scalar_k(const Tensor& cond, const Scalar& a, const Scalar& b) {
  return where_k(cond, wrap_scalar(a), wrap_scalar(b));
}

// ---- logical_and, logical_or, logical_xor, logical_not -----------------------------------------

// The truth value of t in the promoted type rt (as torch computes it: a float64 0-dim 1e-300 next
// to a float16 tensor rounds to 0 and is false), as a bool tensor.
Tensor truth(const Tensor& t, ScalarType rt) {
  return cast_to(cast_to(t, rt), ScalarType::Bool);
}

// In place (logical_and_ and the others, derived: Note [Derived op variants] in
// runtime/op_table.h), the bool result is written in self's dtype (as 0 and 1).
enum class Logic { And, Or, Xor };

Tensor logical(const char* op, Logic l, const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  const std::array ab{truth(a, rt), truth(b, rt)};
  constexpr ScalarType kBool = ScalarType::Bool;
  if (l == Logic::And) return map<bool>(op, ab, kBool, [](bool x, bool y) { return x && y; });
  if (l == Logic::Or) return map<bool>(op, ab, kBool, [](bool x, bool y) { return x || y; });
  return map<bool>(op, ab, kBool, [](bool x, bool y) { return x != y; });
}
Tensor logical_and_k(const Tensor& a, const Tensor& b) {
  return logical("logical_and", Logic::And, a, b);
}
Tensor logical_or_k(const Tensor& a, const Tensor& b) {
  return logical("logical_or", Logic::Or, a, b);
}
Tensor logical_xor_k(const Tensor& a, const Tensor& b) {
  return logical("logical_xor", Logic::Xor, a, b);
}
Tensor logical_not_k(const Tensor& a) {
  return map<bool>("logical_not", std::array{truth(a, a.dtype())}, ScalarType::Bool,
                   [](bool x) { return !x; });
}

}  // namespace
}  // namespace ampjit::cpu

AMPJIT_KERNEL(eq, cpu::eq_k)
AMPJIT_KERNEL(eq_Scalar, cpu::eq_scalar_k)
AMPJIT_KERNEL(ne, cpu::ne_k)
AMPJIT_KERNEL(ne_Scalar, cpu::ne_scalar_k)
AMPJIT_KERNEL(lt, cpu::lt_k)
AMPJIT_KERNEL(lt_Scalar, cpu::lt_scalar_k)
AMPJIT_KERNEL(le, cpu::le_k)
AMPJIT_KERNEL(le_Scalar, cpu::le_scalar_k)
AMPJIT_KERNEL(gt, cpu::gt_k)
AMPJIT_KERNEL(gt_Scalar, cpu::gt_scalar_k)
AMPJIT_KERNEL(ge, cpu::ge_k)
AMPJIT_KERNEL(ge_Scalar, cpu::ge_scalar_k)
AMPJIT_KERNEL(maximum, cpu::maximum_k)
AMPJIT_KERNEL(minimum, cpu::minimum_k)
AMPJIT_KERNEL(where, cpu::where_k)
AMPJIT_KERNEL(where_ScalarSelf, cpu::where_scalar_self_k)
AMPJIT_KERNEL(where_ScalarOther, cpu::where_scalar_other_k)
AMPJIT_KERNEL(where_Scalar, cpu::where_scalar_k)
AMPJIT_KERNEL(logical_and, cpu::logical_and_k)
AMPJIT_KERNEL(logical_or, cpu::logical_or_k)
AMPJIT_KERNEL(logical_xor, cpu::logical_xor_k)
AMPJIT_KERNEL(logical_not, cpu::logical_not_k)
