# A compile error: the message with file:line:col, the source line and a caret; exit status 1
# and nothing on stdout.
# ARGS: --passes all
# EXIT: 1
import torch


def f(x):
    y = x + 1
    return undefined_helper(y)

# CHECK-NOT: graph(
# CHECK: compile_error.py:10:12: {{.*}}undefined_helper
# CHECK-NEXT: return undefined_helper(y)
# CHECK-NEXT: ~~~~~~~~~~~~~~~~
