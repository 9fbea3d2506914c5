"""The differential property test of issue 6: in `eager` autocast semantics, scripted and traced
code gives what the same Python code gives when run eagerly, under every eager autocast state.

Each program of program_gen.py (seeded; its source is written to a file and imported, so script
reads real source) runs:
  - eagerly, pure Python (the reference): its pre-scripted / pre-traced helpers stay Python;
  - eagerly with its helpers compiled (eager -> script and eager -> trace calls);
  - scripted (`jit.script(main)`, plain helpers compiled recursively);
  - traced, once per value of `flag` (a trace takes tensors only), four ways: the pure-Python main
    and the main with compiled helpers (trace -> script, trace -> trace), each traced outside
    autocast and inside `torch.autocast("cpu", dtype=D)` (D = bfloat16, or float16 where the
    profile allows it on CPU);
each called under every eager autocast state at CALL time: off, `torch.autocast("cpu")`
(bfloat16) and `torch.autocast("cpu", dtype=torch.float16)` (a disabled region, with PyTorch's
UserWarning, in the torch-1.13 profile; float16 autocast in torch-2), and with flag True and False.
Half of the programs run in profile torch-1.13, half in torch-2 with per-op overrides that give CPU
ops the fp32_set_opt_dtype, fp32_append_dtype and promote policies (program_gen.CONFIGS). Half pin
the semantics per function (`autocast_semantics="eager"` with the process-wide setting left at
torchscript), half set it process-wide.

Equality is exact: the same output structure and dtypes, and the same values bit for bit (NaNs
equal, signs of zeros equal), for float32 and reduced-precision results alike, since every variant
runs the same kernels on the same inputs in the same order. No tolerance has been needed.
Each call must also leave the caller's autocast state (enabled, dtype) as it found it, and no
AutocastInteropWarning may fire in eager semantics (nothing there differs from eager).

In `torchscript` semantics the same programs are only run, never compared: each step (import with
the helpers compiled, script(main), the calls, tracing and calling traces) either works or fails
with one of torch's documented diagnostics (the limitation matrix: the @autocast decorator, a non-constant
`enabled`, `with autocast() as`), each only where the program has that construct; or, where
float16 meets bfloat16, or when a trace (casts baked in, regions stripped) is called, directly or
as a pre-traced helper, with the dtype error TorchScript's casts lead to (TORCHSCRIPT_DTYPE_ERRORS).
The caller's autocast state is restored after every step, failed or not.

CI runs N_CI programs from SEED_CI (about 10 s on 2 cores). A larger sweep (environment):
    AMPJIT_PROPERTY_N=<programs> AMPJIT_PROPERTY_SEED=<first seed>   the sweep
    AMPJIT_PROPERTY_KNOWN_BUGS=1   also generate what hits the open bugs below (program_gen)
One program reproduces with AMPJIT_PROPERTY_SEED=<its seed> AMPJIT_PROPERTY_N=1; a failure prints
its source, seed and every mismatch.

Larger run (recorded when the test was written; build of 7923d2b, Release, 2 cores):
    AMPJIT_PROPERTY_N=10000 AMPJIT_PROPERTY_SEED=100000 OMP_NUM_THREADS=2 \
        PYTHONPATH=build/python /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/conformance/test_property.py
  -> 10005 passed, 3 xfailed in 234 s (684 s when the machine was shared with other builds). In
     eager semantics every one of the 10000 programs gives exactly the eager result in every
     variant, call state and flag. (The first such run failed one program, seed 109592: a
     torchscript-semantics dtype error from a pre-traced helper that calls a scripted one under
     its decorator region, the limitation matrix's "traced calling script"; accepted since, see calls_trace.)
  With AMPJIT_PROPERTY_KNOWN_BUGS=1 and N=1000 (28 s): 59 fail; with their dtype-less
  torch.autocast("cpu") regions given dtype=torch.bfloat16, 48 pass (the two open default-dtype
  bugs below: 42 in traces only, 6 in script too) and 11 cannot be checked that way (eager rejects
  them then).

The regression tests at the end are the bugs found while writing this test, minimized. An open
one is named test_bug_* and marked xfail(strict=True): when it is fixed the test starts failing,
the mark must go, and with it program_gen's workaround (an op template's `bug` tag, the dtype= that
_Gen.region adds). The nested re-entry one is outside what the generator produces (see
program_gen's docstring).
"""
import contextlib
import os
import traceback
import warnings

