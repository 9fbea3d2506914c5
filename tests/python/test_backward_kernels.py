"""The backward kernels autograd calls when backward is not itself recorded, against torch 1.13 and
against autograd's composite formulas (which serve double backward): convolution backward through
oneDNN's backward primitives (Note [Convolution backward primitives] in kernels/cpu/onednn.cpp),
max pooling recorded as max_pool2d_with_indices and scattered back, gather and scatter_add."""
import numpy as np
import pytest

import ampjit
from test_autograd import assert_close, both

CONVS = [  # (input shape, out channels, kernel, stride, padding, dilation, groups)
    ((2, 3, 16, 16), 8, 3, 1, 1, 1, 1),
    ((2, 16, 9, 9), 32, 3, 2, 1, 1, 1),
    ((2, 8, 8, 8), 8, 3, 1, 1, 1, 8),  # depthwise
    ((2, 4, 10, 10), 6, 5, 2, 2, 2, 2),  # dilated, grouped
    ((1, 64, 7, 7), 64, 1, 1, 0, 1, 1),  # 1x1
    ((3, 12, 12), 4, 3, 1, 0, 1, 1),  # unbatched
]


def conv_grads(lib, x, w, b, up, args, dtype, channels_last, create_graph=False):
    _, _, k, s, p, d, g = args
    dt = getattr(lib, dtype)
    xt, wt, bt = (lib.from_numpy(a.copy()).to(dt) for a in (x, w, b))
    if channels_last:
        xt = xt.contiguous(memory_format=lib.channels_last)
    for t in (xt, wt, bt):
        t.requires_grad_()
    y = lib.nn.functional.conv2d(xt, wt, bt, s, p, d, g)
    return lib.autograd.grad((y.float() * lib.from_numpy(up)).sum(), (xt, wt, bt), create_graph=create_graph)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("channels_last", [False, True], ids=["rows", "channels_last"])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_convolution_backward_matches_torch(torch_ref, case, dtype, channels_last):
    args = CONVS[case]
    shape, oc, k, _, _, _, g = args
    if channels_last and len(shape) == 3:
        pytest.skip("channels-last is a layout of 4-D tensors")
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((oc, shape[-3] // g, k, k)).astype(np.float32)
    b = rng.standard_normal(oc).astype(np.float32)
    with ampjit.no_grad():
        out_shape = tuple(ampjit.nn.functional.conv2d(ampjit.from_numpy(x), ampjit.from_numpy(w), None,
                                                      *args[3:]).shape)
    up = rng.standard_normal(out_shape).astype(np.float32)
    ours, theirs = both(torch_ref, lambda lib: conv_grads(lib, x, w, b, up, args, dtype, channels_last))
    # float32: oneDNN's backward primitives in both libraries; bfloat16: rounded once, the same
    # primitives where the CPU has native bfloat16, widened to float32 here otherwise
    tol = 1e-5 if dtype == "float32" else 2e-2
    for a, t in zip(ours, theirs):
        scale = float(np.abs(t.float().numpy()).max())
        assert_close(a.float(), t.float(), rtol=0, atol=tol * scale)
    # the composite formula (what create_graph runs) gives the same gradients
    formula = conv_grads(ampjit, x, w, b, up, args, "float32", channels_last, create_graph=True)
    kernel = conv_grads(ampjit, x, w, b, up, args, "float32", channels_last)
    for a, t in zip(formula, kernel):
        assert_close(a, t, rtol=0, atol=1e-4 * float(np.abs(t.numpy()).max()))


POOLS = [  # (input shape, kernel, stride, padding, dilation, ceil_mode)
    ((2, 3, 9, 9), 3, 2, 0, 1, True),
    ((2, 3, 8, 8), 3, 2, 1, 1, False),
    ((1, 2, 10, 7), 2, 2, 0, 1, False),
    ((2, 2, 11, 11), 3, 2, 1, 2, True),
    ((3, 6, 6), 2, 1, 0, 1, False),
]


@pytest.mark.parametrize("case", range(len(POOLS)))
def test_max_pool_records_indices_and_is_twice_differentiable(torch_ref, case):
    shape, k, s, p, d, ceil = POOLS[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(shape)
    x[..., 0, 0] = x[..., 0, 1]  # a tie: the first in scan order takes the gradient
    x[..., 3, 3] = np.nan if case == 1 else x[..., 3, 3]  # a NaN: the result, and the gradient's place
    w = None

    def run(lib):
        nonlocal w
        t = lib.from_numpy(x.copy()).requires_grad_()
        y, idx = lib.nn.functional.max_pool2d(t, k, s, p, d, ceil, return_indices=True)
        if w is None:
            w = rng.standard_normal(tuple(y.shape))
        wt = lib.from_numpy(w.copy()).requires_grad_()
        z = lib.nn.functional.max_pool2d(t, k, s, p, d, ceil)
        (g,) = lib.autograd.grad((z * wt).sum(), t, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), wt)
        return y, idx, g, h, z.grad_fn.name()

    ours, theirs = both(torch_ref, run)
    for a, t in zip(ours[:4], theirs[:4]):
        np.testing.assert_array_equal(a.detach().numpy(), t.detach().numpy())
    assert ours[4] == theirs[4] == "MaxPool2DWithIndicesBackward0"


def test_avg_pool_is_twice_differentiable(torch_ref):
    x = np.random.default_rng(0).standard_normal((2, 3, 9, 9))
    w = np.random.default_rng(1).standard_normal((2, 3, 5, 5))

    def run(lib):
        t = lib.from_numpy(x.copy()).requires_grad_()
        wt = lib.from_numpy(w.copy()).requires_grad_()
        y = lib.nn.functional.avg_pool2d(t, 3, 2, 1, True, False)
        (g,) = lib.autograd.grad((y * wt).sum(), t, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), wt)
        return g, h
    (g, h), (tg, th) = both(torch_ref, run)
    assert_close(g, tg, rtol=1e-12, atol=1e-12)
    assert_close(h, th, rtol=1e-12, atol=1e-12)


def test_gather_and_scatter_add_gradients(torch_ref):
    rng = np.random.default_rng(0)
    t_np, s_np = rng.standard_normal((3, 5)), rng.standard_normal((3, 4))

    def run(lib):
        t = lib.from_numpy(t_np.copy()).requires_grad_()
        s = lib.from_numpy(s_np.copy()).requires_grad_()
        idx = lib.tensor([[0, 1, 1, 4], [2, 2, 0, 0], [4, 3, 2, 1]])
        y = t.gather(1, idx)
        z = lib.zeros(3, 5, dtype=lib.float64).scatter_add(1, idx, s)  # repeated indices add up
        loss = (y * y).sum() + (z * z * t).sum()
        (gt, gs) = lib.autograd.grad(loss, (t, s), create_graph=True)
        (hh,) = lib.autograd.grad((gt * gs.sum()).sum(), s)
        return z, gt, gs, hh
    ours, theirs = both(torch_ref, run)
    for a, t in zip(ours, theirs):
        assert_close(a, t, rtol=1e-12, atol=1e-12)


def test_scatter_add_checks_as_torch(torch_ref):
    from test_autograd import raises_same
    x = lambda lib: lib.zeros(3, 4)  # noqa: E731
    raises_same(torch_ref, lambda lib: x(lib).scatter_add(1, lib.tensor([[0, 1]] * 4), lib.ones(4, 2)))
    raises_same(torch_ref, lambda lib: x(lib).scatter_add(1, lib.tensor([[0, 1]]).int(), lib.ones(1, 2)))
    raises_same(torch_ref, lambda lib: x(lib).scatter_add(1, lib.tensor([[0, 1]]),
                                                         lib.ones(1, 2, dtype=lib.float64)))
    raises_same(torch_ref, lambda lib: x(lib).scatter_add(1, lib.tensor([[0, 1, 2, 3, 0]]), lib.ones(1, 4)))
    ours, theirs = both(torch_ref, lambda lib: lib.zeros(3).scatter_add(0, lib.tensor(1), lib.tensor(5.0)))
    assert_close(ours, theirs)


def _grads_to_second_order(lib, f, arrays, second):
    """f(lib, *leaves) -> y; y, its gradients against a fixed upstream, and (second) the gradients
    of the squared gradients' sum: every result copied out of the library."""
    ts = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    y = f(lib, *ts)
    w = lib.from_numpy(np.random.default_rng(9).standard_normal(tuple(y.shape)))
    gs = lib.autograd.grad((y * w).sum(), ts, create_graph=second, allow_unused=True)
    out = [y.detach().clone().numpy()] + [g.detach().clone().numpy() for g in gs if g is not None]
    if second:
        hs = lib.autograd.grad(sum((g * g).sum() for g in gs if g is not None), ts, allow_unused=True)
        out += [h.clone().numpy() for h in hs if h is not None]
    return out


_rng = np.random.default_rng(0)
_x = _rng.standard_normal((3, 4))
_zeros = _x.copy()
_zeros[0, 1] = _zeros[2, 2] = _zeros[2, 3] = 0.0
_ties = _x.copy()
_ties[1, 1], _ties[1, 2] = 3.0, -3.0  # two elements of the largest magnitude
DECLARED = [  # (name, f, inputs, twice differentiable in both libraries)
    *[("norm p={}".format(p), lambda lib, t, p=p: lib.norm(t, p), [_x], p != 0) for p in
      (0, 1, 1.5, 2, 3, 0.5, float("inf"))],
    *[("norm dim p={}".format(p), lambda lib, t, p=p: lib.norm(t, p, dim=1, keepdim=True), [_ties], p != 0)
      for p in (1, 3, float("inf"))],
    ("prod", lambda lib, t: t.prod(), [_x], True),
    ("prod one zero", lambda lib, t: t.prod(), [_zeros[:1]], True),
    ("prod zeros", lambda lib, t: t.prod(), [_zeros], False),  # torch's second derivative: none
    ("prod dim", lambda lib, t: t.prod(1), [_zeros], True),
    ("prod dim keepdim", lambda lib, t: t.prod(0, keepdim=True), [_zeros], True),
    ("cumprod", lambda lib, t: t.cumprod(1), [_x], True),
    ("cumprod zeros", lambda lib, t: t.cumprod(1), [_zeros], True),
    *[("cdist p={}".format(p), lambda lib, a, b, p=p: lib.cdist(a, b, p),
       [_rng.standard_normal((2, 3, 4)), _rng.standard_normal((2, 5, 4))], False)
      for p in (0, 1, 1.5, 2, 3, float("inf"))],
    ("fmod", lambda lib, a, b: lib.fmod(a, b), [_x * 3, _x[::-1].copy() + 0.1], True),
    ("remainder", lambda lib, a, b: lib.remainder(a, b), [_x * 3, _x[::-1].copy() + 0.1], True),
    ("atan2", lambda lib, a, b: lib.atan2(a, b), [_x, _x[::-1].copy()], True),
    ("clamp_min tensor", lambda lib, a, b: lib.clamp_min(a, b), [_x, _x[::-1].copy()], False),
    ("clamp_max tensor", lambda lib, a, b: lib.clamp_max(a, b), [_x, _x[::-1].copy()], False),
    ("addbmm", lambda lib, s, a, b: lib.addbmm(s, a, b, beta=0.5, alpha=2.0),
     [_rng.standard_normal((2, 5)), _rng.standard_normal((3, 2, 4)), _rng.standard_normal((3, 4, 5))], True),
    ("conv_transpose1d", lambda lib, a, b: lib.nn.functional.conv_transpose1d(a, b, None, 2, 1, 1),
     [_rng.standard_normal((2, 4, 7)), _rng.standard_normal((4, 3, 3))], True),
    ("conv_transpose2d", lambda lib, a, b, c: lib.nn.functional.conv_transpose2d(a, b, c, 2, 1, 1),
     [_rng.standard_normal((2, 4, 5, 5)), _rng.standard_normal((4, 3, 3, 3)), _rng.standard_normal(3)], True),
    ("conv_transpose2d groups dilation",
     lambda lib, a, b: lib.nn.functional.conv_transpose2d(a, b, None, 1, 0, 0, 2, 2),
     [_rng.standard_normal((2, 4, 5, 5)), _rng.standard_normal((4, 2, 3, 3))], True),
    ("conv_transpose3d", lambda lib, a, b: lib.nn.functional.conv_transpose3d(a, b, None, 2, 0),
     [_rng.standard_normal((1, 2, 3, 4, 3)), _rng.standard_normal((2, 3, 2, 2, 2))], True),
]


@pytest.mark.parametrize("case", DECLARED, ids=[c[0] for c in DECLARED])
def test_newly_declared_derivatives_match_torch_to_second_order(torch_ref, case):
    """prod (zeros included), cumprod (zeros included), every p-norm, cdist and the transposed
    convolutions, in float64, against torch 1.13: values, gradients and second derivatives."""
    _, f, arrays, second = case
    ours, theirs = both(torch_ref, lambda lib: _grads_to_second_order(lib, f, arrays, second))
    assert len(ours) == len(theirs)
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a, t, rtol=1e-10, atol=1e-12)


