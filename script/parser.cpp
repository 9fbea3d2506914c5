// The script parser (see parser.h): recursive descent over the lexer's tokens, one function per
// grammar production (the production is the comment above it), binary operators by precedence
// climbing (Note [Operator precedence]).
#include "script/parser.h"

#include <deque>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "runtime/error.h"
#include "script/lexer.h"

namespace ampjit::script {

namespace {

// Note [Nesting limit]
// The parser recurses once per nested construct, and the AST it builds is as deep as the input
// nests. The lexer already caps brackets at 200 and indentation at 100 levels (Python's limits);
// the parser counts nesting once more, together with what the lexer cannot see: unary operators,
// `not`, `**`, conditional expressions, `elif` chains, and every operator, call, subscript or
// attribute folded into a left-leaning chain. Past kMaxNesting in total the input is refused, so
// neither the parser nor whoever walks the AST recursively (its destructor included) can run out
// of stack: the deepest input these limits let through needs about 1 MB of stack in a Release
// build and 3 to 4 MB under ASan, well inside the usual 8 MB main-thread stack (a thread that
// parses needs as much).
constexpr int kMaxNesting = 1000;

// Note [Operator precedence]
// Python's binding strength, loosest first:
//   lambda < if-else < or < and < not < comparisons (chained: in, not in, is, is not, <, ...)
//   < | < ^ < & < <<, >> < +, - < *, /, //, %, @ < unary -, +, ~ < ** < await, primary
// `or`, `and`, `not` and comparisons have their own functions; the six binary levels from `|` to
// `*` are one precedence-climbing loop over the table below, all left-associative. `**` is
// right-associative and its left operand is a primary, its right one a factor, so
// -2**2 == -(2**2) and 2**-1 == 2**(-1).
struct BinaryOp {
  BinOpKind op;
  int precedence;
};

std::optional<BinaryOp> binary_op(Tok t) {
  switch (t) {
    case Tok::Pipe:
      return BinaryOp{BinOpKind::BitOr, 1};
    case Tok::Caret:
      return BinaryOp{BinOpKind::BitXor, 2};
    case Tok::Amp:
      return BinaryOp{BinOpKind::BitAnd, 3};
    case Tok::LShift:
      return BinaryOp{BinOpKind::LShift, 4};
    case Tok::RShift:
      return BinaryOp{BinOpKind::RShift, 4};
    case Tok::Plus:
      return BinaryOp{BinOpKind::Add, 5};
    case Tok::Minus:
      return BinaryOp{BinOpKind::Sub, 5};
    case Tok::Star:
      return BinaryOp{BinOpKind::Mul, 6};
    case Tok::Slash:
      return BinaryOp{BinOpKind::Div, 6};
    case Tok::DoubleSlash:
      return BinaryOp{BinOpKind::FloorDiv, 6};
    case Tok::Percent:
      return BinaryOp{BinOpKind::Mod, 6};
    case Tok::At:
      return BinaryOp{BinOpKind::MatMul, 6};
    default:
      return std::nullopt;
  }
}

std::optional<BinOpKind> augmented_op(Tok t) {
  switch (t) {
    case Tok::PlusEq:
      return BinOpKind::Add;
    case Tok::MinusEq:
      return BinOpKind::Sub;
    case Tok::StarEq:
      return BinOpKind::Mul;
    case Tok::SlashEq:
      return BinOpKind::Div;
    case Tok::DoubleSlashEq:
      return BinOpKind::FloorDiv;
    case Tok::PercentEq:
      return BinOpKind::Mod;
    case Tok::DoubleStarEq:
      return BinOpKind::Pow;
    case Tok::AtEq:
      return BinOpKind::MatMul;
    case Tok::AmpEq:
      return BinOpKind::BitAnd;
    case Tok::PipeEq:
      return BinOpKind::BitOr;
    case Tok::CaretEq:
      return BinOpKind::BitXor;
    case Tok::LShiftEq:
      return BinOpKind::LShift;
    case Tok::RShiftEq:
      return BinOpKind::RShift;
    default:
      return std::nullopt;
  }
}

bool is_layout(Tok t) {
  return t == Tok::Newline || t == Tok::Indent || t == Tok::Dedent || t == Tok::EndOfFile;
}

// Whether a token can begin an expression (used after a trailing comma, and to suggest a
// missing comma).
bool starts_expression(Tok t) {
  switch (t) {
    case Tok::Identifier:
    case Tok::Int:
    case Tok::Float:
    case Tok::String:
    case Tok::FString:
    case Tok::KwNone:
    case Tok::KwTrue:
    case Tok::KwFalse:
    case Tok::Ellipsis:
    case Tok::LParen:
    case Tok::LBracket:
    case Tok::LBrace:
    case Tok::Minus:
    case Tok::Plus:
    case Tok::Tilde:
    case Tok::KwNot:
    case Tok::Star:
    case Tok::KwLambda:
    case Tok::KwAwait:
    case Tok::KwYield:
      return true;
    default:
      return false;
  }
}

// How Python names an expression in "cannot assign to ..." messages.
const char* describe(const Expr& e) {
  switch (e.kind) {
    case ExprKind::Name:
      return "name";
    case ExprKind::Int:
    case ExprKind::Float:
    case ExprKind::Str:
      return "literal";
    case ExprKind::Bool:
      return e.as<BoolLit>().value ? "True" : "False";
    case ExprKind::None:
      return "None";
    case ExprKind::Attribute:
      return "attribute";
    case ExprKind::Call:
      return "function call";
    case ExprKind::Subscript:
      return "subscript";
    case ExprKind::Compare:
      return "comparison";
    case ExprKind::IfExp:
      return "conditional expression";
    case ExprKind::List:
      return "list";
    case ExprKind::Tuple:
      return "tuple";
    case ExprKind::Dict:
      return "dict literal";
    case ExprKind::ListComp:
      return "list comprehension";
    case ExprKind::DictComp:
      return "dict comprehension";
    case ExprKind::Starred:
      return "starred";
    default:
      return "expression";
  }
}

class DepthGuard {  // restores the parser's nesting count when a parse function returns
 public:
  explicit DepthGuard(int& depth) : depth_(depth), saved_(depth) {}
  ~DepthGuard() { depth_ = saved_; }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;

