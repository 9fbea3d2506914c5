// The AST as text: operator spellings (ast.h) and the S-expression dump (parser.h).
#include <fmt/format.h>

#include "script/parser.h"

namespace ampjit::script {

const char* binop_str(BinOpKind k) {
  switch (k) {
    case BinOpKind::Add:
      return "+";
    case BinOpKind::Sub:
      return "-";
    case BinOpKind::Mul:
      return "*";
    case BinOpKind::Div:
      return "/";
    case BinOpKind::FloorDiv:
      return "//";
    case BinOpKind::Mod:
      return "%";
    case BinOpKind::Pow:
      return "**";
    case BinOpKind::MatMul:
      return "@";
    case BinOpKind::BitAnd:
      return "&";
    case BinOpKind::BitOr:
      return "|";
    case BinOpKind::BitXor:
      return "^";
    case BinOpKind::LShift:
      return "<<";
    case BinOpKind::RShift:
      return ">>";
  }
  return "?";
}

const char* cmpop_str(CmpOpKind k) {
  switch (k) {
    case CmpOpKind::Eq:
      return "==";
    case CmpOpKind::NotEq:
      return "!=";
    case CmpOpKind::Lt:
      return "<";
    case CmpOpKind::LtE:
      return "<=";
    case CmpOpKind::Gt:
      return ">";
    case CmpOpKind::GtE:
      return ">=";
    case CmpOpKind::Is:
      return "is";
    case CmpOpKind::IsNot:
      return "is not";
    case CmpOpKind::In:
      return "in";
    case CmpOpKind::NotIn:
      return "not in";
  }
  return "?";
}

namespace {

// Note [AST dump format]
// One S-expression per node, children in field order, absent optional children as `_`:
//   expressions  x  3  1.5  "s"  True  None  (. value attr)  (call f arg... (kw name value)...)
//                (sub value index...)  (slice lower upper step)  (+ a b)  (- a)  (not a)  (~ a)
//                (and a b...)  (or a b...)  (cmp a < b <= c)  (cmp a is not b)  (ifexp test body
//                orelse)  (list e...)  (tuple e...)  (dict (k v)...)  (* value)
//                (listcomp elt (for target iter) (if cond)...)
//   statements   (expr e)  (= target... value)  (+= target value)  (: target annotation value?)
//                (if test (body s...) (else s...)?)  (for target iter (body ...))
//                (while test (body ...))  (return value?)  (pass)  (break)  (continue)
//                (assert test msg?)  (raise exc?)  (with (item context var?)... (body ...))
//                (def name (params ...) (-> returns)? (decorators d...)? (body ...))
//                (class name (bases b...)? (decorators d...)? (body ...))
//                (import alias...)  (from module alias...)  (global n...)  (nonlocal n...)
//                (del target...)        where an alias is `a.b` or (as a.b c)
//   parameters   a  (a : ann)  (a = default)  (a : ann = default)  with `*` before *args and
//                `**` before **kwargs; keyword-only ones are grouped as (kwonly ...):
//                (params a (b = 1) *args (kwonly c) **kw)
// Floats always show a '.', an exponent, inf or nan, so 2.0 prints as 2.0, not as the int 2.
class Dumper {
 public:
  std::string out;

