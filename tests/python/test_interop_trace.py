"""Tracing in the two autocast semantics (interop/ in C++; Notes [Autocast semantics] and
[Eager-semantics tracing]).

In eager semantics a trace records the ops as the user called them and every `with autocast(...)`
region entered while tracing as a prim::AutocastRegion node, so that calling the trace equals
running the Python function eagerly, bit for bit, under every eager autocast state at call time
(issue 6's invariant). In torchscript semantics (the default) nothing changes: casts are baked in
and regions are metadata only (tests/python/test_trace.py).
"""
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ampjit as torch
import ampjit.nn as nn
from ampjit import _C, jit


# ---- Helpers -------------------------------------------------------------------------------------

@pytest.fixture
def eager_semantics():
    prev = jit.set_autocast_semantics("eager")
    yield
    jit.set_autocast_semantics(prev)


@pytest.fixture(autouse=True)
def restore_semantics():
    prev = jit.get_autocast_semantics()
    yield
    jit.set_autocast_semantics(prev)
    assert not torch.is_autocast_cpu_enabled()


# Eager autocast states a call can be made under: (name, profile, dtype or None for off). CPU
# float16 exists in the torch-2 profile only (torch 1.13 accepts only bfloat16 on CPU).
STATES = [("off", "torch-1.13", None), ("cpu-bf16", "torch-1.13", torch.bfloat16),
          ("cpu-bf16-torch2", "torch-2", torch.bfloat16), ("cpu-f16-torch2", "torch-2", torch.float16)]


class Under:
    """Runs code under one eager state: the profile set, and autocast entered when not off."""

    def __init__(self, state):
        self.name, self.profile, self.dtype = state

    def __enter__(self):
        self.prev_profile = torch.amp.get_autocast_profile()
        torch.amp.set_autocast_profile(self.profile)
        self.ac = torch.autocast("cpu", dtype=self.dtype) if self.dtype is not None else None
        if self.ac:
            self.ac.__enter__()
        return self

    def __exit__(self, *exc):
        if self.ac:
            self.ac.__exit__(*exc)
        torch.amp.set_autocast_profile(self.prev_profile)
        return False


