// The script lexer (see lexer.h and Note [Layout tokens]).
#include "script/lexer.h"

#include <locale.h>
#include <wctype.h>

#include <algorithm>
#include <charconv>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "runtime/error.h"

namespace ampjit::script {

namespace {

// Python's own limits: its tokenizer gives up at these depths with these messages.
constexpr size_t kMaxBrackets = 200;
constexpr size_t kMaxIndentLevels = 100;

struct Spelled {
  std::string_view spelling;
  Tok kind;
};

constexpr Spelled kOperators[] = {
#define AMPJIT_TOKEN(name, spelling)
#define AMPJIT_KEYWORD(name, spelling)
#define AMPJIT_OPERATOR(name, spelling) {spelling, Tok::name},
#include "script/tokens.def"
};

constexpr Spelled kKeywords[] = {
#define AMPJIT_TOKEN(name, spelling)
#define AMPJIT_OPERATOR(name, spelling)
#define AMPJIT_KEYWORD(name, spelling) {spelling, Tok::name},
#include "script/tokens.def"
};

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || (c >= '0' && c <= '9');
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_newline(char c) {
  return c == '\n' || c == '\r';
}

int digit_value(char c) {  // 99 for anything that is not a hex digit
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes one UTF-8 sequence at s[i]; returns its length, or 0 when it is malformed (truncated,
// overlong, a surrogate or past U+10FFFF).
size_t decode_utf8(std::string_view s, size_t i, uint32_t& cp) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  size_t len;
  uint32_t min;
  if (b0 < 0x80) {
    cp = b0;
    return 1;
  } else if ((b0 & 0xE0) == 0xC0) {
    len = 2, min = 0x80, cp = b0 & 0x1F;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, min = 0x800, cp = b0 & 0x0F;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return len;
}

// Note [Non-ASCII identifiers]
// Python identifiers may use letters of any script (PEP 3131: XID_Start, then XID_Continue), and
// torch compiles such functions. The lexer decodes UTF-8 and asks the C library's Unicode
// classification (glibc's C.UTF-8 locale): a letter starts a name, a letter, digit or combining
// mark continues one. Two known differences from Python: identifiers are not NFKC-normalized
// (Python reads `ﬁ` as `fi`), and a few code points glibc calls letters Python does not let start
// a name (the Arabic-Indic digits); no code point is taken that Python refuses.
// The length of the identifier character at s[i] (non-ASCII), or 0 when there is none.
size_t identifier_char_at(std::string_view s, size_t i, bool start) {
  static const locale_t utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", locale_t{});
  uint32_t cp = 0;
  const size_t len = decode_utf8(s, i, cp);
  if (len < 2 || !utf8) return 0;
  const auto wc = static_cast<wint_t>(cp);
  if (iswalpha_l(wc, utf8)) return len;
  if (start) return 0;
  const bool combining = (cp >= 0x300 && cp <= 0x36F) || (cp >= 0x1AB0 && cp <= 0x1AFF) ||
                         (cp >= 0x1DC0 && cp <= 0x1DFF) || (cp >= 0x20D0 && cp <= 0x20FF) ||
                         (cp >= 0xFE20 && cp <= 0xFE2F);
  return combining || iswalnum_l(wc, utf8) ? len : 0;
}

char closer_of(char open) {
  return open == '(' ? ')' : open == '[' ? ']' : '}';
}

}  // namespace

const char* token_spelling(Tok kind) {
  static constexpr const char* kSpellings[] = {
#define AMPJIT_TOKEN(name, spelling) spelling,
#include "script/tokens.def"
  };
  return kSpellings[static_cast<size_t>(kind)];
}

const char* token_name(Tok kind) {
  static constexpr const char* kNames[] = {
#define AMPJIT_TOKEN(name, spelling) #name,
#include "script/tokens.def"
  };
  return kNames[static_cast<size_t>(kind)];
}

Lexer::Lexer(std::shared_ptr<const Source> source)
    : source_(std::move(source)), text_(source_->text()) {
  validate_encoding();
}

Lexer::Lexer(std::shared_ptr<const Source> source, size_t begin, size_t end)
    : source_(std::move(source)),
      text_(std::string_view(source_->text()).substr(0, end)),
      pos_(begin),
      at_line_start_(false),
      embedded_(true) {}

Token Lexer::make(Tok kind, size_t begin, size_t end) const {
  Token t;
  t.kind = kind;
  t.range = SourceRange(source_, begin, end);
  return t;
}

void Lexer::fail(const std::string& what, size_t begin, size_t end) const {
  throw CompileError(what, SourceRange(source_, begin, std::max(begin, end)));
}

void Lexer::fail_unsupported(const std::string& what, size_t begin, size_t end) const {
  throw CompileError(what, SourceRange(source_, begin, std::max(begin, end)),
                     CompileErrorKind::NotSupported);
}

// The offset of the '}' that closes the replacement field opened at `open` (Note [f-strings]).
size_t Lexer::scan_field(size_t open, char quote, bool triple) const {
  const std::string_view s = text_;
  const auto expecting = [&](size_t at) { fail("f-string: expecting '}'", open, at); };
  int depth = 0;
  size_t i = open + 1;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == quote && (!triple || s.substr(i, 3) == std::string(3, quote))) expecting(i);
    if (!triple && is_newline(c)) expecting(i);
    if (c == '\\') fail("f-string expression part cannot include a backslash", i, i + 1);
    if (c == '#') fail("f-string expression part cannot include '#'", i, i + 1);
    if (c == '\'' || c == '"') {  // a string inside the field (of the other quote)
      const size_t close = s.find(c, i + 1);
      if (close == std::string_view::npos) expecting(s.size());
      i = close;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']') {
      --depth;  // a mismatch is the field's lexer's to report
    } else if (c == '}') {
      if (depth == 0) break;
      --depth;
    } else if (depth == 0 && c == '!' && s.substr(i, 2) != "!=") {
      fail_unsupported("f-string conversions ('!r', '!s', '!a') are not supported in script", i,
                       i + 2);
    } else if (depth == 0 && c == ':') {
      fail_unsupported("f-string format specifications (':...') are not supported in script", i,
                       i + 1);
    } else if (depth == 0 && c == '=' && s.substr(i, 2) != "==" &&
               std::string_view("=!<>").find(s[i - 1]) == std::string_view::npos) {
      fail_unsupported("self-documenting f-string fields ('x=') are not supported in script", i,
                       i + 1);
    }
  }
  if (i >= s.size()) expecting(i);
  if (s.substr(open + 1, i - open - 1).find_first_not_of(" \t\f\r\n") == std::string_view::npos) {
    fail("f-string: empty expression not allowed", open, i + 1);
  }
  return i;
}

// Python reads source as UTF-8 and refuses NUL bytes before it tokenizes anything; so do we, so
// that everything after may treat the text as well-formed.
void Lexer::validate_encoding() const {
  const std::string_view s = text_;
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '\0') fail("source code cannot contain null bytes", i, i + 1);
    uint32_t cp;
    const size_t len = decode_utf8(s, i, cp);
    if (len == 0) {
      fail(fmt::format("source is not valid UTF-8 (byte 0x{:02x})",
                       static_cast<unsigned char>(s[i])),
           i, i + 1);
    }
    i += len;
  }
}

