"""The torch-shaped Tensor: construction, properties, operators, indexing, conversions, errors.

Where PyTorch 1.13 is installed, the same expressions also run under torch and must agree
(dtype, shape, values); the product never imports torch, only these tests do.
"""
import math
import threading

import numpy as np
import pytest

import ampjit

try:
    import torch as real_torch
except ImportError:  # the oracle is optional; the ampjit assertions below still run
    real_torch = None


def both(expr):
    """Evaluates `expr` (a function of a torch-like module) under ampjit and, if present, torch."""
    a = expr(ampjit)
    if real_torch is not None:
        t = expr(real_torch)
        assert repr(a.dtype) == repr(t.dtype), (a.dtype, t.dtype)
        assert tuple(a.shape) == tuple(t.shape)
        np.testing.assert_allclose(a.double().numpy(), t.double().numpy(), rtol=1e-6, atol=1e-6)
    return a


def test_dtype_objects_and_aliases():
    assert ampjit.half is ampjit.float16
    assert ampjit.float is ampjit.float32
    assert ampjit.double is ampjit.float64
    assert ampjit.long is ampjit.int64
    assert ampjit.int is ampjit.int32
    assert repr(ampjit.bfloat16) == "torch.bfloat16"
    assert ampjit.float16.is_floating_point and not ampjit.int64.is_floating_point
    assert ampjit.ones(2).dtype is ampjit.float32
    assert isinstance(ampjit.float16, ampjit.dtype)


def test_tensor_constructor_infers_like_torch():
    assert ampjit.tensor([1, 2]).dtype is ampjit.int64
    assert ampjit.tensor([1, 2.5]).dtype is ampjit.float32
    assert ampjit.tensor([True, False]).dtype is ampjit.bool
    assert ampjit.tensor([[1, 2], [3, 4]], dtype=ampjit.float16).dtype is ampjit.float16
    assert ampjit.tensor(3.5).dim() == 0
    assert ampjit.tensor([]).shape == (0,)
    assert ampjit.tensor([2**40]).tolist() == [2**40]
    with pytest.raises(ValueError, match="expected sequence of length 2 at dim 1"):
        ampjit.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="Could not infer dtype of"):
        ampjit.tensor([object()])


def test_properties():
    x = ampjit.zeros(2, 3, dtype=ampjit.bfloat16)
    assert x.shape == (2, 3) and repr(x.shape) == "torch.Size([2, 3])"
    assert x.size() == (2, 3) and x.size(1) == 3 and x.size(-1) == 3
    assert x.dim() == 2 and x.ndim == 2 and x.numel() == 6
    assert str(x.device) == "cpu" and repr(x.device) == "device(type='cpu')"
    assert not x.is_cuda and x.is_leaf and not x.requires_grad
    assert x.stride() == (3, 1) and x.t().stride() == (1, 3)
    assert x.element_size() == 2
    w = ampjit.ones(2)
    w.requires_grad = True
    assert w.requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype can require gradients"):
        ampjit.ones(2, dtype=ampjit.int64).requires_grad = True


def test_repr_matches_torch():
    assert repr(ampjit.arange(3)) == "tensor([0, 1, 2])"
    assert repr(ampjit.tensor([0.5, 1.0], dtype=ampjit.float16)) == "tensor([0.5000, 1.0000], dtype=torch.float16)"
    assert repr(ampjit.ones(2, 2)) == "tensor([[1., 1.],\n        [1., 1.]])"
    if real_torch is not None:
        for expr in (lambda m: m.arange(12).view(3, 4) * 1.5, lambda m: m.tensor([1e-5, 3.0]),
                     lambda m: m.tensor([123456.0, 1.0]), lambda m: m.zeros(0, 2),
                     lambda m: m.tensor([True, False]), lambda m: m.arange(2000) * 2,
                     lambda m: m.tensor(2.5, dtype=m.bfloat16), lambda m: m.ones(2, 1, 3, dtype=m.float64)):
            assert repr(expr(ampjit)) == repr(expr(real_torch))


