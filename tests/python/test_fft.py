"""torch.fft, torch.stft, torch.istft and the window functions against torch 1.13 (the `torch_ref`
fixture): the functions with real results on real inputs of every dtype torch takes, their norm
modes and errors, the NotImplementedError of the functions whose result would be complex (Note
[FFTs without a complex dtype] in kernels/fft_meta.h), scripted and traced calls, and gradients."""
import numpy as np
import pytest

import ampjit


def both(torch_ref, fn):
    return fn(ampjit), fn(torch_ref)


def assert_close(a, b, rtol=1e-6, atol=1e-6):
    assert repr(a.dtype) == repr(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
    np.testing.assert_allclose(a.detach().double().numpy(), b.detach().double().numpy(),
                               rtol=rtol, atol=atol)


def tensor(lib, a, dtype="float64"):
    return lib.tensor(a).to(getattr(lib, dtype))


REAL_1D = ["irfft", "hfft"]
REAL_ND = ["irfft2", "hfft2", "irfftn", "hfftn"]
COMPLEX = ["fft", "ifft", "rfft", "ihfft", "fft2", "ifft2", "rfft2", "ihfft2", "fftn", "ifftn",
           "rfftn", "ihfftn"]


@pytest.mark.parametrize("name", REAL_1D)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "uint8", "bool"])
def test_real_results_of_1d_transforms_match_torch(torch_ref, name, dtype):
    a = np.random.default_rng(0).normal(size=(3, 7, 9)) * 3
    for kwargs in [{}, {"n": 10, "dim": 1, "norm": "ortho"}, {"n": 7, "norm": "forward"},
                   {"n": 1}, {"n": 31, "dim": 0}, {"dim": -3, "norm": "backward"}]:
        got, want = both(torch_ref, lambda L: getattr(L.fft, name)(tensor(L, a, dtype), **kwargs))
        assert_close(got, want, rtol=1e-5 if dtype != "float64" else 1e-10,
                     atol=1e-5 if dtype != "float64" else 1e-10)


@pytest.mark.parametrize("name", REAL_ND)
def test_real_results_of_nd_transforms_match_torch(torch_ref, name):
    a = np.random.default_rng(1).normal(size=(5, 6, 7))
    for kwargs in [{}, {"s": (3, 10), "dim": (1, 2), "norm": "ortho"}, {"s": (6, 8)},
                   {"dim": (0, -1)}, {"dim": (-3, -2, -1), "norm": "forward"}, {"s": (-1, 5)}]:
        if name.endswith("n") and "dim" not in kwargs and "s" not in kwargs:
            kwargs = {"norm": "ortho"}
        got, want = both(torch_ref, lambda L: getattr(L.fft, name)(tensor(L, a), **kwargs))
        assert_close(got, want, rtol=1e-10, atol=1e-10)


def test_out_variants_write_their_tensor(torch_ref):
    a = np.random.default_rng(2).normal(size=(4, 6))

    def run(L):
        out = L.empty(0, dtype=L.float64)
        r = L.fft.irfftn(tensor(L, a), s=(4, 8), out=out)
        return r, out
    (r, out), (tr, tout) = both(torch_ref, run)
    assert r is out
    assert_close(out, tout)


@pytest.mark.parametrize("name", COMPLEX)
def test_complex_results_raise_not_implemented(name):
    x = ampjit.ones(4, 6)
    with pytest.raises(NotImplementedError) as e:
        getattr(ampjit.fft, name)(x)
    fname = "torch.fft." + name if name in ("fft", "ifft", "rfft", "ihfft", "fft2", "ifft2",
                                             "fftn", "ifftn") else name
    fname = {"rfft2": "rfftn", "ihfft2": "ihfftn"}.get(name, fname)
    assert str(e.value) == (
        "{} returns a complex tensor: complex tensors are out of scope in ampjit (of torch.fft, "
        "irfft, hfft and their 2-d and n-d forms return real tensors)".format(fname))


def test_stft_and_istft_complex_results_raise_not_implemented():
    x = ampjit.ones(100, dtype=ampjit.float64)
    with pytest.raises(NotImplementedError, match="torch.stft with return_complex=True returns a "
                       "complex tensor: complex tensors are out of scope in ampjit"):
        ampjit.stft(x, 16, return_complex=True)
    spec = ampjit.ones(16, 5, 2, dtype=ampjit.float64)
    with pytest.raises(NotImplementedError, match="torch.istft with return_complex=True"):
        ampjit.istft(spec, 16, onesided=False, return_complex=True)


