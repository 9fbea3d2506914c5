// Script's generic list/str/any builtins as interpreter prim handlers (see builtins.h).
//
// Note [Builtins without op entries]
// TorchScript declares these with type variables (`aten::append.t(t[](a!) self, t(c -> *) el)`),
// which ampjit's schema language does not have, so they are nodes without an op entry, dispatched
// by kind to a handler registered here. Inputs in this order, outputs as listed:
//   aten::len(list|str) -> int                aten::__getitem__(list|str, int) -> elem|str
//   aten::append(list, elem) -> list          aten::_set_item(list, int, elem) -> list
//   aten::pop(list, int) -> elem              aten::insert(list, int, elem)
//   aten::extend(list, list)                  aten::clear(list)          aten::reverse(list)
//   aten::slice(list|str, int?, int?, int) -> list|str
//   aten::add(list, list) -> list             aten::mul(list, int) -> list
//   aten::__contains__(list|str, elem) -> bool
//   aten::__is__(a, b) -> bool                aten::__isnot__(a, b) -> bool
//   aten::list(list|str) -> list              aten::eq(list, list) -> bool   aten::ne(...)
//   aten::sum(list) -> int|float              prim::min(list) -> elem        prim::max(list)
//   aten::str(any) -> str                     aten::format(str, any...) -> str
//   prim::Print(any...)                       aten::warn(str, int)
//   prim::unchecked_cast(x) -> x              prim::Uninitialized() -> None
//   prim::requires_grad(Tensor) -> bool
// Dicts (Note [Script dicts] in runtime/ivalue.h), with torch's names:
//   prim::DictConstruct(k0, v0, k1, v1, ...) -> dict
//   aten::len, aten::__getitem__(dict, key), aten::_set_item(dict, key, v), aten::__contains__,
//   aten::pop(dict, key[, default]), aten::clear(dict) and aten::Delete(dict|list, key|int)
//   aten::keys/values(dict) -> list   aten::items(dict) -> (k, v)[]   aten::get(dict, k[, default])
//   aten::setdefault(dict, k, default) -> v   aten::update(dict, dict)   aten::copy(dict) -> dict
//   aten::popitem(dict) -> (k, v)     aten::dict() / aten::dict(dict | (k, v)[]) -> dict
// The tensor overloads of the same names (aten::slice.Tensor, aten::add.Tensor, aten::len.Tensor,
// ...) and the scalar ones (runtime/ops/scalar.def) have op entries; the interpreter runs a node's
// op when it has one, so only the generic forms reach these handlers.
// The mutating ones (append, _set_item, pop, insert, extend, clear, reverse) change the list in
// place: every value holding that list sees the change, as in Python. None of these kinds is pure
// to the passes (they are unknown prims to DCE and CSE): CSE has no alias tracking for lists, so a
// read of a list merged across a mutation of it would be wrong.
#include "script/builtins.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>

#include "runtime/diagnostic.h"
#include "runtime/interpreter.h"

