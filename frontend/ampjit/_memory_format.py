"""torch.memory_format: the layout names torch accepts (contiguous_format, channels_last, ...) and the
Tensor methods that take one (contiguous, is_contiguous, to).

Note [Channels-last tensors] (runtime/layout.h)
``x.contiguous(memory_format=torch.channels_last)``, ``x.to(memory_format=torch.channels_last)`` and
``module.to(memory_format=torch.channels_last)`` give 4-D tensors torch's channels-last strides, and
convolutions, pointwise ops, max_pool2d and batch_norm keep that layout as torch does, so a network
converted once runs its convolutions without reordering activations. ``is_contiguous(memory_format=)``
answers from the strides as torch computes it. channels_last_3d is accepted and checked as torch
checks it, but gives ampjit's row-major layout (5-D kernels compute row-major): the values are torch's,
the strides are not.
"""
from . import _C
from ._C import Tensor


class memory_format:
    """torch.memory_format: one of ampjit.contiguous_format, preserve_format, channels_last,
    channels_last_3d (a name, compared by identity; see Note [Channels-last tensors])."""

    __slots__ = ("_name", "_code")

    def __init__(self, name, code):
        self._name = name
        self._code = code  # c10::MemoryFormat's value: what script and graphs hold (an int)

    def __repr__(self):
        return "torch." + self._name

    def __reduce__(self):
        return self._name  # pickle and copy give back the module's own object


memory_format.__module__ = "ampjit"

contiguous_format = memory_format("contiguous_format", 0)
preserve_format = memory_format("preserve_format", 1)
channels_last = memory_format("channels_last", 2)
channels_last_3d = memory_format("channels_last_3d", 3)

# The dimension order, innermost first, that a channels-last layout stores; and its rank.
_CHANNELS_LAST_ORDER = {channels_last: ((1, 3, 2, 0), 4), channels_last_3d: ((1, 4, 3, 2, 0), 5)}


def _check_memory_format(fn_name, fmt):
    if not isinstance(fmt, memory_format):
        type_name = "torch." + type(fmt).__name__ if isinstance(fmt, (_C.dtype, _C.device)) else type(fmt).__name__
        raise TypeError("{}(): argument 'memory_format' must be torch.memory_format, not {}".format(
            fn_name, type_name))


def _check_rank(t, fmt):
    """torch's error for a channels-last layout asked of a tensor of another rank."""
    order = _CHANNELS_LAST_ORDER.get(fmt)
    if order is not None and t.dim() != order[1]:
        raise RuntimeError("required rank {} tensor to use {} format".format(order[1], fmt._name))


def _is_channels_last_contiguous(t, fmt):
    """c10's compute_channels_last_contiguous_2d/_3d: walking the dims innermost first (C, W, H, N
    for channels_last), each dim of size != 1 has the stride of a dense channels-last tensor."""
    order, rank = _CHANNELS_LAST_ORDER[fmt]
    if t.dim() != rank:
        return False
    sizes, strides = t.shape, t.stride()
    expected = 1
    for d in order:
        if sizes[d] != 1:
            if strides[d] != expected:
                return False
            expected *= sizes[d]
    return True


_contiguous_op = None  # the op-table's Tensor.contiguous (aten::contiguous), set by _install


def _as_channels_last(t):
    """t in channels-last layout: t itself (the same object, as torch's) when its strides already
    are, else aten::contiguous with memory_format=channels_last, dispatched so that a trace records
    the copy."""
    if _is_channels_last_contiguous(t, channels_last):
        return t
    return _contiguous_op(t, memory_format=channels_last._code)


def _install(contiguous_op):
    """Gives Tensor.contiguous and Tensor.is_contiguous their memory_format argument;
    `contiguous_op` is the op-table method (aten::contiguous, memory_format an int)."""
    global _contiguous_op
    _contiguous_op = contiguous_op
    own_is_contiguous = Tensor.is_contiguous

    def contiguous(self, *, memory_format=contiguous_format):
        """Tensor.contiguous(memory_format=torch.contiguous_format): self if it is row-major,
        else a row-major copy; channels_last: self if it has that layout, else a copy in it
        (channels_last_3d gives row-major: Note [Channels-last tensors]). The row-major case always
        runs the op, so that a trace records it."""
        _check_memory_format("contiguous", memory_format)
        if memory_format is preserve_format and not own_is_contiguous(self):
            raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
        _check_rank(self, memory_format)
        if memory_format is channels_last:
            return _as_channels_last(self)
        return contiguous_op(self)

    def is_contiguous(self, *, memory_format=contiguous_format):
        """Tensor.is_contiguous(memory_format=torch.contiguous_format), from the strides as torch
        computes it (preserve_format asks the same as contiguous_format)."""
        _check_memory_format("is_contiguous", memory_format)
        if memory_format in _CHANNELS_LAST_ORDER:
            return _is_channels_last_contiguous(self, memory_format)
        return own_is_contiguous(self)

    Tensor.contiguous = contiguous
    Tensor.is_contiguous = is_contiguous
