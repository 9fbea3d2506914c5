// The one loop every elementwise computation runs on: N operands walked over a broadcast shape by
// byte strides. Dimensions that are contiguous for all operands are merged first, so a contiguous
// tensor is one flat run; large index spaces are split across OpenMP threads.
#pragma once
#include <algorithm>
#include <array>
#include <cstdint>
#include <span>

#include "runtime/small_vector.h"

namespace ampjit {

// Below this many elements a loop runs on the calling thread (thread start-up costs more).
constexpr int64_t kParallelGrain = 32768;

int max_threads();

template <int NT>
struct StridedLoop {
  // Innermost dimension first.
  SmallVector<int64_t, 8> sizes;
  std::array<SmallVector<int64_t, 8>, NT> strides;
  std::array<char*, NT> base;
  int64_t numel = 1;

  // shape: the iteration shape (outermost first). strides[k]: operand k's byte strides for it.
  // With `in_memory_order` (pure elementwise loops, where the visiting order changes nothing),
  // the dims are visited in operand 0's memory order, innermost stride first, as torch's
  // TensorIterator does: a channels-last tensor (Note [Channels-last tensors] in runtime/layout.h)
  // and its like-strided operands then run as one contiguous inner loop.
  StridedLoop(std::span<const int64_t> shape, std::array<char*, NT> ptrs,
              std::array<std::span<const int64_t>, NT> byte_strides, bool in_memory_order = false)
      : base(ptrs) {
    const int nd = static_cast<int>(shape.size());
    SmallVector<int, 8> order(nd);  // outermost first
    for (int d = 0; d < nd; ++d) order[d] = d;
    if (in_memory_order) {
      auto mag = [&](int d) {
        const int64_t s = byte_strides[0][d];
        return s < 0 ? -s : s;
      };
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return mag(a) > mag(b); });
    }
    for (int i = nd - 1; i >= 0; --i) {
      const int d = order[i];
      numel *= shape[d];
      if (shape[d] == 1) continue;  // size-1 dims never advance
      bool merged = false;
      if (!sizes.empty()) {
        merged = true;
        for (int k = 0; k < NT; ++k) {
          if (byte_strides[k][d] != strides[k].back() * sizes.back()) merged = false;
        }
        if (merged) {
          // Merge into the current innermost-so-far dim: same stride, bigger size.
          sizes.back() *= shape[d];
        }
      }
      if (!merged) {
        sizes.push_back(shape[d]);
        for (int k = 0; k < NT; ++k) strides[k].push_back(byte_strides[k][d]);
      }
    }
    if (sizes.empty()) {
      sizes.push_back(1);
      for (int k = 0; k < NT; ++k) strides[k].push_back(0);
    }
  }

  // Runs inner(ptrs, inner_strides, n) over linear indices [begin, end).
  template <typename Inner>
  void run_range(int64_t begin, int64_t end, Inner& inner) const {
    const int nd = static_cast<int>(sizes.size());
    SmallVector<int64_t, 8> idx(nd, 0);
    std::array<char*, NT> p = base;
    int64_t rem = begin;
    for (int d = 0; d < nd; ++d) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
      for (int k = 0; k < NT; ++k) p[k] += idx[d] * strides[k][d];
    }
    std::array<int64_t, NT> s0;
    for (int k = 0; k < NT; ++k) s0[k] = strides[k][0];
    int64_t cur = begin;
    while (cur < end) {
      const int64_t n = std::min(sizes[0] - idx[0], end - cur);
      inner(p.data(), s0.data(), n);
      cur += n;
      for (int k = 0; k < NT; ++k) p[k] += n * s0[k];
      idx[0] += n;
      // carry into outer dims
      for (int d = 0; d + 1 < nd && idx[d] == sizes[d]; ++d) {
        for (int k = 0; k < NT; ++k) p[k] -= sizes[d] * strides[k][d];
        idx[d] = 0;
        ++idx[d + 1];
        for (int k = 0; k < NT; ++k) p[k] += strides[k][d + 1];
      }
    }
  }

  template <typename Inner>
  void run(Inner inner, int64_t grain = kParallelGrain) const {
    if (numel == 0) return;
    const int nthreads = max_threads();
    if (numel < grain || nthreads <= 1) {
      run_range(0, numel, inner);
      return;
    }
    const int64_t chunks = std::min<int64_t>(nthreads, (numel + grain - 1) / grain);
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
      const int64_t b = numel * c / chunks, e = numel * (c + 1) / chunks;
      Inner local = inner;
      run_range(b, e, local);
    }
  }
};

// Runs body(begin, end) over [0, n) in parallel chunks of at least `grain` elements.
template <typename F>
void parallel_for(int64_t n, int64_t grain, F&& body) {
  const int nthreads = max_threads();
  if (n < 2 * grain || nthreads <= 1) {
    if (n > 0) body(int64_t{0}, n);
    return;
  }
  const int64_t chunks = std::min<int64_t>(nthreads, n / grain);
#pragma omp parallel for num_threads(static_cast <int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) body(n * c / chunks, n * (c + 1) / chunks);
}

}  // namespace ampjit
