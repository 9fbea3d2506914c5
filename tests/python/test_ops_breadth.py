"""The Python faces of the op_db breadth work, against torch 1.13: advanced indexing and index
assignment (Note [Advanced indexing]), torch.special and torch.masked, the varargs functions
(atleast_*, broadcast_*, block_diag, cartesian_prod), nonzero/where with one argument, tensordot,
the bitwise operators in Python and script, decomposed ops in script and trace, and the
metadata-only in-place ops."""
import numpy as np
import pytest

import ampjit

torch = pytest.importorskip("torch")


def to_torch(a):
    return torch.from_numpy(np.array(a.numpy(), copy=True))


def same(a, t):
    assert tuple(a.shape) == tuple(t.shape), (tuple(a.shape), tuple(t.shape))
    np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=1e-6, atol=1e-6)


X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


@pytest.mark.parametrize("index", [
    (slice(None), [0, 2], slice(1, 3)),
    (Ellipsis, "t[1,3]"),
    ("mask>10",),
    (0, "t[[1],[2]]", "t[0,3]"),
    ("t[1]", slice(None), "t[0,2]"),
    ("t[[0,0,2]]",),
    (None, "t[2,1]", slice(None), 1),
    ("b[True,False,True]", slice(1, None)),
])
def test_advanced_indexing_matches_torch(index):
    def build(mod, x):
        out = []
        for i in index:
            if isinstance(i, str) and i.startswith("t"):
                out.append(mod.tensor(eval(i[1:])))
            elif isinstance(i, str) and i.startswith("b"):
                out.append(mod.tensor(eval(i[1:])))
            elif i == "mask>10":
                out.append(x > 10)
            else:
                out.append(i)
        return tuple(out)
    a, t = ampjit.from_numpy(X.copy()), torch.from_numpy(X.copy())
    same(a[build(ampjit, a)], t[build(torch, t)])
    a[build(ampjit, a)] = -1.0
    t[build(torch, t)] = -1.0
    same(a, t)


def test_index_errors_are_torchs():
    a = ampjit.zeros(3, 4)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        a[ampjit.tensor([5])]
    with pytest.raises(IndexError, match="The shape of the mask"):
        a[ampjit.ones(2, 4, dtype=ampjit.bool)]
    with pytest.raises(IndexError, match="shape mismatch: indexing tensors could not be broadcast"):
        a[ampjit.tensor([0, 1]), ampjit.tensor([0, 1, 2])]


def test_index_put_accumulates_repeated_positions_and_differentiates():
    z = ampjit.zeros(4)
    z.index_put_((ampjit.tensor([0, 0, 3]),), ampjit.tensor([1.0, 2.0, 3.0]), accumulate=True)
    assert z.tolist() == [3.0, 0.0, 0.0, 3.0]
    w = ampjit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w[ampjit.tensor([0, 0, 2])].sum().backward()
    assert w.grad.tolist() == [2.0, 0.0, 1.0]


def test_special_and_masked_namespaces():
    x = np.linspace(0.1, 3.0, 7)
    for name in ["expit", "erfcx", "i0e", "ndtri", "log_ndtr", "gammaln", "psi", "entr", "sinc"]:
        arg = np.clip(x / 3.0, 0.05, 0.95) if name == "ndtri" else x
        same(getattr(ampjit.special, name)(ampjit.from_numpy(arg)),
             getattr(torch.special, name)(torch.from_numpy(arg)))
    m = np.array([True, False, True, True, False, True, False])
    for name in ["sum", "amax", "mean", "var", "softmax", "logsumexp"]:
        kwargs = {"dim": 0}
        same(getattr(ampjit.masked, name)(ampjit.from_numpy(x), mask=ampjit.from_numpy(m), **kwargs),
             getattr(torch.masked, name)(torch.from_numpy(x), mask=torch.from_numpy(m), **kwargs))


