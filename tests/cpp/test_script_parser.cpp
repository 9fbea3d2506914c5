// The script lexer and parser: tokens and layout, the AST of every construct (as its dump),
// precedence, source ranges, every diagnostic with its line:col, nesting limits, and a mutation
// fuzzer that checks the parser only ever succeeds or throws CompileError.
#include <gmock/gmock.h>

#include <functional>
#include <random>

#include "runtime/error.h"
#include "script/lexer.h"
#include "script/parser.h"

namespace ampjit::script {
namespace {

std::shared_ptr<const Source> source_of(std::string text) {
  return std::make_shared<Source>(std::move(text), "t.py");
}

// The dump of a module, one top-level statement per line.
std::string parse(std::string text) {
  return dump(*parse_module(source_of(std::move(text))));
}

// The dump of the single expression statement `text`.
std::string expr(std::string text) {
  const std::string d = parse(std::move(text));
  EXPECT_EQ(d.rfind("(expr ", 0), 0u) << d;
  return d.substr(6, d.size() - 7);
}

// "line:col: message" of the CompileError that parsing `text` raises.
std::string parse_error_of(std::string text) {
  try {
    parse_module(source_of(std::move(text)));
  } catch (const CompileError& e) {
    return fmt::format("{}:{}: {}", e.range().start_line(), e.range().start_col(), e.message());
  }
  return "no error";
}

std::string text_of(const SourceRange& r) {
  return r.source->text().substr(r.start, r.end - r.start);
}

// "Kind:text" for each token, layout tokens by name alone.
std::string token_list(std::string text) {
  std::string out;
  for (const Token& t : tokenize(source_of(std::move(text)))) {
    if (!out.empty()) out += ' ';
    out += token_name(t.kind);
    if (t.kind == Tok::Identifier || t.kind == Tok::Int || t.kind == Tok::Float)
      out += ":" + t.text;
  }
  return out;
}

Token single_token(std::string text) {
  std::vector<Token> tokens = tokenize(source_of(std::move(text)));
  EXPECT_EQ(tokens.size(), 3u);  // the token, NEWLINE, EndOfFile
  return tokens.at(0);
}

// ---- Lexer -------------------------------------------------------------------------------------

TEST(ScriptLexer, EveryOperatorAndKeywordLexesToItsKind) {
  const std::pair<Tok, const char*> spelled[] = {
#define AMPJIT_TOKEN(name, spelling)
#define AMPJIT_OPERATOR(name, spelling) {Tok::name, spelling},
#define AMPJIT_KEYWORD(name, spelling) {Tok::name, spelling},
#include "script/tokens.def"
  };
  std::string all;
  for (const auto& [kind, spelling] : spelled) {
    EXPECT_STREQ(token_spelling(kind), spelling);
    all += std::string(spelling) + " ";
  }
  // All of them on one line (brackets balanced by their order in the table), longest match each.
  std::vector<Token> tokens = tokenize(source_of(all));
  ASSERT_EQ(tokens.size(), std::size(spelled) + 2);
  for (size_t i = 0; i < std::size(spelled); ++i) {
    EXPECT_EQ(tokens[i].kind, spelled[i].first) << spelled[i].second;
    EXPECT_EQ(text_of(tokens[i].range), spelled[i].second);
  }
}

TEST(ScriptLexer, LongestMatchWithoutSpaces) {
  EXPECT_EQ(token_list("a**=b//c->d<<=e!=f:=g...h"),
            "Identifier:a DoubleStarEq Identifier:b DoubleSlash Identifier:c Arrow Identifier:d "
            "LShiftEq Identifier:e NotEq Identifier:f Walrus Identifier:g Ellipsis Identifier:h "
            "Newline EndOfFile");
  EXPECT_EQ(token_list("x<=y>=z==w>>v"),
            "Identifier:x LtE Identifier:y GtE Identifier:z EqEq Identifier:w RShift Identifier:v "
            "Newline EndOfFile");
}

TEST(ScriptLexer, IndentDedentAndNewlines) {
  EXPECT_EQ(token_list("if x:\n  y\n  if z:\n    w\nv\n"),
            "KwIf Identifier:x Colon Newline Indent Identifier:y Newline KwIf Identifier:z Colon "
            "Newline Indent Identifier:w Newline Dedent Dedent Identifier:v Newline EndOfFile");
}

TEST(ScriptLexer, BlankAndCommentLinesAreIgnored) {
  EXPECT_EQ(token_list("\n# head\nif x:\n\n      # deeper comment\n  y  # trailing\n\n   \n"
                       "# less\n  z\n"),
            "KwIf Identifier:x Colon Newline Indent Identifier:y Newline Identifier:z Newline "
            "Dedent EndOfFile");
}

TEST(ScriptLexer, NoLayoutInsideBrackets) {
  EXPECT_EQ(token_list("f(a,\n      b,  # c\n\n  [c,\nd])\n"),
            "Identifier:f LParen Identifier:a Comma Identifier:b Comma LBracket Identifier:c "
            "Comma Identifier:d RBracket RParen Newline EndOfFile");
}

TEST(ScriptLexer, BackslashContinuation) {
  EXPECT_EQ(token_list("x = 1 + \\\n        2\ny\n"),
            "Identifier:x Eq Int:1 Plus Int:2 Newline Identifier:y Newline EndOfFile");
  EXPECT_EQ(token_list("x = 1 + \\\r\n 2\r\n"),
            "Identifier:x Eq Int:1 Plus Int:2 Newline EndOfFile");
}

TEST(ScriptLexer, EndOfInputClosesLineAndBlocks) {
  std::vector<Token> tokens = tokenize(source_of("def f():\n    if x:\n        return"));
  std::string kinds;
  for (const Token& t : tokens) kinds += std::string(token_name(t.kind)) + " ";
  EXPECT_EQ(kinds,
            "KwDef Identifier LParen RParen Colon Newline Indent KwIf Identifier Colon Newline "
            "Indent KwReturn Newline Dedent Dedent EndOfFile ");
  EXPECT_EQ(tokens.back().range.start, 33u);  // at the end of the text
  EXPECT_EQ(token_list(""), "EndOfFile");
  EXPECT_EQ(token_list("\n\n  # only a comment"), "EndOfFile");
}

TEST(ScriptLexer, WindowsLineEndingsAndFormFeeds) {
  EXPECT_EQ(token_list("if x:\r\n  y\r\n\r\n  # c\r\nz\r\n"),
            "KwIf Identifier:x Colon Newline Indent Identifier:y Newline Dedent Identifier:z "
            "Newline EndOfFile");
  // A form feed resets the indentation count, as in Python.
  EXPECT_EQ(token_list("if x:\n  \f  y\n"),
            "KwIf Identifier:x Colon Newline Indent Identifier:y Newline Dedent EndOfFile");
}

TEST(ScriptLexer, TabsAdvanceToMultiplesOfEight) {
  EXPECT_EQ(token_list("if x:\n\ty\n\tif z:\n\t\tw\n"),
            "KwIf Identifier:x Colon Newline Indent Identifier:y Newline KwIf Identifier:z Colon "
            "Newline Indent Identifier:w Newline Dedent Dedent EndOfFile");
  // Two spaces then a tab is column 8, the same as one tab, and as consistent in both counts.
  EXPECT_EQ(token_list("if x:\n  \ty\n  \tz\n"),
            "KwIf Identifier:x Colon Newline Indent Identifier:y Newline Identifier:z Newline "
            "Dedent EndOfFile");
  EXPECT_EQ(parse_error_of("if x:\n\ty\n        z\n"),
            "3:1: inconsistent use of tabs and spaces in indentation");
}

TEST(ScriptLexer, Integers) {
  EXPECT_EQ(single_token("0").int_value, 0);
  EXPECT_EQ(single_token("000").int_value, 0);
  EXPECT_EQ(single_token("1_000_000").int_value, 1000000);
  EXPECT_EQ(single_token("0x_FF").int_value, 255);
  EXPECT_EQ(single_token("0XdeadBEEF").int_value, 0xdeadbeef);
  EXPECT_EQ(single_token("0o17").int_value, 15);
  EXPECT_EQ(single_token("0b1010_1010").int_value, 170);
  EXPECT_EQ(single_token("9223372036854775807").int_value, INT64_MAX);
  EXPECT_EQ(single_token("0x7fffffffffffffff").int_value, INT64_MAX);
  EXPECT_EQ(single_token("1_000").text, "1_000");
}

TEST(ScriptLexer, Floats) {
  EXPECT_EQ(single_token("1.5").float_value, 1.5);
  EXPECT_EQ(single_token("1.").float_value, 1.0);
  EXPECT_EQ(single_token(".5").float_value, 0.5);
  EXPECT_EQ(single_token("1e-3").float_value, 1e-3);
  EXPECT_EQ(single_token("1E+3").float_value, 1000.0);
  EXPECT_EQ(single_token("1_000.5").float_value, 1000.5);
  EXPECT_EQ(single_token("1.5e1_0").float_value, 1.5e10);
  EXPECT_EQ(single_token("0.1").float_value, 0.1);
  EXPECT_EQ(single_token("1e999").float_value, std::numeric_limits<double>::infinity());
  EXPECT_EQ(single_token("1e-999").float_value, 0.0);
  EXPECT_EQ(single_token("1.e5").kind, Tok::Float);
  EXPECT_EQ(single_token("00.5").float_value, 0.5);
  EXPECT_EQ(single_token("07.5").float_value, 7.5);  // leading zeros are fine in floats
}

TEST(ScriptLexer, Strings) {
  EXPECT_EQ(single_token(R"('a"b')").text, "a\"b");
  EXPECT_EQ(single_token(R"("a'b")").text, "a'b");
  EXPECT_EQ(single_token(R"('\n\t\\\'\"\r\a\b\f\v')").text, "\n\t\\'\"\r\a\b\f\v");
  EXPECT_EQ(single_token(R"('\x41\x7e\xe9')").text, "A~\xc3\xa9");
  EXPECT_EQ(single_token(R"('\u00e9\u20AC\U0001F600')").text,
            "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  EXPECT_EQ(single_token(R"('\101\0\7')").text, std::string("A\0\a", 3));
  EXPECT_EQ(single_token(R"('\d\q')").text, "\\d\\q");  // unknown escapes stay as written
  EXPECT_EQ(single_token("'a\\\nb'").text, "ab");       // an escaped line break continues
  EXPECT_EQ(single_token(R"(r'\n\'\\')").text, R"(\n\'\\)");
  EXPECT_EQ(single_token(R"(R"\d+")").text, R"(\d+)");
  EXPECT_EQ(single_token(R"(u'x')").text, "x");
  EXPECT_EQ(single_token("'''a\n'b'\"\"c\r\nd'''").text, "a\n'b'\"\"c\nd");
  EXPECT_EQ(single_token("\"\"\"q\"\"\"").text, "q");
  EXPECT_EQ(single_token("'h\xc3\xa9'").text, "h\xc3\xa9");  // UTF-8 passes through
  const std::vector<Token> tokens = tokenize(source_of("x,  r'x'"));
  EXPECT_EQ(text_of(tokens.at(2).range), "r'x'");
}

TEST(ScriptLexer, EveryTokenHasItsRange) {
  const auto src = source_of("def f(x):\n    return x[1:] + 'a' 'b'\n");
  for (const Token& t : tokenize(src)) {
    EXPECT_LE(t.range.start, t.range.end);
    EXPECT_LE(t.range.end, src->text().size());
    if (t.kind == Tok::Identifier) {
      EXPECT_EQ(text_of(t.range), t.text);
    }
  }
}

// ---- Parser: statements ------------------------------------------------------------------------

TEST(ScriptParser, Assignments) {
  EXPECT_EQ(parse("x = 1"), "(= x 1)");
  EXPECT_EQ(parse("a = b = c"), "(= a b c)");
  EXPECT_EQ(parse("a, b = b, a"), "(= (tuple a b) (tuple b a))");
  EXPECT_EQ(parse("a, = t"), "(= (tuple a) t)");
  EXPECT_EQ(parse("(a, b), [c, *d] = x"), "(= (tuple (tuple a b) (list c (* d))) x)");
  EXPECT_EQ(parse("a, *b = x"), "(= (tuple a (* b)) x)");
  EXPECT_EQ(parse("self.w[0].b = y"), "(= (. (sub (. self w) 0) b) y)");
  EXPECT_EQ(parse("x = 1, 2,"), "(= x (tuple 1 2))");
  EXPECT_EQ(parse("x = *a, b"), "(= x (tuple (* a) b))");
}

TEST(ScriptParser, AugmentedAssignments) {
  EXPECT_EQ(parse("x += 1\nx -= 1\nx *= 1\nx /= 1\nx //= 1\nx %= 1\nx **= 1\nx @= 1\n"
                  "x &= 1\nx |= 1\nx ^= 1\nx <<= 1\nx >>= 1"),
            "(+= x 1)\n(-= x 1)\n(*= x 1)\n(/= x 1)\n(//= x 1)\n(%= x 1)\n(**= x 1)\n(@= x 1)\n"
            "(&= x 1)\n(|= x 1)\n(^= x 1)\n(<<= x 1)\n(>>= x 1)");
  EXPECT_EQ(parse("self.n[i] += a, b"), "(+= (sub (. self n) i) (tuple a b))");
}

TEST(ScriptParser, AnnotatedAssignments) {
  EXPECT_EQ(parse("x: int = 3"), "(: x int 3)");
  EXPECT_EQ(parse("x: Final[int] = 3"), "(: x (sub Final int) 3)");
  EXPECT_EQ(parse("self.x: List[Tensor]"), "(: (. self x) (sub List Tensor))");
  EXPECT_EQ(parse("x: Tuple[int, float] = 1, 2.0"), "(: x (sub Tuple int float) (tuple 1 2.0))");
  EXPECT_EQ(parse("x: Optional[torch.Tensor] = None"),
            "(: x (sub Optional (. torch Tensor)) None)");
}

TEST(ScriptParser, IfElifElse) {
  EXPECT_EQ(parse("if a:\n  x\nelif b:\n  y\nelif c:\n  z\nelse:\n  w\n"),
            "(if a (body (expr x)) (else (if b (body (expr y)) (else (if c (body (expr z)) "
            "(else (expr w)))))))");
  EXPECT_EQ(parse("if a: x; y\nelse: pass"), "(if a (body (expr x) (expr y)) (else (pass)))");
  EXPECT_EQ(parse("if a:\n  pass\nz"), "(if a (body (pass)))\n(expr z)");
}

TEST(ScriptParser, Loops) {
  EXPECT_EQ(parse("for i in range(10):\n  if i: break\n  continue"),
            "(for i (call range 10) (body (if i (body (break))) (continue)))");
  EXPECT_EQ(parse("for k, v in d.items(): pass"),
            "(for (tuple k v) (call (. d items)) (body (pass)))");
  EXPECT_EQ(parse("for x in a, b: pass"), "(for x (tuple a b) (body (pass)))");
  EXPECT_EQ(parse("for (a, b) in z: pass"), "(for (tuple a b) z (body (pass)))");
  EXPECT_EQ(parse("while x < 3:\n  x += 1"), "(while (cmp x < 3) (body (+= x 1)))");
}

TEST(ScriptParser, SimpleStatements) {
  EXPECT_EQ(parse("return"), "(return)");
  EXPECT_EQ(parse("return x"), "(return x)");
  EXPECT_EQ(parse("return a, b"), "(return (tuple a b))");
  EXPECT_EQ(parse("return (a, b)"), "(return (tuple a b))");
  EXPECT_EQ(parse("pass; break; continue;"), "(pass)\n(break)\n(continue)");
  EXPECT_EQ(parse("assert x"), "(assert x)");
  EXPECT_EQ(parse("assert x > 0, 'positive'"), "(assert (cmp x > 0) \"positive\")");
  EXPECT_EQ(parse("raise"), "(raise)");
  EXPECT_EQ(parse("raise ValueError('bad ' + s)"), "(raise (call ValueError (+ \"bad \" s)))");
  EXPECT_EQ(parse("global a, b\nnonlocal c"), "(global a b)\n(nonlocal c)");
  EXPECT_EQ(parse("del a, b[0], c.d"), "(del a (sub b 0) (. c d))");
  EXPECT_EQ(parse("del (a, b),"), "(del (tuple a b))");
}

TEST(ScriptParser, With) {
  EXPECT_EQ(parse("with torch.autocast('cuda'):\n  y = f(x)"),
            "(with (item (call (. torch autocast) \"cuda\")) (body (= y (call f x))))");
  EXPECT_EQ(parse("with a as b, c, d as (e, f): pass"),
            "(with (item a b) (item c) (item d (tuple e f)) (body (pass)))");
  EXPECT_EQ(parse("with (a as b, c,): pass"), "(with (item a b) (item c) (body (pass)))");
  EXPECT_EQ(parse("with (a, b): pass"), "(with (item a) (item b) (body (pass)))");
  EXPECT_EQ(parse("with (a) as b: pass"), "(with (item a b) (body (pass)))");
  EXPECT_EQ(parse("with (a).b() as c, d: pass"),
            "(with (item (call (. a b)) c) (item d) (body (pass)))");
  EXPECT_EQ(parse_error_of("with (yield): pass"), "1:7: yield is not supported in script");
}

TEST(ScriptParser, FunctionDefinitions) {
  EXPECT_EQ(parse("def f(): pass"), "(def f (params) (body (pass)))");
  EXPECT_EQ(parse("def f(x: Tensor, n: int = 2, *args, k: float = 1.0, m, **kw) -> Tensor:\n"
                  "  return x"),
            "(def f (params (x : Tensor) (n : int = 2) *args (kwonly (k : float = 1.0) m) **kw) "
            "(-> Tensor) (body (return x)))");
  EXPECT_EQ(parse("def f(a, *, b=1,): pass"), "(def f (params a (kwonly (b = 1))) (body (pass)))");
  EXPECT_EQ(parse("def f(*args: int, **kwargs: str): pass"),
            "(def f (params (*args : int) (**kwargs : str)) (body (pass)))");
  EXPECT_EQ(parse("@torch.jit.script\n@staticmethod\ndef f(self):\n  '''Doc.'''\n  return 1\n"),
            "(def f (params self) (decorators (. (. torch jit) script) staticmethod) "
            "(body (expr \"Doc.\") (return 1)))");
  EXPECT_EQ(
      parse("@decorator(with_args=1)\ndef f(): ..."),
      "(def f (params) (decorators (call decorator (kw with_args 1))) (body (expr Ellipsis)))");
}

TEST(ScriptParser, ClassDefinitions) {
  EXPECT_EQ(parse("class A: pass"), "(class A (body (pass)))");
  EXPECT_EQ(parse("class A(): pass"), "(class A (body (pass)))");
  EXPECT_EQ(parse("@torch.jit.script\nclass Net(nn.Module, Base,):\n"
                  "  w: Tensor\n  def forward(self, x):\n    return x\n"),
            "(class Net (bases (. nn Module) Base) (decorators (. (. torch jit) script)) "
            "(body (: w Tensor) (def forward (params self x) (body (return x)))))");
}

TEST(ScriptParser, Imports) {
  EXPECT_EQ(parse("import torch"), "(import torch)");
  EXPECT_EQ(parse("import torch.nn.functional as F, math"),
            "(import (as torch.nn.functional F) math)");
  EXPECT_EQ(parse("from ampjit.amp import autocast as ac, GradScaler"),
            "(from ampjit.amp (as autocast ac) GradScaler)");
  EXPECT_EQ(parse("from . import x"), "(from . x)");
  EXPECT_EQ(parse("from ..pkg.mod import (a,\n  b as c,)"), "(from ..pkg.mod a (as b c))");
  EXPECT_EQ(parse("from ....x import y"), "(from ....x y)");
  EXPECT_EQ(parse("from typing import *"), "(from typing *)");
}

TEST(ScriptParser, MultiLineFunction) {
  const std::string src =
      "import torch\n"
      "\n"
      "def forward(self, x: torch.Tensor, mask: Optional[Tensor] = None) -> Tensor:\n"
      "    # scale, then mask\n"
      "    y = x * self.scale\n"
      "    if mask is not None:\n"
      "        y = y.masked_fill(mask == 0, -1e9)\n"
      "    for i in range(len(self.layers)):\n"
      "        y = self.layers[i](y)\n"
      "    return y.softmax(dim=-1)\n";
  EXPECT_EQ(
      parse(src),
      "(import torch)\n"
      "(def forward (params self (x : (. torch Tensor)) (mask : (sub Optional Tensor) = None)) "
      "(-> Tensor) (body (= y (* x (. self scale))) (if (cmp mask is not None) (body (= y "
      "(call (. y masked_fill) (cmp mask == 0) (- 1000000000.0))))) (for i (call range (call "
      "len (. self layers))) (body (= y (call (sub (. self layers) i) y)))) (return (call (. "
      "y softmax) (kw dim (- 1))))))");
}

// ---- Parser: expressions -----------------------------------------------------------------------

TEST(ScriptParser, Literals) {
  EXPECT_EQ(expr("x"), "x");
  EXPECT_EQ(expr("42"), "42");
  EXPECT_EQ(expr("2.0"), "2.0");
  EXPECT_EQ(expr("1e100"), "1e+100");
  EXPECT_EQ(expr("1e999"), "inf");
  EXPECT_EQ(expr("True"), "True");
  EXPECT_EQ(expr("False"), "False");
  EXPECT_EQ(expr("None"), "None");
  EXPECT_EQ(expr("..."), "Ellipsis");
  EXPECT_EQ(expr("'a' \"b\" '''c'''"), "\"abc\"");
  EXPECT_EQ(expr("('a'\n 'b')"), "\"ab\"");
  EXPECT_EQ(expr("'tab\\there'"), "\"tab\\there\"");
}

TEST(ScriptParser, Displays) {
  EXPECT_EQ(expr("()"), "(tuple)");
  EXPECT_EQ(expr("(a,)"), "(tuple a)");
  EXPECT_EQ(expr("(a)"), "a");
  EXPECT_EQ(expr("(a, b,)"), "(tuple a b)");
  EXPECT_EQ(expr("a, b"), "(tuple a b)");
  EXPECT_EQ(expr("[]"), "(list)");
  EXPECT_EQ(expr("[a, [b], *c,]"), "(list a (list b) (* c))");
  EXPECT_EQ(expr("{}"), "(dict)");
  EXPECT_EQ(expr("{'a': 1, b: [2],}"), "(dict (\"a\" 1) (b (list 2)))");
}

TEST(ScriptParser, ListComprehensions) {
  EXPECT_EQ(expr("[x * 2 for x in xs]"), "(listcomp (* x 2) (for x xs))");
  EXPECT_EQ(expr("{k: v * 2 for k, v in d.items() if v}"),
            "(dictcomp (k (* v 2)) (for (tuple k v) (call (. d items))) (if v))");
  EXPECT_EQ(expr("[a for a, b in z if a if b > 0]"),
            "(listcomp a (for (tuple a b) z) (if a) (if (cmp b > 0)))");
  EXPECT_EQ(expr("[a if c else b for a in x or y]"), "(listcomp (ifexp c a b) (for a (or x y)))");
}

TEST(ScriptParser, CallsAttributesSubscripts) {
  EXPECT_EQ(expr("f()"), "(call f)");
  EXPECT_EQ(expr("f(a, *b, c=1, d=e,)"), "(call f a (* b) (kw c 1) (kw d e))");
  EXPECT_EQ(expr("f(x=1, *a)"), "(call f (* a) (kw x 1))");
  EXPECT_EQ(expr("a.b.c(d)(e)"), "(call (call (. (. a b) c) d) e)");
  EXPECT_EQ(expr("x[0]"), "(sub x 0)");
  EXPECT_EQ(expr("x[0,]"), "(sub x 0)");
  EXPECT_EQ(expr("x[1:2, ::2, None, ...]"), "(sub x (slice 1 2 _) (slice _ _ 2) None Ellipsis)");
  EXPECT_EQ(expr("x[:]"), "(sub x (slice _ _ _))");
  EXPECT_EQ(expr("x[a:]"), "(sub x (slice a _ _))");
  EXPECT_EQ(expr("x[:b]"), "(sub x (slice _ b _))");
  EXPECT_EQ(expr("x[::]"), "(sub x (slice _ _ _))");
  EXPECT_EQ(expr("x[a:b:c]"), "(sub x (slice a b c))");
  EXPECT_EQ(expr("x[-1:, i + 1]"), "(sub x (slice (- 1) _ _) (+ i 1))");
  EXPECT_EQ(expr("x[(1, 2)]"), "(sub x (tuple 1 2))");
  EXPECT_EQ(expr("x[0][1]"), "(sub (sub x 0) 1)");
}

TEST(ScriptParser, ArithmeticPrecedence) {
  EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr("a / b // c % d @ e"), "(@ (% (// (/ a b) c) d) e)");
  EXPECT_EQ(expr("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(expr("a | b ^ c & d << e + f * g"), "(| a (^ b (& c (<< d (+ e (* f g))))))");
  EXPECT_EQ(expr("a * b + c << d & e ^ f | g"), "(| (^ (& (<< (+ (* a b) c) d) e) f) g)");
  EXPECT_EQ(expr("a >> b << c"), "(<< (>> a b) c)");
  EXPECT_EQ(expr("a | b | c"), "(| (| a b) c)");
}

TEST(ScriptParser, UnaryAndPower) {
  EXPECT_EQ(expr("-2**2"), "(- (** 2 2))");
  EXPECT_EQ(expr("2**-1"), "(** 2 (- 1))");
  EXPECT_EQ(expr("a**b**c"), "(** a (** b c))");
  EXPECT_EQ(expr("-a * b"), "(* (- a) b)");
  EXPECT_EQ(expr("- - +~a"), "(- (- (+ (~ a))))");
  EXPECT_EQ(expr("-x.y[0]**2"), "(- (** (sub (. x y) 0) 2))");
  EXPECT_EQ(expr("~a + b"), "(+ (~ a) b)");
  EXPECT_EQ(expr("a ** -b ** c"), "(** a (- (** b c)))");
}

TEST(ScriptParser, BooleanAndComparisonPrecedence) {
  EXPECT_EQ(expr("a or b and c"), "(or a (and b c))");
  EXPECT_EQ(expr("a and b or c and d"), "(or (and a b) (and c d))");
  EXPECT_EQ(expr("a or b or c"), "(or a b c)");
  EXPECT_EQ(expr("a and b and c"), "(and a b c)");
  EXPECT_EQ(expr("not a and b"), "(and (not a) b)");
  EXPECT_EQ(expr("not not a"), "(not (not a))");
  EXPECT_EQ(expr("not a == b"), "(not (cmp a == b))");
  EXPECT_EQ(expr("a < b <= c"), "(cmp a < b <= c)");
  EXPECT_EQ(expr("a == b != c > d >= e"), "(cmp a == b != c > d >= e)");
  EXPECT_EQ(expr("a is None"), "(cmp a is None)");
  EXPECT_EQ(expr("a is not None"), "(cmp a is not None)");
  EXPECT_EQ(expr("a in b"), "(cmp a in b)");
  EXPECT_EQ(expr("a not in b"), "(cmp a not in b)");
  EXPECT_EQ(expr("a is (not b)"), "(cmp a is (not b))");
  EXPECT_EQ(expr("a < b | c"), "(cmp a < (| b c))");
  EXPECT_EQ(expr("a + 1 < b * 2 and not c"), "(and (cmp (+ a 1) < (* b 2)) (not c))");
}

TEST(ScriptParser, ConditionalExpressions) {
  EXPECT_EQ(expr("a if c else b"), "(ifexp c a b)");
  EXPECT_EQ(expr("a if c else b if d else e"), "(ifexp c a (ifexp d b e))");
  EXPECT_EQ(expr("(a if c else b) if d else e"), "(ifexp d (ifexp c a b) e)");
  EXPECT_EQ(expr("a or b if c or d else e and f"), "(ifexp (or c d) (or a b) (and e f))");
  EXPECT_EQ(expr("x, y if c else z"), "(tuple x (ifexp c y z))");
}

// ---- Source ranges -----------------------------------------------------------------------------

TEST(ScriptParser, ExpressionRangesSpanTheirText) {
  const auto src = source_of("y = (a + b) * f(c, k=d)[1:2].e\n");
  auto m = parse_module(src);
  const auto& assign = m->body.at(0)->as<Assign>();
  EXPECT_EQ(text_of(assign.range), "y = (a + b) * f(c, k=d)[1:2].e");
  const auto& mul = assign.value->as<BinOp>();
  EXPECT_EQ(text_of(mul.range), "(a + b) * f(c, k=d)[1:2].e");
  EXPECT_EQ(text_of(mul.lhs->range), "a + b");
  const auto& attr = mul.rhs->as<Attribute>();
  EXPECT_EQ(text_of(attr.range), "f(c, k=d)[1:2].e");
  EXPECT_EQ(text_of(attr.attr_range), "e");
  const auto& sub = attr.value->as<Subscript>();
  EXPECT_EQ(text_of(sub.range), "f(c, k=d)[1:2]");
  EXPECT_EQ(text_of(sub.indices.at(0)->range), "1:2");
  const auto& call = sub.value->as<Call>();
  EXPECT_EQ(text_of(call.range), "f(c, k=d)");
  EXPECT_EQ(text_of(call.keywords.at(0).range), "k=d");
  EXPECT_EQ(text_of(call.keywords.at(0).value->range), "d");
}

TEST(ScriptParser, MoreExpressionRanges) {
  const auto first_value = [](const std::string& text) {
    static std::unique_ptr<Module> keep;
    keep = parse_module(source_of(text));
    return text_of(keep->body.at(0)->as<ExprStmt>().value->range);
  };
  EXPECT_EQ(first_value("(a, b)  # c"), "(a, b)");
  EXPECT_EQ(first_value("a, b,  "), "a, b,");
  EXPECT_EQ(first_value("()"), "()");
  EXPECT_EQ(first_value("'a'  'b'"), "'a'  'b'");
  EXPECT_EQ(first_value("-x ** 2"), "-x ** 2");
  EXPECT_EQ(first_value("not x"), "not x");
  EXPECT_EQ(first_value("a < b is not c"), "a < b is not c");
  EXPECT_EQ(first_value("a or b"), "a or b");
  EXPECT_EQ(first_value("a if b else c"), "a if b else c");
  EXPECT_EQ(first_value("[x for x in y if x]"), "[x for x in y if x]");
  EXPECT_EQ(first_value("{1: 2}"), "{1: 2}");
  EXPECT_EQ(first_value("x[::2]"), "x[::2]");
  EXPECT_EQ(first_value("f(*a)"), "f(*a)");
  EXPECT_EQ(first_value("..."), "...");
  EXPECT_EQ(first_value("(\n  a +\n  b\n)"), "a +\n  b");
}

TEST(ScriptParser, StatementRangesSpanFirstToLastToken) {
  const auto src = source_of(
      "@dec\n"
      "def f(x: int = 1, *a):\n"
      "    if x:\n"
      "        return x  # done\n"
      "    elif y:\n"
      "        pass\n"
      "    else:\n"
      "        x += 1\n"
      "\n"
      "# trailing comment\n");
  auto m = parse_module(src);
  const auto& f = m->body.at(0)->as<FunctionDef>();
  EXPECT_EQ(text_of(f.range).substr(0, 6), "def f(");  // after the decorators, as in Python's AST
  EXPECT_EQ(text_of(f.range).substr(text_of(f.range).size() - 6), "x += 1");
  EXPECT_EQ(text_of(f.name_range), "f");
  EXPECT_EQ(text_of(f.params.at(0).range), "x: int = 1");
  EXPECT_EQ(text_of(f.params.at(1).range), "*a");
  EXPECT_EQ(text_of(f.decorators.at(0)->range), "dec");
  const auto& iff = f.body.at(0)->as<If>();
  EXPECT_EQ(iff.range.start_line(), 3);
  EXPECT_EQ(src->line_col(iff.range.end), (std::pair<int, int>{8, 15}));
  EXPECT_EQ(text_of(iff.body.at(0)->range), "return x");
  const auto& elif = iff.orelse.at(0)->as<If>();
  EXPECT_EQ(text_of(elif.range).substr(0, 7), "elif y:");
  EXPECT_EQ(elif.range.end, iff.range.end);
  EXPECT_EQ(text_of(elif.orelse.at(0)->range), "x += 1");

  auto m2 = parse_module(source_of("with a as b, c: pass\nimport x.y as z\nglobal q"));
  const auto& w = m2->body.at(0)->as<With>();
  EXPECT_EQ(text_of(w.range), "with a as b, c: pass");
  EXPECT_EQ(text_of(w.items.at(0).range), "a as b");
  EXPECT_EQ(text_of(m2->body.at(1)->as<Import>().names.at(0).range), "x.y as z");
  EXPECT_EQ(text_of(m2->body.at(2)->range), "global q");
}

// ---- Diagnostics -------------------------------------------------------------------------------

TEST(ScriptParserErrors, SyntaxErrors) {
  EXPECT_EQ(parse_error_of("x = = 1"), "1:5: invalid syntax");
  EXPECT_EQ(parse_error_of("x = 1 +\n"), "1:8: invalid syntax");
  EXPECT_EQ(parse_error_of("x = 1 2"), "1:7: invalid syntax");
  EXPECT_EQ(parse_error_of("f(a b)"), "1:3: invalid syntax. Perhaps you forgot a comma?");
  EXPECT_EQ(parse_error_of("[1, 2 3]"), "1:5: invalid syntax. Perhaps you forgot a comma?");
  EXPECT_EQ(parse_error_of("else:\n  pass"), "1:1: invalid syntax");
  EXPECT_EQ(parse_error_of("x = $"), "1:5: invalid syntax");
  EXPECT_EQ(parse_error_of("a.1"), "1:2: invalid syntax");
  EXPECT_EQ(parse_error_of("x[]"), "1:3: invalid syntax");
  EXPECT_EQ(parse_error_of("def (): pass"), "1:5: invalid syntax");
  EXPECT_EQ(parse_error_of("def f: pass"), "1:6: expected '('");
  EXPECT_EQ(parse_error_of("@dec\nx = 1"), "2:1: invalid syntax");
  EXPECT_EQ(parse_error_of("a if b"), "1:7: expected 'else' after 'if' expression");
  EXPECT_EQ(parse_error_of("for x y: pass"), "1:7: expected 'in'");
  EXPECT_EQ(parse_error_of("import a.\n"), "1:10: invalid syntax");
  EXPECT_EQ(parse_error_of("from a import b,"),
            "1:16: trailing comma not allowed without surrounding parentheses");
}

TEST(ScriptParserErrors, ColonsAndBlocks) {
  EXPECT_EQ(parse_error_of("if x\n  pass"), "1:5: expected ':'");
  EXPECT_EQ(parse_error_of("def f() -> int\n  pass"), "1:15: expected ':'");
  EXPECT_EQ(parse_error_of("class A\n  pass"), "1:8: expected ':'");
  EXPECT_EQ(parse_error_of("x: = 3"), "1:4: invalid syntax");
  EXPECT_EQ(parse_error_of("if x:\npass"),
            "2:1: expected an indented block after 'if' statement on line 1");
  EXPECT_EQ(parse_error_of("if x:\n  pass\nelif y:\nz"),
            "4:1: expected an indented block after 'elif' statement on line 3");
  EXPECT_EQ(parse_error_of("if x:\n  pass\nelse:\n"),
            "4:1: expected an indented block after 'else' statement on line 3");
  EXPECT_EQ(parse_error_of("for x in y:"),
            "1:12: expected an indented block after 'for' statement on line 1");
  EXPECT_EQ(parse_error_of("\nwhile x:\n# c\n"),
            "4:1: expected an indented block after 'while' statement on line 2");
  EXPECT_EQ(parse_error_of("with x:\n"),
            "2:1: expected an indented block after 'with' statement on line 1");
  EXPECT_EQ(parse_error_of("def f():\n\nreturn"),
            "3:1: expected an indented block after function definition on line 1");
  EXPECT_EQ(parse_error_of("class A:\nx"),
            "2:1: expected an indented block after class definition on line 1");
  EXPECT_EQ(parse_error_of("x = 1\n    y = 2"), "2:5: unexpected indent");
  EXPECT_EQ(parse_error_of("  x = 1"), "1:3: unexpected indent");
  EXPECT_EQ(parse_error_of("if x:\n    a\n  b"),
            "3:3: unindent does not match any outer indentation level");
}

TEST(ScriptParserErrors, Brackets) {
  EXPECT_EQ(parse_error_of("x = (1, 2"), "1:5: '(' was never closed");
  EXPECT_EQ(parse_error_of("f(a,\n  [b,\n"), "2:3: '[' was never closed");
  EXPECT_EQ(parse_error_of("x = 1)"), "1:6: unmatched ')'");
  EXPECT_EQ(parse_error_of("x = ]"), "1:5: unmatched ']'");
  EXPECT_EQ(parse_error_of("x = }"), "1:5: unmatched '}'");
  EXPECT_EQ(parse_error_of("f(a]"),
            "1:4: closing parenthesis ']' does not match opening parenthesis '('");
  EXPECT_EQ(parse_error_of("f(a,\n b}"),
            "2:3: closing parenthesis '}' does not match opening parenthesis '(' on line 1");
}

TEST(ScriptParserErrors, TheCaretLineShowsBytesATerminalCannot) {
  // A NUL or a byte that is not UTF-8 prints as '?', one column per character, so the whole line
  // and the caret under the offending place survive (a NUL once cut the message there).
  auto highlight_of = [](std::string text) {
    try {
      parse_module(source_of(std::move(text)));
    } catch (const CompileError& e) {
      return e.range().highlight();
    }
    return std::string("no error");
  };
  EXPECT_EQ(highlight_of(std::string("x = 1 +\0 2", 10)), "t.py:1:8\nx = 1 +? 2\n       ~");
  // Columns count bytes; the caret counts characters (the two bytes of U+00E9 are one).
  EXPECT_EQ(highlight_of("y = 'h\xc3\xa9' + \xff"), "t.py:1:13\ny = 'h\xc3\xa9' + ?\n           ~");
}

TEST(ScriptParserErrors, Literals) {
  EXPECT_EQ(parse_error_of("x = 'abc"), "1:5: unterminated string literal");
  EXPECT_EQ(parse_error_of("x = 'abc\ny = 1'"), "1:5: unterminated string literal");
  EXPECT_EQ(parse_error_of("x = 1\ny = \"\"\"abc\n\n"),
            "2:5: unterminated triple-quoted string literal");
  EXPECT_EQ(parse_error_of("x = 'a\\"), "1:5: unterminated string literal");
  EXPECT_EQ(parse_error_of("x = b'a'"), "1:5: bytes literals are not supported in script");
  EXPECT_EQ(parse_error_of("x = '\\x4'"), "1:6: truncated \\xXX escape");
  EXPECT_EQ(parse_error_of("x = '\\u12'"), "1:6: truncated \\uXXXX escape");
  EXPECT_EQ(parse_error_of("x = '\\U0011FFFF'"), "1:6: illegal Unicode character");
  EXPECT_EQ(parse_error_of("x = '\\ud800'"),
            "1:6: surrogate code point U+D800 is not supported in script strings");
  EXPECT_EQ(parse_error_of("x = '\\N{DASH}'"), "1:6: \\N{...} escapes are not supported in script");
  EXPECT_EQ(parse_error_of("x = 0777"),
            "1:5: leading zeros in decimal integer literals are not permitted; use an 0o prefix "
            "for octal integers");
  EXPECT_EQ(parse_error_of("x = 1__0"), "1:5: invalid decimal literal");
  EXPECT_EQ(parse_error_of("x = 1_"), "1:5: invalid decimal literal");
  EXPECT_EQ(parse_error_of("x = 12abc"), "1:5: invalid decimal literal");
  EXPECT_EQ(parse_error_of("x = 1e"), "1:5: invalid decimal literal");
  EXPECT_EQ(parse_error_of("x = 1.5e+"), "1:5: invalid decimal literal");
  EXPECT_EQ(parse_error_of("x = 0x"), "1:5: invalid hexadecimal literal");
  EXPECT_EQ(parse_error_of("x = 0xfg"), "1:5: invalid hexadecimal literal");
  EXPECT_EQ(parse_error_of("x = 0x_"), "1:5: invalid hexadecimal literal");
  EXPECT_EQ(parse_error_of("x = 0b102"), "1:9: invalid digit '2' in binary literal");
  EXPECT_EQ(parse_error_of("x = 0o8"), "1:7: invalid digit '8' in octal literal");
  EXPECT_EQ(parse_error_of("x = 3j"), "1:5: complex literals are not supported in script");
  EXPECT_EQ(parse_error_of("x = 9223372036854775808"),
            "1:5: integer literal is too large for a 64-bit int");
  EXPECT_EQ(parse_error_of("x = 0x1_0000_0000_0000_0000"),
            "1:5: integer literal is too large for a 64-bit int");
}

// Note [f-strings]: an f-string is the format call torch's frontend makes of it, fields parsed as
// expressions at their place in the source.
// A generator expression is a list comprehension, as torch's frontend makes it.
TEST(ScriptParser, GeneratorExpressionsAreListComprehensions) {
  EXPECT_EQ(expr("(a for a in b if a)"), expr("[a for a in b if a]"));
  EXPECT_EQ(expr("sum(a * 2 for a in b)"), expr("sum([a * 2 for a in b])"));
}

TEST(ScriptParser, FStrings) {
  EXPECT_EQ(expr("f'a{x}b{y + 1}c'"), expr("'a{}b{}c'.format(x, y + 1)"));
  EXPECT_EQ(expr("f'{x}'"), expr("'{}'.format(x)"));
  EXPECT_EQ(expr("f'{{x}} {x}'"), expr("'{{x}} {}'.format(x)"));
  EXPECT_EQ(expr("'{a}' f'{x}'"), expr("'{{a}}{}'.format(x)"));
  EXPECT_EQ(expr("f'no fields'"), expr("'no fields'.format()"));
  EXPECT_EQ(expr("'a' f'{x}' 'b'"), expr("'a{}b'.format(x)"));  // adjacent literals join
  EXPECT_EQ(expr("F'{f(a, b)[0]}'"), expr("'{}'.format(f(a, b)[0])"));
  EXPECT_EQ(expr("f\"{d['k']}\""), expr("'{}'.format(d['k'])"));  // the other quote inside
  EXPECT_EQ(expr("f'{a, b}'"), expr("'{}'.format((a, b))"));
  EXPECT_EQ(expr("f'{x != y}'"), expr("'{}'.format(x != y)"));
  EXPECT_EQ(expr("rf'\\n{x}'"), expr("'\\\\n{}'.format(x)"));  // raw keeps the backslash
  EXPECT_EQ(expr("f'\\n{x}'"), expr("'\\n{}'.format(x)"));
  EXPECT_EQ(expr("f'''{\nx\n}'''"), expr("'{}'.format(x)"));  // fields may span lines in '''
  EXPECT_EQ(expr("f'{f\"{x}\"}'"), expr("'{}'.format('{}'.format(x))"));  // nested

  // A field's expression keeps its place in the source.
  const auto m = parse_module(source_of("s = f'ab{xy}'\n"));
  const auto& call = m->body[0]->as<Assign>().value->as<Call>();
  EXPECT_EQ(text_of(call.args[0]->range), "xy");
  EXPECT_EQ(text_of(call.range), "f'ab{xy}'");
}

TEST(ScriptParserErrors, FStrings) {
  EXPECT_EQ(parse_error_of("x = f'{a!r}'"),
            "1:9: f-string conversions ('!r', '!s', '!a') are not supported in script");
  EXPECT_EQ(parse_error_of("x = f'{a:.2f}'"),
            "1:9: f-string format specifications (':...') are not supported in script");
  EXPECT_EQ(parse_error_of("x = f'{a=}'"),
            "1:9: self-documenting f-string fields ('x=') are not supported in script");
  EXPECT_EQ(parse_error_of("x = f'{}'"), "1:7: f-string: empty expression not allowed");
  EXPECT_EQ(parse_error_of("x = f'{ }'"), "1:7: f-string: empty expression not allowed");
  EXPECT_EQ(parse_error_of("x = f'a}'"), "1:8: f-string: single '}' is not allowed");
  EXPECT_EQ(parse_error_of("x = f'{a'"), "1:7: f-string: expecting '}'");
  EXPECT_EQ(parse_error_of("x = f'{a\n}'"), "1:7: f-string: expecting '}'");
  EXPECT_EQ(parse_error_of("x = f'{a\\n}'"),
            "1:9: f-string expression part cannot include a backslash");
  EXPECT_EQ(parse_error_of("x = f'{a#}'"), "1:9: f-string expression part cannot include '#'");
  EXPECT_EQ(parse_error_of("x = f'{a +}'"), "1:11: invalid syntax");  // inside the field
  EXPECT_EQ(parse_error_of("x = f'{a b}'"), "1:10: invalid syntax");
  EXPECT_EQ(parse_error_of("x = f'{(a}'"), "1:7: f-string: expecting '}'");
  EXPECT_EQ(parse_error_of("x = f'{lambda: 1}'"),  // as in Python, the ':' starts a format spec
            "1:14: f-string format specifications (':...') are not supported in script");
  EXPECT_EQ(parse_error_of("x = f'{(lambda: 1)}'"), "1:9: lambda is not supported in script");
  EXPECT_EQ(parse_error_of("x = b'a'"), "1:5: bytes literals are not supported in script");
}

// The kind of each error picks its Python class (CompileErrorKind): torch's frontend raises
// UnsupportedNodeError for a kind of syntax it has no rule for, NotSupportedError for a detail.
TEST(ScriptParserErrors, UnsupportedConstructsHaveTheirKind) {
  const auto kind_of = [](std::string text) {
    try {
      parse_module(source_of(std::move(text)));
    } catch (const CompileError& e) {
      return e.kind();
    }
    return CompileErrorKind::Error;
  };
  EXPECT_EQ(kind_of("f = lambda x: x"), CompileErrorKind::UnsupportedNode);
  EXPECT_EQ(kind_of("try:\n  pass\nexcept:\n  pass"), CompileErrorKind::UnsupportedNode);
  EXPECT_EQ(kind_of("yield x"), CompileErrorKind::UnsupportedNode);
  EXPECT_EQ(kind_of("x = {1, 2}"), CompileErrorKind::UnsupportedNode);
  EXPECT_EQ(kind_of("for x in y:\n  pass\nelse:\n  pass"), CompileErrorKind::NotSupported);
  EXPECT_EQ(kind_of("x = f'{a!r}'"), CompileErrorKind::NotSupported);
  EXPECT_EQ(kind_of("x = b'a'"), CompileErrorKind::NotSupported);
  EXPECT_EQ(kind_of("x = 1 +"), CompileErrorKind::Error);  // a syntax error is a RuntimeError
  EXPECT_EQ(kind_of("x = f'{a +}'"), CompileErrorKind::Error);
}

// Note [Non-ASCII identifiers]: letters of any script start a name; letters, digits and combining
// marks continue it, as in Python (the tests write the UTF-8 bytes).
TEST(ScriptLexer, NonAsciiIdentifiersAsPython) {
  EXPECT_EQ(token_list("\xc3\xa9t\xc3\xa9 = \xcf\x80 + \xe4\xb8\xad\xe6\x96\x87"),
            "Identifier:\xc3\xa9t\xc3\xa9 Eq Identifier:\xcf\x80 Plus "
            "Identifier:\xe4\xb8\xad\xe6\x96\x87 Newline EndOfFile");
  // e + COMBINING ACUTE ACCENT continues a name; a combining mark cannot start one.
  EXPECT_EQ(token_list("xe\xcc\x81"), "Identifier:xe\xcc\x81 Newline EndOfFile");
  EXPECT_EQ(parse_error_of("x = \xcc\x81"), "1:5: invalid character '\xcc\x81' (U+0301)");
  // A symbol ends a name: the euro sign is an invalid character after it, as Python says.
  EXPECT_EQ(parse_error_of("a\xe2\x82\xac = 1"), "1:2: invalid character '\xe2\x82\xac' (U+20AC)");
}

TEST(ScriptParserErrors, Characters) {
  EXPECT_EQ(parse_error_of(std::string("x = 1\ny = \0", 11)),
            "2:5: source code cannot contain null bytes");
  EXPECT_EQ(parse_error_of("x = '\xff'"), "1:6: source is not valid UTF-8 (byte 0xff)");
  EXPECT_EQ(parse_error_of("# \xc3\x28"), "1:3: source is not valid UTF-8 (byte 0xc3)");
  EXPECT_EQ(parse_error_of("x = '\xed\xa0\x80'"),
            "1:6: source is not valid UTF-8 (byte 0xed)");  // a surrogate
  EXPECT_EQ(parse_error_of("x = '\xc0\xaf'"),
            "1:6: source is not valid UTF-8 (byte 0xc0)");  // overlong
  EXPECT_EQ(parse_error_of("x = \xe2\x82\xac"), "1:5: invalid character '\xe2\x82\xac' (U+20AC)");
  EXPECT_EQ(parse_error_of("x = \x01"), "1:5: invalid non-printable character U+0001");
  EXPECT_EQ(parse_error_of("x = 1 \\ 2"),
            "1:7: unexpected character after line continuation character");
  EXPECT_EQ(parse_error_of("x = 1 + \\"), "1:9: unexpected EOF while parsing");
  EXPECT_EQ(parse_error_of("x = ?"), "1:5: invalid syntax");
  EXPECT_EQ(parse_error_of("x = !a"), "1:5: invalid syntax");
}

TEST(ScriptParserErrors, Targets) {
  EXPECT_EQ(parse_error_of("f() = 1"), "1:1: cannot assign to function call");
  EXPECT_EQ(parse_error_of("x = a + 1 = 2"), "1:5: cannot assign to expression");
  EXPECT_EQ(parse_error_of("1 = x"), "1:1: cannot assign to literal");
  EXPECT_EQ(parse_error_of("None = x"), "1:1: cannot assign to None");
  EXPECT_EQ(parse_error_of("a, (b, f()) = x"), "1:8: cannot assign to function call");
  EXPECT_EQ(parse_error_of("... = 1"), "1:1: cannot assign to ellipsis");
  EXPECT_EQ(parse_error_of("*a = b"), "1:1: starred assignment target must be in a list or tuple");
  EXPECT_EQ(parse_error_of("x = *a"), "1:5: can't use starred expression here");
  EXPECT_EQ(parse_error_of("*a"), "1:1: can't use starred expression here");
  EXPECT_EQ(parse_error_of("return *a"), "1:8: can't use starred expression here");
  EXPECT_EQ(parse_error_of("x = (*a)"), "1:6: cannot use starred expression here");
  EXPECT_EQ(parse_error_of("a < b = 1"), "1:1: cannot assign to comparison");
  EXPECT_EQ(parse_error_of("for f() in x: pass"), "1:5: cannot assign to function call");
  EXPECT_EQ(parse_error_of("with a as 1: pass"), "1:11: cannot assign to literal");
  EXPECT_EQ(parse_error_of("[x for 1 in y]"), "1:8: cannot assign to literal");
  EXPECT_EQ(parse_error_of("del f()"), "1:5: cannot delete function call");
  EXPECT_EQ(parse_error_of("del *a"), "1:5: cannot delete starred");
  EXPECT_EQ(parse_error_of("del ..."), "1:5: cannot delete ellipsis");
  EXPECT_EQ(parse_error_of("... += 1"),
            "1:1: 'name' is an illegal expression for augmented assignment");
  EXPECT_EQ(parse_error_of("a + 1 += 1"),
            "1:1: 'expression' is an illegal expression for augmented assignment");
  EXPECT_EQ(parse_error_of("a, b += 1"),
            "1:1: 'tuple' is an illegal expression for augmented assignment");
  EXPECT_EQ(parse_error_of("a, b: int"), "1:1: only single target (not tuple) can be annotated");
  EXPECT_EQ(parse_error_of("[a]: int"), "1:1: only single target (not list) can be annotated");
  EXPECT_EQ(parse_error_of("f(): int"), "1:1: illegal target for annotation");
}

TEST(ScriptParserErrors, CallsAndParameters) {
  EXPECT_EQ(parse_error_of("f(a=1, b)"), "1:8: positional argument follows keyword argument");
  EXPECT_EQ(parse_error_of("f(a=1, a=2)"), "1:8: keyword argument repeated: a");
  EXPECT_EQ(parse_error_of("f(a.b=1)"),
            "1:3: expression cannot contain assignment, perhaps you meant \"==\"?");
  EXPECT_EQ(parse_error_of("f(True=1)"), "1:3: cannot assign to True");
  EXPECT_EQ(parse_error_of("f(**kw)"), "1:3: '**' argument unpacking is not supported in script");
  EXPECT_EQ(parse_error_of("def f(a=1, b): pass"),
            "1:12: parameter without a default follows parameter with a default");
  EXPECT_EQ(parse_error_of("def f(a, a): pass"),
            "1:10: duplicate argument 'a' in function definition");
  EXPECT_EQ(parse_error_of("def f(*): pass"), "1:7: named arguments must follow bare *");
  EXPECT_EQ(parse_error_of("def f(*, **k): pass"), "1:7: named arguments must follow bare *");
  EXPECT_EQ(parse_error_of("def f(*a, *b): pass"), "1:11: * argument may appear only once");
  EXPECT_EQ(parse_error_of("def f(**k, a): pass"),
            "1:12: arguments cannot follow var-keyword argument");
  EXPECT_EQ(parse_error_of("def f(*a=1): pass"),
            "1:9: var-positional argument cannot have default value");
  EXPECT_EQ(parse_error_of("def f(**a=1): pass"),
            "1:10: var-keyword argument cannot have default value");
  EXPECT_EQ(parse_error_of("def f(a, /): pass"),
            "1:10: positional-only parameters ('/') are not supported in script");
  EXPECT_EQ(parse_error_of("class A(metaclass=M): pass"),
            "1:9: keyword arguments in class bases are not supported in script");
}

TEST(ScriptParserErrors, UnsupportedConstructsAreNamed) {
  EXPECT_EQ(parse_error_of("f = lambda x: x"), "1:5: lambda is not supported in script");
  EXPECT_EQ(parse_error_of("g(lambda: 1)"), "1:3: lambda is not supported in script");
  EXPECT_EQ(parse_error_of("for x in y:\n  pass\nelse:\n  pass"),
            "3:1: else clauses on loops are not supported in script");
  EXPECT_EQ(parse_error_of("while x:\n  pass\nelse:\n  pass"),
            "3:1: else clauses on loops are not supported in script");
  EXPECT_EQ(parse_error_of("[x for x in a for y in b]"),
            "1:15: nested comprehension loops are not supported");
  EXPECT_EQ(parse_error_of("[x for x in a if x for y in b]"),
            "1:20: nested comprehension loops are not supported");
  EXPECT_EQ(parse_error_of("x = {1, 2}"), "1:5: set literals are not supported in script");
  EXPECT_EQ(parse_error_of("x = {1}"), "1:5: set literals are not supported in script");
  EXPECT_EQ(parse_error_of("x = {a for a in b}"),
            "1:8: set comprehensions are not supported in script");
  EXPECT_EQ(parse_error_of("x = {a: 1 for a in b for c in d}"),
            "1:22: nested comprehension loops are not supported");
  EXPECT_EQ(parse_error_of("x = {a: 1, b}"), "1:13: ':' expected after dictionary key");
  EXPECT_EQ(parse_error_of("x = {**a}"), "1:6: dict unpacking ('**') is not supported in script");
  EXPECT_EQ(parse_error_of("f(a for a in b, c)"),
            "1:3: Generator expression must be parenthesized");
  EXPECT_EQ(parse_error_of("f(c, a for a in b)"),
            "1:6: Generator expression must be parenthesized");
  EXPECT_EQ(parse_error_of("x = [*a for a in b]"),
            "1:6: iterable unpacking cannot be used in comprehension");
  EXPECT_EQ(parse_error_of("yield x"), "1:1: yield is not supported in script");
  EXPECT_EQ(parse_error_of("x = yield"), "1:5: yield is not supported in script");
  EXPECT_EQ(parse_error_of("x = (yield)"), "1:6: yield is not supported in script");
  EXPECT_EQ(parse_error_of("if (n := 10) > 5: pass"),
            "1:7: assignment expressions (':=') are not supported in script");
  EXPECT_EQ(parse_error_of("try:\n  pass\nexcept:\n  pass"),
            "1:1: try statements are not supported in script");
  EXPECT_EQ(parse_error_of("async def f(): pass"),
            "1:1: async functions are not supported in script");
  EXPECT_EQ(parse_error_of("async with x: pass"),
            "1:1: async with statements are not supported in script");
  EXPECT_EQ(parse_error_of("async x"), "1:1: invalid syntax");
  EXPECT_EQ(parse_error_of("async for x in y: pass"),
            "1:1: async for loops are not supported in script");
  EXPECT_EQ(parse_error_of("x = await y"), "1:5: await is not supported in script");
  EXPECT_EQ(parse_error_of("[x async for x in y]"),
            "1:4: asynchronous comprehensions are not supported in script");
  EXPECT_EQ(parse_error_of("raise E from e"),
            "1:9: 'raise ... from ...' is not supported in script");
}

TEST(ScriptParserErrors, MessageHasLocationLineAndCaret) {
  try {
    parse_module(source_of("def f(x):\n    return x +* 2\n"));
    FAIL() << "no error";
  } catch (const CompileError& e) {
    EXPECT_EQ(std::string(e.what()),
              "t.py:2:15: invalid syntax\n    return x +* 2\n              ~");
  }
}

// ---- Limits ------------------------------------------------------------------------------------

std::string repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(ScriptParserLimits, NestingIsCapped) {
  // Python's limits: 200 open brackets, 100 indentation levels.
  EXPECT_EQ(expr(repeat("(", 199) + "x" + repeat(")", 199)), "x");
  EXPECT_EQ(parse_error_of("x = " + repeat("(", 201)), "1:205: too many nested parentheses");
  EXPECT_EQ(parse_error_of(repeat("[", 300)), "1:201: too many nested parentheses");
  std::string deep;
  for (int i = 0; i < 120; ++i) deep += std::string(static_cast<size_t>(i), ' ') + "if x:\n";
  EXPECT_EQ(parse_error_of(deep), "101:101: too many levels of indentation");
  // Everything else that nests or chains counts against one limit of 1000.
  const std::string too_deep = "expression or block nested too deeply (the limit is 1000 levels)";
  EXPECT_THAT(parse_error_of(repeat("-", 5000) + "x"), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of(repeat("not ", 5000) + "x"), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of("x" + repeat(" + x", 5000)), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of("x" + repeat(" ** x", 5000)), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of("x" + repeat(".a", 5000)), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of("x" + repeat("[0]", 5000)), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of("f" + repeat("()", 5000)), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of(repeat("a if b else ", 5000) + "c"), ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of("if a: pass\n" + repeat("elif b: pass\n", 5000)),
              ::testing::EndsWith(too_deep));
  EXPECT_THAT(parse_error_of(repeat("(-", 150) + "x" + repeat(" + y", 900) + repeat(")", 150)),
              ::testing::EndsWith(too_deep));
  // Flat sequences are not nesting.
  EXPECT_EQ(parse("x = [" + repeat("1, ", 20000) + "]").size(), 40012u);
  EXPECT_EQ(parse("x = a" + repeat(" < a", 5000)).size(), 20013u);
  EXPECT_EQ(parse(repeat("x = 1\n", 20000)).size(), 20000u * 8 - 1);
  EXPECT_EQ(expr("x" + repeat(" + x", 500)).size(), 500u * 6 + 1);
}

// ---- Fuzzing -----------------------------------------------------------------------------------

// Checks the invariants of a parsed tree: every range lies inside the source, and inside its
// parent's range (decorators precede their function, so they are checked against the module).
class RangeChecker {
 public:
  explicit RangeChecker(const Source& s) : size_(s.text().size()) {}

  void module(const Module& m) {
    for (const StmtPtr& s : m.body) stmt(*s, 0, size_);
  }

 private:
  void check(const SourceRange& r, size_t lo, size_t hi) {
    ASSERT_TRUE(r.source != nullptr);
    ASSERT_LE(r.start, r.end);
    ASSERT_LE(lo, r.start);
    ASSERT_LE(r.end, hi);
  }
  void body(const Body& b, const SourceRange& r) {
    for (const StmtPtr& s : b) stmt(*s, r.start, r.end);
  }
  void exprs(const std::vector<ExprPtr>& es, const SourceRange& r) {
    for (const ExprPtr& e : es) expr(e.get(), r);
  }
  void expr(const Expr* e, const SourceRange& parent) {
    if (!e) return;
    check(e->range, parent.start, parent.end);
    const SourceRange& r = e->range;
    switch (e->kind) {
      case ExprKind::Attribute:
        expr(e->as<Attribute>().value.get(), r);
        check(e->as<Attribute>().attr_range, r.start, r.end);
        break;
      case ExprKind::Call:
        expr(e->as<Call>().func.get(), r);
        exprs(e->as<Call>().args, r);
        for (const Keyword& k : e->as<Call>().keywords) {
          check(k.range, r.start, r.end);
          expr(k.value.get(), k.range);
        }
        break;
      case ExprKind::Subscript:
        expr(e->as<Subscript>().value.get(), r);
        exprs(e->as<Subscript>().indices, r);
        break;
      case ExprKind::Slice:
        expr(e->as<Slice>().lower.get(), r);
        expr(e->as<Slice>().upper.get(), r);
        expr(e->as<Slice>().step.get(), r);
        break;
      case ExprKind::BinOp:
        expr(e->as<BinOp>().lhs.get(), r);
        expr(e->as<BinOp>().rhs.get(), r);
        break;
      case ExprKind::UnaryOp:
        expr(e->as<UnaryOp>().operand.get(), r);
        break;
      case ExprKind::BoolOp:
        exprs(e->as<BoolOp>().values, r);
        break;
      case ExprKind::Compare:
        expr(e->as<Compare>().left.get(), r);
        exprs(e->as<Compare>().comparators, r);
        ASSERT_EQ(e->as<Compare>().ops.size(), e->as<Compare>().comparators.size());
        break;
      case ExprKind::IfExp:
        expr(e->as<IfExp>().test.get(), r);
        expr(e->as<IfExp>().body.get(), r);
        expr(e->as<IfExp>().orelse.get(), r);
        break;
      case ExprKind::List:
        exprs(e->as<ListExpr>().elts, r);
        break;
      case ExprKind::Tuple:
        exprs(e->as<TupleExpr>().elts, r);
        break;
      case ExprKind::Dict:
        exprs(e->as<DictExpr>().keys, r);
        exprs(e->as<DictExpr>().values, r);
        break;
      case ExprKind::ListComp:
        expr(e->as<ListComp>().elt.get(), r);
        expr(e->as<ListComp>().target.get(), r);
        expr(e->as<ListComp>().iter.get(), r);
        exprs(e->as<ListComp>().conds, r);
        break;
      case ExprKind::Starred:
        expr(e->as<Starred>().value.get(), r);
        break;
      default:
        break;
    }
  }
  void stmt(const Stmt& s, size_t lo, size_t hi) {
    check(s.range, lo, hi);
    const SourceRange& r = s.range;
    switch (s.kind) {
      case StmtKind::Expr:
        expr(s.as<ExprStmt>().value.get(), r);
        break;
      case StmtKind::Assign:
        exprs(s.as<Assign>().targets, r);
        expr(s.as<Assign>().value.get(), r);
        break;
      case StmtKind::AugAssign:
        expr(s.as<AugAssign>().target.get(), r);
        expr(s.as<AugAssign>().value.get(), r);
        break;
      case StmtKind::AnnAssign:
        expr(s.as<AnnAssign>().target.get(), r);
        expr(s.as<AnnAssign>().annotation.get(), r);
        expr(s.as<AnnAssign>().value.get(), r);
        break;
      case StmtKind::If:
        expr(s.as<If>().test.get(), r);
        body(s.as<If>().body, r);
        body(s.as<If>().orelse, r);
        break;
      case StmtKind::For:
        expr(s.as<For>().target.get(), r);
        expr(s.as<For>().iter.get(), r);
        body(s.as<For>().body, r);
        break;
      case StmtKind::While:
        expr(s.as<While>().test.get(), r);
        body(s.as<While>().body, r);
        break;
      case StmtKind::Return:
        expr(s.as<Return>().value.get(), r);
        break;
      case StmtKind::Assert:
        expr(s.as<Assert>().test.get(), r);
        expr(s.as<Assert>().msg.get(), r);
        break;
      case StmtKind::Raise:
        expr(s.as<Raise>().exc.get(), r);
        break;
      case StmtKind::With:
        for (const WithItem& item : s.as<With>().items) {
          check(item.range, r.start, r.end);
          expr(item.context.get(), item.range);
          expr(item.var.get(), item.range);
        }
        body(s.as<With>().body, r);
        break;
      case StmtKind::FunctionDef: {
        const auto& f = s.as<FunctionDef>();
        check(f.name_range, r.start, r.end);
        for (const Param& p : f.params) {
          check(p.range, r.start, r.end);
          expr(p.annotation.get(), p.range);
          expr(p.default_value.get(), p.range);
        }
        expr(f.returns.get(), r);
        body(f.body, r);
        for (const ExprPtr& d : f.decorators) expr(d.get(), SourceRange(r.source, 0, r.start));
        break;
      }
      case StmtKind::ClassDef: {
        const auto& c = s.as<ClassDef>();
        exprs(c.bases, r);
        body(c.body, r);
        for (const ExprPtr& d : c.decorators) expr(d.get(), SourceRange(r.source, 0, r.start));
        break;
      }
      case StmtKind::Import:
        for (const Alias& a : s.as<Import>().names) check(a.range, r.start, r.end);
        break;
      case StmtKind::ImportFrom:
        for (const Alias& a : s.as<ImportFrom>().names) check(a.range, r.start, r.end);
        break;
      case StmtKind::Delete:
        exprs(s.as<Delete>().targets, r);
        break;
      default:
        break;
    }
  }

  size_t size_;
};

const char* const kSeeds[] = {
    "def forward(self, x: Tensor, y: Optional[Tensor] = None) -> Tensor:\n"
    "    if y is not None and x.dim() > 1:\n"
    "        x = x + y * 2.5e-1\n"
    "    elif not self.training:\n"
    "        x = -x ** 2\n"
    "    else:\n"
    "        pass\n"
    "    return x\n",
    "@torch.jit.script\n"
    "def f(a, *args, b: int = 0x1F, **kwargs):\n"
    "    with torch.autocast('cuda', dtype=torch.float16) as ctx, other():\n"
    "        out = [t.sum() for t in args if t is not None]\n"
    "    return out, {'k': a[1:, ::2, None, ...]}\n",
    "class Net(nn.Module):\n"
    "    w: Final[int] = 3\n"
    "    def __init__(self):\n"
    "        super().__init__()\n"
    "        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])\n",
    "for i, (a, b) in enumerate(zip(xs, ys)):\n"
    "    while i < 10 and a != b:\n"
    "        i += 1; a //= 2\n"
    "        if a in b or a not in c: break\n"
    "        continue\n",
    "import torch.nn.functional as F\n"
    "from ampjit.amp import (autocast as ac,\n    GradScaler)\n"
    "x = y = (1, 2,)\n"
    "a, *b = [1, 2, 3]\n"
    "del a, b[0]\n",
    "def g(x):\n"
    "    '''Doc string\n    over lines.'''\n"
    "    assert x.shape[0] == 2, \"bad \\x41 \\u00e9\" r'\\d'\n"
    "    y = x if x > 0 else -x  # comment\n"
    "    raise ValueError('no')\n",
    "def h(t):\n"
    "\tglobal G\n"
    "\tr = t @ t.T << 1 | 2 ^ 3 & ~4 >> 5 % 6\n"
    "\tr = \\\n"
    "\t    r[..., 0:-1]\n"
    "\treturn r\n",
    "x = {}\nx['a'] = 1_000.5 + .5 + 1. + 1e3 + 0b101 + 0o17\nprint(x, *x, sep='')\n",
    "if a:\n  if b:\n    if c:\n      pass\n  else:\n    d = lambda_(e)\n",
    "y = f(a)(b)[c].d(e=f, *g)\nz: int\nnonlocal q\n",
};

const char* const kFragments[] = {
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ":",
    ".",
    "...",
    ";",
    "=",
    "==",
    "**",
    "*",
    "->",
    ":=",
    "+=",
    "@",
    "\\",
    "\\\n",
    "\n",
    "\n    ",
    "\t",
    " ",
    "#",
    "'",
    "\"",
    "'''",
    "\"\"\"",
    "r'",
    "f'",
    "b'",
    "0x",
    "1e",
    "1_",
    "0",
    "9999999999999999999999",
    "def ",
    "class ",
    "if ",
    "elif ",
    "else",
    "for ",
    "in ",
    "while ",
    "with ",
    "as ",
    "lambda ",
    "yield ",
    "not ",
    "is ",
    "and ",
    "or ",
    "return ",
    "import ",
    "from ",
    "try",
    "async ",
    "await ",
    "del ",
    "global ",
    "pass",
    "None",
    "True",
    "x",
    "\xff",
    "" /* a NUL byte */,
    "\xe2\x82\xac",
    "\r\n",
    "\f",
};

TEST(ScriptParserFuzz, MutatedSourcesParseOrRaiseCompileError) {
  std::mt19937_64 rng(20240617);
  const auto pick = [&](size_t n) { return static_cast<size_t>(rng() % std::max<size_t>(n, 1)); };
  int parsed = 0, rejected = 0;
  for (const char* seed : kSeeds) {
    // Every seed is valid to begin with.
    ASSERT_NO_THROW(parse_module(source_of(seed))) << seed;
    const std::vector<Token> tokens = tokenize(source_of(seed));
    for (int iter = 0; iter < 2500; ++iter) {
      std::string s = seed;
      const int mutations = 1 + static_cast<int>(pick(4));
      for (int m = 0; m < mutations; ++m) {
        const size_t at = pick(s.size() + 1);
        switch (pick(8)) {
          case 0:
            s.erase(at, 1 + pick(3));
            break;  // delete bytes
          case 1:
            s.insert(at, 1, static_cast<char>(pick(256)));
            break;   // insert a random byte
          case 2: {  // insert a fragment (NUL taken as one byte)
            const size_t f = pick(std::size(kFragments));
            s.insert(at, kFragments[f][0] ? std::string(kFragments[f]) : std::string(1, '\0'));
            break;
          }
          case 3: {  // duplicate a span
            const size_t len = pick(20);
            s.insert(at, s.substr(at, len));
            break;
          }
          case 4:  // swap two bytes
            if (!s.empty()) std::swap(s[pick(s.size())], s[pick(s.size())]);
            break;
          case 5:
            s.resize(std::min(s.size(), at));
            break;   // truncate
          case 6: {  // delete a token's text
            const Token& t = tokens[pick(tokens.size())];
            if (t.range.end <= s.size()) s.erase(t.range.start, t.range.end - t.range.start);
            break;
          }
          case 7: {  // copy a token's text elsewhere
            const Token& t = tokens[pick(tokens.size())];
            s.insert(at, std::string(seed).substr(t.range.start, t.range.end - t.range.start));
            break;
          }
        }
      }
      const auto src = source_of(s);
      try {
        auto m = parse_module(src);
        RangeChecker(*src).module(*m);
        EXPECT_FALSE(dump(*m).empty() && !m->body.empty());
        ++parsed;
      } catch (const CompileError& e) {
        ASSERT_TRUE(e.range().source != nullptr) << s;
        ASSERT_LE(e.range().start, s.size()) << s;
        ++rejected;
      } catch (const std::exception& e) {
        FAIL() << "parsing threw " << e.what() << " on:\n" << s;
      }
    }
  }
  // Both outcomes occur, so the fuzzer explores more than error paths.
  EXPECT_GT(parsed, 1000);
  EXPECT_GT(rejected, 10000);
}

}  // namespace
}  // namespace ampjit::script
