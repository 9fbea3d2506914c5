// Building blocks for pointwise CPU kernels: output allocation with broadcasting and type
// promotion, and one typed loop (`pointwise`) with a contiguous fast path the compiler
// vectorizes and a strided fallback. Reduced-precision inputs are computed in float and rounded
// once on store (Note [Rounding to reduced precision] in runtime/half.h).
#pragma once
#include <algorithm>
#include <array>
#include <cstring>

#include "kernels/integer_math.h"
#include "kernels/operands.h"
#include "runtime/error.h"
#include "runtime/layout.h"
#include "runtime/strided_loop.h"
#include "runtime/tensor.h"
#include "runtime/type_promotion.h"

namespace ampjit::cpu {

using kernels::broadcast_all;
using kernels::broadcast_byte_strides;
using kernels::cast_to;
using kernels::resize_out;
using kernels::same_sizes;
using kernels::wrap_scalar;
using kernels::write_result;

// Note [Pointwise loops that vectorize]
// The compiler vectorizes a pointwise loop only when it can prove that the output's stores leave
// everything the loop reads unchanged. A lambda's captures (lerp's weight, nan_to_num's
// replacements, add's alpha) reached through a reference may alias a float output, so every loop
// here runs on a local copy of `f` and of the data pointers. A broadcast operand (stride 0: a
// wrapped scalar in `ne(x, 0)`, the vectors of `outer`) would force a scalar pointer-stepping loop;
// instead its value is spread over a small buffer once per inner run and the loop reads it like a
// contiguous operand. Every element is still f of the same values, so no result changes.

// o[i] = f(in[0][i], ..., in[N-1][i]) for i < n: the loop the compiler vectorizes.
template <typename TOut, typename TIn, size_t N, typename F>
inline void contiguous_run(F f, TOut* o, std::array<const TIn*, N> in, int64_t n) {
  using M = opmath_t<TIn>;
  if constexpr (N == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<TOut>(f(static_cast<M>(in[0][i])));
  } else if constexpr (N == 2) {
    for (int64_t i = 0; i < n; ++i)
      o[i] = static_cast<TOut>(f(static_cast<M>(in[0][i]), static_cast<M>(in[1][i])));
  } else {
    for (int64_t i = 0; i < n; ++i) {
      o[i] = static_cast<TOut>([&]<size_t... K>(std::index_sequence<K...>) {
        return f(static_cast<M>(in[K][i])...);
      }(std::make_index_sequence<N>{}));
    }
  }
}

// out[i] = f(in[0][i], ..., in[N-1][i]) over out's shape. Inputs broadcast to out's shape and have
// dtype TIn; out has dtype TOut. f receives opmath_t<TIn> values and returns something that
// converts to TOut.
template <typename TOut, typename TIn, size_t N, typename F>
void pointwise(const Tensor& out, const std::array<Tensor, N>& ins, F f) {
  using M = opmath_t<TIn>;
  // Fast path: every operand contiguous with out's shape (the common eager case) runs one flat,
  // vectorizable loop without building the strided iteration.
  bool flat = out.is_contiguous();
  for (size_t k = 0; k < N && flat; ++k) flat = ins[k].is_contiguous() && same_sizes(ins[k], out);
  if (flat) {
    TOut* const o = out.data<TOut>();
    std::array<const TIn*, N> in;
    for (size_t k = 0; k < N; ++k) in[k] = ins[k].template data<TIn>();
    parallel_for(out.numel(), kParallelGrain, [&](int64_t b, int64_t e) {
      std::array<const TIn*, N> at = in;
      for (size_t k = 0; k < N; ++k) at[k] += b;
      contiguous_run<TOut, TIn, N>(f, o + b, at, e - b);  // Note [Pointwise loops that vectorize]
    });
    return;
  }
  std::array<char*, N + 1> ptrs;
  std::array<DimVector, N + 1> bs;
  ptrs[0] = static_cast<char*>(out.raw_data());
  bs[0] = broadcast_byte_strides(out, out.sizes());
  for (size_t k = 0; k < N; ++k) {
    ptrs[k + 1] = static_cast<char*>(ins[k].raw_data());
    bs[k + 1] = broadcast_byte_strides(ins[k], out.sizes());
  }
  std::array<std::span<const int64_t>, N + 1> spans;
  for (size_t k = 0; k <= N; ++k) spans[k] = bs[k];
  StridedLoop<N + 1> loop(out.sizes(), ptrs, spans, /*in_memory_order=*/true);
  loop.run([&f](char* const* p, const int64_t* st, int64_t n) {
    const F g = f;  // Note [Pointwise loops that vectorize]
    TOut* o = reinterpret_cast<TOut*>(p[0]);
    bool contiguous = st[0] == sizeof(TOut), dense = contiguous;
    for (size_t k = 0; k < N; ++k) {
      contiguous &= st[k + 1] == sizeof(TIn);
      dense &= st[k + 1] == sizeof(TIn) || st[k + 1] == 0;
    }
    if (contiguous) {
      std::array<const TIn*, N> in;
      for (size_t k = 0; k < N; ++k) in[k] = reinterpret_cast<const TIn*>(p[k + 1]);
      contiguous_run<TOut, TIn, N>(g, o, in, n);
      return;
    }
    if (dense) {  // contiguous and broadcast operands: Note [Pointwise loops that vectorize]
      constexpr int64_t kRun = 256;
      TIn spread[N][kRun];
      for (size_t k = 0; k < N; ++k) {
        if (st[k + 1] == 0)
          std::fill_n(spread[k], std::min(n, kRun), *reinterpret_cast<const TIn*>(p[k + 1]));
      }
      for (int64_t b = 0; b < n; b += kRun) {
        std::array<const TIn*, N> in;
        for (size_t k = 0; k < N; ++k)
          in[k] = st[k + 1] == 0 ? spread[k] : reinterpret_cast<const TIn*>(p[k + 1]) + b;
        contiguous_run<TOut, TIn, N>(g, o + b, in, std::min(kRun, n - b));
      }
      return;
    }
    std::array<char*, N + 1> q;
    for (size_t k = 0; k <= N; ++k) q[k] = p[k];
    for (int64_t i = 0; i < n; ++i) {
      *reinterpret_cast<TOut*>(q[0]) =
          static_cast<TOut>([&]<size_t... K>(std::index_sequence<K...>) {
            return g(static_cast<M>(*reinterpret_cast<const TIn*>(q[K + 1]))...);
          }(std::make_index_sequence<N>{}));
      for (size_t k = 0; k <= N; ++k) q[k] += st[k];
    }
  });
}

// Allocates the broadcast output (dtype `out_type`, C++ type TOut) of inputs cast to T and fills
// it with f applied to op-math values. Call it inside ONE dtype dispatch:
//   dispatch_floating(rt, "op", [&]<typename T>() { return map<T>("op", {a, b}, rt, f); });
// (Note [One dispatch per op]: nesting dispatches multiplies instantiations and compile time.)
template <typename T, typename TOut = T, size_t N, typename F>
Tensor map(const char* op, const std::array<Tensor, N>& ins, ScalarType out_type, F f) {
  bool same = true;
  for (size_t k = 1; k < N; ++k) same &= same_sizes(ins[0], ins[k]);
  // The layout of the first operand that has the result's shape (Note [Channels-last tensors]):
  // a squeeze-excitation's [N, C, 1, 1] scale times a channels-last activation is channels-last.
  Tensor out;
  if (same) {
    out = empty_in_layout_of(ins[0], ins[0].sizes(), out_type);
  } else {
    const DimVector shape = broadcast_all(ins, op);
    size_t like = 0;
    while (like < N && !std::equal(shape.begin(), shape.end(), ins[like].sizes().begin(),
                                   ins[like].sizes().end()))
      ++like;
    out = like < N ? empty_in_layout_of(ins[like], shape, out_type)
                   : Tensor::empty(shape, out_type, ins[0].device());
  }
  const ScalarType in_type = scalar_type_of<T>();
  std::array<Tensor, N> cast;
  for (size_t k = 0; k < N; ++k) cast[k] = ins[k].dtype() == in_type ? ins[k] : ins[k].to(in_type);
  pointwise<TOut, T, N>(out, cast, f);
  return out;
}

using integer_math::wrapping_neg;

}  // namespace ampjit::cpu
