// The script lexer: Python source text to tokens, with Python's layout rules (NEWLINE, INDENT,
// DEDENT; no layout inside brackets; backslash continuations). Token kinds come from tokens.def.
// Tokens are produced on demand, so errors surface in source order, as Python reports them.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/ir/source_range.h"

namespace ampjit::script {

enum class Tok : uint8_t {
#define AMPJIT_TOKEN(name, spelling) name,
#include "script/tokens.def"
};

// "+", "def", or for the other kinds a description ("identifier", "newline").
const char* token_spelling(Tok kind);
// The enumerator's name ("Plus", "KwDef", "Identifier").
const char* token_name(Tok kind);

struct Token {
  Tok kind = Tok::EndOfFile;
  SourceRange range;  // the token's text; INDENT spans the indentation, DEDENT is empty
  std::string text;   // Identifier: the name; String: the decoded value; Int/Float: the spelling;
                      // FString: the decoded text with "{}" for each replacement field
  std::vector<std::pair<size_t, size_t>> fields;  // FString: each field's expression [begin, end)
  int64_t int_value = 0;
  double float_value = 0;
};

// Note [f-strings]
// As torch's frontend does, f"a{x}b{y}" is "a{}b{}".format(x, y): the lexer gives one FString
// token with the literal text (escapes decoded, {{ and }} kept for format() to read, "{}" for each
// field; a plain literal joined to it has its braces doubled) and the source range
// of each field's expression, and the parser parses each range as an expression with a Lexer over
// that range, so errors inside a field point into the f-string. Conversions (!r), format specs
// (:.2f) and self-documenting fields (x=) are NotSupportedError, as in torch 1.13.

// Note [Layout tokens]
// The lexer turns indentation into tokens as Python's tokenizer does. At the start of each
// logical line outside brackets, the indentation width (a tab advances to the next multiple of
// 8) is compared with a stack of open widths: wider pushes and yields INDENT, narrower pops and
// yields one DEDENT per level popped and must land on an open width. Blank and comment-only lines
// yield nothing. NEWLINE ends each logical line that had tokens; inside (), [] and {} line breaks
// are ignored. At the end of input the lexer yields the missing NEWLINE, one DEDENT per open
// level, then EndOfFile (forever). Every error is a CompileError at the offending text.
class Lexer {
 public:
  explicit Lexer(std::shared_ptr<const Source> source);
  // The expression of an f-string's replacement field, source_->text()[begin, end): lexed as if
  // inside brackets (no layout tokens), then EndOfFile. Tokens keep their offsets in the source.
  Lexer(std::shared_ptr<const Source> source, size_t begin, size_t end);
  Token next();

 private:
  Token make(Tok kind, size_t begin, size_t end) const;
  [[noreturn]] void fail(const std::string& what, size_t begin, size_t end) const;
  [[noreturn]] void fail_unsupported(const std::string& what, size_t begin, size_t end) const;
  size_t scan_field(size_t open, char quote, bool triple) const;
  void validate_encoding() const;
  void start_line();
  bool skip_blanks();  // spaces, comments and continuations; false at a newline or the end
  Token end_of_input();
  Token lex_name(size_t begin);
  Token lex_number(size_t begin);
  Token lex_string(size_t begin, size_t quote, bool raw, bool fstring = false);
  Token lex_operator(size_t begin);
  size_t skip_digits(int base, const char* kind);
  uint32_t read_escape_digits(size_t at, int count, int base, const char* what);

  std::shared_ptr<const Source> source_;
  std::string_view text_;  // source_->text(), or its prefix up to an embedded range's end
  size_t pos_ = 0;
  bool at_line_start_ = true;
  bool embedded_ = false;            // an f-string field: no layout, EndOfFile at the end of text_
  std::vector<int> indents_{0};      // open indentation widths, tabs to multiples of 8
  std::vector<int> alt_indents_{0};  // the same with tabs counting 1, to catch tab/space mixes
  std::vector<std::pair<char, size_t>> brackets_;  // open bracket and its offset
  std::vector<Token> pending_;                     // INDENT/DEDENTs to hand out, in reverse
};

// All tokens of `source`, through the first EndOfFile.
std::vector<Token> tokenize(std::shared_ptr<const Source> source);

}  // namespace ampjit::script
