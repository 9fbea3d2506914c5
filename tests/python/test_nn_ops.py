"""The nn functional family against the real PyTorch 1.13: pooling (1-D, 3-D, adaptive, unpooling,
Lp), the padding modes, interpolation, unfold/fold, grid_sample/affine_grid, pixel_shuffle and
one_hot; eager, scripted and traced, forward and backward; and the layers over them (forward, repr
and scripted forward).

Float32 results are compared with rtol=1e-5, atol=1e-5; gradients in float64 with 1e-10.
"""
import numpy as np
import pytest

import ampjit
import ampjit.nn as nn
import ampjit.nn.functional as F

rng = np.random.default_rng(2024)


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def npy(t):
    return t.detach().numpy()


def _close(a, b, rtol=1e-5, atol=1e-5):
    if isinstance(a, (tuple, list)):
        assert isinstance(b, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol, atol)
        return
    a, b = npy(a), npy(b)
    assert a.shape == b.shape and str(a.dtype) == str(b.dtype), (a.shape, b.shape, a.dtype, b.dtype)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


X3 = randn(2, 3, 9)
X4 = randn(2, 3, 7, 8)
X5 = randn(1, 2, 5, 6, 7)
GRID = rng.uniform(-1.2, 1.2, (2, 5, 4, 2)).astype(np.float32)
COLS = randn(2, 12, 12)
THETA2, THETA3 = randn(2, 2, 3), randn(1, 3, 4)
SHUFFLE, UNSHUFFLE = randn(2, 8, 3, 4), randn(3, 2, 4, 6)

