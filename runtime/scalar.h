// A Python number: bool, int or float. Scalars keep their category, which type promotion needs
// (a Python float never widens a float16 tensor; a Python int never makes an int tensor float).
#pragma once
#include <cstdint>
#include <string>

#include "runtime/dtype.h"

namespace ampjit {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Double };

  constexpr Scalar() : kind_(Kind::Int), i_(0) {}
  constexpr Scalar(bool b) : kind_(Kind::Bool), i_(b) {}
  constexpr Scalar(double d) : kind_(Kind::Double), d_(d) {}
  constexpr Scalar(float d) : kind_(Kind::Double), d_(d) {}
  template <typename I,
            typename = std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>>>
  constexpr Scalar(I i) : kind_(Kind::Int), i_(static_cast<int64_t>(i)) {}
  Scalar(Half h) : kind_(Kind::Double), d_(static_cast<float>(h)) {}
  Scalar(BFloat16 h) : kind_(Kind::Double), d_(static_cast<float>(h)) {}

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::Bool; }
  bool is_integral() const { return kind_ == Kind::Int; }  // torch: bool is not integral here
  bool is_floating() const { return kind_ == Kind::Double; }
  // The dtype torch gives a wrapped number of this kind: bool, int64, float64.
  ScalarType type() const {
    return kind_ == Kind::Bool  ? ScalarType::Bool
           : kind_ == Kind::Int ? ScalarType::Int64
                                : ScalarType::Float64;
  }

  double to_double() const { return kind_ == Kind::Double ? d_ : static_cast<double>(i_); }
  int64_t to_int() const { return kind_ == Kind::Double ? static_cast<int64_t>(d_) : i_; }
  bool to_bool() const { return kind_ == Kind::Double ? d_ != 0 : i_ != 0; }
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>)
      return to_bool();
    else if constexpr (std::is_integral_v<T>)
      return static_cast<T>(to_int());
    else
      return static_cast<T>(to_double());
  }
  std::string str() const;

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

}  // namespace ampjit
