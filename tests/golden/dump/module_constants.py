# Module-level constants and `from` imports resolved by the static resolver: the values are
# inlined as constants; `relu` is torch.relu and `float16` a dtype.
# ARGS: --passes constprop
import torch
from torch import relu, float16

N = 4
SCALE = -0.5


def f(x):
    return relu(x).to(float16) * SCALE + N

# CHECK: # f: as built
# CHECK: aten::relu(%x)
# CHECK: prim::Constant[value=5]()
# CHECK: aten::to(
# CHECK: prim::Constant[value=-0.5]()
# CHECK: prim::Constant[value=4]()
# CHECK: # after constprop
