// The FileCheck driver (see filecheck.h).
#include "runtime/ir/filecheck.h"

#include <regex>
#include <vector>

#include <fmt/format.h>

namespace ampjit {

namespace {

struct Directive {
  enum Kind { Check, Next, Not, Count } kind;
  int count = 1;
  std::string pattern;
  int line;  // in the checks text
};

std::vector<Directive> parse_directives(std::string_view checks) {
  std::vector<Directive> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos <= checks.size()) {
    size_t e = checks.find('\n', pos);
    if (e == std::string_view::npos) e = checks.size();
    std::string_view line = checks.substr(pos, e - pos);
    ++line_no;
    pos = e + 1;
    const size_t c = line.find("CHECK");
    if (c == std::string_view::npos) continue;
    std::string_view rest = line.substr(c + 5);
    Directive d{Directive::Check, 1, "", line_no};
    if (rest.starts_with("-NEXT:")) {
      d.kind = Directive::Next;
      rest.remove_prefix(6);
    } else if (rest.starts_with("-NOT:")) {
      d.kind = Directive::Not;
      rest.remove_prefix(5);
    } else if (rest.starts_with("-COUNT-")) {
      d.kind = Directive::Count;
      rest.remove_prefix(7);
      const size_t colon = rest.find(':');
      if (colon == std::string_view::npos) continue;
      d.count = std::stoi(std::string(rest.substr(0, colon)));
      rest.remove_prefix(colon + 1);
    } else if (rest.starts_with(":")) {
      rest.remove_prefix(1);
    } else {
      continue;
    }
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
    d.pattern = std::string(rest);
    out.push_back(std::move(d));
  }
  return out;
}

// A matcher for one pattern: literal text with {{regex}} blocks.
class Matcher {
 public:
  explicit Matcher(const std::string& p) {
    if (p.find("{{") == std::string::npos) {
      literal_ = p;
      return;
    }
    std::string rx;
    size_t i = 0;
    while (i < p.size()) {
      const size_t b = p.find("{{", i);
      const std::string lit = p.substr(i, b == std::string::npos ? std::string::npos : b - i);
      for (char c : lit) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) rx += '\\';
        rx += c;
      }
      if (b == std::string::npos) break;
      const size_t e = p.find("}}", b + 2);
      rx += p.substr(b + 2, e - b - 2);
      i = e == std::string::npos ? p.size() : e + 2;
    }
    regex_ = std::regex(rx);
    is_regex_ = true;
  }
  // Position of the first match at or after `from`, or npos.
  size_t find(const std::string& text, size_t from, size_t* len) const {
    if (!is_regex_) {
      *len = literal_.size();
      return text.find(literal_, from);
    }
    std::smatch m;
    std::string::const_iterator b = text.begin() + static_cast<ptrdiff_t>(from);
    if (!std::regex_search(b, text.end(), m, regex_)) return std::string::npos;
    *len = static_cast<size_t>(m.length(0));
    return from + static_cast<size_t>(m.position(0));
  }

 private:
  std::string literal_;
  std::regex regex_;
  bool is_regex_ = false;
};

size_t line_of(const std::string& text, size_t pos) {
  size_t n = 0;
  for (size_t i = 0; i < pos && i < text.size(); ++i) n += text[i] == '\n';
  return n;
}

}  // namespace

FileCheckResult filecheck(std::string_view text_view, std::string_view checks) {
  const std::string text(text_view);
  const std::vector<Directive> ds = parse_directives(checks);
  FileCheckResult r;
  if (ds.empty()) {
    r.ok = false;
    r.message = "no CHECK directives found";
    return r;
  }
  size_t pos = 0;        // search start
  size_t last_line = 0;  // line of the previous match
  bool have_last = false;
  std::vector<const Directive*> pending_not;
  auto fail = [&](const Directive& d, const std::string& why) {
    r.ok = false;
    r.message = fmt::format("directive on line {} ({}): {}\n--- text ---\n{}", d.line, d.pattern,
                            why, text);
    return r;
  };
  auto check_nots = [&](size_t begin, size_t end) -> bool {
    for (const Directive* n : pending_not) {
      size_t len;
      const size_t at = Matcher(n->pattern).find(text, begin, &len);
      if (at != std::string::npos && at + len <= end) {
        fail(*n, fmt::format("CHECK-NOT pattern found on output line {}", line_of(text, at) + 1));
        return false;
      }
    }
    pending_not.clear();
    return true;
  };
  for (const Directive& d : ds) {
    if (d.kind == Directive::Not) {
      pending_not.push_back(&d);
      continue;
    }
    const Matcher m(d.pattern);
    for (int k = 0; k < d.count; ++k) {
      size_t len = 0;
      const size_t at = m.find(text, pos, &len);
      if (at == std::string::npos) return fail(d, "pattern not found after the previous match");
      if (d.kind == Directive::Next && have_last && line_of(text, at) != last_line + 1)
        return fail(d,
                    fmt::format("CHECK-NEXT matched on output line {}, not the line after line {}",
                                line_of(text, at) + 1, last_line + 1));
      if (!check_nots(pos, at)) return r;
      last_line = line_of(text, at);
      have_last = true;
      pos = at + len;
    }
  }
  if (!check_nots(pos, text.size())) return r;
  return r;
}

}  // namespace ampjit
