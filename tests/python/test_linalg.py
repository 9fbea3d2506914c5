"""torch.linalg and torch's linear-algebra ops against torch 1.13 (the `torch_ref` fixture): values,
named results and LAPACK's sign conventions, gradients (gradcheck in float64 and torch's own
gradients), scripted and traced calls, and torch's errors (LinAlgError for singular and
non-positive-definite input, NotImplementedError naming complex for complex spectra)."""
import numpy as np
import pytest

import ampjit


def both(torch_ref, fn):
    return fn(ampjit), fn(torch_ref)


def assert_close(a, b, rtol=1e-7, atol=1e-9):
    if isinstance(b, (tuple, list)):
        assert isinstance(a, (tuple, list)) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_close(x, y, rtol, atol)
        return
    assert repr(a.dtype) == repr(b.dtype), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    np.testing.assert_allclose(a.detach().double().numpy(), b.detach().double().numpy(), rtol=rtol,
                               atol=atol)


def rand(shape, seed=0):
    return np.random.default_rng(seed).normal(size=shape)


def spd(n, batch=(), seed=0):
    x = rand(batch + (n, n), seed)
    return x @ np.swapaxes(x, -1, -2) + n * np.eye(n)


def sym(n, seed=0):
    x = rand((n, n), seed)
    return x + x.T


# ---- values, signs and named results ------------------------------------------------------------

VALUE_CASES = [
    ("det", lambda L, a: L.linalg.det(a), (3, 4, 4)),
    ("slogdet", lambda L, a: tuple(L.linalg.slogdet(a)), (2, 3, 3)),
    ("logdet", lambda L, a: L.logdet(a @ a.mT), (3, 3)),
    ("inv", lambda L, a: L.linalg.inv(a), (2, 4, 4)),
    ("solve", lambda L, a: L.linalg.solve(a, a[..., 0]), (3, 3)),
    ("lu_factor", lambda L, a: tuple(L.linalg.lu_factor(a)), (2, 4, 3)),
    ("lu", lambda L, a: tuple(L.linalg.lu(a)), (3, 5)),
    ("qr", lambda L, a: tuple(L.linalg.qr(a)), (5, 3)),
    ("qr_complete", lambda L, a: tuple(L.linalg.qr(a, "complete")), (5, 3)),
    ("svd", lambda L, a: tuple(L.linalg.svd(a, full_matrices=False)), (2, 5, 3)),
    ("svdvals", lambda L, a: L.linalg.svdvals(a), (4, 6)),
    ("eigh", lambda L, a: tuple(L.linalg.eigh(a + a.mT)), (4, 4)),
    ("cholesky", lambda L, a: L.linalg.cholesky(a @ a.mT + 4 * L.eye(4, dtype=a.dtype)), (4, 4)),
    ("pinv", lambda L, a: L.linalg.pinv(a), (5, 3)),
    ("matrix_rank", lambda L, a: L.linalg.matrix_rank(a), (4, 3)),
    ("matrix_norm_nuc", lambda L, a: L.linalg.matrix_norm(a, "nuc"), (3, 4)),
    ("norm_fro", lambda L, a: L.norm(a, "fro"), (3, 4)),
    ("cond", lambda L, a: L.linalg.cond(a), (3, 3)),
    ("matrix_exp", lambda L, a: L.linalg.matrix_exp(a), (2, 3, 3)),
    ("matrix_power", lambda L, a: L.linalg.matrix_power(a, -3), (3, 3)),
    ("lstsq", lambda L, a: L.linalg.lstsq(a, a[..., :2]).solution, (6, 3)),
    ("householder_product", lambda L, a: L.linalg.householder_product(*L.geqrf(a)), (5, 3)),
    ("cross", lambda L, a: L.linalg.cross(a, a.flip(0)), (3, 3)),
    ("multi_dot", lambda L, a: L.linalg.multi_dot([a, a.mT, a, a.mT]), (3, 4)),
]


