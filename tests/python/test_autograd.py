"""Autograd (runtime/autograd, issue 18): the engine, the derivatives of ops, autocast in backward,
torch.autograd.Function with custom_fwd/custom_bwd, compiled code, optimizers and GradScaler,
each against torch 1.13 run on the same program."""
import math
import warnings

import numpy as np
import pytest

import ampjit


def np_of(t):
    if not hasattr(t, "detach"):
        return np.asarray(t)
    t = t.detach()
    return (t.float() if "bfloat16" in repr(t.dtype) else t).numpy()


def both(torch, make):
    """make(lib) for ampjit and torch."""
    return make(ampjit), make(torch)


def assert_close(a, b, rtol=1e-6, atol=1e-6):
    a, b = np_of(a).astype(np.float64), np_of(b).astype(np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def raises_same(torch, fn, exc=RuntimeError):
    """fn(lib) raises the same message in both libraries; returns it."""
    with pytest.raises(exc) as ours:
        fn(ampjit)
    with pytest.raises(Exception) as theirs:
        fn(torch)
    assert str(ours.value) == str(theirs.value)
    return str(ours.value)


# --- the engine --------------------------------------------------------------------------------

def test_requires_grad_propagates_and_names_grad_fn(torch_ref):
    for lib in (ampjit, torch_ref):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        assert y.requires_grad and not y.is_leaf and x.is_leaf
        assert y.grad_fn.name() == "MulBackward0"
        assert x.grad_fn is None
        with lib.no_grad():
            assert not (x * 2).requires_grad
        assert not (lib.ones(3) * 2).requires_grad
        z = x.detach()
        assert not z.requires_grad and z.is_leaf
        acc = (x + 1).grad_fn.next_functions[0][0]
        assert acc.variable is x or np.array_equal(np_of(acc.variable), np_of(x))


def test_backward_accumulates_and_frees_the_graph(torch_ref):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    ours, theirs = both(torch_ref, run)
    assert_close(ours, theirs)
    assert_close(ours, [4.0, 8.0, 12.0])

    def twice(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x.exp() * 3).sum()
        y.backward()
        y.backward()
    raises_same(torch_ref, twice)


def test_backward_errors_match_torch(torch_ref):
    def non_scalar(lib):
        (lib.ones(2, requires_grad=True) * 2).backward()
    assert "scalar outputs" in raises_same(torch_ref, non_scalar)

    def no_grad_fn(lib):
        lib.ones(2).sum().backward()
    raises_same(torch_ref, no_grad_fn)

    def inplace_saved(lib):
        x = lib.ones(2, 3, requires_grad=True)
        y = x.relu()
        z = y.sigmoid()
        y.add_(1)  # sigmoid saved its result, relu saved y ... y changed
        z.sum().backward()
    msg = raises_same(torch_ref, inplace_saved)
    assert "modified by an inplace operation" in msg

    def inplace_output_saved(lib):
        x = lib.ones(2, 3, requires_grad=True)
        y = (x * 1).exp()
        y.mul_(2)
        y.sum().backward()
    raises_same(torch_ref, inplace_output_saved)

    def leaf_inplace(lib):
        lib.ones(2, requires_grad=True).add_(1)
    raises_same(torch_ref, leaf_inplace)

    def nonleaf_requires_grad(lib):
        (lib.ones(2, requires_grad=True) * 2).requires_grad = False
    raises_same(torch_ref, nonleaf_requires_grad)

    def int_requires_grad(lib):
        lib.ones(2, dtype=lib.int64).requires_grad = True
    raises_same(torch_ref, int_requires_grad)

    def unused(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        lib.autograd.grad((x * 2).sum(), (x, w))
    raises_same(torch_ref, unused)


def test_non_scalar_backward_with_gradient_and_inplace_history(torch_ref):
    def run(lib):
        x = lib.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
        y = x * 3
        y.mul_(2).sub_(1).pow_(2)  # in place on a non-leaf: the history follows
        y.relu_()
        y.backward(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        return x.grad
    ours, theirs = both(torch_ref, run)
    assert_close(ours, theirs)

    def self_times_self(lib):  # mul_ saved `other`, which is self, then wrote it
        x = lib.tensor([[1.0, -2.0], [3.0, 0.5]], requires_grad=True)
        y = x * 3
        y.mul_(y)
        y.sum().backward()
    raises_same(torch_ref, self_times_self)


def test_hooks_retain_grad_and_grad_modes(torch_ref):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        seen = []
        h = x.register_hook(lambda g: seen.append(g.clone()))
        y = x * 2
        y.retain_grad()
        y.register_hook(lambda g: g * 10)
        z = (y * y).sum()
        z.backward()
        h.remove()
        (x * 1).sum().backward()
        with lib.set_grad_enabled(False):
            assert not (x * 2).requires_grad
        with lib.inference_mode():
            assert not (x * 2).requires_grad
        with lib.no_grad():
            with lib.enable_grad():
                assert (x * 2).requires_grad
        return x.grad, y.grad, seen[0], len(seen), y.retains_grad
    ours, theirs = both(torch_ref, run)
    for a, b in zip(ours[:3], theirs[:3]):
        assert_close(a, b)
    assert ours[3:] == theirs[3:]


def test_autograd_grad_and_double_backward(torch_ref):
    def run(lib):
        x = lib.tensor([0.5, -1.0, 2.0], requires_grad=True)
        y = (x ** 3 + x.sin() * x.exp() + x.tanh() * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = lib.autograd.grad(gg.sum(), x)
        return g, gg, ggg, x.grad
    ours, theirs = both(torch_ref, run)
    for a, b in zip(ours[:3], theirs[:3]):
        assert_close(a, b, rtol=1e-5)
    assert ours[3] is None and theirs[3] is None

    def penalty(lib):  # a gradient penalty: backward through a gradient (create_graph)
        w = lib.tensor([[0.3, -0.2], [0.1, 0.4]], requires_grad=True)
        x = lib.tensor([[1.0, 2.0], [-1.0, 0.5]], requires_grad=True)
        out = (x.matmul(w)).sigmoid().sum()
        (gx,) = lib.autograd.grad(out, x, create_graph=True)
        (gx * gx).sum().backward()
        return w.grad
    ours, theirs = both(torch_ref, penalty)
    assert_close(ours, theirs, rtol=1e-5)

    def allow_unused(lib):
        x = lib.ones(2, requires_grad=True)
        w = lib.ones(2, requires_grad=True)
        return lib.autograd.grad((x * 2).sum(), (x, w), allow_unused=True)
    ours, theirs = both(torch_ref, allow_unused)
    assert ours[1] is None and theirs[1] is None
    assert_close(ours[0], theirs[0])


def test_backward_inputs_accumulates_only_those(torch_ref):
    def run(lib):
        a = lib.ones(2, requires_grad=True)
        b = lib.ones(2, requires_grad=True)
        ((a * 2) * (b * 3)).sum().backward(inputs=[a])
        return a.grad, b.grad
    ours, theirs = both(torch_ref, run)
    assert_close(ours[0], theirs[0])
    assert ours[1] is None and theirs[1] is None


# --- derivatives of ops, against torch and numerically -----------------------------------------

R = np.random.default_rng(1)


def rnd(*shape, positive=False):
    a = R.standard_normal(shape)
    return np.abs(a) + 0.5 if positive else a


# (name, fn(lib, *tensors), input arrays): every op of the zoo's models, losses and optimizers
# that has a derivative, through the function or method the models call.
CASES = [
    ("add_broadcast", lambda L, a, b: a + b * 2, [rnd(3, 4), rnd(4)]),
    ("sub_alpha", lambda L, a, b: L.sub(a, b, alpha=3), [rnd(3, 4), rnd(3, 1)]),
    ("rsub", lambda L, a: 1 - a, [rnd(5)]),
    ("mul_div", lambda L, a, b: a * b / (b * b + 1), [rnd(2, 3), rnd(2, 3)]),
    ("div_scalar", lambda L, a: a / 4, [rnd(3)]),
    ("pow", lambda L, a, b: a ** b, [rnd(4, positive=True), rnd(4)]),
    ("pow_scalar", lambda L, a: a ** 2.5 + 2 ** a, [rnd(4, positive=True)]),
    ("neg_abs", lambda L, a: (-a).abs(), [rnd(5)]),
    ("exp_log", lambda L, a: a.exp() + (a * a + 1).log() + a.log1p().sum(), [rnd(5, positive=True)]),
    ("sqrt_rsqrt", lambda L, a: a.sqrt() + a.rsqrt() + a.reciprocal(), [rnd(5, positive=True)]),
    ("trig", lambda L, a: a.sin() * a.cos() + a.tan(), [rnd(5) * 0.5]),
    ("tanh_sigmoid", lambda L, a: a.tanh() + a.sigmoid() + L.erf(a), [rnd(6)]),
    ("relu_family", lambda L, a: L.relu(a) + L.nn.functional.relu6(a * 4) + L.nn.functional.hardtanh(a),
     [rnd(8)]),
    ("leaky_elu", lambda L, a: L.nn.functional.leaky_relu(a, 0.1) + L.nn.functional.elu(a), [rnd(8)]),
    ("silu_gelu", lambda L, a: L.nn.functional.silu(a) + L.nn.functional.gelu(a)
     + L.nn.functional.gelu(a, approximate="tanh"), [rnd(8)]),
    ("hard_acts", lambda L, a: L.nn.functional.hardswish(a * 3) + L.nn.functional.hardsigmoid(a * 3), [rnd(8)]),
    ("softplus_mish", lambda L, a: L.nn.functional.softplus(a) + L.nn.functional.mish(a)
     + L.nn.functional.logsigmoid(a), [rnd(8)]),
    ("clamp", lambda L, a: a.clamp(-0.5, 0.7) + a.clamp(min=0.1) + a.clamp(max=0.2), [rnd(8)]),
    ("max_min_elementwise", lambda L, a, b: L.maximum(a, b) + L.minimum(a, b * 2), [rnd(6), rnd(6)]),
    ("where_masked_fill", lambda L, a, b: L.where(a > 0, a, b).masked_fill(b > 0.5, 0.0), [rnd(6), rnd(6)]),
    ("addcmul_addcdiv", lambda L, a, b, c: L.addcmul(a, b, c, value=0.5) + L.addcdiv(a, b, c * c + 1),
     [rnd(4), rnd(4), rnd(4)]),
    ("sum_mean", lambda L, a: a.sum() + a.sum(1).sum() + a.mean((0, 2), keepdim=True).sum() + a.mean(),
     [rnd(2, 3, 4)]),
    ("amax_max", lambda L, a: a.amax(1).sum() + a.max() + a.max(1)[0].sum() + a.min(0).values.sum()
     + a.amin((0, 1)), [rnd(3, 4)]),
    ("var_std", lambda L, a: a.var(1).sum() + a.std() + a.var(0, unbiased=False).sum() + a.std(1, keepdim=True).sum(),
     [rnd(3, 5)]),
    ("logsumexp_norm", lambda L, a: L.logsumexp(a, 1).sum() + a.norm() + a.norm(p=2, dim=1).sum(), [rnd(3, 4)]),
    ("cumsum", lambda L, a: (a.cumsum(1) * a).sum(), [rnd(3, 4)]),
    ("softmax", lambda L, a: (L.softmax(a, -1) * a).sum() + L.log_softmax(a, 0).sum(), [rnd(3, 4)]),
    ("mm_family", lambda L, a, b, c: (a.mm(b).sum() + L.bmm(c, c.transpose(1, 2)).sum()
                                      + (a.t().matmul(a[:, 0])).sum()), [rnd(3, 4), rnd(4, 2), rnd(2, 3, 3)]),
    ("matmul_broadcast", lambda L, a, b: a.matmul(b), [rnd(2, 3, 4), rnd(4, 5)]),
    ("matmul_vec", lambda L, a, b: a.matmul(b).sum() + b.matmul(a.transpose(-1, -2)).sum(),
     [rnd(2, 3, 4), rnd(4)]),
    ("addmm_linear", lambda L, x, w, b: L.addmm(b, x, w.t(), beta=0.5, alpha=2)
     + L.nn.functional.linear(x, w, b), [rnd(3, 4), rnd(5, 4), rnd(5)]),
    ("linear_3d", lambda L, x, w: L.nn.functional.linear(x, w), [rnd(2, 3, 4), rnd(5, 4)]),
    ("baddbmm", lambda L, s, a, b: L.baddbmm(s, a, b, alpha=0.5), [rnd(2, 3, 2), rnd(2, 3, 4), rnd(2, 4, 2)]),
    ("views", lambda L, a: (a.view(6, 4).t().reshape(2, 12).unsqueeze(0).squeeze(0).flatten()
                            * L.arange(24.0)).sum() + a.permute(2, 0, 1).contiguous().sum(1).mean(),
     [rnd(2, 3, 4)]),
    ("expand_repeat", lambda L, a: a.expand(3, 2, 4).sum(0) + a.repeat(1, 2)[:, :4], [rnd(2, 4)]),
    ("index_views", lambda L, a: a[1] * 2 + a[:, 1:3].sum() + a.narrow(1, 0, 2).sum() + a[::2, ::2].sum(),
     [rnd(3, 4)]),
    ("split_chunk_unbind", lambda L, a: sum((p * (i + 1)).sum() for i, p in enumerate(a.split(2, 1)))
     + a.chunk(2, 0)[1].sum() + a.unbind(1)[2].sum(), [rnd(4, 5)]),
    ("cat_stack", lambda L, a, b: (L.cat([a, b], 1) * L.arange(7.0)).sum() + L.stack([a, a * 2]).sum(),
     [rnd(2, 3), rnd(2, 4)]),
    ("pad_flip_roll", lambda L, a: (L.nn.functional.pad(a, (1, 2, 0, 1)) * 3).sum() + (a.flip(1) * a).sum()
     + (a.roll(1, 0) * a).sum(), [rnd(3, 4)]),
    ("tril_triu", lambda L, a: (a.tril() * 2 + a.triu(1)).sum(), [rnd(4, 4)]),
    ("index_select", lambda L, a: (a.index_select(0, L.tensor([2, 0, 2])) * 3).sum(), [rnd(3, 4)]),
    ("conv2d", lambda L, x, w, b: L.nn.functional.conv2d(x, w, b, stride=2, padding=1),
     [rnd(2, 3, 7, 6), rnd(4, 3, 3, 3), rnd(4)]),
    ("conv2d_groups_dilation", lambda L, x, w: L.nn.functional.conv2d(x, w, None, 1, 2, 2, groups=2),
     [rnd(1, 4, 8, 8), rnd(6, 2, 3, 3)]),
    ("conv2d_depthwise_stride", lambda L, x, w: L.nn.functional.conv2d(x, w, None, 2, 1, 1, groups=3),
     [rnd(2, 3, 9, 9), rnd(3, 1, 3, 3)]),
    ("conv2d_1x1_stride", lambda L, x, w: L.nn.functional.conv2d(x, w, None, 2), [rnd(2, 3, 7, 6), rnd(5, 3, 1, 1)]),
    ("conv1d", lambda L, x, w, b: L.nn.functional.conv1d(x, w, b, padding=1), [rnd(2, 3, 9), rnd(2, 3, 3), rnd(2)]),
    ("max_pool2d", lambda L, x: L.nn.functional.max_pool2d(x, 3, 2, 1), [rnd(2, 2, 7, 7)]),
    ("max_pool2d_ceil", lambda L, x: L.nn.functional.max_pool2d(x, 2, ceil_mode=True), [rnd(1, 2, 5, 5)]),
    ("avg_pool2d", lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1) + 0
     * L.nn.functional.avg_pool2d(x, 3, 2, 1, count_include_pad=False), [rnd(1, 2, 7, 7)]),
    ("avg_pool2d_excl", lambda L, x: L.nn.functional.avg_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                                 count_include_pad=False), [rnd(1, 2, 6, 6)]),
    ("adaptive_avg_pool2d", lambda L, x: L.nn.functional.adaptive_avg_pool2d(x, 1).sum()
     + L.nn.functional.adaptive_avg_pool2d(x, (2, 3)).sum() * 2, [rnd(2, 3, 4, 6)]),
    ("batch_norm_train", lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), w, b, True), [rnd(4, 3, 2, 2), rnd(3), rnd(3)]),
    ("batch_norm_eval", lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.full((3,), 0.1, dtype=x.dtype), L.full((3,), 2.0, dtype=x.dtype), w, b, False),
     [rnd(4, 3, 2), rnd(3), rnd(3)]),
    ("layer_norm", lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,), w, b), [rnd(2, 3, 4), rnd(4), rnd(4)]),
    ("layer_norm_2d", lambda L, x: L.nn.functional.layer_norm(x, (3, 4)), [rnd(2, 3, 4)]),
    ("group_norm", lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b), [rnd(3, 4, 5), rnd(4), rnd(4)]),
    ("group_norm_4d", lambda L, x: L.nn.functional.group_norm(x, 3), [rnd(2, 6, 2, 3)]),
    ("embedding", lambda L, w: L.nn.functional.embedding(L.tensor([[1, 3, 1], [0, 2, 3]]), w, padding_idx=0)
     * L.arange(12.0).view(2, 3, 2), [rnd(4, 2)]),
    ("mse_l1", lambda L, a, b: L.nn.functional.mse_loss(a, b) + L.nn.functional.l1_loss(a, b, reduction="sum")
     + L.nn.functional.mse_loss(a, b, reduction="none").sum(), [rnd(3, 4), rnd(3, 4)]),
    ("bce", lambda L, a, b: L.nn.functional.binary_cross_entropy(a.sigmoid(), b.sigmoid().detach())
     + L.nn.functional.binary_cross_entropy_with_logits(a, b.sigmoid(), pos_weight=L.ones(4, dtype=a.dtype) * 2),
     [rnd(3, 4), rnd(3, 4)]),
    ("cross_entropy", lambda L, a: L.nn.functional.cross_entropy(a, L.tensor([0, 2, 1]))
     + L.nn.functional.cross_entropy(a, L.tensor([1, -100, 2]), reduction="sum"), [rnd(3, 4)]),
    ("cross_entropy_weight_smoothing", lambda L, a, w: L.nn.functional.cross_entropy(
        a, L.tensor([0, 2, 1]), weight=w.detach().abs() + 0.5) + L.nn.functional.cross_entropy(
        a, L.tensor([3, 2, 1]), label_smoothing=0.1), [rnd(3, 4), rnd(4)]),
    ("cross_entropy_probs_2d", lambda L, a, p: L.nn.functional.cross_entropy(a, p.softmax(1).detach())
     + L.nn.functional.cross_entropy(a, L.tensor([[0, 1], [2, 1]]).view(1, 2, 2).expand(2, 2, 2).contiguous()),
     [rnd(2, 3, 2, 2), rnd(2, 3, 2, 2)]),
    ("nll_loss", lambda L, a: L.nn.functional.nll_loss(a.log_softmax(1), L.tensor([1, 0, 3]), reduction="none"),
     [rnd(3, 4)]),
    ("dtype_casts", lambda L, a: a.to(L.float32).to(L.float64) * 2 + a.double() + a.type_as(a), [rnd(4)]),
]


