"""Running a conformance program and checking what it did (programs.py says what a program is).

    got = observe(programs.const_runtime_enabled, ampjit)       # ampjit, current semantics
    ref = observe(programs.const_runtime_enabled, EagerTorch(ampjit))  # the same Python, eagerly

An Observation holds the program's outputs as leaves (dtype, shape, values as float64 NumPy arrays,
or plain Python values), the exception it raised, and the warnings it gave. ``check`` is what a row
test calls: in `torchscript` semantics it checks the expected result and compares it with the real
PyTorch 1.13 running the same program; in `eager` semantics it checks that the result equals the
eager run, bit for bit, with no interop warning.
"""
import ast
import inspect
import os
import re
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import programs as _programs

HERE = os.path.dirname(os.path.abspath(__file__))


# ---- Running a program ------------------------------------------------------------------------------

class _EagerJit:
    """torch.jit for the eager run: script and trace give the Python function back."""

    def __init__(self, jit):
        self._jit = jit

    @staticmethod
    def script(obj, *args, **kwargs):
        return obj

    @staticmethod
    def trace(func, example_inputs=None, *args, **kwargs):
        return func

    def __getattr__(self, name):
        return getattr(self._jit, name)


class EagerTorch:
    """`torch` for running a program eagerly: the module given, but nothing is compiled."""

    def __init__(self, torch):
        self._torch = torch
        self.jit = _EagerJit(torch.jit)

    def __getattr__(self, name):
        return getattr(self._torch, name)


class Leaf:
    """One output: a tensor (dtype name, shape, float64 values) or a plain value."""

    __slots__ = ("dtype", "shape", "values", "value")

    def __init__(self, dtype=None, shape=None, values=None, value=None):
        self.dtype, self.shape, self.values, self.value = dtype, shape, values, value

    def __repr__(self):
        return self.dtype if self.dtype is not None else repr(self.value)


class Observation:
    """What one run of a program did."""

    def __init__(self, leaves, error, warnings_, facts):
        self.leaves = leaves        # list of Leaf, or None when the program raised
        self.error = error          # the exception, or None
        self.warnings = warnings_   # list of warnings.WarningMessage
        self.facts = facts          # the program's Facts (about compiled code), merged

    @property
    def dtypes(self):
        return tuple(leaf.dtype for leaf in self.leaves if leaf.dtype is not None)

    @property
    def values(self):
        return tuple(leaf.value for leaf in self.leaves if leaf.dtype is None)

    def interop_warnings(self):
        return [w for w in self.warnings if w.category.__name__ == "AutocastInteropWarning"]

    def summary(self, width=None):
        """A short text: the output dtypes, or the error; then the interop warnings."""
        if self.error is not None:
            first = str(self.error).splitlines()[0] if str(self.error) else ""
            text = "{}: {}".format(type(self.error).__name__, first)
        else:
            text = ", ".join(repr(leaf) for leaf in self.leaves)
        for w in self.interop_warnings():
            text += " + AutocastInteropWarning ({}:{}: {})".format(
                os.path.basename(w.filename), w.lineno, str(w.message).split(":")[0][:60])
        return text

    def __repr__(self):
        return "<Observation {}>".format(self.summary())


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "")