namespace ampjit {

namespace {

// ---- Python's str and repr -------------------------------------------------------------------

// repr(float): the shortest digits that round-trip, fixed notation for exponents -4..15,
// scientific otherwise (1e-05, 1e+16), always with a '.' or an exponent.
std::string python_float_str(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  const std::string_view sci(buf, static_cast<size_t>(r.ptr - buf));  // "-1.2345e+17"
  const size_t e_at = sci.find('e');
  std::string_view mantissa = sci.substr(0, e_at);
  std::string sign;
  if (mantissa.front() == '-') {
    sign = "-";
    mantissa.remove_prefix(1);
  }
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  int exp = 0;
  std::from_chars(sci.data() + e_at + 1 + (sci[e_at + 1] == '+'), sci.data() + sci.size(), exp);
  if (exp < -4 || exp >= 16) {
    std::string s = sign + digits.substr(0, 1);
    if (digits.size() > 1) s += "." + digits.substr(1);
    return s + fmt::format("e{}{:02d}", exp < 0 ? '-' : '+', std::abs(exp));
  }
  if (exp < 0) return sign + "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
  const size_t int_len = static_cast<size_t>(exp) + 1;
  if (digits.size() <= int_len)
    return sign + digits + std::string(int_len - digits.size(), '0') + ".0";
  return sign + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

// repr(str): single quotes unless the text has a single quote and no double quote.
std::string python_str_repr(const std::string& s) {
  const char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, q);
  for (unsigned char c : s) {
    if (c == '\\' || c == q) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + q;
}

std::string to_python_text(const IValue& v, bool repr) {
  switch (v.tag()) {
    case IValue::Tag::None:
      return "None";
    case IValue::Tag::Double:
      return python_float_str(v.to_double());
    case IValue::Tag::Int:
      return std::to_string(v.to_int());
    case IValue::Tag::Bool:
      return v.to_bool() ? "True" : "False";
    case IValue::Tag::String:
      return repr ? python_str_repr(v.to_string_ref()) : v.to_string_ref();
    case IValue::Tag::Tensor:
      return v.to_tensor().str();
    case IValue::Tag::ScalarType:
      return std::string("torch.") + dtype_name(v.to_scalar_type());
    case IValue::Tag::Device:
      return repr ? fmt::format("device(type='{}')", v.to_device().str()) : v.to_device().str();
    case IValue::Tag::List:
    case IValue::Tag::Tuple: {
      const bool list = v.is_list();
      const auto& el = list ? v.list_elems() : v.tuple_elems();
      std::string s = list ? "[" : "(";
      for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + to_python_text(el[i], true);
      if (!list && el.size() == 1) s += ",";
      return s + (list ? "]" : ")");
    }
    case IValue::Tag::Dict: {
      std::string s = "{";
      bool first = true;
      for (const auto& [k, e] : v.dict_obj()->items()) {
        s += (first ? "" : ", ") + to_python_text(k, true) + ": " + to_python_text(e, true);
        first = false;
      }
      return s + "}";
    }
    case IValue::Tag::Object:
      return v.repr();
  }
  return v.repr();
}

// ---- Python equality, ordering and identity ------------------------------------------------

const std::vector<IValue>& elems_of(const IValue& v) {
  return v.is_tuple() ? v.tuple_elems() : v.list_elems();
}

bool same_object(const IValue& a, const IValue& b) {
  if (a.tag() != b.tag()) return false;
  switch (a.tag()) {
    case IValue::Tag::Tensor:
      return a.tensor_impl() == b.tensor_impl();
    case IValue::Tag::String:
      return &a.to_string_ref() == &b.to_string_ref();
    case IValue::Tag::List:
      return a.list_obj() == b.list_obj();
    case IValue::Tag::Tuple:
      return &a.tuple_elems() == &b.tuple_elems();
    case IValue::Tag::Dict:
      return a.dict_obj() == b.dict_obj();
    case IValue::Tag::Object:
      return a.object() == b.object();
    default:
      return a.equals(b);  // None, numbers, dtypes, devices: by value
  }
}

// a < b for the values Python orders: numbers (int against float exactly enough for script's
// values) and strings; lists lexicographically.
bool python_less(const IValue& a, const IValue& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_double() || b.is_double()) return a.to_double() < b.to_double();
    return a.to_int() < b.to_int();
  }
  if (a.is_string() && b.is_string()) return a.to_string_ref() < b.to_string_ref();
  if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
    const auto& x = elems_of(a);
    const auto& y = elems_of(b);
    for (size_t i = 0; i < x.size() && i < y.size(); ++i)
      if (!python_equals(x[i], y[i])) return python_less(x[i], y[i]);
    return x.size() < y.size();
  }
  throw TypeError(fmt::format("'<' not supported between instances of '{}' and '{}'", a.tag_name(),
                              b.tag_name()));
}

// ---- Sequences ---------------------------------------------------------------------------------

// A Python index into n elements (negative counts from the end); nullopt when out of range.
std::optional<size_t> normalize_index(int64_t i, size_t n) {
  const int64_t size = static_cast<int64_t>(n);
  if (i < 0) i += size;
  if (i < 0 || i >= size) return std::nullopt;
  return static_cast<size_t>(i);
}

// The byte offset of each code point of UTF-8 text, then the text's size: Python indexes strings
// by code point.
std::vector<size_t> code_points(const std::string& s) {
  std::vector<size_t> at;
  for (size_t i = 0; i < s.size(); ++i)
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) at.push_back(i);
  at.push_back(s.size());
  return at;
}
std::string code_point(const std::string& s, const std::vector<size_t>& at, size_t i) {
  return s.substr(at[i], at[i + 1] - at[i]);
}

// CPython's PySlice_Unpack + PySlice_AdjustIndices: the first index and the count.
std::pair<int64_t, int64_t> slice_indices(const IValue& start_v, const IValue& stop_v, int64_t step,
                                          size_t n) {
  AMPJIT_CHECK_T(ValueError, step != 0, "slice step cannot be zero");
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  step = std::max(step, -kMax);
  const int64_t len = static_cast<int64_t>(n);
  int64_t start = start_v.is_none() ? (step < 0 ? kMax : 0) : start_v.to_int();
  int64_t stop = stop_v.is_none() ? (step < 0 ? -kMax - 1 : kMax) : stop_v.to_int();
  auto adjust = [&](int64_t& i) {
    if (i < 0) {
      i += len;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= len) {
      i = step < 0 ? len - 1 : len;
    }
  };
  adjust(start);
  adjust(stop);
  if (step < 0) return {start, stop < start ? (start - stop - 1) / -step + 1 : 0};
  return {start, start < stop ? (stop - start - 1) / step + 1 : 0};
}

