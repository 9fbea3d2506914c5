"""Seed 000, "Mixing tracing and scripting autocast (traced calling script)": the tracer records a
call to the scripted function, and the eager autocast region around that call while tracing is
not applied when the trace runs. PyTorch is silent about it; ampjit warns at trace time."""
from harness import Expect, Warn, check
from matrix import row

SECTION = "Mixing tracing and scripting autocast (traced calling script)"


@row(SECTION,
     pytorch="Seed example: the eager `with autocast()` around the scripted call is not in the trace: the "
             "trace returns float32 (eager: bfloat16), silently.",
     torchscript="Same float32, plus an AutocastInteropWarning `does not apply to the scripted function` "
                 "at trace time, pointing at the call.",
     eager="The trace records the region: bfloat16, equal to eager.")
def test_tcs_seed_example(semantics, request):
    check(request, semantics, Expect("float32", warns=[Warn("does not apply to the scripted function",
                                                            at="return fn(a, b)")]),
          eager=Expect("bfloat16"))


@row(SECTION,
     pytorch="torch's test_tracing_and_script: a scripted function's own `with autocast()` is kept when a "
             "trace calls it: bfloat16.",
     torchscript="Same: bfloat16, no warning.",
     eager="Same, equal to eager.")
def test_tcs_script_with_its_own_region(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(SECTION,
     pytorch="A trace calling a scripted mm with no autocast around the call: float32.",
     torchscript="Same, no warning.",
     eager="Same, equal to eager.")
def test_tcs_no_eager_region(semantics, request):
    check(request, semantics, Expect("float32"))
