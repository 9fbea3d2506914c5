"""torch's autocast state functions (torch.is_autocast_enabled, ...), over the C++ state.

The state is per thread and per device type (runtime/autocast/autocast_state.h); nesting and the
weight-cast cache are per thread.
"""
from . import _C


def is_autocast_enabled():
    """Whether CUDA autocast is enabled on this thread (torch 1.13's meaning)."""
    return _C._autocast_is_enabled("cuda")


def set_autocast_enabled(enabled):
    _C._autocast_set_enabled("cuda", bool(enabled))


def is_autocast_cpu_enabled():
    return _C._autocast_is_enabled("cpu")


def set_autocast_cpu_enabled(enabled):
    _C._autocast_set_enabled("cpu", bool(enabled))


def get_autocast_cpu_dtype():
    return _C._autocast_get_dtype("cpu")


def set_autocast_cpu_dtype(dtype):
    _C._autocast_set_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    return _C._autocast_get_dtype("cuda")


def set_autocast_gpu_dtype(dtype):
    _C._autocast_set_dtype("cuda", dtype)


def autocast_increment_nesting():
    return _C._autocast_increment_nesting()


def autocast_decrement_nesting():
    return _C._autocast_decrement_nesting()


def clear_autocast_cache():
    _C._autocast_clear_cache()


def is_autocast_cache_enabled():
    return _C._autocast_is_cache_enabled()


def set_autocast_cache_enabled(enabled):
    _C._autocast_set_cache_enabled(bool(enabled))
