"""torch.get_default_dtype / torch.set_default_dtype.

ampjit's factories (ones, zeros, rand, tensor([1.5]), ...) and the promotion of a Python float with
an integer tensor always give float32: the C++ op table has no default dtype to change, and a
Python wrapper could not reach the factories that scripted and traced code call. So float32 is the
one default dtype ampjit offers, and set_default_dtype says so rather than half-apply another.
"""


def get_default_dtype():
    """torch.get_default_dtype(): ampjit.float32, the dtype floating-point factories create."""
    from . import float32
    return float32


def set_default_dtype(d):
    """torch.set_default_dtype(d): float32 is accepted (it is the default already); another floating
    dtype raises NotImplementedError, as ampjit's factories always create float32; a non-floating
    dtype raises TypeError, as in torch."""
    from . import float32, dtype
    if not isinstance(d, dtype):
        raise TypeError("invalid dtype object: only floating-point types are supported as the default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    if d is not float32:
        raise NotImplementedError(
            "set_default_dtype({}): ampjit's factories always create torch.float32; pass dtype={} to each "
            "factory instead".format(d, d))