@pytest.mark.parametrize("name,fn,arrays", CASES, ids=[c[0] for c in CASES])
def test_op_gradients_match_torch(torch_ref, name, fn, arrays):
    def run(lib):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        g = lib.tensor(np.linspace(-1.0, 1.0, out.numel()).reshape(tuple(out.shape)), dtype=out.dtype)
        out.backward(g)
        return out, [x.grad for x in xs]
    (out, grads), (tout, tgrads) = both(torch_ref, run)
    assert_close(out, tout, rtol=1e-9, atol=1e-9)
    for g, tg in zip(grads, tgrads):
        assert (g is None) == (tg is None)
        if g is not None:
            assert g.dtype == ampjit.float64
            assert_close(g, tg, rtol=1e-7, atol=1e-9)


GRADCHECK = ["mul_div", "pow", "exp_log", "tanh_sigmoid", "silu_gelu", "softmax", "mm_family", "conv2d",
             "conv2d_depthwise_stride", "max_pool2d", "batch_norm_train", "layer_norm", "cross_entropy",
             "var_std", "matmul_vec"]


@pytest.mark.parametrize("name", GRADCHECK)
def test_gradcheck_float64(name):
    _, fn, arrays = next(c for c in CASES if c[0] == name)
    xs = [ampjit.tensor(a, dtype=ampjit.float64, requires_grad=True) for a in arrays]
    assert ampjit.autograd.gradcheck(lambda *t: fn(ampjit, *t), xs)


