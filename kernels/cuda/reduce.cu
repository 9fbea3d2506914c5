// Device code of the CUDA reductions, scans and softmax (launchers declared in reduce.h). Every op
// works along the middle dim of a dense [outer, len, inner] array with one thread mapping (Note
// [Lanes and columns]); the reductions are one generic kernel over a reducer (Note [CUDA
// reducers]).
//
// Note [Lanes and columns]
// A column is one position (o, i) of [outer, inner]; its elements sit at
// o * len * inner + j * inner + i for j in [0, len). A block is a 2-D arrangement of threads:
// `lanes` threads cooperate on one column, striding over j, and a block holds `width` columns.
//  - inner == 1 ("rows"): lanes run along threadIdx.x, so a warp reads consecutive elements of a
//    row; a block holds several short rows, or one long row with up to kMaxLanes lanes.
//  - inner > 1: columns run along threadIdx.x and lanes along threadIdx.y, so a warp reads
//    consecutive i at one j (there are at least min(inner, kMaxWidth) columns per block). Reducing
//    a leading dim of a contiguous tensor thus needs no transposed copy.
// lanes is a power of two; the lanes of a column combine through shared memory in a tree
// (lane_allreduce) or scan (lane_scan), with barriers every thread of the block reaches. Blocks
// walk tiles of `width` columns in a grid-stride loop.
// A reduction with too few columns to fill the device also splits len across blockIdx.y: each
// split writes its partial state to scratch, and a second kernel combines each column's splits.
// The order of every combine is fixed, so results do not depend on timing (no atomics).
//
// Note [CUDA reduction accumulators]
// Sums, products, norms, variances and softmax denominators accumulate in opmath_t<T> (float for
// float16, bfloat16 and float32; double for float64), as torch's CUDA kernels do; integer sums and
// products in uint64 (wrapping like int64, without UB). The CPU accumulates float32 in double
// (Note [Reduction accumulators] in kernels/cpu/reduce.h), so float32 results agree with it to
// float rounding, not bit for bit: each thread keeps four interleaved partial states and threads
// combine in a tree, which keeps the error close to pairwise summation's. Like the CPU, variances
// take two passes (the mean, then squared deviations) and logsumexp two (the max, then the sum of
// shifted exponentials).
#include <algorithm>
#include <climits>
#include <limits>

#include "kernels/cuda/cuda_context.h"
#include "kernels/cuda/device_types.cuh"
#include "kernels/cuda/math.cuh"
#include "kernels/cuda/reduce.h"

namespace ampjit::cuda {

namespace {

constexpr int kBlockThreads = 256;     // threads per block, unless one column takes more lanes
constexpr int kMaxLanes = 512;         // most threads on one column (a block of its own)
constexpr int kMaxWidth = 32;          // adjacent columns a block keeps when inner > 1
constexpr int64_t kMinPerThread = 16;  // a split of len leaves at least this many per thread
constexpr int64_t kMaxSplits = 1024;
constexpr int kMaxStateBytes = 16;  // the largest reducer state (and its alignment bound)

// The accumulator of sums and products (Note [CUDA reduction accumulators]).
template <typename T>
using acc_t = std::conditional_t<std::is_integral_v<T>, unsigned long long, opmath_t<T>>;

template <typename M>
__device__ __forceinline__ M infinity() {
  return ::cuda::std::numeric_limits<M>::infinity();
}
template <typename M>
__device__ __forceinline__ bool is_inf(M x) {
  return dmath::fabs(x) == infinity<M>();
}

// --- thread mapping (Note [Lanes and columns]) -------------------------------------------------

struct Layout {
  int64_t len = 0;
  int64_t inner = 1;
  int64_t n_cols = 0;  // outer * inner
  int64_t chunk = 0;   // positions of len per split (blockIdx.y)
  bool rows = true;    // inner == 1: lanes run along threadIdx.x
};

struct Lanes {
  int lane;   // this thread's lane within its column
  int count;  // lanes per column (a power of two)
  int step;   // shared-memory slots between neighbouring lanes
  int local;  // this thread's column within the block's tile
  int width;  // columns per tile
};

__device__ __forceinline__ Lanes lanes_of(bool rows) {
  if (rows) {
    return {static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), 1,
            static_cast<int>(threadIdx.y), static_cast<int>(blockDim.y)};
  }
  return {static_cast<int>(threadIdx.y), static_cast<int>(blockDim.y), static_cast<int>(blockDim.x),
          static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x)};
}

