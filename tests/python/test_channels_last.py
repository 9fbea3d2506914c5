"""Channels-last tensors (Note [Channels-last tensors] in runtime/layout.h), against torch 1.13: the
ops that keep the layout give torch's strides and values, the rest give torch's values; a network
converted with module.to(memory_format=channels_last) gives the row-major network's results, eager,
scripted, traced and frozen, in float32 and under CPU autocast."""
import numpy as np
import pytest

import ampjit
from ampjit import nn

RNG = np.random.default_rng(0)


def _pair(torch_ref, *shape):
    x = RNG.standard_normal(shape).astype(np.float32)
    return ampjit.from_numpy(x.copy()), torch_ref.from_numpy(x.copy())


def _cl(lib, t):
    return t.contiguous(memory_format=lib.channels_last)


def _same(got, want, tol=1e-5):
    assert tuple(got.shape) == tuple(want.shape)
    assert got.stride() == want.stride(), (got.stride(), want.stride())
    np.testing.assert_allclose(got.float().numpy(), want.float().detach().numpy(), rtol=tol, atol=tol)


# Each case: (name, fn(lib, x) on a channels-last x of shape [2, 8, 6, 5]).
CASES = [
    ("relu", lambda m, x: m.relu(x)),
    ("relu_", lambda m, x: m.relu_(x.clone())),
    ("add", lambda m, x: x + x * 2.0),
    ("add_row_major", lambda m, x: x + x.contiguous()),
    ("mul_broadcast_scale", lambda m, x: m.sigmoid(x.mean((2, 3), keepdim=True)) * x),  # squeeze-excitation
    ("sigmoid", lambda m, x: m.sigmoid(x)),
    ("silu", lambda m, x: m.nn.functional.silu(x)),
    ("gelu", lambda m, x: m.nn.functional.gelu(x)),
    ("exp", lambda m, x: m.exp(x)),
    ("hardtanh", lambda m, x: m.nn.functional.hardtanh(x, 0.0, 6.0)),
    ("max_pool2d", lambda m, x: m.nn.functional.max_pool2d(x, 3, 2, 1)),
    ("max_pool2d_dilated_ceil", lambda m, x: m.nn.functional.max_pool2d(x, 2, 2, 1, dilation=2, ceil_mode=True)),
    ("batch_norm_eval", lambda m, x: m.nn.functional.batch_norm(
        x, m.zeros(8) + 0.1, m.ones(8) * 2.0, m.ones(8) * 0.5, m.zeros(8) + 0.2, False)),
    ("adaptive_avg_pool2d", lambda m, x: m.nn.functional.adaptive_avg_pool2d(x, 1)),
    ("conv2d", lambda m, x: m.nn.functional.conv2d(
        x, m.ones(4, 8, 3, 3) * 0.05, m.ones(4) * 0.1, padding=1)),
    ("conv2d_depthwise", lambda m, x: m.nn.functional.conv2d(x, m.ones(8, 1, 3, 3) * 0.1, groups=8)),
    ("conv2d_1x1_strided", lambda m, x: m.nn.functional.conv2d(x, m.ones(16, 8, 1, 1) * 0.1, stride=2)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_channels_last_ops_give_torchs_strides_and_values(torch_ref, name, fn):
    a, t = _pair(torch_ref, 2, 8, 6, 5)
    a, t = _cl(ampjit, a), _cl(torch_ref, t)
    assert a.stride() == t.stride() == (240, 1, 40, 8)
    with torch_ref.no_grad():
        want = fn(torch_ref, t)
    _same(fn(ampjit, a), want, tol=1e-5)


def test_bfloat16_convolution_keeps_the_layout_under_autocast(torch_ref):
    a, t = _pair(torch_ref, 2, 8, 6, 5)
    w = RNG.standard_normal((4, 8, 3, 3)).astype(np.float32) * 0.2
    with ampjit.autocast("cpu"):
        got = ampjit.nn.functional.conv2d(_cl(ampjit, a), ampjit.from_numpy(w.copy()), padding=1)
    with torch_ref.autocast("cpu"), torch_ref.no_grad():
        want = torch_ref.nn.functional.conv2d(_cl(torch_ref, t), torch_ref.from_numpy(w.copy()), padding=1)
    assert got.dtype is ampjit.bfloat16
    _same(got, want, tol=0.05)  # bf16 output: 2^-8 per rounding


class Block(nn.Module):
    """A resnet bottleneck: conv-bn-relu twice, conv-bn, the residual add, an in-place ReLU."""

    def __init__(self, c=16):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(c)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(c)
        self.conv3 = nn.Conv2d(c, c, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(c)
        self.relu = nn.ReLU(inplace=True)

    def forward(self, x):
        y = self.relu(self.bn1(self.conv1(x)))
        y = self.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return self.relu(y + x)


def _block():
    ampjit.manual_seed(0)
    m = Block().eval()
    with ampjit.no_grad():
        for bn in (m.bn1, m.bn2, m.bn3):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
    return m


@pytest.mark.parametrize("variant", ["eager", "script", "trace", "frozen"])
@pytest.mark.parametrize("bf16", [False, True], ids=["f32", "bf16"])
def test_a_channels_last_network_gives_the_row_major_results(variant, bf16):
    rows = _block()
    cl = _block().to(memory_format=ampjit.channels_last)
    assert cl.conv2.weight.is_contiguous(memory_format=ampjit.channels_last)
    x = ampjit.randn(2, 16, 9, 7)
    xc = _cl(ampjit, x)
    if variant == "script":
        fn = ampjit.jit.script(cl)
    elif variant == "frozen":
        fn = ampjit.jit.freeze(ampjit.jit.script(cl))
    elif variant == "trace":
        fn = ampjit.jit.trace(cl, (xc,))
    else:
        fn = cl
    with ampjit.no_grad(), ampjit.autocast("cpu", enabled=bf16):
        want = rows(x)
        got = fn(xc)
        again = fn(xc)  # a frozen weight's packed copy serves the second call
    assert got.is_contiguous(memory_format=ampjit.channels_last)
    tol = 0.05 if bf16 else 1e-5
    np.testing.assert_allclose(got.float().numpy(), want.float().numpy(), rtol=tol, atol=tol)
    np.testing.assert_array_equal(again.float().numpy(), got.float().numpy())
