"""The ops and layers real models need (issue 15), each against torch 1.13, eager and scripted:
roll, flip, meshgrid, masked_fill, all/any, isclose/allclose, repeat, new_*, integer tensor
indexing, einsum, the in-place random fills, trunc_normal_, feature dropout, lstm/gru and
MultiheadAttention / TransformerEncoder; and the script features they brought: nn.ModuleDict
iteration, method overloads, NamedTuple returns, '...' indexing, assert refinement."""
import collections
from typing import List, NamedTuple, Optional

import numpy as np
import pytest

import ampjit as torch
import ampjit.nn as nn
from ampjit import Tensor

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4, 5)).astype(np.float32)


def _np(t):
    return t.detach().float().numpy() if hasattr(t, "detach") else t.float().numpy()


def _same(got, want, rtol=1e-6, atol=1e-6):
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, rtol, atol)
        return
    if isinstance(want, bool):
        assert got == want
        return
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(_np(got), _np(want), rtol=rtol, atol=atol)


CASES = {
    "roll": lambda L, t: L.roll(t, 2),
    "roll_dims": lambda L, t: L.roll(t, (1, -2), (0, 2)),
    "flip": lambda L, t: L.flip(t, [0, 2]),
    "meshgrid_xy": lambda L, t: L.meshgrid(L.arange(3), L.arange(4), indexing="xy"),
    "meshgrid_ij": lambda L, t: L.meshgrid([L.arange(3), L.arange(4)], indexing="ij"),
    "masked_fill": lambda L, t: t.masked_fill(t > 0, -1.5),
    "masked_fill_int": lambda L, t: (t * 10).to(L.int64).masked_fill(t > 0, 0.5),
    "masked_fill_": lambda L, t: t.clone().masked_fill_(t > 0, L.tensor(2.0)),
    "all": lambda L, t: (t > -10).all(),
    "any_dim": lambda L, t: (t > 1).any(1),
    "all_dim_keepdim": lambda L, t: (t > -1).all(2, keepdim=True),
    "allclose": lambda L, t: L.allclose(t, t + 1e-9),
    "isclose": lambda L, t: L.isclose(t, t * 1.0001),
    "new_zeros": lambda L, t: t.new_zeros((2, 3)),
    "new_full": lambda L, t: t.new_full((2,), 3.0),
    "repeat": lambda L, t: t.repeat(2, 1, 1, 3),
    "index": lambda L, t: t[L.tensor([[0, 2], [1, -1]])],
    "index_two": lambda L, t: t[L.tensor([0, 2]), L.tensor([1, 3])],
    "einsum_bmm": lambda L, t: L.einsum("b i d, b j d -> b i j", t, t),
    "einsum_implicit": lambda L, t: L.einsum("abc,abd", t, t),
    "einsum_reduce": lambda L, t: L.einsum("abc->ca", t),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_torch(name, torch_ref):
    f = CASES[name]
    _same(f(torch, torch.from_numpy(X)), f(torch_ref, torch_ref.from_numpy(X)))


def test_op_errors_are_torchs(torch_ref):
    for L in (torch, torch_ref):
        with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
            L.roll(L.ones(2, 2), (1, 1), (0,))
        with pytest.warns(UserWarning, match="masked_fill_ received a mask with dtype torch.uint8"):
            assert L.ones(2).masked_fill(L.tensor([1, 0], dtype=L.uint8), 0.0).tolist() == [0.0, 1.0]
        with pytest.raises(RuntimeError, match="Float did not match Double"):
            L.isclose(L.ones(2), L.ones(2, dtype=L.float64))
        with pytest.raises(RuntimeError, match="Number of dimensions of repeat dims can not be smaller"):
            L.ones(2, 2).repeat(2)
        with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
            L.zeros(3).normal_(0.0, -1.0)


def test_a_float_mask_is_an_error():
    # torch 1.13 reads a float mask's bytes (ones(2) masks nothing, silently); ampjit refuses it
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got mask with dtype float32"):
        torch.ones(2).masked_fill(torch.ones(2), 0.0)


def test_random_fills_have_their_distributions():
    torch.manual_seed(0)
    t = torch.zeros(20000).normal_(2.0, 0.5)
    assert abs(float(t.mean()) - 2.0) < 0.02 and abs(float(t.std()) - 0.5) < 0.02
    u = torch.zeros(20000, dtype=torch.bfloat16).uniform_(-1.0, 3.0)
    assert u.dtype == torch.bfloat16 and float(u.min()) >= -1.0 and float(u.max()) <= 3.0
    b = torch.zeros(20000).bernoulli_(0.3)
    assert abs(float(b.mean()) - 0.3) < 0.02 and set(np.unique(b.numpy())) <= {0.0, 1.0}
    w = torch.empty(20000)
    nn.init.trunc_normal_(w, std=1.0, a=-1.0, b=1.0)
    assert float(w.min()) >= -1.0 and float(w.max()) <= 1.0 and abs(float(w.mean())) < 0.03
    d = nn.functional.dropout2d(torch.ones(4, 8, 3, 3), 0.5, training=True)
    per_channel = d.numpy().reshape(4, 8, 9)
    assert all(len(set(row)) == 1 for row in per_channel.reshape(32, 9).tolist())  # whole channels
    assert set(np.unique(per_channel)) <= {0.0, 2.0}


def _copy(tmod, amod):
    state = collections.OrderedDict((k, torch.from_numpy(v.detach().numpy().copy()))
                                    for k, v in tmod.state_dict().items())
    amod.load_state_dict(state)


@pytest.mark.parametrize("kind", ["lstm", "gru", "mha", "encoder"])
def test_sequence_layers_match_torch_eager_scripted_traced(kind, torch_ref):
    def build(L):
        L.manual_seed(0)
        if kind == "lstm":
            return L.nn.LSTM(6, 5, num_layers=2, bidirectional=True, batch_first=True)
        if kind == "gru":
            return L.nn.GRU(6, 5, num_layers=2)
        if kind == "mha":
            return L.nn.MultiheadAttention(6, 2, batch_first=True)
        layer = L.nn.TransformerEncoderLayer(6, 2, dim_feedforward=12, batch_first=True)
        return L.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)

    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    tmod, amod = build(torch_ref).eval(), build(torch).eval()
    _copy(tmod, amod)

    def run(L, m, t):
        with L.no_grad():
            out = m(t, t, t) if kind == "mha" else m(t)
        return out[0] if isinstance(out, tuple) else out

    want = run(torch_ref, tmod, torch_ref.from_numpy(x))
    xa = torch.from_numpy(x)
    variants = [amod, torch.jit.script(amod), torch.jit.trace(amod, (xa, xa, xa) if kind == "mha" else (xa,),
                                                                 check_trace=False)]
    for m in variants:
        _same(run(torch, m, xa), want, rtol=1e-4, atol=1e-5)


