// Script's generic builtins: the list, str and any-value operations whose schemas need type
// variables (List[t]), which the op table's schema language cannot express. They are graph nodes
// without an op entry, run by interpreter prim handlers (runtime/interpreter.h) that this library
// registers when it loads (Note [Builtins without op entries] in builtins.cpp lists them).
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/ivalue.h"

namespace ampjit {

// Python's str(v): 1.0, 0.1, 1e-05, True, None, [1, 'a'], a tensor's torch repr.
std::string python_str(const IValue& v);
// Python's repr(v): as str, but strings are quoted ('a').
std::string python_repr(const IValue& v);
// Python's `a == b` for None, numbers (1 == 1.0 == True), str, lists and tuples of them; tensors
// and objects compare by identity.
bool python_equals(const IValue& a, const IValue& b);

// Note [Op aliases]
// torch's other names of ops (torch/csrc/jit/passes/normalize_ops.cpp): `torch.divide` and
// `x.multiply(y)` are aten::div and aten::mul in script graphs, eager calls and traces alike.
// The op's base name for an alias ("divide" -> "div"), or "" when `name` is none.
std::string_view op_alias_target(std::string_view name);
// Every (alias, op) pair, for the Python namespace and Tensor methods.
const std::vector<std::pair<std::string_view, std::string_view>>& op_aliases();

}  // namespace ampjit