def test_operators_and_python_scalar_promotion():
    x = ampjit.arange(4, dtype=ampjit.float16)
    assert (x + 1.5).dtype is ampjit.float16           # Python float never widens float16
    assert (ampjit.arange(4) + 1.5).dtype is ampjit.float32  # int tensor + float -> default float
    assert (ampjit.arange(4, dtype=ampjit.uint8) + 1000).dtype is ampjit.uint8
    assert (1.5 + x).dtype is ampjit.float16
    both(lambda m: m.arange(6).view(2, 3) + m.arange(3))
    both(lambda m: 10 - m.arange(4))
    both(lambda m: m.arange(4, dtype=m.float32) * 2.5)
    both(lambda m: m.arange(1, 5) / 2)
    both(lambda m: 2 ** m.arange(4))
    both(lambda m: m.arange(4.0) ** 2)
    both(lambda m: -m.arange(3.0))
    both(lambda m: m.arange(6.0).view(2, 3) @ m.ones(3, 2))
    both(lambda m: (m.arange(4) > 1) & (m.arange(4) < 3))
    both(lambda m: m.arange(4) == 2)
    both(lambda m: m.arange(7) // 2)
    both(lambda m: m.arange(-3, 4) % 3)


def test_inplace_operators_keep_identity_and_dtype():
    x = ampjit.ones(3)
    y = x
    x += 2
    x *= ampjit.full([3], 2.0)
    assert y is x and x.tolist() == [6.0, 6.0, 6.0]
    i = ampjit.arange(3)
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired output type int64"):
        i += 1.5


def test_indexing_reads():
    m = ampjit.arange(24).view(2, 3, 4)
    assert m[1, 2, 3].item() == 23
    assert m[0].shape == (3, 4)
    assert m[:, 1].tolist() == [[4, 5, 6, 7], [16, 17, 18, 19]]
    assert m[..., -1].tolist() == [[3, 7, 11], [15, 19, 23]]
    assert m[None, 1, ::2].shape == (1, 2, 4)
    assert m[0, :, ampjit.tensor([0, 3])].tolist() == [[0, 3], [4, 7], [8, 11]]
    v = ampjit.arange(5)
    assert v[v > 2].tolist() == [3, 4]
    assert v[[0, 0, 4]].tolist() == [0, 0, 4]
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 3"):
        m[0, 0, 0, 0]
    with pytest.raises(IndexError, match="index 5 out of range"):
        m[0, 5]


def test_indexing_writes_go_to_the_storage():
    a = ampjit.zeros(3, 4)
    a[1] = 5.0
    a[:, 0] = ampjit.arange(3, dtype=ampjit.float32)
    a[2, 1:3] = ampjit.tensor([7.0, 8.0])
    assert a.tolist() == [[0, 0, 0, 0], [1, 5, 5, 5], [2, 7, 8, 0]]
    b = ampjit.arange(5, dtype=ampjit.float32)
    b[b > 2] = -1.0
    assert b.tolist() == [0, 1, 2, -1, -1]


def test_views_share_memory():
    a = ampjit.zeros(2, 3)
    v = a.view(3, 2)
    v.fill_(1.0)
    assert a.sum().item() == 6.0
    t = a.t()
    assert not t.is_contiguous() and t.contiguous().is_contiguous()
    assert a.T.shape == (3, 2)
    assert a.unsqueeze(0).shape == (1, 2, 3) and a.flatten().shape == (6,)
    assert a.reshape(-1).shape == (6,) and a.expand(4, 2, 3).shape == (4, 2, 3)


def test_numpy_round_trip_shares_memory():
    arr = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = ampjit.from_numpy(arr)
    arr[0, 0] = 100.0
    assert t[0, 0].item() == 100.0
    back = t.numpy()
    back[1, 2] = -1.0
    assert t[1, 2].item() == -1.0
    assert ampjit.from_numpy(np.arange(4)).dtype is ampjit.int64
    assert ampjit.from_numpy(arr.T).stride() == (1, 3)
    h = ampjit.ones(2, dtype=ampjit.float16).numpy()
    assert h.dtype == np.float16
    with pytest.raises(TypeError, match="Got unsupported ScalarType bfloat16"):
        ampjit.ones(2, dtype=ampjit.bfloat16).numpy()
    with pytest.raises(TypeError, match="can't convert np.ndarray of type numpy.complex128"):
        ampjit.from_numpy(np.zeros(2, dtype=np.complex128))
    del arr  # the tensor keeps the array's memory alive
    assert t.sum().item() == 109.0  # 0..5 with 0 -> 100 and 5 -> -1


def test_item_tolist_and_python_number_conversions():
    assert ampjit.tensor(2.5).item() == 2.5
    assert ampjit.tensor(3).item() == 3 and isinstance(ampjit.tensor(3).item(), int)
    assert float(ampjit.tensor([1.5])) == 1.5 and int(ampjit.tensor(7)) == 7
    assert bool(ampjit.tensor([1]))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(ampjit.ones(2))
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to Scalar"):
        ampjit.ones(2).item()
    assert ampjit.tensor([[True], [False]]).tolist() == [[True], [False]]


def test_equal_is_sizes_and_values_after_promotion():
    cases = [
        lambda t: (t.tensor([1, 2]), t.tensor([1, 2])),
        lambda t: (t.tensor([1, 2]), t.tensor([[1, 2]])),  # broadcastable is not equal
        lambda t: (t.tensor([1, 2]), t.tensor([1.0, 2.0])),  # compared after promotion
        lambda t: (t.tensor([float("nan")]), t.tensor([float("nan")])),  # NaN is never equal
        lambda t: (t.zeros(0, 3), t.zeros(0, 3)),
        lambda t: (t.arange(6.0).reshape(2, 3).t(), t.arange(6.0).reshape(2, 3).t().contiguous()),
        lambda t: (t.tensor([1.0, 2.0]), t.tensor([1.0, 2.5])),
    ]
    want = [True, False, True, False, True, True, False]
    for case, w in zip(cases, want):
        a, b = case(ampjit)
        assert ampjit.equal(a, b) is w and a.equal(b) is w
        if real_torch is not None:
            ta, tb = case(real_torch)
            assert real_torch.equal(ta, tb) is w


def test_to_and_type_conversions():
    x = ampjit.arange(3, dtype=ampjit.float32)
    assert x.to(ampjit.float16).dtype is ampjit.float16
    assert x.half().dtype is ampjit.float16 and x.bfloat16().dtype is ampjit.bfloat16
    assert x.double().dtype is ampjit.float64 and x.long().dtype is ampjit.int64
    assert x.to("cpu") is not None and x.to(x).dtype is ampjit.float32
    assert x.to(dtype=ampjit.int32).dtype is ampjit.int32
    assert x.float() is not None


def test_errors_are_python_exception_classes_with_the_op_named():
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of tensor b \(2\)"):
        ampjit.ones(3) + ampjit.ones(2)
    with pytest.raises(TypeError, match="argument 'other'"):
        ampjit.add(ampjit.ones(2), "x")
    with pytest.raises(NotImplementedError, match="has no op named|does not implement"):
        ampjit._C._call("aten::frobnicate", (), {})
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda device type"):
        ampjit.device("tpu")


def test_manual_seed_makes_random_reproducible():
    ampjit.manual_seed(123)
    a = ampjit.rand(5).tolist()
    b = ampjit.randn(2, 2).tolist()
    ampjit.manual_seed(123)
    assert ampjit.rand(5).tolist() == a and ampjit.randn(2, 2).tolist() == b


def test_no_grad_is_a_context_manager_and_decorator():
    assert ampjit.is_grad_enabled()
    with ampjit.no_grad():
        assert not ampjit.is_grad_enabled()

    @ampjit.no_grad()
    def f():
        return ampjit.is_grad_enabled()

    assert f() is False and ampjit.is_grad_enabled()
    seen = []
    with ampjit.no_grad():
        t = threading.Thread(target=lambda: seen.append(ampjit.is_grad_enabled()))
        t.start()
        t.join()
    assert seen == [True]  # per thread


def test_large_ops_release_the_gil():
    x = ampjit.ones(1 << 20)
    results = []

    def work():
        y = x
        for _ in range(20):
            y = y + 1.0
        results.append(y[0].item())

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [21.0] * 4


def test_manual_seed_gives_torchs_numbers(torch_ref):
    """torch's CPU generator (MT19937) and its rand/randn/dropout transforms: ampjit.manual_seed(s)
    gives torch.manual_seed(s)'s numbers, bit for bit (Note [torch's CPU generator])."""
    import numpy as np

    def draws(L):
        out = []
        L.manual_seed(0)
        out.append(L.rand(5))
        out.append(L.randn(5))          # one normal_distribution<double> draw per element
        out.append(L.randn(20))         # normal_fill: blocks of 16, the last one redrawn
        out.append(L.rand(3, dtype=L.float64))
        out.append(L.randn(17, dtype=L.float64))
        out.append(L.nn.functional.dropout(L.ones(10), 0.5, True))
        L.manual_seed(42)
        out.append(L.randn(3))
        out.append(L.rand(4, dtype=L.bfloat16).float())
        out.append(L.rand(4, dtype=L.float16).float())
        return np.concatenate([t.numpy().astype(np.float64).ravel() for t in out])

    np.testing.assert_array_equal(draws(ampjit), draws(torch_ref))


def test_layer_initialization_after_manual_seed_is_torchs(torch_ref):
    """nn.Linear and nn.Conv2d's default (uniform) initialization gives torch's weights bit for bit
    after the same seed; a normal initializer agrees to within one rounding."""
    import numpy as np

    def weights(L):
        L.manual_seed(0)
        lin, conv = L.nn.Linear(20, 30), L.nn.Conv2d(3, 8, 3)
        w = L.empty(40)
        L.nn.init.normal_(w, 0.5, 2.0)
        return [t.detach().numpy() for t in (lin.weight, lin.bias, conv.weight, conv.bias)], w.numpy()

    (got, gn), (want, wn) = weights(ampjit), weights(torch_ref)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_allclose(gn, wn, rtol=2e-7, atol=0)