ListObj& list_of(const IValue& v) {
  return *v.list_obj();
}

// torch's message for a missing key: "KeyError: nope" (a RuntimeError, as in TorchScript).
[[noreturn]] void throw_key_error(const IValue& key) {
  throw Error("KeyError: " + to_python_text(key, false));
}

const IValue& dict_get(const IValue& d, const IValue& key) {
  const IValue* v = d.dict_obj()->find(key);
  if (!v) throw_key_error(key);
  return *v;
}

// ---- Handlers ------------------------------------------------------------------------------

void len_h(const Node&, Stack& io) {
  const IValue& v = io.at(0);
  if (v.is_dict()) {
    io = {IValue(static_cast<int64_t>(v.dict_obj()->size()))};
    return;
  }
  const int64_t n = v.is_string() ? static_cast<int64_t>(code_points(v.to_string_ref()).size() - 1)
                                  : static_cast<int64_t>(elems_of(v).size());
  io = {IValue(n)};
}

void getitem_h(const Node&, Stack& io) {
  const IValue& v = io.at(0);
  if (v.is_dict()) {
    IValue r = dict_get(v, io.at(1));
    io = {std::move(r)};
    return;
  }
  const int64_t i = io.at(1).to_int();
  if (v.is_string()) {
    const std::string& s = v.to_string_ref();
    const std::vector<size_t> at = code_points(s);
    const std::optional<size_t> k = normalize_index(i, at.size() - 1);
    if (!k) throw IndexError("string index out of range");
    io = {IValue(code_point(s, at, *k))};
    return;
  }
  const auto& el = elems_of(v);
  const std::optional<size_t> k = normalize_index(i, el.size());
  if (!k) throw IndexError(v.is_tuple() ? "tuple index out of range" : "list index out of range");
  IValue r = el[*k];
  io = {std::move(r)};
}

void append_h(const Node&, Stack& io) {
  list_of(io.at(0)).elems.push_back(io.at(1));
  io.resize(1);
}

void set_item_h(const Node&, Stack& io) {
  if (io.at(0).is_dict()) {
    io[0].dict_obj()->set(io.at(1), io.at(2));
    io.resize(1);
    return;
  }
  auto& el = list_of(io.at(0)).elems;
  const std::optional<size_t> k = normalize_index(io.at(1).to_int(), el.size());
  if (!k) throw IndexError("list assignment index out of range");
  el[*k] = io.at(2);
  io.resize(1);
}

void pop_h(const Node&, Stack& io) {
  if (io.at(0).is_dict()) {  // d.pop(key[, default])
    DictObj& d = *io[0].dict_obj();
    const IValue* v = d.find(io.at(1));
    if (!v && io.size() < 3) throw_key_error(io[1]);
    IValue r = v ? *v : io[2];
    if (v) d.erase(io[1]);
    io = {std::move(r)};
    return;
  }
  auto& el = list_of(io.at(0)).elems;
  if (el.empty()) throw IndexError("pop from empty list");
  const std::optional<size_t> k = normalize_index(io.size() > 1 ? io[1].to_int() : -1, el.size());
  if (!k) throw IndexError("pop index out of range");
  IValue r = std::move(el[*k]);
  el.erase(el.begin() + static_cast<std::ptrdiff_t>(*k));
  io = {std::move(r)};
}

// list.insert clamps the index to the list, as Python does.
void insert_h(const Node&, Stack& io) {
  auto& el = list_of(io.at(0)).elems;
  const int64_t n = static_cast<int64_t>(el.size());
  int64_t i = io.at(1).to_int();
  if (i < 0) i = std::max<int64_t>(i + n, 0);
  i = std::min(i, n);
  el.insert(el.begin() + i, io.at(2));
  io.clear();
}

void extend_h(const Node&, Stack& io) {
  std::vector<IValue> more = elems_of(io.at(1));  // a copy: x.extend(x) doubles x
  auto& el = list_of(io.at(0)).elems;
  el.insert(el.end(), std::make_move_iterator(more.begin()), std::make_move_iterator(more.end()));
  io.clear();
}

void clear_h(const Node&, Stack& io) {
  if (io.at(0).is_dict()) {
    io[0].dict_obj()->clear();
    io.clear();
    return;
  }
  list_of(io.at(0)).elems.clear();
  io.clear();
}

