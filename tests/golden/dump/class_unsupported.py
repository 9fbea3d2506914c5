# ampjit-dump compiles a file's functions, not its classes: using one is an error that says where
# the class is and what to do instead.
# EXIT: 1
import torch
import torch.nn as nn


class Net(nn.Module):
    def forward(self, x):
        return x.relu()


def f(x):
    return Net()(x)

# CHECK: class_unsupported.py:14:12: 'Net' is a class (defined at {{.*}}class_unsupported.py:8:1)
# CHECK-NEXT: return Net()(x)
