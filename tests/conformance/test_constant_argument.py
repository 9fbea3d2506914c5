"""Seed 000, "Autocast argument must be a compile-time constant": `enabled` (and `dtype`) of a
scripted autocast must be constants in PyTorch; ampjit's `eager` semantics reads them at run time."""
import pytest

from harness import Expect, check
from matrix import row

SECTION = "Autocast argument must be a compile-time constant"
NOT_CONSTANT = "Autocast _enabled argument must be a constant"


@row(SECTION,
     pytorch="Seed example: `with autocast(enabled=use_amp)` with a bool argument raises RuntimeError "
             "`Autocast _enabled argument must be a constant` at the first call.",
     torchscript="Same, pointing at the autocast call with a caret.",
     eager="`enabled` is a runtime bool: True gives bfloat16, False float32, equal to eager.")
def test_const_runtime_enabled(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match=NOT_CONSTANT, at="autocast(enabled=use_amp)"),
          eager=Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="`enabled=True if a[0][0] > 0.5 else False` (a value computed at run time) raises the same "
             "RuntimeError.",
     torchscript="Same, pointing at the autocast call.",
     eager="The expression is evaluated at each call: bfloat16, then float32, equal to eager.")
def test_const_enabled_expression(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match=NOT_CONSTANT, at="autocast(enabled=True if"),
          eager=Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="`dtype=dt` with a `torch.dtype` argument raises RuntimeError `Autocast dtype argument must be "
             "a constant and defined`.",
     torchscript="Same, pointing at the autocast call.",
     eager="The dtype is read at run time: bfloat16, equal to eager.")
def test_const_runtime_dtype(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match="Autocast dtype argument must be a constant",
                                     at='autocast("cpu", dtype=dt)'),
          eager=Expect("bfloat16"))


@row(SECTION,
     pytorch="`enabled=self.use_amp` with `use_amp: Final[bool]` is a constant: bfloat16 for True, float32 "
             "for False.",
     torchscript="Same: bfloat16, float32.",
     eager="Same, equal to eager.")
def test_const_enabled_from_final_attribute(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="A Python bool captured from the enclosing function cannot be used in script: RuntimeError "
             "`python value of type 'bool' cannot be used as a value`.",
     torchscript="ampjit's resolver reads a captured bool as a constant (a deliberate difference): "
                 "`enabled=False` gives float32.",
     eager="float32, equal to eager.")
def test_const_enabled_from_closure_constant(semantics, request):
    check(request, semantics, Expect("float32"),
          pytorch=Expect(error=RuntimeError, match="python value of type 'bool' cannot be used as a value"))


@row(SECTION,
     pytorch="Literal `enabled=False` / `enabled=True`: float32, bfloat16.",
     torchscript="Same: float32, bfloat16.",
     eager="Same, equal to eager.")
def test_const_enabled_literal(semantics, request):
    check(request, semantics, Expect("float32", "bfloat16"))