 private:
  int& depth_;
  int saved_;
};

class Parser {
 public:
  explicit Parser(std::shared_ptr<const Source> source) : source_(source), lexer_(source) {}
  // An f-string field's expression, source text [begin, end), at nesting `depth`.
  Parser(std::shared_ptr<const Source> source, size_t begin, size_t end, int depth)
      : source_(source), lexer_(source, begin, end), depth_(depth) {}

  // The field's expression (a tuple for `a, b`), then the end of the field.
  ExprPtr parse_field() {
    nest();
    ExprPtr e = parse_testlist_star_expr();
    if (!at(Tok::EndOfFile)) syntax_error();
    return e;
  }

  // file_input: stmt* ENDMARKER
  std::unique_ptr<Module> parse_file() {
    auto m = std::make_unique<Module>();
    m->source = source_;
    while (!at(Tok::EndOfFile)) parse_statement(m->body);
    return m;
  }

 private:
  // ---- Tokens ----------------------------------------------------------------------------------

  const Token& peek(size_t k) {
    while (ahead_.size() <= k) ahead_.push_back(lexer_.next());
    return ahead_[k];
  }
  const Token& cur() { return peek(0); }
  bool at(Tok k) { return cur().kind == k; }
  Token advance() {
    peek(0);
    Token t = std::move(ahead_.front());
    ahead_.pop_front();
    if (!is_layout(t.kind)) last_end_ = t.range.end;
    return t;
  }
  bool accept(Tok k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  Token expect(Tok k, const char* message) {
    if (!at(k)) fail(message, cur().range);
    return advance();
  }
  void expect_colon() { expect(Tok::Colon, "expected ':'"); }

  size_t start() { return cur().range.start; }
  // From `begin` to the end of the last token consumed (layout tokens have no text to count).
  SourceRange span(size_t begin) const { return SourceRange(source_, begin, last_end_); }
  int line_of(size_t offset) const { return source_->line_col(offset).first; }

  // Errors are out of line and take no temporaries from their callers, whose frames stay small:
  // the recursion per nesting level is what bounds the input (Note [Nesting limit]).
  [[noreturn, gnu::cold, gnu::noinline]] void fail(std::string_view what,
                                                   const SourceRange& range) const {
    throw CompileError(std::string(what), range);
  }
  // Python that script does not support (CompileErrorKind): a whole kind of syntax, or a detail.
  [[noreturn, gnu::cold, gnu::noinline]] void unsupported_node(std::string_view what,
                                                               const SourceRange& range) const {
    throw CompileError(std::string(what), range, CompileErrorKind::UnsupportedNode);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void unsupported(std::string_view what,
                                                          const SourceRange& range) const {
    throw CompileError(std::string(what), range, CompileErrorKind::NotSupported);
  }
  [[noreturn, gnu::cold, gnu::noinline]] void syntax_error() {
    fail("invalid syntax", cur().range);
  }

  // The closing bracket of a display, call or subscript whose last item began at `item` (npos
  // when there was none): an expression in its place means a comma is probably missing.
  void close(Tok closer, size_t item) {
    if (accept(closer)) return;
    if (item != std::string::npos && starts_expression(cur().kind)) {
      fail("invalid syntax. Perhaps you forgot a comma?",
           SourceRange(source_, item, cur().range.end));
    }
    syntax_error();
  }

  // One more level of nesting (Note [Nesting limit]); a DepthGuard undoes it.
  void nest() {
    if (++depth_ > kMaxNesting) nested_too_deeply();
  }
  [[noreturn, gnu::cold, gnu::noinline]] void nested_too_deeply() {
    fail(fmt::format("expression or block nested too deeply (the limit is {} levels)", kMaxNesting),
         cur().range);
  }

  // ---- Checks ----------------------------------------------------------------------------------

  // `...` parses as the name Ellipsis; its text tells it from the name.
  bool is_ellipsis(const Expr& e) const {
    return e.kind == ExprKind::Name && e.range.end - e.range.start == 3 &&
           source_->text().compare(e.range.start, 3, "...") == 0;
  }

  // Assignment, `for`, `with ... as` and comprehension targets; `del` operands.
  void check_target(const Expr& e, bool del = false) const {
    switch (e.kind) {
      case ExprKind::Name:
        if (is_ellipsis(e))
          fail(del ? "cannot delete ellipsis" : "cannot assign to ellipsis", e.range);
        return;
      case ExprKind::Attribute:
      case ExprKind::Subscript:
        return;
      case ExprKind::Tuple:
        for (const ExprPtr& elt : e.as<TupleExpr>().elts) check_target(*elt, del);
        return;
      case ExprKind::List:
        for (const ExprPtr& elt : e.as<ListExpr>().elts) check_target(*elt, del);
        return;
      case ExprKind::Starred:
        if (!del) {
          check_target(*e.as<Starred>().value);
          return;
        }
        [[fallthrough]];
      default:
        fail(fmt::format("cannot {} {}", del ? "delete" : "assign to", describe(e)), e.range);
    }
  }

  void reject_lone_star(const Expr& e) const {
    if (e.kind == ExprKind::Starred) fail("can't use starred expression here", e.range);
  }

  // ---- Statements ------------------------------------------------------------------------------

  // stmt: compound_stmt | simple_stmt
  // compound_stmt: if_stmt | while_stmt | for_stmt | with_stmt | funcdef | classdef | decorated
  void parse_statement(Body& out) {
    switch (cur().kind) {
      case Tok::KwIf:
        out.push_back(parse_if());
        return;
      case Tok::KwWhile:
        out.push_back(parse_while());
        return;
      case Tok::KwFor:
        out.push_back(parse_for());
        return;
      case Tok::KwWith:
        out.push_back(parse_with());
        return;
      case Tok::KwDef:
        out.push_back(parse_def({}));
        return;
      case Tok::KwClass:
        out.push_back(parse_class({}));
        return;
      case Tok::At:
        out.push_back(parse_decorated());
        return;
      case Tok::KwTry:
        unsupported_node("try statements are not supported in script", cur().range);
      case Tok::KwAsync:
        reject_async();
      case Tok::Indent: {
        const size_t first = cur().range.end;  // the indented line's first token
        fail("unexpected indent", SourceRange(source_, first, first + 1));
      }
      default:
        parse_simple_stmt(out);
    }
  }

  [[noreturn]] void reject_async() {
    const SourceRange at_async = cur().range;
    switch (peek(1).kind) {
      case Tok::KwDef:
        unsupported_node("async functions are not supported in script", at_async);
      case Tok::KwFor:
        unsupported_node("async for loops are not supported in script", at_async);
      case Tok::KwWith:
        unsupported_node("async with statements are not supported in script", at_async);
      default:
        fail("invalid syntax", at_async);
    }
  }

  // suite: simple_stmt | NEWLINE INDENT stmt+ DEDENT
  // `after` names the header for the error ("'if' statement on line 3").
  Body parse_suite(const std::string& after) {
    DepthGuard guard(depth_);
    nest();
    Body body;
    if (!at(Tok::Newline)) {
      parse_simple_stmt(body);
      return body;
    }
    advance();
    if (!at(Tok::Indent)) fail("expected an indented block after " + after, cur().range);
    advance();
    while (!at(Tok::Dedent) && !at(Tok::EndOfFile)) parse_statement(body);
    accept(Tok::Dedent);
    return body;
  }

  std::string header(const char* what, size_t begin) const {
    return fmt::format("{} on line {}", what, line_of(begin));
  }

  // if_stmt: 'if' test ':' suite ('elif' test ':' suite)* ['else' ':' suite]
  StmtPtr parse_if() {
    const size_t begin = start();
    advance();
    auto root = std::make_unique<If>(SourceRange());
    root->test = parse_test();
    expect_colon();
    root->body = parse_suite(header("'if' statement", begin));
    // The elif chain nests (each `elif` is an If alone in the orelse of the one before); it is
    // built in a loop, and each If spans from its keyword to the end of the whole chain.
    std::vector<std::pair<If*, size_t>> chain{{root.get(), begin}};
    DepthGuard guard(depth_);
    while (at(Tok::KwElif)) {
      nest();
      const size_t elif_begin = start();
      advance();
      auto elif = std::make_unique<If>(SourceRange());
      elif->test = parse_test();
      expect_colon();
      elif->body = parse_suite(header("'elif' statement", elif_begin));
      chain.emplace_back(elif.get(), elif_begin);
      chain[chain.size() - 2].first->orelse.push_back(std::move(elif));
    }
    if (at(Tok::KwElse)) {
      const size_t else_begin = start();
      advance();
      expect_colon();
      chain.back().first->orelse = parse_suite(header("'else' statement", else_begin));
    }
    for (auto& [node, node_begin] : chain) node->range = span(node_begin);
    return root;
  }

  void reject_loop_else() {
    if (at(Tok::KwElse))
      unsupported("else clauses on loops are not supported in script", cur().range);
  }

  // while_stmt: 'while' test ':' suite          (no 'else' clause in script)
  StmtPtr parse_while() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<While>(SourceRange());
    node->test = parse_test();
    expect_colon();
    node->body = parse_suite(header("'while' statement", begin));
    reject_loop_else();
    node->range = span(begin);
    return node;
  }

  // for_stmt: 'for' exprlist 'in' testlist ':' suite       (no 'else' clause in script)
  StmtPtr parse_for() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<For>(SourceRange());
    node->target = parse_exprlist();
    check_target(*node->target);
    expect(Tok::KwIn, "expected 'in'");
    node->iter = parse_testlist_star_expr();
    reject_lone_star(*node->iter);
    expect_colon();
    node->body = parse_suite(header("'for' statement", begin));
    reject_loop_else();
    node->range = span(begin);
    return node;
  }

