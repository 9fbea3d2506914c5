# A straight-line function: the graph as built, then after the whole pipeline under eager CPU
# autocast (the mm's inputs are cast to bfloat16; the relu is not on the jit_pass lists).
# ARGS: --passes all --eager-autocast cpu=bfloat16
import torch


def f(x, w):
    y = torch.mm(x, w)
    z = torch.relu(y) + 1
    return z * 2

# CHECK: # f: as built
# CHECK-NEXT: graph(%x : Tensor,
# CHECK-NEXT: %w : Tensor):
# CHECK-NOT: _autocast_to
# CHECK: %y : Tensor = aten::mm(%x, %w) # {{.*}}straight_line.py:8:9
# CHECK: aten::relu(%y)
# CHECK: aten::add(
# CHECK: aten::mul(
# CHECK: # after inline, constprop, autocast, cse, dce (eager autocast cpu=bfloat16)
# CHECK-NEXT: graph(%x : Tensor,
# CHECK: aten::_autocast_to_reduced_precision(%x,
# CHECK: aten::_autocast_to_reduced_precision(%w,
# CHECK: %y : Tensor = aten::mm(
# CHECK: aten::relu(%y)
# CHECK: return (
