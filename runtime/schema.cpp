// Parsing op schemas, and binding call arguments to them.
#include "runtime/schema.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace ampjit {

namespace {

// A tiny recursive-descent reader over one schema string.
class SchemaReader {
 public:
  explicit SchemaReader(std::string_view s) : s_(s) {}

  // schema := qualname ['.' overload] '(' [arg {',' arg}] ')' '->' returns
  FunctionSchema parse() {
    FunctionSchema f;
    std::string q = ident();
    expect("::");
    f.ns = q;
    f.name = ident();
    if (accept(".")) f.overload = ident();
    expect("(");
    bool kwonly = false;
    if (!accept(")")) {
      do {
        if (accept("*")) {
          kwonly = true;
          continue;
        }
        Argument a = argument(true);
        a.kwarg_only = kwonly;
        f.args.push_back(std::move(a));
      } while (accept(","));
      expect(")");
    }
    expect("->");
    // returns := type | '(' [ret {',' ret}] ')'   with optional names
    if (accept("(")) {
      if (!accept(")")) {
        do f.returns.push_back(argument(false));
        while (accept(","));
        expect(")");
      }
    } else {
      f.returns.push_back(argument(false));
    }
    skip_ws();
    if (pos_ != s_.size()) fail("trailing text");
    return f;
  }

 private:
  // argument := type [name ['=' default]]
  Argument argument(bool named) {
    Argument a;
    a.type = type(a);
    skip_ws();
    if (pos_ < s_.size() && (std::isalpha(s_[pos_]) || s_[pos_] == '_')) {
      a.name = ident();
      if (named && accept("=")) a.default_value = default_value(*a.type, a.list_len);
    } else if (named) {
      fail("argument name expected");
    }
    return a;
  }

  // type := base ['(' alias ['!'] ['->' (alias | '*')] ')'] ['[' [N] ']'] ['?']
  // `Tensor(a -> *) self` (chunk, split, unbind): the results alias self's storage; the arrow's
  // target set is not recorded (views are the kernels' business).
  TypePtr type(Argument& a) {
    std::string base = ident();
    TypePtr t;
    if (base == "Tensor")
      t = Type::tensor();
    else if (base == "Scalar")
      t = Type::number();
    else if (base == "int" || base == "SymInt")
      t = Type::int_();
    else if (base == "float")
      t = Type::float_();
    else if (base == "bool")
      t = Type::bool_();
    else if (base == "str")
      t = Type::str_();
    else if (base == "ScalarType")
      t = Type::scalar_type();
    else if (base == "Device")
      t = Type::device();
    else if (base == "MemoryFormat")  // an int in TorchScript: c10::MemoryFormat's value
      t = Type::int_();
    else if (base == "Any")
      t = Type::any();
    else
      fail("unknown type '" + base + "'");
    if (accept("(")) {
      ident();
      a.in_alias_set = true;
      if (accept("!")) a.is_write = true;
      if (accept("->")) {
        if (!accept("*")) ident();
      }
      expect(")");
    }
    if (accept("?")) {  // T? or, followed by [], a list of optional elements (Tensor?[])
      if (!accept("[")) return Type::optional(t);
      expect("]");
      t = Type::list(Type::optional(t));
      if (accept("?")) t = Type::optional(t);
      return t;
    }
    if (accept("[")) {
      skip_ws();
      if (pos_ < s_.size() && std::isdigit(s_[pos_])) a.list_len = static_cast<int>(number());
      expect("]");
      t = Type::list(t);
    }
    if (accept("?")) t = Type::optional(t);
    return t;
  }

  IValue default_value(const Type& t, int list_len) {
    skip_ws();
    if (accept("None")) return IValue();
    if (accept("True")) return IValue(true);
    if (accept("False")) return IValue(false);
    if (accept("contiguous_format")) return IValue(int64_t{0});  // c10::MemoryFormat::Contiguous
    if (accept("\"")) {
      size_t e = s_.find('"', pos_);
      if (e == std::string_view::npos) fail("unterminated string");
      std::string v(s_.substr(pos_, e - pos_));
      pos_ = e + 1;
      return IValue(v);
    }
    if (accept("[")) {
      std::vector<int64_t> v;
      if (!accept("]")) {
        do v.push_back(static_cast<int64_t>(number()));
        while (accept(","));
        expect("]");
      }
      if (list_len && v.size() == 1) v.assign(list_len, v[0]);
      return IValue(v);
    }
    const Type& base = t.kind() == TypeKind::Optional ? *t.elem() : t;
    double d = number();
    if (base.kind() == TypeKind::List) {
      return IValue(std::vector<int64_t>(list_len ? list_len : 1, static_cast<int64_t>(d)));
    }
    if (base.kind() == TypeKind::Float) return IValue(d);
    if (base.kind() == TypeKind::Number && last_number_was_float_) return IValue(d);
    return IValue(static_cast<int64_t>(d));
  }

