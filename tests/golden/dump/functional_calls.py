# torch.nn.functional from its own source (Note [Functionals from their own source]): F.relu and
# F.l1_loss are calls of their defs, compiled from the library's copy of nn/functional.py; F.conv2d
# is the op itself. Inlining and constant propagation leave the ops, with the constant `inplace`
# and `reduction` branches folded away.
# ARGS: --passes inline,constprop,dce
import torch
import torch.nn.functional as F


def f(x, w):
    return F.relu(F.conv2d(x, w, padding=1)) + F.l1_loss(x, x, reduction="sum")

# CHECK: # f: as built
# CHECK: aten::conv2d(%x, %w
# CHECK: prim::CallFunction[value=<Function>, name="__torch__.torch.nn.functional.relu"]
# CHECK: prim::CallFunction[value=<Function>, name="__torch__.torch.nn.functional.l1_loss"]
# CHECK: # after inline, constprop, dce
# CHECK-NOT: prim::CallFunction
# CHECK: aten::conv2d(%x, %w
# CHECK-NOT: aten::relu_
# CHECK: aten::relu(
# CHECK-NOT: elementwise_mean
# CHECK: aten::l1_loss(