Token Lexer::next() {
  if (!pending_.empty()) {
    Token t = std::move(pending_.back());
    pending_.pop_back();
    return t;
  }
  const std::string_view s = text_;
  if (at_line_start_ && brackets_.empty() && !embedded_) {
    start_line();
    if (!pending_.empty()) return next();
  }
  while (!skip_blanks()) {
    if (pos_ >= s.size()) return end_of_input();
    const size_t b = pos_;
    pos_ += (s[pos_] == '\r' && pos_ + 1 < s.size() && s[pos_ + 1] == '\n') ? 2 : 1;
    if (brackets_.empty() && !embedded_) {
      at_line_start_ = true;
      return make(Tok::Newline, b, pos_);
    }
  }
  const size_t begin = pos_;
  const char c = s[pos_];
  if (is_ident_start(c) ||
      (static_cast<unsigned char>(c) >= 0x80 && identifier_char_at(s, pos_, /*start=*/true)))
    return lex_name(begin);
  if (is_digit(c) || (c == '.' && pos_ + 1 < s.size() && is_digit(s[pos_ + 1])))
    return lex_number(begin);
  if (c == '\'' || c == '"') return lex_string(begin, begin, false);
  return lex_operator(begin);
}

// At the first character of a line outside brackets: skips blank and comment-only lines, then
// compares the indentation with the open levels (Note [Layout tokens]).
void Lexer::start_line() {
  const std::string_view s = text_;
  size_t line_begin;
  int col, alt;
  for (;;) {
    line_begin = pos_;
    col = alt = 0;
    for (; pos_ < s.size(); ++pos_) {
      const char c = s[pos_];
      if (c == ' ') {
        ++col, ++alt;
      } else if (c == '\t') {
        col = (col / 8 + 1) * 8, ++alt;
      } else if (c == '\f') {
        col = alt = 0;
      } else {
        break;
      }
    }
    if (pos_ < s.size() && s[pos_] == '#') {
      while (pos_ < s.size() && !is_newline(s[pos_])) ++pos_;
    }
    if (pos_ >= s.size()) return;  // end_of_input() closes the open levels
    if (!is_newline(s[pos_])) break;
    pos_ += (s[pos_] == '\r' && pos_ + 1 < s.size() && s[pos_ + 1] == '\n') ? 2 : 1;
  }
  at_line_start_ = false;
  const auto tab_error = [&] {
    fail("inconsistent use of tabs and spaces in indentation", line_begin, pos_ + 1);
  };
  if (col > indents_.back()) {
    if (alt <= alt_indents_.back()) tab_error();
    if (indents_.size() >= kMaxIndentLevels) fail("too many levels of indentation", pos_, pos_ + 1);
    indents_.push_back(col);
    alt_indents_.push_back(alt);
    pending_.push_back(make(Tok::Indent, line_begin, pos_));
    return;
  }
  while (col < indents_.back()) {
    indents_.pop_back();
    alt_indents_.pop_back();
    pending_.push_back(make(Tok::Dedent, pos_, pos_));
  }
  if (col != indents_.back()) {
    fail("unindent does not match any outer indentation level", pos_, pos_ + 1);
  }
  if (alt != alt_indents_.back()) tab_error();
}