def test_transposed_convolution_kernel_path_matches_torch(torch_ref):
    """float32 plain backward of conv_transpose2d: its weight gradient through oneDNN's
    backward-weights primitive (input and output's gradient exchanged)."""
    arrays = [a.astype(np.float32) for a in (_rng.standard_normal((2, 4, 5, 5)), _rng.standard_normal((4, 3, 3, 3)),
                                             _rng.standard_normal(3))]
    f = lambda lib, a, b, c: lib.nn.functional.conv_transpose2d(a, b, c, 2, 1, 1)  # noqa: E731
    ours, theirs = both(torch_ref, lambda lib: _grads_to_second_order(lib, f, arrays, False))
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a, t, rtol=0, atol=1e-5 * np.abs(t).max())


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("layout", ["rows", "channels_last", "broadcast"])
def test_relu_backward_kernel_matches_torch(torch_ref, dtype, layout):
    """ReLU's backward on the CPU is aten::threshold_backward in one pass (operands of one dtype and
    dense layout), the mask product otherwise (an expanded gradient); both are torch's, and
    twice differentiable."""
    x = np.random.default_rng(0).standard_normal((2, 3, 5, 5)).astype(np.float32)
    x[0, 0, 0, :2] = 0.0  # ReLU passes no gradient at 0

    def run(lib):
        t = lib.from_numpy(x.copy()).to(getattr(lib, dtype))
        if layout == "channels_last":
            t = t.contiguous(memory_format=lib.channels_last)
        t.requires_grad_()
        y = lib.relu(t * 1)
        up = lib.from_numpy(x.copy()).to(y.dtype)
        loss = y.sum() if layout == "broadcast" else (y * up).sum()
        (g,) = lib.autograd.grad(loss, t, create_graph=dtype == "float64")
        if dtype != "float64":
            return [g]
        (h,) = lib.autograd.grad((g * g * t).sum(), t)
        return [g, h]
    ours, theirs = both(torch_ref, run)
    for a, t in zip(ours, theirs):
        np.testing.assert_array_equal(a.detach().float().numpy(), t.detach().float().numpy())