def _leaves(value, out, facts):
    if isinstance(value, _programs.Facts):
        facts.update(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _leaves(v, out, facts)
    elif hasattr(value, "dtype") and hasattr(value, "shape"):
        t = value.detach()
        out.append(Leaf(_dtype_name(t.dtype), tuple(t.shape), t.to(_float64_of(t)).cpu().numpy()))
    else:
        out.append(Leaf(value=value))
    return out


def _float64_of(t):
    import importlib
    return importlib.import_module(type(t).__module__.split(".")[0]).float64


def observe(prog, torch, error_on=None):
    """Runs `prog` with `torch` (ampjit, the real torch, or EagerTorch(ampjit)), recording every
    warning; `error_on` (a Warning class) turns that category into an exception instead."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if error_on is not None:
            warnings.simplefilter("error", error_on)
        facts = {}
        try:
            leaves, error = _leaves(prog(torch), [], facts), None
        except Exception as e:  # noqa: BLE001 - what the program raised is the observation
            leaves, error = None, e
    return Observation(leaves, error, list(caught), facts)


def reference_torch(request):
    """The real PyTorch (through the torch_ref fixture), or None where it is not installed."""
    try:
        return request.getfixturevalue("torch_ref")
    except pytest.skip.Exception:
        return None


# ---- Source locations -------------------------------------------------------------------------------

def source_file(prog):
    return os.path.realpath(inspect.getsourcefile(prog))


def line_of(prog, marker, occurrence=1):
    """(file, line, file column of the marker, the line's text) of the `occurrence`-th line of
    `prog`'s source (after its docstring) that contains `marker`."""
    lines, first = inspect.getsourcelines(prog)
    seen = 0
    body = ast.parse(textwrap.dedent("".join(lines))).body[0].body
    skip = body[0].end_lineno if isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant) else 0  # the docstring
    for i, text in enumerate(lines):
        if i >= skip and marker in text:
            seen += 1
            if seen == occurrence:
                return source_file(prog), first + i, text.index(marker) + 1, text.rstrip("\n")
    raise AssertionError("{!r} is not in the source of {}".format(marker, prog.__name__))


_LOCATION = re.compile(r"(?P<file>/[^\s:]+\.py):(?P<line>\d+):(?P<col>\d+)")


def diagnostic_locations(message):
    """[(file, line, col, source line shown, caret line)] for each `file:line:col` of a message
    followed by the source line and a caret line (the error, then each `called from`)."""
    lines = message.splitlines()
    out = []
    for i, text in enumerate(lines):
        for m in _LOCATION.finditer(text):
            shown = lines[i + 1] if i + 1 < len(lines) else ""
            caret = lines[i + 2] if i + 2 < len(lines) else ""
            out.append((os.path.realpath(m.group("file")), int(m.group("line")), int(m.group("col")), shown, caret))
    return out


def assert_points_at(message, prog, marker, index=0, what="error"):
    """The `index`-th location of `message` is `prog`'s line holding `marker`, shown with a caret.
    Returns that location."""
    file, line, _, text = line_of(prog, marker)
    locs = diagnostic_locations(message)
    assert len(locs) > index, "the {} has no file:line:col (#{}):\n{}".format(what, index, message)
    got_file, got_line, col, shown, caret = locs[index]
    assert (got_file, got_line) == (file, line), "the {} points at {}:{}, not at {}:{} ({!r}):\n{}".format(
        what, got_file, got_line, file, line, marker, message)
    assert shown.strip() == text.strip(), "the {} does not show the source line {!r}:\n{}".format(what, text, message)
    assert re.fullmatch(r"\s*[~^]+\s*", caret), "the {} has no caret under the line:\n{}".format(what, message)
    return locs[index]


def expected_file_column(loc):
    """The file column (1-based) where a location's caret starts, from the file itself."""
    file, line, _, shown, caret = loc
    with open(file) as f:
        text = f.read().splitlines()[line - 1]
    start_in_shown = len(caret) - len(caret.lstrip())
    indent_shown = len(shown) - len(shown.lstrip())
    indent_file = len(text) - len(text.lstrip())
    return start_in_shown - indent_shown + indent_file + 1


# ---- Expectations -----------------------------------------------------------------------------------

class Warn:
    """An expected AutocastInteropWarning: a message substring and the program line it points at."""

    def __init__(self, match, at):
        self.match, self.at = match, at


class Expect:
    """An expected result: output dtypes (tensors, in order), plain values and facts, or an error
    (an exception class and a message substring; `at`: the marker of the line the error points at,
    its `at_index`-th location, `chain`: markers of each later `called from` line), and the exact
    AutocastInteropWarnings."""

    def __init__(self, *dtypes, values=None, error=None, match=None, at=None, chain=(), warns=(), facts=None,
                 like_eager=False, at_index=0):
        self.dtypes = tuple(dtypes)
        self.facts = facts
        self.like_eager = like_eager  # also equal (bitwise) to the eager run: ampjit gives the eager answer
        self.values = None if values is None else tuple(values)
        self.error, self.match, self.at, self.chain = error, match, at, tuple(chain)
        # The error's location that is `at`: 0, or later when it is raised inside ampjit's own
        # library code (an nn.functional def) called from that line.
        self.at_index = at_index
        self.warns = list(warns)

    def verify(self, got, prog, where, locations=True):
        if self.error is not None:
            assert got.error is not None, "{}: expected {}({!r}), got {}".format(
                where, self.error.__name__, self.match, got.summary())
            assert isinstance(got.error, self.error), "{}: expected {}, got {}: {}".format(
                where, self.error.__name__, type(got.error).__name__, got.error)
            assert self.match in str(got.error), "{}: {!r} is not in the message:\n{}".format(
                where, self.match, got.error)
            if locations and self.at is not None:
                assert_points_at(str(got.error), prog, self.at, self.at_index, where + " error")
                for i, marker in enumerate(self.chain):
                    assert_points_at(str(got.error), prog, marker, self.at_index + i + 1,
                                     where + " error's call chain")
        else:
            assert got.error is None, "{}: expected {}, got {!r}".format(where, self.dtypes, got.error)
            assert got.dtypes == self.dtypes, "{}: expected dtypes {}, got {}".format(where, self.dtypes, got.dtypes)
            if self.values is not None:
                assert got.values == self.values, "{}: expected values {}, got {}".format(
                    where, self.values, got.values)
            if self.facts is not None:
                assert got.facts == self.facts, "{}: expected facts {}, got {}".format(where, self.facts, got.facts)
        if locations:
            assert_warnings(got, prog, self.warns, where)

    def __repr__(self):
        if self.error is not None:
            return "{}({!r})".format(self.error.__name__, self.match)
        return ", ".join(self.dtypes + tuple(repr(v) for v in self.values or ()))


def assert_warnings(got, prog, expected, where="ampjit"):
    """`got` gave exactly the `expected` AutocastInteropWarnings, each pointing at its line."""
    ws = got.interop_warnings()
    assert len(ws) == len(expected), "{}: expected {} AutocastInteropWarning(s), got {}: {}".format(
        where, len(expected), len(ws), [str(w.message) for w in ws])
    for w, e in zip(ws, expected):
        file, line, _, _ = line_of(prog, e.at)
        assert e.match in str(w.message), "{}: {!r} is not in the warning {!r}".format(where, e.match, str(w.message))
        assert (os.path.realpath(w.filename), w.lineno) == (file, line), \
            "{}: the warning points at {}:{}, not at {}:{} ({!r})".format(where, w.filename, w.lineno, file, line, e.at)


class _Same:
    def __repr__(self):
        return "SAME"


SAME = _Same()  # PyTorch gives what ampjit's `torchscript` semantics gives


class NotRun:
    """The PyTorch column is not run on this program (the reason says why; the row's text is the
    documented behavior)."""

    def __init__(self, reason):
        self.reason = reason


class Crashes:
    """PyTorch 1.13 kills the process on this program (run in a child process to show it)."""

    def __init__(self, reason):
        self.reason = reason


def same_leaves(got, want, exact):
    """Equal dtypes, shapes and plain values; tensor values bitwise (exact) or close (PyTorch's
    kernels round differently from ampjit's: a bfloat16 ulp or two)."""
    if len(got.leaves) != len(want.leaves):
        return "{} outputs != {}".format(len(got.leaves), len(want.leaves))
    for i, (g, w) in enumerate(zip(got.leaves, want.leaves)):
        if (g.dtype, g.shape) != (w.dtype, w.shape):
            return "output {}: {} {} != {} {}".format(i, g.dtype, g.shape, w.dtype, w.shape)
        if g.dtype is None:
            if g.value != w.value:
                return "output {}: {!r} != {!r}".format(i, g.value, w.value)
        elif exact:
            if not np.array_equal(g.values, w.values, equal_nan=True):
                return "output {}: values differ (max |diff| {})".format(i, np.nanmax(np.abs(g.values - w.values)))
        elif not np.allclose(g.values, w.values, rtol=2e-2, atol=2e-2, equal_nan=True):
            return "output {}: values not close (max |diff| {})".format(i, np.nanmax(np.abs(g.values - w.values)))
    return None


def same_result(got, want, match=None, exact=False, facts=False):
    """None when `got` and `want` agree: both raise the same kind of error (`match` in both
    messages), or both compute the same leaves (and, with `facts`, the same facts); else what
    differs."""
    if got.error is not None or want.error is not None:
        if got.error is None or want.error is None:
            return "{} vs {}".format(got.summary(), want.summary())
        kinds = [k for k in (RuntimeError, TypeError, ValueError, NotImplementedError) if isinstance(want.error, k)]
        if not kinds or not isinstance(got.error, kinds[0]):
            return "error kinds differ: {} vs {}".format(type(got.error).__name__, type(want.error).__name__)
        if match is not None and (match not in str(got.error) or match not in str(want.error)):
            return "{!r} is not in both messages: {!r} / {!r}".format(match, str(got.error), str(want.error))
        return None
    if facts and got.facts != want.facts:
        return "facts differ: {} != {}".format(got.facts, want.facts)
    return same_leaves(got, want, exact)


def run_in_child(prog):
    """Runs `prog` with the real torch in a child process; its return code (negative: a signal)."""
    code = "import sys, torch; sys.path.insert(0, {!r}); import programs; programs.PROGRAMS[{!r}](torch)".format(
        HERE, prog.__name__)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=120).returncode