  // with_stmt: 'with' ('(' with_item (',' with_item)* [','] ')' | with_item (',' with_item)*)
  //            ':' suite
  StmtPtr parse_with() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<With>(SourceRange());
    // `with (a as b, c):` and `with (a, b) as c:` both start with '(': try the parenthesized
    // item list, and read the header again as plain items unless a ':' follows its ')'.
    bool parenthesized = false;
    if (at(Tok::LParen)) {
      const Lexer saved_lexer = lexer_;
      const std::deque<Token> saved_ahead = ahead_;
      const size_t saved_end = last_end_;
      try {
        advance();
        size_t item = std::string::npos;
        while (!at(Tok::RParen)) {
          item = start();
          node->items.push_back(parse_with_item());
          if (!accept(Tok::Comma)) break;
        }
        close(Tok::RParen, item);
        parenthesized = at(Tok::Colon) && !node->items.empty();
      } catch (const CompileError&) {
      }
      if (!parenthesized) {
        lexer_ = saved_lexer;
        ahead_ = saved_ahead;
        last_end_ = saved_end;
        node->items.clear();
      }
    }
    if (!parenthesized) {
      do node->items.push_back(parse_with_item());
      while (accept(Tok::Comma));
    }
    expect_colon();
    node->body = parse_suite(header("'with' statement", begin));
    node->range = span(begin);
    return node;
  }

  // with_item: test ['as' expr]
  WithItem parse_with_item() {
    const size_t begin = start();
    WithItem item;
    item.context = parse_test();
    if (accept(Tok::KwAs)) {
      item.var = parse_bitor();
      check_target(*item.var);
    }
    item.range = span(begin);
    return item;
  }

  // decorated: decorator+ (funcdef | classdef)
  // decorator: '@' test NEWLINE
  StmtPtr parse_decorated() {
    std::vector<ExprPtr> decorators;
    while (accept(Tok::At)) {
      decorators.push_back(parse_test());
      if (!accept(Tok::Newline)) syntax_error();
    }
    if (at(Tok::KwDef)) return parse_def(std::move(decorators));
    if (at(Tok::KwClass)) return parse_class(std::move(decorators));
    if (at(Tok::KwAsync)) reject_async();
    syntax_error();
  }

  // funcdef: 'def' NAME parameters ['->' test] ':' suite
  // A function's range starts at 'def', after its decorators, as in Python's AST.
  StmtPtr parse_def(std::vector<ExprPtr> decorators) {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<FunctionDef>(SourceRange());
    node->decorators = std::move(decorators);
    Token name = expect(Tok::Identifier, "invalid syntax");
    node->name = std::move(name.text);
    node->name_range = name.range;
    parse_parameters(node->params);
    if (accept(Tok::Arrow)) node->returns = parse_test();
    expect_colon();
    node->body = parse_suite(header("function definition", begin));
    node->range = span(begin);
    return node;
  }

