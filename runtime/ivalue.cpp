// IValue conversions and printing.
#include "runtime/ivalue.h"

#include <limits>

namespace ampjit {

IValue::IValue(const std::vector<int64_t>& v) : IValue(std::span<const int64_t>(v)) {}
IValue::IValue(std::span<const int64_t> v) : tag_(Tag::List) {
  auto* l = new ListObj();
  l->elems.reserve(v.size());
  for (int64_t x : v) l->elems.emplace_back(x);
  p_.ptr = hold(l);
}
IValue::IValue(const std::vector<double>& v) : tag_(Tag::List) {
  auto* l = new ListObj();
  for (double x : v) l->elems.emplace_back(x);
  p_.ptr = hold(l);
}
IValue::IValue(const std::vector<Tensor>& v) : tag_(Tag::List) {
  auto* l = new ListObj();
  for (const Tensor& x : v) l->elems.emplace_back(x);
  p_.ptr = hold(l);
}

IValue IValue::tuple(std::vector<IValue> elems) {
  Ref<TupleObj> t(new TupleObj());
  t->elems = std::move(elems);
  return IValue(std::move(t));
}
IValue IValue::list(std::vector<IValue> elems) {
  Ref<ListObj> l(new ListObj());
  l->elems = std::move(elems);
  return IValue(std::move(l));
}

std::vector<int64_t> IValue::to_int_list() const {
  if (tag_ == Tag::Int) return {p_.i};  // int[N] arguments accept a single int
  std::vector<int64_t> out;
  const auto& el = tag_ == Tag::Tuple ? tuple_elems() : list_elems();
  out.reserve(el.size());
  for (const auto& e : el) out.push_back(e.to_int());
  return out;
}
std::vector<double> IValue::to_double_list() const {
  std::vector<double> out;
  for (const auto& e : list_elems()) out.push_back(e.to_double());
  return out;
}
std::vector<Tensor> IValue::to_tensor_list() const {
  std::vector<Tensor> out;
  const auto& el = tag_ == Tag::Tuple ? tuple_elems() : list_elems();
  out.reserve(el.size());
  for (const auto& e : el) out.push_back(e.to_tensor());
  return out;
}

namespace {
// The Python name of a kind of value ("object" for objects, whose class names them).
const char* name_of(IValue::Tag tag) {
  using Tag = IValue::Tag;
  switch (tag) {
    case Tag::None:
      return "None";
    case Tag::Tensor:
      return "Tensor";
    case Tag::Double:
      return "float";
    case Tag::Int:
      return "int";
    case Tag::Bool:
      return "bool";
    case Tag::String:
      return "str";
    case Tag::ScalarType:
      return "dtype";
    case Tag::Device:
      return "Device";
    case Tag::List:
      return "list";
    case Tag::Tuple:
      return "tuple";
    case Tag::Dict:
      return "dict";
    case Tag::Object:
      return "object";
  }
  return "?";
}
}  // namespace

const char* IValue::tag_name() const {
  return tag_ == Tag::Object ? object()->type_name() : name_of(tag_);
}

void IValue::throw_bad_tag(Tag t) const {
  throw TypeError(fmt::format("expected a value of type {} but got {}", name_of(t), tag_name()));
}

void IValue::throw_bad_dtype_code() const {
  throw TypeError(fmt::format("{} is not a valid dtype code", p_.i));
}

std::string IValue::repr() const {
  switch (tag_) {
    case Tag::None:
      return "None";
    case Tag::Tensor: {
      const TensorImpl* t = tensor_impl();
      return fmt::format("Tensor(dtype={}, shape={})", dtype_name(t->dtype), shape_str(t->sizes));
    }
    case Tag::Double:
      return Scalar(p_.d).str();
    case Tag::Int:
      return std::to_string(p_.i);
    case Tag::Bool:
      return p_.i ? "True" : "False";
    case Tag::String:
      return "\"" + to_string_ref() + "\"";
    case Tag::ScalarType:
      return dtype_name(static_cast<ScalarType>(p_.i));
    case Tag::Device:
      return p_.dev.str();
    case Tag::List:
    case Tag::Tuple: {
      const auto& el = tag_ == Tag::List ? list_elems() : tuple_elems();
      std::string s = tag_ == Tag::List ? "[" : "(";
      for (size_t i = 0; i < el.size(); ++i) s += (i ? ", " : "") + el[i].repr();
      if (tag_ == Tag::Tuple && el.size() == 1) s += ",";
      return s + (tag_ == Tag::List ? "]" : ")");
    }
    case Tag::Dict: {
      std::string s = "{";
      bool first = true;
      for (const auto& [k, v] : dict_obj()->items()) {
        s += (first ? "" : ", ") + k.repr() + ": " + v.repr();
        first = false;
      }
      return s + "}";
    }
    case Tag::Object:
      return std::string("<") + object()->type_name() + ">";
  }
  return "?";
}

bool IValue::equals(const IValue& o) const {
  if (tag_ != o.tag_) return false;
  switch (tag_) {
    case Tag::None:
      return true;
    case Tag::Double:
      return p_.d == o.p_.d || (p_.d != p_.d && o.p_.d != o.p_.d);
    case Tag::Int:
    case Tag::Bool:
    case Tag::ScalarType:
      return p_.i == o.p_.i;
    case Tag::Device:
      return p_.dev == o.p_.dev;
    case Tag::String:
      return to_string_ref() == o.to_string_ref();
    case Tag::List:
    case Tag::Tuple: {
      const auto& a = tag_ == Tag::List ? list_elems() : tuple_elems();
      const auto& b = tag_ == Tag::List ? o.list_elems() : o.tuple_elems();
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i)
        if (!a[i].equals(b[i])) return false;
      return true;
    }
    default:
      return p_.ptr == o.p_.ptr;
  }
}

