"""Views under autograd (Note [Views and in-place changes] in runtime/autograd/views.h), overlapping
writes (Note [Overlapping writes] in runtime/mem_overlap.h) and inference mode: each program runs
under ampjit and torch 1.13, and their gradients, grad_fn names and error messages are compared."""
import numpy as np
import pytest

import ampjit
from test_autograd import assert_close, both, np_of, raises_same


def grad_of(lib, program):
    """program(lib, w) -> a scalar; the gradient it gives w = arange(12.) (float64)."""
    w = lib.arange(12.0, dtype=lib.float64).requires_grad_()
    program(lib, w).backward()
    return w.grad


def setitem_into_zeros(lib, w):  # a copy into a view of a tensor that did not require grad
    x = lib.zeros(2, 6, dtype=lib.float64)
    x[0] = w[:6] * 2
    return (x * x).sum()


def mul_on_a_column(lib, w):
    x = (w * 1).view(3, 4)
    x[:, 1].mul_(3)
    return (x * x).sum()


def strided_slice(lib, w):
    x = (w * 1).view(3, 4)
    x[:, ::2].mul_(2)
    return (x * x).sum()


def transposed_setitem(lib, w):
    x = w.view(3, 4).clone()
    x.t()[0, 1] = 5.0
    return (x * x).sum()


def several_writes(lib, w):
    y = (w - 5).view(3, 4).clone()
    y[:, 0] = 0.0
    y[1].mul_(2)
    y[:, 2:].relu_()
    return (y ** 2).sum()


def view_of_view(lib, w):
    x = (w * 1).view(2, 6)
    x.view(4, 3)[1:3].view(6)[2:4].add_(w[:2])
    return (x * x).sum()


def base_written_after_view(lib, w):  # the view reads the base's new values
    x = w * 1
    v = x.view(3, 4)
    x.mul_(2)
    return (v * v).sum()


def sibling_written(lib, w):  # the other view reads through the base
    x = (w * 1).view(3, 4)
    a, b = x[0], x[1]
    b.mul_(3)
    return (a * b).sum() + (x * x).sum()


def written_in_no_grad(lib, w):  # autograd does not see the write
    x = (w * 1).view(3, 4)
    v = x[1]
    with lib.no_grad():
        v.mul_(2)
    return (v * v).sum() + x.sum()


def index_assignment(lib, w):  # x[idx] = value: index_copy_ into the tensor
    x = w.view(3, 4).clone()
    x[lib.tensor([0, 2])] = w[:8].view(2, 4) * 3
    return (x * x).sum()


def unsqueeze_squeeze_chain(lib, w):
    x = (w * 0.1).view(3, 4)
    x.unsqueeze(0).squeeze(0)[1].sigmoid_()
    return (x * x).sum()


IN_PLACE_THROUGH_VIEWS = {f.__name__: f for f in (
    setitem_into_zeros, mul_on_a_column, strided_slice, transposed_setitem, several_writes, view_of_view,
    base_written_after_view, sibling_written, written_in_no_grad, index_assignment, unsqueeze_squeeze_chain)}


@pytest.mark.parametrize("name", sorted(IN_PLACE_THROUGH_VIEWS))
def test_in_place_changes_of_views_give_torchs_gradients(torch_ref, name):
    program = IN_PLACE_THROUGH_VIEWS[name]
    ours, theirs = both(torch_ref, lambda lib: grad_of(lib, program))
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12)


def test_grad_fns_of_bases_and_views_are_torchs(torch_ref):
    def names(lib):
        w = lib.randn(2, 3, requires_grad=True)
        x = w * 1
        a, b = x[0], x[1]
        b.mul_(2)
        z = lib.zeros(2, 3)
        z[0] = w[0]
        return [x.grad_fn.name(), a.grad_fn.name(), b.grad_fn.name(), a.is_leaf, z.grad_fn.name(),
                z[1]._is_view(), z.requires_grad, x.detach()._is_view(), x.view(6)._is_view(),
                x.reshape(6)._is_view(), x.contiguous()._is_view(), repr(z).split("grad_fn=")[1]]
    ours, theirs = both(torch_ref, names)
    assert ours == theirs
    assert ours[0] == "torch::autograd::CopySlices" and ours[1] == "AsStridedBackward0"


def test_views_know_their_base():
    x = ampjit.randn(3, 4)
    v = x.t()[1:].unsqueeze(0)
    # Python wrappers are not preserved (a new object per access): the base's storage is x's
    assert v._is_view() and v._base.data_ptr() == x.data_ptr() and v._base.shape == x.shape
    assert x._base is None and not x._is_view()