import numpy as np
import pytest

import ampjit as torch
import program_gen

N_CI = 150
SEED_CI = 20240601

N = int(os.environ.get("AMPJIT_PROPERTY_N", N_CI))
SEED = int(os.environ.get("AMPJIT_PROPERTY_SEED", SEED_CI))
KNOWN_BUGS = os.environ.get("AMPJIT_PROPERTY_KNOWN_BUGS", "") not in ("", "0")

# The eager autocast states at call time.
CALL_STATES = (
    ("off", contextlib.nullcontext),
    ("autocast(cpu)", lambda: torch.autocast("cpu")),
    ("autocast(cpu, float16)", lambda: torch.autocast("cpu", dtype=torch.float16)),
)

def call_states(prog):
    """CALL_STATES without the float16 one where the profile has no CPU float16 (torch 1.13 raises
    entering it)."""
    return [s for s in CALL_STATES if "float16" not in s[0] or prog.config.cpu_float16]


# torch's diagnostics for what TorchScript does not support (the limitation matrix, docs/limitations.md), each with the program_gen
# features that may draw it; anything else is a failure.
DOCUMENTED = {
    "@autocast() decorator is not supported in script mode": {"decorator_plain", "decorator_scripted"},
    "Autocast _enabled argument must be a constant": {"runtime_enabled"},
    "`with autocast() as ...` is not supported": {"as"},
}
# What TorchScript's JIT autocast pass does differently from eager, as PyTorch's: it casts only
# float32 inputs to the region's lower-precision dtype (aten::_autocast_to_reduced_precision), so a
# bfloat16 value under a float16 region (or float16 under bfloat16) reaches a dtype-strict op as is,
# which rejects the mix. Eager autocast casts every eligible input. And script applies a float16 CPU
# region that eager disables in the torch-1.13 profile (torch 1.13's autocast skips its dtype check
# when scripting). Accepted in torchscript semantics from programs where float16 meets bfloat16.
TORCHSCRIPT_DTYPE_ERRORS = (
    "same dtype",                   # mm/addmm/bmm: "expected m1 and m2 to have the same dtype", ...
    "should be the same",           # conv: "Input type (...) and weight type (...) should be the same"
    "Input dtypes must be the same",  # baddbmm
    "expected scalar type",
    # then the eager dispatcher, still autocasting under the caller's state, meets the mix in a
    # promote op, and rejects it as eager autocast does
    "Unexpected floating ScalarType in at::autocast::prioritize",
)


# ---- Comparison -------------------------------------------------------------------------------------

def _flat(out):
    return list(out) if isinstance(out, tuple) else [out]


def difference(got, want):
    """None when `got` equals `want` exactly (structure, dtypes, shapes, bits), else what differs."""
    g, w = _flat(got), _flat(want)
    if len(g) != len(w) or isinstance(got, tuple) != isinstance(want, tuple):
        return "output structure: got {} values, want {}".format(len(g), len(w))
    for i, (a, b) in enumerate(zip(g, w)):
        if not isinstance(a, torch.Tensor):
            return "output {}: got a {}, want a Tensor".format(i, type(a).__name__)
        if a.dtype != b.dtype:
            return "output {}: dtype {}, want {}".format(i, a.dtype, b.dtype)
        if tuple(a.shape) != tuple(b.shape):
            return "output {}: shape {}, want {}".format(i, tuple(a.shape), tuple(b.shape))
        x, y = a.to(torch.float64).numpy(), b.to(torch.float64).numpy()
        nan = np.isnan(x) | np.isnan(y)
        if not (np.array_equal(x, y, equal_nan=True) and np.array_equal(np.signbit(x[~nan]), np.signbit(y[~nan]))):
            with np.errstate(invalid="ignore"):
                diff = np.nanmax(np.abs(x - y)) if not nan.all() else float("nan")
            return "output {} ({}): values differ, max |got - want| = {!r}, {} of {} elements".format(
                i, a.dtype, diff, int(np.sum(~((x == y) | (np.isnan(x) & np.isnan(y))))), x.size)
    return None


