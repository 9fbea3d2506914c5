"""ampjit.cuda.amp: the deprecated torch.cuda.amp spellings (torch/cuda/amp/autocast_mode.py)."""
import functools
import warnings

from ...amp.autocast_mode import autocast as _autocast
from ...amp.autocast_mode import custom_bwd as _custom_bwd
from ...amp.autocast_mode import custom_fwd as _custom_fwd
from ...amp.grad_scaler import GradScaler as _GradScaler


class autocast(_autocast):
    """``torch.cuda.amp.autocast(args...)`` is deprecated. Please use ``torch.amp.autocast("cuda", args...)`` instead."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        warnings.warn(
            "`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
            "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning, stacklevel=2)
        from ... import float16
        super().__init__("cuda", enabled=enabled, dtype=float16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)


def custom_fwd(fwd=None, *, cast_inputs=None):
    warnings.warn("`torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_fwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom_fwd(fwd, device_type="cuda", cast_inputs=cast_inputs)


def custom_bwd(bwd):
    warnings.warn("`torch.cuda.amp.custom_bwd(args...)` is deprecated. Please use "
                  "`torch.amp.custom_bwd(args..., device_type='cuda')` instead.", FutureWarning, stacklevel=2)
    return _custom_bwd(bwd, device_type="cuda")


class GradScaler(_GradScaler):
    """torch.cuda.amp.GradScaler (torch 1.13's spelling): a CUDA scaler; without CUDA it warns and
    disables itself, so scale() returns its input and step() just steps."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000,
                 enabled=True):
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval, enabled=enabled)