def test_gradcheck_catches_a_wrong_derivative():
    class Wrong(ampjit.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g  # should be 2 * x * g
    x = ampjit.tensor([0.5, 2.0], dtype=ampjit.float64, requires_grad=True)
    assert not ampjit.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)
    with pytest.raises(RuntimeError, match="Jacobian mismatch"):
        ampjit.autograd.gradcheck(Wrong.apply, (x,))


def test_op_without_derivative_raises_when_reached():
    x = ampjit.ones(2, 3, requires_grad=True)
    y = ampjit.remainder(2.0, x)  # recorded, but nothing to differentiate with (as in torch 1.13)
    assert y.requires_grad
    with pytest.raises(NotImplementedError, match="the derivative for 'aten::remainder' is not implemented"):
        y.sum().backward()
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ampjit.add(x, x, out=ampjit.empty(2, 3))


NORMS = [
    ("batch_norm", lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.zeros(3, dtype=x.dtype), L.ones(3, dtype=x.dtype), w, b, True), [rnd(4, 3, 2), rnd(3), rnd(3)]),
    ("batch_norm_eval", lambda L, x, w, b: L.nn.functional.batch_norm(
        x, L.full((3,), 0.2, dtype=x.dtype), L.full((3,), 1.5, dtype=x.dtype), w, b, False),
     [rnd(4, 3, 2), rnd(3), rnd(3)]),
    ("layer_norm", lambda L, x, w, b: L.nn.functional.layer_norm(x, (4,), w, b), [rnd(2, 3, 4), rnd(4), rnd(4)]),
    ("group_norm", lambda L, x, w, b: L.nn.functional.group_norm(x, 2, w, b), [rnd(3, 4, 5), rnd(4), rnd(4)]),
    ("relu", lambda L, x: L.relu(x) * x, [rnd(3, 4)]),
    ("gelu", lambda L, x: L.nn.functional.gelu(x) + L.nn.functional.gelu(x * 2, approximate="tanh"), [rnd(3, 4)]),
]


