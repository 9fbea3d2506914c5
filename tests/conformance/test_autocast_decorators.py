"""Seed 000, "Autocast decorators": `@autocast` on a function that script compiles (directly or as a
callee) is rejected in PyTorch; ampjit's `eager` semantics makes it a region."""
from harness import Expect, check
from matrix import row

SECTION = "Autocast decorators"
DECORATOR_ERROR = "TorchScript error: @autocast() decorator is not supported in script mode"

@row(SECTION,
     pytorch="Seed example 1: scripting a caller of an `@autocast(enabled=True)` helper raises RuntimeError "
             "`TorchScript error: @autocast() decorator is not supported in script mode`.",
     torchscript="Same (CompileError, a RuntimeError), pointing at the decorator line, then `called from` "
                 "the call.",
     eager="The decorator is a region: the helper's mm is bfloat16, equal to eager.")
def test_deco_helper_called_from_script(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match=DECORATOR_ERROR,
                                     at="@torch.cpu.amp.autocast(enabled=True)", chain=["return helper(x)"]))


@row(SECTION,
     pytorch="Seed example 2: `@torch.jit.script` over `@autocast()` raises the same RuntimeError.",
     torchscript="Same, pointing at the `@autocast()` line with a caret.",
     eager="The decorated function is scripted with its region: bfloat16, bfloat16, equal to eager.")
def test_deco_script_of_decorated_function(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match=DECORATOR_ERROR, at="@torch.cpu.amp.autocast()"))


@row(SECTION,
     pytorch="`@autocast()` outside `@torch.jit.script` is an eager region around the scripted call: "
             "bfloat16.",
     torchscript="Same: bfloat16.",
     eager="Same, equal to eager.")
def test_deco_eager_decorator_around_script(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(SECTION,
     pytorch="An `@autocast(enabled=False)` helper called from script is rejected like any decorator.",
     torchscript="Same error, pointing at the decorator, then `called from` the call.",
     eager="The helper's disable wins over the eager autocast around the call: float32 for the helper's "
           "mm, bfloat16 for the caller's, equal to eager.")
def test_deco_disabling_decorator_under_eager_autocast(semantics, request):
    check(request, semantics, Expect(error=RuntimeError, match=DECORATOR_ERROR,
                                     at="@torch.cpu.amp.autocast(enabled=False)", chain=["return exact(a, b)"]),
          eager=Expect("float32", "bfloat16"))