  void expr(const Expr* e) {
    if (!e) {
      out += '_';
      return;
    }
    switch (e->kind) {
      case ExprKind::Name:
        out += e->as<Name>().id;
        break;
      case ExprKind::Int:
        out += std::to_string(e->as<IntLit>().value);
        break;
      case ExprKind::Float: {
        std::string s = fmt::format("{}", e->as<FloatLit>().value);
        if (s.find_first_of(".eni") == std::string::npos) s += ".0";
        out += s;
        break;
      }
      case ExprKind::Str:
        quote(e->as<StrLit>().value);
        break;
      case ExprKind::Bool:
        out += e->as<BoolLit>().value ? "True" : "False";
        break;
      case ExprKind::None:
        out += "None";
        break;
      case ExprKind::Attribute: {
        const auto& a = e->as<Attribute>();
        out += "(. ";
        expr(a.value.get());
        out += " " + a.attr + ")";
        break;
      }
      case ExprKind::Call: {
        const auto& c = e->as<Call>();
        out += "(call ";
        expr(c.func.get());
        for (const ExprPtr& a : c.args) sep(a.get());
        for (const Keyword& k : c.keywords) {
          out += " (kw " + k.name + " ";
          expr(k.value.get());
          out += ")";
        }
        out += ")";
        break;
      }
      case ExprKind::Subscript: {
        const auto& s = e->as<Subscript>();
        out += "(sub ";
        expr(s.value.get());
        for (const ExprPtr& i : s.indices) sep(i.get());
        out += ")";
        break;
      }
      case ExprKind::Slice: {
        const auto& s = e->as<Slice>();
        out += "(slice ";
        expr(s.lower.get());
        sep(s.upper.get());
        sep(s.step.get());
        out += ")";
        break;
      }
      case ExprKind::BinOp: {
        const auto& b = e->as<BinOp>();
        out += fmt::format("({} ", binop_str(b.op));
        expr(b.lhs.get());
        sep(b.rhs.get());
        out += ")";
        break;
      }
      case ExprKind::UnaryOp: {
        const auto& u = e->as<UnaryOp>();
        static constexpr const char* kOps[] = {"-", "+", "not", "~"};
        out += fmt::format("({} ", kOps[static_cast<int>(u.op)]);
        expr(u.operand.get());
        out += ")";
        break;
      }
      case ExprKind::BoolOp: {
        const auto& b = e->as<BoolOp>();
        out += b.is_and ? "(and" : "(or";
        for (const ExprPtr& v : b.values) sep(v.get());
        out += ")";
        break;
      }
      case ExprKind::Compare: {
        const auto& c = e->as<Compare>();
        out += "(cmp ";
        expr(c.left.get());
        for (size_t i = 0; i < c.ops.size(); ++i) {
          out += fmt::format(" {}", cmpop_str(c.ops[i]));
          sep(c.comparators[i].get());
        }
        out += ")";
        break;
      }
      case ExprKind::IfExp: {
        const auto& i = e->as<IfExp>();
        out += "(ifexp ";
        expr(i.test.get());
        sep(i.body.get());
        sep(i.orelse.get());
        out += ")";
        break;
      }
      case ExprKind::List:
        list("(list", e->as<ListExpr>().elts);
        break;
      case ExprKind::Tuple:
        list("(tuple", e->as<TupleExpr>().elts);
        break;
      case ExprKind::Dict: {
        const auto& d = e->as<DictExpr>();
        out += "(dict";
        for (size_t i = 0; i < d.keys.size(); ++i) {
          out += " (";
          expr(d.keys[i].get());
          sep(d.values[i].get());
          out += ")";
        }
        out += ")";
        break;
      }
      case ExprKind::ListComp: {
        const auto& c = e->as<ListComp>();
        out += "(listcomp ";
        expr(c.elt.get());
        out += " (for ";
        comp_for(*c.target, *c.iter, c.conds);
        out += ")";
        break;
      }
      case ExprKind::DictComp: {
        const auto& c = e->as<DictComp>();
        out += "(dictcomp (";
        expr(c.key.get());
        sep(c.value.get());
        out += ") (for ";
        comp_for(*c.target, *c.iter, c.conds);
        out += ")";
        break;
      }
      case ExprKind::Starred:
        out += "(* ";
        expr(e->as<Starred>().value.get());
        out += ")";
        break;
    }
  }

  // "target iter) (if cond)..." after a comprehension's "(for ".
  void comp_for(const Expr& target, const Expr& iter, const std::vector<ExprPtr>& conds) {
    expr(&target);
    sep(&iter);
    out += ")";
    for (const ExprPtr& cond : conds) {
      out += " (if ";
      expr(cond.get());
      out += ")";
    }
  }

