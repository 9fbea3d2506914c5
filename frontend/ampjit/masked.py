"""torch.masked: reductions and normalizations that ignore the elements a boolean `mask` marks off.

Each function replaces the masked-off elements by the identity of its reduction (0 for sums, 1 for
products, -inf or the dtype's lowest for maxima, ...) and runs the ordinary op, as torch 1.13's
torch.masked does for strided tensors; a mean, variance or median over nothing but masked-off
elements is NaN. `mask` broadcasts to the input's shape. torch's prototype MaskedTensor class is not
provided (sparse layouts are out of scope).
"""
import builtins
import math

import ampjit as torch

__all__ = ["sum", "prod", "cumsum", "cumprod", "amax", "amin", "argmax", "argmin", "mean",
           "median", "logsumexp", "logaddexp", "norm", "var", "std", "softmax", "log_softmax",
           "softmin", "normalize"]

_INTEGER_SUM_DTYPES = (torch.uint8, torch.bool, torch.int8, torch.int16, torch.int32)


def _dims(dim, ndim):
    """`dim` as a sorted tuple of non-negative dims; None or () is every dim."""
    if dim is None or dim == ():
        return tuple(range(ndim))
    n = builtins.max(ndim, 1)
    out = []
    for d in ((dim,) if isinstance(dim, int) else dim):
        if d in out:
            raise RuntimeError("dim={} appears multiple times in the list of dims".format(d))
        if d >= n or d < -n:
            raise IndexError("Dimension out of range (expected to be in range of [{}, {}], but got {})".format(
                -n, n - 1, d))
        out.append(d % n)
    return tuple(sorted(out))


def _mask_of(input, mask):
    """The mask as a bool tensor of input's shape."""
    if tuple(mask.shape) != tuple(input.shape):
        if mask.dim() > input.dim():
            raise IndexError("_input_mask expected broadcastable mask (got mask dimensionality higher than of "
                             "the input)")
        mask = torch.broadcast_to(mask.clone(), tuple(input.shape))
    return mask.to(dtype=torch.bool)


def _identity(op, input, ord=2.0):
    dt = input.dtype
    if op in ("sum", "cumsum", "norm"):
        if op == "norm" and ord == -math.inf:
            return torch.tensor(math.inf, dtype=dt)
        return torch.tensor(0, dtype=dt)
    if op in ("prod", "cumprod"):
        return torch.tensor(1, dtype=dt)
    if op in ("amax", "argmax", "logsumexp", "amin", "argmin"):
        low = op in ("amax", "argmax", "logsumexp")
        if input.is_floating_point():
            return torch.tensor(-math.inf if low else math.inf, dtype=dt)
        lo, hi = _int_range(dt)
        return torch.tensor(lo if low else hi, dtype=dt)
    if op == "median":
        return torch.tensor(math.nan, dtype=dt if input.is_floating_point() else torch.float32)
    raise NotImplementedError("identity of {} on {} input".format(op, dt))


def _int_range(dt):
    bits = {torch.uint8: 8, torch.int8: 8, torch.int16: 16, torch.int32: 32, torch.int64: 64}[dt]
    if dt == torch.uint8:
        return 0, 255
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def _combine(op, input, mask, ord=2.0):
    """input with its masked-off elements replaced by op's identity."""
    if mask is None:
        return input
    return torch.where(_mask_of(input, mask), input, _identity(op, input, ord))


def _reduce(fn, op, input, dim, keepdim, dtype, mask):
    return fn(_combine(op, input, mask), list(_dims(dim, input.dim())), builtins.bool(keepdim), dtype=dtype)


def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = torch.int64 if input.dtype in _INTEGER_SUM_DTYPES else input.dtype
    return _reduce(torch.sum, "sum", input, dim, keepdim, dtype, mask)


def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    if dtype is None:
        dtype = torch.int64 if input.dtype in _INTEGER_SUM_DTYPES else input.dtype
    x = _combine("prod", input, mask)
    dims = _dims(dim, input.dim())
    if not dims:
        return x.to(dtype)
    result = x.to(dtype)
    for d in reversed(dims):
        result = torch.prod(result, d, builtins.bool(keepdim), dtype=dtype)
    return result


