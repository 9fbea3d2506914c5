// Scalar types as data: one traits table generated from dtypes.def, and promotion as a lookup.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/half.h"

namespace ampjit {

enum class ScalarType : int8_t {
#define AMPJIT_DTYPE(E, C, N, A, T, P, F, I, S) E,
#include "runtime/dtypes.def"
#undef AMPJIT_DTYPE
  Undefined,
};
constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Undefined);

struct DTypeTraits {
  ScalarType type;
  const char* name;      // torch name without the "torch." prefix: "float32"
  const char* alias;     // torch's alias ("float" for float32), "" when none
  const char* c10_name;  // torch's C++ name: "Float", "BFloat16", "Long"
  const char* cpp_name;  // the C++ type torch's kernel messages print: "float", "long int"
  uint8_t itemsize;
  bool is_floating;
  bool is_integral;  // bool is neither floating nor integral, as in torch
  bool is_signed;
};

extern const DTypeTraits kDTypeTraits[kNumScalarTypes];

inline const DTypeTraits& traits(ScalarType t) {
  return kDTypeTraits[static_cast<int>(t)];
}
inline size_t itemsize(ScalarType t) {
  return traits(t).itemsize;
}
inline bool is_floating(ScalarType t) {
  return t != ScalarType::Undefined && traits(t).is_floating;
}
inline bool is_integral(ScalarType t, bool include_bool = false) {
  return t != ScalarType::Undefined &&
         (traits(t).is_integral || (include_bool && t == ScalarType::Bool));
}
inline bool is_reduced_floating(ScalarType t) {
  return t == ScalarType::Float16 || t == ScalarType::BFloat16;
}
const char* dtype_name(ScalarType t);       // "float32"
const char* torch_type_name(ScalarType t);  // "Float" (torch's C++ name, as its messages use)
const char* cpp_type_name(ScalarType t);    // "long int" (the C++ type, as kernel messages print)
// Parses "float32", "float", "torch.float32", "half", ...; nullopt when unknown.
std::optional<ScalarType> parse_dtype(std::string_view name);

// TorchScript encodes a dtype as an int with torch's c10::ScalarType numbering (float16 = 5,
// bool = 11, bfloat16 = 15); graphs print and parse dtypes in that numbering.
int64_t torch_dtype_code(ScalarType t);
std::optional<ScalarType> from_torch_dtype_code(int64_t code);

// torch.promote_types: the smallest type both operands convert to without losing category.
ScalarType promote_types(ScalarType a, ScalarType b);

// The C++ type of a scalar type, and back.
template <ScalarType T>
struct CTypeOf;
#define AMPJIT_DTYPE(E, C, N, A, T, P, F, I, S) \
  template <>                                   \
  struct CTypeOf<ScalarType::E> {               \
    using type = C;                             \
  };
#include "runtime/dtypes.def"
#undef AMPJIT_DTYPE
template <typename C>
constexpr ScalarType scalar_type_of();
#define AMPJIT_DTYPE(E, C, N, A, T, P, F, I, S) \
  template <>                                   \
  constexpr ScalarType scalar_type_of<C>() {    \
    return ScalarType::E;                       \
  }
#include "runtime/dtypes.def"
#undef AMPJIT_DTYPE

[[noreturn]] void throw_unsupported_dtype(const char* op, ScalarType t);

// Calls f.template operator()<T>() with T the C++ type of `t`.
// Usage: dispatch_all(t, "op", [&]<typename T>() { ... });
template <typename F>
decltype(auto) dispatch_all(ScalarType t, const char* op, F&& f) {
  switch (t) {
#define AMPJIT_DTYPE(E, C, N, A, T, P, FL, I, S) \
  case ScalarType::E:                            \
    return f.template operator()<C>();
#include "runtime/dtypes.def"
#undef AMPJIT_DTYPE
    default:
      throw_unsupported_dtype(op, t);
  }
}

template <typename F>
decltype(auto) dispatch_floating(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::Float32:
      return f.template operator()<float>();
    case ScalarType::Float64:
      return f.template operator()<double>();
    case ScalarType::Float16:
      return f.template operator()<Half>();
    case ScalarType::BFloat16:
      return f.template operator()<BFloat16>();
    default:
      throw_unsupported_dtype(op, t);
  }
}

// Numeric types: everything but bool (bool is never instantiated).
template <typename F>
decltype(auto) dispatch_numeric(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::UInt8:
      return f.template operator()<uint8_t>();
    case ScalarType::Int8:
      return f.template operator()<int8_t>();
    case ScalarType::Int16:
      return f.template operator()<int16_t>();
    case ScalarType::Int32:
      return f.template operator()<int32_t>();
    case ScalarType::Int64:
      return f.template operator()<int64_t>();
    default:
      return dispatch_floating(t, op, std::forward<F>(f));
  }
}

// Integral types, bool included when asked.
template <typename F>
decltype(auto) dispatch_integral(ScalarType t, const char* op, F&& f) {
  switch (t) {
    case ScalarType::UInt8:
      return f.template operator()<uint8_t>();
    case ScalarType::Int8:
      return f.template operator()<int8_t>();
    case ScalarType::Int16:
      return f.template operator()<int16_t>();
    case ScalarType::Int32:
      return f.template operator()<int32_t>();
    case ScalarType::Int64:
      return f.template operator()<int64_t>();
    default:
      throw_unsupported_dtype(op, t);
  }
}

}  // namespace ampjit