ERRORS = [
    ("irfft", lambda L, x: L.fft.irfft(x, n=0)),
    ("irfft", lambda L, x: L.fft.irfft(x, dim=2)),
    ("irfft", lambda L, x: L.fft.irfft(x, norm="bad")),
    ("irfft", lambda L, x: L.fft.irfft(x[:, :1])),
    ("hfft", lambda L, x: L.fft.hfft(x.to(L.float16))),
    ("hfft", lambda L, x: L.fft.hfft(x.to(L.bfloat16))),
    ("irfftn", lambda L, x: L.fft.irfftn(x, s=(3, 2, 1))),
    ("irfftn", lambda L, x: L.fft.irfftn(x, s=(3,), dim=(0, 1))),
    ("irfftn", lambda L, x: L.fft.irfftn(x, dim=(0, 0))),
    ("irfftn", lambda L, x: L.fft.irfftn(x, dim=())),
    ("hfftn", lambda L, x: L.fft.hfftn(x, s=(0,))),
    ("hfft2", lambda L, x: L.fft.hfft2(x, dim=(0, 2))),
    ("rfft", lambda L, x: L.fft.rfft(x, n=0)),
    ("fftn", lambda L, x: L.fft.fftn(x, s=(1, 2, 3))),
    ("fftfreq", lambda L, x: L.fft.fftfreq(4, dtype=L.int64)),
    ("hann", lambda L, x: L.hann_window(-1)),
    ("hann", lambda L, x: L.hann_window(4, dtype=L.int64)),
    ("hamming", lambda L, x: L.hamming_window(4, dtype=L.float16)),
    ("kaiser", lambda L, x: L.kaiser_window(4, dtype=L.float16)),
    ("fftshift", lambda L, x: L.fft.fftshift(x[0, 0], dim=-1)),
    ("stft", lambda L, x: L.stft(x[0, 0], 2, return_complex=False)),
    ("stft", lambda L, x: L.stft(x.to(L.int64), 4, return_complex=False)),
    ("stft", lambda L, x: L.stft(x.to(L.int64), 40, return_complex=False)),
    ("stft", lambda L, x: L.stft(x, 4, window=L.ones(3), return_complex=False)),
    ("stft", lambda L, x: L.stft(x, 4, hop_length=0, return_complex=False)),
    ("istft", lambda L, x: L.istft(x.reshape(3, 4, 2), 6, center=False)),
    ("istft", lambda L, x: L.istft(x.reshape(3, 4, 2), 4, window=L.zeros(4))),
    ("istft", lambda L, x: L.istft(x.reshape(3, 4, 2), 4, onesided=False)),
]


@pytest.mark.parametrize("name,fn", ERRORS, ids=[str(i) + e[0] for i, e in enumerate(ERRORS)])
def test_errors_are_torchs(torch_ref, name, fn):
    a = np.random.default_rng(3).normal(size=(4, 6))
    errors = []
    for L in (ampjit, torch_ref):
        with pytest.raises(Exception) as e:
            fn(L, tensor(L, a))
        errors.append(e)
    assert errors[0].type is errors[1].type, (errors[0], errors[1])
    assert str(errors[0].value).splitlines()[0] == str(errors[1].value).splitlines()[0]


@pytest.mark.parametrize("dim", [None, 0, (1,), (0, 1), (0, 0), -1])
def test_fftshift_and_ifftshift_match_torch(torch_ref, dim):
    a = np.arange(9 * 10).reshape(9, 10)
    for name in ("fftshift", "ifftshift"):
        for dtype in ("float64", "int16", "bool"):
            got, want = both(torch_ref, lambda L: getattr(L.fft, name)(tensor(L, a, dtype), dim=dim))
            assert_close(got, want, rtol=0, atol=0)


