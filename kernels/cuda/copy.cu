// Device copies with conversion between any two dtypes, and fills: the elementwise family with an
// identity functor (Note [One kernel family] in elementwise.cuh).
#include "kernels/cuda/elementwise.cuh"

namespace ampjit::cuda {

namespace {
template <typename T>
struct Identity {
  __device__ __forceinline__ T operator()(T v) const { return v; }
};
template <typename T>
struct Constant {
  T value;
  __device__ __forceinline__ T operator()() const { return value; }
};
}  // namespace

void launch_copy(const ElementwiseIter& it) {
  dispatch_all(it.dtype[0], [&]<typename D>() {
    dispatch_all(it.dtype[1],
                 [&]<typename S>() { launch_elementwise<D, S, 1>(it, Identity<S>{}); });
  });
}

void launch_fill(const ElementwiseIter& it, double value, int64_t ivalue, bool is_integral) {
  dispatch_all(it.dtype[0], [&]<typename T>() {
    T v;
    if constexpr (std::is_same_v<T, bool>)
      v = is_integral ? ivalue != 0 : value != 0;
    else if constexpr (std::is_same_v<T, __half>)
      v = __double2half(is_integral ? double(ivalue) : value);
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
      v = __double2bfloat16(is_integral ? double(ivalue) : value);
    else if constexpr (std::is_integral_v<T>)
      v = is_integral ? static_cast<T>(ivalue) : static_cast<T>(value);
    else
      v = is_integral ? static_cast<T>(ivalue) : static_cast<T>(value);
    launch_elementwise<T, T, 0>(it, Constant<T>{v});
  });
}

}  // namespace ampjit::cuda
