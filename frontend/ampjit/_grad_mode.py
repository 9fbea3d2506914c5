"""Gradient-mode switches: the per-thread state (runtime/grad_mode.h) autograd records under, which
compiled code consults too (`torch.is_grad_enabled()` in script)."""
import functools

from . import _C


def is_grad_enabled():
    return _C._is_grad_enabled()


def _set(enabled):
    _C._set_grad_enabled(bool(enabled))


class _GradMode:
    _enabled = True

    def __enter__(self):
        self._prev = is_grad_enabled()
        _set(self._enabled)
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Context manager and decorator that disables gradient tracking (torch.no_grad)."""
    _enabled = False


class enable_grad(_GradMode):
    """Context manager and decorator that enables gradient tracking (torch.enable_grad)."""
    _enabled = True


class set_grad_enabled:
    """Sets gradient tracking on or off, immediately and, used as a context manager, for a block."""

    def __init__(self, mode):
        self._prev = is_grad_enabled()
        _set(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _set(self._prev)
        return False


class inference_mode:
    """torch.inference_mode: a context manager and decorator. Inside (mode=True), gradients are not
    recorded and the tensors made are inference tensors (Tensor.is_inference()), which autograd
    refuses outside the block with torch's errors; inference_mode(False) turns both back on
    (runtime/grad_mode.h)."""

    def __init__(self, mode=True):
        self._mode = bool(mode)

    def __enter__(self):
        self._prev = (is_grad_enabled(), is_inference_mode_enabled())
        _C._set_inference_mode(self._mode)
        return self

    def __exit__(self, *exc):
        _C._set_inference_mode(self._prev[1])
        _set(self._prev[0])
        return False

    def __call__(self, fn):
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with inference_mode(mode):
                return fn(*args, **kwargs)
        return wrapper


def is_inference_mode_enabled():
    return _C._is_inference_mode_enabled()
