// Renders a graph as readable Python-like source, the `.code` of traced and scripted functions
// (torch's PythonPrint, simplified): single-use pure expressions are inlined into their use,
// arguments equal to the schema's trailing defaults are dropped, tensor constants are referred to
// as CONSTANTS.cN, and control flow prints as if/for/while.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/ir/ir.h"

namespace ampjit {

// `name` is the function's name; a graph whose first input is a module prints it as `self`.
std::string python_print(const Graph& g, const std::string& name);

class Function;
struct FunctionSchema;

// Note [Printing for archives]
// The same printer in the dialect torch.jit.save writes and torch.jit.load (torch 1.13's and
// ampjit's, Note [Serialized code]) compiles again: a method call is `(obj).name(args, )`, a
// function call its qualified name (`__torch__.torch.nn.functional.relu(x, )`), a tensor constant
// `CONSTANTS.cN`, floats and strings exact literals (`inf`, escapes), an empty list
// `annotate(List[T], [])`, `l[i]` for the generic __getitem__, `unchecked_cast(T, v)`,
// `uninitialized(T)`, `ops.prim.RaiseException(msg)`, and an autocast object as torch makes one
// (`_0 = C.__new__(C)`, `_1 = (_0).__init__(args, )`, `with _0:`). What the printed code needs
// beyond the graph is reported in `ArchivePrint`. A graph the dialect cannot express (objects of
// script classes, ampjit's own ops) is an Error naming what.
struct ArchivePrint {
  // Each prim::CallFunction: `method` when the callee is a method of its first input's object.
  std::function<void(const Node& call, const std::shared_ptr<Function>& fn, bool method)> on_call;
  std::vector<IValue> constants;              // CONSTANTS.cN is constants[N] (tensors), appended
  std::vector<std::string> autocast_classes;  // the autocast classes the code makes objects of
  std::vector<TypePtr> named_tuples;          // the NamedTuple types the code names
  // Print a function's graph as a method: `self` first (a scripted function saved as the forward of
  // torch's PlaceholderModule).
  bool prepend_self = false;
};
// `schema` (when given) supplies the arguments' defaults (`k: int=2`), after `self` for a method.
std::string python_print_for_archive(const Graph& g, const std::string& name, ArchivePrint& ctx,
                                     const FunctionSchema* schema = nullptr);
// A float as an exact Python literal (1.0, 0.1, 1e-05, inf, -inf, nan) and a str as a quoted one.
std::string float_literal(double d);
std::string string_literal(const std::string& s);

}  // namespace ampjit