// The offset of element 0 of column `col`.
__device__ __forceinline__ int64_t column_base(const Layout& l, int64_t col) {
  const int64_t o = col / l.inner;
  return o * l.len * l.inner + (col - o * l.inner);
}

// op folded over the lanes of each column, returned to every lane. `smem` holds one slot per
// thread of the block; every thread of the block must call this (it has barriers).
template <typename A, typename Op>
__device__ A lane_allreduce(A v, const Lanes& ln, unsigned char* smem, Op op) {
  if (ln.count == 1) return v;
  A* slots = reinterpret_cast<A*>(smem);
  const int slot = threadIdx.y * blockDim.x + threadIdx.x;
  slots[slot] = v;
  __syncthreads();
  for (int s = ln.count / 2; s > 0; s >>= 1) {
    if (ln.lane < s) {
      v = op(v, slots[slot + s * ln.step]);
      slots[slot] = v;
    }
    __syncthreads();
  }
  v = slots[slot - ln.lane * ln.step];
  __syncthreads();
  return v;
}

// The inclusive scan of v over the lanes of each column under op; `total` receives the last
// lane's value. Same calling rules as lane_allreduce.
template <typename A, typename Op>
__device__ A lane_scan(A v, const Lanes& ln, unsigned char* smem, Op op, A& total) {
  if (ln.count == 1) {
    total = v;
    return v;
  }
  A* slots = reinterpret_cast<A*>(smem);
  const int slot = threadIdx.y * blockDim.x + threadIdx.x;
  slots[slot] = v;
  __syncthreads();
  for (int s = 1; s < ln.count; s <<= 1) {
    const bool has_left = ln.lane >= s;
    A left = v;
    if (has_left) left = slots[slot - s * ln.step];
    __syncthreads();
    if (has_left) {
      v = op(left, v);
      slots[slot] = v;
    }
    __syncthreads();
  }
  total = slots[slot + (ln.count - 1 - ln.lane) * ln.step];
  __syncthreads();
  return v;
}

// --- reducers -----------------------------------------------------------------------------------

// Note [CUDA reducers]
// As on CPU (Note [Reducers] in kernels/cpu/reduce.h), a reducer states only its arithmetic over
// op-math values M = opmath_t<T> of the stored type T:
//   struct Acc;                                      // the running state (trivially copyable)
//   __device__ Acc init(int64_t col) const;          // the starting state, an identity of combine
//   __device__ void add(Acc& a, M v, int64_t j) const;   // element v at position j of the column
//   __device__ void combine(Acc& a, const Acc& b) const; // merge a state over other positions
//   __device__ void finish(int64_t col, const Acc& a) const;  // write the column's results
// combine must not depend on which side saw the earlier positions (ties keep the lower position
// explicitly): states are combined across interleaved partial states, lanes and splits.

// sum (divisor 1), mean (divisor len) and prod. Results go to `out`, or stay in the accumulator
// type in `out_acc` (the means of var's first pass).
template <typename T>
struct SumProdReducer {
  using A = acc_t<T>;
  using Acc = A;
  bool prod;
  A divisor;
  T* out;
  A* out_acc;
  __device__ Acc init(int64_t) const { return prod ? A(1) : A(0); }
  __device__ void add(Acc& a, opmath_t<T> v, int64_t) const { combine(a, static_cast<A>(v)); }
  __device__ void combine(Acc& a, const Acc& b) const { a = prod ? a * b : a + b; }
  __device__ void finish(int64_t col, const Acc& a) const {
    const A r = a / divisor;
    if (out_acc)
      out_acc[col] = r;
    else
      out[col] = convert<T>(r);
  }
};

