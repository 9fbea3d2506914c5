// The dtype traits table and torch's promotion lattice.
#include "runtime/dtype.h"

#include <string>

#include "runtime/error.h"

namespace ampjit {

const DTypeTraits kDTypeTraits[kNumScalarTypes] = {
#define AMPJIT_DTYPE(E, C, N, A, T, P, F, I, S) {ScalarType::E, N, A, T, P, sizeof(C), F, I, S},
#include "runtime/dtypes.def"
#undef AMPJIT_DTYPE
};

const char* dtype_name(ScalarType t) {
  return t == ScalarType::Undefined ? "undefined" : traits(t).name;
}

const char* torch_type_name(ScalarType t) {
  return t == ScalarType::Undefined ? "Undefined" : traits(t).c10_name;
}

const char* cpp_type_name(ScalarType t) {
  return t == ScalarType::Undefined ? "Undefined" : traits(t).cpp_name;
}

std::optional<ScalarType> parse_dtype(std::string_view name) {
  if (name.starts_with("torch.")) name.remove_prefix(6);
  if (name.starts_with("ampjit.")) name.remove_prefix(7);
  for (const auto& t : kDTypeTraits) {
    if (name == t.name || (*t.alias && name == t.alias)) return t.type;
  }
  return std::nullopt;
}

// Note [Promotion table]
// torch.promote_types as a table indexed in dtypes.def order. Reduced floats mixed with each other
// go to float32; integers mixed with floats take the float; uint8 with int8 needs int16.
ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Undefined) return b;
  if (b == ScalarType::Undefined) return a;
  constexpr auto u1 = ScalarType::UInt8, i1 = ScalarType::Int8, i2 = ScalarType::Int16,
                 i4 = ScalarType::Int32, i8 = ScalarType::Int64, f2 = ScalarType::Float16,
                 f4 = ScalarType::Float32, f8 = ScalarType::Float64, b1 = ScalarType::Bool,
                 bf = ScalarType::BFloat16;
  static constexpr ScalarType table[kNumScalarTypes][kNumScalarTypes] = {
      /*        u1  i1  i2  i4  i8  f2  f4  f8  b1  bf */
      /* u1 */ {u1, i2, i2, i4, i8, f2, f4, f8, u1, bf},
      /* i1 */ {i2, i1, i2, i4, i8, f2, f4, f8, i1, bf},
      /* i2 */ {i2, i2, i2, i4, i8, f2, f4, f8, i2, bf},
      /* i4 */ {i4, i4, i4, i4, i8, f2, f4, f8, i4, bf},
      /* i8 */ {i8, i8, i8, i8, i8, f2, f4, f8, i8, bf},
      /* f2 */ {f2, f2, f2, f2, f2, f2, f4, f8, f2, f4},
      /* f4 */ {f4, f4, f4, f4, f4, f4, f4, f8, f4, f4},
      /* f8 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
      /* b1 */ {u1, i1, i2, i4, i8, f2, f4, f8, b1, bf},
      /* bf */ {bf, bf, bf, bf, bf, f4, f4, f8, bf, bf},
  };
  return table[static_cast<int>(a)][static_cast<int>(b)];
}

int64_t torch_dtype_code(ScalarType t) {
  if (t == ScalarType::Bool) return 11;
  if (t == ScalarType::BFloat16) return 15;
  return static_cast<int64_t>(t);  // uint8..float64 share torch's numbering 0..7
}

std::optional<ScalarType> from_torch_dtype_code(int64_t code) {
  if (code >= 0 && code <= 7) return static_cast<ScalarType>(code);
  if (code == 11) return ScalarType::Bool;
  if (code == 15) return ScalarType::BFloat16;
  return std::nullopt;
}

void throw_unsupported_dtype(const char* op, ScalarType t) {
  throw Error(fmt::format("{}: not implemented for dtype {}", op, dtype_name(t)));
}

}  // namespace ampjit