@pytest.mark.parametrize("name,fn,arrays", NORMS, ids=[n[0] for n in NORMS])
def test_one_pass_kernels_and_double_backward_match_torch(torch_ref, name, fn, arrays):
    """The one-pass CPU kernels serve plain backward; under create_graph the composite formulas
    run (and are recorded): both against torch, to second order."""
    def run(lib):
        xs = [lib.tensor(a, dtype=lib.float64, requires_grad=True) for a in arrays]
        out = fn(lib, *xs)
        up = lib.tensor(np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)), dtype=lib.float64)
        grads = lib.autograd.grad(out, xs, up, create_graph=True)
        second = lib.autograd.grad(sum((g * g).sum() for g in grads), xs, allow_unused=True)
        return grads, second
    (g, s2), (tg, ts2) = both(torch_ref, run)
    for a, b in zip(list(g) + list(s2), list(tg) + list(ts2)):
        if a is None or b is None:  # the bias's gradient depends on no input
            assert a is None and b is None
            continue
        assert_close(a, b, rtol=1e-7, atol=1e-9)


# --- autocast in backward ----------------------------------------------------------------------

def test_autocast_backward_dtypes_and_weight_cache(torch_ref):
    arrays = rnd(5, 4), rnd(5), rnd(3, 4)

    def run(lib):
        w, b, x = (lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in arrays)
        with lib.autocast("cpu", dtype=lib.bfloat16):
            h = lib.nn.functional.linear(x, w, b)       # bfloat16; w cast once, cached
            h2 = lib.nn.functional.linear(x, w)         # the same cached cast of w
            out = (h.float() * h2.float()).sum()
            assert h.dtype == lib.bfloat16
        out.backward()
        return out, w.grad, b.grad, x.grad
    ours, theirs = both(torch_ref, run)
    for a, b in zip(ours, theirs):
        assert a.dtype == ampjit.float32
        assert_close(a, b, rtol=2e-2, atol=2e-2)


