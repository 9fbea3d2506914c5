"""Seed 000, "Mixing tracing and scripting autocast (script calling traced)": after tracing, the
autocast scope is stripped from the IR, so a traced `autocast(False)` is ignored by an autocast
that applies around the call. These rows are the traced half (what the trace records and how it
runs when called under autocast); the scripted caller's half arrives with the script compiler.
"""
import numpy as np

import ampjit as torch
from matrix import row


def same(got, want):
    return (got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
            and np.array_equal(got.to(torch.float64).numpy(), want.to(torch.float64).numpy()))


def kinds(fn):
    return [n[0] for n in fn.graph.nodes()]


def helper(a, b):
    with torch.autocast("cpu", enabled=False):
        return torch.mm(a, b)


def args():
    torch.manual_seed(0)
    return torch.randn(4, 4), torch.randn(4, 4)


@row("Mixing tracing and scripting autocast (script calling traced)",
     pytorch="The traced graph keeps no trace of a `with autocast(enabled=False)` region: called under "
             "autocast, its ops are autocast anyway (bfloat16 where eager gives float32).",
     torchscript="Same as PyTorch: no region in the graph (kept only as node metadata for the interop "
                 "warning); under autocast the disabled region's mm is bfloat16.",
     eager="The region is a prim::AutocastRegion node in the graph; the trace gives the eager result "
           "(float32) under every autocast state.")
def test_traced_autocast_disable_region(semantics):
    a, b = args()
    traced = torch.jit.trace(helper, (a, b))
    has_region = "prim::AutocastRegion" in kinds(traced)
    with torch.autocast("cpu"):
        got = traced(a, b)
        want = helper(a, b)
    assert want.dtype == torch.float32
    if semantics == "torchscript":
        assert not has_region
        assert got.dtype == torch.bfloat16
    else:
        assert has_region
        assert same(got, want)
    assert same(traced(a, b), helper(a, b))  # without autocast both semantics agree


@row("Mixing tracing and scripting autocast (script calling traced)",
     pytorch="A trace taken under autocast records the casts autocast made as aten::to with fixed "
             "dtypes and no scope: called later without autocast it still casts, and under another "
             "dtype it keeps the trace-time one.",
     torchscript="Same as PyTorch (casts baked in; tracing under autocast needs cache_enabled=False for "
                 "weights, as in PyTorch).",
     eager="The ops are recorded as called, without casts: the trace gives the eager result under the "
           "autocast state of each call.")
def test_trace_taken_under_autocast(semantics):
    def f(a, b):
        return torch.relu(torch.mm(a, b))

    a, b = args()
    with torch.autocast("cpu", cache_enabled=False):
        traced = torch.jit.trace(f, (a, b))
    casts = kinds(traced).count("aten::to")
    out = traced(a, b)
    if semantics == "torchscript":
        assert casts == 2
        assert out.dtype == torch.bfloat16  # cast although autocast is off now
    else:
        assert casts == 0
        assert same(out, f(a, b)) and out.dtype == torch.float32
        with torch.autocast("cpu"):
            assert same(traced(a, b), f(a, b))


def test_pytorch_column(torch_ref):
    """The PyTorch column of both rows, on the real PyTorch 1.13 (skipped where not installed)."""
    t = torch_ref
    t._C._jit_set_autocast_mode(True)

    def helper_t(a, b):
        with t.autocast("cpu", enabled=False):
            return t.mm(a, b)

    a, b = t.randn(4, 4), t.randn(4, 4)
    traced = t.jit.trace(helper_t, (a, b))
    assert "Enter" not in str(traced.graph) and "autocast" not in str(traced.graph)
    with t.autocast("cpu"):
        assert traced(a, b).dtype == t.bfloat16

    def f_t(a, b):
        return t.relu(t.mm(a, b))

    with t.autocast("cpu", cache_enabled=False):
        traced_f = t.jit.trace(f_t, (a, b))
    assert str(traced_f.graph).count("aten::to") == 2
    assert traced_f(a, b).dtype == t.bfloat16
