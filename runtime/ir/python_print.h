// Renders a graph as readable Python-like source, the `.code` of traced and scripted functions
// (torch's PythonPrint, simplified): single-use pure expressions are inlined into their use,
// arguments equal to the schema's trailing defaults are dropped, tensor constants are referred to
// as CONSTANTS.cN, and control flow prints as if/for/while.
#pragma once
#include <string>

#include "runtime/ir/ir.h"

namespace ampjit {

// `name` is the function's name; a graph whose first input is a module prints it as `self`.
std::string python_print(const Graph& g, const std::string& name);

}  // namespace ampjit
