# A `with torch.autocast("cpu"):` region: prim::Enter/prim::Exit around the mm as built; the
# autocast pass (eager autocast off) casts the mm's inputs inside the region only.
# ARGS: --passes autocast --print-after-each
import torch


def f(a, b):
    with torch.autocast("cpu"):
        y = torch.mm(a, b)
    z = torch.mm(y, b)
    return z

# CHECK: # f: as built
# CHECK: prim::CreateObject()
# CHECK: prim::Enter(
# CHECK-NOT: _autocast_to
# CHECK: %y : Tensor = aten::mm(%a, %b)
# CHECK: prim::Exit(
# CHECK: %z : Tensor = aten::mm(%y, %b)
# CHECK: # after autocast
# CHECK: prim::Enter(
# CHECK: aten::_autocast_to_reduced_precision(%a,
# CHECK: aten::_autocast_to_reduced_precision(%b,
# CHECK: %y : Tensor = aten::mm(%
# CHECK: prim::Exit(
# CHECK-NOT: _autocast_to
# CHECK: %z : Tensor = aten::mm(%y, %b)