  // parameters: '(' [param (',' param)* [',']] ')'
  // param: NAME [':' test] ['=' test] | '*' [NAME [':' test]] | '**' NAME [':' test]
  // Order: positional, then '*' or *args, then keyword-only, then **kwargs.
  void parse_parameters(std::vector<Param>& params) {
    expect(Tok::LParen, "expected '('");
    bool seen_star = false, seen_default = false;
    while (!at(Tok::RParen)) {
      const size_t begin = start();
      Param p;
      if (at(Tok::Slash))
        unsupported("positional-only parameters ('/') are not supported in script", cur().range);
      if (accept(Tok::DoubleStar)) {
        p.kind = Param::VarKw;
      } else if (accept(Tok::Star)) {
        if (seen_star)
          fail("* argument may appear only once", SourceRange(source_, begin, last_end_));
        seen_star = true;
        if (!at(Tok::Identifier)) {  // a bare '*': keyword-only parameters follow
          if (!accept(Tok::Comma) || at(Tok::RParen) || at(Tok::DoubleStar)) {
            fail("named arguments must follow bare *", SourceRange(source_, begin, begin + 1));
          }
          continue;
        }
        p.kind = Param::VarArgs;
      } else {
        p.kind = seen_star ? Param::KwOnly : Param::Positional;
      }
      Token name = expect(Tok::Identifier, "invalid syntax");
      p.name = std::move(name.text);
      for (const Param& q : params) {
        if (q.name == p.name) {
          fail(fmt::format("duplicate argument '{}' in function definition", p.name), name.range);
        }
      }
      if (accept(Tok::Colon)) p.annotation = parse_test();
      if (at(Tok::Eq)) {
        if (p.kind == Param::VarArgs)
          fail("var-positional argument cannot have default value", cur().range);
        if (p.kind == Param::VarKw)
          fail("var-keyword argument cannot have default value", cur().range);
        advance();
        p.default_value = parse_test();
        if (p.kind == Param::Positional) seen_default = true;
      } else if (p.kind == Param::Positional && seen_default) {
        fail("parameter without a default follows parameter with a default", name.range);
      }
      p.range = span(begin);
      const bool var_kw = p.kind == Param::VarKw;
      params.push_back(std::move(p));
      if (!accept(Tok::Comma)) break;
      if (var_kw && !at(Tok::RParen))
        fail("arguments cannot follow var-keyword argument", cur().range);
    }
    close(Tok::RParen, std::string::npos);
  }

  // classdef: 'class' NAME ['(' [test (',' test)* [',']] ')'] ':' suite
  StmtPtr parse_class(std::vector<ExprPtr> decorators) {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<ClassDef>(SourceRange());
    node->decorators = std::move(decorators);
    node->name = expect(Tok::Identifier, "invalid syntax").text;
    if (accept(Tok::LParen)) {
      size_t item = std::string::npos;
      while (!at(Tok::RParen)) {
        item = start();
        node->bases.push_back(parse_test());
        if (at(Tok::Eq)) {
          unsupported("keyword arguments in class bases are not supported in script",
                      node->bases.back()->range);
        }
        if (!accept(Tok::Comma)) break;
      }
      close(Tok::RParen, item);
    }
    expect_colon();
    node->body = parse_suite(header("class definition", begin));
    node->range = span(begin);
    return node;
  }

  // simple_stmt: small_stmt (';' small_stmt)* [';'] NEWLINE
  void parse_simple_stmt(Body& out) {
    do {
      out.push_back(parse_small_stmt());
    } while (accept(Tok::Semi) && !at(Tok::Newline));
    if (!accept(Tok::Newline)) syntax_error();
  }

  bool at_statement_end() { return at(Tok::Newline) || at(Tok::Semi) || at(Tok::EndOfFile); }

  // small_stmt: expr_stmt | pass_stmt | break_stmt | continue_stmt | return_stmt | raise_stmt
  //           | assert_stmt | del_stmt | global_stmt | nonlocal_stmt | import_name | import_from
  StmtPtr parse_small_stmt() {
    const size_t begin = start();
    switch (cur().kind) {
      // pass_stmt: 'pass'    break_stmt: 'break'    continue_stmt: 'continue'
      case Tok::KwPass:
        advance();
        return std::make_unique<SimpleStmt>(StmtKind::Pass, span(begin));
      case Tok::KwBreak:
        advance();
        return std::make_unique<SimpleStmt>(StmtKind::Break, span(begin));
      case Tok::KwContinue:
        advance();
        return std::make_unique<SimpleStmt>(StmtKind::Continue, span(begin));
      case Tok::KwReturn:
        return parse_return();
      case Tok::KwRaise:
        return parse_raise();
      case Tok::KwAssert:
        return parse_assert();
      case Tok::KwDel:
        return parse_del();
      case Tok::KwGlobal:
        return parse_name_list(StmtKind::Global);
      case Tok::KwNonlocal:
        return parse_name_list(StmtKind::Nonlocal);
      case Tok::KwImport:
        return parse_import();
      case Tok::KwFrom:
        return parse_import_from();
      default:
        return parse_expr_stmt();
    }
  }

  // return_stmt: 'return' [testlist_star_expr]
  StmtPtr parse_return() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<Return>(SourceRange());
    if (!at_statement_end()) {
      node->value = parse_testlist_star_expr();
      reject_lone_star(*node->value);
    }
    node->range = span(begin);
    return node;
  }