def test_varargs_functions_and_single_argument_where():
    a, b = np.ones((2, 1)), np.arange(3.0)
    for name in ["atleast_1d", "atleast_2d", "atleast_3d"]:
        got = getattr(ampjit, name)(ampjit.from_numpy(a), ampjit.from_numpy(b))
        want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(b))
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            same(g, w)
    assert ampjit.broadcast_shapes((2, 1), (3,)) == torch.broadcast_shapes((2, 1), (3,))
    same(ampjit.block_diag(ampjit.ones(2, 2), ampjit.tensor(3.0)),
         torch.block_diag(torch.ones(2, 2), torch.tensor(3.0)))
    same(ampjit.cartesian_prod(ampjit.tensor([1, 2]), ampjit.tensor([3, 4, 5])),
         torch.cartesian_prod(torch.tensor([1, 2]), torch.tensor([3, 4, 5])))
    c = np.array([[0, 1, 0], [1, 1, 0]])
    for g, w in zip(ampjit.where(ampjit.from_numpy(c)), torch.where(torch.from_numpy(c))):
        same(g, w)
    for g, w in zip(ampjit.from_numpy(c).nonzero(as_tuple=True), torch.from_numpy(c).nonzero(as_tuple=True)):
        same(g, w)
    same(ampjit.tensordot(ampjit.ones(2, 3, 4), ampjit.ones(3, 4, 5), dims=2),
         torch.tensordot(torch.ones(2, 3, 4), torch.ones(3, 4, 5), dims=2))


def test_bitwise_operators_in_python_and_script():
    a, b = ampjit.tensor([12, 10, -7]), ampjit.tensor([10, 6, 3])
    t, u = torch.tensor([12, 10, -7]), torch.tensor([10, 6, 3])
    for op in ["&", "|", "^", "<<", ">>"]:
        same(eval("a {} b".format(op)), eval("t {} u".format(op)))
    same(~a, ~t)

    @ampjit.jit.script
    def f(x, y):
        return (x & y) | (x ^ y) << 1, ~x

    got, inv = f(a, b)
    same(got, (t & u) | (t ^ u) << 1)
    same(inv, ~t)
    assert "aten::__and__" in str(f.graph) and "aten::bitwise_not" in str(f.graph)


def test_decomposed_ops_script_and_trace_as_themselves():
    @ampjit.jit.script
    def f(x):
        return ampjit.diag(ampjit.logit(x, 1e-3)).trace() + ampjit.rot90(x.reshape(2, 2), 1, [0, 1]).sum()

    x = ampjit.tensor([0.2, 0.4, 0.6, 0.8])
    assert "aten::diag" in str(f.graph) and "aten::rot90" in str(f.graph)
    t = torch.tensor([0.2, 0.4, 0.6, 0.8])
    want = torch.diag(torch.logit(t, 1e-3)).trace() + torch.rot90(t.reshape(2, 2), 1, [0, 1]).sum()
    assert abs(f(x).item() - want.item()) < 1e-5
    traced = ampjit.jit.trace(lambda y: ampjit.tile(ampjit.kron(y, y), [2]), (x,))
    assert "aten::tile" in str(traced.graph) and "aten::kron" in str(traced.graph)


def test_metadata_inplace_ops_share_storage():
    x = ampjit.arange(6.0).reshape(2, 3)
    ptr = x.data_ptr()
    x.t_()
    assert tuple(x.shape) == (3, 2) and x.data_ptr() == ptr and x.stride() == (1, 3)
    x.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
    assert tuple(x.shape) == (2, 3)
    y = ampjit.arange(4.0)
    y.resize_(2, 3)  # grows, keeping the first four
    assert y.flatten()[:4].tolist() == [0.0, 1.0, 2.0, 3.0] and tuple(y.shape) == (2, 3)


def _unique_flags(x):
    a = torch.unique(x)
    b, inv = torch.unique(x, return_inverse=True)
    c, counts = torch.unique(x, sorted=True, return_counts=True)
    d, inv2, counts2 = torch.unique(x, return_inverse=True, return_counts=True, dim=0)
    e, n = torch.unique_consecutive(x, return_counts=True)
    return a, b, inv, c, counts, d, inv2, counts2, e, n


def _norm_strings(x):
    return torch.norm(x, "fro"), torch.norm(x, "fro", dim=1), torch.norm(x, "nuc"), \
        torch.norm(x, p="fro", dim=[0, 1], keepdim=True)