// The largest (is_max) or smallest value and its first position; NaN is the extreme and the first
// NaN wins, as on CPU (kernels/cpu/reduce_ops.cpp ExtremeReducer).
template <typename T>
struct ExtremeReducer {
  using M = opmath_t<T>;
  struct Acc {
    M v;
    int64_t i;  // -1: no element yet
  };
  bool is_max;
  T* values;         // or null
  int64_t* indices;  // or null
  __device__ bool beats(M v, int64_t i, const Acc& a) const {
    if (a.i < 0) return true;
    if (dmath::isnan(a.v)) return dmath::isnan(v) && i < a.i;
    if (dmath::isnan(v)) return true;
    if (is_max ? v > a.v : v < a.v) return true;
    return v == a.v && i < a.i;
  }
  __device__ Acc init(int64_t) const { return {M(0), -1}; }
  __device__ void add(Acc& a, M v, int64_t j) const {
    if (beats(v, j, a)) a = {v, j};
  }
  __device__ void combine(Acc& a, const Acc& b) const {
    if (b.i >= 0 && beats(b.v, b.i, a)) a = b;
  }
  __device__ void finish(int64_t col, const Acc& a) const {
    if (values) values[col] = convert<T>(a.v);  // a value of T itself: exact
    if (indices) indices[col] = a.i;
  }
};

// logsumexp's second pass: sum(exp(x - shift)) with shift the column's max (0 when infinite, so
// all -inf gives -inf and +inf gives inf); a NaN max makes the result NaN, as on CPU.
template <typename T>
struct ExpSumReducer {
  using M = opmath_t<T>;
  struct Acc {
    M shift;
    M sum;
  };
  const T* maxes;
  T* out;
  __device__ Acc init(int64_t col) const {
    const M m = convert<M>(maxes[col]);
    return {is_inf(m) ? M(0) : m, M(0)};
  }
  __device__ void add(Acc& a, M v, int64_t) const { a.sum += dmath::exp(v - a.shift); }
  __device__ void combine(Acc& a, const Acc& b) const { a.sum += b.sum; }
  __device__ void finish(int64_t col, const Acc& a) const {
    out[col] = convert<T>(dmath::log(a.sum) + a.shift);
  }
};

// var/std's second pass: sum((x - mean)^2) / divisor, divisor = max(0, len - correction), so too
// few elements give nan or inf as in torch.
template <typename T>
struct SquaredDeviationReducer {
  using M = opmath_t<T>;
  struct Acc {
    M mean;
    M m2;
  };
  const M* means;
  T* out;
  M divisor;
  bool take_sqrt;
  __device__ Acc init(int64_t col) const { return {means[col], M(0)}; }
  __device__ void add(Acc& a, M v, int64_t) const {
    const M d = v - a.mean;
    a.m2 += d * d;
  }
  __device__ void combine(Acc& a, const Acc& b) const { a.m2 += b.m2; }
  __device__ void finish(int64_t col, const Acc& a) const {
    const M v = a.m2 / divisor;
    out[col] = convert<T>(take_sqrt ? dmath::sqrt(v) : v);
  }
};

// The vector p-norm of |x| (kernels/cpu/reduce_ops.cpp NormReducer): p = 0 counts non-zeros,
// +-inf take the max/min (NaN propagates), otherwise sum |x|^p and take the root at the end.
enum class NormKind : int { zero, one, two, inf, neg_inf, general };

template <typename T>
struct NormReducer {
  using M = opmath_t<T>;
  using Acc = M;
  NormKind kind;
  M ord;
  T* out;
  __device__ Acc init(int64_t) const { return kind == NormKind::neg_inf ? infinity<M>() : M(0); }
  __device__ void add(Acc& a, M v, int64_t) const {
    const M x = dmath::fabs(v);
    switch (kind) {
      case NormKind::zero:
        a += x != M(0) ? M(1) : M(0);
        break;
      case NormKind::one:
        a += x;
        break;
      case NormKind::two:
        a += x * x;
        break;
      case NormKind::general:
        a += dmath::pow(x, ord);
        break;
      case NormKind::inf:
      case NormKind::neg_inf:
        combine(a, x);
        break;
    }
  }
  __device__ void combine(Acc& a, const Acc& b) const {
    if (kind == NormKind::inf || kind == NormKind::neg_inf) {
      if (dmath::isnan(a) || dmath::isnan(b))
        a = ::cuda::std::numeric_limits<M>::quiet_NaN();
      else if (kind == NormKind::inf ? b > a : b < a)
        a = b;
    } else {
      a += b;
    }
  }
  __device__ void finish(int64_t col, const Acc& a) const {
    M r = a;
    if (kind == NormKind::two)
      r = dmath::sqrt(a);
    else if (kind == NormKind::general)
      r = dmath::pow(a, M(1) / ord);
    out[col] = convert<T>(r);
  }
};