  // raise_stmt: 'raise' [test]          ('raise ... from ...' is refused)
  StmtPtr parse_raise() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<Raise>(SourceRange());
    if (!at_statement_end()) node->exc = parse_test();
    if (at(Tok::KwFrom))
      unsupported("'raise ... from ...' is not supported in script", cur().range);
    node->range = span(begin);
    return node;
  }

  // assert_stmt: 'assert' test [',' test]
  StmtPtr parse_assert() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<Assert>(SourceRange());
    node->test = parse_test();
    if (accept(Tok::Comma)) node->msg = parse_test();
    node->range = span(begin);
    return node;
  }

  // del_stmt: 'del' (expr|star_expr) (',' (expr|star_expr))* [',']
  StmtPtr parse_del() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<Delete>(SourceRange());
    do {
      if (!node->targets.empty() && !starts_expression(cur().kind)) break;  // a trailing comma
      node->targets.push_back(parse_expr_or_star());
      check_target(*node->targets.back(), /*del=*/true);
    } while (accept(Tok::Comma));
    node->range = span(begin);
    return node;
  }

  // global_stmt: 'global' NAME (',' NAME)*       nonlocal_stmt: 'nonlocal' NAME (',' NAME)*
  StmtPtr parse_name_list(StmtKind kind) {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<NameList>(kind, SourceRange());
    do node->names.push_back(expect(Tok::Identifier, "invalid syntax").text);
    while (accept(Tok::Comma));
    node->range = span(begin);
    return node;
  }

  // dotted_name: NAME ('.' NAME)*
  std::string parse_dotted_name() {
    std::string name = expect(Tok::Identifier, "invalid syntax").text;
    while (accept(Tok::Dot)) name += "." + expect(Tok::Identifier, "invalid syntax").text;
    return name;
  }

  // import_name: 'import' dotted_as_name (',' dotted_as_name)*
  // dotted_as_name: dotted_name ['as' NAME]
  StmtPtr parse_import() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<Import>(SourceRange());
    do {
      const size_t alias_begin = start();
      Alias alias;
      alias.name = parse_dotted_name();
      if (accept(Tok::KwAs)) alias.asname = expect(Tok::Identifier, "invalid syntax").text;
      alias.range = span(alias_begin);
      node->names.push_back(std::move(alias));
    } while (accept(Tok::Comma));
    node->range = span(begin);
    return node;
  }

  // import_from: 'from' ('.' | '...')* dotted_name 'import' import_targets
  //            | 'from' ('.' | '...')+ 'import' import_targets
  // import_targets: '*' | '(' import_as_names [','] ')' | import_as_names
  // import_as_names: NAME ['as' NAME] (',' NAME ['as' NAME])*
  StmtPtr parse_import_from() {
    const size_t begin = start();
    advance();
    auto node = std::make_unique<ImportFrom>(SourceRange());
    for (;;) {
      if (accept(Tok::Dot)) {
        node->module += ".";
      } else if (accept(Tok::Ellipsis)) {
        node->module += "...";
      } else {
        break;
      }
    }
    if (at(Tok::Identifier) || node->module.empty()) node->module += parse_dotted_name();
    expect(Tok::KwImport, "invalid syntax");
    if (at(Tok::Star)) {
      const Token star = advance();
      node->names.push_back(Alias{"*", "", star.range});
    } else {
      const bool parenthesized = accept(Tok::LParen);
      do {
        if (parenthesized && at(Tok::RParen) && !node->names.empty()) break;
        const size_t alias_begin = start();
        Alias alias;
        alias.name = expect(Tok::Identifier, "invalid syntax").text;
        if (accept(Tok::KwAs)) alias.asname = expect(Tok::Identifier, "invalid syntax").text;
        alias.range = span(alias_begin);
        node->names.push_back(std::move(alias));
        if (!parenthesized && at(Tok::Comma) &&
            (peek(1).kind == Tok::Newline || peek(1).kind == Tok::Semi)) {
          fail("trailing comma not allowed without surrounding parentheses", cur().range);
        }
      } while (accept(Tok::Comma));
      if (parenthesized) close(Tok::RParen, std::string::npos);
    }
    node->range = span(begin);
    return node;
  }

  // expr_stmt: testlist_star_expr (annassign | augassign testlist | ('=' testlist_star_expr)*)
  // annassign: ':' test ['=' testlist_star_expr]
  StmtPtr parse_expr_stmt() {
    const size_t begin = start();
    ExprPtr first = parse_testlist_star_expr();
    if (at(Tok::Colon)) {
      if (first->kind == ExprKind::Tuple || first->kind == ExprKind::List) {
        fail(fmt::format("only single target (not {}) can be annotated", describe(*first)),
             first->range);
      }
      if (first->kind != ExprKind::Name && first->kind != ExprKind::Attribute &&
          first->kind != ExprKind::Subscript) {
        fail("illegal target for annotation", first->range);
      }
      check_target(*first);
      advance();
      auto node = std::make_unique<AnnAssign>(SourceRange());
      node->target = std::move(first);
      node->annotation = parse_test();
      if (accept(Tok::Eq)) {
        node->value = parse_testlist_star_expr();
        reject_lone_star(*node->value);
      }
      node->range = span(begin);
      return node;
    }
    if (const std::optional<BinOpKind> op = augmented_op(cur().kind)) {
      if ((first->kind != ExprKind::Name || is_ellipsis(*first)) &&
          first->kind != ExprKind::Attribute && first->kind != ExprKind::Subscript) {
        fail(
            fmt::format("'{}' is an illegal expression for augmented assignment", describe(*first)),
            first->range);
      }
      advance();
      auto node = std::make_unique<AugAssign>(SourceRange());
      node->target = std::move(first);
      node->op = *op;
      node->value = parse_testlist_star_expr();
      reject_lone_star(*node->value);
      node->range = span(begin);
      return node;
    }
    if (at(Tok::Eq)) {
      auto node = std::make_unique<Assign>(SourceRange());
      node->targets.push_back(std::move(first));
      while (accept(Tok::Eq)) node->targets.push_back(parse_testlist_star_expr());
      node->value = std::move(node->targets.back());
      node->targets.pop_back();
      reject_lone_star(*node->value);
      for (const ExprPtr& t : node->targets) {
        if (t->kind == ExprKind::Starred) {
          fail("starred assignment target must be in a list or tuple", t->range);
        }
        check_target(*t);
      }
      node->range = span(begin);
      return node;
    }
    reject_lone_star(*first);
    return std::make_unique<ExprStmt>(std::move(first), span(begin));
  }

  // ---- Expressions -----------------------------------------------------------------------------

  // testlist_star_expr: (test|star_expr) (',' (test|star_expr))* [',']
  // A comma makes a tuple; its range includes a trailing comma.
  ExprPtr parse_testlist_star_expr() {
    return parse_list_of([this] { return parse_test_or_star(); });
  }

  // exprlist: (expr|star_expr) (',' (expr|star_expr))* [',']
  ExprPtr parse_exprlist() {
    return parse_list_of([this] { return parse_expr_or_star(); });
  }

  template <typename ParseItem>
  ExprPtr parse_list_of(ParseItem parse_item) {
    const size_t begin = start();
    ExprPtr first = parse_item();
    if (!at(Tok::Comma)) return first;
    auto tuple = std::make_unique<TupleExpr>(SourceRange());
    tuple->elts.push_back(std::move(first));
    while (accept(Tok::Comma) && starts_expression(cur().kind)) tuple->elts.push_back(parse_item());
    tuple->range = span(begin);
    return tuple;
  }

  ExprPtr parse_test_or_star() { return at(Tok::Star) ? parse_star_expr() : parse_test(); }
  ExprPtr parse_expr_or_star() { return at(Tok::Star) ? parse_star_expr() : parse_bitor(); }

  // star_expr: '*' expr
  ExprPtr parse_star_expr() {
    const size_t begin = start();
    advance();
    ExprPtr value = parse_bitor();
    return std::make_unique<Starred>(std::move(value), span(begin));
  }

  // test: or_test ['if' or_test 'else' test]      (lambda and ':=' are refused)
  ExprPtr parse_test() {
    if (at(Tok::KwLambda)) unsupported_node("lambda is not supported in script", cur().range);
    const size_t begin = start();
    ExprPtr body = parse_or_test();
    if (at(Tok::KwIf)) {
      DepthGuard guard(depth_);
      nest();
      advance();
      auto node = std::make_unique<IfExp>(SourceRange());
      node->body = std::move(body);
      node->test = parse_or_test();
      if (!accept(Tok::KwElse)) fail("expected 'else' after 'if' expression", cur().range);
      node->orelse = parse_test();
      node->range = span(begin);
      body = std::move(node);
    }
    if (at(Tok::Walrus))
      unsupported_node("assignment expressions (':=') are not supported in script", cur().range);
    return body;
  }

  // or_test: and_test ('or' and_test)*       and_test: not_test ('and' not_test)*
  ExprPtr parse_or_test() { return parse_bool_op(Tok::KwOr); }
  ExprPtr parse_and_test() { return parse_bool_op(Tok::KwAnd); }

  ExprPtr parse_bool_op(Tok keyword) {
    const bool is_and = keyword == Tok::KwAnd;
    const auto operand = [&] { return is_and ? parse_not_test() : parse_and_test(); };
    const size_t begin = start();
    ExprPtr first = operand();
    if (!at(keyword)) return first;
    auto node = std::make_unique<BoolOp>(is_and, SourceRange());
    node->values.push_back(std::move(first));
    while (accept(keyword)) node->values.push_back(operand());
    node->range = span(begin);
    return node;
  }

  // not_test: 'not' not_test | comparison
  ExprPtr parse_not_test() {
    if (!at(Tok::KwNot)) return parse_comparison();
    const size_t begin = start();
    DepthGuard guard(depth_);
    nest();
    advance();
    ExprPtr operand = parse_not_test();
    return std::make_unique<UnaryOp>(UnaryOpKind::Not, std::move(operand), span(begin));
  }

  // comparison: expr (comp_op expr)*
  // comp_op: '<' | '>' | '==' | '>=' | '<=' | '!=' | 'in' | 'not' 'in' | 'is' | 'is' 'not'
  ExprPtr parse_comparison() {
    const size_t begin = start();
    ExprPtr left = parse_bitor();
    std::unique_ptr<Compare> node;
    while (const std::optional<CmpOpKind> op = parse_comp_op()) {
      if (!node) node = std::make_unique<Compare>(std::move(left), SourceRange());
      node->ops.push_back(*op);
      node->comparators.push_back(parse_bitor());
    }
    if (!node) return left;
    node->range = span(begin);
    return node;
  }

  std::optional<CmpOpKind> parse_comp_op() {
    std::optional<CmpOpKind> op;
    switch (cur().kind) {
      case Tok::Lt:
        op = CmpOpKind::Lt;
        break;
      case Tok::Gt:
        op = CmpOpKind::Gt;
        break;
      case Tok::EqEq:
        op = CmpOpKind::Eq;
        break;
      case Tok::GtE:
        op = CmpOpKind::GtE;
        break;
      case Tok::LtE:
        op = CmpOpKind::LtE;
        break;
      case Tok::NotEq:
        op = CmpOpKind::NotEq;
        break;
      case Tok::KwIn:
        op = CmpOpKind::In;
        break;
      case Tok::KwIs:
        advance();
        return accept(Tok::KwNot) ? CmpOpKind::IsNot : CmpOpKind::Is;
      case Tok::KwNot:
        if (peek(1).kind != Tok::KwIn) return std::nullopt;
        advance();
        op = CmpOpKind::NotIn;
        break;
      default:
        return std::nullopt;
    }
    advance();
    return op;
  }

  // expr: xor_expr ('|' xor_expr)*           xor_expr: and_expr ('^' and_expr)*
  // and_expr: shift_expr ('&' shift_expr)*   shift_expr: arith_expr (('<<'|'>>') arith_expr)*
  // arith_expr: term (('+'|'-') term)*       term: factor (('*'|'@'|'/'|'%'|'//') factor)*
  ExprPtr parse_bitor() { return parse_binary(1); }

  // The operators binding at least as tightly as `min_precedence` (Note [Operator precedence]).
  ExprPtr parse_binary(int min_precedence) {
    const size_t begin = start();
    ExprPtr lhs = parse_factor();
    DepthGuard guard(depth_);
    for (;;) {
      const std::optional<BinaryOp> op = binary_op(cur().kind);
      if (!op || op->precedence < min_precedence) return lhs;
      advance();
      ExprPtr rhs = parse_binary(op->precedence + 1);
      nest();
      lhs = std::make_unique<BinOp>(op->op, std::move(lhs), std::move(rhs), span(begin));
    }
  }

  // factor: ('+' | '-' | '~') factor | power
  ExprPtr parse_factor() {
    UnaryOpKind op;
    switch (cur().kind) {
      case Tok::Plus:
        op = UnaryOpKind::Pos;
        break;
      case Tok::Minus:
        op = UnaryOpKind::Neg;
        break;
      case Tok::Tilde:
        op = UnaryOpKind::Invert;
        break;
      default:
        return parse_power();
    }
    const size_t begin = start();
    DepthGuard guard(depth_);
    nest();
    advance();
    ExprPtr operand = parse_factor();
    return std::make_unique<UnaryOp>(op, std::move(operand), span(begin));
  }

  // power: primary ['**' factor]              ('await' is refused)
  ExprPtr parse_power() {
    if (at(Tok::KwAwait)) unsupported_node("await is not supported in script", cur().range);
    const size_t begin = start();
    ExprPtr base = parse_primary();
    if (!accept(Tok::DoubleStar)) return base;
    DepthGuard guard(depth_);
    nest();
    ExprPtr exponent = parse_factor();
    return std::make_unique<BinOp>(BinOpKind::Pow, std::move(base), std::move(exponent),
                                   span(begin));
  }

  // primary: atom trailer*
  // trailer: '(' [arglist] ')' | '[' subscriptlist ']' | '.' NAME
  ExprPtr parse_primary() {
    const size_t begin = start();
    ExprPtr e = parse_atom();
    DepthGuard guard(depth_);
    for (;;) {
      if (at(Tok::LParen)) {
        nest();
        e = parse_call(std::move(e), begin);
      } else if (at(Tok::LBracket)) {
        nest();
        e = parse_subscript(std::move(e), begin);
      } else if (at(Tok::Dot)) {
        nest();
        advance();
        Token name = expect(Tok::Identifier, "invalid syntax");
        auto attr = std::make_unique<Attribute>(std::move(e), std::move(name.text), span(begin));
        attr->attr_range = name.range;
        e = std::move(attr);
      } else {
        return e;
      }
    }
  }

  // arglist: argument (',' argument)* [',']
  // argument: test | NAME '=' test | '*' test       ('**' unpacking and generators are refused)
  ExprPtr parse_call(ExprPtr func, size_t begin) {
    advance();
    auto call = std::make_unique<Call>(std::move(func), SourceRange());
    size_t item = std::string::npos;
    while (!at(Tok::RParen)) {
      item = start();
      if (at(Tok::DoubleStar))
        unsupported("'**' argument unpacking is not supported in script", cur().range);
      if (accept(Tok::Star)) {
        ExprPtr value = parse_test();
        call->args.push_back(std::make_unique<Starred>(std::move(value), span(item)));
      } else {
        ExprPtr value = parse_test();
        if (at(Tok::KwFor) || at(Tok::KwAsync)) {  // f(x for x in xs): a generator, as a list
          value = parse_list_comp(std::move(value), item, Tok::EndOfFile);
          if (!at(Tok::RParen) || !call->args.empty() || !call->keywords.empty()) {
            fail("Generator expression must be parenthesized", value->range);
          }
        }
        if (at(Tok::Eq)) {
          if (value->kind == ExprKind::Bool || value->kind == ExprKind::None) {
            fail(fmt::format("cannot assign to {}", describe(*value)), value->range);
          }
          if (value->kind != ExprKind::Name || is_ellipsis(*value)) {
            fail("expression cannot contain assignment, perhaps you meant \"==\"?",
                 SourceRange(source_, item, cur().range.end));
          }
          advance();
          Keyword kw;
          kw.name = std::move(value->as<Name>().id);
          for (const Keyword& other : call->keywords) {
            if (other.name == kw.name) {
              fail(fmt::format("keyword argument repeated: {}", kw.name), value->range);
            }
          }
          kw.value = parse_test();
          kw.range = span(item);
          call->keywords.push_back(std::move(kw));
        } else {
          if (!call->keywords.empty())
            fail("positional argument follows keyword argument", value->range);
          call->args.push_back(std::move(value));
        }
      }
      if (!accept(Tok::Comma)) break;
    }
    close(Tok::RParen, item);
    call->range = span(begin);
    return call;
  }

  // subscriptlist: subscript (',' subscript)* [',']
  ExprPtr parse_subscript(ExprPtr value, size_t begin) {
    advance();
    auto sub = std::make_unique<Subscript>(std::move(value), SourceRange());
    size_t item = std::string::npos;
    while (!at(Tok::RBracket)) {
      item = start();
      sub->indices.push_back(parse_slice_or_test());
      if (!accept(Tok::Comma)) break;
    }
    if (sub->indices.empty()) syntax_error();
    close(Tok::RBracket, item);
    sub->range = span(begin);
    return sub;
  }

  // subscript: test | [test] ':' [test] [':' [test]]
  ExprPtr parse_slice_or_test() {
    const size_t begin = start();
    ExprPtr lower;
    if (!at(Tok::Colon)) {
      lower = parse_test();
      if (!at(Tok::Colon)) return lower;
    }
    advance();
    auto slice = std::make_unique<Slice>(SourceRange());
    slice->lower = std::move(lower);
    const auto bound_follows = [&] {
      return !at(Tok::Colon) && !at(Tok::Comma) && !at(Tok::RBracket);
    };
    if (bound_follows()) slice->upper = parse_test();
    if (accept(Tok::Colon) && bound_follows()) slice->step = parse_test();
    slice->range = span(begin);
    return slice;
  }

  // atom: '(' ... ')' | '[' ... ']' | '{' ... '}' | NAME | NUMBER | STRING+ | '...'
  //     | 'None' | 'True' | 'False'
  ExprPtr parse_atom() {
    const size_t begin = start();
    switch (cur().kind) {
      case Tok::Identifier: {
        Token t = advance();
        return std::make_unique<Name>(std::move(t.text), t.range);
      }
      case Tok::Int: {
        const Token t = advance();
        return std::make_unique<IntLit>(t.int_value, t.range);
      }
      case Tok::Float: {
        const Token t = advance();
        return std::make_unique<FloatLit>(t.float_value, t.range);
      }
      case Tok::String:
      case Tok::FString: {  // adjacent literals concatenate
        std::vector<Token> parts;
        std::vector<ExprPtr> fields;
        bool formatted = false;
        while (at(Tok::String) || at(Tok::FString)) {
          parts.push_back(advance());
          formatted |= parts.back().kind == Tok::FString;
          for (const auto& [b, e] : parts.back().fields)
            fields.push_back(Parser(source_, b, e, depth_).parse_field());
        }
        std::string value;
        for (const Token& t : parts) {
          if (!formatted || t.kind == Tok::FString) {
            value += t.text;
            continue;
          }
          for (char c : t.text) {  // a plain literal inside a format string: braces doubled
            value += c;
            if (c == '{' || c == '}') value += c;
          }
        }
        if (!formatted) return std::make_unique<StrLit>(std::move(value), span(begin));
        // Note [f-strings]: "text".format(fields...)
        const SourceRange whole = span(begin);
        auto format = std::make_unique<Attribute>(std::make_unique<StrLit>(std::move(value), whole),
                                                  "format", whole);
        format->attr_range = whole;
        auto call = std::make_unique<Call>(std::move(format), whole);
        call->args = std::move(fields);
        return call;
      }
      case Tok::KwNone:
        return std::make_unique<NoneLit>(advance().range);
      case Tok::KwTrue:
        return std::make_unique<BoolLit>(true, advance().range);
      case Tok::KwFalse:
        return std::make_unique<BoolLit>(false, advance().range);
      case Tok::Ellipsis:
        return std::make_unique<Name>("Ellipsis", advance().range);
      case Tok::LParen:
        return parse_paren();
      case Tok::LBracket:
        return parse_list();
      case Tok::LBrace:
        return parse_dict();
      case Tok::KwYield:
        unsupported_node("yield is not supported in script", cur().range);
      case Tok::KwLambda:
        unsupported_node("lambda is not supported in script", cur().range);
      case Tok::KwAwait:
        unsupported_node("await is not supported in script", cur().range);
      default:
        syntax_error();
    }
  }

  // '(' [(test|star_expr) (',' (test|star_expr))* [',']] ')'
  // A parenthesized expression is the expression itself (its range excludes the parentheses);
  // a tuple's range includes them. Generator expressions are refused.
  ExprPtr parse_paren() {
    const size_t begin = start();
    DepthGuard guard(depth_);
    nest();
    advance();
    if (accept(Tok::RParen)) return std::make_unique<TupleExpr>(span(begin));
    if (at(Tok::KwYield)) unsupported_node("yield is not supported in script", cur().range);
    size_t item = start();
    ExprPtr first = parse_test_or_star();
    if (at(Tok::KwFor) || at(Tok::KwAsync))
      return parse_list_comp(std::move(first), begin, Tok::RParen);
    if (!at(Tok::Comma)) {
      close(Tok::RParen, item);
      if (first->kind == ExprKind::Starred)
        fail("cannot use starred expression here", first->range);
      return first;
    }
    auto tuple = std::make_unique<TupleExpr>(SourceRange());
    tuple->elts.push_back(std::move(first));
    while (accept(Tok::Comma) && !at(Tok::RParen)) {
      item = start();
      tuple->elts.push_back(parse_test_or_star());
    }
    close(Tok::RParen, item);
    tuple->range = span(begin);
    return tuple;
  }

  // '[' [(test|star_expr) (comp_for | (',' (test|star_expr))* [','])] ']'
  ExprPtr parse_list() {
    const size_t begin = start();
    DepthGuard guard(depth_);
    nest();
    advance();
    auto list = std::make_unique<ListExpr>(SourceRange());
    size_t item = std::string::npos;
    if (!at(Tok::RBracket)) {
      item = start();
      ExprPtr first = parse_test_or_star();
      if (at(Tok::KwFor) || at(Tok::KwAsync))
        return parse_list_comp(std::move(first), begin, Tok::RBracket);
      list->elts.push_back(std::move(first));
      while (accept(Tok::Comma) && !at(Tok::RBracket)) {
        item = start();
        list->elts.push_back(parse_test_or_star());
      }
    }
    close(Tok::RBracket, item);
    list->range = span(begin);
    return list;
  }

  // comp_for: 'for' exprlist 'in' or_test ('if' or_test)*      (one 'for' only)
  // A generator expression is a list comprehension, as in torch's frontend: `closer` is ']', or
  // ')' for `(x for ...)`, or EndOfFile for a call's sole argument (the call closes it).
  ExprPtr parse_list_comp(ExprPtr elt, size_t begin, Tok closer) {
    if (at(Tok::KwAsync))
      unsupported_node("asynchronous comprehensions are not supported in script", cur().range);
    if (elt->kind == ExprKind::Starred) {
      fail("iterable unpacking cannot be used in comprehension", elt->range);
    }
    auto comp = std::make_unique<ListComp>(SourceRange());
    comp->elt = std::move(elt);
    parse_comp_for(comp->target, comp->iter, comp->conds);
    if (closer != Tok::EndOfFile) close(closer, std::string::npos);
    comp->range = span(begin);
    return comp;
  }

  // The `for target in iter (if cond)*` of a comprehension, at its `for` (one `for` only).
  void parse_comp_for(ExprPtr& target, ExprPtr& iter, std::vector<ExprPtr>& conds) {
    advance();
    target = parse_exprlist();
    check_target(*target);
    expect(Tok::KwIn, "expected 'in'");
    iter = parse_or_test();
    while (accept(Tok::KwIf)) conds.push_back(parse_or_test());
    if (at(Tok::KwFor) || at(Tok::KwAsync)) {
      unsupported("nested comprehension loops are not supported", cur().range);
    }
  }

  // '{' test ':' test comp_for '}' (one 'for' only, as list comprehensions)
  ExprPtr parse_dict_comp(DictExpr& first, size_t begin) {
    if (at(Tok::KwAsync))
      unsupported_node("asynchronous comprehensions are not supported in script", cur().range);
    auto comp = std::make_unique<DictComp>(SourceRange());
    comp->key = std::move(first.keys[0]);
    comp->value = std::move(first.values[0]);
    parse_comp_for(comp->target, comp->iter, comp->conds);
    close(Tok::RBrace, std::string::npos);
    comp->range = span(begin);
    return comp;
  }

  // '{' [test ':' test (',' test ':' test)* [',']] '}'
  // (set displays and '**' unpacking are refused)
  ExprPtr parse_dict() {
    const size_t begin = start();
    DepthGuard guard(depth_);
    nest();
    advance();
    auto dict = std::make_unique<DictExpr>(SourceRange());
    size_t item = std::string::npos;
    while (!at(Tok::RBrace)) {
      item = start();
      if (at(Tok::DoubleStar))
        unsupported("dict unpacking ('**') is not supported in script", cur().range);
      dict->keys.push_back(parse_test());
      if (dict->keys.size() == 1 && at(Tok::KwFor)) {
        unsupported_node("set comprehensions are not supported in script", cur().range);
      }
      if (dict->keys.size() == 1 && (at(Tok::Comma) || at(Tok::RBrace))) {
        unsupported_node("set literals are not supported in script",
                         SourceRange(source_, begin, cur().range.end));
      }
      expect(Tok::Colon, "':' expected after dictionary key");
      dict->values.push_back(parse_test());
      if (dict->keys.size() == 1 && at(Tok::KwFor)) return parse_dict_comp(*dict, begin);
      if (!accept(Tok::Comma)) break;
    }
    close(Tok::RBrace, item);
    dict->range = span(begin);
    return dict;
  }

  std::shared_ptr<const Source> source_;
  Lexer lexer_;
  std::deque<Token> ahead_;  // tokens looked at but not consumed
  size_t last_end_ = 0;      // end of the last non-layout token consumed
  int depth_ = 0;            // Note [Nesting limit]
};

}  // namespace

std::unique_ptr<Module> parse_module(std::shared_ptr<const Source> source) {
  return Parser(std::move(source)).parse_file();
}

}  // namespace ampjit::script