void reverse_h(const Node&, Stack& io) {
  auto& el = list_of(io.at(0)).elems;
  std::reverse(el.begin(), el.end());
  io.clear();
}

void slice_h(const Node&, Stack& io) {
  const IValue& v = io.at(0);
  const int64_t step = io.at(3).to_int();
  if (v.is_string()) {
    const std::string& s = v.to_string_ref();
    const std::vector<size_t> at = code_points(s);
    const auto [start, count] = slice_indices(io.at(1), io.at(2), step, at.size() - 1);
    std::string out;
    for (int64_t i = 0; i < count; ++i)
      out += code_point(s, at, static_cast<size_t>(start + i * step));
    io = {IValue(std::move(out))};
    return;
  }
  const auto& el = elems_of(v);
  const auto [start, count] = slice_indices(io.at(1), io.at(2), step, el.size());
  std::vector<IValue> out;
  out.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out.push_back(el[static_cast<size_t>(start + i * step)]);
  io = {IValue::list(std::move(out))};
}

void add_h(const Node&, Stack& io) {
  std::vector<IValue> out = elems_of(io.at(0));
  const auto& b = elems_of(io.at(1));
  out.insert(out.end(), b.begin(), b.end());
  io = {IValue::list(std::move(out))};
}

// list * n (or n * list): n copies of the elements (the elements themselves are shared).
void mul_h(const Node&, Stack& io) {
  const bool list_first = io.at(0).is_list();
  const auto& el = elems_of(io.at(list_first ? 0 : 1));
  const int64_t n = io.at(list_first ? 1 : 0).to_int();
  std::vector<IValue> out;
  if (n > 0) {
    out.reserve(el.size() * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), el.begin(), el.end());
  }
  io = {IValue::list(std::move(out))};
}

void contains_h(const Node&, Stack& io) {
  const IValue& seq = io.at(0);
  const IValue& x = io.at(1);
  bool found = false;
  if (seq.is_dict()) {
    found = seq.dict_obj()->find(x) != nullptr;
  } else if (seq.is_string()) {
    found = seq.to_string_ref().find(x.to_string_ref()) != std::string::npos;
  } else {
    for (const IValue& e : elems_of(seq)) {
      if (same_object(e, x) || python_equals(e, x)) {
        found = true;
        break;
      }
    }
  }
  io = {IValue(found)};
}

// del l[i] / del d[k]
void delete_h(const Node&, Stack& io) {
  if (io.at(0).is_dict()) {
    if (!io[0].dict_obj()->erase(io.at(1))) throw_key_error(io[1]);
  } else {
    auto& el = list_of(io.at(0)).elems;
    const std::optional<size_t> k = normalize_index(io.at(1).to_int(), el.size());
    if (!k) throw IndexError("list assignment index out of range");
    el.erase(el.begin() + static_cast<std::ptrdiff_t>(*k));
  }
  io.clear();
}

void dict_construct_h(const Node&, Stack& io) {
  Ref<DictObj> d(new DictObj());
  for (size_t i = 0; i + 1 < io.size(); i += 2) d->set(io[i], io[i + 1]);
  io = {IValue(std::move(d))};
}

template <int kWhat /* 0 keys, 1 values, 2 items */>
void dict_view_h(const Node&, Stack& io) {
  const auto& items = io.at(0).dict_obj()->items();
  std::vector<IValue> out;
  out.reserve(items.size());
  for (const auto& [k, v] : items) {
    if constexpr (kWhat == 0) out.push_back(k);
    if constexpr (kWhat == 1) out.push_back(v);
    if constexpr (kWhat == 2) out.push_back(IValue::tuple({k, v}));
  }
  io = {IValue::list(std::move(out))};
}

void dict_get_h(const Node&, Stack& io) {  // d.get(k) -> v? ; d.get(k, default) -> v
  const IValue* v = io.at(0).dict_obj()->find(io.at(1));
  IValue r = v ? *v : io.size() > 2 ? io[2] : IValue();
  io = {std::move(r)};
}

void setdefault_h(const Node&, Stack& io) {
  DictObj& d = *io.at(0).dict_obj();
  if (!d.find(io.at(1))) d.set(io[1], io.at(2));
  IValue r = *d.find(io[1]);
  io = {std::move(r)};
}

void update_h(const Node&, Stack& io) {
  std::vector<DictObj::Entry> more = io.at(1).dict_obj()->items();  // a copy: d.update(d)
  DictObj& d = *io.at(0).dict_obj();
  for (auto& [k, v] : more) d.set(std::move(k), std::move(v));
  io.clear();
}