# ---- The row check ----------------------------------------------------------------------------------

def program_of(request):
    """The program of the running row test: test_<name> shows programs.<name>."""
    name = request.node.originalname
    assert name.startswith("test_") and name[5:] in _programs.PROGRAMS, \
        "{} has no program {} in programs.py".format(name, name[5:])
    return _programs.PROGRAMS[name[5:]]


def check(request, semantics, torchscript, pytorch=SAME, eager=None):
    """Runs the row's program under ampjit in the current semantics and checks its column.

    torchscript: the Expect of the `torchscript` semantics; `pytorch`: SAME (the real PyTorch gives
    the same dtypes and values, or the same kind of error with the Expect's message key), an Expect
    (what PyTorch gives where ampjit differs on purpose), NotRun or Crashes. In `eager` semantics the
    program must give what its eager run gives (bitwise, same error if any) with no interop
    warning; `eager` optionally spells that result out. Returns (ampjit's, the reference's)
    observations."""
    import ampjit
    prog = program_of(request)
    got = observe(prog, ampjit)
    if semantics == "torchscript":
        if torchscript.error is not None:
            assert torchscript.at is not None, "a rejected construct's diagnostic must be checked to point at the source"
        torchscript.verify(got, prog, "ampjit (torchscript)")
        if torchscript.like_eager:
            eager_run = observe(prog, EagerTorch(ampjit))
            diff = same_result(got, eager_run, exact=True)
            assert diff is None, "ampjit (torchscript) {} != eager Python {}: {}".format(
                got.summary(), eager_run.summary(), diff)
        if isinstance(pytorch, NotRun):
            return got, None
        ref_torch = reference_torch(request)
        if ref_torch is None:
            return got, None
        if isinstance(pytorch, Crashes):
            rc = run_in_child(prog)
            assert rc < 0, "PyTorch 1.13 was expected to crash ({}); it exited with {}".format(pytorch.reason, rc)
            return got, None
        ref_torch._C._jit_set_autocast_mode(True)
        want = observe(prog, ref_torch)
        assert not want.interop_warnings()
        if pytorch is SAME:
            diff = same_result(got, want, torchscript.match, facts=True)
            assert diff is None, "ampjit (torchscript) {} != PyTorch {}: {}".format(got.summary(), want.summary(), diff)
        else:
            pytorch.verify(want, prog, "PyTorch 1.13", locations=False)
        return got, want
    want = observe(prog, EagerTorch(ampjit))
    diff = same_result(got, want, exact=True)
    assert diff is None, "ampjit (eager) {} != eager Python {}: {}".format(got.summary(), want.summary(), diff)
    assert_warnings(got, prog, [], "ampjit (eager)")
    if eager is not None:
        eager.verify(got, prog, "ampjit (eager)")
    return got, want