@pytest.mark.parametrize("name,fn,shape", VALUE_CASES, ids=[c[0] for c in VALUE_CASES])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_values_match_torch(torch_ref, name, fn, shape, dtype):
    a = rand(shape, 1)
    got, want = both(torch_ref, lambda L: fn(L, L.tensor(a).to(getattr(L, dtype))))
    if dtype == "float64":
        assert_close(got, want)
    else:
        assert_close(got, want, rtol=1e-4, atol=1e-5)


def test_named_results_have_torchs_fields(torch_ref):
    a = spd(3)
    for name, call in [("eigh", lambda L, t: L.linalg.eigh(t)),
                       ("slogdet", lambda L, t: L.linalg.slogdet(t)),
                       ("lu_factor_ex", lambda L, t: L.linalg.lu_factor_ex(t)),
                       ("qr", lambda L, t: L.linalg.qr(t)),
                       ("svd", lambda L, t: L.linalg.svd(t)),
                       ("lstsq", lambda L, t: L.linalg.lstsq(t, t)),
                       ("cholesky_ex", lambda L, t: L.linalg.cholesky_ex(t))]:
        got, want = both(torch_ref, lambda L: call(L, L.tensor(a)))
        assert len(got) == len(want), name
        for i, field in enumerate(got._fields):  # torch's are structseqs: fields by attribute
            assert_close(getattr(got, field), getattr(want, field))
            assert getattr(got, field) is got[i]
        assert type(got).__name__ == type(want).__name__, name


def test_every_torch_linalg_name_exists(torch_ref):
    names = [n for n in dir(torch_ref.linalg) if not n.startswith("_") and n not in
             ("Tensor", "common_notes", "sys", "torch")]
    assert len(names) == 42
    missing = [n for n in names if not hasattr(ampjit.linalg, n)]
    assert missing == []
    assert issubclass(ampjit.linalg.LinAlgError, RuntimeError)


def test_out_tuples_are_written(torch_ref):
    a = spd(3)
    t = ampjit.tensor(a)
    L, info = ampjit.empty(0, dtype=ampjit.float64), ampjit.empty(0, dtype=ampjit.int32)
    r = ampjit.linalg.cholesky_ex(t, out=(L, info))
    assert r[0] is L and r[1] is info
    assert_close(L, torch_ref.linalg.cholesky_ex(torch_ref.tensor(a)).L)
    out = ampjit.empty(0, dtype=ampjit.float64)
    ampjit.linalg.det(t, out=out)
    assert_close(out, torch_ref.linalg.det(torch_ref.tensor(a)))


# ---- gradients --------------------------------------------------------------------------------