def test_double_backward_through_in_place_changes_of_views(torch_ref):
    def run(lib):
        w = lib.arange(6.0, dtype=lib.float64).requires_grad_()
        x = (w * w).view(2, 3)
        x[:, ::2].mul_(w[:2].view(2, 1))
        x.mul_(w.view(2, 3))  # the saved `self` of an in-place op keeps its history too
        (g,) = lib.autograd.grad((x * x).sum(), w, create_graph=True)
        (h,) = lib.autograd.grad((g * g).sum(), w)
        return g, h
    (g, h), (tg, th) = both(torch_ref, run)
    assert_close(g, tg, rtol=1e-12)
    assert_close(h, th, rtol=1e-12)


def test_as_strided_gradients_and_checks(torch_ref):
    def overlapping(lib):
        w = lib.arange(6.0, dtype=lib.float64).requires_grad_()
        e = w.as_strided([3, 3], [1, 1], 1)  # windows sharing elements: their gradients add up
        (e * lib.arange(9.0, dtype=lib.float64).view(3, 3)).sum().backward()
        return w.grad
    ours, theirs = both(torch_ref, overlapping)
    assert_close(ours, theirs)
    x = lambda lib: lib.zeros(3)  # noqa: E731
    raises_same(torch_ref, lambda lib: x(lib).as_strided([3], [1], 5))
    raises_same(torch_ref, lambda lib: x(lib).as_strided([3], [-1]))
    raises_same(torch_ref, lambda lib: x(lib).as_strided([3], [1], -1))
    raises_same(torch_ref, lambda lib: x(lib).as_strided([3, 1], [1]))
    raises_same(torch_ref, lambda lib: x(lib).as_strided([2 ** 62, 4], [4, 2 ** 61]))


def test_in_place_changes_of_views_refused_as_torch_refuses_them(torch_ref):
    def view_of_leaf(lib):
        w = lib.randn(2, 3, requires_grad=True)
        w[0].mul_(2)

    def made_in_no_grad(lib):
        x = lib.randn(2, 3, requires_grad=True) * 1
        with lib.no_grad():
            v = x[0]
        v.mul_(2)

    def made_in_no_grad_of_a_plain_tensor(lib):
        x = lib.zeros(3)
        with lib.no_grad():
            v = x[0:2]
        v.copy_(lib.ones(2, requires_grad=True))

    def base_changed_under_a_no_grad_view(lib):
        x = lib.randn(2, 3, requires_grad=True) * 1
        with lib.no_grad():
            v = x[0]
        x.mul_(2)
        return v.grad_fn

    def one_of_several_views(op):
        def run(lib):
            x = lib.randn(4, 3, requires_grad=True) * 1
            getattr(x, op)(2 if op != "unbind" else 0)[0].mul_(2)
        return run

    def base_changed_under_several_views(lib):
        x = lib.randn(2, 3, requires_grad=True) * 1
        a, _ = x.unbind(0)
        x.mul_(2)
        (a * 1).sum().backward()

    def detach_a_view(lib):
        (lib.randn(2, 3, requires_grad=True) * 1)[0].detach_()

    messages = [raises_same(torch_ref, f) for f in (
        view_of_leaf, made_in_no_grad, made_in_no_grad_of_a_plain_tensor,
        base_changed_under_a_no_grad_view, one_of_several_views("unbind"), one_of_several_views("chunk"),
        one_of_several_views("split"), base_changed_under_several_views, detach_a_view)]
    assert messages[0] == "a view of a leaf Variable that requires grad is being used in an in-place operation."
    assert messages[5].startswith("Output 0 of SplitBackward0 is a view and is being modified inplace.")


def test_overlapping_writes_refused_as_torch_refuses_them(torch_ref):
    expanded = lambda lib: lib.zeros(1, 2).expand(3, 2)  # noqa: E731
    for write in (lambda t, lib: t.add_(1), lambda t, lib: t.relu_(), lambda t, lib: t.copy_(lib.ones(3, 2)),
                  lambda t, lib: t.index_copy_(0, lib.tensor([0]), lib.ones(1, 2)),
                  lambda t, lib: lib.mul(lib.ones(3, 2), lib.ones(3, 2), out=t)):
        raises_same(torch_ref, lambda lib: write(expanded(lib), lib))
    for allowed in (lambda t: t.fill_(1), lambda t: t.zero_()):
        ours, theirs = both(torch_ref, lambda lib: allowed(expanded(lib)))
        assert_close(ours, theirs)
    x = lambda lib: lib.arange(6.0).view(2, 3)  # noqa: E731
    raises_same(torch_ref, lambda lib: (lambda t: t[0, 1:3].copy_(t[0, 0:2]))(x(lib)))
    raises_same(torch_ref, lambda lib: (lambda t: t.copy_(t.t()))(lib.arange(4.0).view(2, 2)))
    ours, theirs = both(torch_ref, lambda lib: (lambda t: t.copy_(t) + t[:, :2].add_(t[:, 1:]).sum())(x(lib)))
    assert_close(ours, theirs)


