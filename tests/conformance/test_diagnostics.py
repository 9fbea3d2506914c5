"""Seed 000, "Diagnostics": PyTorch's autocast/JIT errors are not specific enough and do not point
at the Python source. In ampjit every rejected construct's error carries `file:line:col`, the
source line and a caret (the row tests of every section check it through Expect(at=...)); the rows
here are about the diagnostics themselves. test_diagnostic_columns checks the column of every
rejected construct's diagnostic against the file.
"""
import pytest

import ampjit
import programs
from harness import Expect, assert_points_at, check, diagnostic_locations, expected_file_column, observe
from matrix import row

SECTION = "Diagnostics"


@row(SECTION,
     pytorch="RuntimeError `Autocast _enabled argument must be a constant` at the first call, with no "
             "file, line or source.",
     torchscript="Same error kind and message, then `file:line:col` of the autocast call, the source "
                 "line and a caret under the call.",
     eager="No error: `enabled` is read at run time (bfloat16), equal to eager.")
def test_diag_runtime_enabled_points_at_source(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match="Autocast _enabled argument must be a constant",
                                     at="autocast(enabled=use_amp)"))


@row(SECTION,
     pytorch="The same bare message when the construct is in a scripted callee: nothing names the "
             "callee or the call.",
     torchscript="The error points at the callee's line with its source line and caret and the"
                 " `called from` line of the call.",
     eager="Compiles and runs as eager: bfloat16.")
def test_diag_error_in_callee(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match="Autocast _enabled argument must be a constant",
                                     at="autocast(enabled=use_amp)"))


def test_pass_error_in_callee_names_the_call():
    prev = ampjit.jit.set_autocast_semantics("torchscript")
    try:
        got = observe(programs.diag_error_in_callee, ampjit)
    finally:
        ampjit.jit.set_autocast_semantics(prev)
    assert_points_at(str(got.error), programs.diag_error_in_callee, "with torch.cpu.amp.autocast(enabled=use_amp)")
    assert_points_at(str(got.error), programs.diag_error_in_callee, "return helper(a, use_amp)", 1)


@row(SECTION,
     pytorch="binary_cross_entropy in a scripted region: RuntimeError `Unsafe to autocast` (the JIT pass "
             "bans it on every device; eager CPU autocast runs it in float32).",
     torchscript="Same error, pointing at the binary_cross_entropy call with its source line and a caret.",
     eager="Runs as eager CPU autocast does: float32.")
def test_diag_banned_op_under_script_autocast(semantics, request):
    # The op is in nn.functional's def (its first location); the program's call is the next.
    check(request, semantics, Expect(error=RuntimeError, match="Unsafe to autocast", at="binary_cross_entropy(p",
                                     at_index=1))


# Every program whose `torchscript` column is a rejected construct, with the marker of its line.
REJECTED = {
    "diag_runtime_enabled_points_at_source": "autocast(enabled=use_amp)",
    "diag_error_in_callee": "autocast(enabled=use_amp)",
    "diag_banned_op_under_script_autocast": ("binary_cross_entropy(p", 1),  # called from: location 1
    "deco_helper_called_from_script": "@torch.cpu.amp.autocast(enabled=True)",
    "deco_script_of_decorated_function": "@torch.cpu.amp.autocast()",
    "deco_disabling_decorator_under_eager_autocast": "@torch.cpu.amp.autocast(enabled=False)",
    "const_runtime_enabled": "autocast(enabled=use_amp)",
    "const_enabled_expression": "autocast(enabled=True if",
    "uncommon_as_binding": "as autocast_instance",
    "uncommon_conditional_instance": "with on if cond else off",
}


# ampjit regression (083b15b): an @autocast-decorated *nested* function is no longer compiled
# from its decorated source (its text keeps its indentation, and _source_to_compile tests
# text.startswith("@")): scripting it or a caller gives torch's decorator error in both semantics,
# at the call (callee) or with no location (scripted directly).

@pytest.mark.parametrize("name", [n
                                  for n in sorted(REJECTED)])
def test_diagnostic_columns(name):
    """The column of `file:line:col` is the file's column of the caret's first character."""
    prev = ampjit.jit.set_autocast_semantics("torchscript")
    try:
        got = observe(programs.PROGRAMS[name], ampjit)
    finally:
        ampjit.jit.set_autocast_semantics(prev)
    assert got.error is not None
    marker, index = REJECTED[name] if isinstance(REJECTED[name], tuple) else (REJECTED[name], 0)
    loc = assert_points_at(str(got.error), programs.PROGRAMS[name], marker, index)
    for loc in diagnostic_locations(str(got.error)):
        assert loc[2] == expected_file_column(loc), str(got.error)
