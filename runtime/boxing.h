// Adapters between typed C++ kernels and the boxed calling convention (a Stack of IValues).
// A kernel file writes a typed function and boxes it once:
//   Tensor add_kernel(const Tensor& a, const Tensor& b, const Scalar& alpha) { ... }
//   AMPJIT_KERNEL(add, add_kernel)
// The adapter pulls each parameter out of the stack by its C++ type (std::optional<T> for T?) and
// pushes the results (a Tensor, a std::tuple of them, a vector, a number) back.
#pragma once
#include <tuple>
#include <type_traits>

#include "runtime/ivalue.h"
#include "runtime/op_table.h"

namespace ampjit {

namespace detail {
template <typename F>
struct FnTraits;
template <typename R, typename... A>
struct FnTraits<R (*)(A...)> {
  using ret = R;
  using args = std::tuple<std::decay_t<A>...>;
  static constexpr size_t arity = sizeof...(A);
};

template <typename R>
void push_result(Stack& s, R&& r) {
  using D = std::decay_t<R>;
  if constexpr (std::is_same_v<D, std::vector<Tensor>>)
    s.emplace_back(r);
  else if constexpr (requires { std::tuple_size<D>::value; }) {
    std::apply([&](auto&&... e) { (s.emplace_back(std::forward<decltype(e)>(e)), ...); },
               std::forward<R>(r));
  } else {
    s.emplace_back(std::forward<R>(r));
  }
}

template <auto Fn, size_t... I>
void call_boxed_impl(Stack& s, std::index_sequence<I...>) {
  using T = FnTraits<decltype(Fn)>;
  using Args = typename T::args;
  if constexpr (std::is_void_v<typename T::ret>) {
    Fn(ivalue_to<std::tuple_element_t<I, Args>>(s[I])...);
    s.clear();
  } else {
    auto r = Fn(ivalue_to<std::tuple_element_t<I, Args>>(s[I])...);
    s.clear();
    push_result(s, std::move(r));
  }
}
[[noreturn]] void throw_arity(size_t want, size_t got);
}  // namespace detail

template <auto Fn>
void call_boxed(Stack& s) {
  constexpr size_t n = detail::FnTraits<decltype(Fn)>::arity;
  if (s.size() != n) [[unlikely]]
    detail::throw_arity(n, s.size());
  detail::call_boxed_impl<Fn>(s, std::make_index_sequence<n>{});
}

}  // namespace ampjit

// Also records the kernel for the op table, which takes an in-place or out= variant's own kernel
// from there (Note [Derived op variants] in runtime/op_table.h).
#define AMPJIT_KERNEL(ID, FN)                                          \
  void ::ampjit::kernels::ID(::ampjit::Stack& s) {                     \
    ::ampjit::call_boxed<&FN>(s);                                      \
  }                                                                    \
  [[maybe_unused]] static const bool ampjit_recorded_cpu_kernel_##ID = \
      ::ampjit::record_cpu_kernel(::ampjit::OpId::ID, &::ampjit::kernels::ID);