def test_autocast_backward_matches_float32_within_bfloat16(torch_ref):
    arrays = rnd(4, 3, 3, 3) * 0.3, rnd(2, 3, 8, 8)

    def run(lib, amp):
        w, x = (lib.tensor(a, dtype=lib.float32, requires_grad=True) for a in arrays)
        with lib.autocast("cpu", enabled=amp):
            y = lib.nn.functional.conv2d(x, w, padding=1).relu()
            loss = lib.nn.functional.cross_entropy(y.mean((2, 3)), lib.tensor([1, 3]))
        loss.backward()
        return w.grad, x.grad
    amp = run(ampjit, True)
    f32 = run(ampjit, False)
    tamp = run(torch_ref, True)
    for a, f, t in zip(amp, f32, tamp):
        assert a.dtype == ampjit.float32
        scale = float(np.abs(np_of(f)).max())
        assert_close(a, f, atol=3e-2 * scale, rtol=0)   # bfloat16 against float32
        assert_close(a, t, atol=3e-2 * scale, rtol=0)   # against torch's bfloat16 run


# --- autograd.Function, custom_fwd / custom_bwd -------------------------------------------------

def _function_program(lib):
    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, factor, note):
            ctx.save_for_backward(x, w)
            ctx.factor = factor
            ctx.note = note
            idx = (x > 0).long()
            ctx.mark_non_differentiable(idx)
            return x * w * factor, idx

        @staticmethod
        def backward(ctx, g, g_idx):
            x, w = ctx.saved_tensors
            assert g_idx is not None  # materialized zeros
            gx = g * w * ctx.factor if ctx.needs_input_grad[0] else None
            gw = (g * x * ctx.factor).sum(0) if ctx.needs_input_grad[1] else None
            return gx, gw, None, None

    x = lib.tensor([[1.0, -2.0], [0.5, 3.0]], requires_grad=True)
    w = lib.tensor([2.0, -1.0], requires_grad=True)
    y, idx = Scale.apply(x, w, 3.0, "note")
    (y * y).sum().backward()
    return y, idx, x.grad, w.grad, idx.requires_grad, y.grad_fn is not None


def test_autograd_function(torch_ref):
    ours, theirs = both(torch_ref, _function_program)
    for a, b in zip(ours[:4], theirs[:4]):
        assert_close(a, b)
    assert ours[4:] == theirs[4:]