Ref<DictObj> dict_copy(const IValue& v) {
  Ref<DictObj> d(new DictObj());
  if (v.is_dict()) {
    for (const auto& [k, e] : v.dict_obj()->items()) d->set(k, e);
  } else {  // a list of (key, value) tuples
    for (const IValue& kv : elems_of(v)) d->set(kv.tuple_elems().at(0), kv.tuple_elems().at(1));
  }
  return d;
}

void copy_h(const Node&, Stack& io) {
  Ref<DictObj> d = dict_copy(io.at(0));
  io = {IValue(std::move(d))};
}

void dict_h(const Node&, Stack& io) {
  Ref<DictObj> d = io.empty() ? Ref<DictObj>(new DictObj()) : dict_copy(io[0]);
  io = {IValue(std::move(d))};
}

// torch's popitem takes the first entry (Python's takes the last).
void popitem_h(const Node&, Stack& io) {
  DictObj& d = *io.at(0).dict_obj();
  if (d.size() == 0) throw Error("popitem(): dictionary is empty");
  IValue r = IValue::tuple({d.items().front().first, d.items().front().second});
  d.erase(d.items().front().first);
  io = {std::move(r)};
}

void is_h(const Node&, Stack& io) {
  io = {IValue(same_object(io.at(0), io.at(1)))};
}
void isnot_h(const Node&, Stack& io) {
  io = {IValue(!same_object(io.at(0), io.at(1)))};
}

void list_h(const Node&, Stack& io) {
  const IValue& v = io.at(0);
  std::vector<IValue> out;
  if (v.is_string()) {
    const std::string& s = v.to_string_ref();
    const std::vector<size_t> at = code_points(s);
    for (size_t i = 0; i + 1 < at.size(); ++i) out.emplace_back(code_point(s, at, i));
  } else {
    out = elems_of(v);
  }
  io = {IValue::list(std::move(out))};
}

void eq_h(const Node&, Stack& io) {
  io = {IValue(python_equals(io.at(0), io.at(1)))};
}
void ne_h(const Node&, Stack& io) {
  io = {IValue(!python_equals(io.at(0), io.at(1)))};
}

// sum(list): an int sum (wrapping) unless an element or the node's result type is float.
void sum_h(const Node& n, Stack& io) {
  const auto& el = elems_of(io.at(0));
  bool floating = n.outputs().size() == 1 && n.output()->type()->kind() == TypeKind::Float;
  for (const IValue& e : el) {
    AMPJIT_CHECK_T(TypeError, e.is_number(), "unsupported operand type(s) for +: 'int' and '{}'",
                   e.tag_name());
    floating |= e.is_double();
  }
  if (floating) {
    double s = 0;
    for (const IValue& e : el) s += e.to_double();
    io = {IValue(s)};
  } else {
    uint64_t s = 0;
    for (const IValue& e : el) s += static_cast<uint64_t>(e.to_int());
    io = {IValue(static_cast<int64_t>(s))};
  }
}

// min(list) / max(list): the first extreme element, as Python returns it.
template <bool kMax>
void extreme_h(const Node&, Stack& io) {
  const auto& el = elems_of(io.at(0));
  AMPJIT_CHECK_T(ValueError, !el.empty(), "{}() arg is an empty sequence", kMax ? "max" : "min");
  size_t best = 0;
  for (size_t i = 1; i < el.size(); ++i)
    if (kMax ? python_less(el[best], el[i]) : python_less(el[i], el[best])) best = i;
  IValue r = el[best];
  io = {std::move(r)};
}

// ---- str methods (emitted by call_list_method with every argument given) ---------------------