// --- the reduction kernels ----------------------------------------------------------------------

// Reduces split blockIdx.y of every column (Note [Lanes and columns]); with one split the
// results are finished here, otherwise each split's state goes to partials[col * splits + split].
template <typename T, typename R>
__global__ void __launch_bounds__(kMaxLanes)
    reduce_kernel(const T* __restrict__ in, Layout l, R red,
                  typename R::Acc* __restrict__ partials) {
  using M = opmath_t<T>;
  using Acc = typename R::Acc;
  alignas(kMaxStateBytes) __shared__ unsigned char smem[kMaxLanes * kMaxStateBytes];
  const Lanes ln = lanes_of(l.rows);
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * l.chunk;
  const int64_t end = begin + l.chunk < l.len ? begin + l.chunk : l.len;
  for (int64_t tile = static_cast<int64_t>(blockIdx.x) * ln.width; tile < l.n_cols;
       tile += static_cast<int64_t>(gridDim.x) * ln.width) {
    const int64_t col = tile + ln.local;
    const bool active = col < l.n_cols;
    // Four interleaved states pipeline the loads and shorten each sum's chain.
    Acc a0 = red.init(active ? col : tile), a1 = a0, a2 = a0, a3 = a0;
    if (active) {
      const T* x = in + column_base(l, col);
      const int64_t inner = l.inner, step = ln.count;
      int64_t j = begin + ln.lane;
      for (; j + 3 * step < end; j += 4 * step) {
        const T v0 = x[j * inner], v1 = x[(j + step) * inner], v2 = x[(j + 2 * step) * inner],
                v3 = x[(j + 3 * step) * inner];
        red.add(a0, convert<M>(v0), j);
        red.add(a1, convert<M>(v1), j + step);
        red.add(a2, convert<M>(v2), j + 2 * step);
        red.add(a3, convert<M>(v3), j + 3 * step);
      }
      for (; j < end; j += step) red.add(a0, convert<M>(x[j * inner]), j);
    }
    red.combine(a0, a1);
    red.combine(a2, a3);
    red.combine(a0, a2);
    a0 = lane_allreduce(a0, ln, smem, [&](Acc a, const Acc& b) {
      red.combine(a, b);
      return a;
    });
    if (active && ln.lane == 0) {
      if (gridDim.y == 1)
        red.finish(col, a0);
      else
        partials[col * gridDim.y + blockIdx.y] = a0;
    }
  }
}

// Combines the l.len partial states of each column (a row of `partials`) and finishes it.
template <typename R>
__global__ void __launch_bounds__(kBlockThreads)
    combine_splits_kernel(const typename R::Acc* __restrict__ partials, Layout l, R red) {
  using Acc = typename R::Acc;
  alignas(kMaxStateBytes) __shared__ unsigned char smem[kBlockThreads * kMaxStateBytes];
  const Lanes ln = lanes_of(true);
  for (int64_t tile = static_cast<int64_t>(blockIdx.x) * ln.width; tile < l.n_cols;
       tile += static_cast<int64_t>(gridDim.x) * ln.width) {
    const int64_t col = tile + ln.local;
    const bool active = col < l.n_cols;
    Acc a = red.init(active ? col : tile);
    if (active) {
      for (int64_t s = ln.lane; s < l.len; s += ln.count) red.combine(a, partials[col * l.len + s]);
    }
    a = lane_allreduce(a, ln, smem, [&](Acc x, const Acc& y) {
      red.combine(x, y);
      return x;
    });
    if (active && ln.lane == 0) red.finish(col, a);
  }
}

// --- scans and softmax --------------------------------------------------------------------------