  double number() {
    skip_ws();
    const char* b = s_.data() + pos_;
    char* e = nullptr;
    std::string tmp(s_.substr(pos_));
    double d = std::strtod(tmp.c_str(), &e);
    size_t n = static_cast<size_t>(e - tmp.c_str());
    if (n == 0) fail("number expected");
    std::string_view lit(b, n);
    last_number_was_float_ = lit.find_first_of(".eE") != std::string_view::npos;
    pos_ += n;
    return d;
  }

  std::string ident() {
    skip_ws();
    size_t b = pos_;
    while (pos_ < s_.size() && (std::isalnum(s_[pos_]) || s_[pos_] == '_')) ++pos_;
    if (b == pos_) fail("identifier expected");
    return std::string(s_.substr(b, pos_ - b));
  }
  bool accept(std::string_view tok) {
    skip_ws();
    if (s_.substr(pos_, tok.size()) == tok) {
      pos_ += tok.size();
      return true;
    }
    return false;
  }
  void expect(std::string_view tok) {
    if (!accept(tok)) fail("expected '" + std::string(tok) + "'");
  }
  void skip_ws() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  [[noreturn]] void fail(const std::string& what) {
    throw Error(fmt::format("schema parse error at column {}: {} in \"{}\"", pos_ + 1, what, s_));
  }

  std::string_view s_;
  size_t pos_ = 0;
  bool last_number_was_float_ = false;
};

}  // namespace

FunctionSchema parse_schema(std::string_view text) {
  return SchemaReader(text).parse();
}

int FunctionSchema::arg_index(std::string_view n) const {
  for (size_t i = 0; i < args.size(); ++i)
    if (args[i].name == n) return static_cast<int>(i);
  return -1;
}

bool FunctionSchema::is_inplace() const {
  return !args.empty() && args[0].is_write && args[0].name == "self";
}

bool FunctionSchema::is_out() const {
  for (const auto& a : args)
    if (a.is_write && a.kwarg_only) return true;
  return false;
}

std::string FunctionSchema::str() const {
  std::string s = full_name() + "(";
  bool kw = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const Argument& a = args[i];
    if (i) s += ", ";
    if (a.kwarg_only && !kw) {
      s += "*, ";
      kw = true;
    }
    s += a.type->str() + " " + a.name;
    if (a.default_value) s += "=" + a.default_value->repr();
  }
  s += ") -> ";
  if (returns.size() == 1) return s + returns[0].type->str();
  s += "(";
  for (size_t i = 0; i < returns.size(); ++i) s += (i ? ", " : "") + returns[i].type->str();
  return s + ")";
}

bool value_matches_type(const IValue& v, const Type& t) {
  switch (t.kind()) {
    case TypeKind::Any:
      return true;
    case TypeKind::Optional:
      return v.is_none() || value_matches_type(v, *t.elem());
    case TypeKind::Tensor:
      return v.is_tensor();
    case TypeKind::Int:
      return v.is_int() || v.is_bool();
    case TypeKind::Float:
      return v.is_double() || v.is_int() || v.is_bool();
    case TypeKind::Bool:
      return v.is_bool();
    case TypeKind::Number:
      return v.is_number();
    case TypeKind::Str:
      return v.is_string();
    case TypeKind::ScalarType:
      return v.is_scalar_type();
    case TypeKind::Device:
      return v.is_device() || v.is_string();
    case TypeKind::None:
      return v.is_none();
    case TypeKind::List: {
      if (!v.is_list() && !v.is_tuple()) return false;
      const auto& el = v.is_list() ? v.list_elems() : v.tuple_elems();
      for (const auto& e : el)
        if (!value_matches_type(e, *t.elem())) return false;
      return true;
    }
    case TypeKind::Tuple:
      return v.is_tuple();
    case TypeKind::Dict: {
      if (!v.is_dict()) return false;
      for (const auto& [k, e] : v.dict_obj()->items())
        if (!value_matches_type(k, *t.key()) || !value_matches_type(e, *t.value())) return false;
      return true;
    }
    case TypeKind::Union:
      for (const TypePtr& c : t.contained())
        if (value_matches_type(v, *c)) return true;
      return false;
    case TypeKind::Function:
    case TypeKind::Object:
      return v.is_object();
  }
  return false;
}

