// Static types of values: what schemas declare and, later, what the graph IR's values carry.
#pragma once
#include <string>
#include <vector>

#include "runtime/dtype.h"
#include "runtime/intrusive_ptr.h"

namespace ampjit {

enum class TypeKind : int8_t {
  Any, Tensor, Int, Float, Bool, Str, None, Number /* Scalar */, ScalarType, Device,
  List, Tuple, Optional,
};

class Type;
using TypePtr = Ref<const Type>;

class Type : public RefCounted {
 public:
  explicit Type(TypeKind k, std::vector<TypePtr> contained = {})
      : kind_(k), contained_(std::move(contained)) {}

  TypeKind kind() const { return kind_; }
  const std::vector<TypePtr>& contained() const { return contained_; }
  const TypePtr& elem() const { return contained_.at(0); }  // List / Optional element
  std::string str() const;
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

 private:
  TypeKind kind_;
  std::vector<TypePtr> contained_;
};

}  // namespace ampjit