// cumsum/cumprod: tiles of `lanes` positions are scanned across the lanes and offset by the
// running carry of the tiles before.
template <typename T>
__global__ void __launch_bounds__(kMaxLanes)
    scan_kernel(const T* __restrict__ in, T* __restrict__ out, Layout l, bool is_prod) {
  using A = acc_t<T>;
  alignas(kMaxStateBytes) __shared__ unsigned char smem[kMaxLanes * sizeof(A)];
  const Lanes ln = lanes_of(l.rows);
  const A identity = is_prod ? A(1) : A(0);
  auto op = [is_prod](A a, A b) { return is_prod ? a * b : a + b; };
  for (int64_t tile = static_cast<int64_t>(blockIdx.x) * ln.width; tile < l.n_cols;
       tile += static_cast<int64_t>(gridDim.x) * ln.width) {
    const int64_t col = tile + ln.local;
    const bool active = col < l.n_cols;
    const int64_t base = active ? column_base(l, col) : 0;
    A carry = identity;
    for (int64_t j0 = 0; j0 < l.len; j0 += ln.count) {
      const int64_t j = j0 + ln.lane;
      const bool here = active && j < l.len;
      A v = here ? static_cast<A>(convert<opmath_t<T>>(in[base + j * l.inner])) : identity;
      A total;
      v = lane_scan(v, ln, smem, op, total);
      if (here) out[base + j * l.inner] = convert<T>(op(carry, v));
      carry = op(carry, total);
    }
  }
}

// softmax/log_softmax in three passes over each column: the max (NaN ignored, as std::max on
// CPU; a NaN still reaches every output through the sum), the sum of shifted exponentials, the
// outputs. A column of all -inf gives nan (-inf - -inf), as in torch.
template <typename T>
__global__ void __launch_bounds__(kMaxLanes)
    softmax_kernel(const T* __restrict__ in, T* __restrict__ out, Layout l, bool log) {
  using M = opmath_t<T>;
  alignas(kMaxStateBytes) __shared__ unsigned char smem[kMaxLanes * sizeof(M)];
  const Lanes ln = lanes_of(l.rows);
  for (int64_t tile = static_cast<int64_t>(blockIdx.x) * ln.width; tile < l.n_cols;
       tile += static_cast<int64_t>(gridDim.x) * ln.width) {
    const int64_t col = tile + ln.local;
    const int64_t len = col < l.n_cols ? l.len : 0;  // inactive threads only join the barriers
    const int64_t inner = l.inner;
    const T* x = in + (len ? column_base(l, col) : 0);
    T* y = out + (len ? column_base(l, col) : 0);
    M mx = -infinity<M>();
    for (int64_t j = ln.lane; j < len; j += ln.count) {
      const M v = convert<M>(x[j * inner]);
      mx = mx < v ? v : mx;
    }
    mx = lane_allreduce(mx, ln, smem, [](M a, M b) { return a < b ? b : a; });
    M sum = 0;
    for (int64_t j = ln.lane; j < len; j += ln.count)
      sum += dmath::exp(convert<M>(x[j * inner]) - mx);
    sum = lane_allreduce(sum, ln, smem, [](M a, M b) { return a + b; });
    if (log) {
      const M log_sum = dmath::log(sum);
      for (int64_t j = ln.lane; j < len; j += ln.count)
        y[j * inner] = convert<T>(convert<M>(x[j * inner]) - mx - log_sum);
    } else {
      const M inv = M(1) / sum;
      for (int64_t j = ln.lane; j < len; j += ln.count)
        y[j * inner] = convert<T>(dmath::exp(convert<M>(x[j * inner]) - mx) * inv);
    }
  }
}

// --- launch planning ----------------------------------------------------------------------------

// Note [One launch site]
// Every kernel of this file starts through AMPJIT_CUDA_LAUNCH(kernel, grid, block, args...), so
// the file holds no other CUDA launch syntax: tests/cuda/test_cuda_reduce_sim.cpp defines the macro
// before including this file, compiles it with the host compiler and runs the kernels on simulated
// CUDA threads (tests/cuda/cuda_host_sim.h). For the same reason shared arrays are declared
// `alignas(n) __shared__ ...`: the simulation reads __shared__ as `static`, which alignas may not
// follow.
#ifndef AMPJIT_CUDA_LAUNCH
#define AMPJIT_CUDA_LAUNCH launch_on_stream
// kernel<<<grid, block>>>(args...) on stream(), checked.
template <typename... Params, typename... Args>
void launch_on_stream(void (*kernel)(Params...), dim3 grid, dim3 block, const Args&... args) {
  kernel<<<grid, block, 0, stream()>>>(args...);
  AMPJIT_CUDA_CHECK_LAUNCH();
}
#endif

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// The smallest power of two >= n, at most `cap` (a power of two).
int pow2_at_least(int64_t n, int cap) {
  int p = 1;
  while (p < n && p < cap) p <<= 1;
  return p;
}

struct Launch {
  Layout layout;
  dim3 grid;
  dim3 block;
};