// ---- Dicts ------------------------------------------------------------------------------------

namespace {
size_t key_hash(const IValue& k) {
  switch (k.tag()) {
    case IValue::Tag::String:
      return std::hash<std::string>()(k.to_string_ref());
    case IValue::Tag::Double:
      return std::hash<double>()(k.to_double());
    case IValue::Tag::Int:
    case IValue::Tag::Bool:
      return std::hash<int64_t>()(k.to_int());
    case IValue::Tag::Device:
      return std::hash<std::string>()(k.to_device().str());
    case IValue::Tag::Tensor:
      return std::hash<const void*>()(k.tensor_impl());
    default:
      return 0;
  }
}
}  // namespace

bool DictObj::valid_key(const IValue& key) {
  switch (key.tag()) {
    case IValue::Tag::String:
    case IValue::Tag::Double:
    case IValue::Tag::Int:
    case IValue::Tag::Bool:
    case IValue::Tag::Device:
    case IValue::Tag::Tensor:
      return true;
    default:
      return false;
  }
}

std::optional<size_t> DictObj::index_of(const IValue& key) const {
  auto [lo, hi] = index_.equal_range(key_hash(key));
  for (auto it = lo; it != hi; ++it)
    if (items_[it->second].first.equals(key)) return it->second;
  return std::nullopt;
}

const IValue* DictObj::find(const IValue& key) const {
  auto i = index_of(key);
  return i ? &items_[*i].second : nullptr;
}

void DictObj::set(IValue key, IValue value) {
  AMPJIT_CHECK(valid_key(key),
               "a dict key must be a str, int, float, bool, device or Tensor, not {}",
               key.tag_name());
  if (auto i = index_of(key)) {
    items_[*i].second = std::move(value);
    return;
  }
  index_.emplace(key_hash(key), items_.size());
  items_.emplace_back(std::move(key), std::move(value));
}

bool DictObj::erase(const IValue& key) {
  auto i = index_of(key);
  if (!i) return false;
  items_.erase(items_.begin() + static_cast<std::ptrdiff_t>(*i));
  reindex();
  return true;
}

void DictObj::clear() {
  items_.clear();
  index_.clear();
}

void DictObj::reindex() {
  index_.clear();
  for (size_t i = 0; i < items_.size(); ++i) index_.emplace(key_hash(items_[i].first), i);
}

// ---- Scalar and Device ------------------------------------------------------------------------

std::string Scalar::str() const {
  if (is_bool()) return to_bool() ? "True" : "False";
  if (is_integral()) return std::to_string(i_);
  std::string s = fmt::format("{}", d_);
  if (s.find_first_of(".einn") == std::string::npos) s += ".";
  return s;
}

Device Device::parse(std::string_view s) {
  if (s == "cpu") return Device(DeviceType::CPU);
  if (s == "cuda") return Device(DeviceType::CUDA, 0);
  if (s.starts_with("cuda:") && s.size() > 5) {
    const std::string_view digits = s.substr(5);
    AMPJIT_CHECK(digits.find_first_not_of("0123456789") == std::string_view::npos &&
                     (digits.size() == 1 || digits[0] != '0'),
                 "Invalid device string: '{}'", s);
    int64_t idx = 0;
    for (char c : digits) {
      idx = idx * 10 + (c - '0');
      AMPJIT_CHECK(idx <= std::numeric_limits<int32_t>::max(),
                   "Could not parse device index '{}' in device string '{}'", digits, s);
    }
    // torch 1.13 keeps the low byte (cuda:300 is cuda:44); an index that does not fit is an error.
    AMPJIT_CHECK(idx <= std::numeric_limits<int8_t>::max(),
                 "Device index {} in device string '{}' is out of range (at most {})", idx, s,
                 std::numeric_limits<int8_t>::max());
    return Device(DeviceType::CUDA, static_cast<int>(idx));
  }
  if (s.starts_with("cpu:") && s.substr(4) == "0") return Device(DeviceType::CPU);
  throw Error(
      fmt::format("Expected one of cpu, cuda device type at start of device string: {}", s));
}

std::string Device::str() const {
  if (type == DeviceType::CPU) return "cpu";
  return index < 0 ? "cuda" : fmt::format("cuda:{}", index);
}

}  // namespace ampjit
