// IValue: the boxed value every layer passes around (dispatcher stacks, interpreter registers,
// Python bindings, graph constants). A tag plus an 8-byte payload; heap values are ref-counted.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/device.h"
#include "runtime/error.h"
#include "runtime/scalar.h"
#include "runtime/tensor.h"

namespace ampjit {

class IValue;

struct StringObj : RefCounted {
  std::string value;
  explicit StringObj(std::string v) : value(std::move(v)) {}
};
// ListObj and TupleObj hold IValues, which are incomplete here: their destructors (virtual, from
// RefCounted) are defined after class IValue, where std::vector<IValue> can be destroyed.
struct ListObj : RefCounted {
  std::vector<IValue> elems;
  ~ListObj() override;
};
struct TupleObj : RefCounted {
  std::vector<IValue> elems;
  ~TupleObj() override;
};
struct DictObj;  // below IValue: its index needs IValue complete
// Anything a later layer needs to box (functions, objects): identified by a kind tag.
struct ObjectBase : RefCounted {
  virtual const char* type_name() const = 0;
};

class IValue {
 public:
  enum class Tag : uint8_t {
    // Heap-held kinds come last: is_ptr() is one comparison.
    None,
    Double,
    Int,
    Bool,
    ScalarType,
    Device,
    Tensor,
    String,
    List,
    Tuple,
    Dict,
    Object,
  };

  IValue() : tag_(Tag::None) { p_.i = 0; }
  IValue(std::nullopt_t) : IValue() {}
  IValue(Tensor t) : tag_(Tag::Tensor) {
    p_.ptr = t.defined() ? const_cast<Ref<TensorImpl>&>(t.impl_ref()).detach() : nullptr;
    if (!p_.ptr) tag_ = Tag::None;
  }
  IValue(double d) : tag_(Tag::Double) { p_.d = d; }
  IValue(float d) : tag_(Tag::Double) { p_.d = d; }
  IValue(bool b) : tag_(Tag::Bool) { p_.i = b; }
  template <typename I,
            typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  IValue(I i) : tag_(Tag::Int) {
    p_.i = static_cast<int64_t>(i);
  }
  IValue(const Scalar& s) {
    if (s.is_floating()) {
      tag_ = Tag::Double;
      p_.d = s.to_double();
    } else if (s.is_bool()) {
      tag_ = Tag::Bool;
      p_.i = s.to_bool();
    } else {
      tag_ = Tag::Int;
      p_.i = s.to_int();
    }
  }
  IValue(ScalarType t) : tag_(Tag::ScalarType) { p_.i = static_cast<int64_t>(t); }
  IValue(Device d) : tag_(Tag::Device) {
    p_.i = 0;
    p_.dev = d;
  }
  IValue(std::string s) : tag_(Tag::String) { p_.ptr = hold(new StringObj(std::move(s))); }
  IValue(const char* s) : IValue(std::string(s)) {}
  IValue(Ref<ListObj> l) : tag_(Tag::List) { p_.ptr = l.detach(); }
  IValue(Ref<TupleObj> t) : tag_(Tag::Tuple) { p_.ptr = t.detach(); }
  IValue(Ref<DictObj> d);
  IValue(Ref<ObjectBase> o) : tag_(Tag::Object) { p_.ptr = o.detach(); }
  IValue(const std::vector<int64_t>& v);
  IValue(std::span<const int64_t> v);
  IValue(const std::vector<double>& v);
  IValue(const std::vector<Tensor>& v);
  template <typename T>
  IValue(const std::optional<T>& o) : IValue() {
    if (o) *this = IValue(*o);
  }
  static IValue tuple(std::vector<IValue> elems);
  static IValue list(std::vector<IValue> elems);

