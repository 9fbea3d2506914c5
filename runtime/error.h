// Exceptions. Each class maps to one Python exception type in the frontend (Error -> RuntimeError,
// TypeError -> TypeError, ...), so a message written here reaches the user unchanged.
#pragma once
#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace ampjit {

class Error : public std::runtime_error {  // Python: RuntimeError
 public:
  using std::runtime_error::runtime_error;
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
class OutOfMemoryError : public Error {  // Python: ampjit.cuda.OutOfMemoryError (a RuntimeError)
 public:
  using Error::Error;
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
