"""Seed 000, "Uncommon autocast usage patterns may not be supported": `as` binding, instances chosen
at run time, reused instances."""
import contextlib

from harness import Expect, check
from matrix import row

SECTION = "Uncommon autocast usage patterns may not be supported"


@row(SECTION,
     pytorch="Seed example: `with autocast(enabled=True) as autocast_instance:` raises RuntimeError "
             "``with autocast() as ...` is not supported`` at the first call (eager PyTorch 1.13 cannot "
             "re-enter it either: its `__enter__` returns None).",
     torchscript="Same, pointing at the `with` line with a caret.",
     eager="Under the torch-2 profile, where `__enter__` returns the instance: it is re-entered, e "
           "bfloat16, f float32, g bfloat16, equal to eager. (Under torch-1.13's, `as` binds None in eager "
           "Python, as in PyTorch 1.13, so the program is not valid eager code.)")
def test_uncommon_as_binding(semantics, request):
    import program_gen
    profile = program_gen.Config("torch-2", "torch-2", (), True).apply() if semantics == "eager" else \
        contextlib.nullcontext()
    with profile:
        check(request, semantics, Expect(error=RuntimeError, match="`with autocast() as ...` is not supported",
                                         at="as autocast_instance"),
              eager=Expect("bfloat16", "float32", "bfloat16"))


@row(SECTION,
     pytorch="`with autocast() as ac:` where `ac` is never used is accepted: bfloat16.",
     torchscript="Same: bfloat16.",
     eager="Same, equal to eager.")
def test_uncommon_as_binding_unused(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(SECTION,
     pytorch="`with on if cond else off:` raises RuntimeError `Unsupported autocast syntax` at the first "
             "call.",
     torchscript="Same, pointing at the `with` line.",
     eager="The chosen instance applies: bfloat16 when cond, float32 otherwise, equal to eager.")
def test_uncommon_conditional_instance(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match="Unsupported autocast syntax",
                                     at="with on if cond else off"),
          eager=Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="One instance entered, re-entered inside a nested disabled region, then again: bfloat16, "
             "float32, bfloat16, bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_uncommon_reused_instance(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32", "bfloat16", "bfloat16"))


@row(SECTION,
     pytorch="Instances created up front and entered in different branches of an if work: bfloat16 / "
             "float32.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_uncommon_instances_entered_in_branches(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="`with autocast(enabled=False), autocast(enabled=True):` nests the two: bfloat16.",
     torchscript="Same: bfloat16.",
     eager="Same, equal to eager.")
def test_uncommon_implicitly_nested(semantics, request):
    check(request, semantics, Expect("bfloat16"))