bool Lexer::skip_blanks() {
  const std::string_view s = text_;
  while (pos_ < s.size()) {
    const char c = s[pos_];
    if (c == ' ' || c == '\t' || c == '\f') {
      ++pos_;
    } else if (c == '#') {
      while (pos_ < s.size() && !is_newline(s[pos_])) ++pos_;
    } else if (c == '\\') {  // an explicit line continuation
      if (pos_ + 1 >= s.size()) fail("unexpected EOF while parsing", pos_, pos_ + 1);
      if (!is_newline(s[pos_ + 1])) {
        fail("unexpected character after line continuation character", pos_, pos_ + 1);
      }
      pos_ += (s[pos_ + 1] == '\r' && pos_ + 2 < s.size() && s[pos_ + 2] == '\n') ? 3 : 2;
    } else {
      return !is_newline(c);
    }
  }
  return false;
}

Token Lexer::end_of_input() {
  const size_t n = text_.size();
  if (!brackets_.empty()) {
    const auto [open, at] = brackets_.back();
    fail(fmt::format("'{}' was never closed", open), at, at + 1);
  }
  if (embedded_) return make(Tok::EndOfFile, n, n);
  if (!at_line_start_) {  // the last line has no line break
    at_line_start_ = true;
    return make(Tok::Newline, n, n);
  }
  while (indents_.size() > 1) {
    indents_.pop_back();
    alt_indents_.pop_back();
    pending_.push_back(make(Tok::Dedent, n, n));
  }
  if (!pending_.empty()) return next();
  return make(Tok::EndOfFile, n, n);
}

