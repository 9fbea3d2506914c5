"""Argument normalizers shared by the layers: an int or an iterable becomes an n-tuple."""
import collections.abc
import itertools

from ... import _C


def _ntuple(n, name):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(itertools.repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")


def _reverse_repeat_tuple(t, n):
    """(1, 2) with n=2 -> (2, 2, 1, 1): per-dimension padding in F.pad's last-dimension-first order."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults):
    """An adaptive pool's output size with each None taken from the input's trailing sizes."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError("Input dimension should be at least {}".format(len(out_size) + 1))
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def _factory(name, shape, device=None, dtype=None):
    """ampjit.<name>(shape, dtype=, device=) for the layers' parameters and buffers."""
    return _C._call("aten::" + name, (list(shape),), {"dtype": dtype, "device": device})
