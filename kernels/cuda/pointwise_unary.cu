// Unary pointwise kernels: each UnaryOp's functor (pointwise_functors.cuh) over the elementwise
// family (elementwise.cuh), instantiated for the dtypes the op takes.
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/pointwise_functors.cuh"

namespace ampjit::cuda {
namespace {

template <UnaryOp Op, typename T>
void run(const ElementwiseIter& it, double p0, double p1) {
  using M = opmath_t<T>;
  const UnaryFn<T, Op> f{static_cast<M>(p0), static_cast<M>(p1), p1 < 0};
  launch_elementwise<unary_out_t<Op, T>, T, 1>(it, f);
}

}  // namespace

// round_decimals: p0 = 10^|decimals|, p1 < 0 when decimals is negative.
void launch_unary(UnaryOp op, int dtype, const ElementwiseIter& it, double p0, double p1) {
  visit_op(op, [&]<UnaryOp Op>() {
    dispatch_set<dtypes_of(Op)>(dtype, [&]<typename T>() { run<Op, T>(it, p0, p1); });
  });
}

}  // namespace ampjit::cuda
