"""The sorting and selection ops against torch 1.13 (the `torch_ref` fixture): the order torch gives
equal elements (sort without `stable`, topk, kthvalue, mode, median's index; Note [Torch's order of
ties] in kernels/cpu/sort_ops.cpp), unique's hash-set order, named results, out= tuples, scripted
and traced calls, and gradients."""
import os
import subprocess
import sys

import numpy as np
import pytest

import ampjit


def both(torch_ref, fn):
    return fn(ampjit), fn(torch_ref)


def assert_same(a, b):
    """Same structure, dtypes, shapes and values (NaN equal to NaN), exactly."""
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
        return
    assert repr(a.dtype) == repr(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    va = a.detach().double().reshape(-1).tolist() if a.dtype != ampjit.bool else \
        a.reshape(-1).tolist()
    vb = b.detach().double().reshape(-1).tolist() if str(b.dtype) != "torch.bool" else \
        b.reshape(-1).tolist()
    assert all(x == y or (x != x and y != y) for x, y in zip(va, vb)), (va, vb)


def tied_array(rng, shape, nan=False):
    """Small integers, so rows have many ties, and NaNs when asked."""
    a = rng.integers(-3, 4, size=shape).astype(np.float64)
    if nan:
        a[rng.random(shape) < 0.15] = np.nan
    return a


def make(lib, a, dtype, noncontig=False):
    t = lib.tensor(a.T.copy() if noncontig else a).to(getattr(lib, dtype))
    return t.t() if noncontig else t


FLOATS = ["float64", "float32", "bfloat16"]
INTS = ["int64", "int32", "int16", "int8", "uint8"]


@pytest.mark.parametrize("dtype", FLOATS + ["float16"] + INTS + ["bool"])
def test_sort_orders_ties_as_torch(torch_ref, dtype):
    rng = np.random.default_rng(0)
    for shape in [(3, 17), (2, 100), (5, 1000)]:
        a = tied_array(rng, shape, nan=dtype.startswith(("float", "bfloat")))
        if dtype == "uint8":
            a = np.abs(np.nan_to_num(a))
        for noncontig in (False, True):
            for dim in (-1, 0):
                for desc in (False, True):
                    got, want = both(torch_ref, lambda L: L.sort(
                        make(L, a, dtype, noncontig), dim=dim, descending=desc))
                    assert_same(got, want)
                    got, want = both(torch_ref, lambda L: L.argsort(
                        make(L, a, dtype, noncontig), dim=dim, descending=desc))
                    assert_same(got, want)


@pytest.mark.parametrize("dtype", FLOATS + INTS)
def test_selection_orders_ties_as_torch(torch_ref, dtype):
    rng = np.random.default_rng(1)
    nan = dtype in FLOATS
    for n in (5, 64, 257):
        a = tied_array(rng, (4, n), nan=nan)
        if dtype == "uint8":
            a = np.abs(np.nan_to_num(a))
        for k in sorted({1, 2, n // 2, n}):
            for largest in (True, False):
                for srt in (True, False):
                    got, want = both(torch_ref, lambda L: L.topk(
                        make(L, a, dtype), k, largest=largest, sorted=srt))
                    assert_same(got, want)
            got, want = both(torch_ref, lambda L: L.kthvalue(make(L, a, dtype, True), k, 1))
            assert_same(got, want)
        for fn in ("median", "nanmedian", "mode"):
            # torch's mode sorts with `<`, which NaN leaves without an order (the standard library's
            # sort is then undefined); ampjit's sorts NaN last (Note [Torch's order of ties])
            b = np.nan_to_num(a) if fn == "mode" else a
            for keepdim in (False, True):
                got, want = both(torch_ref, lambda L: getattr(L, fn)(
                    make(L, b, dtype, True), 1, keepdim=keepdim))
                assert_same(got, want)
        got, want = both(torch_ref, lambda L: (L.median(make(L, a, dtype)),
                                               L.nanmedian(make(L, a, dtype))))
        assert_same(got, want)


def test_nanmedian_of_all_nan_rows_and_cumulative_extremes(torch_ref):
    a = np.full((3, 7), np.nan)
    got, want = both(torch_ref, lambda L: L.nanmedian(L.tensor(a), 1))
    assert_same(got, want)
    rng = np.random.default_rng(2)
    b = tied_array(rng, (4, 30), nan=True)
    for fn in ("cummax", "cummin"):
        got, want = both(torch_ref, lambda L: getattr(L, fn)(L.tensor(b), 1))
        assert_same(got, want)


@pytest.mark.parametrize("dtype", ["float64", "float32", "bfloat16", "int64", "uint8", "bool"])
def test_unique_matches_torch_sorted_and_in_hash_order(torch_ref, dtype):
    rng = np.random.default_rng(3)
    a = rng.integers(0, 9, size=(6, 5)).astype(np.float64)
    for srt in (True, False):
        for inv in (True, False):
            for counts in (True, False):
                got, want = both(torch_ref, lambda L: L.unique(
                    make(L, a, dtype, True), sorted=srt, return_inverse=inv,
                    return_counts=counts))
                assert_same(got, want)
                got, want = both(torch_ref, lambda L: make(L, a, dtype).unique(
                    sorted=srt, return_inverse=inv, return_counts=counts, dim=1))
                assert_same(got, want)
                got, want = both(torch_ref, lambda L: L.unique_consecutive(
                    make(L, a, dtype), return_inverse=inv, return_counts=counts))
                assert_same(got, want)
                got, want = both(torch_ref, lambda L: make(L, a, dtype).unique_consecutive(
                    return_inverse=inv, return_counts=counts, dim=0))
                assert_same(got, want)
    got, want = both(torch_ref, lambda L: L.unique(
        L.tensor([float("nan"), 1.0, float("nan"), 2.0, 1.0, -0.0, 0.0]), sorted=False,
        return_inverse=True, return_counts=True))
    assert_same(got, want)


def test_searchsorted_and_bucketize_match_torch(torch_ref):
    rng = np.random.default_rng(4)
    bd = np.sort(rng.integers(-5, 6, size=(3, 9)).astype(np.float64), axis=1)
    x = rng.integers(-6, 7, size=(3, 4)).astype(np.float64)
    for right in (False, True):
        for dtype in ("float32", "bfloat16", "float16", "int64", "int8"):
            got, want = both(torch_ref, lambda L: (
                L.searchsorted(make(L, bd, dtype), make(L, x, dtype), right=right),
                L.searchsorted(make(L, bd[0], dtype), make(L, x, "float64"), out_int32=True,
                               side="right" if right else "left"),
                L.bucketize(make(L, x, dtype), make(L, bd[1], dtype), right=right),
                L.searchsorted(make(L, bd[2], dtype), 2.5),
                L.bucketize(3, make(L, bd[2], dtype))))
            assert_same(got, want)
    order = np.argsort(x[0], kind="stable")
    got, want = both(torch_ref, lambda L: L.searchsorted(
        L.tensor(x[0]), L.tensor(bd[0]), sorter=L.tensor(order)))
    assert_same(got, want)


def test_named_results_and_out_tuples(torch_ref):
    x = ampjit.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    r = ampjit.sort(x)
    assert type(r).__name__ == "sort" and r.values is r[0] and r.indices is r[1]
    for fn in (ampjit.topk(x, 2), ampjit.kthvalue(x, 1), ampjit.median(x, 1), ampjit.mode(x),
               ampjit.cummax(x, 1), ampjit.nanmedian(x, 0), ampjit.cummin(x, 0)):
        assert fn._fields == ("values", "indices")
    v, i = ampjit.empty(0), ampjit.empty(0, dtype=ampjit.int64)
    out = ampjit.sort(x, 1, True, out=(v, i))
    assert out[0] is v and out[1] is i
    assert v.tolist() == [[3.0, 2.0, 1.0], [5.0, 4.0, 0.0]] and i.tolist() == [[0, 2, 1], [1, 2, 0]]
    t = ampjit.tensor([5.0, 1.0, 4.0])
    with pytest.raises(RuntimeError, match="unsupported operation"):
        ampjit.kthvalue(t, 2, out=(t, ampjit.empty((), dtype=ampjit.int64)))


SCRIPT_SRC = """
import ampjit as torch
from typing import Tuple
from ampjit import Tensor


def sorts(x: Tensor) -> Tuple[Tensor, Tensor]:
    v, i = torch.sort(x, dim=1, descending=True)
    tv, ti = torch.topk(x, 2)
    k = torch.kthvalue(x, 2, 1)
    m, mi = torch.median(x, 0)
    return (v + tv.sum() + k[0].unsqueeze(1) + m.sum(),
            i + ti.sum() + torch.argsort(x, dim=0) + k[1].unsqueeze(1) + mi.sum())
"""


def test_scripted_and_traced_sorts_give_eager_results(program_modules):
    x = np.array([[3.0, 1.0, 2.0, 1.0], [0.0, 5.0, 4.0, 5.0], [2.0, 2.0, 2.0, 2.0]])
    results = {}
    for mod, lib in program_modules("sorting_script", SCRIPT_SRC):
        t = lib.tensor(x)
        eager = mod.sorts(t)
        scripted = lib.jit.script(mod.sorts)
        traced = lib.jit.trace(mod.sorts, (t,))
        for impl in (scripted, traced):
            assert_same(impl(t), eager)
        if lib is ampjit:
            assert "aten::sort" in str(scripted.graph) and "aten::topk" in str(traced.graph)
        results[lib.__name__] = eager
    if "torch" in results:
        assert_same(results["ampjit"], results["torch"])


GRAD_CASES = [
    ("sort", lambda L, x: L.sort(x, 0, descending=True)[0]),
    ("sort_stable", lambda L, x: L.sort(x, stable=True, dim=1)[0]),
    ("msort", lambda L, x: L.msort(x)),
    ("topk", lambda L, x: L.topk(x, 2, 1)[0]),
    ("kthvalue", lambda L, x: L.kthvalue(x, 2, 0)[0]),
    ("median_dim", lambda L, x: L.median(x, 1, keepdim=True)[0]),
    ("nanmedian_dim", lambda L, x: L.nanmedian(x, 0)[0]),
    ("median", lambda L, x: L.median(x)),
    ("nanmedian", lambda L, x: L.nanmedian(x)),
    ("mode", lambda L, x: L.mode(L.round(x), 1)[0] + L.mode(x, 0)[0].sum()),
    ("cummax", lambda L, x: L.cummax(x, 1)[0]),
    ("cummin", lambda L, x: L.cummin(x, 0)[0]),
    ("logcumsumexp", lambda L, x: L.logcumsumexp(x, 1)),
]


@pytest.mark.parametrize("name,fn", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_torch_and_gradcheck(torch_ref, name, fn):
    a = np.random.default_rng(5).normal(size=(4, 5)) * 2

    def run(lib):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        out = fn(lib, x)
        g = lib.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
        out.backward(g)
        return out, x.grad
    got, want = both(torch_ref, run)
    for a_, b_ in zip(got, want):
        np.testing.assert_allclose(a_.detach().numpy(), b_.detach().numpy(), rtol=1e-9, atol=1e-12)
    x = ampjit.tensor(a, dtype=ampjit.float64, requires_grad=True)
    if name not in ("mode",):  # mode's value jumps where rounding changes
        assert ampjit.autograd.gradcheck(lambda t: fn(ampjit, t), (x,))


def test_searchsorted_warns_once_per_operand_it_copies():
    """torch 1.13's warnings for non-contiguous operands, once per process each (a fresh one)."""
    code = ("import warnings, ampjit\n"
            "warnings.simplefilter('always')\n"
            "b = ampjit.arange(8.0)[::2]\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    ampjit.searchsorted(b, b)\n"
            "    ampjit.searchsorted(b, b)\n"
            "    ampjit.searchsorted(ampjit.arange(4.0), ampjit.arange(3.0), sorter="
            "ampjit.stack([ampjit.arange(4), ampjit.arange(4)], 1)[:, 0])\n"
            "for x in w:\n"
            "    print(x.category.__name__, x.message)\n")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(ampjit.__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=env)
    lines = out.stdout.splitlines()
    assert [ln.split(" ")[0] for ln in lines] == ["UserWarning"] * 3, out.stdout + out.stderr
    for line, what in zip(lines, ("input value", "boundary", "sorter")):
        assert line == (
            "UserWarning torch.searchsorted(): {0} tensor is non-contiguous, this will lower the "
            "performance due to extra data copy when converting non-contiguous tensor to "
            "contiguous, please use contiguous {0} tensor if possible. This message will only "
            "appear once per program.".format(what))