  IValue(const IValue& o) : tag_(o.tag_), p_(o.p_) {
    if (is_ptr()) retain();
  }
  IValue(IValue&& o) noexcept : tag_(o.tag_), p_(o.p_) {
    o.tag_ = Tag::None;
    o.p_.i = 0;
  }
  IValue& operator=(IValue o) noexcept {
    std::swap(tag_, o.tag_);
    std::swap(p_, o.p_);
    return *this;
  }
  ~IValue() {
    if (is_ptr()) release();
  }

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::None; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  bool is_double() const { return tag_ == Tag::Double; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_number() const { return is_double() || is_int() || is_bool(); }
  bool is_string() const { return tag_ == Tag::String; }
  bool is_scalar_type() const { return tag_ == Tag::ScalarType; }
  bool is_device() const { return tag_ == Tag::Device; }
  bool is_list() const { return tag_ == Tag::List; }
  bool is_tuple() const { return tag_ == Tag::Tuple; }
  bool is_dict() const { return tag_ == Tag::Dict; }
  bool is_object() const { return tag_ == Tag::Object; }

  // Borrowed access: no refcount traffic.
  TensorImpl* tensor_impl() const { return static_cast<TensorImpl*>(p_.ptr); }
  Tensor to_tensor() const {
    expect(Tag::Tensor);
    return Tensor(Ref<TensorImpl>(tensor_impl()));
  }
  double to_double() const {
    if (tag_ == Tag::Double) return p_.d;
    if (tag_ == Tag::Int || tag_ == Tag::Bool) return static_cast<double>(p_.i);
    expect(Tag::Double);
    return 0;
  }
  int64_t to_int() const {
    if (tag_ == Tag::Int || tag_ == Tag::Bool) return p_.i;
    expect(Tag::Int);
    return 0;
  }
  bool to_bool() const {
    expect(Tag::Bool);
    return p_.i != 0;
  }
  Scalar to_scalar() const {
    if (tag_ == Tag::Double) return Scalar(p_.d);
    if (tag_ == Tag::Int) return Scalar(p_.i);
    if (tag_ == Tag::Bool) return Scalar(p_.i != 0);
    expect(Tag::Double);
    return {};
  }
  ScalarType to_scalar_type() const {
    if (tag_ == Tag::Int) {  // TorchScript encodes dtypes as ints (torch's numbering)
      auto t = from_torch_dtype_code(p_.i);
      if (!t) throw_bad_dtype_code();
      return *t;
    }
    expect(Tag::ScalarType);
    return static_cast<ScalarType>(p_.i);
  }
  Device to_device() const {
    expect(Tag::Device);
    return p_.dev;
  }
  const std::string& to_string_ref() const {
    expect(Tag::String);
    return static_cast<StringObj*>(p_.ptr)->value;
  }
  const std::vector<IValue>& list_elems() const {
    expect(Tag::List);
    return static_cast<ListObj*>(p_.ptr)->elems;
  }
  ListObj* list_obj() const {
    expect(Tag::List);
    return static_cast<ListObj*>(p_.ptr);
  }
  const std::vector<IValue>& tuple_elems() const {
    expect(Tag::Tuple);
    return static_cast<TupleObj*>(p_.ptr)->elems;
  }
  DictObj* dict_obj() const;
  ObjectBase* object() const {
    expect(Tag::Object);
    return static_cast<ObjectBase*>(p_.ptr);
  }
  std::vector<int64_t> to_int_list() const;
  std::vector<double> to_double_list() const;
  std::vector<Tensor> to_tensor_list() const;

  // Typed extraction, used by the boxing adapters: to<T>() for every kernel parameter type.
  template <typename T>
  T to() const;

  const char* tag_name() const;
  std::string repr() const;  // a short printable form for diagnostics
  // Identity for heap values, value equality for the rest (graph constants, CSE).
  bool equals(const IValue& o) const;

 private:
  bool is_ptr() const { return tag_ >= Tag::Tensor; }
  static RefCounted* hold(RefCounted* p) {
    p->retain();
    return p;
  }
  void retain() const { static_cast<RefCounted*>(p_.ptr)->retain(); }
  void release() const { static_cast<RefCounted*>(p_.ptr)->release(); }
  void expect(Tag t) const {
    if (tag_ != t) [[unlikely]]
      throw_bad_tag(t);
  }
  [[noreturn]] void throw_bad_tag(Tag t) const;
  [[noreturn]] void throw_bad_dtype_code() const;

  Tag tag_;
  union Payload {
    Payload() : i(0) {}
    double d;
    int64_t i;
    Device dev;
    RefCounted* ptr;
  } p_;
};

inline ListObj::~ListObj() = default;
inline TupleObj::~TupleObj() = default;

// Note [Script dicts]
// A Dict[K, V] value: insertion-ordered as Python's dict. Keys are str, int, float, bool, device or
// Tensor (tensors by identity, as torch's dicts). A hash index over the entries makes lookups O(1);
// removing an entry keeps the order and rebuilds the index.
struct DictObj : RefCounted {
  using Entry = std::pair<IValue, IValue>;