@pytest.mark.parametrize("n,d", [(0, 1.0), (1, 1.0), (5, 1.0), (8, 0.1), (7, 2.5), (3, 0.0)])
def test_fftfreq_and_rfftfreq_match_torch(torch_ref, n, d):
    for name in ("fftfreq", "rfftfreq"):
        for dtype in (None, "float64", "bfloat16", "float16"):
            kw = {} if dtype is None else {"dtype": dtype}
            got, want = both(torch_ref, lambda L: getattr(L.fft, name)(
                n, d, **{k: getattr(L, v) for k, v in kw.items()}))
            assert_close(got, want, rtol=0, atol=0)
    r = ampjit.fft.fftfreq(4, requires_grad=True)
    assert r.requires_grad and r.is_leaf

    def out_form(L):
        out = L.empty(2, dtype=L.float64)
        return L.fft.fftfreq(5, 0.5, out=out), out
    (r, out), (tr, tout) = both(torch_ref, out_form)
    assert r is out
    assert_close(out, tout, rtol=0, atol=0)


WINDOWS = [
    ("hann_window", {}), ("hann_window", {"periodic": False}),
    ("hamming_window", {}), ("hamming_window", {"periodic": False, "alpha": 0.6}),
    ("hamming_window", {"periodic": True, "alpha": 0.6, "beta": 0.3}),
    ("bartlett_window", {}), ("bartlett_window", {"periodic": False}),
    ("blackman_window", {}), ("blackman_window", {"periodic": False}),
    ("kaiser_window", {}), ("kaiser_window", {"periodic": False}),
    ("kaiser_window", {"periodic": True, "beta": 5.5}),
]


@pytest.mark.parametrize("name,kwargs", WINDOWS, ids=[w[0] + str(i) for i, w in enumerate(WINDOWS)])
def test_windows_match_torch(torch_ref, name, kwargs):
    for length in (0, 1, 2, 5, 16, 101):
        for dtype in ("float32", "float64", "bfloat16"):
            got, want = both(torch_ref, lambda L: getattr(L, name)(
                length, dtype=getattr(L, dtype), **kwargs))
            tol = 1e-2 if dtype == "bfloat16" else 1e-6 if dtype == "float32" else 1e-12
            assert_close(got, want, rtol=tol, atol=tol)
    got, want = both(torch_ref, lambda L: getattr(L, name)(8, **kwargs))
    assert_close(got, want)
    w = getattr(ampjit, name)(8, requires_grad=True, **kwargs)
    assert w.requires_grad and w.is_leaf


STFT_CASES = [
    ((100,), {"n_fft": 10}),
    ((10,), {"n_fft": 7, "center": False}),
    ((10, 100), {"n_fft": 16, "hop_length": 4, "center": False}),
    ((3, 100), {"n_fft": 16, "hop_length": 5, "win_length": 9, "normalized": True}),
    ((2, 100), {"n_fft": 16, "onesided": False, "pad_mode": "constant"}),
    ((64,), {"n_fft": 12, "window": "hann"}),
]


@pytest.mark.parametrize("shape,kwargs", STFT_CASES, ids=[str(i) for i in range(len(STFT_CASES))])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_stft_and_its_inverse_match_torch(torch_ref, shape, kwargs, dtype):
    a = np.random.default_rng(4).normal(size=shape)

    def run(L):
        kw = dict(kwargs)
        if kw.get("window") == "hann":
            kw["window"] = L.hann_window(kw["n_fft"], dtype=getattr(L, dtype))
        spec = L.stft(tensor(L, a, dtype), return_complex=False, **kw)
        inv = None
        if kw.get("center", True) and kw.get("pad_mode", "reflect") == "reflect":
            kw.pop("pad_mode", None)
            inv = L.istft(spec, length=shape[-1], **kw)
        return spec, inv
    (spec, inv), (tspec, tinv) = both(torch_ref, run)
    tol = 1e-10 if dtype == "float64" else 2e-5
    assert_close(spec, tspec, rtol=tol, atol=tol)
    if tinv is not None:
        assert_close(inv, tinv, rtol=tol, atol=tol)
        assert_close(inv, tensor(torch_ref, a, dtype), rtol=tol * 10, atol=tol * 10)


SCRIPT_SRC = """
import ampjit as torch
from ampjit import Tensor


def spectral(x: Tensor) -> Tensor:
    y = torch.fft.irfft(x, n=9, norm="ortho") + torch.fft.hfft(x, 9).sum()
    z = torch.fft.irfftn(x.unsqueeze(0), s=[2, 6])
    w = torch.stft(x, 4, hop_length=1, window=torch.hann_window(4, dtype=x.dtype),
                   return_complex=False)
    return y.sum() + z.sum() + torch.fft.fftshift(y).sum() + w.sum() + torch.fft.fftfreq(5).sum()
"""