// The blocks for `shape` with about `lanes_wanted` lanes per column (Note [Lanes and columns]);
// with allow_split, len is split across blockIdx.y when the columns alone give too few blocks.
Launch plan_launch(const ReduceShape& shape, int64_t lanes_wanted, bool allow_split) {
  Launch p;
  Layout& l = p.layout;
  l.len = shape.len;
  l.inner = shape.inner;
  l.n_cols = shape.outer * shape.inner;
  l.rows = shape.inner == 1;
  // Lanes first; with inner > 1 they leave room for at least min(inner, kMaxWidth) adjacent
  // columns, so a warp's reads stay contiguous. Columns fill the rest of the block.
  const int lanes =
      l.rows ? pow2_at_least(lanes_wanted, kMaxLanes)
             : pow2_at_least(lanes_wanted, kBlockThreads / pow2_at_least(shape.inner, kMaxWidth));
  const int width = std::max(1, kBlockThreads / lanes);
  const int64_t blocks = ceil_div(l.n_cols, width);
  int64_t splits = 1;
  const int64_t target = 4 * static_cast<int64_t>(multiprocessor_count());
  if (allow_split && blocks < target) {
    splits =
        std::min({ceil_div(target, blocks), ceil_div(l.len, lanes * kMinPerThread), kMaxSplits});
    splits = std::max<int64_t>(splits, 1);
  }
  l.chunk = ceil_div(l.len, splits);
  if (l.chunk > 0) splits = ceil_div(l.len, l.chunk);
  p.block = l.rows ? dim3(lanes, width) : dim3(width, lanes);
  p.grid = dim3(static_cast<unsigned>(std::min<int64_t>(blocks, INT_MAX)),
                static_cast<unsigned>(splits));
  return p;
}

Launch plan_reduction(const ReduceShape& shape) {
  return plan_launch(shape, ceil_div(shape.len, 4), true);  // four positions per thread at least
}

// logsumexp keeps the column maxes, var/std the column means, ahead of the partial states.
int64_t column_scratch_bytes(const ReduceArgs& a) {
  const bool two_pass =
      a.op == ReduceOp::logsumexp || a.op == ReduceOp::var || a.op == ReduceOp::std;
  const int64_t n_cols = a.shape.outer * a.shape.inner;
  return two_pass ? ceil_div(n_cols * 8, kMaxStateBytes) * kMaxStateBytes : 0;
}

template <typename T, typename R>
void run_reduction(const void* in, const Launch& p, const R& red, void* partials) {
  using Acc = typename R::Acc;
  static_assert(sizeof(Acc) <= kMaxStateBytes && alignof(Acc) <= 8, "reducer state too large");
  Acc* parts = static_cast<Acc*>(partials);
  AMPJIT_CUDA_LAUNCH(reduce_kernel<T, R>, p.grid, p.block, static_cast<const T*>(in), p.layout, red,
                     parts);
  if (p.grid.y == 1) return;
  // One row of grid.y states per column (Note [Lanes and columns]).
  Layout states;
  states.len = p.grid.y;
  states.n_cols = p.layout.n_cols;
  const int lanes = pow2_at_least(p.grid.y, kBlockThreads);
  const int width = kBlockThreads / lanes;
  const auto blocks =
      static_cast<unsigned>(std::min<int64_t>(ceil_div(states.n_cols, width), INT_MAX));
  AMPJIT_CUDA_LAUNCH(combine_splits_kernel<R>, dim3(blocks), dim3(lanes, width), parts, states,
                     red);
}

// The compute dtypes of sum, prod and the scans: int64 and the floating types.
template <typename F>
void dispatch_sum_types(int dtype, F&& f) {
  if (dtype == kInt64)
    f.template operator()<int64_t>();
  else
    dispatch_floating(dtype, static_cast<F&&>(f));
}

NormKind norm_kind(double ord) {
  if (ord == 0) return NormKind::zero;
  if (ord == 1) return NormKind::one;
  if (ord == 2) return NormKind::two;
  if (ord == std::numeric_limits<double>::infinity()) return NormKind::inf;
  if (ord == -std::numeric_limits<double>::infinity()) return NormKind::neg_inf;
  return NormKind::general;
}

}  // namespace