def autocast_state():
    return torch.is_autocast_cpu_enabled(), torch.get_autocast_cpu_dtype()


# ---- Running one program -------------------------------------------------------------------------------

class Report:
    """The mismatches of one program; raises with the program and how to reproduce it."""

    def __init__(self, prog):
        self.prog = prog
        self.problems = []

    def add(self, what):
        self.problems.append(what)

    def check(self):
        if not self.problems:
            return
        shown = self.problems[:12]
        more = len(self.problems) - len(shown)
        p = self.prog
        pytest.fail("program seed {} (attempt {}, config {}): {} problem(s)\n  {}{}\n\n"
                    "reproduce: {}AMPJIT_PROPERTY_SEED={} AMPJIT_PROPERTY_N=1 python3 -m pytest "
                    "tests/conformance/test_property.py\n---- program ----\n{}".format(
                        p.seed, p.attempt, p.config.name, len(self.problems), "\n  ".join(shown),
                        "\n  ... {} more".format(more) if more else "",
                        "AMPJIT_PROPERTY_KNOWN_BUGS=1 " if KNOWN_BUGS else "", p.seed, p.source),
                    pytrace=False)


def _exc(e):
    return "{}: {}".format(type(e).__name__, str(e).strip().splitlines()[0] if str(e).strip() else "")


def trace_dtype(prog):
    """The autocast dtype of the second trace of each kind (float16 where the profile has it on CPU)."""
    if prog.config.cpu_float16 and prog.seed % 3 == 0:
        return torch.float16
    return torch.bfloat16


def run_eager_semantics(prog, report):
    """Every variant under every call state and flag equals the eager reference (module docstring)."""
    pinned = prog.seed % 2 == 0
    mode = "pinned autocast_semantics='eager'" if pinned else "process-wide eager"
    prev = torch.jit.set_autocast_semantics("torchscript" if pinned else "eager")
    try:
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            _run_eager_semantics(prog, report, "eager" if pinned else None, mode)
        for r in rec:
            if issubclass(r.category, torch.jit.AutocastInteropWarning):
                report.add("[{}] AutocastInteropWarning in eager semantics ({}:{}): {}".format(
                    mode, r.filename, r.lineno, r.message))
    finally:
        torch.jit.set_autocast_semantics(prev)


def _run_eager_semantics(prog, report, kw, mode):
    x, w = prog.make_args()
    ref = prog.load(reference=True)
    try:
        jit = prog.load(reference=False, semantics=kw)
        scripted = torch.jit.script(jit.main, autocast_semantics=kw)
    except Exception as e:
        report.add("[{}] compiling: {}\n{}".format(mode, _exc(e), traceback.format_exc(limit=-3)))
        return
    variants = {flag: [("eager main, compiled helpers", lambda f=flag: jit.main(x, w, f)),
                       ("script", lambda f=flag: scripted(x, w, f))] for flag in (True, False)}
    tdtype = trace_dtype(prog)
    for flag in (True, False):
        for src_name, mod in (("python main", ref), ("main with compiled helpers", jit)):
            for tstate_name, tstate in (("off", contextlib.nullcontext),
                                        ("autocast(cpu, {})".format(str(tdtype)[6:]),
                                         lambda: torch.autocast("cpu", dtype=tdtype))):
                name = "trace of {} (traced under {})".format(src_name, tstate_name)
                try:
                    with tstate():
                        t = torch.jit.trace(lambda a, b, f=flag, m=mod: m.main(a, b, f), (x, w),
                                            check_trace=False, autocast_semantics=kw)
                except Exception as e:
                    report.add("[{}] {}, flag={}: tracing raised {}".format(mode, name, flag, _exc(e)))
                    continue
                variants[flag].append((name, lambda t=t: t(x, w)))
    for state_name, state in call_states(prog):
        for flag in (True, False):
            before = autocast_state()
            try:
                with state():
                    want = ref.main(x, w, flag)
            except Exception as e:  # generate_valid makes programs eager accepts
                report.add("GENERATOR BUG: eager raised under {}, flag={}: {}".format(state_name, flag, _exc(e)))
                continue
            for name, fn in variants[flag]:
                where = "[{}] {}, called under {}, flag={}".format(mode, name, state_name, flag)
                try:
                    with state():
                        got = fn()
                except Exception as e:
                    report.add("{}: raised {} (eager gives {})".format(
                        where, _exc(e), [str(t.dtype) for t in _flat(want)]))
                    continue
                finally:
                    if autocast_state() != before:
                        report.add("{}: autocast state {} after the call, {} before".format(
                            where, autocast_state(), before))
                        torch.set_autocast_cpu_enabled(before[0])
                        torch.set_autocast_cpu_dtype(before[1])
                d = difference(got, want)
                if d:
                    report.add("{}: {}".format(where, d))