GRAD_CASES = [
    ("det", lambda L, x: L.linalg.det(x), (3, 3)),
    ("slogdet", lambda L, x: L.linalg.slogdet(x)[1], (2, 3, 3)),
    ("inv", lambda L, x: L.linalg.inv(x), (3, 3)),
    ("solve", lambda L, x: L.linalg.solve(x, x.sum(-1)), (2, 3, 3)),
    ("lu_factor", lambda L, x: L.linalg.lu_factor(x)[0], (4, 4)),
    ("lu_wide", lambda L, x: L.linalg.lu(x)[2], (3, 5)),
    ("lu_tall", lambda L, x: L.linalg.lu(x)[1], (5, 3)),
    ("lu_solve", lambda L, x: L.linalg.lu_solve(*L.linalg.lu_factor(x), x.mT), (3, 3)),
    ("solve_triangular", lambda L, x: L.linalg.solve_triangular(
        x.triu() + 3 * L.eye(3, dtype=x.dtype), x, upper=True), (3, 3)),
    ("solve_triangular_right", lambda L, x: L.linalg.solve_triangular(
        x.tril() + 3 * L.eye(3, dtype=x.dtype), x, upper=False, left=False), (3, 3)),
    ("cholesky", lambda L, x: L.linalg.cholesky(x @ x.mT + 3 * L.eye(3, dtype=x.dtype)), (3, 3)),
    ("cholesky_upper", lambda L, x: L.linalg.cholesky(x @ x.mT + 3 * L.eye(3, dtype=x.dtype),
                                                       upper=True), (3, 3)),
    ("qr_tall", lambda L, x: L.linalg.qr(x)[0] + L.linalg.qr(x)[1].sum(), (5, 3)),
    ("qr_wide", lambda L, x: L.linalg.qr(x)[0].sum() + L.linalg.qr(x)[1], (3, 5)),
    ("svd", lambda L, x: L.linalg.svd(x, full_matrices=False)[1], (4, 3)),
    ("svd_uv", lambda L, x: (lambda u, s, vh: (u @ vh.mT.mT).abs().sum() + s.sum())(
        *L.linalg.svd(x, full_matrices=False)), (3, 3)),
    ("eigh", lambda L, x: (lambda w, v: w.sum() + (v * v).sum(0))(*L.linalg.eigh(x + x.mT)), (4, 4)),
    ("eigvalsh", lambda L, x: L.linalg.eigvalsh(x + x.mT), (3, 3)),
    ("pinv", lambda L, x: L.linalg.pinv(x), (4, 3)),
    ("matrix_exp", lambda L, x: L.linalg.matrix_exp(x), (3, 3)),
    ("matrix_norm_2", lambda L, x: L.linalg.matrix_norm(x, 2), (3, 4)),
    ("lstsq", lambda L, x: L.linalg.lstsq(x, x[:, :2].exp()).solution, (5, 3)),
    ("cross", lambda L, x: L.linalg.cross(x, x.flip(0)), (3, 3)),
    ("householder_product", lambda L, x: L.linalg.householder_product(x, x[0].tanh()), (5, 3)),
    ("householder_product_short_tau", lambda L, x: L.linalg.householder_product(x, x[1, :2]), (4, 3)),
    ("eig_real_spectrum", lambda L, x: L.linalg.eig(x.triu() + L.diag(L.arange(3.0, dtype=x.dtype)))[0]
     .real if L is not ampjit else L.linalg.eig(x.triu() + L.diag(L.arange(3.0, dtype=x.dtype)))[0], (3, 3)),
    ("cholesky_solve", lambda L, x: L.cholesky_solve(
        x, L.linalg.cholesky(x @ x.mT + 3 * L.eye(3, dtype=x.dtype))), (3, 3)),
]


@pytest.mark.parametrize("name,fn,shape", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradients_match_torch_and_gradcheck(torch_ref, name, fn, shape):
    a = rand(shape, 3) + 2 * np.eye(shape[-2], shape[-1])

    def run(lib):
        x = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        out = fn(lib, x)
        g = lib.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)),
                       dtype=out.dtype)
        out.backward(g)
        return out, x.grad
    got, want = both(torch_ref, run)
    for x, y in zip(got, want):
        np.testing.assert_allclose(x.detach().numpy(), y.detach().numpy(), rtol=1e-7, atol=1e-9)
    x = ampjit.tensor(a, dtype=ampjit.float64, requires_grad=True)
    assert ampjit.autograd.gradcheck(lambda t: fn(ampjit, t), (x,))


# ---- script and trace -------------------------------------------------------------------------

SCRIPT_SRC = """
import ampjit as torch
from typing import Tuple
from ampjit import Tensor


def linalg_program(x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    sign, logabsdet = torch.linalg.slogdet(x)
    q, r = torch.linalg.qr(x)
    y = torch.linalg.solve(x, torch.linalg.inv(x) @ x) + torch.linalg.det(x).unsqueeze(-1).unsqueeze(-1)
    n = torch.linalg.matrix_norm(x, "fro") + torch.linalg.vector_norm(x, 3.0) + torch.norm(x)
    return y + q @ r, sign * logabsdet + n, torch.linalg.eigvalsh(x @ x.transpose(-2, -1))
"""