size_t reduce_workspace_bytes(const ReduceArgs& a) {
  const int64_t n_cols = a.shape.outer * a.shape.inner;
  if (n_cols == 0) return 0;
  const Launch p = plan_reduction(a.shape);
  const int64_t partials = p.grid.y > 1 ? n_cols * p.grid.y * kMaxStateBytes : 0;
  return static_cast<size_t>(column_scratch_bytes(a) + partials);
}

void launch_reduce(const ReduceArgs& a, void* workspace) {
  if (a.shape.outer * a.shape.inner == 0) return;
  const Launch p = plan_reduction(a.shape);
  void* column_scratch = workspace;
  void* partials = static_cast<char*>(workspace) + column_scratch_bytes(a);
  switch (a.op) {
    case ReduceOp::sum:
    case ReduceOp::mean:
    case ReduceOp::prod:
      dispatch_sum_types(a.dtype, [&]<typename T>() {
        using A = acc_t<T>;
        const A divisor = a.op == ReduceOp::mean ? static_cast<A>(a.shape.len) : A(1);
        run_reduction<T>(
            a.in, p,
            SumProdReducer<T>{a.op == ReduceOp::prod, divisor, static_cast<T*>(a.out), nullptr},
            partials);
      });
      return;
    case ReduceOp::max:
    case ReduceOp::min:
      dispatch_all(a.dtype, [&]<typename T>() {
        run_reduction<T>(
            a.in, p, ExtremeReducer<T>{a.op == ReduceOp::max, static_cast<T*>(a.out), a.indices},
            partials);
      });
      return;
    case ReduceOp::logsumexp:
      dispatch_floating(a.dtype, [&]<typename T>() {
        T* maxes = static_cast<T*>(column_scratch);
        run_reduction<T>(a.in, p, ExtremeReducer<T>{true, maxes, nullptr}, partials);
        run_reduction<T>(a.in, p, ExpSumReducer<T>{maxes, static_cast<T*>(a.out)}, partials);
      });
      return;
    case ReduceOp::var:
    case ReduceOp::std:
      dispatch_floating(a.dtype, [&]<typename T>() {
        using M = opmath_t<T>;
        M* means = static_cast<M*>(column_scratch);
        run_reduction<T>(a.in, p,
                         SumProdReducer<T>{false, static_cast<M>(a.shape.len), nullptr, means},
                         partials);
        const double divisor = std::max(0.0, static_cast<double>(a.shape.len) - a.param);
        run_reduction<T>(a.in, p,
                         SquaredDeviationReducer<T>{means, static_cast<T*>(a.out),
                                                    static_cast<M>(divisor), a.op == ReduceOp::std},
                         partials);
      });
      return;
    case ReduceOp::norm:
      dispatch_floating(a.dtype, [&]<typename T>() {
        using M = opmath_t<T>;
        run_reduction<T>(
            a.in, p,
            NormReducer<T>{norm_kind(a.param), static_cast<M>(a.param), static_cast<T*>(a.out)},
            partials);
      });
      return;
  }
}

void launch_scan(bool is_prod, int dtype, ReduceShape shape, const void* in, void* out) {
  const int64_t n_cols = shape.outer * shape.inner;
  if (n_cols == 0 || shape.len == 0) return;
  // Many columns: a warp per row, or one sequential thread per column when inner > 1 (its
  // neighbours read the neighbouring addresses); few columns: wide tiles.
  const bool many = n_cols >= 8192;
  const int64_t lanes =
      many ? (shape.inner == 1 ? std::min<int64_t>(shape.len, 32) : 1) : shape.len;
  const Launch p = plan_launch(shape, lanes, false);
  dispatch_sum_types(dtype, [&]<typename T>() {
    AMPJIT_CUDA_LAUNCH(scan_kernel<T>, p.grid, p.block, static_cast<const T*>(in),
                       static_cast<T*>(out), p.layout, is_prod);
  });
}

void launch_softmax(bool log, int dtype, ReduceShape shape, const void* in, void* out) {
  if (shape.outer * shape.inner == 0 || shape.len == 0) return;
  const Launch p = plan_launch(shape, ceil_div(shape.len, 8), false);
  dispatch_floating(dtype, [&]<typename T>() {
    AMPJIT_CUDA_LAUNCH(softmax_kernel<T>, p.grid, p.block, static_cast<const T*>(in),
                       static_cast<T*>(out), p.layout, log);
  });
}

}  // namespace ampjit::cuda