  const std::vector<Entry>& items() const { return items_; }
  size_t size() const { return items_.size(); }
  // The value stored under `key`, or nullptr.
  const IValue* find(const IValue& key) const;
  // d[key] = value: replaces in place (keeping the position) or appends.
  void set(IValue key, IValue value);
  // Removes `key`; whether it was there.
  bool erase(const IValue& key);
  void clear();
  // Whether `key` has a type dicts accept as a key.
  static bool valid_key(const IValue& key);

 private:
  std::optional<size_t> index_of(const IValue& key) const;
  void reindex();
  std::vector<Entry> items_;
  std::unordered_multimap<size_t, size_t> index_;  // hash of a key -> its position in items_
};

inline IValue::IValue(Ref<DictObj> d) : tag_(Tag::Dict) {
  p_.ptr = d.detach();
}
inline DictObj* IValue::dict_obj() const {
  expect(Tag::Dict);
  return static_cast<DictObj*>(p_.ptr);
}

template <>
inline Tensor IValue::to<Tensor>() const {
  return to_tensor();
}
template <>
inline double IValue::to<double>() const {
  return to_double();
}
template <>
inline int64_t IValue::to<int64_t>() const {
  return to_int();
}
template <>
inline bool IValue::to<bool>() const {
  return to_bool();
}
template <>
inline Scalar IValue::to<Scalar>() const {
  return to_scalar();
}
template <>
inline ScalarType IValue::to<ScalarType>() const {
  return to_scalar_type();
}
template <>
inline Device IValue::to<Device>() const {
  return to_device();
}
template <>
inline std::string IValue::to<std::string>() const {
  return to_string_ref();
}
template <>
inline std::vector<int64_t> IValue::to<std::vector<int64_t>>() const {
  return to_int_list();
}
template <>
inline std::vector<double> IValue::to<std::vector<double>>() const {
  return to_double_list();
}
template <>
inline std::vector<Tensor> IValue::to<std::vector<Tensor>>() const {
  return to_tensor_list();
}
template <>
inline IValue IValue::to<IValue>() const {
  return *this;
}
// Tensor?[]: a list whose elements are tensors or None.
template <>
inline std::vector<std::optional<Tensor>> IValue::to<std::vector<std::optional<Tensor>>>() const {
  std::vector<std::optional<Tensor>> out;
  for (const IValue& e : is_list() ? list_elems() : tuple_elems())
    out.push_back(e.is_none() ? std::nullopt : std::optional<Tensor>(e.to_tensor()));
  return out;
}

namespace detail {
template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {
  using elem = T;
};
}  // namespace detail

// Optional parameters: None -> nullopt.
template <typename T>
T ivalue_to(const IValue& v) {
  if constexpr (detail::IsOptional<T>::value) {
    if (v.is_none()) return std::nullopt;
    return v.to<typename detail::IsOptional<T>::elem>();
  } else {
    return v.to<T>();
  }
}

// The argument stack of one op call: arguments in, results out.
using Stack = std::vector<IValue>;

}  // namespace ampjit
