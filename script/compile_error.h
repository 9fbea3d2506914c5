// CompileError: source that does not compile. The message is "file:line:col: what", then the
// source line and a caret under the range, then one "called from" note per enclosing call when
// the error is inside a callee. In Python it is a RuntimeError (ampjit.jit.CompileError).
#pragma once
#include <string>
#include <vector>

#include "runtime/error.h"
#include "runtime/ir/source_range.h"

namespace ampjit {

class CompileError : public Error {
 public:
  CompileError(std::string what, SourceRange range)
      : Error(format(what, range, {})), what_(std::move(what)), range_(std::move(range)) {}

  const std::string& message() const { return what_; }  // without location or notes
  const SourceRange& range() const { return range_; }
  const std::vector<SourceRange>& call_chain() const { return chain_; }

  // The same error, noted as happening inside a call made at `call_site`.
  CompileError called_from(const SourceRange& call_site) const {
    CompileError e = *this;
    e.chain_.push_back(call_site);
    static_cast<Error&>(e) = Error(format(what_, range_, e.chain_));
    return e;
  }

 private:
  static std::string format(const std::string& what, const SourceRange& r,
                            const std::vector<SourceRange>& chain) {
    std::string s;
    if (r.valid()) {
      const std::string h = r.highlight();  // "file:line:col\nline\n   ~~~"
      const size_t nl = h.find('\n');
      s = h.substr(0, nl) + ": " + what + (nl == std::string::npos ? "" : h.substr(nl));
    } else {
      s = what;
    }
    for (const SourceRange& c : chain) s += "\n  called from " + c.highlight();
    return s;
  }

  std::string what_;
  SourceRange range_;
  std::vector<SourceRange> chain_;
};

}  // namespace ampjit