def test_autograd_function_dirty_materialize_and_errors(torch_ref):
    def dirty(lib):
        class AddOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 2
        a = lib.ones(3, requires_grad=True)
        x = a * 1
        y = AddOne.apply(x)
        y.sum().backward()
        return a.grad, y

    ours, theirs = both(torch_ref, dirty)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])

    def no_materialize(lib):
        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, g1, g2):
                assert g2 is None
                return g1 * 2
        x = lib.ones(2, requires_grad=True)
        a, _ = Two.apply(x)
        a.sum().backward()
        return x.grad
    ours, theirs = both(torch_ref, no_materialize)
    assert_close(ours, theirs)

    def wrong_count(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g
        x = lib.ones(2, requires_grad=True)
        Bad.apply(x, x).sum().backward()
    raises_same(torch_ref, wrong_count)

    def modified_saved(lib):
        class Sq(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 2 * x * g
        a = lib.ones(2, 2, requires_grad=True)
        x = a * 1
        y = Sq.apply(x)
        x.add_(1)
        y.sum().backward()
    msg = raises_same(torch_ref, modified_saved)
    assert "modified by an inplace operation" in msg


def _custom_amp_program(lib, fwd_decorator, bwd_decorator):
    seen = {}

    class MyMM(lib.autograd.Function):
        @staticmethod
        @fwd_decorator
        def forward(ctx, a, b):
            ctx.save_for_backward(a, b)
            seen["fwd_in"] = a.dtype
            out = a.mm(b)
            seen["fwd_out"] = out.dtype
            return out

        @staticmethod
        @bwd_decorator
        def backward(ctx, g):
            a, b = ctx.saved_tensors
            seen["bwd_g"] = g.dtype
            ga, gb = g.mm(b.t().to(g.dtype)), a.t().to(g.dtype).mm(g)
            seen["bwd_out"] = ga.dtype
            return ga, gb
    return MyMM, seen


AMP_STATES = [("off", False, None), ("bf16", True, None), ("bf16_cast_f32", True, "float32"),
              ("off_cast_f32", False, "float32"), ("bf16_cast_bf16", True, "bfloat16")]


@pytest.mark.parametrize("state,enabled,cast", AMP_STATES, ids=[s[0] for s in AMP_STATES])
def test_custom_fwd_bwd_under_every_autocast_state(state, enabled, cast):
    """Seeds 001/003: with cast_inputs under autocast, inputs are cast and forward runs with autocast
    off (and backward too); without, forward runs in the caller's state and backward in the same."""
    lib = ampjit
    dtype = getattr(lib, cast) if cast else None
    fwd = lib.amp.custom_fwd(device_type="cpu", cast_inputs=dtype)
    bwd = lib.amp.custom_bwd(device_type="cpu")
    fn, seen = _custom_amp_program(lib, fwd, bwd)
    a = lib.tensor(rnd(3, 4), dtype=lib.float32, requires_grad=True)
    b = lib.tensor(rnd(4, 2), dtype=lib.float32, requires_grad=True)
    with lib.autocast("cpu", enabled=enabled):
        out = fn.apply(a, b)
    out.float().sum().backward()
    if enabled and cast:
        want_in = dtype
        want_mm = dtype  # autocast is off inside: mm runs in the cast dtype
        want_bwd = dtype
    elif enabled:
        want_in, want_mm, want_bwd = lib.float32, lib.bfloat16, lib.bfloat16  # backward under autocast
    else:
        want_in, want_mm, want_bwd = lib.float32, lib.float32, lib.float32
    assert seen["fwd_in"] == want_in and seen["fwd_out"] == want_mm
    assert seen["bwd_out"] == want_bwd
    assert a.grad.dtype == lib.float32 and b.grad.dtype == lib.float32
    ref = (a.detach().double().mm(b.detach().double()))
    assert_close(out, ref, atol=5e-2, rtol=5e-2)
    assert_close(a.grad, np.ones((3, 2)) @ np_of(b).T, atol=5e-2, rtol=5e-2)


def test_custom_fwd_cuda_spellings_match_torch_113(torch_ref):
    """torch.cuda.amp.custom_fwd/custom_bwd (seed 003: FutureWarning naming torch.amp's spelling):
    under CPU autocast on a CPU tensor the CUDA decorators change nothing, as torch 1.13's."""
    def run(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fwd = lib.cuda.amp.custom_fwd(cast_inputs=lib.float32)
            bwd = lib.cuda.amp.custom_bwd
            fn, seen = _custom_amp_program(lib, fwd, bwd)
        a = lib.tensor(rnd(3, 4), dtype=lib.float32, requires_grad=True)
        b = lib.tensor(rnd(4, 2), dtype=lib.float32, requires_grad=True)
        with lib.autocast("cpu"):
            out = fn.apply(a, b)
        out.float().sum().backward()
        return seen
    ours, theirs = both(torch_ref, run)
    assert {k: repr(v) for k, v in ours.items()} == {k: repr(v) for k, v in theirs.items()}
    with pytest.warns(FutureWarning, match="torch.amp.custom_fwd"):
        ampjit.cuda.amp.custom_fwd(cast_inputs=ampjit.float32)
    with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
        ampjit.amp.custom_fwd(device_type=1)


# --- compiled code is differentiable -----------------------------------------------------------

MODULE_SRC = """
import ampjit as torch
import ampjit.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        y = torch.nn.functional.max_pool2d(y, 2)
        y = y.mean((2, 3))
        return self.fc(y).log_softmax(1)
"""


@pytest.mark.parametrize("semantics", ["torchscript", "eager"])
@pytest.mark.parametrize("amp", [False, True], ids=["f32", "bf16"])
def test_scripted_and_traced_gradients_equal_eager(program_modules, semantics, amp):
    (mod,) = [m for m, lib in program_modules("autograd_net", MODULE_SRC) if lib is ampjit]
    torch = ampjit
    torch.manual_seed(0)
    net = mod.Net()
    x = torch.tensor(rnd(2, 3, 8, 8), dtype=torch.float32)
    weights = torch.tensor(rnd(2, 5), dtype=torch.float32)
    prev = torch.jit.get_autocast_semantics()

    def grads(fn):
        net.zero_grad(set_to_none=True)
        with torch.autocast("cpu", enabled=amp):
            out = fn(x)
        (out.float() * weights).sum().backward()
        return [p.grad.clone() for p in net.parameters()]

    try:
        torch.jit.set_autocast_semantics(semantics)
        eager = grads(net)
        scripted = grads(torch.jit.script(net))
        with torch.autocast("cpu", enabled=amp, cache_enabled=False):
            traced_fn = torch.jit.trace(net, (x,), check_trace=False)
        traced = grads(traced_fn)
    finally:
        torch.jit.set_autocast_semantics(prev)
    # bfloat16: within 5e-2 of the largest gradient of the model (conv.bias, before a batch norm, has
    # a gradient that is zero in exact arithmetic: rounding noise, which differs where the traced
    # graph's casts differ from eager's, in torchscript semantics)
    tol = 5e-2 if amp else 1e-5
    scale = max(float(np.abs(np_of(e)).max()) for e in eager)
    for e, s, t in zip(eager, scripted, traced):
        assert e.dtype == torch.float32 and s.dtype == torch.float32 and t.dtype == torch.float32
        assert_close(s, e, atol=tol * scale, rtol=0)
        assert_close(t, e, atol=tol * scale, rtol=0)


# --- optimizers ----------------------------------------------------------------------------------

OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=1e-2)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, dampening=0)),
    ("SGD", dict(lr=0.05, momentum=0.5, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, weight_decay=0.1, amsgrad=True)),
    ("AdamW", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, betas=(0.8, 0.99), amsgrad=True, weight_decay=0.3)),
]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[n + str(i) for i, (n, _) in enumerate(OPTIMIZERS)])
def test_optimizers_match_torch(torch_ref, name, kwargs):
    def run(lib):
        w = lib.tensor(rnd(3, 2), dtype=lib.float32, requires_grad=True)
        b = lib.tensor(rnd(2), dtype=lib.float32, requires_grad=True)
        v = lib.tensor(rnd(2, 3), dtype=lib.float32).t().requires_grad_()  # not contiguous: the op path
        opt = getattr(lib.optim, name)([{"params": [w, v]}, {"params": [b], "lr": kwargs["lr"] * 2}], **kwargs)
        x = lib.tensor(rnd(4, 3), dtype=lib.float32)
        losses = []
        for step in range(6):
            opt.zero_grad(set_to_none=step % 2 == 0)
            loss = ((x.mm(w) + x.mm(v) * 0.5 + b).tanh() ** 2).sum()
            loss.backward()
            opt.step()
            losses.append(float(loss))
        sd = opt.state_dict()
        return w, b, losses, sd
    R.bit_generator.state = np.random.default_rng(7).bit_generator.state
    ours = run(ampjit)
    R.bit_generator.state = np.random.default_rng(7).bit_generator.state
    theirs = run(torch_ref)
    assert_close(ours[0], theirs[0], rtol=1e-5, atol=1e-6)
    assert_close(ours[1], theirs[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ours[2], theirs[2], rtol=1e-5)
    sd, tsd = ours[3], theirs[3]
    assert [sorted(g) for g in sd["param_groups"]] == [sorted(g) for g in tsd["param_groups"]]
    assert [g["params"] for g in sd["param_groups"]] == [g["params"] for g in tsd["param_groups"]]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for k in sd["state"]:
        assert sorted(sd["state"][k]) == sorted(tsd["state"][k])
        for key, v in sd["state"][k].items():
            if v is None or tsd["state"][k][key] is None:
                assert v is None and tsd["state"][k][key] is None
            else:
                assert_close(v, tsd["state"][k][key], rtol=1e-5, atol=1e-6)


def test_optimizer_closure_and_zero_grad_default(torch_ref):
    def run(lib):
        w = lib.tensor([1.0, -2.0], requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)

        def closure():
            opt.zero_grad()
            loss = (w * w).sum()
            loss.backward()
            return loss
        losses = [float(opt.step(closure)) for _ in range(3)]
        g = w.grad
        opt.zero_grad()  # torch 1.13: zeroed in place, not None
        return losses, w, g, w.grad
    ours, theirs = both(torch_ref, run)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-6)
    assert_close(ours[1], theirs[1])
    assert_close(ours[2], [0.0, 0.0])  # the same storage, zeroed
    assert_close(ours[3], theirs[3])


