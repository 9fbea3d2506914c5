"""Seed 000, "Mixing tracing and scripting autocast (script calling traced)": after tracing, the
autocast scope is stripped from the IR, so a traced `autocast(False)` is ignored by an autocast
that applies around the call. These rows are the traced half (what the trace records and how it
runs when called under autocast); the scripted caller's half arrives with the script compiler.
"""
import numpy as np
import pytest

import ampjit as torch
import programs
from harness import EagerTorch, Expect, Warn, check, observe
from matrix import row

SECTION = "Mixing tracing and scripting autocast (script calling traced)"
IS_LOST = "is lost when script calls it"


def same(got, want):
    return (got.dtype == want.dtype and tuple(got.shape) == tuple(want.shape)
            and np.array_equal(got.to(torch.float64).numpy(), want.to(torch.float64).numpy()))


def kinds(fn):
    return [n[0] for n in fn.graph._node_tuples()]


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
                 "warning); under autocast the disabled region's mm is bfloat16, and an "
                 "AutocastInteropWarning points at that mm.",
     eager="The region is a prim::AutocastRegion node in the graph; the trace gives the eager result "
           "(float32) under every autocast state.")
def test_traced_autocast_disable_region(semantics, request):
    a, b = args()
    traced = torch.jit.trace(helper, (a, b))
    has_region = "prim::AutocastRegion" in kinds(traced)
    with torch.autocast("cpu"):
        if semantics == "torchscript":
            with pytest.warns(torch.jit.AutocastInteropWarning, match="is lost"):
                got = traced(a, b)
        else:
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
    # The same program through the harness: PyTorch's column, and the eager run (programs.py).
    check(request, semantics, Expect("bfloat16", facts={"regions": 0}, warns=[Warn(IS_LOST, at="return torch.mm(a, b)")]),
          eager=Expect("float32", facts={"regions": 1}))


@row("Mixing tracing and scripting autocast (script calling traced)",
     pytorch="A trace taken under autocast records the casts autocast made as aten::to with fixed "
             "dtypes and no scope: called later without autocast it still casts, and under another "
             "dtype it keeps the trace-time one.",
     torchscript="Same as PyTorch (casts baked in; tracing under autocast needs cache_enabled=False for "
                 "weights, as in PyTorch).",
     eager="The ops are recorded as called, without casts: the trace gives the eager result under the "
           "autocast state of each call.")
def test_trace_taken_under_autocast(semantics, request):
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
    check(request, semantics, Expect("bfloat16", facts={"casts": 2}), eager=Expect("float32", facts={"casts": 0}))


@row(SECTION,
     pytorch="Seed example: a traced helper with `autocast(enabled=False)` (mm * 2.0) called from a scripted "
             "autocast region: mm runs in bfloat16 and the JIT promote of `* 2.0` makes it float32: float32 "
             "with bfloat16-rounded values, silently (\"no way to emit a diagnostic\").",
     torchscript="Same values, plus an AutocastInteropWarning `... is lost when script calls it` at the "
                 "scripted call, naming the traced `with` line.",
     eager="The traced region is kept: mm in float32, equal to eager.")
def test_sct_seed_example(semantics, request):
    got, ref = check(request, semantics, Expect("float32", warns=[Warn(IS_LOST, at="return traced(a, b)")]),
                     eager=Expect("float32"))
    if semantics == "torchscript":  # the values are those of a bfloat16 mm: not the eager ones
        eager_run = observe(programs.sct_seed_example, EagerTorch(torch))
        assert not np.array_equal(got.leaves[0].values, eager_run.leaves[0].values)
        a, b = (x.bfloat16() for x in programs.mats(torch))
        assert np.array_equal(got.leaves[0].values, (torch.mm(a, b).float() * 2.0).to(torch.float64).numpy())


@row(SECTION,
     pytorch="The traced `autocast(enabled=False)` mm called from a scripted autocast region is bfloat16 "
             "(eager: float32), silently.",
     torchscript="Same bfloat16, plus the AutocastInteropWarning `is lost when script calls it` at the "
                 "scripted call.",
     eager="float32, equal to eager.")
def test_sct_traced_disable_is_lost(semantics, request):
    check(request, semantics, Expect("bfloat16", warns=[Warn(IS_LOST, at="return traced(a, b)")]),
          eager=Expect("float32"))


@row(SECTION,
     pytorch="torch's test_script_and_tracing: a traced plain mm called from a scripted autocast region "
             "is bfloat16.",
     torchscript="Same, no warning (the trace has no region to lose).",
     eager="Same, equal to eager.")
def test_sct_traced_without_regions(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(SECTION,
     pytorch="The traced `autocast(enabled=False)` helper called from a script that does not autocast: "
             "float32.",
     torchscript="Same, no warning (nothing autocasts the traced ops).",
     eager="Same, equal to eager.")
def test_sct_caller_without_autocast(semantics, request):
    check(request, semantics, Expect("float32"))


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
