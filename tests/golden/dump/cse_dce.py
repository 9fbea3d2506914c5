# Common subexpression elimination merges the repeated x * y; dead code elimination then drops
# the unused sum.
# ARGS: --passes cse,dce --print-after-each
import torch


def f(x, y):
    a = x * y
    b = x * y
    unused = a + b
    return a - b

# CHECK: # f: as built
# CHECK: %a : Tensor = aten::mul(%x, %y)
# CHECK: %b : Tensor = aten::mul(%x, %y)
# CHECK: %unused : Tensor = aten::add(%a, %b,
# CHECK: # after cse
# CHECK: %a : Tensor = aten::mul(%x, %y)
# CHECK-NOT: aten::mul
# CHECK: aten::add(%a, %a,
# CHECK: aten::sub(%a, %a,
# CHECK: # after dce
# CHECK: aten::mul(%x, %y)
# CHECK-NOT: aten::add
# CHECK: aten::sub(%a, %a,
