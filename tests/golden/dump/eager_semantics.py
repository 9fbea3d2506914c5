# --semantics eager (Note [Autocast semantics]): the JIT autocast pass does not run, whatever the
# eager autocast state; the region's Enter/Exit stay for the interpreter to enter at run time.
# ARGS: --semantics eager --passes all --eager-autocast cpu=bfloat16 --print-after-each
import torch


def f(a, b):
    with torch.autocast("cpu"):
        y = torch.mm(a, b)
    return torch.mm(y, b)

# CHECK: # f: as built
# CHECK: # after constprop
# CHECK: # after autocast (not run in eager semantics)
# CHECK: # after dce
# CHECK: prim::Enter(
# CHECK: %y : Tensor = aten::mm(%a, %b)
# CHECK: prim::Exit(
# CHECK-NOT: _autocast_to
# CHECK: return (
