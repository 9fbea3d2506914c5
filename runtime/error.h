// Exceptions. Each class maps to one Python exception type in the frontend (Error -> RuntimeError,
// TypeError -> TypeError, ...), so a message written here reaches the user unchanged.
#pragma once
#include <fmt/format.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "runtime/diagnostic.h"

namespace ampjit {

// Every error carries a Diagnostic (Note [One diagnostic type]): what() is its rendering, and a
// layer that adds context adds a note and rethrows the same object, which keeps its class.
class Error : public std::runtime_error {  // Python: RuntimeError
 public:
  explicit Error(std::string message) : Error(std::move(message), SourceRange()) {}
  Error(std::string message, SourceRange range)
      : std::runtime_error(std::string()),
        diagnostic_{
            Severity::Error, WarningCategory::User, std::move(message), std::move(range), {}},
        rendered_(diagnostic_.render()) {}

  const char* what() const noexcept override { return rendered_.c_str(); }
  const Diagnostic& diagnostic() const { return diagnostic_; }
  const std::string& message() const { return diagnostic_.message; }  // without location or notes
  const SourceRange& range() const { return diagnostic_.range; }
  void add_note(DiagnosticNote note) {
    diagnostic_.notes.push_back(std::move(note));
    rendered_ = diagnostic_.render();
  }

 private:
  Diagnostic diagnostic_;
  std::string rendered_;
};
class TypeError : public Error {  // Python: TypeError
 public:
  using Error::Error;
};
class ValueError : public Error {  // Python: ValueError
 public:
  using Error::Error;
};
class IndexError : public Error {  // Python: IndexError
 public:
  using Error::Error;
};
class NotImplementedError : public Error {  // Python: NotImplementedError
 public:
  using Error::Error;
};
// A matrix the linear algebra cannot take (singular, not positive-definite, no convergence), as
// torch's LinAlgError: Python ampjit.linalg.LinAlgError, a RuntimeError.
class LinAlgError : public Error {
 public:
  using Error::Error;
};
class OutOfMemoryError : public Error {  // Python: ampjit.cuda.OutOfMemoryError (a RuntimeError)
 public:
  using Error::Error;
};
// Source that does not compile (script, graph text): "file:line:col: what", the source line and
// a caret, then one "called from" note per enclosing call when the error is inside a callee.
// Its kind picks the Python class, as torch's frontend does: Python that script does not support
// raises torch.jit.frontend.NotSupportedError (UnsupportedNodeError for a whole kind of syntax,
// `try`, `lambda`, `yield`); neither is a RuntimeError. Everything else (names, types, arguments)
// is ampjit.jit.CompileError, a RuntimeError as torch's compile errors are.
enum class CompileErrorKind : uint8_t { Error, NotSupported, UnsupportedNode };
class CompileError : public Error {
 public:
  CompileError(std::string what, SourceRange range, CompileErrorKind kind = CompileErrorKind::Error)
      : Error(std::move(what), std::move(range)), kind_(kind) {}
  CompileErrorKind kind() const { return kind_; }
  // The same error, noted as happening inside a call made at `call_site`.
  CompileError called_from(const SourceRange& call_site) const {
    CompileError e = *this;
    e.add_note({"called from", call_site});
    return e;
  }

 private:
  CompileErrorKind kind_;
};

}  // namespace ampjit

// AMPJIT_CHECK(cond, "fmt", args...): throws ampjit::Error with the formatted message.
// AMPJIT_CHECK_T(ExcType, cond, "fmt", args...): throws the given class.
#define AMPJIT_CHECK(cond, ...) AMPJIT_CHECK_T(::ampjit::Error, cond, __VA_ARGS__)
#define AMPJIT_CHECK_T(Exc, cond, ...)     \
  do {                                     \
    if (!(cond)) [[unlikely]] {            \
      throw Exc(fmt::format(__VA_ARGS__)); \
    }                                      \
  } while (0)