// NAME, a keyword, or a string literal with a prefix (r'', u'', f'' and the refused b'').
Token Lexer::lex_name(size_t begin) {
  const std::string_view s = text_;
  while (pos_ < s.size()) {
    if (is_ident_char(s[pos_])) {
      ++pos_;
    } else if (static_cast<unsigned char>(s[pos_]) >= 0x80) {
      const size_t len = identifier_char_at(s, pos_, /*start=*/false);
      if (!len) break;
      pos_ += len;
    } else {
      break;
    }
  }
  const std::string_view word(s.data() + begin, pos_ - begin);
  if (pos_ < s.size() && (s[pos_] == '\'' || s[pos_] == '"') && word.size() <= 2) {
    std::string prefix;
    for (char c : word) prefix += static_cast<char>(c | 0x20);  // ASCII letters to lower case
    static constexpr std::string_view kPrefixes[] = {"r", "u", "b", "f", "br", "rb", "fr", "rf"};
    if (std::find(std::begin(kPrefixes), std::end(kPrefixes), prefix) != std::end(kPrefixes)) {
      const bool raw = prefix.find('r') != std::string::npos;
      const bool fstring = prefix.find('f') != std::string::npos;
      if (prefix.find('b') != std::string::npos) {
        const Token whole = lex_string(begin, pos_, /*raw=*/true);  // to find where it ends
        fail_unsupported("bytes literals are not supported in script", begin, whole.range.end);
      }
      return lex_string(begin, pos_, raw, fstring);
    }
  }
  for (const Spelled& k : kKeywords) {
    if (k.spelling == word) return make(k.kind, begin, pos_);
  }
  Token t = make(Tok::Identifier, begin, pos_);
  t.text = word;
  return t;
}

// Digits of `base` with single underscores between them, from pos_; returns how many digits.
size_t Lexer::skip_digits(int base, const char* kind) {
  const std::string_view s = text_;
  const size_t begin = pos_;
  size_t count = 0;
  while (pos_ < s.size()) {
    if (s[pos_] == '_') {
      if (pos_ + 1 >= s.size() || digit_value(s[pos_ + 1]) >= base) {
        fail(fmt::format("invalid {} literal", kind), begin, pos_ + 1);
      }
      ++pos_;
    } else if (digit_value(s[pos_]) < base) {
      ++pos_, ++count;
    } else {
      break;
    }
  }
  return count;
}

// Integers (decimal, 0x, 0o, 0b, with underscores) and floats (1.5, 1., .5, 1e-3, 1_000.5).
Token Lexer::lex_number(size_t begin) {
  const std::string_view s = text_;
  const auto at = [&](size_t i) { return i < s.size() ? s[i] : '\0'; };
  const auto digits_of = [&](size_t b, size_t e) {
    std::string d;
    for (size_t i = b; i < e; ++i)
      if (s[i] != '_') d += s[i];
    return d;
  };
  const auto to_int = [&](const std::string& digits, int base) {
    uint64_t v = 0;
    for (char c : digits) {
      const auto d = static_cast<uint64_t>(digit_value(c));
      if (v > (std::numeric_limits<uint64_t>::max() - d) / static_cast<uint64_t>(base)) {
        v = std::numeric_limits<uint64_t>::max();
        break;
      }
      v = v * static_cast<uint64_t>(base) + d;
    }
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      fail("integer literal is too large for a 64-bit int", begin, pos_);
    }
    Token t = make(Tok::Int, begin, pos_);
    t.text = s.substr(begin, pos_ - begin);
    t.int_value = static_cast<int64_t>(v);
    return t;
  };

  const char p = static_cast<char>(at(begin + 1) | 0x20);
  if (s[begin] == '0' && (p == 'x' || p == 'o' || p == 'b')) {
    const int base = p == 'x' ? 16 : p == 'o' ? 8 : 2;
    const char* kind = p == 'x' ? "hexadecimal" : p == 'o' ? "octal" : "binary";
    pos_ = begin + 2;
    if (at(pos_) == '_') ++pos_;  // 0x_ff
    const size_t count = skip_digits(base, kind);
    if (is_digit(at(pos_))) {
      fail(fmt::format("invalid digit '{}' in {} literal", at(pos_), kind), pos_, pos_ + 1);
    }
    if (count == 0 || is_ident_char(at(pos_))) {
      fail(fmt::format("invalid {} literal", kind), begin, pos_ + 1);
    }
    return to_int(digits_of(begin + 2, pos_), base);
  }

  bool is_float = false;
  pos_ = begin;
  skip_digits(10, "decimal");
  if (at(pos_) == '.') {
    is_float = true;
    ++pos_;
    if (is_digit(at(pos_))) skip_digits(10, "decimal");
  }
  if (at(pos_) == 'e' || at(pos_) == 'E') {
    const size_t e = pos_;
    pos_ += (at(e + 1) == '+' || at(e + 1) == '-') ? 2 : 1;
    if (!is_digit(at(pos_))) fail("invalid decimal literal", begin, pos_ + 1);
    skip_digits(10, "decimal");
    is_float = true;
  }
  if (at(pos_) == 'j' || at(pos_) == 'J') {
    fail("complex literals are not supported in script", begin, pos_ + 1);
  }
  if (is_ident_char(at(pos_))) fail("invalid decimal literal", begin, pos_ + 1);

  const std::string digits = digits_of(begin, pos_);
  if (!is_float) {
    if (digits.size() > 1 && digits[0] == '0' &&
        digits.find_first_not_of('0') != std::string::npos) {
      fail(
          "leading zeros in decimal integer literals are not permitted; use an 0o prefix for "
          "octal integers",
          begin, pos_);
    }
    return to_int(digits, 10);
  }
  Token t = make(Tok::Float, begin, pos_);
  t.text = s.substr(begin, pos_ - begin);
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), t.float_value);
  if (ec == std::errc::result_out_of_range) {
    // Python rounds to inf or 0; from_chars leaves the value alone. Overflow needs a positive
    // exponent; without one the literal underflowed.
    const size_t e = digits.find_first_of("eE");
    const bool overflow = e != std::string::npos && digits[e + 1] != '-';
    t.float_value = overflow ? std::numeric_limits<double>::infinity() : 0.0;
  }
  return t;
}

