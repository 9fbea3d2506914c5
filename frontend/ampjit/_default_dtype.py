"""torch.get_default_dtype / torch.set_default_dtype.

The default dtype lives in the C++ runtime (runtime/default_dtype.h), so the factories that eager,
scripted and traced code call all see it: ones, zeros, rand, arange and full of floats,
tensor([1.5]), and the promotion of a Python float with an integer tensor. Process-wide, as torch's.
"""
from . import _C


def get_default_dtype():
    """torch.get_default_dtype(): the dtype floating-point factories create (float32 unless set)."""
    return _C._get_default_dtype()


def set_default_dtype(d):
    """torch.set_default_dtype(d): float16, bfloat16, float32 or float64; any other dtype (or a
    non-dtype) raises TypeError, as in torch."""
    from . import dtype
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _C._set_default_dtype(d)
