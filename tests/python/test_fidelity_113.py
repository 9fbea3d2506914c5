"""torch 1.13 fidelity in the default `torch-1.13` profile and torchscript semantics (issue 15,
item 5), each against torch 1.13 itself: CPU autocast with float16/float64, what `with autocast()
as ac` binds, out= returning the very `out`, an autocast decorator on a scripted forward, and
F.nll_loss under CPU autocast."""
import warnings

import pytest

import ampjit as torch
import ampjit.nn as nn


@pytest.mark.parametrize("dtype", ["float16", "float64"])
def test_cpu_autocast_with_another_dtype_warns_then_raises_on_enter(dtype, torch_ref):
    for L in (torch_ref, torch):
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported. "
                                             "Disabling autocast."):
            region = L.autocast("cpu", dtype=getattr(L, dtype))
        with pytest.raises(RuntimeError, match="Currently, AutocastCPU only support Bfloat16 as the "
                                               "autocast_cpu_dtype"):
            with region:
                pass
        assert not L.is_autocast_cpu_enabled()
    assert torch.get_autocast_cpu_dtype() == torch.bfloat16


def test_with_autocast_as_binds_none(torch_ref):
    for L in (torch_ref, torch):
        with L.autocast("cpu") as ac:
            assert ac is None
        with L.cpu.amp.autocast() as ac:
            assert ac is None


def test_out_returns_the_out_object(torch_ref):
    for L in (torch_ref, torch):
        out = L.empty(3)
        assert L.add(L.ones(3), L.ones(3), out=out) is out
        assert out.tolist() == [2.0, 2.0, 2.0]


class Decorated(nn.Module):
    @torch.autocast("cpu")
    def forward(self, x):
        return torch.mm(x, x)


DECORATED = """
import torch
class Decorated(torch.nn.Module):
    @torch.autocast("cpu")
    def forward(self, x):
        return torch.mm(x, x)
jit_result = str(torch.jit.script(Decorated())(torch.ones(2, 2)).dtype)
"""


def test_autocast_decorator_on_a_scripted_forward_is_ignored_with_a_warning(torch_ref, import_source):
    import inspect
    x = torch.ones(2, 2)
    m = Decorated()
    assert m(x).dtype == torch.bfloat16  # Python applies it
    line = inspect.getsourcelines(Decorated.forward)[1]
    with pytest.warns(torch.jit.AutocastInteropWarning, match="decorator of a scripted module's method is ignored") as w:
        scripted = torch.jit.script(m)
    assert any(r.lineno == line for r in w.list), [(r.filename, r.lineno) for r in w.list]
    assert scripted(x).dtype == torch.float32  # as torch 1.13's scripted module: float32

    assert import_source("torch_program", DECORATED).jit_result == "torch.float32"  # torch 1.13 ignores it too

    eager = torch.jit.script(Decorated(), autocast_semantics="eager")
    assert eager(x).dtype == torch.bfloat16  # eager semantics applies the decorator


def test_nll_loss_under_cpu_autocast_is_float32(torch_ref):
    for L in (torch_ref, torch):
        logp = L.nn.functional.log_softmax(L.randn(3, 4), 1).to(L.bfloat16)
        with L.autocast("cpu"):
            loss = L.nn.functional.nll_loss(logp, L.tensor([0, 1, 2]))
            loss_nd = L.nn.functional.nll_loss(logp.reshape(1, 3, 4).transpose(1, 2), L.tensor([[0, 1, 2]]))
        assert loss.dtype == L.float32 and loss_nd.dtype == L.float32
