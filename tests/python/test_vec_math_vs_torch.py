"""log2, log10, expm1 and atan in float32, float16 and bfloat16 run ampjit's own vectorized float32
kernels (Note [Vectorized log, expm1 and atan] in kernels/cpu/vec/math_f32.h): against torch 1.13,
on op_db's samples and on a dense sweep of every binade, subnormals, zeros, infinities and NaN,
within torch's float32 tolerance (rtol 1.3e-6, atol 1e-5) and a few ulps."""
import importlib.util
import os

import numpy as np
import pytest

import ampjit

OPS = ["log2", "log10", "expm1", "atan"]
# Max ulps from torch's float32 results (Sleef's u10 kernels): ours are within 2, 2, 1 and 3 ulps
# of the correctly rounded value, Sleef's within 1.
MAX_ULPS = {"log2": 3, "log10": 3, "expm1": 2, "atan": 4}


def sweep():
    rng = np.random.default_rng(0)
    bits = rng.integers(0, 0x7f800000, size=200000, dtype=np.int64).astype(np.uint32)
    xs = [bits.view(np.float32), rng.uniform(-20, 20, size=100000).astype(np.float32)]
    m = np.array([1.0, 1.0000001, 1.3333334, 1.4142135, 1.5, 1.9999999], dtype=np.float32)
    e = np.arange(-149, 128)
    xs.append((m[None, :] * np.ldexp(np.float32(1), e)[:, None]).astype(np.float32).ravel())
    xs.append(np.array([0.0, 1e-45, 1e-40, 1e-38, 1.1754942e-38, 1e-30, 2.9e-8, 1e-7, 1.0, 2.0,
                        0.41421357, 2.4142137, 16.0, 17.5, 88.72, 88.73, 100.0, 3.4e38,
                        np.inf, np.nan], dtype=np.float32))
    x = np.concatenate(xs)
    return np.concatenate([x, -x])


def ulps(a, b):
    def ordered(v):
        i = v.astype(np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7fffffff), i)
    both = np.isfinite(a) & np.isfinite(b)
    return int(np.max(np.abs(ordered(a[both]) - ordered(b[both])), initial=0))


def check_same(got, want, op, rtol=1.3e-6, atol=1e-5):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=op + ": NaNs")
    inf = np.isinf(want) | np.isinf(got)
    np.testing.assert_array_equal(got[inf], want[inf], err_msg=op + ": infinities")
    zero = want == 0
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]),
                                  err_msg=op + ": signed zeros")
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=op)


@pytest.mark.parametrize("op", OPS)
def test_float32_sweep_matches_torch(torch_ref, op):
    x = sweep()
    got = getattr(ampjit, op)(ampjit.from_numpy(x)).numpy()
    want = getattr(torch_ref, op)(torch_ref.from_numpy(x)).numpy()
    check_same(got, want, op)
    worst = ulps(got, want)
    print("{}: max {} ulp from torch over {} floats".format(op, worst, x.size))
    assert worst <= MAX_ULPS[op]
    # a strided view (the scalar formula) gives the same bits as the dense kernel
    x2 = x[: (x.size // 2) * 2].reshape(2, -1)
    strided = getattr(ampjit, op)(ampjit.from_numpy(x2).t()).numpy().T.ravel()
    np.testing.assert_array_equal(strided.view(np.uint32), got[: x2.size].view(np.uint32))


def torch_op(torch, op, t):
    """torch's result; torch 1.13 has no float16 kernel for these on the CPU, so there the float32
    one rounded to float16 (ampjit's float16 computes in float32 and rounds once)."""
    if t.dtype == torch.float16:
        return getattr(torch, op)(t.float()).half()
    return getattr(torch, op)(t)


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype,rtol", [("bfloat16", 1.6e-2), ("float16", 1e-3)])
def test_reduced_precision_matches_torch(torch_ref, op, dtype, rtol):
    x = sweep()
    t = torch_ref.from_numpy(x).to(getattr(torch_ref, dtype))
    a = ampjit.from_numpy(x).to(getattr(ampjit, dtype))
    want = torch_op(torch_ref, op, t).float().numpy()
    got = getattr(ampjit, op)(a).float().numpy()
    check_same(got, want, op, rtol=rtol)


@pytest.fixture(scope="module")
def opdb(torch_ref):
    path = os.path.join(os.path.dirname(__file__), "..", "opdb", "opdb.py")
    spec = importlib.util.spec_from_file_location("ampjit_opdb_harness", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("op", OPS)
def test_op_db_samples_match_torch(torch_ref, opdb, op):
    info = next(o for o in opdb.op_db if o.name == op and not o.variant_test_name)
    n = 0
    for dtype in (torch_ref.float32, torch_ref.bfloat16, torch_ref.float16, torch_ref.int64):
        for s in info.sample_inputs("cpu", dtype):
            want = torch_op(torch_ref, op, s.input)
            got = getattr(ampjit, op)(opdb.to_ampjit_tensor(s.input))
            assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
            rtol = {torch_ref.bfloat16: 1.6e-2, torch_ref.float16: 1e-3}.get(dtype, 1.3e-6)
            check_same(got.float().numpy(), want.float().numpy(), op, rtol=rtol)
            n += 1
    assert n > 0
