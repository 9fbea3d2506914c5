"""The parallel walks of the scatter, selection and pooling kernels against torch 1.13 and against
a serial row-major reference (Note [Scatter reductions]: repeated indices meet in index's row-major
order, the last write winning), on shapes that cross the parallel grain, every dim, strided
operands and colliding indices."""
import itertools

import numpy as np
import pytest

import ampjit

torch = pytest.importorskip("torch")


def to_a(x):
    return ampjit.from_numpy(np.array(x, order="C", copy=True))


def serial_scatter(self, dim, index, src):
    """scatter's assignment visited in index's row-major order."""
    out = self.copy()
    for pos in itertools.product(*(range(s) for s in index.shape)):
        dest = list(pos)
        dest[dim] = index[pos]
        out[tuple(dest)] = src if np.isscalar(src) else src[pos]
    return out


SHAPES = [((64, 40, 33), (60, 17, 33)), ((3000, 20), (2900, 20)), ((20, 3000), (20, 2500)),
          ((5,), (4,)), ((2, 3, 4, 5), (2, 3, 4, 5))]


@pytest.mark.parametrize("shapes", SHAPES)
@pytest.mark.parametrize("collide", [False, True])
def test_scatter_matches_torch_and_the_serial_order(shapes, collide):
    rng = np.random.default_rng(1)
    ssize, isize = shapes
    for dim in range(len(ssize)):
        isz = list(isize)
        if not collide:
            isz[dim] = min(isz[dim], ssize[dim])
            # distinct indices along dim in every fiber
            index = np.argsort(rng.random(isz[:dim] + [ssize[dim]] + isz[dim + 1:]), axis=dim)
            index = np.take(index, range(isz[dim]), axis=dim)
        else:
            index = rng.integers(0, ssize[dim], size=isz)
        self_ = rng.standard_normal(ssize).astype(np.float32)
        src = rng.standard_normal([s + 1 for s in isz]).astype(np.float32)
        got = ampjit.scatter(to_a(self_), dim, to_a(index), to_a(src)).numpy()
        cut = src[tuple(slice(0, s) for s in isz)]
        if index.size <= 20000:
            np.testing.assert_array_equal(got, serial_scatter(self_, dim, index, cut))
        if not collide:
            want = torch.scatter(torch.from_numpy(self_), dim, torch.from_numpy(index),
                                 torch.from_numpy(src)).numpy()
            np.testing.assert_array_equal(got, want)
        got_v = ampjit.scatter(to_a(self_), dim, to_a(index), 2.5).numpy()
        want_v = torch.scatter(torch.from_numpy(self_), dim, torch.from_numpy(index), 2.5).numpy()
        np.testing.assert_array_equal(got_v, want_v)
        for reduce in ("sum", "prod", "mean", "amax", "amin"):
            for include_self in (True, False):
                g = ampjit.scatter_reduce(to_a(self_), dim, to_a(index), to_a(src), reduce,
                                          include_self=include_self).numpy()
                w = torch.scatter_reduce(torch.from_numpy(self_), dim, torch.from_numpy(index),
                                         torch.from_numpy(src), reduce,
                                         include_self=include_self).numpy()
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_scatter_strided_operands_and_a_0_dim_index():
    rng = np.random.default_rng(2)
    self_ = rng.standard_normal((50, 60)).astype(np.float32)
    index = rng.integers(0, 50, size=(60, 40))
    src = rng.standard_normal((60, 50)).astype(np.float32)
    a = ampjit.scatter(to_a(self_), 0, to_a(index).t(), to_a(src).t())
    t = torch.scatter(torch.from_numpy(self_), 0, torch.from_numpy(index).t(),
                      torch.from_numpy(src).t())
    np.testing.assert_array_equal(a.numpy(), serial_scatter(self_, 0, index.T, src.T[:40]))
    assert a.shape == tuple(t.shape)
    # a 0-dim index writes at its value, as torch's
    for lib in (ampjit, torch):
        out = lib.zeros(5).scatter(0, lib.tensor(3), lib.tensor(1.0))
        assert out.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    with pytest.raises(RuntimeError, match="index 7 is out of bounds for dimension 1 with size 6"):
        ampjit.zeros(3, 6).scatter(1, ampjit.tensor([[0, 7], [9, 1]]), 1.0)


