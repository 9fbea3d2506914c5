"""torch.fft: every public name of torch 1.13's torch.fft, each the op aten::fft_NAME (as
torch/fft/__init__.py binds them), with torch's signatures and norm modes; script resolves
torch.fft.NAME to the same op.

ampjit has no complex dtype: the functions whose result is real (irfft, hfft and their 2-d and n-d
forms, fftshift, ifftshift, fftfreq, rfftfreq) compute it; the others check their arguments as
torch does and raise NotImplementedError (Note [FFTs without a complex dtype] in
kernels/fft_meta.h).
"""
from . import _ops
from ._C import Tensor  # noqa: F401  (torch.fft.Tensor is torch.Tensor)

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2",
           "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq",
           "rfftfreq", "fftshift", "ifftshift"]


def _install(namespace):
    for name in __all__:
        if name in ("fftfreq", "rfftfreq"):
            continue
        fn = _ops._make_function("aten::fft_" + name)[1]
        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = "ampjit.fft"
        namespace[name] = fn


_install(globals())
del _install


def _freq(op, n, d, out, dtype, device, requires_grad):
    # torch's layout= is accepted and ignored: ampjit's tensors are all strided
    if out is not None:
        # torch computes in out's dtype, then resizes out and writes it: out= of a multiplication
        # by one does both (kernels::write_result, Note [Derived op variants])
        result = _ops._C._call(op, (n, d), {"dtype": out.dtype, "device": out.device})
        one = _ops._C.tensor(1.0, dtype=out.dtype, device=out.device)
        _ops._C._call("aten::mul", (result, one), {"out": out})
        return out
    result = _ops._C._call(op, (n, d), {"dtype": dtype, "device": device})
    if requires_grad:
        result.requires_grad_(True)
    return result


def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.fftfreq: the sample frequencies of a length-n transform (aten::fft_fftfreq)."""
    return _freq("aten::fft_fftfreq", n, d, out, dtype, device, requires_grad)


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    """torch.fft.rfftfreq: the sample frequencies of a one-sided transform (aten::fft_rfftfreq)."""
    return _freq("aten::fft_rfftfreq", n, d, out, dtype, device, requires_grad)