def test_optimizer_state_dict_round_trip_and_errors(torch_ref):
    w = ampjit.ones(2, requires_grad=True)
    opt = ampjit.optim.Adam([w], lr=0.1)
    w.grad = ampjit.ones(2)
    opt.step()
    sd = opt.state_dict()
    w2 = ampjit.ones(2, requires_grad=True)
    opt2 = ampjit.optim.Adam([w2], lr=0.5)
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == 0.1
    assert_close(opt2.state[w2]["exp_avg"], opt.state[w]["exp_avg"])
    for lib in (ampjit, torch_ref):
        with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
            lib.optim.SGD([lib.ones(2, requires_grad=True) * 2], lr=0.1)
        with pytest.raises(ValueError, match="empty parameter list"):
            lib.optim.SGD([], lr=0.1)
        with pytest.raises(ValueError, match="Nesterov momentum requires"):
            lib.optim.SGD([lib.ones(2, requires_grad=True)], lr=0.1, nesterov=True)


# --- GradScaler ----------------------------------------------------------------------------------

def test_cuda_grad_scaler_without_cuda_warns_and_disables(torch_ref):
    for lib in (ampjit, torch_ref):
        with pytest.warns(UserWarning, match="CUDA is not available.  Disabling."):
            s = lib.cuda.amp.GradScaler()
        assert not s.is_enabled() and s.get_scale() == 1.0 and s.state_dict() == {}
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.5)
        loss = (w * 3).sum()
        assert s.scale(loss) is loss
        loss.backward()
        s.step(opt)
        s.update()
        assert_close(w, [-0.5, -0.5])