def test_scripted_and_traced_linalg_give_eager_results(program_modules):
    x = spd(3, (2,), 4) + rand((2, 3, 3), 5)
    results = {}
    for mod, lib in program_modules("linalg_script", SCRIPT_SRC):
        t = lib.tensor(x)
        eager = mod.linalg_program(t)
        scripted = lib.jit.script(mod.linalg_program)
        traced = lib.jit.trace(mod.linalg_program, (t,))
        for impl in (scripted, traced):
            assert_close(impl(t), eager, rtol=1e-12, atol=1e-12)
        if lib is ampjit:
            assert "aten::linalg_slogdet" in str(scripted.graph)
            assert "aten::linalg_qr" in str(traced.graph)
        results[lib.__name__] = eager
    if "torch" in results:
        assert_close(results["ampjit"], results["torch"])


# ---- errors -----------------------------------------------------------------------------------

def test_singular_and_indefinite_inputs_raise_linalg_error(torch_ref):
    singular = np.zeros((2, 3, 3))
    singular[0] = np.eye(3)
    for call in [lambda L, t: L.linalg.inv(t), lambda L, t: L.linalg.solve(t, t),
                 lambda L, t: L.linalg.cholesky(t), lambda L, t: L.inverse(t)]:
        msgs = []
        for L in (ampjit, torch_ref):
            with pytest.raises(L.linalg.LinAlgError) as e:
                call(L, L.tensor(singular))
            msgs.append(str(e.value).splitlines()[0])
        assert msgs[0] == msgs[1]
    with pytest.raises(RuntimeError, match=r"U\[1,1\] is zero"):
        ampjit.linalg.lu_factor(ampjit.zeros(3, 3))


def test_bad_shapes_and_dtypes_raise_torchs_messages(torch_ref):
    cases = [
        lambda L: L.linalg.det(L.zeros(2, 3)),
        lambda L: L.linalg.cholesky(L.zeros(3)),
        lambda L: L.linalg.inv(L.zeros(3, 3, dtype=L.int64)),
        lambda L: L.linalg.cross(L.zeros(5, 2), L.zeros(5, 2)),
        lambda L: L.linalg.matrix_norm(L.zeros(3, 3), 3),
        lambda L: L.linalg.qr(L.zeros(3, 3), "full"),
        lambda L: L.linalg.multi_dot([L.zeros(3)]),
        lambda L: L.ormqr(L.zeros(5, 0), L.zeros(5), L.zeros(5, 5)),
    ]
    for case in cases:
        msgs = []
        for L in (ampjit, torch_ref):
            with pytest.raises(RuntimeError) as e:
                case(L)
            msgs.append(str(e.value).splitlines()[0])
        assert msgs[0] == msgs[1]


def test_complex_spectra_are_not_implemented():
    rotation = ampjit.tensor([[0.0, -1.0], [1.0, 0.0]])
    with pytest.raises(NotImplementedError, match="complex"):
        ampjit.linalg.eig(rotation)
    with pytest.raises(NotImplementedError, match="complex"):
        ampjit.linalg.eigvals(rotation)
    w, v = ampjit.linalg.eig(ampjit.tensor([[2.0, 1.0], [0.0, 3.0]]))
    assert sorted(w.tolist()) == [2.0, 3.0]


def test_linalg_out_tensors_must_have_the_result_dtype(torch_ref):
    """Note [torch.linalg's out= dtypes]: no cast into a linalg out= tensor, as torch."""
    for call in [lambda L, o: L.linalg.det(L.eye(3), out=o),
                 lambda L, o: L.linalg.cholesky(L.eye(3), out=o),
                 lambda L, o: L.linalg.svdvals(L.eye(3), out=o),
                 lambda L, o: L.linalg.slogdet(L.eye(3), out=(o, L.empty(0)))]:
        msgs = []
        for L in (ampjit, torch_ref):
            with pytest.raises(RuntimeError) as e:
                call(L, L.empty(0, dtype=L.float64))
            msgs.append(str(e.value).splitlines()[0])
        assert msgs[0] == msgs[1]
    out = ampjit.empty(0, dtype=ampjit.float64)
    ampjit.linalg.inv(ampjit.eye(3, dtype=ampjit.float64), out=out)
    assert out.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_svdvals_and_eigvalsh_gradients_stay_finite_for_repeated_values(torch_ref):
    """Without gradients for the vectors, torch's short formulas: no 0/0 between equal values."""
    a = np.diag([2.0, 2.0, 1.0])

    def run(lib):
        grads = []
        for fn in (lambda x: lib.linalg.svdvals(x), lambda x: lib.linalg.eigvalsh(x),
                   lambda x: lib.linalg.matrix_norm(x, "nuc")):
            x = lib.tensor(a, requires_grad=True)
            fn(x).sum().backward()
            grads.append(x.grad)
        return grads
    got, want = both(torch_ref, run)
    for g in got:
        assert np.isfinite(g.numpy()).all()
    assert_close(got, want)