def test_lstm_under_autocast_has_torchs_dtypes(torch_ref):
    def build(L):
        return L.nn.LSTM(6, 5, batch_first=True)
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    tmod, amod = build(torch_ref).eval(), build(torch).eval()
    _copy(tmod, amod)
    with torch_ref.no_grad(), torch_ref.autocast("cpu"):
        want, (h, c) = tmod(torch_ref.from_numpy(x))
    for m in (amod, torch.jit.script(amod)):
        with torch.no_grad(), torch.autocast("cpu"):
            got, (gh, gc) = m(torch.from_numpy(x))
        # the linears run in bfloat16, the cell state keeps float32: as torch's composite lstm
        assert (got.dtype, gh.dtype, gc.dtype) == (torch.float32, torch.float32, torch.float32)
        assert str(want.dtype) == "torch.float32"
        _same(got, want, rtol=3e-2, atol=3e-2)


# ---- script features -------------------------------------------------------------------------------

class Branches(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleDict({"a": nn.Linear(3, 3), "b": nn.ReLU(), "c": nn.Linear(3, 2)})
        self.layers = nn.ModuleList([nn.Linear(3, 3), nn.Linear(3, 3)])

    def forward(self, x: Tensor) -> Tensor:
        for name, m in self.blocks.items():
            if name != "c":
                x = m(x)
        for i, layer in enumerate(self.layers):
            x = layer(x) * (i + 1)
        for layer, other in zip(self.layers, self.layers):
            x = x + other(layer(x))
        return self.blocks["c"](x) + len([k for k in self.blocks.keys()])


def test_module_dict_and_module_list_iteration_in_script():
    m = Branches()
    x = torch.ones(2, 3)
    _same(torch.jit.script(m)(x), m(x))
    graph = str(torch.jit.script(m).graph)
    assert "prim::Loop" not in graph  # unrolled at compile time


class Overloaded(nn.Module):
    @torch.jit._overload_method  # noqa: F811
    def forward(self, x: List[Tensor]) -> Tensor:  # noqa: F811
        pass

    @torch.jit._overload_method  # noqa: F811
    def forward(self, x: Tensor) -> Tensor:  # noqa: F811
        pass

    def forward(self, x: Tensor) -> Tensor:  # noqa: F811
        if isinstance(x, Tensor):
            return x * 2
        else:
            return torch.cat(x, 0)


class CallsOverloads(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Overloaded()

    def forward(self, x: Tensor) -> Tensor:
        return self.inner([x, x]) + self.inner(x).sum()


def test_method_overloads_compile_per_declaration():
    m = CallsOverloads()
    x = torch.arange(3.0)
    s = torch.jit.script(m)
    _same(s(x), m(x))  # the List[Tensor] overload concatenates, the Tensor one doubles


class Out(NamedTuple):
    logits: Tensor
    aux: Optional[Tensor]


def _named(x: Tensor) -> Out:
    o = Out(x * 2, None)
    return Out(o.logits + 1, x)


def test_named_tuple_returns(torch_ref):
    s = torch.jit.script(_named)
    out = s(torch.ones(2))
    assert isinstance(out, Out) and out.aux is not None
    _same(out.logits, torch_ref.full((2,), 3.0))
    assert "NamedTuple(logits : Tensor, aux : Tensor?)" in str(s.graph)


def _ellipsis(x: Tensor) -> Tensor:
    return x[..., 0::2, 1] + x[0, ..., 1:2, :].sum()


def _assert_refines(x: Optional[Tensor]) -> Tensor:
    assert x is not None, f"x is {x}"
    return x + 1


def test_ellipsis_indexing_and_assert_refinement(torch_ref):
    x = RNG.standard_normal((2, 3, 4, 5)).astype(np.float32)
    for fn in (_ellipsis, _assert_refines):
        want = fn(torch_ref.from_numpy(x))  # torch's eager result (the annotations name ampjit's Tensor)
        _same(torch.jit.script(fn)(torch.from_numpy(x)), want)
    with pytest.raises(Exception, match="x is None"):
        torch.jit.script(_assert_refines)(None)


# ---- the nn composites against torch's values ----------------------------------------------------

def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


NN_CASES = {
    "conv_tbc": lambda L: L.conv_tbc(L.from_numpy(_r(10, 7, 3)), L.from_numpy(_r(5, 3, 4, seed=1)),
                                     L.from_numpy(_r(4, seed=2)), 2),
    "conv_transpose1d": lambda L: L.conv_transpose1d(L.from_numpy(_r(2, 4, 9)), L.from_numpy(_r(4, 3, 3, seed=1)),
                                                     L.from_numpy(_r(3, seed=2)), stride=2, padding=1,
                                                     output_padding=1),
    "conv_transpose3d": lambda L: L.conv_transpose3d(L.from_numpy(_r(1, 4, 3, 4, 5)),
                                                     L.from_numpy(_r(4, 2, 2, 3, 2, seed=1)), None, stride=(2, 1, 2),
                                                     padding=(0, 1, 1), groups=2, dilation=(1, 2, 1)),
    "avg_pool3d": lambda L: L._C._nn.avg_pool3d(L.from_numpy(_r(2, 3, 6, 7, 5)), (3, 2, 2), (2, 1, 2), (1, 0, 1)),
    "reflection_pad1d": lambda L: L._C._nn.reflection_pad1d(L.from_numpy(_r(2, 3, 6)), (3, 2)),
    "huber_loss": lambda L: L.nn.functional.huber_loss(L.from_numpy(_r(4, 5)), L.from_numpy(_r(4, 5, seed=1)) * 2,
                                                       delta=0.7),
    "smooth_l1_loss": lambda L: L.nn.functional.smooth_l1_loss(L.from_numpy(_r(4, 5)), L.from_numpy(_r(4, 5, seed=1)),
                                                               reduction="none", beta=0.5),
    "soft_margin_loss": lambda L: L.nn.functional.soft_margin_loss(L.from_numpy(_r(4, 5)),
                                                                   L.from_numpy(np.sign(_r(4, 5, seed=1)))),
    "margin_ranking_loss": lambda L: L.nn.functional.margin_ranking_loss(
        L.from_numpy(_r(6)), L.from_numpy(_r(6, seed=1)), L.from_numpy(np.sign(_r(6, seed=2))), margin=0.3),
    "hinge_embedding_loss": lambda L: L.nn.functional.hinge_embedding_loss(
        L.from_numpy(_r(4, 5)), L.from_numpy(np.sign(_r(4, 5, seed=1))), margin=0.5, reduction="sum"),
    "cosine_embedding_loss": lambda L: L.nn.functional.cosine_embedding_loss(
        L.from_numpy(_r(4, 5)), L.from_numpy(_r(4, 5, seed=1)), L.tensor([1, -1, 1, -1]), margin=0.2),
    "triplet_margin_loss": lambda L: L.nn.functional.triplet_margin_loss(
        L.from_numpy(_r(4, 5)), L.from_numpy(_r(4, 5, seed=1)), L.from_numpy(_r(4, 5, seed=2)), swap=True),
    "poisson_nll_loss": lambda L: L.nn.functional.poisson_nll_loss(
        L.from_numpy(_r(4, 5)), L.from_numpy(np.abs(_r(4, 5, seed=1)) * 3), full=True),
    "poisson_nll_loss_rate": lambda L: L.nn.functional.poisson_nll_loss(
        L.from_numpy(np.abs(_r(4, 5))), L.from_numpy(np.abs(_r(4, 5, seed=1))), log_input=False, reduction="none"),
    "multi_margin_loss": lambda L: L.nn.functional.multi_margin_loss(
        L.from_numpy(_r(4, 5)), L.tensor([0, 4, 2, 1]), p=2, margin=0.7, weight=L.from_numpy(np.abs(_r(5, seed=3)))),
    "multilabel_margin_loss": lambda L: L.nn.functional.multilabel_margin_loss(
        L.from_numpy(_r(3, 5)), L.tensor([[3, 0, -1, 1, 2], [1, 2, 3, 4, 0], [4, -1, 0, 0, 0]])),
}


@pytest.mark.parametrize("name", sorted(NN_CASES))
def test_nn_composite_matches_torch(name, torch_ref):
    _same(NN_CASES[name](torch), NN_CASES[name](torch_ref), rtol=1e-5, atol=1e-5)


def _einsum_varargs(q: Tensor, k: Tensor):
    a = torch.einsum("B G I D, B G J D -> B G I J", q, k)
    g = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
    return a, g[0] + g[1]


def test_einsum_and_meshgrid_take_varargs_in_script(torch_ref):
    q, k = RNG.standard_normal((1, 2, 3, 4)).astype(np.float32), RNG.standard_normal((1, 2, 5, 4)).astype(np.float32)
    got = torch.jit.script(_einsum_varargs)(torch.from_numpy(q), torch.from_numpy(k))
    want = (torch_ref.einsum("bgid,bgjd->bgij", torch_ref.from_numpy(q), torch_ref.from_numpy(k)),
            torch_ref.tensor([[0, 1], [1, 2], [2, 3]]))
    _same(got, want, rtol=1e-5, atol=1e-6)


def test_einsum_and_index_bad_input_errors(torch_ref):
    a = torch.ones(2, 3)
    cases = [
        (lambda: torch.einsum("ij,jk", a), "more operands were provided than specified|number of subscripts"),
        (lambda: torch.einsum("i1->i", a), "invalid subscript given at index 1"),
        (lambda: torch.einsum("ijk->i", a), "does not match the number of dimensions"),
        (lambda: torch.einsum("ij->ik", a), "output subscript k does not appear"),
        (lambda: torch.einsum("ij,jk->ik", a, torch.ones(4, 2)), "operands do not broadcast"),
        (lambda: torch.einsum("...1->1", a), "invalid subscript given at index 3"),
        (lambda: a[torch.tensor([5])], "index 5 is out of bounds for dimension 0 with size 2"),
        (lambda: a[torch.tensor([0]), torch.tensor([0, 1, 2, 3])], "index 3 is out of bounds|out of bounds"),
        (lambda: torch.ones(2)[torch.tensor([0]), torch.tensor([0])], "too many indices"),
    ]
    for fn, message in cases:
        with pytest.raises((RuntimeError, IndexError), match=message):
            fn()
    # torch raises for the same inputs (its messages are the model for ampjit's)
    with pytest.raises(RuntimeError, match="invalid subscript given at index 1"):
        torch_ref.einsum("i1->i", torch_ref.ones(2, 3))