def test_cpu_grad_scaler_scales_skips_and_updates():
    s = ampjit.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    w = ampjit.ones(2, requires_grad=True)
    opt = ampjit.optim.SGD([w], lr=0.5)

    def step(scale_inf=False):
        opt.zero_grad()
        loss = (w * w).sum()
        scaled = s.scale(loss)
        assert float(scaled) == float(loss) * s.get_scale()
        scaled.backward()
        if scale_inf:
            w.grad[0] = math.inf
        s.step(opt)
        s.update()

    step()  # grads 2 * w, unscaled: w -= 0.5 * 2 -> 0
    assert_close(w, [0.0, 0.0])
    assert s.get_scale() == 8.0 and s._get_growth_tracker() == 1
    step()  # second clean step: the scale grows
    assert s.get_scale() == 16.0 and s._get_growth_tracker() == 0
    before = np_of(w).copy()
    step(scale_inf=True)  # skipped, scale backs off
    assert_close(w, before)
    assert s.get_scale() == 8.0
    sd = s.state_dict()
    assert sd == {"scale": 8.0, "growth_factor": 2.0, "backoff_factor": 0.5, "growth_interval": 2,
                  "_growth_tracker": 0}
    s2 = ampjit.amp.GradScaler("cpu")
    s2.load_state_dict(sd)
    assert s2.get_scale() == 8.0
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        opt.zero_grad()
        s.scale((w * w).sum()).backward()
        s.unscale_(opt)
        s.unscale_(opt)
    with pytest.raises(RuntimeError, match="The source state dict is empty"):
        s2.load_state_dict({})


# --- training runs, step by step against torch ---------------------------------------------------

CNN_SRC = """
import ampjit as torch
import ampjit.nn as nn


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        x = torch.relu(self.b1(self.c1(x)))
        x = torch.nn.functional.max_pool2d(x, 2)
        x = torch.nn.functional.gelu(self.c2(x))
        x = torch.nn.functional.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)
"""


@pytest.mark.parametrize("opt_name,amp", [("SGD", False), ("SGD", True), ("AdamW", True)])
def test_training_run_matches_torch_step_by_step(program_modules, opt_name, amp):
    """20 steps of a small CNN (conv, batch norm, max pool, GELU, adaptive pool, linear, cross
    entropy): the losses match torch's step by step, within 1e-4 relative in float32 and 3e-2 under
    CPU autocast (bfloat16)."""
    modules = {lib.__name__: m for m, lib in program_modules("autograd_cnn", CNN_SRC)}
    if "torch" not in modules:
        pytest.skip("differential test: the real PyTorch is not installed to serve as the oracle")
    torch = __import__("torch")
    torch.manual_seed(0)
    tnet = modules["torch"].SmallCNN().train()
    anet = modules["ampjit"].SmallCNN().train()
    anet.load_state_dict({k: ampjit.from_numpy(v.detach().numpy().copy()) for k, v in tnet.state_dict().items()})
    data = np.random.default_rng(3)
    xs = [data.standard_normal((8, 3, 16, 16)).astype(np.float32) for _ in range(4)]
    ys = [data.integers(0, 10, 8) for _ in range(4)]
    losses = {}
    for lib, net in (("ampjit", anet), ("torch", tnet)):
        L = ampjit if lib == "ampjit" else torch
        if opt_name == "SGD":
            opt = L.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
        else:
            opt = L.optim.AdamW(net.parameters(), lr=3e-3)
        out = []
        for step in range(20):
            x = L.from_numpy(xs[step % 4])
            y = L.from_numpy(ys[step % 4])
            opt.zero_grad()
            with L.autocast("cpu", enabled=amp):
                loss = L.nn.functional.cross_entropy(net(x), y)
            loss.backward()
            opt.step()
            out.append(float(loss))
        losses[lib] = out
    tol = 3e-2 if amp else 1e-4
    np.testing.assert_allclose(losses["ampjit"], losses["torch"], rtol=tol, atol=tol)
    assert losses["ampjit"][-1] < losses["ampjit"][0]  # it learns


# --- activation checkpointing and the random state -----------------------------------------------

def test_rng_state_round_trip():
    ampjit.manual_seed(3)
    state = ampjit.get_rng_state()
    a = ampjit.randn(5)
    ampjit.set_rng_state(state)
    assert ampjit.equal(ampjit.randn(5), a)
    with pytest.raises(RuntimeError, match="expected a state of"):
        ampjit.set_rng_state(ampjit.zeros(3, dtype=ampjit.uint8))


def test_checkpoint_recomputes_with_the_same_dropout_and_gradients():
    import ampjit.utils.checkpoint as cp
    nn = ampjit.nn
    ampjit.manual_seed(0)
    block = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 3))
    x = ampjit.randn(4, 6, requires_grad=True)

    def run(use_checkpoint):
        block.zero_grad(set_to_none=True)
        x.grad = None
        ampjit.manual_seed(11)
        out = cp.checkpoint(block, x) if use_checkpoint else block(x)
        (out * ampjit.arange(3.0)).sum().backward()
        return out.detach(), x.grad.clone(), [p.grad.clone() for p in block.parameters()]
    plain, ckpt = run(False), run(True)
    assert ampjit.equal(plain[0], ckpt[0])
    assert_close(ckpt[1], plain[1], rtol=1e-6)
    for a, b in zip(ckpt[2], plain[2]):
        assert_close(a, b, rtol=1e-6)
    seq = cp.checkpoint_sequential(nn.Sequential(nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2)), 2, x)
    assert seq.requires_grad
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        cp.checkpoint(block, x.detach())
