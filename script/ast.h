// The AST of the TorchScript language subset: what the parser produces and the compiler reads.
// Every node carries the SourceRange of its text, so every diagnostic can point at it. Nodes are
// plain structs owned through unique_ptr; `kind` tells which struct a node is (use `as<T>()`).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "runtime/ir/source_range.h"

namespace ampjit::script {

// ---- Expressions -------------------------------------------------------------------------------

enum class ExprKind {
  Name,       // x
  Int,        // 3, 0x10, 1_000
  Float,      // 1.5, 1e-3, 2.
  Str,        // "s", 's', """s""", adjacent literals concatenated
  Bool,       // True, False
  None,       // None
  Attribute,  // value.attr
  Call,       // func(args, name=value)
  Subscript,  // value[i], value[i, j], value[a:b]
  Slice,      // a:b:c inside a subscript (any part may be missing)
  BinOp,      // a + b
  UnaryOp,    // -a, +a, not a, ~a
  BoolOp,     // a and b and c / a or b
  Compare,    // a < b <= c, a is None, a in b
  IfExp,      // a if c else b
  List,       // [a, b]
  Tuple,      // (a, b), a, b
  Dict,       // {k: v}
  ListComp,   // [elt for target in iter if cond]
  DictComp,   // {key: value for target in iter if cond}
  Starred,    // *a (in calls)
};

struct Expr {
  ExprKind kind;
  SourceRange range;
  explicit Expr(ExprKind k, SourceRange r = {}) : kind(k), range(std::move(r)) {}
  virtual ~Expr() = default;
  template <typename T>
  T& as() {
    return static_cast<T&>(*this);
  }
  template <typename T>
  const T& as() const {
    return static_cast<const T&>(*this);
  }
};
using ExprPtr = std::unique_ptr<Expr>;

struct Name : Expr {
  std::string id;
  Name(std::string i, SourceRange r) : Expr(ExprKind::Name, std::move(r)), id(std::move(i)) {}
};
struct IntLit : Expr {
  int64_t value;
  IntLit(int64_t v, SourceRange r) : Expr(ExprKind::Int, std::move(r)), value(v) {}
};
struct FloatLit : Expr {
  double value;
  FloatLit(double v, SourceRange r) : Expr(ExprKind::Float, std::move(r)), value(v) {}
};
struct StrLit : Expr {
  std::string value;  // escapes already decoded
  StrLit(std::string v, SourceRange r) : Expr(ExprKind::Str, std::move(r)), value(std::move(v)) {}
};
struct BoolLit : Expr {
  bool value;
  BoolLit(bool v, SourceRange r) : Expr(ExprKind::Bool, std::move(r)), value(v) {}
};
struct NoneLit : Expr {
  explicit NoneLit(SourceRange r) : Expr(ExprKind::None, std::move(r)) {}
};
struct Attribute : Expr {
  ExprPtr value;
  std::string attr;
  SourceRange attr_range;  // the range of the attribute name alone
  Attribute(ExprPtr v, std::string a, SourceRange r)
      : Expr(ExprKind::Attribute, std::move(r)), value(std::move(v)), attr(std::move(a)) {}
};
struct Keyword {
  std::string name;
  ExprPtr value;
  SourceRange range;  // `name=value`
};
struct Call : Expr {
  ExprPtr func;
  std::vector<ExprPtr> args;  // may contain Starred
  std::vector<Keyword> keywords;
  Call(ExprPtr f, SourceRange r) : Expr(ExprKind::Call, std::move(r)), func(std::move(f)) {}
};
struct Slice : Expr {
  ExprPtr lower, upper, step;  // each may be null
  explicit Slice(SourceRange r) : Expr(ExprKind::Slice, std::move(r)) {}
};
struct Subscript : Expr {
  ExprPtr value;
  std::vector<ExprPtr> indices;  // one per comma-separated index; an index may be a Slice
  Subscript(ExprPtr v, SourceRange r)
      : Expr(ExprKind::Subscript, std::move(r)), value(std::move(v)) {}
};

enum class BinOpKind {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  Mod,
  Pow,
  MatMul,
  BitAnd,
  BitOr,
  BitXor,
  LShift,
  RShift
};
const char* binop_str(BinOpKind k);  // "+", "-", ...

struct BinOp : Expr {
  BinOpKind op;
  ExprPtr lhs, rhs;
  BinOp(BinOpKind o, ExprPtr l, ExprPtr rr, SourceRange r)
      : Expr(ExprKind::BinOp, std::move(r)), op(o), lhs(std::move(l)), rhs(std::move(rr)) {}
};

enum class UnaryOpKind { Neg, Pos, Not, Invert };
struct UnaryOp : Expr {
  UnaryOpKind op;
  ExprPtr operand;
  UnaryOp(UnaryOpKind o, ExprPtr e, SourceRange r)
      : Expr(ExprKind::UnaryOp, std::move(r)), op(o), operand(std::move(e)) {}
};

struct BoolOp : Expr {
  bool is_and;
  std::vector<ExprPtr> values;  // two or more
  BoolOp(bool a, SourceRange r) : Expr(ExprKind::BoolOp, std::move(r)), is_and(a) {}
};

enum class CmpOpKind { Eq, NotEq, Lt, LtE, Gt, GtE, Is, IsNot, In, NotIn };
const char* cmpop_str(CmpOpKind k);  // "==", "is not", ...

struct Compare : Expr {
  ExprPtr left;
  std::vector<CmpOpKind> ops;
  std::vector<ExprPtr> comparators;  // same length as ops: a < b < c is ops {Lt, Lt}, {b, c}
  Compare(ExprPtr l, SourceRange r) : Expr(ExprKind::Compare, std::move(r)), left(std::move(l)) {}
};
struct IfExp : Expr {
  ExprPtr test, body, orelse;
  explicit IfExp(SourceRange r) : Expr(ExprKind::IfExp, std::move(r)) {}
};
struct ListExpr : Expr {
  std::vector<ExprPtr> elts;
  explicit ListExpr(SourceRange r) : Expr(ExprKind::List, std::move(r)) {}
};
struct TupleExpr : Expr {
  std::vector<ExprPtr> elts;
  explicit TupleExpr(SourceRange r) : Expr(ExprKind::Tuple, std::move(r)) {}
};
struct DictExpr : Expr {
  std::vector<ExprPtr> keys, values;
  explicit DictExpr(SourceRange r) : Expr(ExprKind::Dict, std::move(r)) {}
};
struct ListComp : Expr {
  ExprPtr elt;
  ExprPtr target;  // a Name or a Tuple of Names
  ExprPtr iter;
  std::vector<ExprPtr> conds;  // `if` clauses
  explicit ListComp(SourceRange r) : Expr(ExprKind::ListComp, std::move(r)) {}
};
struct DictComp : Expr {
  ExprPtr key, value;
  ExprPtr target;  // a Name or a Tuple of Names
  ExprPtr iter;
  std::vector<ExprPtr> conds;  // `if` clauses
  explicit DictComp(SourceRange r) : Expr(ExprKind::DictComp, std::move(r)) {}
};
struct Starred : Expr {
  ExprPtr value;
  Starred(ExprPtr v, SourceRange r) : Expr(ExprKind::Starred, std::move(r)), value(std::move(v)) {}
};

// ---- Statements --------------------------------------------------------------------------------

enum class StmtKind {
  Expr,
  Assign,
  AugAssign,
  AnnAssign,
  If,
  For,
  While,
  Break,
  Continue,
  Return,
  Pass,
  Assert,
  Raise,
  With,
  FunctionDef,
  ClassDef,
  Import,
  ImportFrom,
  Global,
  Nonlocal,
  Delete,
};

struct Stmt {
  StmtKind kind;
  SourceRange range;
  explicit Stmt(StmtKind k, SourceRange r = {}) : kind(k), range(std::move(r)) {}
  virtual ~Stmt() = default;
  template <typename T>
  T& as() {
    return static_cast<T&>(*this);
  }
  template <typename T>
  const T& as() const {
    return static_cast<const T&>(*this);
  }
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct ExprStmt : Stmt {
  ExprPtr value;
  ExprStmt(ExprPtr v, SourceRange r) : Stmt(StmtKind::Expr, std::move(r)), value(std::move(v)) {}
};
struct Assign : Stmt {
  std::vector<ExprPtr> targets;  // a = b = value: {a, b}; a target may be a Tuple/List (unpacking),
                                 // Subscript, Attribute, Starred
  ExprPtr value;
  explicit Assign(SourceRange r) : Stmt(StmtKind::Assign, std::move(r)) {}
};
struct AugAssign : Stmt {
  ExprPtr target;
  BinOpKind op;
  ExprPtr value;
  explicit AugAssign(SourceRange r) : Stmt(StmtKind::AugAssign, std::move(r)) {}
};
struct AnnAssign : Stmt {
  ExprPtr target;
  ExprPtr annotation;
  ExprPtr value;  // may be null
  explicit AnnAssign(SourceRange r) : Stmt(StmtKind::AnnAssign, std::move(r)) {}
};
struct If : Stmt {
  ExprPtr test;
  Body body, orelse;  // `elif` is an If alone in orelse
  explicit If(SourceRange r) : Stmt(StmtKind::If, std::move(r)) {}
};
struct For : Stmt {
  ExprPtr target;
  ExprPtr iter;
  Body body;
  explicit For(SourceRange r) : Stmt(StmtKind::For, std::move(r)) {}
};
struct While : Stmt {
  ExprPtr test;
  Body body;
  explicit While(SourceRange r) : Stmt(StmtKind::While, std::move(r)) {}
};
struct Return : Stmt {
  ExprPtr value;  // may be null
  explicit Return(SourceRange r) : Stmt(StmtKind::Return, std::move(r)) {}
};
struct Assert : Stmt {
  ExprPtr test, msg;  // msg may be null
  explicit Assert(SourceRange r) : Stmt(StmtKind::Assert, std::move(r)) {}
};
struct Raise : Stmt {
  ExprPtr exc;  // may be null (bare raise)
  explicit Raise(SourceRange r) : Stmt(StmtKind::Raise, std::move(r)) {}
};
struct WithItem {
  ExprPtr context;
  ExprPtr var;  // `as` target, may be null
  SourceRange range;
};
struct With : Stmt {
  std::vector<WithItem> items;
  Body body;
  explicit With(SourceRange r) : Stmt(StmtKind::With, std::move(r)) {}
};
struct Param {
  std::string name;
  ExprPtr annotation;     // may be null
  ExprPtr default_value;  // may be null
  SourceRange range;
  enum Kind {
    Positional,
    VarArgs,
    KwOnly,
    VarKw
  } kind = Positional;  // *args, keyword-only, **kwargs
};
struct FunctionDef : Stmt {
  std::string name;
  std::vector<Param> params;
  ExprPtr returns;  // may be null
  Body body;
  std::vector<ExprPtr> decorators;
  SourceRange name_range;
  explicit FunctionDef(SourceRange r) : Stmt(StmtKind::FunctionDef, std::move(r)) {}
};
struct ClassDef : Stmt {
  std::string name;
  std::vector<ExprPtr> bases;
  Body body;
  std::vector<ExprPtr> decorators;
  explicit ClassDef(SourceRange r) : Stmt(StmtKind::ClassDef, std::move(r)) {}
};
struct Alias {
  std::string name;    // "torch.nn.functional" or "autocast"
  std::string asname;  // "" when absent
  SourceRange range;
};
struct Import : Stmt {
  std::vector<Alias> names;
  explicit Import(SourceRange r) : Stmt(StmtKind::Import, std::move(r)) {}
};
struct ImportFrom : Stmt {
  std::string module;  // "ampjit.amp" (leading dots kept for relative imports)
  std::vector<Alias> names;
  explicit ImportFrom(SourceRange r) : Stmt(StmtKind::ImportFrom, std::move(r)) {}
};
struct NameList : Stmt {  // global / nonlocal
  std::vector<std::string> names;
  NameList(StmtKind k, SourceRange r) : Stmt(k, std::move(r)) {}
};
struct Delete : Stmt {
  std::vector<ExprPtr> targets;
  explicit Delete(SourceRange r) : Stmt(StmtKind::Delete, std::move(r)) {}
};
struct SimpleStmt : Stmt {  // pass, break, continue
  SimpleStmt(StmtKind k, SourceRange r) : Stmt(k, std::move(r)) {}
};

// A parsed file (or one function's source): its statements and the Source they point into.
struct Module {
  std::shared_ptr<const Source> source;
  Body body;
};

}  // namespace ampjit::script