namespace {
// Converts a matching value to the canonical representation of the declared type.
IValue coerce(IValue v, const Argument& a) {
  const Type* t = a.type.get();
  if (t->kind() == TypeKind::Optional) {
    if (v.is_none()) return v;
    t = t->elem().get();
  }
  switch (t->kind()) {
    case TypeKind::Float:
      return v.is_double() ? v : IValue(v.to_double());
    case TypeKind::Int:
      return v.is_int() ? v : IValue(v.to_int());
    case TypeKind::Device:
      return v.is_string() ? IValue(Device::parse(v.to_string_ref())) : v;
    case TypeKind::List:
      if (a.list_len && v.is_int()) return IValue(std::vector<int64_t>(a.list_len, v.to_int()));
      if (v.is_tuple()) return IValue::list(v.tuple_elems());
      return v;
    default:
      return v;
  }
}

std::string describe(const IValue& v) {
  if (v.is_list() || v.is_tuple()) {
    const auto& el = v.is_list() ? v.list_elems() : v.tuple_elems();
    std::string s = v.is_list() ? "list of [" : "tuple of (";
    for (size_t i = 0; i < el.size() && i < 4; ++i)
      s += (i ? ", " : "") + std::string(el[i].tag_name());
    if (el.size() > 4) s += ", ...";
    return s + (v.is_list() ? "]" : ")");
  }
  return v.tag_name();
}
}  // namespace

Stack bind_arguments(const FunctionSchema& schema, std::vector<IValue> args,
                     std::vector<Kwarg> kwargs) {
  const size_t n = schema.args.size();
  std::vector<std::optional<IValue>> slots(n);
  size_t npos = 0;
  for (const auto& a : schema.args) npos += !a.kwarg_only;
  if (args.size() > npos) {
    throw TypeError(fmt::format("{}() takes {} positional argument{} but {} {} given",
                                schema.full_name(), npos, npos == 1 ? "" : "s", args.size(),
                                args.size() == 1 ? "was" : "were"));
  }
  for (size_t i = 0; i < args.size(); ++i) slots[i] = std::move(args[i]);
  for (auto& kw : kwargs) {
    int idx = schema.arg_index(kw.name);
    if (idx < 0) {
      throw TypeError(
          fmt::format("{}() got an unexpected keyword argument '{}'", schema.full_name(), kw.name));
    }
    if (slots[idx]) {
      throw TypeError(
          fmt::format("{}() got multiple values for argument '{}'", schema.full_name(), kw.name));
    }
    slots[idx] = std::move(kw.value);
  }
  Stack out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const Argument& a = schema.args[i];
    if (!slots[i]) {
      if (!a.default_value) {
        throw TypeError(fmt::format("{}() missing required argument '{}' (position {})",
                                    schema.full_name(), a.name, i + 1));
      }
      out.push_back(*a.default_value);
      continue;
    }
    IValue& v = *slots[i];
    // None for a list with a default is that default, as torch's Python arg parser takes it
    // (F.avg_pool2d(x, 2, None): `int[2] stride=[]`).
    if (v.is_none() && a.default_value && a.type->kind() == TypeKind::List) {
      out.push_back(*a.default_value);
      continue;
    }
    const bool single_int_for_list = a.list_len && v.is_int();
    if (!single_int_for_list && !value_matches_type(v, *a.type)) {
      throw TypeError(fmt::format("{}(): argument '{}' (position {}) must be {}, not {}",
                                  schema.full_name(), a.name, i + 1, a.type->str(), describe(v)));
    }
    out.push_back(coerce(std::move(v), a));
  }
  return out;
}

// ---- Types ------------------------------------------------------------------------------------

#define AMPJIT_SINGLETON_TYPE(fn, kind)         \
  TypePtr Type::fn() {                          \
    static TypePtr t(new Type(TypeKind::kind)); \
    return t;                                   \
  }
AMPJIT_SINGLETON_TYPE(any, Any)
AMPJIT_SINGLETON_TYPE(tensor, Tensor)
AMPJIT_SINGLETON_TYPE(int_, Int)
AMPJIT_SINGLETON_TYPE(float_, Float)
AMPJIT_SINGLETON_TYPE(bool_, Bool)
AMPJIT_SINGLETON_TYPE(str_, Str)
AMPJIT_SINGLETON_TYPE(none, None)
AMPJIT_SINGLETON_TYPE(number, Number)
AMPJIT_SINGLETON_TYPE(scalar_type, ScalarType)
AMPJIT_SINGLETON_TYPE(device, Device)
#undef AMPJIT_SINGLETON_TYPE