# (name, f(F, torch, T)): T makes a tensor of the library from a NumPy array.
CALLS = [
    ("max_pool1d", lambda F_, L, T: F_.max_pool1d(T(X3), 3, 2, 1, ceil_mode=True)),
    ("max_pool1d_indices", lambda F_, L, T: F_.max_pool1d(T(X3), 2, return_indices=True)),
    ("max_pool3d", lambda F_, L, T: F_.max_pool3d(T(X5), (2, 3, 2), (1, 2, 2), 1, ceil_mode=True)),
    ("max_pool3d_dilated", lambda F_, L, T: F_.max_pool3d(T(X5), 2, 1, 0, dilation=2, return_indices=True)),
    ("avg_pool1d", lambda F_, L, T: F_.avg_pool1d(T(X3), 4, 3, 2, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d", lambda F_, L, T: F_.avg_pool2d(T(X4), 3, 2, 1, ceil_mode=True, count_include_pad=False)),
    ("avg_pool2d_divisor", lambda F_, L, T: F_.avg_pool2d(T(X4), 3, 2, 1, True, True, 4)),
    ("avg_pool3d", lambda F_, L, T: F_.avg_pool3d(T(X5), (3, 2, 3), 2, 1, ceil_mode=True)),
    ("avg_pool3d_divisor", lambda F_, L, T: F_.avg_pool3d(T(X5), 2, 1, 1, False, False, 3)),
    ("adaptive_avg_pool1d", lambda F_, L, T: F_.adaptive_avg_pool1d(T(X3), 4)),
    ("adaptive_avg_pool3d", lambda F_, L, T: F_.adaptive_avg_pool3d(T(X5), (3, None, 4))),
    ("adaptive_max_pool1d", lambda F_, L, T: F_.adaptive_max_pool1d(T(X3), 5, return_indices=True)),
    ("adaptive_max_pool2d", lambda F_, L, T: F_.adaptive_max_pool2d(T(X4), (3, 5), return_indices=True)),
    ("adaptive_max_pool3d", lambda F_, L, T: F_.adaptive_max_pool3d(T(X5), 3)),
    ("max_unpool2d", lambda F_, L, T: F_.max_unpool2d(*F_.max_pool2d(T(X4), 2, return_indices=True), 2)),
    ("max_unpool1d", lambda F_, L, T: F_.max_unpool1d(*F_.max_pool1d(T(X3), 3, return_indices=True), 3,
                                                     output_size=[10])),
    ("max_unpool3d", lambda F_, L, T: F_.max_unpool3d(*F_.max_pool3d(T(X5), 2, return_indices=True), 2,
                                                     output_size=list(X5.shape[2:]))),
    ("lp_pool1d", lambda F_, L, T: F_.lp_pool1d(T(X3), 2, 3)),
    ("lp_pool2d", lambda F_, L, T: F_.lp_pool2d(T(X4), 3.0, 2, 1)),
    ("pad_reflect1d", lambda F_, L, T: F_.pad(T(X3), (3, 2), mode="reflect")),
    ("pad_reflect2d", lambda F_, L, T: F_.pad(T(X4), (2, 1, -1, 3), mode="reflect")),
    ("pad_reflect3d", lambda F_, L, T: F_.pad(T(X5), (1, 2, 3, 0, 2, 2), mode="reflect")),
    ("pad_replicate", lambda F_, L, T: F_.pad(T(X4), (4, 1, 0, 2), mode="replicate")),
    ("pad_replicate3d", lambda F_, L, T: F_.pad(T(X5), (1, 2, 3, 0, 2, 2), mode="replicate")),
    ("pad_circular", lambda F_, L, T: F_.pad(T(X4), (2, -1, 3, 1), mode="circular")),
    ("pad_constant_nd", lambda F_, L, T: L.constant_pad_nd(T(X4), (1, 2, -1, 3), 2.5)),
    ("interp_nearest", lambda F_, L, T: F_.interpolate(T(X4), scale_factor=1.7)),
    ("interp_nearest_exact", lambda F_, L, T: F_.interpolate(T(X4), size=(5, 11), mode="nearest-exact")),
    ("interp_linear", lambda F_, L, T: F_.interpolate(T(X3), scale_factor=2.5, mode="linear")),
    ("interp_bilinear", lambda F_, L, T: F_.interpolate(T(X4), size=(11, 5), mode="bilinear")),
    ("interp_bilinear_ac", lambda F_, L, T: F_.interpolate(T(X4), scale_factor=(1.5, 0.6), mode="bilinear",
                                                          align_corners=True)),
    ("interp_bilinear_recompute", lambda F_, L, T: F_.interpolate(T(X4), scale_factor=1.3, mode="bilinear",
                                                                 recompute_scale_factor=True)),
    ("interp_bicubic", lambda F_, L, T: F_.interpolate(T(X4), size=(9, 12), mode="bicubic")),
    ("interp_bicubic_ac", lambda F_, L, T: F_.interpolate(T(X4), scale_factor=0.7, mode="bicubic",
                                                         align_corners=True)),
    ("interp_trilinear", lambda F_, L, T: F_.interpolate(T(X5), scale_factor=(1.5, 1, 0.5), mode="trilinear")),
    ("interp_area", lambda F_, L, T: F_.interpolate(T(X4), size=(3, 5), mode="area")),
    ("upsample_nearest", lambda F_, L, T: F_.upsample_nearest(T(X4), scale_factor=2)),
    ("upsample_bilinear", lambda F_, L, T: F_.upsample_bilinear(T(X4), size=(10, 9))),
    ("unfold", lambda F_, L, T: F_.unfold(T(X4), (2, 3), dilation=(2, 1), padding=1, stride=(1, 2))),
    ("fold", lambda F_, L, T: F_.fold(T(COLS), (7, 7), (2, 3), padding=(0, 1), stride=2)),
    ("grid_sample", lambda F_, L, T: F_.grid_sample(T(X4), T(GRID), align_corners=False)),
    ("grid_sample_nearest", lambda F_, L, T: F_.grid_sample(T(X4), T(GRID), "nearest", "border", True)),
    ("grid_sample_bicubic", lambda F_, L, T: F_.grid_sample(T(X4), T(GRID), "bicubic", "reflection", False)),
    ("affine_grid", lambda F_, L, T: F_.affine_grid(T(THETA2), [2, 3, 4, 5], align_corners=False)),
    ("affine_grid3d", lambda F_, L, T: F_.affine_grid(T(THETA3), [1, 1, 3, 4, 2], align_corners=True)),
    ("pixel_shuffle", lambda F_, L, T: F_.pixel_shuffle(T(SHUFFLE), 2)),
    ("pixel_unshuffle", lambda F_, L, T: F_.pixel_unshuffle(T(UNSHUFFLE), 2)),
    ("one_hot", lambda F_, L, T: F_.one_hot(T(np.array([[0, 3], [2, 1]], dtype=np.int64)), 5)),
]


@pytest.mark.parametrize("name, call", CALLS, ids=[c[0] for c in CALLS])
def test_functional_matches_torch(torch_ref, name, call):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = call(F, ampjit, ampjit.from_numpy)
        want = call(torch_ref.nn.functional, torch_ref, torch_ref.from_numpy)
    _close(got, want)


# Gradients: float64, the same output gradient, against torch's; a few through ampjit's gradcheck.
GRADS = [
    ("max_pool3d", lambda F_, x: F_.max_pool3d(x, 2, 1, 1), (1, 2, 4, 5, 4)),
    ("avg_pool3d", lambda F_, x: F_.avg_pool3d(x, 3, 2, 1, True, False), (1, 2, 5, 6, 5)),
    ("adaptive_avg_pool3d", lambda F_, x: F_.adaptive_avg_pool3d(x, (2, 3, 5)), (1, 2, 5, 4, 7)),
    ("adaptive_max_pool2d", lambda F_, x: F_.adaptive_max_pool2d(x, (3, 4)), (2, 2, 5, 7)),
    ("max_pool1d", lambda F_, x: F_.max_pool1d(x, 3, 2, 1), (2, 3, 9)),
    ("avg_pool1d", lambda F_, x: F_.avg_pool1d(x, 3, 2, 1), (2, 3, 9)),
    ("pad_reflect", lambda F_, x: F_.pad(x, (2, 1, 3, 1), mode="reflect"), (2, 2, 5, 6)),
    ("pad_replicate", lambda F_, x: F_.pad(x, (2, 1, 3, 1), mode="replicate"), (2, 2, 5, 6)),
    ("pad_circular", lambda F_, x: F_.pad(x, (2, 1, 1, 0, 1, 1), mode="circular"), (1, 2, 3, 4, 5)),
    ("pad_constant", lambda F_, x: F_.pad(x, (2, -1, 1, 0), value=1.5), (2, 2, 5, 6)),
    ("bilinear", lambda F_, x: F_.interpolate(x, scale_factor=1.6, mode="bilinear"), (2, 2, 5, 6)),
    ("bicubic", lambda F_, x: F_.interpolate(x, size=(7, 3), mode="bicubic", align_corners=True), (1, 2, 5, 6)),
    ("trilinear", lambda F_, x: F_.interpolate(x, size=(3, 7, 4), mode="trilinear"), (1, 2, 4, 5, 6)),
    ("nearest", lambda F_, x: F_.interpolate(x, scale_factor=1.5), (2, 2, 5, 6)),
    ("unfold", lambda F_, x: F_.unfold(x, 3, padding=1, stride=2), (2, 2, 5, 6)),
    ("fold", lambda F_, x: F_.fold(x, (4, 5), 2, stride=1), (2, 8, 12)),
    ("max_unpool2d", lambda F_, x: F_.max_unpool2d(x, x.detach().abs().long() % 4, 2), (1, 2, 3, 3)),
]


@pytest.mark.parametrize("name, f, shape", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_match_torch(torch_ref, name, f, shape):
    x = randn(*shape, dtype=np.float64)
    a = ampjit.from_numpy(x.copy()).requires_grad_()
    t = torch_ref.from_numpy(x.copy()).requires_grad_()
    ya, yt = f(F, a), f(torch_ref.nn.functional, t)
    g = randn(*yt.shape, dtype=np.float64)
    (ya * ampjit.from_numpy(g)).sum().backward()
    (yt * torch_ref.from_numpy(g)).sum().backward()
    _close(a.grad, t.grad, 1e-10, 1e-10)


@pytest.mark.parametrize("name, f, shape", [g for g in GRADS if g[0] in (
    "avg_pool3d", "adaptive_avg_pool3d", "pad_reflect", "bicubic", "trilinear", "fold")], ids=lambda v: str(v))
def test_gradcheck(name, f, shape):
    x = ampjit.from_numpy(randn(*shape, dtype=np.float64)).requires_grad_()
    assert ampjit.autograd.gradcheck(lambda v: f(F, v), (x,))


def test_grid_sample_gradients_match_torch(torch_ref):
    x, grid = randn(2, 3, 5, 6, dtype=np.float64), GRID.astype(np.float64)
    for mode, padding in [("bilinear", "zeros"), ("bilinear", "reflection"), ("bicubic", "border"),
                          ("nearest", "zeros")]:
        grads = []
        for L in (ampjit, torch_ref):
            xi = L.from_numpy(x.copy()).requires_grad_()
            gi = L.from_numpy(grid.copy()).requires_grad_()
            L.nn.functional.grid_sample(xi, gi, mode, padding, align_corners=False).square().sum().backward()
            grads.append((xi.grad, gi.grad))
        _close(list(grads[0]), list(grads[1]), 1e-9, 1e-9)
    # 3-D: trilinear
    x5, g5 = randn(1, 2, 3, 4, 5, dtype=np.float64), rng.uniform(-1, 1, (1, 2, 3, 2, 3))
    grads = []
    for L in (ampjit, torch_ref):
        xi, gi = L.from_numpy(x5.copy()).requires_grad_(), L.from_numpy(g5.copy()).requires_grad_()
        L.nn.functional.grid_sample(xi, gi, align_corners=True).square().sum().backward()
        grads.append((xi.grad, gi.grad))
    _close(list(grads[0]), list(grads[1]), 1e-9, 1e-9)


SCRIPTED = '''
from typing import List, Tuple
import ampjit
import ampjit.nn.functional as F


def pools(x4: ampjit.Tensor, x5: ampjit.Tensor, x3: ampjit.Tensor) -> List[ampjit.Tensor]:
    a, i = F.max_pool3d(x5, 2, 1, 1, return_indices=True)
    b = F.avg_pool3d(x5, 3, 2, 1, ceil_mode=True, count_include_pad=False)
    c = F.adaptive_max_pool2d(x4, [3, 4])
    d = F.avg_pool1d(x3, 3, 2, 1)
    e = F.adaptive_avg_pool3d(x5, [2, 3, 4])
    f = F.max_pool1d(x3, 2)
    return [a, i, b, c, d, e, f]


def pads(x4: ampjit.Tensor) -> List[ampjit.Tensor]:
    return [F.pad(x4, [2, 1, 1, 3], mode="reflect"), F.pad(x4, [1, 1, 0, 2], mode="replicate"),
            F.pad(x4, [1, 2, 2, 1], mode="circular"), F.pad(x4, [1, 2], value=0.5)]


def resize(x4: ampjit.Tensor, x3: ampjit.Tensor) -> List[ampjit.Tensor]:
    return [F.interpolate(x4, size=[9, 5], mode="bilinear", align_corners=True),
            F.interpolate(x4, scale_factor=[1.5, 2.0]),
            F.interpolate(x4, scale_factor=0.6, mode="bicubic"),
            F.interpolate(x3, size=7, mode="linear"),
            F.interpolate(x4, size=[3, 4], mode="area")]


def patches(x4: ampjit.Tensor, grid: ampjit.Tensor) -> List[ampjit.Tensor]:
    cols = F.unfold(x4, [2, 3], padding=1)
    return [cols, F.fold(cols, [7, 8], [2, 3], padding=1),
            F.grid_sample(x4, grid, mode="bilinear", padding_mode="border", align_corners=False),
            F.pixel_shuffle(x4[:, :2].repeat(1, 2, 1, 1), 2)]
'''


def test_scripted_and_traced_functions_match_eager_and_torch(program_modules, torch_ref):
    mods = program_modules("nn_ops_programs", SCRIPTED)
    inputs = {"pools": (X4, X5, X3), "pads": (X4,), "resize": (X4, X3), "patches": (X4, GRID)}
    for fname, arrays in inputs.items():
        results = []
        for mod, lib in mods:
            fn = getattr(mod, fname)
            args = [lib.from_numpy(a.copy()) for a in arrays]
            results.append((lib, fn(*args), lib.jit.script(fn)(*args)))
        (_, eager, scripted), (_, t_eager, t_scripted) = results
        _close(scripted, eager, 0, 0)
        _close(eager, t_eager)
        _close(scripted, t_scripted)
    ampjit_mod = mods[0][0]
    for fname in ("resize", "pads", "pools"):
        fn = getattr(ampjit_mod, fname)
        args = [ampjit.from_numpy(a.copy()) for a in inputs[fname]]
        traced = ampjit.jit.trace(lambda *a: tuple(fn(*a)), tuple(args))
        _close(list(traced(*args)), fn(*args), 0, 0)


LAYERS = [
    ("MaxPool1d", lambda n: n.MaxPool1d(3, 2, 1, ceil_mode=True), X3),
    ("MaxPool3d", lambda n: n.MaxPool3d((2, 3, 2), stride=1, padding=1), X5),
    ("AvgPool1d", lambda n: n.AvgPool1d(3, 2, 1), X3),
    ("AvgPool3d", lambda n: n.AvgPool3d(3, 2, 1, ceil_mode=True, count_include_pad=False), X5),
    ("LPPool1d", lambda n: n.LPPool1d(2, 3, 2), X3),
    ("LPPool2d", lambda n: n.LPPool2d(1.5, (2, 3)), X4),
    ("AdaptiveAvgPool1d", lambda n: n.AdaptiveAvgPool1d(4), X3),
    ("AdaptiveAvgPool3d", lambda n: n.AdaptiveAvgPool3d((2, None, 3)), X5),
    ("AdaptiveMaxPool1d", lambda n: n.AdaptiveMaxPool1d(4), X3),
    ("AdaptiveMaxPool2d", lambda n: n.AdaptiveMaxPool2d((3, 5)), X4),
    ("AdaptiveMaxPool3d", lambda n: n.AdaptiveMaxPool3d(2), X5),
    ("ReflectionPad1d", lambda n: n.ReflectionPad1d((3, 1)), X3),
    ("ReflectionPad2d", lambda n: n.ReflectionPad2d(2), X4),
    ("ReflectionPad3d", lambda n: n.ReflectionPad3d((1, 2, 0, 1, 2, 1)), X5),
    ("ReplicationPad1d", lambda n: n.ReplicationPad1d(4), X3),
    ("ReplicationPad2d", lambda n: n.ReplicationPad2d((1, 0, 2, 3)), X4),
    ("ReplicationPad3d", lambda n: n.ReplicationPad3d(1), X5),
    ("ZeroPad2d", lambda n: n.ZeroPad2d((1, 2, 0, 1)), X4),
    ("ConstantPad1d", lambda n: n.ConstantPad1d(2, 3.5), X3),
    ("ConstantPad2d", lambda n: n.ConstantPad2d((1, 0, 2, 1), -1.0), X4),
    ("ConstantPad3d", lambda n: n.ConstantPad3d(1, 0.5), X5),
    ("PixelShuffle", lambda n: n.PixelShuffle(3), randn(1, 9, 2, 3)),
    ("PixelUnshuffle", lambda n: n.PixelUnshuffle(2), randn(1, 2, 4, 6)),
    ("ChannelShuffle", lambda n: n.ChannelShuffle(3), randn(2, 6, 3, 2)),
    ("Upsample", lambda n: n.Upsample(scale_factor=2, mode="nearest"), X4),
    ("Upsample_bilinear", lambda n: n.Upsample(size=(9, 10), mode="bilinear", align_corners=False), X4),
    ("Upsample_trilinear", lambda n: n.Upsample(scale_factor=1.5, mode="trilinear"), X5),
    ("UpsamplingNearest2d", lambda n: n.UpsamplingNearest2d(scale_factor=3), X4),
    ("UpsamplingBilinear2d", lambda n: n.UpsamplingBilinear2d((5, 4)), X4),
    ("Unfold", lambda n: n.Unfold((2, 3), dilation=2, padding=1, stride=(2, 1)), X4),
    ("Fold", lambda n: n.Fold((4, 5), 2, stride=1), randn(2, 8, 12)),
]


@pytest.mark.parametrize("name, make, x", LAYERS, ids=[c[0] for c in LAYERS])
def test_layers_forward_repr_and_script_match_torch(torch_ref, name, make, x):
    import warnings
    a, t = make(nn), make(torch_ref.nn)
    assert repr(a) == repr(t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = a(ampjit.from_numpy(x.copy()))
        want = t(torch_ref.from_numpy(x.copy()))
        _close(got, want)
        try:  # torch cannot script every configuration (an adaptive output size with None)
            torch_ref.jit.script(t)
        except RuntimeError:
            return
        _close(ampjit.jit.script(a)(ampjit.from_numpy(x.copy())), got, 0, 0)


def test_unpool_layers_and_max_pool_indices_match_torch(torch_ref):
    for dims, x in ((1, X3), (2, X4), (3, randn(1, 2, 4, 6, 6))):
        out = []
        for L in (ampjit, torch_ref):
            pool = getattr(L.nn, "MaxPool{}d".format(dims))(2, return_indices=True)
            unpool = getattr(L.nn, "MaxUnpool{}d".format(dims))(2)
            y, i = pool(L.from_numpy(x.copy()))
            out.append((repr(unpool), unpool(y, i), unpool(y, i, output_size=list(x.shape[2:]))))
        assert out[0][0] == out[1][0]
        _close(list(out[0][1:]), list(out[1][1:]))


@pytest.mark.parametrize("call", [
    lambda F_, L, T: F_.interpolate(T(X4), size=(3, 4), scale_factor=2.0),
    lambda F_, L, T: F_.interpolate(T(X4)),
    lambda F_, L, T: F_.interpolate(T(X4), size=[3, 4, 5]),
    lambda F_, L, T: F_.interpolate(T(X4), scale_factor=2.0, align_corners=True),
    lambda F_, L, T: F_.interpolate(T(X4), size=(3, 4), recompute_scale_factor=True),
    lambda F_, L, T: F_.interpolate(T(X4), scale_factor=2.0, mode="linear"),
    lambda F_, L, T: F_.interpolate(T(X3), scale_factor=2.0, mode="bicubic"),
    lambda F_, L, T: F_.interpolate(T(X4), scale_factor=2.0, mode="bilinear", antialias=True),
    lambda F_, L, T: F_.grid_sample(T(X4), T(GRID), mode="cubic"),
    lambda F_, L, T: F_.affine_grid(T(randn(2, 2, 3)), [2, 3, 4], align_corners=False),
    lambda F_, L, T: F_.pad(T(X4), (1, 1), mode="reflect", value=2.0),
    lambda F_, L, T: F_.pad(T(randn(4)), (1, 1), mode="replicate"),
    lambda F_, L, T: F_.one_hot(T(np.array([0, 4])), 3),
    lambda F_, L, T: F_.one_hot(T(np.array([-1, 2])), 3),
    lambda F_, L, T: F_.pixel_shuffle(T(randn(1, 6, 2, 2)), 2),
    lambda F_, L, T: F_.max_unpool2d(*F_.max_pool2d(T(X4), 2, return_indices=True), 2, output_size=(9, 9)),
])
def test_errors_match_torch(torch_ref, call):
    def outcome(F_, L, T):
        try:
            call(F_, L, T)
        except NotImplementedError as e:
            # ampjit's antialias=True is not implemented; torch's is: only the class is compared then
            return ("NotImplementedError", None)
        except Exception as e:  # noqa: BLE001 -- the class and message are what is compared
            return (type(e).__name__, str(e).splitlines()[0])
        return ("no error", None)
    got = outcome(F, ampjit, ampjit.from_numpy)
    want = outcome(torch_ref.nn.functional, torch_ref, torch_ref.from_numpy)
    if got[0] == "NotImplementedError" and want[0] == "no error":
        return
    assert got == want


def test_interpolation_loop_and_recorded_composite_agree():
    """On the CPU, a resize autograd does not record runs one loop per dimension; a recorded one runs
    the index_selects its gradient comes from (Note [Separable interpolation]): the same values."""
    x = ampjit.from_numpy(X4.copy())
    for kw in ({"scale_factor": 1.7, "mode": "bilinear"}, {"size": (9, 5), "mode": "bicubic", "align_corners": True}):
        plain = F.interpolate(x, **kw)
        recorded = F.interpolate(x.detach().requires_grad_(), **kw)
        assert recorded.grad_fn is not None
        _close(recorded, plain, 1e-6, 1e-6)


@pytest.mark.parametrize("name, f, shape", [g for g in GRADS if g[0] in (
    "pad_reflect", "bilinear", "avg_pool3d", "adaptive_avg_pool3d", "unfold", "max_pool3d")], ids=lambda v: str(v))
def test_double_backward_matches_torch(torch_ref, name, f, shape):
    """The gradient of sum(grad(f(x)) * v): padding and interpolation through their index_selects,
    the pools and unfold through their backward ops' own derivatives."""
    x = randn(*shape, dtype=np.float64)
    out = []
    for L in (ampjit, torch_ref):
        xi = L.from_numpy(x.copy()).requires_grad_()
        y = f(L.nn.functional, xi)
        g = L.from_numpy(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        (gx,) = L.autograd.grad((y * y * g).sum(), xi, create_graph=True)
        (ggx,) = L.autograd.grad((gx * gx).sum(), xi)
        out.append(ggx)
    _close(out[0], out[1], 1e-9, 1e-9)