def test_scripted_and_traced_fft_give_eager_results(program_modules):
    x = np.random.default_rng(6).normal(size=(5,))
    results = {}
    for mod, lib in program_modules("fft_script", SCRIPT_SRC):
        t = lib.tensor(x)
        eager = mod.spectral(t)
        scripted = lib.jit.script(mod.spectral)
        traced = lib.jit.trace(mod.spectral, (t,))
        for impl in (scripted, traced):
            assert_close(impl(t), eager, rtol=1e-12, atol=1e-12)
        if lib is ampjit:
            graph = str(scripted.graph)
            assert "aten::fft_irfft" in graph and "aten::fft_irfftn" in graph
            assert "aten::fft_irfft" in str(traced.graph)
        results[lib.__name__] = eager
    if "torch" in results:
        assert_close(results["ampjit"], results["torch"], rtol=1e-10, atol=1e-10)


def test_scripted_complex_result_raises_at_run_time():
    src_fn = ampjit.jit.script(lambda_free_fft)
    with pytest.raises(NotImplementedError, match="torch.fft.fft returns a complex tensor"):
        src_fn(ampjit.ones(4))


def lambda_free_fft(x):
    return ampjit.fft.fft(x)


GRAD_CASES = [
    ("irfft", lambda L, x: L.fft.irfft(x, n=7, norm="ortho")),
    ("irfft_even", lambda L, x: L.fft.irfft(x, dim=0)),
    ("hfft", lambda L, x: L.fft.hfft(x, n=8)),
    ("irfftn", lambda L, x: L.fft.irfftn(x, s=(5, 6))),
    ("hfft2", lambda L, x: L.fft.hfft2(x, norm="forward")),
    ("fftshift", lambda L, x: L.fft.fftshift(x)),
    ("stft", lambda L, x: L.stft(x.reshape(-1), 8, hop_length=3, return_complex=False,
                                 window=L.hann_window(8, dtype=x.dtype))),
    ("istft", lambda L, x: L.istft(L.stack([x[:, :3], x[:, 3:]], -1), 6, hop_length=2,
                                   window=L.hann_window(6, dtype=x.dtype) + 0.5)),
]


@pytest.mark.parametrize("name,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_torch_and_gradcheck(torch_ref, name, fn):
    a = np.random.default_rng(5).normal(size=(4, 6))

    def run(L):
        x = L.tensor(a, dtype=L.float64, requires_grad=True)
        out = fn(L, x)
        g = L.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)),
                     dtype=out.dtype)
        out.backward(g)
        return out, x.grad
    got, want = both(torch_ref, run)
    for a_, b_ in zip(got, want):
        np.testing.assert_allclose(a_.detach().numpy(), b_.detach().numpy(), rtol=1e-9, atol=1e-12)
    x = ampjit.tensor(a, dtype=ampjit.float64, requires_grad=True)
    assert ampjit.autograd.gradcheck(lambda t: fn(ampjit, t), (x,))


def test_namespace_has_every_public_name_of_torchs(torch_ref):
    names = {n for n in dir(torch_ref.fft) if not n.startswith("_")}
    internal = {"sys", "torch", "common_args", "factory_common_args"}  # torch/fft's own imports
    missing = sorted(n for n in names - internal if not hasattr(ampjit.fft, n))
    assert missing == []
    assert ampjit.fft.Tensor is ampjit.Tensor


@pytest.mark.parametrize("name,fn", GRAD_CASES[:5] + GRAD_CASES[6:],
                         ids=[c[0] for c in GRAD_CASES[:5] + GRAD_CASES[6:]])
def test_double_backward_matches_torch(torch_ref, name, fn):
    """The primitives' derivatives are made of the primitives: backward records, and its gradient
    with respect to the incoming gradient is torch's."""
    a = np.random.default_rng(7).normal(size=(4, 6))

    def run(L):
        x = L.tensor(a, dtype=L.float64, requires_grad=True)
        y = fn(L, x)
        v = L.tensor(np.linspace(-1.0, 1.0, y.numel()).reshape(tuple(y.shape)), dtype=L.float64,
                     requires_grad=True)
        (g,) = L.autograd.grad(y, x, v, create_graph=True)
        w = L.tensor(np.cos(np.arange(24.0)).reshape(4, 6), dtype=L.float64)
        (gv,) = L.autograd.grad((g * w).sum(), v)
        return gv
    got, want = both(torch_ref, run)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)