def run_torchscript_semantics(prog, report):
    """Each step works or fails with a documented diagnostic; returns the diagnostics seen."""
    seen = []
    prev = torch.jit.set_autocast_semantics("torchscript")

    # float16 reaches the program through .half(), or a float16 region: enabled where the profile
    # has CPU float16, and in script always (TorchScript's autocast takes any dtype in script).
    mixes_float16 = prog.config.cpu_float16 or ".half()" in prog.source or "torch.float16" in prog.source
    # A torchscript trace has the casts of its autocast regions baked in and the regions stripped,
    # and the jit functions it called ran autocast at trace time only (the limitation matrix, both "mixing tracing
    # and scripting" rows): called in another state its ops can meet mixed dtypes. So can every step
    # that calls a pre-traced helper.
    calls_trace = "call_traced" in prog.features

    def attempt(what, fn, dtype_errors_ok=mixes_float16 or calls_trace):
        before = autocast_state()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return True, fn()
        except Exception as e:
            msg = str(e)
            hit = [d for d in DOCUMENTED if d in msg]
            if hit:
                seen.extend(hit)
                if not DOCUMENTED[hit[0]] & prog.features:
                    report.add("[torchscript] {}: {} from a program without that construct".format(what, _exc(e)))
            elif not (dtype_errors_ok and any(d in msg for d in TORCHSCRIPT_DTYPE_ERRORS)):
                report.add("[torchscript] {}: undocumented failure {}".format(what, _exc(e)))
            return False, None
        finally:
            if autocast_state() != before:
                report.add("[torchscript] {}: autocast state {} after it, {} before".format(
                    what, autocast_state(), before))
                torch.set_autocast_cpu_enabled(before[0])
                torch.set_autocast_cpu_dtype(before[1])

    try:
        x, w = prog.make_args()
        ok, mod = attempt("import (helpers compiled)", lambda: prog.load(reference=False, semantics="torchscript"))
        if not ok:
            return seen
        ok, scripted = attempt("script(main)", lambda: torch.jit.script(mod.main))
        traces = []
        for flag in (True, False):
            for under_autocast in (False, True):
                def tr(flag=flag, under_autocast=under_autocast):
                    # (torch needs cache_enabled=False to trace under autocast)
                    with torch.autocast("cpu", cache_enabled=False) if under_autocast else contextlib.nullcontext():
                        return torch.jit.trace(lambda a, b: mod.main(a, b, flag), (x, w), check_trace=False)
                tok, t = attempt("trace(main), flag={}".format(flag), tr)
                if tok:
                    traces.append((flag, under_autocast, t))
        for state_name, state in call_states(prog):
            for flag in (True, False):
                def call(fn):
                    with state():
                        return fn()
                attempt("eager main under {}".format(state_name), lambda: call(lambda: mod.main(x, w, flag)))
                if ok:
                    attempt("script under {}".format(state_name), lambda: call(lambda: scripted(x, w, flag)))
                for f, under_autocast, t in traces:
                    if f == flag:
                        # (a trace: see calls_trace)
                        taken = " taken under autocast" if under_autocast else ""
                        attempt("trace{} under {}".format(taken, state_name), lambda: call(lambda: t(x, w)),
                                dtype_errors_ok=True)
        return seen
    finally:
        torch.jit.set_autocast_semantics(prev)


