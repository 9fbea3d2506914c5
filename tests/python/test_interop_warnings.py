"""The AutocastInteropWarnings of torchscript semantics: each fires where PyTorch 1.13 is silently
wrong (Note [Interop warnings of the JIT autocast pass], Note [Compiled functions called while
tracing]), at the user's line, and not in eager semantics or where nothing is lost."""
import inspect
import warnings

import pytest

import ampjit as torch
from ampjit import jit


@pytest.fixture(params=["torchscript", "eager"])
def semantics(request):
    prev = jit.set_autocast_semantics(request.param)
    try:
        yield request.param
    finally:
        jit.set_autocast_semantics(prev)


def interop_warnings(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = fn()
    return result, [x for x in w if issubclass(x.category, jit.AutocastInteropWarning)]


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, l in enumerate(lines) if text in l)


def inputs():
    torch.manual_seed(0)
    return torch.randn(4, 4), torch.randn(4, 4)


def traced_disable(a, b):
    with torch.autocast("cpu", enabled=False):
        return torch.mm(a, b) * 2.0


def test_script_calling_traced_disable(semantics):
    a, b = inputs()
    traced = jit.trace(traced_disable, (a, b))

    def caller(a, b):
        with torch.autocast("cpu", enabled=True):
            return traced(a, b)
    scripted = jit.script(caller)
    _, ws = interop_warnings(lambda: scripted(a, b))
    if semantics == "eager":
        assert ws == []
        return
    assert len(ws) == 1
    msg = str(ws[0].message)
    assert "is lost when script calls it" in msg
    assert "{}:{}".format(__file__, line_of(traced_disable, "enabled=False")) in msg
    assert ws[0].filename == __file__ and ws[0].lineno == line_of(caller, "return traced")
    # Nothing is lost without autocast around the call: no warning.
    plain = jit.script(lambda_free_caller(traced))
    assert interop_warnings(lambda: plain(a, b))[1] == []


def lambda_free_caller(traced):
    def plain_caller(a, b):
        return traced(a, b)
    return plain_caller


def test_traced_calling_script_under_autocast(semantics):
    a, b = inputs()

    def mm(a, b):
        return torch.mm(a, b)
    scripted = jit.script(mm)

    def tracee(a, b):
        with torch.autocast("cpu"):
            return scripted(a, b)
    traced, ws = interop_warnings(lambda: jit.trace(tracee, (a, b), check_trace=False))
    if semantics == "eager":
        assert ws == []
        assert traced(a, b).dtype == tracee(a, b).dtype == torch.bfloat16
        return
    assert len(ws) == 1
    assert "does not apply to the scripted function" in str(ws[0].message)
    assert "{}:{}".format(__file__, line_of(tracee, "torch.autocast")) in str(ws[0].message)
    assert ws[0].lineno == line_of(tracee, "return scripted")
    # PyTorch's result: the call runs without the region.
    assert traced(a, b).dtype == torch.float32
    # A call outside any region records nothing to warn about.
    _, quiet = interop_warnings(lambda: jit.trace(lambda_free_caller(scripted), (a, b), check_trace=False))
    assert quiet == []


def scripted_disable(a, b):
    with torch.autocast("cpu", enabled=False):
        return torch.mm(a, b)


def test_script_disable_under_eager_autocast(semantics):
    a, b = inputs()
    fn = jit.script(scripted_disable)
    with torch.autocast("cpu"):
        out, ws = interop_warnings(lambda: fn(a, b))
        again, ws2 = interop_warnings(lambda: fn(a, b))
    if semantics == "eager":
        assert out.dtype == torch.float32 and ws == []
        return
    assert out.dtype == torch.bfloat16  # as in PyTorch: the eager state wins
    assert len(ws) == 1 and ws2 == []  # once per function and eager state
    assert "does not disable eager autocast" in str(ws[0].message)
    assert ws[0].filename == __file__ and ws[0].lineno == line_of(scripted_disable, "enabled=False")
    # Without eager autocast the region disables nothing that was on: no warning.
    fresh = jit.script(scripted_disable, autocast_semantics="torchscript")
    assert interop_warnings(lambda: fresh(a, b))[1] == []
