# Control flow: an if/else becomes prim::If with two blocks, a for over range() a prim::Loop whose
# body carries the accumulator.
# ARGS: --passes all
import torch


def f(x, n: int, flag: bool):
    if flag:
        y = x.neg()
    else:
        y = x + 1
    for i in range(n):
        y = y * 2
    return y

# CHECK: # f: as built
# CHECK: graph(%x : Tensor,
# CHECK: %n : int,
# CHECK: %flag : bool):
# CHECK: %y{{.*}} : Tensor = prim::If(%flag)
# CHECK-NEXT: block0():
# CHECK: aten::neg(%x)
# CHECK: block1():
# CHECK: aten::add(%x,
# CHECK: prim::Loop(%n,
# CHECK-NEXT: block0(%{{[a-z0-9]+}} : int, %y{{.*}} : Tensor):
# CHECK: aten::mul(
# CHECK: # after inline, constprop, autocast, cse, dce (eager autocast off)
# CHECK: prim::If(%flag)
# CHECK: prim::Loop(%n,
# CHECK: return (