@pytest.mark.parametrize("shape", [(), (7,), (1000, 1000), (3, 0, 4), (5, 70000), (40, 33, 57),
                                   (2, 3, 4, 5, 6)])
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16", "float64"])
def test_nonzero_matches_torch(shape, dtype):
    rng = np.random.default_rng(3)
    x = np.where(rng.random(shape) < 0.3, rng.standard_normal(shape), 0.0)
    if dtype == "float32" and x.size:
        x.flat[::7] = np.nan  # NaN is nonzero
        x.flat[::11] = -0.0   # -0 is zero
    t = torch.from_numpy(np.array(x)).to(getattr(torch, dtype))
    a = ampjit.from_numpy(np.array(x)).to(getattr(ampjit, dtype))
    for threads in (1, 2):
        ampjit.set_num_threads(threads)
        got = ampjit.nonzero(a)
        assert tuple(got.shape) == tuple(torch.nonzero(t).shape)
        np.testing.assert_array_equal(got.numpy(), torch.nonzero(t).numpy())
    if len(shape) == 2:  # a transposed input
        np.testing.assert_array_equal(ampjit.nonzero(a.t()).numpy(), torch.nonzero(t.t()).numpy())


@pytest.mark.parametrize("shape,mshape", [((1000000,), (1000000,)), ((300, 400), (400,)),
                                          ((5,), (3, 5)), ((7, 9), (7, 9)), ((0, 3), (3,))])
def test_masked_select_matches_torch(shape, mshape):
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(np.float32)
    m = rng.random(mshape) < 0.5
    for threads in (1, 2):
        ampjit.set_num_threads(threads)
        for mdt in ("bool", "uint8"):
            got = ampjit.masked_select(to_a(x), to_a(m).to(getattr(ampjit, mdt)))
            want = torch.masked_select(torch.from_numpy(x),
                                       torch.from_numpy(m).to(getattr(torch, mdt)))
            np.testing.assert_array_equal(got.numpy(), want.numpy())
        got = ampjit.masked_select(to_a(x).to(ampjit.int64), to_a(m))
        want = torch.masked_select(torch.from_numpy(x).long(), torch.from_numpy(m))
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("k,s,p,d,ceil", [(3, 2, 0, 1, False), (3, 1, 1, 1, False),
                                          (2, 2, 0, 1, True), (3, 3, 1, 2, True),
                                          (4, 1, 2, 1, False), (1, 1, 0, 1, False),
                                          (5, 2, 2, 2, True)])
@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64", "int64"])
def test_max_pool_matches_torch(k, s, p, d, ceil, dtype):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 9, 50)).astype(np.float32)
    if dtype != "int64":
        x[0, 0, 1, 5] = np.nan
        x[1, 2, 4, 20] = -np.nan
        x[0, 1, :, 7:10] = -0.0
        x[0, 1, :, 10:12] = 0.0
    else:
        x = np.round(x * 10)
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    a = ampjit.from_numpy(x).to(getattr(ampjit, dtype))
    if dtype == "int64":  # torch 1.13 has no integer max_pool on the CPU: compare with float64
        t = t.double()
    kw = dict(stride=s, padding=p, dilation=d, ceil_mode=ceil)
    got = ampjit.nn.functional.max_pool2d(a, (k, k), **kw).double().numpy()
    want = torch.nn.functional.max_pool2d(t, (k, k), **kw).double().numpy()
    np.testing.assert_array_equal(got, want)
    got = ampjit.nn.functional.max_pool1d(a[0], k, **kw).double().numpy()
    want = torch.nn.functional.max_pool1d(t[0], k, **kw).double().numpy()
    np.testing.assert_array_equal(got, want)
    real = ~np.isnan(want)  # signed zeros as torch's (a NaN's sign is not compared)
    assert np.array_equal(np.signbit(got[real]), np.signbit(want[real]))


