"""Seed 000, "Usage": explicit `with autocast()` scopes inside scripted functions and modules.

Each test shows one row of the limitation matrix; its program is programs.<name> for test_<name>
(harness.check runs it under ampjit in the `semantics` fixture's mode, under the real PyTorch 1.13
for the PyTorch column, and eagerly for the `eager` column).
"""
from harness import Expect, NotRun, check
from matrix import row

SECTION = "Usage"


@row(SECTION,
     pytorch="The seed's example, on CPU: a scripted `with autocast():` around mm gives bfloat16 "
             "(float16 on CUDA).",
     torchscript="Same: bfloat16 (the JIT autocast pass casts mm's inputs).",
     eager="bfloat16, equal to eager: the region is entered at run time and the eager dispatcher casts.")
def test_usage_seed_example(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(SECTION,
     pytorch="`torch.autocast('cpu', dtype=...)`, `device_type=`, `torch.cpu.amp.autocast()` and "
             "`torch.cpu.amp.autocast(dtype=...)` all compile; each mm is bfloat16.",
     torchscript="Same: bfloat16 four times.",
     eager="Same, equal to eager.")
def test_usage_autocast_spellings(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16", "bfloat16", "bfloat16"))


@row(SECTION,
     pytorch="`torch.autocast('cpu')` without a dtype crashes at the first call: RuntimeError "
             "`isInt() INTERNAL ASSERT FAILED`.",
     torchscript="Gives the eager answer instead of the internal assert: the device's default dtype, "
                 "bfloat16.",
     eager="bfloat16, equal to eager.")
def test_usage_autocast_without_dtype(semantics, request):
    check(request, semantics, Expect("bfloat16", like_eager=True),
          pytorch=Expect(error=RuntimeError, match="INTERNAL ASSERT FAILED"))


@row(SECTION,
     pytorch="Nested regions off { mm; on { mm; off { mm } } } give float32, bfloat16, float32.",
     torchscript="Same: float32, bfloat16, float32.",
     eager="Same, equal to eager.")
def test_usage_nested_regions(semantics, request):
    check(request, semantics, Expect("float32", "bfloat16", "float32"))


@row(SECTION,
     pytorch="A scripted module's forward may autocast: its Linear layer gives bfloat16.",
     torchscript="Same: bfloat16.",
     eager="Same, equal to eager.")
def test_usage_module_forward(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(SECTION,
     pytorch="No per-function choice: PyTorch has the `torchscript` behavior only (here bfloat16 for both "
             "disabled regions and the caller's mm). Not run: torch.jit.script/trace have no "
             "autocast_semantics argument.",
     torchscript="`autocast_semantics='eager'` on jit.script / jit.trace pins those functions: their disabled "
                 "regions win (float32, float32), the caller's mm is bfloat16, no warning.",
     eager="Same, equal to eager.")
def test_usage_per_function_semantics(semantics, request):
    check(request, semantics, Expect("float32", "float32", "bfloat16"),
          pytorch=NotRun("torch.jit.script / torch.jit.trace have no autocast_semantics argument"))