TypePtr Type::tensor_of(std::optional<ScalarType> dtype, std::optional<std::vector<int64_t>> sizes,
                        std::optional<Device> device) {
  Ref<Type> t(new Type(TypeKind::Tensor));
  t->dtype_ = dtype;
  t->sizes_ = std::move(sizes);
  t->device_ = device;
  return TypePtr(t);
}

TypePtr Type::named(TypeKind kind, std::string name) {
  Ref<Type> t(new Type(kind));
  t->name_ = std::move(name);
  return TypePtr(t);
}

TypePtr Type::unrefined() const {
  if (kind_ == TypeKind::Tensor) return tensor();
  return TypePtr(const_cast<Type*>(this));
}

TypePtr Type::list(TypePtr e) {
  return TypePtr(new Type(TypeKind::List, {std::move(e)}));
}
TypePtr Type::optional(TypePtr e) {
  return TypePtr(new Type(TypeKind::Optional, {std::move(e)}));
}
TypePtr Type::tuple(std::vector<TypePtr> e) {
  return TypePtr(new Type(TypeKind::Tuple, std::move(e)));
}
TypePtr Type::dict(TypePtr key, TypePtr value) {
  return TypePtr(new Type(TypeKind::Dict, {std::move(key), std::move(value)}));
}
TypePtr Type::union_(std::vector<TypePtr> alternatives) {
  std::vector<TypePtr> flat;
  bool has_none = false;
  auto add = [&](const TypePtr& t) {
    if (t->kind() == TypeKind::None) {
      has_none = true;
      return;
    }
    for (const TypePtr& f : flat)
      if (t->is_subtype_of(*f)) return;
    std::erase_if(flat, [&](const TypePtr& f) { return f->is_subtype_of(*t); });
    flat.push_back(t);
  };
  for (const TypePtr& a : alternatives) {
    if (a->kind() == TypeKind::Union) {
      for (const TypePtr& c : a->contained()) add(c);
    } else if (a->kind() == TypeKind::Optional) {
      has_none = true;
      add(a->elem());
    } else {
      add(a);
    }
  }
  if (flat.empty()) return none();
  if (flat.size() == 1) return has_none ? optional(flat[0]) : flat[0];
  if (has_none) flat.push_back(none());
  // torch orders the alternatives by the rank of their kind in its TypeKind enum (Union(int[],
  // int, str), Union(float, int, NoneType)), equal kinds by their names.
  auto rank = [](const Type& t) {
    switch (t.kind()) {
      case TypeKind::Any:
        return 0;
      case TypeKind::Tensor:
        return 3;
      case TypeKind::Tuple:
        return 5;
      case TypeKind::List:
        return 6;
      case TypeKind::Dict:
        return 7;
      case TypeKind::Number:
        return 8;
      case TypeKind::Float:
        return 9;
      case TypeKind::Int:
        return 13;
      case TypeKind::None:
        return 14;
      case TypeKind::Str:
        return 15;
      case TypeKind::Bool:
        return 18;
      case TypeKind::Device:
        return 21;
      case TypeKind::Function:
        return 23;
      case TypeKind::Object:
        return 24;
      case TypeKind::ScalarType:
        return 29;
      default:
        return 40;
    }
  };
  std::sort(flat.begin(), flat.end(), [&](const TypePtr& a, const TypePtr& b) {
    const int ra = rank(*a), rb = rank(*b);
    return ra != rb ? ra < rb : a->str() < b->str();
  });
  return TypePtr(new Type(TypeKind::Union, std::move(flat)));
}
TypePtr Type::named_tuple(std::string name, std::vector<std::string> fields,
                          std::vector<TypePtr> elems) {
  auto* t = new Type(TypeKind::Tuple, std::move(elems));
  t->name_ = std::move(name);
  t->fields_ = std::move(fields);
  return TypePtr(t);
}

