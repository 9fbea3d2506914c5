"""Seed 000, "Limited support for promote autocast policy": without concrete dtypes the JIT pass
promotes conservatively, and its promote list (PyTorch 1.x CUDA's, plus add/sub/mul/div) applies on
CPU too; ampjit's `eager` semantics promotes on the runtime dtypes, with the eager CPU list."""
from harness import Expect, check
from matrix import row

SECTION = "Limited support for promote autocast policy"


@row(SECTION,
     pytorch="`mm(a, b) * 2.0` in a scripted region is float32: mul is on the JIT promote list and the "
             "pass, not knowing mm's dtype, casts it to float32 (eager: bfloat16).",
     torchscript="Same: float32.",
     eager="bfloat16, equal to eager (mul is not autocast; promote uses the runtime dtypes).")
def test_promote_mul_by_scalar(semantics, request):
    check(request, semantics, Expect("float32"), eager=Expect("bfloat16"))


@row(SECTION,
     pytorch="`x + y` and `x - y` of two bfloat16 mm results are float32: the conservative promotion "
             "casts both inputs up.",
     torchscript="Same: float32, float32.",
     eager="bfloat16, bfloat16, equal to eager.")
def test_promote_add_of_two_reduced(semantics, request):
    check(request, semantics, Expect("float32", "float32"), eager=Expect("bfloat16", "bfloat16"))


@row(SECTION,
     pytorch="Tensor[] arguments get no casts: cat of two bfloat16 values stays bfloat16, cat([bfloat16, "
             "float32]) is float32 by type promotion.",
     torchscript="Same: bfloat16, float32.",
     eager="Same, equal to eager.")
def test_promote_tensor_list_not_cast(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="torch's test_promote_policy on CPU: addcmul(bfloat16 e, float32 c, float32 d) is float32, "
             "e stays bfloat16.",
     torchscript="Same: bfloat16, float32.",
     eager="Same, equal to eager.")
def test_promote_addcmul(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32"))


@row(SECTION,
     pytorch="torch's test_promote_policy_fp64: float64 inputs are never narrowed: float64.",
     torchscript="Same: float64.",
     eager="Same, equal to eager.")
def test_promote_fp64(semantics, request):
    check(request, semantics, Expect("float64"))
