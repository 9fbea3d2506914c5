"""The interop warnings fire where the matrix expects them and nowhere else.

Every program of the conformance suite (programs.PROGRAMS: all the rows, diagnostics included) runs
in both semantics with AutocastInteropWarning turned into an error. In `torchscript` semantics the
programs of EXPECTED_WARNINGS must stop with that warning (raised as an exception, leaving the
autocast state clean) and every other program must not warn; in `eager` semantics no program
warns. Each warned program gives, without the filter, a result that differs from the same Python
run eagerly while raising nothing: the warnings are never false alarms. The other programs whose
`torchscript` result differs silently from eager are PyTorch's documented limitations outside the
interop boundaries (KNOWN_SILENT), each named with its reason, and the list is checked both ways.
"""
import warnings

import pytest

import ampjit
import programs
from harness import EagerTorch, observe, same_result

AutocastInteropWarning = ampjit.jit.AutocastInteropWarning

# Program -> the message of the AutocastInteropWarning it gives in `torchscript` semantics.
EXPECTED_WARNINGS = {
    "traced_autocast_disable_region": "is lost when script calls it",
    "sct_seed_example": "is lost when script calls it",
    "sct_traced_disable_is_lost": "is lost when script calls it",
    "tcs_seed_example": "does not apply to the scripted function",
    "dis_seed_example": "does not disable eager autocast",
    "dis_in_scripted_callee": "does not disable eager autocast",
    "torch_script_autocast_enable_and_check": "does not disable eager autocast",
}

# Programs whose `torchscript` result differs from eager without an error or a warning: the JIT
# pass's own limitations, not interop boundaries (each is a row that says so).
KNOWN_SILENT = {
    "promote_mul_by_scalar": "conservative promote (mul on the JIT promote list)",
    "promote_add_of_two_reduced": "conservative promote (add/sub on the JIT promote list)",
    "missing_fp32_append_dtype": "the JIT pass has no fp32_append_dtype",
    "missing_set_opt_dtype_with_none_argument": "the JIT pass takes an Optional dtype holding None as explicit",
    "missing_jit_lists_are_not_the_cpu_lists": "the JIT pass's lists are not the eager CPU lists",
    "torch_minimal": "the JIT pass's sum rule (not in the eager CPU list)",
    "torch_fp32_policy": "the JIT pass's log rule (not in the eager CPU list)",
    "torch_script_module": "the JIT pass's mv rule (bfloat16 mv; not in the eager CPU list): other values",
    "trace_taken_under_autocast": "a trace taken under autocast has its casts baked in",
}

SEMANTICS = ("torchscript", "eager")


def run(name, semantics, error_on=None):
    prev = ampjit.jit.set_autocast_semantics(semantics)
    try:
        got = observe(programs.PROGRAMS[name], ampjit, error_on=error_on)
    finally:
        ampjit.jit.set_autocast_semantics(prev)
    assert not ampjit.is_autocast_cpu_enabled(), "{} left autocast enabled".format(name)
    return got


@pytest.mark.parametrize("semantics", SEMANTICS)
def test_warnings_only_where_expected(semantics):
    unexpected, missing = [], []
    for name in sorted(programs.PROGRAMS):
        got = run(name, semantics, error_on=AutocastInteropWarning)
        raised = isinstance(got.error, AutocastInteropWarning)
        expected = EXPECTED_WARNINGS.get(name) if semantics == "torchscript" else None
        if expected is None and (raised or got.interop_warnings()):
            unexpected.append("{}: {}".format(name, got.error if raised else got.interop_warnings()[0].message))
        elif expected is not None:
            if not raised:
                missing.append("{}: {}".format(name, got.summary()))
            else:
                assert expected in str(got.error), (name, str(got.error))
    assert not unexpected, "AutocastInteropWarning where no row expects one:\n" + "\n".join(unexpected)
    assert not missing, "no AutocastInteropWarning where a row expects one:\n" + "\n".join(missing)


def test_warned_programs_differ_silently_from_eager():
    """The warnings are no false alarms: without the filter each warned program completes, with a
    result that differs from the eager run; and the silent differences without a warning are
    exactly KNOWN_SILENT."""
    silent = set()
    for name in sorted(programs.PROGRAMS):
        got = run(name, "torchscript")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eager = observe(programs.PROGRAMS[name], EagerTorch(ampjit))
        if got.error is None and eager.error is None and same_result(got, eager, exact=True) is not None:
            silent.add(name)
    for name in EXPECTED_WARNINGS:
        assert name in silent, "{} warns but gives the eager result".format(name)
    assert silent - set(EXPECTED_WARNINGS) == set(KNOWN_SILENT), (
        "silent differences from eager without a warning: {}; listed: {}".format(
            sorted(silent - set(EXPECTED_WARNINGS)), sorted(KNOWN_SILENT)))

