// The warning channel of the interop layer: diagnostics that are not errors (the places where
// PyTorch is silently wrong and ampjit says so), with the source location they point at.
//
//   warn(WarningCategory::AutocastInterop, "the traced autocast(enabled=False) region ... is lost",
//        node->source_range());
//
// Note [Interop warnings]
// C++ code raises a warning through warn(); what happens to it is up to the installed handler:
//  - In C++ alone (no handler installed), each distinct (category, message, location) is printed
//    once to stderr, as "file:line:col: AutocastInteropWarning: message".
//  - The Python module installs a handler at import (frontend/python/jit_bindings.cpp) that calls
//    warnings.warn_explicit with the class of the category (ampjit.jit.AutocastInteropWarning, a
//    UserWarning subclass, or UserWarning) and the location's file and line, so Python's filters
//    (`-W error`, pytest.warns, "once" per location) apply. When a filter turns the warning into
//    an exception, the handler throws and the exception reaches the caller as that Python
//    exception; code that warns must therefore leave its state consistent before warning (the
//    interpreter's region unwinding does: Note [Autocast regions at run time]).
// A handler is called on the thread that warns, possibly without the GIL; it takes what it needs.
// Which situations warn is decided by the interop rules of this folder, and only there (those that
// need the script compiler come with it: the script->traced and trace->script boundaries, and a
// scripted autocast(enabled=False) under eager autocast in torchscript semantics); each is a row of
// the conformance suite (tests/conformance/), which checks that nothing else warns.
#pragma once
#include <string>

#include "runtime/ir/source_range.h"

namespace ampjit {

enum class WarningCategory : unsigned char {
  User,             // Python: UserWarning (the eager autocast warnings, reproduced at run time)
  AutocastInterop,  // Python: ampjit.jit.AutocastInteropWarning (a UserWarning subclass)
};
const char* warning_category_name(WarningCategory c);  // "UserWarning", "AutocastInteropWarning"

struct Warning {
  WarningCategory category;
  std::string message;
  SourceRange where;  // may be invalid (no location known)
};

using WarningHandler = void (*)(const Warning& w);
// Installs the handler (nullptr: the default, stderr once); returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

// Raises a warning through the installed handler (which may throw: see the Note).
void warn(WarningCategory category, std::string message, SourceRange where = {});
inline void warn_autocast_interop(std::string message, SourceRange where = {}) {
  warn(WarningCategory::AutocastInterop, std::move(message), std::move(where));
}

}  // namespace ampjit
