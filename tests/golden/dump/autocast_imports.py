# The static resolver: `from torch.cpu.amp import autocast`, `torch.nn.functional as F` and a
# module-level constant; the region's casts appear after the autocast pass.
# ARGS: --passes inline,autocast,dce
import torch
import torch.nn.functional as F
from torch.cpu.amp import autocast

SCALE = 0.5


def f(x, w):
    with autocast():
        y = F.linear(x, w)
    return F.relu(y) * SCALE

# CHECK: # f: as built
# CHECK: torch.cpu.amp.autocast_mode.autocast = prim::CreateObject()
# CHECK-NOT: _autocast_to
# CHECK: aten::linear(%x, %w
# CHECK: prim::Constant[value=0.5]()
# CHECK: # after inline, autocast, dce (eager autocast off)
# CHECK: aten::_autocast_to_reduced_precision(%x,
# CHECK: aten::linear(
# CHECK: aten::relu(%y)