def test_inference_mode_as_torch(torch_ref):
    def modes(lib):
        out = []
        with lib.inference_mode():
            out.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled()))
            x = lib.ones(2)
            with lib.inference_mode(False):
                out.append((lib.is_grad_enabled(), lib.is_inference_mode_enabled(), lib.ones(1).is_inference()))
            x.add_(1)  # inside: allowed
        with lib.no_grad():
            with lib.inference_mode(False):
                out.append(lib.is_grad_enabled())
        w = lib.ones(2, requires_grad=True)
        with lib.inference_mode():
            y, v = w * 2, w[0]
        out.append((x.is_inference(), x.clone().is_inference(), (x * 2).is_inference(), x[0].is_inference(),
                    x.detach().is_inference(), y.is_inference(), y.requires_grad, v.is_inference(),
                    v.requires_grad, v._is_view(), x.tolist()))
        (x + w).sum().backward()  # add saves nothing: allowed
        out.append(w.grad.tolist())
        return out

    ours, theirs = both(torch_ref, modes)
    assert ours == theirs

    def made_inside(lib):
        with lib.inference_mode():
            return lib.ones(2)

    raises_same(torch_ref, lambda lib: made_inside(lib).add_(1))
    raises_same(torch_ref, lambda lib: made_inside(lib) * lib.ones(2, requires_grad=True))
    raises_same(torch_ref, lambda lib: made_inside(lib).requires_grad_())

    def view_made_inside(lib):
        y = lib.ones(3, requires_grad=True) * 1
        with lib.inference_mode():
            v = y[0:2]
        v.add_(1)
    raises_same(torch_ref, view_made_inside)

    @ampjit.inference_mode()
    def decorated(x):
        return x * 2, ampjit.is_grad_enabled()
    r, grad_on = decorated(ampjit.ones(1))
    assert r.is_inference() and not grad_on and ampjit.is_grad_enabled()


def test_zoo_ops_newly_differentiable(torch_ref):
    """einsum (maxvit), adaptive average pooling with unequal or overlapping windows (alexnet,
    vgg), index_copy (x[idx] = v)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5))
    for eq in ("bhid,bhjd->bhij", "B H I D, B H J D -> B H I J", "bhid,bhjd->bhi", "bhid,bhjd"):
        def einsum(lib, eq=eq):
            x, y = lib.from_numpy(a.copy()).requires_grad_(), lib.from_numpy(b.copy()).requires_grad_()
            r = lib.einsum(eq, x, y)
            (r * r).sum().backward()
            return x.grad, y.grad
        (gx, gy), (tx, ty) = both(torch_ref, einsum)
        assert_close(gx, tx, rtol=1e-10)
        assert_close(gy, ty, rtol=1e-10)
    for (h, w, oh, ow) in [(1, 1, 6, 6), (5, 7, 3, 2), (10, 10, 3, 4), (3, 3, 7, 7)]:
        x = rng.standard_normal((2, 3, h, w))
        g = rng.standard_normal((2, 3, oh, ow))

        def pool(lib):
            t = lib.from_numpy(x.copy()).requires_grad_()
            (lib.nn.functional.adaptive_avg_pool2d(t, (oh, ow)) * lib.from_numpy(g.copy())).sum().backward()
            return t.grad
        ours, theirs = both(torch_ref, pool)
        assert_close(ours, theirs, rtol=1e-12, atol=1e-12)

    def index_copy(lib):
        s = lib.arange(12.0, dtype=lib.float64).view(4, 3).requires_grad_()
        src = lib.ones(2, 3, dtype=lib.float64).requires_grad_()
        r = s.index_copy(0, lib.tensor([3, 1]), src * 2)
        (r * r).sum().backward()
        return s.grad, src.grad
    (gs, gsrc), (ts, tsrc) = both(torch_ref, index_copy)
    assert_close(gs, ts)
    assert_close(gsrc, tsrc)


def test_retain_grad_follows_in_place_changes(torch_ref):
    """torch 1.13 moves retain_grad's hook to the new grad_fn: .grad is the gradient of the value
    the tensor holds at the end; a hook registered before the change sees the old value's."""
    def run(lib):
        seen = []
        x = lib.tensor([-1.0, 2.0, 3.0], requires_grad=True)
        a = x * 1
        a.retain_grad()
        a.register_hook(lambda g: seen.append(g.tolist()))
        a.mul_(2)
        a.relu_()
        (a * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        return a.grad.tolist(), seen, x.grad.tolist()
    ours, theirs = both(torch_ref, run)
    assert ours == theirs
