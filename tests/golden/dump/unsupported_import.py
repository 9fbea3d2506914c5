# A name imported from a module script cannot use is an error naming the module and the import.
# EXIT: 1
import torch
import numpy as np


def f(x):
    return x * np.pi

# CHECK: unsupported_import.py:8:16:
# CHECK: 'np' is the Python module 'numpy' (imported at {{.*}}unsupported_import.py:4:8)