  void stmt(const Stmt& s) {
    switch (s.kind) {
      case StmtKind::Expr:
        out += "(expr ";
        expr(s.as<ExprStmt>().value.get());
        out += ")";
        break;
      case StmtKind::Assign: {
        const auto& a = s.as<Assign>();
        out += "(=";
        for (const ExprPtr& t : a.targets) sep(t.get());
        sep(a.value.get());
        out += ")";
        break;
      }
      case StmtKind::AugAssign: {
        const auto& a = s.as<AugAssign>();
        out += fmt::format("({}= ", binop_str(a.op));
        expr(a.target.get());
        sep(a.value.get());
        out += ")";
        break;
      }
      case StmtKind::AnnAssign: {
        const auto& a = s.as<AnnAssign>();
        out += "(: ";
        expr(a.target.get());
        sep(a.annotation.get());
        if (a.value) sep(a.value.get());
        out += ")";
        break;
      }
      case StmtKind::If: {
        const auto& i = s.as<If>();
        out += "(if ";
        expr(i.test.get());
        body(" (body", i.body);
        if (!i.orelse.empty()) body(" (else", i.orelse);
        out += ")";
        break;
      }
      case StmtKind::For: {
        const auto& f = s.as<For>();
        out += "(for ";
        expr(f.target.get());
        sep(f.iter.get());
        body(" (body", f.body);
        out += ")";
        break;
      }
      case StmtKind::While: {
        const auto& w = s.as<While>();
        out += "(while ";
        expr(w.test.get());
        body(" (body", w.body);
        out += ")";
        break;
      }
      case StmtKind::Break:
        out += "(break)";
        break;
      case StmtKind::Continue:
        out += "(continue)";
        break;
      case StmtKind::Pass:
        out += "(pass)";
        break;
      case StmtKind::Return:
        optional_child("(return", s.as<Return>().value.get());
        break;
      case StmtKind::Raise:
        optional_child("(raise", s.as<Raise>().exc.get());
        break;
      case StmtKind::Assert: {
        const auto& a = s.as<Assert>();
        out += "(assert ";
        expr(a.test.get());
        if (a.msg) sep(a.msg.get());
        out += ")";
        break;
      }
      case StmtKind::With: {
        const auto& w = s.as<With>();
        out += "(with";
        for (const WithItem& item : w.items) {
          out += " (item ";
          expr(item.context.get());
          if (item.var) sep(item.var.get());
          out += ")";
        }
        body(" (body", w.body);
        out += ")";
        break;
      }
      case StmtKind::FunctionDef:
        function(s.as<FunctionDef>());
        break;
      case StmtKind::ClassDef: {
        const auto& c = s.as<ClassDef>();
        out += "(class " + c.name;
        if (!c.bases.empty()) list(" (bases", c.bases);
        if (!c.decorators.empty()) list(" (decorators", c.decorators);
        body(" (body", c.body);
        out += ")";
        break;
      }
      case StmtKind::Import:
        out += "(import";
        aliases(s.as<Import>().names);
        out += ")";
        break;
      case StmtKind::ImportFrom: {
        const auto& i = s.as<ImportFrom>();
        out += "(from " + i.module;
        aliases(i.names);
        out += ")";
        break;
      }
      case StmtKind::Global:
      case StmtKind::Nonlocal:
        out += s.kind == StmtKind::Global ? "(global" : "(nonlocal";
        for (const std::string& n : s.as<NameList>().names) out += " " + n;
        out += ")";
        break;
      case StmtKind::Delete:
        list("(del", s.as<Delete>().targets);
        break;
    }
  }

 private:
  void sep(const Expr* e) {
    out += ' ';
    expr(e);
  }

  void list(const char* head, const std::vector<ExprPtr>& elts) {
    out += head;
    for (const ExprPtr& e : elts) sep(e.get());
    out += ")";
  }

  void optional_child(const char* head, const Expr* e) {
    out += head;
    if (e) sep(e);
    out += ")";
  }

  void body(const char* head, const Body& b) {
    out += head;
    for (const StmtPtr& s : b) {
      out += ' ';
      stmt(*s);
    }
    out += ")";
  }

  void quote(const std::string& s) {
    out += '"';
    for (char c : s) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\r':
          out += "\\r";
          break;
        default:
          if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
          } else {
            out += c;
          }
      }
    }
    out += '"';
  }

  void aliases(const std::vector<Alias>& names) {
    for (const Alias& a : names)
      out += a.asname.empty() ? " " + a.name : " (as " + a.name + " " + a.asname + ")";
  }

  void param(const Param& p) {
    const char* prefix = p.kind == Param::VarArgs ? "*" : p.kind == Param::VarKw ? "**" : "";
    if (!p.annotation && !p.default_value) {
      out += prefix + p.name;
      return;
    }
    out += "(" + (prefix + p.name);
    if (p.annotation) {
      out += " : ";
      expr(p.annotation.get());
    }
    if (p.default_value) {
      out += " = ";
      expr(p.default_value.get());
    }
    out += ")";
  }

  void function(const FunctionDef& f) {
    out += "(def " + f.name + " (params";
    bool in_kwonly = false;
    for (const Param& p : f.params) {
      if (p.kind == Param::KwOnly && !in_kwonly) out += " (kwonly";
      if (p.kind != Param::KwOnly && in_kwonly) out += ")";
      in_kwonly = p.kind == Param::KwOnly;
      out += ' ';
      param(p);
    }
    if (in_kwonly) out += ")";
    out += ")";
    if (f.returns) {
      out += " (-> ";
      expr(f.returns.get());
      out += ")";
    }
    if (!f.decorators.empty()) list(" (decorators", f.decorators);
    body(" (body", f.body);
    out += ")";
  }
};

}  // namespace

std::string dump(const Module& module) {
  Dumper d;
  for (const StmtPtr& s : module.body) {
    if (!d.out.empty()) d.out += '\n';
    d.stmt(*s);
  }
  return d.out;
}

std::string dump(const Stmt& stmt) {
  Dumper d;
  d.stmt(stmt);
  return d.out;
}

std::string dump(const Expr& expr) {
  Dumper d;
  d.expr(&expr);
  return d.out;
}

}  // namespace ampjit::script
