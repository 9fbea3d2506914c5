// The value of a literal expression, shared by the compiler (constant arguments, defaults,
// constant subscripts) and the static resolver (module-level constants): numbers, strings, bools,
// None, a sign applied to a number, and tuples (and, where allowed, lists) of literals. Names and
// attributes are asked of `lookup`, which knows what they are bound to.
#pragma once
#include <functional>
#include <optional>

#include "runtime/ivalue.h"
#include "script/ast.h"

namespace ampjit::script {

using LiteralLookup = std::function<std::optional<IValue>(const Expr& name_or_attribute)>;

// nullopt when `e` is not a literal (or `lookup` does not know a name in it). Lists are literals
// only with `allow_lists` (a module-level list is a mutable object, not a constant).
std::optional<IValue> literal_value(const Expr& e, const LiteralLookup& lookup, bool allow_lists);

}  // namespace ampjit::script
