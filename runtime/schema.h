// Function schemas: the typed signature of every op, parsed from the op table's schema strings,
// e.g. "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
// The same schema drives argument binding for Python, the C++ API and (later) the script compiler.
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/ivalue.h"
#include "runtime/type.h"

namespace ampjit {

struct Argument {
  std::string name;
  TypePtr type;
  std::optional<IValue> default_value;
  bool kwarg_only = false;
  bool is_write = false;      // Tensor(a!): the op writes this argument (in-place self, out=)
  bool in_alias_set = false;  // Tensor(a), Tensor(a!): for a result, it may alias an argument
  int list_len = 0;           // int[2]: a single int broadcasts to this many
};

struct FunctionSchema {
  std::string ns;        // "aten"
  std::string name;      // "add"
  std::string overload;  // "Tensor", or "" for the default overload
  std::vector<Argument> args;
  std::vector<Argument> returns;

  std::string qualified_name() const { return ns + "::" + name; }  // "aten::add"
  std::string full_name() const {                                  // "aten::add.Tensor"
    return overload.empty() ? qualified_name() : qualified_name() + "." + overload;
  }
  int arg_index(std::string_view name) const;  // -1 when absent
  bool is_inplace() const;                     // self is written: add_, copy_
  bool is_out() const;                         // has a written out= argument
  std::string str() const;                     // canonical text
};

// Throws ampjit::Error with the position on malformed text (the op table is checked at start-up
// by a test, so a typo in a .def file fails fast).
FunctionSchema parse_schema(std::string_view text);

// Binds positional and keyword arguments to a schema: fills defaults, converts numbers to the
// declared type, checks types, and returns a stack in schema order. Throws TypeError naming the
// op, the argument, the expected and the actual type.
struct Kwarg {
  std::string_view name;
  IValue value;
};
Stack bind_arguments(const FunctionSchema& schema, std::vector<IValue> args,
                     std::vector<Kwarg> kwargs = {});
// Whether `v` can bind to an argument of type `t` (numbers convert where torch converts them).
bool value_matches_type(const IValue& v, const Type& t);

}  // namespace ampjit
