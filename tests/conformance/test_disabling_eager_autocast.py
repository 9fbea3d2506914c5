"""Seed 000, "Disabling eager autocast with scripted autocast": a scripted `autocast(enabled=False)`
cannot turn off eager autocast (the eager dispatcher casts; the JIT pass can only add casts).
PyTorch is silent; ampjit warns once per function at the `with` line."""
from harness import Expect, Warn, check
from matrix import row

SECTION = "Disabling eager autocast with scripted autocast"
DOES_NOT_DISABLE = "does not disable eager autocast"


@row(SECTION,
     pytorch="Seed example: a scripted `with autocast(enabled=False):` mm called under eager autocast is "
             "bfloat16 (eager: float32), silently.",
     torchscript="Same bfloat16 (twice), plus one AutocastInteropWarning `does not disable eager autocast` "
                 "at the `with` line: once per function, not per call.",
     eager="The script's disable wins: float32, float32, equal to eager.")
def test_dis_seed_example(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16", warns=[Warn(DOES_NOT_DISABLE,
                                                                         at="autocast(enabled=False)")]),
          eager=Expect("float32", "float32"))


@row(SECTION,
     pytorch="The same scripted function called with eager autocast off: float32.",
     torchscript="Same, no warning.",
     eager="Same, equal to eager.")
def test_dis_without_eager_autocast(semantics, request):
    check(request, semantics, Expect("float32"))


@row(SECTION,
     pytorch="The disabling region in a scripted callee, the caller called under eager autocast: bfloat16, "
             "bfloat16, silently.",
     torchscript="Same, plus the warning at the callee's `with` line.",
     eager="The callee's disable wins: float32, bfloat16, equal to eager.")
def test_dis_in_scripted_callee(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16", warns=[Warn(DOES_NOT_DISABLE,
                                                                         at="autocast(enabled=False)")]),
          eager=Expect("float32", "bfloat16"))