@pytest.mark.parametrize("fn", [_unique_flags, _norm_strings])
def test_python_functions_of_torch_script_as_torch(fn):
    """torch.unique / unique_consecutive (a dispatch on the constant return_inverse and
    return_counts) and torch.norm with a string p are Python in torch: scripted, each gives what
    torch's scripted function gives, result structure included."""
    x = np.array([[3., 1., 2.], [3., 1., 2.], [0., 5., 5.]], dtype=np.float32)
    want = torch.jit.script(fn)(torch.tensor(x))
    # the same source, compiled by ampjit with `torch` bound to ampjit
    got = ampjit.jit.script(_rebound(fn))(ampjit.tensor(x))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        same(g, w)


def _rebound(fn):
    import types
    return types.FunctionType(fn.__code__, {**fn.__globals__, "torch": ampjit}, fn.__name__)


@pytest.mark.parametrize("eq,shapes", [
    ("ii->i", [(4, 4)]), ("ii", [(3, 3)]), ("iji->j", [(2, 3, 2)]), ("bii,bi->b", [(2, 3, 3), (2, 3)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]), ("i...->...", [(3, 2, 2)]),
    ("...ik,...j->ij", [(1, 2, 3), (3,)]), ("i,j", [(3,), (4,)]),
])
def test_einsum_diagonals_and_ellipsis_as_torch(eq, shapes):
    """einsum takes a letter repeated in an operand (its diagonal) and '...' (broadcast), with
    torch's values, and torch's result dtype under CPU autocast (a multiply where nothing is
    contracted stays float32, a contraction runs in bfloat16)."""
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    same(ampjit.einsum(eq, *[ampjit.tensor(x) for x in xs]), torch.einsum(eq, *[torch.tensor(x) for x in xs]))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        want = torch.einsum(eq, *[torch.tensor(x) for x in xs])
    with ampjit.autocast("cpu", dtype=ampjit.bfloat16):
        got = ampjit.einsum(eq, *[ampjit.tensor(x) for x in xs])
    assert repr(got.dtype) == str(want.dtype)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "uint8", "float16", "bfloat16", "float32",
                                   "float64"])
def test_ranges_are_torchs_bit_for_bit(dtype):
    """linspace, logspace and arange give torch 1.13's values exactly in every dtype (Note
    [linspace and logspace as torch's]: its vector-at-a-time stepping and per-operation rounding;
    arange's integer step truncated, its float16/bfloat16 steps in float)."""
    cases = [("linspace", (-3.3, 7.7, 50)), ("linspace", (0, 10, 50)), ("linspace", (1.5, -20.25, 33)),
             ("linspace", (0, 100, 1000)), ("linspace", (-5, 5, 2)), ("logspace", (0, 2, 50)),
             ("logspace", (-2, 2, 17)), ("logspace", (1, 1.5, 1)), ("arange", (-0.9, 2.1, 2.0)),
             ("arange", (0, 300, 0.7)), ("arange", (-4, 17, 3)), ("arange", (-1000.5, 3000, 1.3)),
             ("linspace", (-1, 1, 5000)), ("linspace", (-100.3, 120.9, 77))]
    for fn, args in cases:
        if dtype == "uint8" and min(args[:2]) < 0 and fn != "logspace":
            continue
        try:
            want = getattr(torch, fn)(*args, dtype=getattr(torch, dtype))
        except RuntimeError:  # an integer step truncated to 0, float16 logspace: ampjit raises too
            with pytest.raises(RuntimeError):
                getattr(ampjit, fn)(*args, dtype=getattr(ampjit, dtype))
            continue
        got = getattr(ampjit, fn)(*args, dtype=getattr(ampjit, dtype))
        got_t = torch.from_numpy(np.array(got.double().numpy(), copy=True)).to(want.dtype)
        if fn == "logspace" and dtype == "float64":  # libm's pow against torch's: within an ulp
            np.testing.assert_allclose(got_t.numpy(), want.numpy(), rtol=1e-15)
            continue
        assert torch.equal(got_t, want), (fn, args, dtype)
