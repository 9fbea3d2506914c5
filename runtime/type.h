// Static types of values: what schemas declare and, later, what the graph IR's values carry.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "runtime/device.h"
#include "runtime/dtype.h"
#include "runtime/intrusive_ptr.h"

namespace ampjit {

enum class TypeKind : int8_t {
  Any,
  Tensor,
  Int,
  Float,
  Bool,
  Str,
  None,
  Number /* Scalar */,
  ScalarType,
  Device,
  List,
  Tuple,
  Optional,
  Dict,   // contained: key, value
  Union,  // contained: the alternatives (two or more, none of them a Union)
  Function,
  Object,
};

class Type;
using TypePtr = Ref<const Type>;

class Type : public RefCounted {
 public:
  explicit Type(TypeKind k, std::vector<TypePtr> contained = {})
      : kind_(k), contained_(std::move(contained)) {}

  TypeKind kind() const { return kind_; }
  const std::vector<TypePtr>& contained() const { return contained_; }
  const TypePtr& elem() const { return contained_.at(0); }   // List / Optional element
  const TypePtr& key() const { return contained_.at(0); }    // Dict
  const TypePtr& value() const { return contained_.at(1); }  // Dict
  std::string str() const;             // as torch's IR prints it: int[], Dict(str, Tensor)
  std::string annotation_str() const;  // as Python annotates it: List[int], Dict[str, Tensor]
  bool equals(const Type& o) const;
  // Whether a value of this type may be used where `other` is expected.
  bool is_subtype_of(const Type& other) const;

  static TypePtr any();
  static TypePtr tensor();
  static TypePtr int_();
  static TypePtr float_();
  static TypePtr bool_();
  static TypePtr str_();
  static TypePtr none();
  static TypePtr number();
  static TypePtr scalar_type();
  static TypePtr device();
  static TypePtr list(TypePtr elem);
  static TypePtr optional(TypePtr elem);
  static TypePtr tuple(std::vector<TypePtr> elems);
  static TypePtr dict(TypePtr key, TypePtr value);
  // Union[A, B, ...] flattened and deduplicated; one alternative is that type, and a Union of one
  // type and None is Optional[T] (as torch).
  static TypePtr union_(std::vector<TypePtr> alternatives);
  // A tensor type refined with what is known statically (traced graphs know all three).
  static TypePtr tensor_of(std::optional<ScalarType> dtype,
                           std::optional<std::vector<int64_t>> sizes, std::optional<Device> device);
  // A named function or object type (graph calls, modules).
  static TypePtr named(TypeKind kind, std::string name);
  // A NamedTuple (typing.NamedTuple, collections.namedtuple): a tuple type with a qualified name
  // and field names, as torch's TupleType with a schema.
  static TypePtr named_tuple(std::string name, std::vector<std::string> fields,
                             std::vector<TypePtr> elems);

  std::optional<ScalarType> tensor_dtype() const { return dtype_; }
  const std::optional<std::vector<int64_t>>& tensor_sizes() const { return sizes_; }
  std::optional<Device> tensor_device() const { return device_; }
  const std::string& name() const { return name_; }
  const std::vector<std::string>& field_names() const { return fields_; }  // NamedTuple only
  bool is_named_tuple() const { return kind_ == TypeKind::Tuple && !name_.empty(); }
  bool is_refined_tensor() const {
    return kind_ == TypeKind::Tensor && (dtype_ || sizes_ || device_);
  }
  // The plain type with refinements dropped (what subtype checks compare).
  TypePtr unrefined() const;

 private:
  TypeKind kind_;
  std::vector<TypePtr> contained_;
  std::optional<ScalarType> dtype_;
  std::optional<std::vector<int64_t>> sizes_;
  std::optional<Device> device_;
  std::string name_;
  std::vector<std::string> fields_;
};

}  // namespace ampjit