std::string Type::str() const {
  switch (kind_) {
    case TypeKind::Any:
      return "Any";
    case TypeKind::Tensor: {
      if (!is_refined_tensor()) return "Tensor";
      std::string s = dtype_ ? torch_type_name(*dtype_) : "Tensor";
      s += "(";
      bool first = true;
      if (sizes_) {
        for (int64_t d : *sizes_) {
          s += (first ? "" : ", ") + std::to_string(d);
          first = false;
        }
      }
      if (device_) s += std::string(first ? "" : ", ") + "device=" + device_->str();
      return s + ")";
    }
    case TypeKind::Int:
      return "int";
    case TypeKind::Float:
      return "float";
    case TypeKind::Bool:
      return "bool";
    case TypeKind::Str:
      return "str";
    case TypeKind::None:
      return "NoneType";
    case TypeKind::Number:
      return "Scalar";
    case TypeKind::ScalarType:
      return "ScalarType";
    case TypeKind::Device:
      return "Device";
    case TypeKind::List:
      return elem()->str() + "[]";
    case TypeKind::Optional:
      return elem()->str() + "?";
    case TypeKind::Dict:
      return "Dict(" + key()->str() + ", " + value()->str() + ")";
    case TypeKind::Union: {
      std::string s = "Union(";
      for (size_t i = 0; i < contained_.size(); ++i) s += (i ? ", " : "") + contained_[i]->str();
      return s + ")";
    }
    case TypeKind::Function:
      return "Function<" + name_ + ">";
    case TypeKind::Object:
      return name_;
    case TypeKind::Tuple: {
      if (is_named_tuple()) {  // as torch prints a NamedTuple
        std::string s = "NamedTuple(";
        for (size_t i = 0; i < contained_.size(); ++i)
          s += (i ? ", " : "") + fields_[i] + " : " + contained_[i]->str();
        return s + ")";
      }
      std::string s = "(";
      for (size_t i = 0; i < contained_.size(); ++i) s += (i ? ", " : "") + contained_[i]->str();
      return s + ")";
    }
  }
  return "?";
}

std::string Type::annotation_str() const {
  auto joined = [&](const char* head) {
    std::string s = head;
    for (size_t i = 0; i < contained_.size(); ++i)
      s += (i ? ", " : "") + contained_[i]->annotation_str();
    return s + "]";
  };
  switch (kind_) {
    case TypeKind::Tensor:
      return "Tensor";
    case TypeKind::None:
      return "None";
    case TypeKind::Number:
      return "number";
    case TypeKind::ScalarType:
      return "int";  // a dtype is an int in TorchScript source
    case TypeKind::List:
      return "List[" + elem()->annotation_str() + "]";
    case TypeKind::Optional:
      return "Optional[" + elem()->annotation_str() + "]";
    case TypeKind::Tuple:
      return is_named_tuple() ? name_ : joined("Tuple[");
    case TypeKind::Dict:
      return joined("Dict[");
    case TypeKind::Union:
      return joined("Union[");
    default:
      return str();
  }
}

bool Type::equals(const Type& o) const {
  if (kind_ != o.kind_ || contained_.size() != o.contained_.size()) return false;
  if (dtype_ != o.dtype_ || sizes_ != o.sizes_ || name_ != o.name_) return false;
  if (device_.has_value() != o.device_.has_value() || (device_ && !(*device_ == *o.device_)))
    return false;
  for (size_t i = 0; i < contained_.size(); ++i)
    if (!contained_[i]->equals(*o.contained_[i])) return false;
  return true;
}

bool Type::is_subtype_of(const Type& o) const {
  if (o.kind_ == TypeKind::Any || equals(o)) return true;
  if (kind_ == TypeKind::Union) {  // every alternative fits
    for (const TypePtr& c : contained_)
      if (!c->is_subtype_of(o)) return false;
    return true;
  }
  if (kind_ == TypeKind::Optional && o.kind_ == TypeKind::Union)  // Optional[T] is Union[T, None]
    return none()->is_subtype_of(o) && elem()->is_subtype_of(o);
  if (o.kind_ == TypeKind::Union) {
    for (const TypePtr& c : o.contained_)
      if (is_subtype_of(*c)) return true;
    return false;
  }
  if (kind_ == TypeKind::Optional && o.kind_ == TypeKind::Optional)
    return elem()->is_subtype_of(*o.elem());
  if (kind_ == TypeKind::Tensor && o.kind_ == TypeKind::Tensor) return !o.is_refined_tensor();
  if (o.kind_ == TypeKind::Optional) return kind_ == TypeKind::None || is_subtype_of(*o.elem());
  if (o.kind_ == TypeKind::Number) return kind_ == TypeKind::Int || kind_ == TypeKind::Float;
  if (kind_ == TypeKind::Tuple && o.kind_ == TypeKind::Tuple && o.name_.empty() &&
      contained_.size() == o.contained_.size()) {  // covariant, as torch's tuples (a NamedTuple
                                                   // is a tuple of its fields)
    for (size_t i = 0; i < contained_.size(); ++i)
      if (!contained_[i]->is_subtype_of(*o.contained_[i])) return false;
    return true;
  }
  return false;
}

}  // namespace ampjit
