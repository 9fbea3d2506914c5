"""Seed 000, "Missing autocast policies": the JIT pass has no fp32_append_dtype, and its op lists are
its own (PyTorch 1.x CUDA's, on every device); ampjit's `eager` semantics uses the eager lists of the
active profile with every policy."""
import pytest

from harness import Expect, NotRun, check
from matrix import row

SECTION = "Missing autocast policies"


@row(SECTION,
     pytorch="fp32_append_dtype (norm) is not implemented in the JIT pass: on CUDA a scripted norm of a "
             "float16 value stays float16 (eagerly float32). Not run: PyTorch 1.13 has no CPU rule for norm.",
     torchscript="With norm given fp32_append_dtype on CPU (ampjit's per-op override), the pass ignores "
                 "it: bfloat16, bfloat16.",
     eager="norm appends dtype=float32 as eager autocast does: bfloat16, float32, equal to eager.")
def test_missing_fp32_append_dtype(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16"),
          pytorch=NotRun("torch.amp has no per-op policy override; norm has no CPU autocast rule in 1.13"),
          eager=Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="The pass applies its own lists on CPU: sum (fp32_set_opt_dtype) and log (fp32) of a "
             "bfloat16 value give float32, mv (lower precision) gives bfloat16; eager CPU autocast "
             "gives bfloat16, bfloat16, float32.",
     torchscript="Same: float32, float32, bfloat16.",
     eager="The eager CPU lists: bfloat16, bfloat16, float32, equal to eager.")
def test_missing_jit_lists_are_not_the_cpu_lists(semantics, request):
    check(request, semantics, Expect("float32", "float32", "bfloat16"),
          eager=Expect("bfloat16", "bfloat16", "float32"))


@row(SECTION,
     pytorch="torch's test_fp32_set_opt_dtype_policy, with sum: `sum(x)` is float32 but `sum(x, dtype=dtype)` "
             "with an Optional dtype holding None stays bfloat16 (the pass sees an explicit dtype).",
     torchscript="Same: float32, bfloat16.",
     eager="sum has no CPU rule: bfloat16, bfloat16, equal to eager.")
def test_missing_set_opt_dtype_with_none_argument(semantics, request):
    check(request, semantics, Expect("float32", "bfloat16"), eager=Expect("bfloat16", "bfloat16"))
