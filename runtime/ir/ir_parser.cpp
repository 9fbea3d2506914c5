// Parses the canonical text form (ir_printer.cpp) back into a Graph. Used by golden tests, by
// ampjit-dump and by tests that write graphs by hand.
//
//   graph   := 'graph' '(' [param {',' param}] ')' ':' {node} 'return' '(' [uses] ')'
//   param   := VALUE ':' type
//   node    := [param {',' param}] '=' KIND ['[' attr {',' attr} ']'] '(' [uses] ')' [COMMENT]
//              {'block' INT '(' [param {',' param}] ')' ':' {node} '->' '(' [uses] ')'}
//   type    := base ['[' ']'] ['?'] | '(' [type {',' type}] ')'
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <unordered_map>

#include "runtime/ir/ir.h"
#include "runtime/ops.h"

namespace ampjit {

namespace {

// Note [Graph text limits]
// The parser, the printer and the destructors of types and blocks recurse once per level of
// nesting, so the text is refused past these depths (with its line and column) rather than
// exhausting the stack: blocks and attribute values as deep as the script compiler's own nesting
// limit, types deeper than any TorchScript program writes.
constexpr int kMaxBlockDepth = 1000;
constexpr int kMaxValueDepth = 1000;
constexpr int kMaxTypeDepth = 100;

class GraphParser {
 public:
  explicit GraphParser(std::string_view s) : s_(s) {}

  std::unique_ptr<Graph> parse() {
    try {
      return parse_graph_text();
    } catch (const Error& e) {
      if (e.message().starts_with("graph text:")) throw;
      fail(e.message());  // an error from a constructor (a type's sizes, a device): with its place
    }
  }

 private:
  std::unique_ptr<Graph> parse_graph_text() {
    g_ = std::make_unique<Graph>();
    expect_word("graph");
    expect("(");
    if (!accept(")")) {
      do {
        auto [name, type] = param();
        Value* v = g_->add_input();
        define(name, v, type);
      } while (accept(","));
      expect(")");
    }
    expect(":");
    parse_nodes(g_->block());
    expect_word("return");
    for (Value* v : uses()) g_->register_output(v);
    skip_ws();
    if (pos_ != s_.size()) fail("trailing text after return");
    return std::move(g_);
  }

  // node* until 'return' or '->'
  void parse_nodes(Block* b) {
    for (;;) {
      skip_ws();
      if (peek_word("return") || peek("->")) return;
      parse_node(b);
    }
  }

  void parse_node(Block* b) {
    std::vector<std::pair<std::string, TypePtr>> outs;
    if (!peek("=")) {
      do outs.push_back(param());
      while (accept(","));
    }
    expect("=");
    const std::string kind = qualified_ident();
    Node* n = g_->create(Symbol::intern(kind), {}, 0);
    b->append(n);
    if (accept("[")) {
      do {
        std::string name = ident();
        expect("=");
        n->set_attr(Symbol::intern("attr", name), attr_value());
      } while (accept(","));
      expect("]");
    }
    for (Value* v : uses()) n->add_input(v);
    for (auto& [name, type] : outs) define(name, n->add_output(), type);
    if (n->kind() == sym::prim::Constant && n->has_attr(sym::attr::value) &&
        n->attr(sym::attr::value).is_string() &&
        n->attr(sym::attr::value).to_string_ref() == "<Tensor>" && tensor_marker_) {
      if (n->outputs().size() != 1)
        fail(
            fmt::format("a <Tensor> constant has one output, whose type gives its shape; this "
                        "one has {}",
                        n->outputs().size()));
      n->set_attr(sym::attr::value, zero_tensor_of(*n->output()->type()));
    }
    tensor_marker_ = false;
    if (n->kind() == sym::prim::Constant && n->has_attr(sym::attr::value) &&
        n->outputs().size() == 1) {
      // Bools print as 1/0 and whole floats keep their type from the declaration.
      const IValue& v = n->attr(sym::attr::value);
      const TypeKind k = n->output()->type()->kind();
      if (k == TypeKind::Bool && v.is_int()) n->set_attr(sym::attr::value, IValue(v.to_int() != 0));
      if (k == TypeKind::Float && v.is_int()) n->set_attr(sym::attr::value, IValue(v.to_double()));
    }
    if (n->kind() == sym::prim::AutocastRegion) {
      // Bools print as 1/0 and dtypes as torch's codes: back to the types the tracer sets.
      for (Symbol a : {sym::attr::enabled, sym::attr::cache_enabled})
        if (n->has_attr(a) && n->attr(a).is_int() &&
            (n->attr(a).to_int() == 0 || n->attr(a).to_int() == 1))
          n->set_attr(a, IValue(n->attr(a).to_int() != 0));
      if (n->has_attr(sym::attr::dtype) && n->attr(sym::attr::dtype).is_int())
        if (std::optional<ScalarType> t = from_torch_dtype_code(n->attr(sym::attr::dtype).to_int()))
          n->set_attr(sym::attr::dtype, IValue(*t));
    }
    if (kind.rfind("aten::", 0) == 0 || kind.rfind("prim::", 0) == 0)
      resolve_op(n);  // prim::min.int, ...
    skip_spaces();
    if (pos_ < s_.size() && s_[pos_] == '#') n->set_source_range(location_comment());
    // blocks
    for (;;) {
      skip_ws();
      if (!(peek("block") && pos_ + 5 < s_.size() && std::isdigit(s_[pos_ + 5]))) break;
      pos_ += 5;
      number_token();
      Block* nb = n->add_block();
      if (block_depth_ >= kMaxBlockDepth)
        fail(fmt::format("blocks nested too deeply (the limit is {} levels)", kMaxBlockDepth));
      struct Depth {
        int& d;
        explicit Depth(int& x) : d(++x) {}
        ~Depth() { --d; }
      } depth(block_depth_);
      expect("(");
      if (!accept(")")) {
        do {
          auto [name, type] = param();
          define(name, nb->add_input(), type);
        } while (accept(","));
        expect(")");
      }
      expect(":");
      parse_nodes(nb);
      expect("->");
      for (Value* v : uses()) nb->register_output(v);
    }
  }

