"""The decomposed ops: each op of runtime/ops/decompositions.def written once, in terms of other
ops, in the scriptable subset (Note [Decomposed ops] in runtime/op_table.h).

libampjit embeds this file and compiles the def of an op the first time the op runs, on any device;
autograd records the ops a def calls, so these need no derivatives. A def has the op's schema:
its name (NAME__OVERLOAD for an overload), its arguments in order with their names and types.
Errors are raised with torch's exception class and message.
"""
import math
from typing import List, Optional, Tuple

import ampjit as torch
from ampjit import Tensor


# ---- pointwise ------------------------------------------------------------------------------------

# A Python float times an integer tensor is the default floating dtype (torch's promotion of
# wrapped numbers), which is what torch's integer-to-float ops return.

def deg2rad(self: Tensor) -> Tensor:
    return self * (math.pi / 180.0)


def rad2deg(self: Tensor) -> Tensor:
    return self * (180.0 / math.pi)


def square(self: Tensor) -> Tensor:
    return torch.pow(self, 2)


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    if self.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError("outer: Expected 1-D argument self, but got {}-D".format(self.dim()))
    return self.unsqueeze(1) * vec2


# ---- sorting and selection -------------------------------------------------------------------------

def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    return torch.sort(self, dim, descending)[1]


def argsort__stable(self: Tensor, stable: bool, dim: int = -1, descending: bool = False) -> Tensor:
    return torch.sort(self, stable=stable, dim=dim, descending=descending)[1]


def msort(self: Tensor) -> Tensor:
    return torch.sort(self, 0)[0]
