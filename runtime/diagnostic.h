// Diagnostics: one type for every error and warning that points at source, shared by the script
// compiler, the passes, the interpreter, the tracer and the tools; and the warning channel.
//
//   throw CompileError("undefined value x", range);                 // runtime/error.h
//   catch (Error& e) { e.add_note({"aten::mm", node->source_range(), Style::Context}); throw; }
//   warn(WarningCategory::AutocastInterop, "the region ... is lost", node->source_range());
//
// Note [One diagnostic type]
// A Diagnostic is a severity, a message, the source range it is about, and notes, each with its own
// range: the call sites a compile error happened under ("called from", the inlined call chain), the
// graph node an interpreter error came from. Every ampjit::Error carries one (runtime/error.h), so
// a layer that adds context adds a note to the exception in flight and rethrows it with `throw;`:
// the exception keeps its class (an OutOfMemoryError stays one through any number of interpreter
// frames) and its message is re-rendered from the parts. Warnings are Diagnostics too. Rendering
// is one function: "file:line:col: message", the line, a caret under the range, then the notes.
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
// Which situations warn is decided by the interop rules (interop/, and the JIT autocast pass for
// the two that need the compiler); each is a row of the conformance suite (tests/conformance/),
// which checks that nothing else warns.
#pragma once
#include <string>
#include <vector>

#include "runtime/ir/source_range.h"

namespace ampjit {

enum class Severity : unsigned char { Error, Warning };

enum class WarningCategory : unsigned char {
  User,             // Python: UserWarning (the eager autocast warnings, reproduced at run time)
  AutocastInterop,  // Python: ampjit.jit.AutocastInteropWarning (a UserWarning subclass)
};
const char* warning_category_name(WarningCategory c);  // "UserWarning", "AutocastInteropWarning"

// A related place: its message and its own range.
struct DiagnosticNote {
  enum class Style : unsigned char {
    Source,   // "\n  <message> file:line:col\n<line>\n<caret>": a call site ("called from")
    Context,  // "\n  (in <message> at file:line:col)": the graph node an error was raised in
  };
  std::string message;
  SourceRange range;
  Style style = Style::Source;
};

struct Diagnostic {
  Severity severity = Severity::Error;
  WarningCategory category = WarningCategory::User;  // warnings only
  std::string message;
  SourceRange range;  // may be invalid: no location known
  std::vector<DiagnosticNote> notes;

  // "file:line:col: message\n<line>\n<caret>" (the message alone without a range), then the notes.
  std::string render() const;
};

// ---- The warning channel (Note [Interop warnings]) ----------------------------------------------

using WarningHandler = void (*)(const Diagnostic& warning);
// Installs the handler (nullptr: the default, stderr once); returns the previous one.
WarningHandler set_warning_handler(WarningHandler handler);

// Raises a warning through the installed handler (which may throw: see the Note).
void warn(WarningCategory category, std::string message, SourceRange where = {});
inline void warn_autocast_interop(std::string message, SourceRange where = {}) {
  warn(WarningCategory::AutocastInterop, std::move(message), std::move(where));
}

}  // namespace ampjit