  // Picks the op-table overload for an aten or prim node from its input count and types.
  void resolve_op(Node* n) {
    const auto& ov = find_overloads(n->kind().qualified());
    for (const OpEntry* op : ov) {
      const auto& a = op->schema.args;
      if (a.size() != n->inputs().size() || op->schema.returns.size() != n->outputs().size())
        continue;
      bool ok = true;
      for (size_t i = 0; i < a.size() && ok; ++i) {
        const Type& vt = *n->input(i)->type();
        const Type& at = *a[i].type;
        ok = vt.is_subtype_of(at) ||
             (at.kind() == TypeKind::Optional && vt.is_subtype_of(*at.elem())) ||
             (at.kind() == TypeKind::Float && vt.kind() == TypeKind::Int) ||
             (at.kind() == TypeKind::ScalarType && vt.kind() == TypeKind::Int) ||
             (at.kind() == TypeKind::Optional && at.elem()->kind() == TypeKind::ScalarType &&
              (vt.kind() == TypeKind::Int ||  // a dtype is an int in TorchScript, also as `int?`
               (vt.kind() == TypeKind::Optional && vt.elem()->kind() == TypeKind::Int))) ||
             (at.kind() == TypeKind::List && vt.kind() == TypeKind::List);
      }
      if (ok) {
        n->set_op(op);
        return;
      }
    }
    // Unknown ops stay unresolved; verify() and the interpreter report them with the node.
  }

  // The <Tensor> placeholder (Note [Graph text round trip]): zeros of the declared type, one zero
  // expanded to its sizes, so a declared shape costs no memory (fuzz_graph_parser's
  // Float(2000000100001) asked for 8 TB). The sizes get Tensor::empty's checks all the same.
  IValue zero_tensor_of(const Type& t) {
    const std::vector<int64_t> sizes = t.tensor_sizes().value_or(std::vector<int64_t>{});
    const ScalarType dtype = t.tensor_dtype().value_or(ScalarType::Float32);
    for (int64_t s : sizes)
      AMPJIT_CHECK(s >= 0, "Trying to create tensor with negative dimension {}: {}", s,
                   shape_str(sizes));
    (void)storage_nbytes(sizes, itemsize(dtype));  // Note [Checked sizes]
    Tensor zero = Tensor::empty({}, dtype);
    zero.fill_(Scalar(int64_t{0}));
    return IValue(zero.expand(sizes));
  }

  IValue attr_value(int depth = 0) {
    if (depth > kMaxValueDepth)
      fail(fmt::format("attribute value nested too deeply (the limit is {} levels)",
                       kMaxValueDepth));
    skip_ws();
    if (accept("<Tensor>")) {
      tensor_marker_ = true;
      return IValue(std::string("<Tensor>"));
    }
    if (const size_t at = pos_; accept("<")) {  // Note [Graph text round trip]
      const std::string type = ident();
      pos_ = at;
      fail(fmt::format("a <{}> object attribute has no text form: graph text holds no objects",
                       type));
    }
    if (accept("None")) return IValue();
    if (peek("\"")) return IValue(string_literal());
    if (accept("[")) {
      std::vector<IValue> el;
      if (!accept("]")) {
        do el.push_back(attr_value(depth + 1));
        while (accept(","));
        expect("]");
      }
      return IValue::list(std::move(el));
    }
    if (accept("(")) {
      std::vector<IValue> el;
      if (!accept(")")) {
        do {
          if (peek(")")) break;
          el.push_back(attr_value(depth + 1));
        } while (accept(","));
        expect(")");
      }
      return IValue::tuple(std::move(el));
    }
    return number_value();
  }