bool is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}
void startswith_h(const Node&, Stack& io) {
  const std::string &s = io.at(0).to_string_ref(), &p = io.at(1).to_string_ref();
  io = {IValue(s.rfind(p, 0) == 0)};
}
void endswith_h(const Node&, Stack& io) {
  const std::string &s = io.at(0).to_string_ref(), &p = io.at(1).to_string_ref();
  io = {IValue(s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0)};
}
template <bool Upper>
void case_h(const Node&, Stack& io) {
  std::string s = io.at(0).to_string_ref();
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x80)
      c = static_cast<char>(Upper ? std::toupper(static_cast<unsigned char>(c))
                                  : std::tolower(static_cast<unsigned char>(c)));
  io = {IValue(std::move(s))};
}
template <bool Left, bool Right>
void strip_h(const Node&, Stack& io) {
  const std::string &s = io.at(0).to_string_ref(), &chars = io.at(1).to_string_ref();
  size_t b = 0, e = s.size();
  if (Left)
    while (b < e && chars.find(s[b]) != std::string::npos) ++b;
  if (Right)
    while (e > b && chars.find(s[e - 1]) != std::string::npos) --e;
  io = {IValue(s.substr(b, e - b))};
}
// split(sep, max): sep "" (None in Python) splits on runs of whitespace, dropping empty pieces.
void split_h(const Node&, Stack& io) {
  const std::string &s = io.at(0).to_string_ref(), &sep = io.at(1).to_string_ref();
  int64_t max = io.at(2).to_int();
  std::vector<IValue> out;
  if (sep.empty()) {
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && is_space(s[i])) ++i;
      if (i == s.size()) break;
      if (max == 0) {
        size_t e = s.size();
        while (e > i && is_space(s[e - 1])) --e;
        out.emplace_back(s.substr(i, e - i));
        break;
      }
      size_t j = i;
      while (j < s.size() && !is_space(s[j])) ++j;
      out.emplace_back(s.substr(i, j - i));
      --max;
      i = j;
    }
  } else {
    size_t b = 0;
    for (;;) {
      const size_t k = max == 0 ? std::string::npos : s.find(sep, b);
      if (k == std::string::npos) {
        out.emplace_back(s.substr(b));
        break;
      }
      out.emplace_back(s.substr(b, k - b));
      b = k + sep.size();
      --max;
    }
  }
  io = {IValue::list(std::move(out))};
}
void join_h(const Node&, Stack& io) {
  const std::string& sep = io.at(0).to_string_ref();
  std::string out;
  const auto& parts = io.at(1).list_elems();
  for (size_t i = 0; i < parts.size(); ++i) out += (i ? sep : "") + parts[i].to_string_ref();
  io = {IValue(std::move(out))};
}
void replace_h(const Node&, Stack& io) {
  std::string s = io.at(0).to_string_ref();
  const std::string &from = io.at(1).to_string_ref(), &to = io.at(2).to_string_ref();
  std::string out;
  if (from.empty()) {  // Python: `to` between every character and at both ends
    out = to;
    for (char c : s) (out += c) += to;
  } else {
    size_t b = 0;
    for (size_t k; (k = s.find(from, b)) != std::string::npos; b = k + from.size())
      (out += s.substr(b, k - b)) += to;
    out += s.substr(b);
  }
  io = {IValue(std::move(out))};
}
// aten::find(str self, str substr, int start=0, int end=-1): torch's, whose end=-1 means the end
// of the string (not Python's s[:-1]); a negative start or end counts from the end.
void find_h(const Node&, Stack& io) {
  const std::string& s = io.at(0).to_string_ref();
  const auto n = static_cast<int64_t>(s.size());
  int64_t start = io.size() > 2 ? io.at(2).to_int() : 0;
  int64_t end = io.size() > 3 ? io.at(3).to_int() : -1;
  if (start < 0) start = std::max<int64_t>(0, start + n);
  end = end == -1 ? n : end < 0 ? std::max<int64_t>(0, end + n) : std::min(end, n);
  const std::string& sub = io.at(1).to_string_ref();
  int64_t found = -1;
  if (start <= end) {
    const size_t k = s.substr(0, static_cast<size_t>(end)).find(sub, static_cast<size_t>(start));
    if (k != std::string::npos) found = static_cast<int64_t>(k);
  }
  io = {IValue(found)};
}
void count_h(const Node&, Stack& io) {
  const std::string &s = io.at(0).to_string_ref(), &p = io.at(1).to_string_ref();
  int64_t n = 0;
  if (p.empty()) {
    n = static_cast<int64_t>(s.size()) + 1;
  } else {
    for (size_t k = s.find(p); k != std::string::npos; k = s.find(p, k + p.size())) ++n;
  }
  io = {IValue(n)};
}
template <int Kind>  // 0 digit, 1 alpha, 2 space
void is_h(const Node&, Stack& io) {
  const std::string& s = io.at(0).to_string_ref();
  bool all = !s.empty();
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    all = all && (Kind == 0   ? std::isdigit(u) != 0
                  : Kind == 1 ? std::isalpha(u) != 0
                              : is_space(c));
  }
  io = {IValue(all)};
}

// isinstance on a value of type Any (torch's prim::isinstance): its attribute `value` lists the
// kinds to accept, comma-separated (int, float, bool, str, Tensor, NoneType, list, tuple).
void isinstance_h(const Node& n, Stack& io) {
  const IValue& v = io.at(0);
  const std::string& kinds = n.attr(sym::attr::value).to_string_ref();
  bool hit = false;
  for (size_t b = 0; b <= kinds.size() && !hit;) {
    size_t e = kinds.find(',', b);
    if (e == std::string::npos) e = kinds.size();
    const std::string_view k(kinds.data() + b, e - b);
    hit = (k == "int" && v.is_int()) || (k == "float" && v.is_double()) ||
          (k == "bool" && v.is_bool()) || (k == "str" && v.is_string()) ||
          (k == "Tensor" && v.is_tensor()) || (k == "NoneType" && v.is_none()) ||
          (k == "list" && v.is_list()) || (k == "tuple" && v.is_tuple()) ||
          (k == "dict" && v.is_dict());
    b = e + 1;
  }
  io = {IValue(hit)};
}