def cumsum(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return torch.cumsum(_combine("cumsum", input, mask), d, dtype=dtype).to(dtype=dtype)


def cumprod(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return torch.cumprod(_combine("cumprod", input, mask), d, dtype=dtype).to(dtype=dtype)


def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amax", input, mask)
    return torch.amax(x, list(_dims(dim, input.dim())), builtins.bool(keepdim)).to(dtype=dtype)


def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("amin", input, mask)
    return torch.amin(x, list(_dims(dim, input.dim())), builtins.bool(keepdim)).to(dtype=dtype)


def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torch.argmax(_combine("argmax", input, mask), dim, builtins.bool(keepdim)).to(dtype=dtype)


def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torch.argmin(_combine("argmin", input, mask), dim, builtins.bool(keepdim)).to(dtype=dtype)


def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    ones = torch.ones(tuple(input.shape), dtype=torch.int64)
    m = None if mask is None else _mask_of(input, mask)
    count = sum(ones, dim, keepdim=keepdim, mask=m)
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=m)
    return total / count


def median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    is_float = input.is_floating_point()
    if not is_float:
        input = input.to(dtype=torch.float32)
    out = torch.nanmedian(_combine("median", input, mask), d, keepdim).values
    if is_float:
        return out
    if not builtins.bool(torch.isnan(out).any()):
        return out.to(dtype=dtype)
    raise ValueError("masked median expects no fully masked out rows if dtype is not floating point")


def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("logsumexp", input, mask)
    return torch.logsumexp(x, list(_dims(dim, input.dim())), keepdim=keepdim).to(dtype=dtype)


def logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    dtype = input.dtype if dtype is None else dtype
    return torch.logaddexp(_combine("logsumexp", input, input_mask),
                           _combine("logsumexp", other, other_mask)).to(dtype=dtype)


def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("norm", input, mask, ord)
    dims = list(_dims(dim, input.dim()))
    return torch.linalg.vector_norm(x, ord, dims, builtins.bool(keepdim), dtype=dtype)


def _std_var(input, dim, unbiased, keepdim, dtype, mask, take_sqrt):
    if dtype is None:
        dtype = input.dtype if input.is_floating_point() else torch.float32
    compute = dtype if dtype.is_floating_point else torch.float32
    m = None if mask is None else _mask_of(input, mask)
    ones = torch.ones(tuple(input.shape), dtype=torch.int64)
    count = sum(ones, dim, keepdim=True, mask=m)
    sample_mean = torch.divide(sum(input, dim, keepdim=True, dtype=dtype, mask=m), count)
    x = torch.subtract(input, sample_mean)
    total = sum(x * x, dim, keepdim=keepdim, dtype=compute, mask=m)
    if not keepdim:
        count = count.reshape(tuple(total.shape))
    if unbiased:
        count = torch.maximum(torch.subtract(count, 1), torch.zeros((), dtype=count.dtype))
    out = torch.divide(total, count).to(dtype=dtype)
    return torch.sqrt(out) if take_sqrt else out


def var(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, keepdim, dtype, mask, False)


def std(input, dim=None, unbiased=False, *, keepdim=False, dtype=None, mask=None):
    return _std_var(input, dim, unbiased, keepdim, dtype, mask, True)


def softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return torch.nn.functional.softmax(_combine("amax", input, mask), d, dtype=dtype)


def log_softmax(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return torch.nn.functional.log_softmax(_combine("amax", input, mask), d, dtype=dtype)


def softmin(input, dim, *, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    d = _dims(dim, input.dim())[0]
    return torch.nn.functional.softmin(_combine("amin", input, mask), d, dtype=dtype)


def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = input.dtype if dtype is None else dtype
    x = _combine("sum", input, mask)
    n = norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    return torch.divide(x, torch.maximum(n, torch.full((), eps, dtype=n.dtype)))


# ---- torch.masked's mask helpers (torch/masked/_ops.py), which torch's tests call ----------------

_REDUCTIONS = frozenset(["sum", "prod", "amax", "amin", "argmax", "argmin", "mean", "median", "norm",
                         "var", "std", "logsumexp"])
_NORMALIZATIONS = frozenset(["softmax", "log_softmax", "softmin", "normalize", "cumsum", "cumprod"])


def _input_mask(input, *args, **kwargs):
    """The input's mask as a bool tensor of its shape (all True without `mask=`)."""
    mask = kwargs.get("mask")
    if mask is None:
        return torch.ones(tuple(input.shape), dtype=torch.bool)
    return _mask_of(input, mask)


def _output_mask(op, input, *args, **kwargs):
    """The mask of masked op `op`'s result on these arguments: for a reduction, whether any input
    element reached each output element; for a normalization, the input mask."""
    if not callable(op):
        raise ValueError("_output_mask expected masked operation (got {} object)".format(type(op).__name__))
    name = op.__name__
    if name in _REDUCTIONS:
        if name == "norm" and args:
            args = args[1:]  # the ord argument
        dim = args[0] if args else kwargs.get("dim")
        outmask = _input_mask(input, *args, **kwargs)
        keepdim = builtins.bool(kwargs.get("keepdim", False))
        for d in reversed(_dims(dim, input.dim())):
            outmask = outmask.any(dim=d, keepdim=keepdim) if outmask.dim() else outmask
        return outmask
    if name in _NORMALIZATIONS:
        return _input_mask(input, *args, **kwargs)
    raise ValueError("_output_mask expected masked operation (got callable {}.{})".format(op.__module__, name))
