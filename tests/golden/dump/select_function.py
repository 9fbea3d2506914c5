# --function picks a def other than the last; a call to another top-level def is inlined.
# ARGS: --function g --passes inline
import torch


def helper(x):
    return x.relu()


def g(x):
    return helper(x) + 1


def h(x):
    return x

# CHECK: # g: as built
# CHECK: prim::CallFunction
# CHECK: # after inline
# CHECK-NOT: prim::CallFunction
# CHECK: aten::relu(%x)
# CHECK: aten::add(