// `count` digits of `base` at `at`, the digits of a \x, \u or \U escape.
uint32_t Lexer::read_escape_digits(size_t at, int count, int base, const char* what) {
  const std::string_view s = text_;
  uint32_t v = 0;
  for (int k = 0; k < count; ++k) {
    const size_t i = at + static_cast<size_t>(k);
    if (i >= s.size() || digit_value(s[i]) >= base)
      fail(fmt::format("truncated {} escape", what), at - 2, i);
    v = v * static_cast<uint32_t>(base) + static_cast<uint32_t>(digit_value(s[i]));
  }
  return v;
}

// A string literal from its prefix at `begin`; the quote is at `quote`. Escapes are decoded
// unless `raw`; the value is UTF-8, line breaks inside triple-quoted strings become "\n".
Token Lexer::lex_string(size_t begin, size_t quote, bool raw, bool fstring) {
  const std::string_view s = text_;
  const char q = s[quote];
  const bool triple = quote + 2 < s.size() && s[quote + 1] == q && s[quote + 2] == q;
  pos_ = quote + (triple ? 3 : 1);
  std::string value;
  std::vector<std::pair<size_t, size_t>> fields;
  for (;;) {
    if (pos_ >= s.size() || (!triple && is_newline(s[pos_]))) {
      if (triple) fail("unterminated triple-quoted string literal", begin, quote + 3);
      fail("unterminated string literal", begin, pos_);
    }
    const char c = s[pos_];
    if (c == q) {
      if (!triple) {
        ++pos_;
        break;
      }
      if (pos_ + 2 < s.size() && s[pos_ + 1] == q && s[pos_ + 2] == q) {
        pos_ += 3;
        break;
      }
      value += c;
      ++pos_;
    } else if (fstring && (c == '{' || c == '}')) {   // Note [f-strings]
      if (pos_ + 1 < s.size() && s[pos_ + 1] == c) {  // kept escaped: format() reads them
        value += c;
        value += c;
        pos_ += 2;
      } else if (c == '}') {
        fail("f-string: single '}' is not allowed", pos_, pos_ + 1);
      } else {
        const size_t close = scan_field(pos_, q, triple);
        fields.emplace_back(pos_ + 1, close);
        value += "{}";
        pos_ = close + 1;
      }
    } else if (c == '\r') {
      value += '\n';
      pos_ += (pos_ + 1 < s.size() && s[pos_ + 1] == '\n') ? 2 : 1;
    } else if (c != '\\') {
      value += c;
      ++pos_;
    } else if (pos_ + 1 >= s.size()) {
      pos_ = s.size();  // reported as unterminated above
    } else if (raw) {   // a backslash still keeps the next character from ending the string
      value += c;
      value += s[pos_ + 1];
      pos_ += 2;
    } else {
      const size_t esc = pos_;
      const char e = s[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case '\n':
          break;  // a continued line
        case '\r':
          if (pos_ < s.size() && s[pos_] == '\n') ++pos_;
          break;
        case '\\':
        case '\'':
        case '"':
          value += e;
          break;
        case 'a':
          value += '\a';
          break;
        case 'b':
          value += '\b';
          break;
        case 'f':
          value += '\f';
          break;
        case 'n':
          value += '\n';
          break;
        case 'r':
          value += '\r';
          break;
        case 't':
          value += '\t';
          break;
        case 'v':
          value += '\v';
          break;
        case 'x':
        case 'u':
        case 'U': {
          const int count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          const char* what = e == 'x' ? "\\xXX" : e == 'u' ? "\\uXXXX" : "\\UXXXXXXXX";
          const uint32_t cp = read_escape_digits(pos_, count, 16, what);
          pos_ += static_cast<size_t>(count);
          if (cp > 0x10FFFF) fail("illegal Unicode character", esc, pos_);
          if (cp >= 0xD800 && cp <= 0xDFFF) {
            fail(
                fmt::format("surrogate code point U+{:04X} is not supported in script strings", cp),
                esc, pos_);
          }
          append_utf8(value, cp);
          break;
        }
        case 'N':
          fail("\\N{...} escapes are not supported in script", esc, pos_);
        default:
          if (e >= '0' && e <= '7') {  // up to three octal digits
            uint32_t cp = static_cast<uint32_t>(e - '0');
            for (int k = 0; k < 2 && pos_ < s.size() && s[pos_] >= '0' && s[pos_] <= '7'; ++k)
              cp = cp * 8 + static_cast<uint32_t>(s[pos_++] - '0');
            append_utf8(value, cp);
          } else {  // Python keeps unknown escapes as written
            value += '\\';
            value += e;
          }
      }
    }
  }
  Token t = make(fstring ? Tok::FString : Tok::String, begin, pos_);
  t.text = std::move(value);
  t.fields = std::move(fields);
  return t;
}

