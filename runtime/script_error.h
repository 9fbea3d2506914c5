// The exception a compiled program raises itself (`raise`, a failed `assert`, torch._assert, an
// @torch.jit.unused stub): torch's torch.jit.Error, which Python code catches apart from the
// RuntimeErrors of ops; its message keeps the Python exception's name ("ValueError: boom") and the
// statement's file:line:col. Python: ampjit.jit.Error (an Exception, not a RuntimeError, as
// torch's).
#pragma once
#include "runtime/error.h"

namespace ampjit {

class ScriptError : public Error {
 public:
  using Error::Error;
};

}  // namespace ampjit
