"""The torch.nn.functional functions that take Python callables, which script cannot compile (as
torch's cannot): Python runs them; a scripted call is a compile error."""
from typing import Callable, Optional

import ampjit as torch
from ampjit import Tensor

from .functional import _get_enum, pairwise_distance


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function: Optional[Callable[[Tensor, Tensor], Tensor]] = None,
                                      margin: float = 1.0, swap: bool = False, reduction: str = "mean") -> Tensor:
    if torch.jit.is_scripting():
        raise NotImplementedError("F.triplet_margin_with_distance_loss does not support JIT scripting: "
                                  "functions requiring Callables cannot be scripted.")
    distance_function = distance_function if distance_function is not None else pairwise_distance
    positive_dist = distance_function(anchor, positive)
    negative_dist = distance_function(anchor, negative)
    if swap:
        swap_dist = distance_function(positive, negative)
        negative_dist = torch.min(negative_dist, swap_dist)
    output = torch.clamp(positive_dist - negative_dist + margin, min=0.0)
    reduction_enum = _get_enum(reduction)
    if reduction_enum == 1:
        return output.mean()
    elif reduction_enum == 2:
        return output.sum()
    else:
        return output
