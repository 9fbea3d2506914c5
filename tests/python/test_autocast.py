"""Eager autocast from Python: the context manager and decorator, nesting, thread-locality,
exceptions, the weight cache, profiles and per-op overrides, bad input; and differential runs
against the real PyTorch 1.13 (when installed) on the same programs."""
import threading
import warnings

import pytest

import ampjit

try:
    import torch as real_torch
except ImportError:
    real_torch = None

needs_torch = pytest.mark.skipif(real_torch is None, reason="PyTorch 1.13 (python3-torch) is not installed")

# Policy classes of the default profile (torch-1.13, CPU), with an op of each.
LOWER = [lambda m, a, b: m.mm(a, b), lambda m, a, b: m.matmul(a, b), lambda m, a, b: m.addmm(a, a, b),
         lambda m, a, b: m.nn.functional.linear(a, b)]
FP32 = [lambda m, a, b: m.nn.functional.mse_loss(a, b), lambda m, a, b: m.nn.functional.l1_loss(a, b),
        lambda m, a, b: m.cdist(a, b)]
NONE = [lambda m, a, b: m.exp(a), lambda m, a, b: m.softmax(a, 0), lambda m, a, b: a + b,
        lambda m, a, b: m.relu(a), lambda m, a, b: m.sum(a)]


def inputs(m, dtype):
    m.manual_seed(0)
    return m.randn(4, 4).to(dtype), m.randn(4, 4).to(dtype)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
def test_policy_classes(dtype):
    dt = getattr(ampjit, dtype)
    a, b = inputs(ampjit, dt)
    with ampjit.autocast("cpu"):
        for f in LOWER:
            # float64 is not eligible; float16 stays float16 only if not cast: eligible -> bfloat16
            want = ampjit.float64 if dt is ampjit.float64 else ampjit.bfloat16
            assert f(ampjit, a, b).dtype is want
        for f in FP32:
            want = ampjit.float64 if dt is ampjit.float64 else ampjit.float32
            assert f(ampjit, a, b).dtype is want
        for f in NONE:
            assert f(ampjit, a, b).dtype is dt


def test_values_equal_explicit_casts():
    a, b = inputs(ampjit, ampjit.float32)
    with ampjit.autocast("cpu"):
        got = ampjit.mm(a, b)
    want = ampjit.mm(a.bfloat16(), b.bfloat16())
    assert got.tolist() == want.tolist()


def test_integer_inputs_are_not_cast():
    x = ampjit.arange(16).view(4, 4)
    with ampjit.autocast("cpu"):
        assert ampjit.mm(x, x).dtype is ampjit.int64


def test_nesting_disabled_subregion_and_restore():
    a, b = inputs(ampjit, ampjit.float32)
    assert not ampjit.is_autocast_cpu_enabled()
    with ampjit.autocast("cpu"):
        with ampjit.autocast("cpu", enabled=False):
            assert not ampjit.is_autocast_cpu_enabled()
            assert ampjit.mm(a, b).dtype is ampjit.float32
        assert ampjit.is_autocast_cpu_enabled()
        assert ampjit.mm(a, b).dtype is ampjit.bfloat16
    assert not ampjit.is_autocast_cpu_enabled()
    assert ampjit.mm(a, b).dtype is ampjit.float32


def test_decorator_and_state_restored_after_exceptions():
    a, b = inputs(ampjit, ampjit.float32)

    @ampjit.autocast("cpu")
    def f(x, y):
        return ampjit.mm(x, y)

    assert f(a, b).dtype is ampjit.bfloat16
    assert f.__name__ == "f" and "not supported in script mode" in getattr(f, "__script_unsupported")

    @ampjit.cpu.amp.autocast()
    def boom():
        raise ValueError("inside")

    with pytest.raises(ValueError):
        boom()
    assert not ampjit.is_autocast_cpu_enabled()
    with pytest.raises(RuntimeError):
        with ampjit.autocast("cpu"):
            ampjit.mm(a, ampjit.ones(3, 3))
    assert not ampjit.is_autocast_cpu_enabled()
    assert ampjit.autocast_increment_nesting() == 1  # nesting went back to 0
    assert ampjit.autocast_decrement_nesting() == 0


def test_thread_local():
    a, b = inputs(ampjit, ampjit.float32)
    seen = []
    with ampjit.autocast("cpu"):
        t = threading.Thread(target=lambda: seen.append((ampjit.is_autocast_cpu_enabled(), ampjit.mm(a, b).dtype)))
        t.start()
        t.join()
    assert seen == [(False, ampjit.float32)]


def test_weight_cache_one_cast_per_region_cleared_on_exit():
    w = ampjit.nn.Parameter(ampjit.randn(4, 4))
    x = ampjit.randn(4, 4)
    with ampjit.autocast("cpu"):
        ampjit.mm(x, w)
        ampjit.mm(x, w)
        assert ampjit._C._autocast_cache_size() == 1  # the weight, once; x is not a leaf requiring grad
        with ampjit.autocast("cpu", cache_enabled=False):
            pass
    assert ampjit._C._autocast_cache_size() == 0
    with ampjit.autocast("cpu", cache_enabled=False):
        ampjit.mm(x, w)
        assert ampjit._C._autocast_cache_size() == 0


