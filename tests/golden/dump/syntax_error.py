# A syntax error is reported by the parser before anything compiles, with its location and caret.
# EXIT: 1
import torch


def f(x):
    return x +* 2

# CHECK-NOT: graph(
# CHECK: syntax_error.py:7:15: invalid syntax
# CHECK-NEXT: return x +* 2
# CHECK-NEXT: ~
