"""torch.jit.freeze and optimize_for_inference (Note [Freezing] in script/passes/freeze.h): attributes
become constants, conv + eval batch norm fold, casts of frozen weights fold once per autocast state;
the frozen module gives the unfrozen one's results in both autocast semantics."""
import pytest

import ampjit as torch
from ampjit import nn
from ampjit.testing import FileCheck


class ConvBnNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 8, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(8)
        self.fc = nn.Linear(8, 4)
        self.scale = 2.0

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.relu(self.bn2(self.conv2(y))) * self.scale
        return self.fc(y.mean([2, 3]))


def _model():
    torch.manual_seed(0)
    m = ConvBnNet().eval()
    with torch.no_grad():
        for bn in (m.bn, m.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 1.5)
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.uniform_(-0.5, 0.5)
    return m


@pytest.mark.parametrize("semantics", ["torchscript", "eager"])
def test_frozen_gives_the_unfrozen_results(semantics):
    m = _model()
    scripted = torch.jit.script(m, autocast_semantics=semantics)
    frozen = torch.jit.freeze(scripted)
    x = torch.randn(2, 3, 9, 9)
    with torch.no_grad():
        torch.testing.assert_close(frozen(x), scripted(x), rtol=1e-5, atol=1e-5)
        with torch.autocast("cpu"):
            got, want = frozen(x), scripted(x)
    assert got.dtype is want.dtype is torch.bfloat16
    torch.testing.assert_close(got.float(), want.float(), rtol=0.03, atol=0.03)  # bf16: 2^-8 per rounding


def test_frozen_graph_has_constants_and_folded_batch_norms():
    frozen = torch.jit.freeze(torch.jit.script(_model()))
    g = str(frozen.graph)
    assert "prim::GetAttr" not in g
    assert "aten::batch_norm" not in g and g.count("aten::conv2d") == 2
    # the casts of the frozen weights fold at specialization: only the activations are cast
    x = torch.randn(1, 3, 5, 5)
    with torch.autocast("cpu"):
        frozen(x)
        opt = frozen.graph_for(x)
    FileCheck().check_count("aten::_autocast_to_reduced_precision", 3, exactly=True).run(opt)


class InplaceReluNet(ConvBnNet):
    """resnet's pattern: ReLU(inplace=True) writes each convolution's fresh result."""

    def forward(self, x):
        y = torch.relu_(self.bn(self.conv(x)))
        y = torch.relu_(self.bn2(self.conv2(y))) * self.scale
        return self.fc(y.mean([2, 3]))


def test_in_place_ops_on_fresh_results_leave_the_frozen_weights_folded():
    # Note [Writes to constants]: relu_ writes no constant, so the weight casts still fold once.
    m = _model()
    inplace = InplaceReluNet().eval()
    inplace.load_state_dict(m.state_dict())
    frozen = torch.jit.freeze(torch.jit.script(inplace))
    x = torch.randn(1, 3, 5, 5)
    with torch.no_grad(), torch.autocast("cpu"):
        got = frozen(x)
        want = m(x)
        opt = frozen.graph_for(x)
    FileCheck().check_count("aten::_autocast_to_reduced_precision", 3, exactly=True).run(opt)
    torch.testing.assert_close(got.float(), want.float(), rtol=0.03, atol=0.03)


def test_frozen_module_keeps_its_values_and_assigned_attributes():
    m = _model()
    frozen = torch.jit.freeze(torch.jit.script(m))
    x = torch.randn(1, 3, 5, 5)
    before = frozen(x)
    with torch.no_grad():
        m.fc.weight.mul_(3)  # the original changes; the frozen copy does not
    torch.testing.assert_close(frozen(x), before)

    class Counter(nn.Module):
        def __init__(self):
            super().__init__()
            self.calls = 0
            self.w = torch.ones(2)

        def forward(self, x):
            self.calls += 1
            return x * self.w + self.calls

    s = torch.jit.script(Counter().eval())
    f = torch.jit.freeze(s)
    assert "prim::SetAttr" in str(f.graph)  # an assigned attribute stays an attribute
    assert f(torch.zeros(2)).tolist() == [1.0, 1.0] and f(torch.zeros(2)).tolist() == [2.0, 2.0]


def test_freeze_checks_as_torch():
    m = _model()
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule as input"):
        torch.jit.freeze(m)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        torch.jit.freeze(torch.jit.script(m).train())
    opt = torch.jit.optimize_for_inference(torch.jit.script(m))
    assert "prim::GetAttr" not in str(opt.graph)
    assert torch.jit.optimize_for_inference(opt) is opt


# PyTorch 1.13's test_jit_freeze_autocast_basic and _constants (CUDA there; CPU autocast here).
class _Basic(nn.Module):
    def forward(self, x, y):
        with torch.cpu.amp.autocast():
            return torch.mm(x, y)


class _Constants(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = torch.rand((3, 4), dtype=torch.float)

    def forward(self, y):
        with torch.cpu.amp.autocast():
            return torch.mm(self.x, y)


def test_freeze_autocast_basic_as_torch():
    x, y = torch.rand(3, 4), torch.rand(4, 5)
    frozen = torch.jit.freeze(torch.jit.script(_Basic().eval()))
    FileCheck().check_count("aten::_autocast_to_reduced_precision", 2, True).run(frozen.graph)
    frozen(x, y)  # the runtime pass does not cast twice
    FileCheck().check_count("aten::_autocast_to_reduced_precision", 2, True).run(frozen.graph_for(x, y))


def test_freeze_autocast_constants_as_torch():
    y = torch.rand(4, 5)
    mod = _Constants().eval()
    frozen = torch.jit.freeze(torch.jit.script(mod))
    # freezing pre-casts the constant self.x: one cast left
    FileCheck().check_count("aten::_autocast_to_reduced_precision", 1, True).run(frozen.graph)
    out = frozen(y)
    FileCheck().check_count("aten::_autocast_to_reduced_precision", 1, True).run(frozen.graph_for(y))
    assert out.dtype is torch.bfloat16
    torch.testing.assert_close(out.float(), torch.mm(mod.x, y), rtol=0.02, atol=0.02)
