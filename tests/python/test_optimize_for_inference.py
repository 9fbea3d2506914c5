"""torch.jit.optimize_for_inference (Note [Inference layouts] in script/passes/inference.h): frozen
convolution chains run channels-last, converted once at the first convolution and back to row-major
where a use needs the original strides; the optimized module returns the frozen one's results and
strides, in float32 and under CPU autocast, in both autocast semantics."""
import pytest

import ampjit as torch
from ampjit import nn
from ampjit.testing import FileCheck


class Chain(nn.Module):
    """Three convolutions with batch norms, an in-place ReLU, a residual add, a squeeze-excitation
    scale (broadcast mul), max pooling and a view of the last activation."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.se = nn.Conv2d(8, 8, 1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        y = torch.relu_(self.bn1(self.conv1(x)))
        y = self.bn2(self.conv2(y)) + y
        scale = torch.sigmoid(self.se(y.mean([2, 3], keepdim=True)))
        y = self.pool(y * scale)
        return self.fc(y.view(y.size(0), -1)), y


def _model(cls=Chain):
    torch.manual_seed(0)
    m = cls().eval()
    with torch.no_grad():
        for mod in m.modules():
            if isinstance(mod, nn.BatchNorm2d):
                mod.running_mean.uniform_(-0.5, 0.5)
                mod.running_var.uniform_(0.5, 1.5)
    return m


def test_the_chain_runs_channels_last_and_converts_back_where_needed():
    opt = torch.jit.optimize_for_inference(torch.jit.script(_model()))
    g = str(opt.graph)
    # one conversion, at the first convolution; the squeeze-excitation's [N, C, 1, 1] mean is
    # row-major, so the 1x1 convolution converts its (tiny) input too
    FileCheck().check("ampjit::_to_channels_last").check("ampjit::_conv2d_relu").check("aten::conv2d") \
        .check("ampjit::_to_channels_last").check("aten::conv2d").run(g)
    assert g.count("ampjit::_to_channels_last") == 2
    # Note [Fused convolutions]: the first convolution's in-place ReLU is its post-op
    assert g.count("ampjit::_conv2d_relu") == 1 and "aten::relu" not in g
    # the view and the returned pooled activation read row-major copies: one conversion
    assert g.count("aten::contiguous") == 1
    FileCheck().check("aten::contiguous").check("aten::view").run(g)


@pytest.mark.parametrize("semantics", ["torchscript", "eager"])
@pytest.mark.parametrize("bf16", [False, True], ids=["f32", "bf16"])
def test_optimized_gives_the_frozen_results_and_strides(semantics, bf16):
    m = _model()
    frozen = torch.jit.freeze(torch.jit.script(m, autocast_semantics=semantics))
    opt = torch.jit.optimize_for_inference(torch.jit.script(m, autocast_semantics=semantics))
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad(), torch.autocast("cpu", enabled=bf16):
        want = frozen(x)
        got = opt(x)
        again = opt(x)
    tol = 0.05 if bf16 else 1e-5
    for g, w, a in zip(got, want, again):
        assert g.dtype is w.dtype and g.stride() == w.stride() and g.is_contiguous()
        torch.testing.assert_close(g.float(), w.float(), rtol=tol, atol=tol)
        assert g.equal(a)


def test_fused_weights_are_cast_once_under_autocast():
    # Note [Fused convolutions]: the JIT autocast pass casts _conv2d_relu as conv2d, so the casts
    # of its frozen weight fold: only activations are cast, as in the frozen graph.
    m = _model()
    frozen = torch.jit.freeze(torch.jit.script(m))
    opt = torch.jit.optimize_for_inference(torch.jit.script(m))
    x = torch.randn(1, 3, 8, 8)
    with torch.no_grad(), torch.autocast("cpu"):
        frozen(x)
        opt(x)
        want, got = str(frozen.graph_for(x)), str(opt.graph_for(x))
    assert "ampjit::_conv2d_relu" in got
    n = want.count("aten::_autocast_to_reduced_precision")
    FileCheck().check_count("aten::_autocast_to_reduced_precision", n, exactly=True).run(got)


def test_an_unbatched_input_stays_as_it_is():
    class Three(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.Sequential(*[nn.Conv2d(4, 4, 3, padding=1) for _ in range(3)])

        def forward(self, x):
            return self.convs(x)

    m = _model(Three)
    opt = torch.jit.optimize_for_inference(torch.jit.script(m))
    assert "ampjit::_to_channels_last" in str(opt.graph)
    with torch.no_grad():
        for x in (torch.randn(4, 6, 5), torch.randn(2, 4, 6, 5)):
            got = opt(x)
            torch.testing.assert_close(got, m(x), rtol=1e-5, atol=1e-5)
            assert got.is_contiguous()


def test_fewer_than_three_convolutions_are_left_row_major():
    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 4, 3)
            self.b = nn.Conv2d(4, 4, 3)

        def forward(self, x):
            return self.b(torch.relu(self.a(x)))

    opt = torch.jit.optimize_for_inference(torch.jit.script(_model(Two)))
    g = str(opt.graph)
    assert "ampjit::_to_channels_last" not in g and "aten::contiguous" not in g


def test_control_flow_and_containers_read_row_major_values():
    class Branchy(Chain):
        def forward(self, x):
            y = self.conv2(self.conv2(self.conv1(x)))
            if bool(y.sum() > 0):
                z = y.view(-1)
            else:
                z = y.reshape(-1) * 2.0
            return [y, z]

    m = _model(Branchy)
    opt = torch.jit.optimize_for_inference(torch.jit.script(m))
    x = torch.randn(1, 3, 6, 6)
    with torch.no_grad():
        got, want = opt(x), torch.jit.freeze(torch.jit.script(m))(x)
    for g, w in zip(got, want):
        assert g.stride() == w.stride()
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_a_branch_that_passes_the_value_through_keeps_the_layout():
    # torchvision's stochastic_depth: an If that returns its input or raises.
    class Checked(Chain):
        def forward(self, x):
            y = self.conv2(self.conv2(self.conv1(x)))
            if x.dim() == 4:
                z = y
            else:
                raise ValueError("a batched input is expected")
            return self.conv2(z)

    m = _model(Checked)
    opt = torch.jit.optimize_for_inference(torch.jit.script(m))
    g = str(opt.graph)
    assert g.count("ampjit::_to_channels_last") == 1  # only the input: z stays channels-last
    assert g.count("aten::contiguous") == 1  # only the returned result
    x = torch.randn(2, 3, 6, 6)
    with torch.no_grad():
        got, want = opt(x), torch.jit.freeze(torch.jit.script(m))(x)
    assert got.stride() == want.stride()
    torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


def test_optimize_for_inference_checks_and_optimizes_in_place():
    with pytest.raises(RuntimeError, match="optimize_for_inference expects a ScriptModule as input"):
        torch.jit.optimize_for_inference(_model())
    frozen = torch.jit.freeze(torch.jit.script(_model()))
    opt = torch.jit.optimize_for_inference(frozen)
    assert opt is frozen and "ampjit::_to_channels_last" in str(opt.graph)
    g = str(opt.graph)
    assert torch.jit.optimize_for_inference(opt) is opt and str(opt.graph) == g  # once


def test_scripted_channels_last_contiguous_and_its_trace():
    @torch.jit.script
    def to_cl(x):
        return x.contiguous(memory_format=torch.channels_last)

    x = torch.randn(2, 3, 4, 5)
    y = to_cl(x)
    assert y.stride() == (60, 1, 15, 3) and y.equal(x)
    assert to_cl(y).data_ptr() == y.data_ptr()  # already channels-last: itself
    with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last format"):
        to_cl(torch.randn(3, 4, 5))
    traced = torch.jit.trace(lambda t: t.contiguous(memory_format=torch.channels_last) * 2.0, (x,))
    FileCheck().check("aten::contiguous").check("aten::mul").run(str(traced.graph))
    assert traced(x).stride() == (60, 1, 15, 3)