  IValue number_value() {
    skip_ws();
    if (accept("nan")) return IValue(std::nan(""));
    if (accept("inf")) return IValue(INFINITY);
    if (accept("-inf")) return IValue(-INFINITY);
    const size_t b = pos_;
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
    bool is_float = false;
    while (
        pos_ < s_.size() &&
        (std::isdigit(s_[pos_]) || s_[pos_] == '.' || s_[pos_] == 'e' || s_[pos_] == 'E' ||
         ((s_[pos_] == '-' || s_[pos_] == '+') && (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E')))) {
      if (!std::isdigit(s_[pos_])) is_float = true;
      ++pos_;
    }
    if (b == pos_) fail("attribute value expected");
    std::string lit(s_.substr(b, pos_ - b));
    if (is_float) {
      char* end = nullptr;
      const double d = std::strtod(lit.c_str(), &end);
      if (end != lit.c_str() + lit.size()) fail("malformed number '" + lit + "'");
      return IValue(d);  // out of range: an infinity, as Python's float()
    }
    int64_t i = 0;
    const char* first = lit.c_str() + (lit[0] == '+' ? 1 : 0);
    const auto [end, ec] = std::from_chars(first, lit.c_str() + lit.size(), i);
    if (ec == std::errc::result_out_of_range) fail("integer '" + lit + "' does not fit in int64");
    if (ec != std::errc() || end != lit.c_str() + lit.size())
      fail("malformed number '" + lit + "'");
    return IValue(i);
  }

  std::string string_literal() {
    expect("\"");
    std::string out;
    while (pos_ < s_.size() && s_[pos_] != '"') {
      if (s_[pos_] == '\\' && pos_ + 1 < s_.size()) {
        ++pos_;
        out += s_[pos_] == 'n' ? '\n' : s_[pos_];
      } else {
        out += s_[pos_];
      }
      ++pos_;
    }
    expect("\"");
    return out;
  }

  SourceRange location_comment() {
    ++pos_;  // '#'
    skip_spaces();
    const size_t b = pos_;
    while (pos_ < s_.size() && s_[pos_] != '\n') ++pos_;
    std::string c(s_.substr(b, pos_ - b));
    // file:line:col (the file may itself contain ':')
    const size_t c2 = c.rfind(':');
    const size_t c1 = c2 == std::string::npos ? std::string::npos : c.rfind(':', c2 - 1);
    if (c1 == std::string::npos) return {};
    try {
      return SourceRange::location(c.substr(0, c1), std::stoi(c.substr(c1 + 1, c2 - c1 - 1)),
                                   std::stoi(c.substr(c2 + 1)));
    } catch (const std::exception&) {
      return {};
    }
  }

  std::pair<std::string, TypePtr> param() {
    std::string name = value_token();
    expect(":");
    return {name, type()};
  }

  TypePtr type(int depth = 0) {
    auto deeper = [&] {
      if (++depth > kMaxTypeDepth)
        fail(fmt::format("type nested too deeply (the limit is {} levels)", kMaxTypeDepth));
    };
    skip_ws();
    TypePtr t;
    if (accept("(")) {
      deeper();
      std::vector<TypePtr> el;
      if (!accept(")")) {
        do el.push_back(type(depth));
        while (accept(","));
        expect(")");
      }
      t = Type::tuple(std::move(el));
    } else {
      std::string base = qualified_ident();
      t = base_type(base, depth);
    }
    for (;;) {
      if (accept("[]")) {
        deeper();
        t = Type::list(t);
      } else if (accept("?")) {
        deeper();
        t = Type::optional(t);
      } else {
        break;
      }
    }
    return t;
  }

  TypePtr base_type(const std::string& base, int depth) {
    static const std::unordered_map<std::string, ScalarType> tensor_names = {
        {"Float", ScalarType::Float32}, {"Double", ScalarType::Float64},
        {"Half", ScalarType::Float16},  {"BFloat16", ScalarType::BFloat16},
        {"Long", ScalarType::Int64},    {"Int", ScalarType::Int32},
        {"Short", ScalarType::Int16},   {"Char", ScalarType::Int8},
        {"Byte", ScalarType::UInt8},    {"Bool", ScalarType::Bool}};
    if (base == "Tensor" && !peek("(")) return Type::tensor();
    auto it = tensor_names.find(base);
    if (it != tensor_names.end() || base == "Tensor") {
      // Float(2, 3, device=cpu)
      std::optional<ScalarType> dt;
      if (it != tensor_names.end()) dt = it->second;
      std::optional<std::vector<int64_t>> sizes;
      std::optional<Device> dev;
      expect("(");
      if (!accept(")")) {
        do {
          skip_ws();
          if (peek_word("device")) {
            expect_word("device");
            expect("=");
            dev = Device::parse(ident_with(":"));
          } else {
            if (!sizes) sizes.emplace();
            sizes->push_back(number_value().to_int());
          }
        } while (accept(","));
        expect(")");
      }
      if (!sizes && !dt && !dev) return Type::tensor();
      return Type::tensor_of(dt, sizes.value_or(std::vector<int64_t>{}), dev);
    }
    if (base == "int") return Type::int_();
    if (base == "float") return Type::float_();
    if (base == "bool") return Type::bool_();
    if (base == "str") return Type::str_();
    if (base == "NoneType") return Type::none();
    if (base == "Scalar") return Type::number();
    if (base == "ScalarType") return Type::scalar_type();
    if (base == "Device") return Type::device();
    if (base == "Any") return Type::any();
    if (base == "Dict" || base == "Union") {  // Dict(str, Tensor), Union(float, int)
      if (depth + 1 > kMaxTypeDepth)
        fail(fmt::format("type nested too deeply (the limit is {} levels)", kMaxTypeDepth));
      expect("(");
      std::vector<TypePtr> el;
      do el.push_back(type(depth + 1));
      while (accept(","));
      expect(")");
      if (base == "Union") return Type::union_(std::move(el));
      if (el.size() != 2) fail("a Dict type takes a key and a value type");
      return Type::dict(el[0], el[1]);
    }
    if (base == "Function") {
      expect("<");
      std::string name = ident_with(".:");
      expect(">");
      return Type::named(TypeKind::Function, name);
    }
    return Type::named(TypeKind::Object, base);
  }

  std::vector<Value*> uses() {
    std::vector<Value*> out;
    expect("(");
    if (accept(")")) return out;
    do out.push_back(lookup(value_token()));
    while (accept(","));
    expect(")");
    return out;
  }

  void define(const std::string& name, Value* v, const TypePtr& t) {
    if (env_.count(name)) fail("value %" + name + " is defined twice");
    v->set_type(t);
    if (!std::all_of(name.begin(), name.end(), ::isdigit)) v->set_debug_name(name);
    env_[name] = v;
  }

  Value* lookup(const std::string& name) {
    auto it = env_.find(name);
    if (it == env_.end()) fail("use of undefined value %" + name);
    return it->second;
  }

  std::string value_token() {
    skip_ws();
    if (pos_ >= s_.size() || s_[pos_] != '%') fail("value (%name) expected");
    ++pos_;
    return ident_with(".");
  }
  std::string qualified_ident() { return ident_with(":._"); }
  std::string ident() { return ident_with("_"); }
  std::string ident_with(std::string_view extra) {
    skip_ws();
    const size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                s_[pos_] == '_' || extra.find(s_[pos_]) != std::string_view::npos))
      ++pos_;
    if (b == pos_) fail("name expected");
    return std::string(s_.substr(b, pos_ - b));
  }
  void number_token() {
    skip_ws();
    while (pos_ < s_.size() && std::isdigit(s_[pos_])) ++pos_;
  }
  void skip_spaces() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t')) ++pos_;
  }
  void skip_ws() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool peek(std::string_view tok) {
    skip_ws();
    return s_.substr(pos_, tok.size()) == tok;
  }
  bool peek_word(std::string_view w) {
    skip_ws();
    if (s_.substr(pos_, w.size()) != w) return false;
    const size_t e = pos_ + w.size();
    return e >= s_.size() || !(std::isalnum(static_cast<unsigned char>(s_[e])) || s_[e] == '_');
  }
  bool accept(std::string_view tok) {
    if (!peek(tok)) return false;
    pos_ += tok.size();
    return true;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) fail("expected '" + std::string(tok) + "'");
  }
  void expect_word(std::string_view w) {
    if (!peek_word(w)) fail("expected '" + std::string(w) + "'");
    pos_ += w.size();
  }
  [[noreturn]] void fail(const std::string& what) {
    int line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw Error(fmt::format("graph text:{}:{}: {}", line, col, what));
  }

  std::string_view s_;
  size_t pos_ = 0;
  std::unique_ptr<Graph> g_;
  std::unordered_map<std::string, Value*> env_;
  bool tensor_marker_ = false;
  int block_depth_ = 0;
};

}  // namespace

std::unique_ptr<Graph> parse_graph(std::string_view text) {
  return GraphParser(text).parse();
}

}  // namespace ampjit