def test_profiles_and_overrides():
    a, _ = inputs(ampjit, ampjit.bfloat16)
    assert ampjit.amp.autocast_profiles() == ["torch-1.13", "documented", "torch-2"]
    assert ampjit.amp.get_autocast_profile() == "torch-1.13"
    # cumsum: measured 1.13 CPU runs it in the input dtype; the documented list says float32.
    with ampjit.autocast("cpu"):
        assert ampjit.cumsum(a, 0).dtype is ampjit.bfloat16
    ampjit.amp.set_autocast_profile("documented")
    try:
        with ampjit.autocast("cpu"):
            assert ampjit.cumsum(a, 0).dtype is ampjit.float32
    finally:
        ampjit.amp.set_autocast_profile("torch-1.13")
    ampjit.amp.set_op_policy("cpu", "aten::gelu", "fp32")
    try:
        assert ampjit.amp.get_op_policy("cpu", "aten::gelu") == "fp32"
        with ampjit.autocast("cpu"):
            assert ampjit.nn.functional.gelu(a).dtype is ampjit.float32
    finally:
        ampjit.amp.reset_op_policy("cpu", "aten::gelu")
    with ampjit.autocast("cpu"):
        assert ampjit.nn.functional.gelu(a).dtype is ampjit.bfloat16


def test_bad_input_messages():
    with pytest.raises(RuntimeError, match="device_type must be 'cuda' or 'cpu'"):
        ampjit.autocast("tpu")
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ampjit.autocast(1)
    with pytest.raises(ValueError, match="is not an autocast profile; valid profiles: torch-1.13"):
        ampjit.amp.set_autocast_profile("torch-0.1")
    with pytest.raises(ValueError, match="policy"):
        ampjit.amp.set_op_policy("cpu", "aten::gelu", "fastest")
    with pytest.raises(ValueError, match="aten::gleu"):
        ampjit.amp.set_op_policy("cpu", "aten::gleu", "fp32")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        ac = ampjit.autocast("cpu", dtype=ampjit.float16)  # torch 1.13: CPU autocast is bfloat16 only
        assert not ac._enabled and "CPU Autocast only supports dtype of torch.bfloat16" in str(w[-1].message)
        ac = ampjit.autocast("cuda")
        assert not ac._enabled and "CUDA is not available" in str(w[-1].message)
        ampjit.cuda.amp.autocast()
        assert any(issubclass(x.category, FutureWarning) and "is deprecated" in str(x.message) for x in w)


# ---- Differential: the same program under torch 1.13 and ampjit ----------------------------

PROGRAMS = {
    "mlp": """
lin1 = torch.nn.Linear(8, 16); lin2 = torch.nn.Linear(16, 4)
x = torch.randn(5, 8)
with torch.autocast("cpu"):
    h = torch.relu(lin1(x))
    with torch.autocast("cpu", enabled=False):
        g = torch.exp(h.float())
    y = lin2(h) + 1.0
    loss = torch.nn.functional.mse_loss(y, torch.zeros(5, 4))
out = [h, g, y, loss, torch.mm(x, x.t())]
""",
    "mixed": """
a = torch.randn(4, 4); b = torch.randn(4, 4).bfloat16()
with torch.cpu.amp.autocast():
    out = [torch.mm(a, b), a + b, torch.softmax(b, 0), torch.stack([a, b]), torch.cat([a, b]),
           torch.matmul(a, a), torch.sum(b), torch.log_softmax(a, 1), torch.bmm(a[None], a[None])]
""",
}


@needs_torch
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_program_as_torch(name):
    results = {}
    for label, mod in (("ampjit", ampjit), ("torch", real_torch)):
        env = {"torch": mod}
        mod.manual_seed(0)
        exec(PROGRAMS[name], env)
        results[label] = env["out"]
    for got, want in zip(results["ampjit"], results["torch"]):
        assert repr(got.dtype) == repr(want.dtype)
        assert tuple(got.shape) == tuple(want.shape)
    # Values: same weights are not shared between the two runs (different generators), so compare
    # values on a program with fixed data.
    data = real_torch.randn(6, 6)
    a_t, a_a = data, ampjit.tensor(data.tolist())
    with real_torch.autocast("cpu"):
        want = real_torch.mm(a_t, a_t)
    with ampjit.autocast("cpu"):
        got = ampjit.mm(a_a, a_a)
    # ampjit rounds the float32 product once; torch 1.13's bfloat16 GEMM rounds partial sums too,
    # so the two may differ by a few bfloat16 ulps (2^-7 relative each): allow 4.
    tol = 4 * 2.0 ** -7
    assert got.float().flatten().tolist() == pytest.approx(want.float().flatten().tolist(), rel=tol, abs=tol)
