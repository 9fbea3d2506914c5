"""Seed 000, "Mixing eager mode and scripting autocast" (named in its table of contents): a scripted
function called under eager autocast is specialized on the eager state, and the eager dispatcher
still autocasts its ops; `is_autocast_cpu_enabled()` in script."""
from harness import Crashes, Expect, check
from matrix import row

SECTION = "Mixing eager mode and scripting autocast"
SEGFAULT = "PyTorch 1.13 (Debian's CPU build) segfaults on is_autocast_cpu_enabled() in these scripts"


@row(SECTION,
     pytorch="A scripted mm called alternately inside and outside eager autocast: bfloat16, float32, "
             "bfloat16, float32 (one optimized graph per eager state).",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_mix_specialized_on_eager_state(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32", "bfloat16", "float32"))


@row(SECTION,
     pytorch="`if torch.is_autocast_cpu_enabled():` in a script called under eager autocast crashes the "
             "process (segmentation fault); without autocast it works.",
     torchscript="Gives the eager answer: the flag reads the eager state (relu under autocast, sin "
                 "without).",
     eager="Same, equal to eager.")
def test_mix_is_autocast_enabled_in_script(semantics, request):
    check(request, semantics, Expect("float32", "float32", like_eager=True), pytorch=Crashes(SEGFAULT))


@row(SECTION,
     pytorch="`torch.is_autocast_cpu_enabled()` inside a scripted `with autocast():` crashes the process "
             "(segmentation fault).",
     torchscript="Gives the eager answer: bfloat16, True.",
     eager="Same, equal to eager.")
def test_mix_is_autocast_enabled_inside_scripted_region(semantics, request):
    check(request, semantics, Expect("bfloat16", values=[True], like_eager=True), pytorch=Crashes(SEGFAULT))


@row(SECTION,
     pytorch="A scripted enabled region under eager `autocast(enabled=False)`, and a script without "
             "regions inside an eager region, both autocast: bfloat16, bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_mix_eager_region_inside_scripted_disable(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16"))