def flat(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def assert_same(got, want, what=""):
    got, want = flat(got), flat(want)
    assert len(got) == len(want), what
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, "{} output {}: {} != {}".format(what, i, g.dtype, w.dtype)
        assert tuple(g.shape) == tuple(w.shape), what
        assert np.array_equal(g.detach().to(torch.float64).numpy(), w.detach().to(torch.float64).numpy()), \
            "{} output {}: values differ".format(what, i)


def kinds(fn):
    return [n[0] for n in fn.graph._node_tuples()]


def inputs(seed=0, n=2, shape=(4, 4)):
    torch.manual_seed(seed)
    return tuple(torch.randn(*shape) for _ in range(n))


# ---- Programs ------------------------------------------------------------------------------------

def inner_disable(a, b):
    x = torch.mm(a, b)
    with torch.autocast("cpu", enabled=False):
        y = torch.mm(a, b) * 2.0
    return x, y, torch.relu(y) + x


def nested(a, b):
    with torch.autocast("cpu", dtype=torch.bfloat16):
        x = torch.mm(a, b)
        with torch.autocast("cpu", enabled=False):
            y = torch.mm(x.float(), b)
        z = torch.mm(y, b)
    w = torch.mm(z.float(), a)
    return x, y, z, w


def plain(a, b):
    return torch.relu(torch.mm(a, b)) + a, torch.log_softmax(torch.mm(a, b), 1), torch.mm(a, b)


def inplace_and_lifted(a, b):
    c = a.clone()
    with torch.autocast("cpu", enabled=False):
        c.add_(torch.mm(a, b))        # c is rebound inside the region
        d = torch.mm(c, b)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            e = torch.mm(d, b)        # used two regions out
    return torch.mm(c, e.float()), d + 1, e


PROGRAMS = [inner_disable, nested, plain, inplace_and_lifted]


# ---- Eager semantics: the invariant ----------------------------------------------------------------

@pytest.mark.parametrize("program", PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("trace_state", STATES, ids=lambda s: s[0])
def test_eager_trace_equals_eager_under_every_call_state(program, trace_state):
    args = inputs()
    with Under(trace_state):
        traced = jit.trace(program, args, autocast_semantics="eager")
    assert traced._autocast_semantics == "eager"
    for call_state in STATES:
        with Under(call_state):
            assert_same(traced(*args), program(*args), "{} -> {}".format(trace_state[0], call_state[0]))


def test_eager_trace_records_regions_not_casts(eager_semantics):
    args = inputs()
    with torch.autocast("cpu"):
        traced = jit.trace(nested, args)
    ks = kinds(traced)
    assert ks.count("prim::AutocastRegion") == 2
    # Only the two .float() the user wrote are conversions; autocast's casts are not recorded.
    assert ks.count("aten::to") == 2
    g = str(traced.graph)
    assert 'prim::AutocastRegion[device_type="cpu", dtype=15, enabled=1, cache_enabled=1]()' in g
    assert 'prim::AutocastRegion[device_type="cpu", dtype=15, enabled=0, cache_enabled=1]()' in g
    # The region's source location is the `with` line.
    line = nested.__code__.co_firstlineno + 1
    assert "# {}:{}:0".format(__file__, line) in traced.graph.str(True)
    assert 'with torch.autocast("cpu", dtype=torch.bfloat16, enabled=True, cache_enabled=True):' in traced.code
    assert 'with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False, cache_enabled=True):' in traced.code


def test_eager_trace_round_trips(eager_semantics):
    for program in PROGRAMS:
        traced = jit.trace(program, inputs())
        text = traced.graph.str(True)
        assert str(_C._parse_graph(text).str(True)) == text


def test_autocast_around_the_trace_call_leaves_nothing_in_the_graph(eager_semantics):
    args = inputs()
    with torch.autocast("cpu"):
        traced = jit.trace(plain, args)
    ks = kinds(traced)
    assert "prim::AutocastRegion" not in ks and "aten::to" not in ks
    # Called outside autocast it is float32, as plain() is; inside, bfloat16 where eager casts.
    assert_same(traced(*args), plain(*args))
    with torch.autocast("cpu"):
        assert_same(traced(*args), plain(*args))
        assert traced(*args)[2].dtype == torch.bfloat16


def test_eager_trace_of_a_module_shares_weights_across_regions(eager_semantics):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)
            self.out = nn.Linear(4, 2)

        def forward(self, x):
            with torch.autocast("cpu", enabled=False):
                y = self.lin(x)
            return self.out(self.lin(y).float())

    m = M()
    x = torch.randn(3, 4)
    # The weight cache needs no cache_enabled=False: autocast's casts never reach the tracer.
    with torch.autocast("cpu"):
        traced = jit.trace(m, x)
    for state in STATES:
        with Under(state):
            assert_same(traced(x), m(x), state[0])


def test_a_traced_function_calling_another_trace_keeps_its_regions(eager_semantics):
    inner = jit.trace(inner_disable, inputs())

    def outer(a, b):
        x, y, z = inner(a, b)
        return torch.mm(x, y) + z

    args = inputs()
    traced = jit.trace(outer, args)
    # The inner trace is one call (Note [Compiled functions called while tracing]); its regions
    # are in its graph and come back when it is inlined.
    assert "prim::CallFunction" in kinds(traced)
    assert "prim::AutocastRegion" in [n[0] for n in traced.inlined_graph._node_tuples()]
    for state in STATES:
        with Under(state):
            assert_same(traced(*args), outer(*args), state[0])


def test_an_exception_inside_a_traced_region_restores_the_state(eager_semantics):
    traced = jit.trace(inner_disable, inputs())
    bad = (torch.randn(2, 3), torch.randn(2, 3))
    for state in STATES:
        with Under(state):
            before = (torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype())
            with pytest.raises(RuntimeError, match="mm"):
                traced(*bad)
            assert (torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()) == before
    assert not torch.is_autocast_cpu_enabled()


def test_trace_check_passes_in_eager_semantics(eager_semantics):
    with warnings.catch_warnings():
        warnings.simplefilter("error", jit.TracerWarning)
        with torch.autocast("cpu"):
            jit.trace(inner_disable, inputs(), check_inputs=[inputs(1), inputs(2)])


# ---- Torchscript semantics keeps today's behavior ----------------------------------------------------

def test_torchscript_semantics_bakes_casts_and_strips_regions():
    assert jit.get_autocast_semantics() == "torchscript"
    args = inputs()
    with torch.autocast("cpu", cache_enabled=False):
        traced = jit.trace(plain, args, check_trace=False)
        assert traced._autocast_semantics == "torchscript"
    ks = kinds(traced)
    assert "aten::to" in ks and "prim::AutocastRegion" not in ks
    assert traced(*args)[2].dtype == torch.bfloat16  # cast although autocast is off now
    t2 = jit.trace(inner_disable, args)
    assert "prim::AutocastRegion" not in kinds(t2)


# ---- Per-function vs global settings -------------------------------------------------------------

def test_the_argument_beats_the_global_setting_and_the_trace_is_pinned():
    args = inputs()
    jit.set_autocast_semantics("eager")
    with torch.autocast("cpu", cache_enabled=False):
        ts = jit.trace(plain, args, autocast_semantics="torchscript", check_trace=False)
    assert ts._autocast_semantics == "torchscript" and "aten::to" in kinds(ts)
    jit.set_autocast_semantics("torchscript")
    eg = jit.trace(inner_disable, args, autocast_semantics="eager")
    assert eg._autocast_semantics == "eager" and "prim::AutocastRegion" in kinds(eg)
    # None: the global setting at trace time, kept afterwards.
    jit.set_autocast_semantics("eager")
    pinned = jit.trace(inner_disable, args)
    jit.set_autocast_semantics("torchscript")
    assert pinned._autocast_semantics == "eager"
    with torch.autocast("cpu"):
        assert_same(pinned(*args), inner_disable(*args))


def test_per_function_setting_can_be_changed_and_cleared():
    args = inputs()
    traced = jit.trace(plain, args, autocast_semantics="torchscript")
    traced._set_autocast_semantics(None)
    assert traced._autocast_semantics is None
    # Unset: the global setting at each call: the JIT autocast pass runs in torchscript semantics
    # only; in eager semantics the trace gives what eager gives.
    with torch.autocast("cpu"):
        jit.set_autocast_semantics("eager")
        assert_same(traced(*args), plain(*args))
        assert "_autocast_to_" not in str(traced.graph_for(*args))
        jit.set_autocast_semantics("torchscript")
        assert "_autocast_to_" in str(traced.graph_for(*args))
    with pytest.raises(ValueError, match="'torchscript' or 'eager'"):
        traced._set_autocast_semantics("jit")


def test_set_returns_the_previous_and_get_reads_it():
    assert jit.set_autocast_semantics("eager") == "torchscript"
    assert jit.get_autocast_semantics() == "eager"
    assert jit.set_autocast_semantics("torchscript") == "eager"
    assert jit.get_autocast_semantics() == "torchscript"


@pytest.mark.parametrize("bad", ["Eager", "script", "", None, 1, True])
def test_bad_values_name_the_allowed_ones(bad):
    with pytest.raises(ValueError, match=r"expected 'torchscript' or 'eager', got"):
        jit.set_autocast_semantics(bad)
    with pytest.raises(ValueError, match=r"autocast_semantics: expected 'torchscript' or 'eager', got"):
        jit.trace(plain, inputs(), autocast_semantics=bad if bad is not None else "none")
    assert jit.get_autocast_semantics() == "torchscript"


def _run_python(code, env_value):
    env = dict(os.environ)
    if env_value is None:
        env.pop("AMPJIT_AUTOCAST_SEMANTICS", None)
    else:
        env["AMPJIT_AUTOCAST_SEMANTICS"] = env_value
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("value,want", [(None, "torchscript"), ("eager", "eager"), ("torchscript", "torchscript")])
def test_environment_variable(value, want):
    r = _run_python("import ampjit.jit as j; print(j.get_autocast_semantics())", value)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == want


def test_malformed_environment_variable_is_an_error_at_first_use():
    code = ("import ampjit, ampjit.jit as j\n"
            "try:\n    j.get_autocast_semantics()\nexcept ValueError as e:\n    print('ValueError:', e)\n"
            "print(j.set_autocast_semantics('eager'), j.get_autocast_semantics())\n")
    r = _run_python(code, "fast")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert lines[0] == ("ValueError: AMPJIT_AUTOCAST_SEMANTICS: expected 'torchscript' or 'eager', got 'fast'")
    assert lines[1] == "torchscript eager"


# ---- The warning channel -------------------------------------------------------------------------

def test_interop_warning_is_a_user_warning_with_the_source_location():
    assert issubclass(jit.AutocastInteropWarning, UserWarning)
    with pytest.warns(jit.AutocastInteropWarning, match="traced autocast") as rec:
        _C._interop_warn_for_testing("AutocastInteropWarning", "the traced autocast(False) is lost", "/x/model.py", 12)
    assert rec[0].filename == "/x/model.py" and rec[0].lineno == 12
    with pytest.warns(UserWarning) as rec:
        _C._interop_warn_for_testing("UserWarning", "plain", "", 0)
    assert rec[0].category is UserWarning


def test_interop_warning_filters_apply():
    with warnings.catch_warnings():
        warnings.simplefilter("error", jit.AutocastInteropWarning)
        with pytest.raises(jit.AutocastInteropWarning, match="as error"):
            _C._interop_warn_for_testing("AutocastInteropWarning", "as error", "/x/m.py", 3)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("default")
        for _ in range(3):
            _C._interop_warn_for_testing("AutocastInteropWarning", "once per location", "/x/m.py", 4)
    assert len(rec) == 1
