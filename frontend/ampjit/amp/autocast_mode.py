"""The autocast context manager and decorator, with torch's semantics (torch/amp/autocast_mode.py).

__enter__ saves and sets the device's enabled flag, dtype and the cache flag, and increments the
nesting; __exit__ decrements it, clears the weight-cast cache when the outermost region exits, and
restores the saved state, also when an exception leaves the region.
"""
import functools
import warnings

from .. import _C


def _profile_allows_cpu_float16():
    # PyTorch 1.13 accepts only bfloat16 for CPU autocast; 2.x accepts float16 too.
    return _C._autocast_get_profile() == "torch-2"


class autocast:
    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        from .. import bfloat16, float16
        if not isinstance(device_type, str):
            raise ValueError("Expected `device_type` of type `str`, got: `{}`".format(type(device_type)))
        if device_type not in ("cpu", "cuda"):
            raise RuntimeError(
                "User specified autocast device_type must be 'cuda' or 'cpu', but got '{}'".format(device_type))
        self.device = device_type
        self.fast_dtype = _C._autocast_get_dtype(device_type)
        self._cache_enabled = _C._autocast_is_cache_enabled()
        if enabled and device_type == "cuda" and _C._cuda_device_count() == 0:
            warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling")
            enabled = False
        if dtype is not None:
            self.fast_dtype = dtype
        if cache_enabled is not None:
            self._cache_enabled = cache_enabled
        if not isinstance(enabled, bool):
            raise TypeError("autocast(): enabled must be a bool, got {}".format(type(enabled).__name__))
        if device_type == "cpu":
            supported = [bfloat16, float16] if _profile_allows_cpu_float16() else [bfloat16]
            if enabled and self.fast_dtype not in supported:
                warnings.warn(
                    "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                    "CPU Autocast only supports dtype of {} currently.".format(
                        " and ".join(repr(d) for d in supported)))
                enabled = False
        elif self.fast_dtype not in (float16, bfloat16):
            raise RuntimeError("In CUDA autocast, the target dtype must be torch.float16 or torch.bfloat16")
        self._enabled = enabled

    def __enter__(self):
        from .. import bfloat16
        if self.device == "cpu" and self.fast_dtype != bfloat16 and not _profile_allows_cpu_float16():
            # torch 1.13's __enter__ sets the dtype, which its C++ refuses (after __init__ warned and
            # disabled the region); the state is left as it was (torch has already set the enabled
            # flag when it raises)
            raise RuntimeError("Currently, AutocastCPU only support Bfloat16 as the autocast_cpu_dtype")
        self.prev = _C._autocast_is_enabled(self.device)
        self.prev_fastdtype = _C._autocast_get_dtype(self.device)
        self.prev_cache_enabled = _C._autocast_is_cache_enabled()
        _C._autocast_set_enabled(self.device, self._enabled)
        if self._enabled:
            _C._autocast_set_dtype(self.device, self.fast_dtype)
        _C._autocast_increment_nesting()
        _C._autocast_set_cache_enabled(self._cache_enabled)
        # While tracing, the tracer records the region as node metadata (Note [Traced autocast
        # scopes] in tracer/tracer.h); the printed graph still shows only the casts it caused.
        self._traced = _C._is_tracing()
        if self._traced:
            _C._tracer_enter_autocast(self.device, self.fast_dtype, self._enabled)
        # torch 1.13's __enter__ returns nothing: `with torch.autocast("cpu") as ac` binds None
        return None if not _profile_allows_cpu_float16() else self

    def __exit__(self, exc_type, exc_val, exc_tb):
        if getattr(self, "_traced", False):
            _C._tracer_exit_autocast()
            self._traced = False
        if _C._autocast_decrement_nesting() == 0:
            _C._autocast_clear_cache()
        _C._autocast_set_enabled(self.device, self.prev)
        _C._autocast_set_dtype(self.device, self.prev_fastdtype)
        _C._autocast_set_cache_enabled(self.prev_cache_enabled)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def decorate_autocast(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        # The attribute torch's script compiler looks for (set without class-private name mangling).
        setattr(decorate_autocast, "__script_unsupported", "@autocast() decorator is not supported in script mode")
        return decorate_autocast


def _cast(value, device_type, dtype):
    """The floating tensors of `device_type` in value (nested lists, tuples and dicts) cast to dtype;
    float64 and everything else as is (torch.amp.autocast_mode._cast)."""
    from .. import Tensor
    if isinstance(value, Tensor):
        eligible = value.is_floating_point() and value.device.type == device_type and value.dtype != _double()
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _double():
    from .. import float64
    return float64


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError("Expected `device_type` of type `str`, got: `{}`".format(type(device_type)))


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for the forward of a torch.autograd.Function (torch.amp.custom_fwd; seeds 001/003).

    Records on ctx (args[0]) the autocast state forward ran in, for custom_bwd. With cast_inputs and
    autocast enabled for device_type, the floating tensors of device_type among the arguments are
    cast to cast_inputs and forward runs with autocast disabled (so ctx records False); otherwise
    forward runs in the caller's autocast state."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _C._autocast_get_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _C._autocast_is_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = _C._autocast_is_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if autocast_context:
            with autocast(device_type=device_type, enabled=False):
                return fwd(*_cast(args, device_type, cast_inputs), **_cast(kwargs, device_type, cast_inputs))
        return fwd(*args, **kwargs)
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for the backward of a torch.autograd.Function (torch.amp.custom_bwd): backward
    runs in the autocast state (enabled, dtype) its forward ran in, which custom_fwd recorded."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast, dtype=args[0]._dtype):
            return bwd(*args, **kwargs)
    return decorate_bwd
