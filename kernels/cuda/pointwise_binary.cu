// Binary and ternary pointwise kernels: each op's functor (pointwise_functors.cuh) over the
// elementwise family (elementwise.cuh), instantiated for the dtypes the op takes.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/pointwise_functors.cuh"

namespace ampjit::cuda {
namespace {

template <BinaryOp Op, typename T>
void run_binary(const ElementwiseIter& it, double p0) {
  launch_elementwise<binary_out_t<Op, T>, T, 2>(it, BinaryFn<T, Op>{static_cast<opmath_t<T>>(p0)});
}
template <TernaryOp Op, typename T>
void run_ternary(const ElementwiseIter& it, double p0) {
  launch_elementwise<T, T, 3>(it, TernaryFn<T, Op>{static_cast<opmath_t<T>>(p0)});
}

}  // namespace

void launch_binary(BinaryOp op, int dtype, const ElementwiseIter& it, double p0) {
  visit_op(op, [&]<BinaryOp Op>() {
    dispatch_set<dtypes_of(Op)>(dtype, [&]<typename T>() { run_binary<Op, T>(it, p0); });
  });
}

void launch_ternary(TernaryOp op, int dtype, const ElementwiseIter& it, double p0) {
  visit_op(op, [&]<TernaryOp Op>() {
    dispatch_set<dtypes_of(Op)>(dtype, [&]<typename T>() { run_ternary<Op, T>(it, p0); });
  });
}

}  // namespace ampjit::cuda