// x.requires_grad in script (torch's prim::requires_grad).
void requires_grad_h(const Node&, Stack& io) {
  io = {IValue(io.at(0).to_tensor().requires_grad())};
}

void str_h(const Node&, Stack& io) {
  io = {IValue(python_str(io.at(0)))};
}

// str.format with `{}` placeholders ({{ and }} escape braces); extra arguments are ignored, as in
// Python and torch.
void format_h(const Node&, Stack& io) {
  const std::string fmt_text = io.at(0).to_string_ref();
  std::string out;
  size_t next = 1;
  for (size_t i = 0; i < fmt_text.size(); ++i) {
    const char c = fmt_text[i];
    const bool doubled = i + 1 < fmt_text.size() && fmt_text[i + 1] == c;
    if (c == '{' && doubled) {
      out += '{';
      ++i;
    } else if (c == '{') {
      AMPJIT_CHECK_T(NotImplementedError, i + 1 < fmt_text.size() && fmt_text[i + 1] == '}',
                     "format(): only {{}} placeholders are supported in \"{}\"", fmt_text);
      AMPJIT_CHECK_T(IndexError, next < io.size(),
                     "Replacement index {} out of range for positional args tuple", next - 1);
      out += python_str(io[next++]);
      ++i;
    } else if (c == '}') {
      AMPJIT_CHECK_T(ValueError, doubled, "Single '}}' encountered in format string");
      out += '}';
      ++i;
    } else {
      out += c;
    }
  }
  io = {IValue(std::move(out))};
}

void print_h(const Node&, Stack& io) {
  std::string line;
  for (size_t i = 0; i < io.size(); ++i) line += (i ? " " : "") + python_str(io[i]);
  std::cout << line << '\n' << std::flush;
  io.clear();
}

void unchecked_cast_h(const Node&, Stack& io) {
  io.resize(1);
}
void uninitialized_h(const Node&, Stack& io) {
  io = {IValue()};
}

// warnings.warn in script: a UserWarning through the one warning channel (runtime/diagnostic.h),
// at the node's source (Python: warnings.warn_explicit there).
void warn_h(const Node& n, Stack& io) {
  warn(WarningCategory::User, io.at(0).to_string_ref(), n.source_range());
  io.clear();
}

const bool kRegistered = [] {
  const std::pair<const char*, PrimHandler> handlers[] = {
      {"aten::len", len_h},
      {"aten::__getitem__", getitem_h},
      {"aten::append", append_h},
      {"aten::_set_item", set_item_h},
      {"aten::pop", pop_h},
      {"aten::insert", insert_h},
      {"aten::extend", extend_h},
      {"aten::clear", clear_h},
      {"aten::reverse", reverse_h},
      {"aten::slice", slice_h},
      {"aten::add", add_h},
      {"aten::mul", mul_h},
      {"aten::__contains__", contains_h},
      {"aten::__is__", is_h},
      {"aten::__isnot__", isnot_h},
      {"aten::list", list_h},
      {"aten::eq", eq_h},
      {"aten::ne", ne_h},
      {"aten::sum", sum_h},
      {"prim::min", extreme_h<false>},
      {"prim::max", extreme_h<true>},
      {"aten::str", str_h},
      {"aten::format", format_h},
      {"prim::Print", print_h},
      {"aten::warn", warn_h},
      {"prim::unchecked_cast", unchecked_cast_h},
      {"prim::Uninitialized", uninitialized_h},
      {"prim::requires_grad", requires_grad_h},
      {"prim::isinstance", isinstance_h},
      {"aten::startswith", startswith_h},
      {"aten::endswith", endswith_h},
      {"aten::lower", case_h<false>},
      {"aten::upper", case_h<true>},
      {"aten::strip", strip_h<true, true>},
      {"aten::lstrip", strip_h<true, false>},
      {"aten::rstrip", strip_h<false, true>},
      {"aten::split", split_h},
      {"aten::join", join_h},
      {"aten::replace", replace_h},
      {"aten::find", find_h},
      {"aten::count", count_h},
      {"aten::isdigit", is_h<0>},
      {"aten::isalpha", is_h<1>},
      {"aten::isspace", is_h<2>},
      {"aten::Delete", delete_h},
      {"prim::DictConstruct", dict_construct_h},
      {"aten::keys", dict_view_h<0>},
      {"aten::values", dict_view_h<1>},
      {"aten::items", dict_view_h<2>},
      {"aten::get", dict_get_h},
      {"aten::setdefault", setdefault_h},
      {"aten::update", update_h},
      {"aten::copy", copy_h},
      {"aten::dict", dict_h},
      {"aten::popitem", popitem_h},
  };
  for (const auto& [name, h] : handlers) register_prim_handler(Symbol::intern(name), h);
  return true;
}();

}  // namespace