# ---- The property ---------------------------------------------------------------------------------------

@pytest.fixture(autouse=True)
def _clean_state():
    before = autocast_state(), torch.amp.get_autocast_profile(), torch.jit.get_autocast_semantics()
    yield
    assert (autocast_state(), torch.amp.get_autocast_profile(), torch.jit.get_autocast_semantics()) == before


@pytest.mark.parametrize("index", range(N), ids=lambda i: "seed={}".format(SEED + i))
def test_eager_semantics_matches_eager(index):
    prog = program_gen.generate_valid(SEED + index, known_bugs=KNOWN_BUGS)
    report = Report(prog)
    try:
        with prog.config.apply():
            run_eager_semantics(prog, report)
            run_torchscript_semantics(prog, report)
    finally:
        prog.cleanup()
    report.check()


def test_generator_covers_every_construct():
    """The CI sweep exercises every policy class and construct the generator knows (a guard against a
    generator change that silently stops producing one)."""
    features, policies, configs = set(), set(), set()
    for i in range(N_CI):
        p = program_gen.generate(SEED_CI + i)
        features |= p.features
        policies |= {(p.config.name, pol) for pol in p.policies}
        configs.add(p.config.name)
    assert configs == {c.name for c in program_gen.CONFIGS}
    assert features >= {"decorator_plain", "decorator_scripted", "decorator_traced", "runtime_enabled", "as",
                        "reenter", "if_flag", "is_autocast_enabled", "call_plain", "call_scripted", "call_traced",
                        "cpu_amp_autocast", "float16_region", "return_in_region", "early_return", "loop",
                        "loop_break", "loop_continue", "helper_flag"}, features
    t2 = "torch-2+overrides"
    want = {("torch-1.13", "lower_precision_fp"), ("torch-1.13", "fp32"), ("torch-1.13", "promote"),
            (t2, "fp32_set_opt_dtype (override)"), (t2, "fp32_append_dtype (override)"), (t2, "promote (override)"),
            (t2, "promote (torch-2)"), (t2, "lower_precision_fp"), (t2, "fp32 (override)")}
    assert policies >= want, want - policies


def test_generator_is_deterministic_and_well_formed():
    assert program_gen.generate(SEED_CI).source == program_gen.generate(SEED_CI).source
    for seed in range(SEED, SEED + 2000):  # valid Python, far beyond the CI sweep (no ampjit needed)
        compile(program_gen.generate(seed, known_bugs=KNOWN_BUGS).source, "prog_{}.py".format(seed), "exec")


# ---- Regressions: bugs found by the sweep and while writing it, minimized --------------------------

F = torch.nn.functional
TORCH_2 = program_gen.Config("torch-2", "torch-2", (), True)


def _conv_stride(a, b):
    return F.conv2d(a.reshape(1, 1, 4, 4), b.reshape(4, 1, 2, 2), stride=2)


def test_f_conv2d_stride_in_script():
    """Fixed in 7923d2b: F.conv2d(x, w, stride=2) was compiled with stride=[2, 0, 1, 1] (padding,
    dilation and groups packed into the stride list)."""
    a, b = torch.randn(4, 4), torch.randn(4, 4)
    scripted = torch.jit.script(_conv_stride, autocast_semantics="eager")
    assert difference(scripted(a, b), _conv_stride(a, b)) is None


def _noop_cast_alias(x, w):
    v = torch.mm(w, w)
    y = torch.mm(x, v.float())  # .float() is a no-op while tracing outside autocast
    return y + v


def test_trace_noop_cast_alias():
    """Fixed in 7923d2b: a cast that is a no-op while tracing (v.float() on a float32 v) returned v
    itself, and the trace read every later use of v as the cast's output (float32 where eager gives
    bfloat16 under autocast)."""
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    traced = torch.jit.trace(_noop_cast_alias, (x, w), autocast_semantics="eager")
    with torch.autocast("cpu"):
        want = _noop_cast_alias(x, w)
        got = traced(x, w)
    assert want.dtype == torch.bfloat16
    assert difference(got, want) is None