MT_SRC = """
import ampjit as torch
from ampjit import Tensor


def adjoints(x: Tensor) -> Tensor:
    return x.mT @ x + x.mH
"""


def test_mT_and_mH_are_torchs_ops_in_script_and_trace(program_modules, torch_ref):
    x = rand((2, 3, 3), 6)
    for mod, lib in program_modules("linalg_mt", MT_SRC):
        t = lib.tensor(x)
        scripted = lib.jit.script(mod.adjoints)
        traced = lib.jit.trace(mod.adjoints, (t,))
        for impl in (scripted, traced):
            assert_close(impl(t), mod.adjoints(t), rtol=0, atol=0)
        for graph in (str(scripted.graph), str(traced.graph)):
            assert "aten::mT" in graph and "aten::mH" in graph
    msgs = []
    for L in (ampjit, torch_ref):
        with pytest.raises(RuntimeError) as e:
            L.zeros(3).mT
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


SECOND_ORDER = [
    ("det", lambda L, x: L.linalg.det(x)),
    ("inv", lambda L, x: L.linalg.inv(x).sum()),
    ("cholesky", lambda L, x: L.linalg.cholesky(x @ x.mT + 3 * L.eye(3, dtype=x.dtype)).sum()),
    ("svdvals", lambda L, x: L.linalg.svdvals(x).sum()),
    ("eigh", lambda L, x: (L.linalg.eigh(x + x.mT)[1] ** 2)[0].sum() + L.linalg.eigvalsh(x + x.mT)[2]),
    ("qr", lambda L, x: L.linalg.qr(x)[1].sum()),
]


@pytest.mark.parametrize("name,fn", SECOND_ORDER, ids=[c[0] for c in SECOND_ORDER])
def test_second_derivatives_match_torch(torch_ref, name, fn):
    """The formulas are made of ops: create_graph records them, as torch's double backward."""
    a = rand((3, 3), 8) + 2 * np.eye(3)

    def run(lib):
        x = lib.tensor(a, requires_grad=True)
        (g,) = lib.autograd.grad(fn(lib, x), (x,), create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), (x,))
        return g, gg
    got, want = both(torch_ref, run)
    assert_close(got, want, rtol=1e-6, atol=1e-8)


# ---- gradients on op_db's own samples ----------------------------------------------------------

OPDB_GRAD_OPS = ["linalg.det", "linalg.slogdet", "logdet", "linalg.inv", "linalg.solve",
                 "linalg.cholesky", "linalg.qr", "linalg.svd", "linalg.svdvals", "linalg.eigh",
                 "linalg.eigvalsh", "linalg.lu_factor", "linalg.lu", "linalg.lu_solve", "lu_unpack",
                 "linalg.solve_triangular", "triangular_solve", "cholesky_solve", "cholesky_inverse",
                 "linalg.pinv", "linalg.lstsq", "linalg.householder_product", "linalg.matrix_norm",
                 "linalg.tensorinv", "matrix_exp", "linalg.cross", "linalg.multi_dot"]