const std::vector<std::pair<std::string_view, std::string_view>>& op_aliases() {
  static const std::vector<std::pair<std::string_view, std::string_view>> kAliases = {
      {"absolute", "abs"},
      {"absolute_", "abs_"},
      {"clip", "clamp"},
      {"clip_", "clamp_"},
      {"negative", "neg"},
      {"negative_", "neg_"},
      {"subtract", "sub"},
      {"subtract_", "sub_"},
      {"multiply", "mul"},
      {"multiply_", "mul_"},
      {"divide", "div"},
      {"divide_", "div_"},
      {"true_divide", "div"},
      {"true_divide_", "div_"},
      {"greater", "gt"},
      {"greater_", "gt_"},
      {"greater_equal", "ge"},
      {"greater_equal_", "ge_"},
      {"less", "lt"},
      {"less_", "lt_"},
      {"less_equal", "le"},
      {"less_equal_", "le_"},
      {"not_equal", "ne"},
      {"not_equal_", "ne_"},
      {"arctan2", "atan2"},
      {"fix", "trunc"},
      {"concat", "cat"},
      {"swapdims", "transpose"},
      {"swapaxes", "transpose"},
      {"special_expit", "sigmoid"},
      {"special_erf", "erf"},
      {"special_log1p", "log1p"},
      {"special_softmax", "softmax"},
      {"special_log_softmax", "log_softmax"},
      {"special_digamma", "digamma"},
      {"special_psi", "digamma"},
      {"special_erfc", "erfc"},
      {"special_erfinv", "erfinv"},
      {"special_exp2", "exp2"},
      {"special_expm1", "expm1"},
      {"special_gammaln", "lgamma"},
      {"special_i0", "i0"},
      {"special_logit", "logit"},
      {"special_logsumexp", "logsumexp"},
      {"special_multigammaln", "mvlgamma"},
      {"special_polygamma", "polygamma"},
      {"special_sinc", "sinc"},
      {"special_xlogy", "xlogy"},
      {"special_gammainc", "igamma"},
      {"special_gammaincc", "igammac"},
      {"arccos", "acos"},
      {"arccos_", "acos_"},
      {"arccosh", "acosh"},
      {"arccosh_", "acosh_"},
      {"arcsin", "asin"},
      {"arcsin_", "asin_"},
      {"arcsinh", "asinh"},
      {"arcsinh_", "asinh_"},
      {"arctan", "atan"},
      {"arctan_", "atan_"},
      {"arctanh", "atanh"},
      {"arctanh_", "atanh_"},
      {"arctan2_", "atan2_"},
      {"fix_", "trunc_"},
      {"concatenate", "cat"},
      {"ger", "outer"},
      {"swapdims_", "transpose_"},
      {"swapaxes_", "transpose_"},
  };
  return kAliases;
}

std::string_view op_alias_target(std::string_view name) {
  for (const auto& [alias, op] : op_aliases())
    if (alias == name) return op;
  return {};
}

std::string python_str(const IValue& v) {
  return to_python_text(v, false);
}
std::string python_repr(const IValue& v) {
  return to_python_text(v, true);
}

bool python_equals(const IValue& a, const IValue& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_double() || b.is_double()) return a.to_double() == b.to_double();
    return a.to_int() == b.to_int();
  }
  if ((a.is_list() && b.is_list()) || (a.is_tuple() && b.is_tuple())) {
    const auto& x = elems_of(a);
    const auto& y = elems_of(b);
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!same_object(x[i], y[i]) && !python_equals(x[i], y[i])) return false;
    return true;
  }
  if (a.is_string() && b.is_string()) return a.to_string_ref() == b.to_string_ref();
  if (a.is_dict() && b.is_dict()) {
    const DictObj& x = *a.dict_obj();
    if (x.size() != b.dict_obj()->size()) return false;
    for (const auto& [k, v] : b.dict_obj()->items()) {
      const IValue* mine = x.find(k);
      if (!mine || (!same_object(*mine, v) && !python_equals(*mine, v))) return false;
    }
    return true;
  }
  return same_object(a, b);
}

}  // namespace ampjit