Token Lexer::lex_operator(size_t begin) {
  const std::string_view s = text_;
  const Spelled* best = nullptr;
  for (const Spelled& op : kOperators) {
    if (s.compare(begin, op.spelling.size(), op.spelling) == 0 &&
        (!best || op.spelling.size() > best->spelling.size())) {
      best = &op;
    }
  }
  const auto c = static_cast<unsigned char>(s[begin]);
  if (!best) {
    if (c < 0x20 || c == 0x7F)
      fail(fmt::format("invalid non-printable character U+{:04X}", c), begin, begin + 1);
    if (c >= 0x80) {
      uint32_t cp = 0;
      const size_t len = decode_utf8(s, begin, cp);
      fail(fmt::format("invalid character '{}' (U+{:04X})", s.substr(begin, len), cp), begin,
           begin + len);
    }
    fail("invalid syntax", begin, begin + 1);
  }
  pos_ = begin + best->spelling.size();
  if (c == '(' || c == '[' || c == '{') {
    if (brackets_.size() >= kMaxBrackets) fail("too many nested parentheses", begin, pos_);
    brackets_.emplace_back(static_cast<char>(c), begin);
  } else if (c == ')' || c == ']' || c == '}') {
    if (brackets_.empty()) fail(fmt::format("unmatched '{}'", static_cast<char>(c)), begin, pos_);
    const auto [open, at] = brackets_.back();
    if (closer_of(open) != static_cast<char>(c)) {
      const int open_line = source_->line_col(at).first;
      const bool same_line = open_line == source_->line_col(begin).first;
      fail(fmt::format("closing parenthesis '{}' does not match opening parenthesis '{}'{}",
                       static_cast<char>(c), open,
                       same_line ? "" : fmt::format(" on line {}", open_line)),
           begin, pos_);
    }
    brackets_.pop_back();
  }
  return make(best->kind, begin, pos_);
}

std::vector<Token> tokenize(std::shared_ptr<const Source> source) {
  Lexer lexer(std::move(source));
  std::vector<Token> out;
  do out.push_back(lexer.next());
  while (out.back().kind != Tok::EndOfFile);
  return out;
}

}  // namespace ampjit::script