@pytest.fixture(scope="module")
def opdb(torch_ref):
    """tests/opdb/opdb.py (op_db, and its translation of torch samples and callables to ampjit)."""
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "opdb", "opdb.py")
    spec = importlib.util.spec_from_file_location("ampjit_opdb_harness", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("name", OPDB_GRAD_OPS)
def test_gradients_on_op_db_samples_match_torch(torch_ref, opdb, name):
    """The first samples op_db gives each differentiable op, through its output_process_fn_grad
    (which makes SVD, QR and eigenvectors unique): ampjit's float64 gradients are torch's, and
    gradcheck holds."""
    torch = torch_ref
    op = next(o for o in opdb.op_db if o.name == name and not o.variant_test_name)
    def leaves_of(s):
        if isinstance(s.input, (list, tuple)):
            return [t for t in s.input if t.requires_grad]
        return [t for t in [s.input, *s.args, *s.kwargs.values()]
                if isinstance(t, torch.Tensor) and t.requires_grad]
    # the first three samples with no empty operand (an empty one has no gradient to compare)
    samples = [s for s in op.sample_inputs("cpu", torch.float64, requires_grad=True)
               if all(t.numel() > 0 for t in leaves_of(s))][:3]
    assert samples
    for s in samples:
        leaves = leaves_of(s)

        def loss(lib, fn, process, inp, args, kwargs, leaves):
            # op_db's gradcheck_wrapper (hermitian or triangular inputs where the op reads half)
            outs = process(wrapper(fn, inp, *args, **kwargs))
            outs = outs if isinstance(outs, (tuple, list)) else (outs,)
            total = 0
            for i, o in enumerate(outs):
                if isinstance(o, lib.Tensor) and o.is_floating_point():
                    w = lib.linspace(-1.0, 1.0, o.numel(), dtype=o.dtype).reshape(tuple(o.shape))
                    total = total + (o * w * (i + 1)).sum()
            return total

        # fresh leaves, so both sides differentiate with respect to the same tensors
        fresh = {id(t): t.detach().clone().requires_grad_() for t in leaves}

        def sub(v):
            if isinstance(v, torch.Tensor):
                return fresh.get(id(v), v)
            if isinstance(v, (list, tuple)):
                return type(v)(sub(x) for x in v)
            if isinstance(v, dict):
                return {k: sub(x) for k, x in v.items()}
            return v
        t_leaves = [fresh[id(t)] for t in leaves]
        wrapper = op.gradcheck_wrapper
        want = torch.autograd.grad(loss(torch, op.op, s.output_process_fn_grad, sub(s.input),
                                        sub(s.args), sub(s.kwargs), t_leaves), t_leaves)
        tr = opdb.Translator()
        a_leaves = []
        for t in leaves:
            a = opdb.to_ampjit_tensor(t).clone().requires_grad_()
            tr._memo[("tensor", id(t))] = a
            tr._keep.append(t)
            a_leaves.append(a)
        ain, aargs, akwargs = tr.value(s.input), tr.value(s.args), tr.value(s.kwargs)
        afn, aprocess = tr.obj(op.op), tr.obj(s.output_process_fn_grad)
        wrapper = tr.obj(op.gradcheck_wrapper)
        got = ampjit.autograd.grad(loss(ampjit, afn, aprocess, ain, aargs, akwargs, a_leaves),
                                   a_leaves)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6, atol=1e-8)

        def as_function(*xs):
            for t, x in zip(leaves, xs):
                tr._memo[("tensor", id(t))] = x
            return loss(ampjit, afn, aprocess, tr.value(s.input), tr.value(s.args),
                        tr.value(s.kwargs), xs)
        def torch_function(*xs):
            fresh.update({id(t): x for t, x in zip(leaves, xs)})
            return loss(torch, op.op, s.output_process_fn_grad, sub(s.input), sub(s.args),
                        sub(s.kwargs), xs)
        wrapper = op.gradcheck_wrapper
        torch_holds = torch.autograd.gradcheck(torch_function, tuple(t_leaves), raise_exception=False)
        wrapper = tr.obj(op.gradcheck_wrapper)
        # gradcheck where it holds for torch (lstsq's rank-deficient samples, matrix_exp's large
        # norms defeat finite differences for both)
        if torch_holds:
            assert ampjit.autograd.gradcheck(as_function, tuple(a_leaves))