def _default_dtype_region(x, w):
    with torch.autocast("cpu"):
        return torch.mm(x, w)


def test_script_autocast_default_dtype():
    """Fixed in 7923d2b: torch.autocast("cpu") without dtype= was compiled with a constant
    bfloat16; eager takes the current dtype (float16 under a float16 caller)."""
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    with TORCH_2.apply():
        scripted = torch.jit.script(_default_dtype_region, autocast_semantics="eager")
        with torch.autocast("cpu", dtype=torch.float16):
            want = _default_dtype_region(x, w)
            got = scripted(x, w)
    assert want.dtype == torch.float16
    assert difference(got, want) is None


def _default_dtype_instance(x, w):
    with torch.autocast("cpu", dtype=torch.float16):
        with torch.autocast("cpu") as ac:  # eager: ac's dtype is float16, current at construction
            y = torch.mm(x, w)
    with ac:
        z = torch.mm(x, w)
    return y, z


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="script, eager semantics (since 7923d2b): torch.autocast('cpu') without dtype= "
                   "reads the current CPU autocast dtype when the region is entered, eager's autocast() when "
                   "the object is constructed: an instance made inside a float16 region and entered again "
                   "after it is float16 in eager, bfloat16 in script (and one made outside, entered inside, "
                   "the other way round)")
def test_bug_script_autocast_default_dtype_at_construction():
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    with TORCH_2.apply():
        scripted = torch.jit.script(_default_dtype_instance, autocast_semantics="eager")
        want = _default_dtype_instance(x, w)
        got = scripted(x, w)
    assert [t.dtype for t in want] == [torch.float16, torch.float16]
    assert difference(got, want) is None


@pytest.mark.xfail(strict=True, raises=AssertionError,
                   reason="tracer, eager semantics: a region without dtype= "
                   "(torch.autocast('cpu')) is recorded as prim::AutocastRegion with the dtype current "
                   "at trace time; traced under autocast('cpu', dtype=float16) (torch-2 profile) it stays "
                   "float16 when called outside autocast, where eager gives bfloat16 (and traced outside, "
                   "bfloat16 under a float16 caller)")
def test_bug_trace_autocast_default_dtype():
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    with TORCH_2.apply():
        with torch.autocast("cpu", dtype=torch.float16):
            traced = torch.jit.trace(_default_dtype_region, (x, w), autocast_semantics="eager")
        want = _default_dtype_region(x, w)
        got = traced(x, w)
    assert want.dtype == torch.bfloat16
    assert difference(got, want) is None


def _nested_reentry(x, w):
    with torch.autocast("cpu") as ac:
        with ac:
            y = torch.mm(x, w)
    return y


@pytest.mark.xfail(strict=True, raises=RuntimeError,
                   reason="Python frontend, eager-semantics tracing: re-entering an autocast instance inside "
                   "its own region (`with autocast('cpu') as ac: with ac:`) fails the trace with 'internal "
                   "error: the trace ended inside an autocast region' (autocast.__exit__ reports the exit to "
                   "the tracer only while the instance's one _traced flag is set, and the inner exit clears "
                   "it, so the outer region is never closed)")
def test_bug_trace_nested_reentry():
    x, w = torch.randn(4, 4), torch.randn(4, 4)
    # Under an enabled caller, so that eager's own quirk (the instance keeps one saved state, and the
    # inner __enter__ overwrites the outer's: the state inside the region leaks past it, in PyTorch
    # too) restores the same state either way.
    # Under the torch-2 profile: in torch 1.13's, `with torch.autocast("cpu") as ac` binds None.
    with TORCH_2.apply(), torch.autocast("cpu"):
        traced = torch.jit.trace(_nested_reentry, (x, w), autocast_semantics="eager")
        want = _nested_reentry(x, w)
        got = traced(x, w)
    assert difference(got, want) is None
