# An error inside a callee: the callee's line with its caret, then where it was called from.
# ARGS: --function outer
# EXIT: 1
import torch


def inner(x):
    return x.no_such_method()


def outer(x):
    return inner(x) + 1

# CHECK: callee_error.py:8:12: 'Tensor' object has no attribute or method 'no_such_method'
# CHECK-NEXT: return x.no_such_method()
# CHECK-NEXT: ~~~~~~~~~~~~~~~~~~
# CHECK-NEXT: called from {{.*}}callee_error.py:12:12
# CHECK-NEXT: return inner(x) + 1