@pytest.mark.parametrize("n", [2, 3, 17, 65537, 1000001])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_linspace_halves_match_torch(n, dtype):
    # the two halves (start + step i, end - step (n - 1 - i)) and the parallel chunks
    for threads in (1, 2):
        ampjit.set_num_threads(threads)
        for a, b in ((-3.0, 7.0), (5, -250), (0.1, 0.1)):
            got = ampjit.linspace(a, b, n, dtype=getattr(ampjit, dtype)).numpy()
            want = torch.linspace(a, b, n, dtype=getattr(torch, dtype)).numpy()
            if dtype == "int64":  # torch 1.13's integer steps may round the other way (1 off)
                np.testing.assert_allclose(got, want, rtol=0, atol=1)
            else:
                assert got[0] == want[0] and got[-1] == want[-1]
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("shape", [(), (7,), (16384,), (3, 5, 4), (0,), (2, 0)])
@pytest.mark.parametrize("num_classes", [-1, 9])
def test_one_hot_matches_torch(shape, num_classes):
    y = np.random.default_rng(6).integers(0, 9, size=shape).astype(np.int64)
    if y.size == 0 and num_classes == -1:
        with pytest.raises(RuntimeError, match="Can not infer total number of classes"):
            ampjit.nn.functional.one_hot(to_a(y), num_classes)
        return
    got = ampjit.nn.functional.one_hot(to_a(y), num_classes)
    want = torch.nn.functional.one_hot(torch.from_numpy(y), num_classes)
    assert got.dtype == ampjit.int64 and tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    # a strided (transposed) label tensor
    if y.ndim == 3:
        got = ampjit.nn.functional.one_hot(to_a(y).transpose(0, 2), num_classes)
        want = torch.nn.functional.one_hot(torch.from_numpy(y).transpose(0, 2), num_classes)
        np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "float32",
                                   "float64", "bfloat16", "float16", "bool"])
def test_bool_to_every_dtype_matches_torch(dtype):
    # the dense runs of a converting copy read bool as its byte (Note [Copy runs])
    m = np.random.default_rng(7).random((333, 129)) < 0.4
    got = to_a(m).to(getattr(ampjit, dtype))
    want = torch.from_numpy(m).to(getattr(torch, dtype))
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())
    got = to_a(m).t().to(getattr(ampjit, dtype))  # a strided source
    np.testing.assert_array_equal(got.float().numpy(), want.t().float().numpy())


@pytest.mark.parametrize("value", [0, 0.0, -0.0, False, 1.5])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int64", "bool", "uint8"])
def test_fill_matches_torch(value, dtype):
    # zeros (all bytes 0) fill dense runs with memset; -0.0 keeps its sign bit
    if dtype in ("int64", "uint8", "bool") and value == 1.5:
        return
    for lib in (ampjit, torch):
        t = lib.empty(300, 129, dtype=getattr(lib, dtype)).fill_(value)
        s = lib.empty(129, 300, dtype=getattr(lib, dtype)).t().fill_(value)  # strided
        if lib is ampjit:
            got = [t.float().numpy(), s.float().numpy()]
        else:
            want = [t.float().numpy(), s.float().numpy()]
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


@pytest.mark.parametrize("inner", [1, 3, 16, 63, 64, 65, 200])
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "int8", "bool"])
def test_short_copy_runs_match_torch(inner, dtype):
    # Note [Copy runs]: runs of at most 256 bytes copy inline, longer ones by memmove
    x = np.random.default_rng(8).standard_normal((37, inner)) * 3
    t = torch.from_numpy(x).to(getattr(torch, dtype))
    a = ampjit.from_numpy(x).to(getattr(ampjit, dtype))
    for dim in (0, 1):
        got = ampjit.repeat_interleave(a, 3, dim=dim).float().numpy()
        want = torch.repeat_interleave(t, 3, dim=dim).float().numpy()
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(a.tile((2, 3)).float().numpy(), t.tile((2, 3)).float().numpy())
    # a copy between views of one buffer that do not overlap, and one that does (memmove)
    b = ampjit.zeros(2 * x.size, dtype=getattr(ampjit, dtype))
    b[x.size:].copy_(a.reshape(-1))
    b[: x.size].copy_(b[x.size:])
    np.testing.assert_array_equal(b.float().numpy()[: x.size], t.reshape(-1).float().numpy())
