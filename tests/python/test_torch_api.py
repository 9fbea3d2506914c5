"""Python-level pieces of torch 1.13's API that model and test code use: the NumPy array protocol,
pickle and deepcopy of tensors, torch.testing (assert_close, FileCheck), the thread count, memory
formats and the default dtype. Each runs the same code under ampjit and under the real torch (the
`torch_ref` fixture) and asks for the same outcome, except where ampjit documents a difference."""
import copy
import pickle
import warnings

import numpy as np
import pytest

import ampjit
import ampjit.nn as nn

np = pytest.importorskip("numpy")


def outcome(fn, *args):
    """("ok", "") or (exception type name, message) for fn(*args)."""
    try:
        fn(*args)
        return "ok", ""
    except Exception as e:  # noqa: BLE001  (the exception is the result being compared)
        return type(e).__name__, str(e)


def same_values(a, b):
    """Same dtype name, shape and values (NaN equal to NaN) for two tensors, ampjit's or torch's."""
    assert repr(a.dtype) == repr(b.dtype)
    assert tuple(a.shape) == tuple(b.shape)
    va, vb = a.reshape(-1).tolist(), b.reshape(-1).tolist()
    assert all(x == y or (x != x and y != y) for x, y in zip(va, vb)), (va, vb)


# --- np.asarray / np.array ---------------------------------------------------------------------

def test_numpy_array_protocol_matches_torch(torch_ref):
    for name in ("float32", "float64", "float16", "int64", "int32", "uint8", "bool"):
        def make(m):
            return m.tensor([[0, 1, 2], [3, 0, 5]], dtype=getattr(m, name)).t()  # a strided view
        a, t = np.asarray(make(ampjit)), np.asarray(make(torch_ref))
        assert type(a) is np.ndarray and a.dtype == t.dtype and a.shape == t.shape, name
        np.testing.assert_array_equal(a, t)
        assert np.array(make(ampjit), dtype=np.float64).dtype == np.float64
    scalar = np.array(ampjit.tensor(3.5))
    assert scalar.shape == () and scalar == 3.5 == np.array(torch_ref.tensor(3.5))
    x = ampjit.zeros(3)
    np.asarray(x)[1] = 7.0  # shares the tensor's memory, as torch's does
    assert x.tolist() == [0.0, 7.0, 0.0]
    assert ampjit.Tensor.__array_priority__ == torch_ref.Tensor.__array_priority__
    # A ufunc gives a tensor back; a bool result comes back as uint8 in torch 1.13.
    assert isinstance(np.sin(ampjit.ones(2)), ampjit.Tensor)
    assert isinstance(np.sin(torch_ref.ones(2)), torch_ref.Tensor)
    assert repr(np.equal(ampjit.ones(2), ampjit.ones(2)).dtype) == repr(
        np.equal(torch_ref.ones(2), torch_ref.ones(2)).dtype) == "torch.uint8"
    got = outcome(np.asarray, ampjit.ones(2, requires_grad=True))
    assert got == outcome(np.asarray, torch_ref.ones(2, requires_grad=True)) and got[0] == "RuntimeError"
    # NumPy has no bfloat16: TypeError, as torch ("...ScalarType BFloat16"; Tensor.numpy() spells it bfloat16).
    got = outcome(np.asarray, ampjit.ones(2, dtype=ampjit.bfloat16))
    want = outcome(np.asarray, torch_ref.ones(2, dtype=torch_ref.bfloat16))
    assert got[0] == want[0] == "TypeError" and got[1].lower() == want[1].lower()


# --- pickle and deepcopy -----------------------------------------------------------------------

PICKLED = [
    ("float32", lambda m: m.tensor([[1.5, -2.0, 3.25], [0.0, float("inf"), float("nan")]])),
    ("non-contiguous", lambda m: m.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]).t()),
    ("0-dim", lambda m: m.tensor(2.5)),
    ("empty", lambda m: m.zeros(0, 3)),
    ("bfloat16", lambda m: m.tensor([1.0078125, -3.0e38, 1e-30], dtype=m.bfloat16)),
    ("float16", lambda m: m.tensor([65504.0, -0.0, 6e-8], dtype=m.float16)),
    ("float64", lambda m: m.tensor([0.1, 1e300], dtype=m.float64)),
    ("int64", lambda m: m.tensor([2 ** 62, -(2 ** 63)])),
    ("uint8", lambda m: m.tensor([0, 255], dtype=m.uint8)),
    ("bool", lambda m: m.tensor([True, False])),
    ("requires_grad", lambda m: m.ones(2, 2, requires_grad=True)),
    ("view that is no leaf", lambda m: m.ones(2, 2, requires_grad=True)[1]),
]


@pytest.mark.parametrize("name,make", PICKLED, ids=[p[0] for p in PICKLED])
def test_pickle_round_trip_matches_torch(torch_ref, name, make):
    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        a = pickle.loads(pickle.dumps(make(ampjit), protocol))
        t = pickle.loads(pickle.dumps(make(torch_ref), protocol))
        assert type(a) is ampjit.Tensor
        same_values(a, t)
        assert (a.requires_grad, a.is_leaf) == (t.requires_grad, t.is_leaf)
        same_values(a, make(ampjit))  # every dtype, bfloat16 included, comes back bit for bit


def test_pickle_drops_grad_and_attributes_and_keeps_parameters_as_torch_does(torch_ref):
    for m in (ampjit, torch_ref):
        x = m.ones(2, requires_grad=True)
        x.grad = m.ones(2)
        y = pickle.loads(pickle.dumps(x))
        assert y.grad is None and y.requires_grad
        p = pickle.loads(pickle.dumps(m.nn.Parameter(m.full((2,), 3.0), requires_grad=False)))
        assert type(p).__name__ == "Parameter" and not p.requires_grad and p.tolist() == [3.0, 3.0]
    lin = nn.Linear(3, 2)
    lin2 = pickle.loads(pickle.dumps(lin))
    x = ampjit.ones(4, 3)
    assert isinstance(lin2.weight, nn.Parameter) and lin2(x).tolist() == lin(x).tolist()
    with pytest.raises(ValueError, match="cannot unpickle a tensor of shape"):
        ampjit._tensor._rebuild_tensor(b"\0" * 3, "float32", (2,), "cpu", False)


def test_deepcopy_matches_torch(torch_ref):
    for m in (ampjit, torch_ref):
        w = m.tensor([1.0, 2.0], requires_grad=True)
        w.grad = m.tensor([3.0, 4.0])
        w.tag = ["kept"]
        d = copy.deepcopy(w)
        assert d.tolist() == [1.0, 2.0] and d.requires_grad and d.is_leaf
        assert d.grad.tolist() == [3.0, 4.0] and d.grad is not w.grad
        assert d.tag == ["kept"] and d.tag is not w.tag
        d.grad[0] = 9.0
        with m.no_grad():
            d[1] = 5.0
        assert w.tolist() == [1.0, 2.0] and w.grad.tolist() == [3.0, 4.0]  # nothing shared
        a = m.ones(2)
        pair = copy.deepcopy([a, a])
        assert pair[0] is pair[1] and pair[0] is not a  # the memo keeps one copy per tensor
    # A view of a tensor that requires grad is no leaf: torch refuses to deep-copy it, and so does ampjit.
    got = outcome(copy.deepcopy, ampjit.ones(2, requires_grad=True)[:1])
    assert got == outcome(copy.deepcopy, torch_ref.ones(2, requires_grad=True)[:1]) and got[0] == "RuntimeError"
    # nn.TransformerEncoder deep-copies its layer: Parameters stay Parameters, with their own data.
    lin = nn.Linear(2, 2)
    lin2 = copy.deepcopy(lin)
    assert isinstance(lin2.weight, nn.Parameter) and lin2.weight.tolist() == lin.weight.tolist()
    with ampjit.no_grad():
        lin2.weight.fill_(0.0)
    assert lin.weight.abs().sum().item() > 0


# --- torch.testing.assert_close ----------------------------------------------------------------

def _nan(m, dtype=None):
    return m.tensor([1.0, float("nan")], dtype=dtype)


ASSERT_CLOSE = [
    ("close", lambda m: ((m.tensor([1.0, 2.0]), m.tensor([1.0, 2.0 + 1e-6])), {})),
    ("not close", lambda m: ((m.tensor([1.0, 2.0, 3.0]), m.tensor([1.0, 2.5, 3.1])), {})),
    ("2-d index", lambda m: ((m.tensor([[1.0, 2.0], [3.0, 4.0]]), m.tensor([[1.0, 2.1], [3.0, 4.0]])), {})),
    ("0-dim", lambda m: ((m.tensor(1.0), m.tensor(2.0)), {})),
    ("dtype", lambda m: ((m.tensor([1.0]), m.tensor([1.0], dtype=m.float64)), {})),
    ("dtype unchecked", lambda m: ((m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.0, 2.01])),
                                   {"check_dtype": False})),
    ("shape", lambda m: ((m.ones(3), m.ones(2)), {})),
    ("stride", lambda m: ((m.ones(2, 3), m.ones(3, 2).t()), {"check_stride": True})),
    ("stride unchecked", lambda m: ((m.ones(2, 3), m.ones(3, 2).t()), {})),
    ("integers", lambda m: ((m.tensor([1, 2, 3]), m.tensor([1, 5, 4])), {})),
    ("integers with tolerance", lambda m: ((m.tensor([1, 2, 3]), m.tensor([1, 5, 4])), {"rtol": 0.1, "atol": 1})),
    ("bool", lambda m: ((m.tensor([True, False]), m.tensor([True, True])), {})),
    ("nan", lambda m: ((_nan(m), _nan(m)), {})),
    ("nan equal", lambda m: ((_nan(m), _nan(m)), {"equal_nan": True})),
    ("inf", lambda m: ((m.tensor([1.0, float("inf")]), m.tensor([1.0, float("inf")])), {})),
    ("inf vs finite", lambda m: ((m.tensor([1.0, float("inf")]), m.tensor([1.0, 2.0])), {})),
    ("zero expected", lambda m: ((m.tensor([0.0, 1.0]), m.tensor([0.0, 0.0])), {})),
    ("bfloat16 within its tolerance", lambda m: ((m.tensor([100.0], dtype=m.bfloat16),
                                                   m.tensor([101.0], dtype=m.bfloat16)), {})),
    ("bfloat16", lambda m: ((m.tensor([1.0, 2.0], dtype=m.bfloat16), m.tensor([1.0, 2.1], dtype=m.bfloat16)), {})),
    ("float16", lambda m: ((m.tensor([1.0, 2.0], dtype=m.float16), m.tensor([1.0, 2.01], dtype=m.float16)), {})),
    ("float64", lambda m: ((m.tensor([1.0], dtype=m.float64), m.tensor([1.0 + 1e-6], dtype=m.float64)), {})),
    ("explicit tolerance", lambda m: ((m.tensor([1.0, 2.0]), m.tensor([1.0, 2.1])), {"rtol": 0.0, "atol": 0.2})),
    ("only rtol", lambda m: ((m.ones(1), m.ones(1)), {"rtol": 0.1})),
    ("only atol", lambda m: ((m.ones(1), m.ones(1)), {"atol": 0.1})),
    ("message", lambda m: ((m.ones(1), m.zeros(1)), {"msg": "custom"})),
    ("message function", lambda m: (([m.ones(1)], [m.zeros(1)]), {"msg": lambda s: "Header\n" + s})),
    ("sequence item", lambda m: (([m.ones(1), m.ones(1)], [m.ones(1), m.tensor([1.5])]), {})),
    ("mapping item", lambda m: (({"a": m.ones(1)}, {"a": m.tensor([1.5])}), {})),
    ("sequence length", lambda m: (([m.ones(1), m.ones(1)], [m.ones(1)]), {})),
    ("mapping keys", lambda m: (({"a": m.ones(1)}, {"b": m.ones(1)}), {})),
    ("numbers", lambda m: ((1.0, 1.0 + 1e-9), {})),
    ("numbers apart", lambda m: ((1.0, 1.1), {})),
    ("number types", lambda m: ((1, 1.0), {})),
    ("booleans", lambda m: ((True, False), {})),
    ("none", lambda m: ((None, 1), {})),
    ("tensor and number", lambda m: ((m.ones(1), 1.0), {})),
    ("strings", lambda m: (("a", "b"), {})),
    ("parameter and tensor", lambda m: ((m.nn.Parameter(m.ones(2)), m.ones(2)), {})),
    ("subclasses refused", lambda m: ((m.nn.Parameter(m.ones(2)), m.ones(2)), {"allow_subclasses": False})),
    ("numpy arrays", lambda m: ((np.ones(2), np.zeros(2)), {})),
    ("numpy scalars", lambda m: ((np.float32(1), np.float32(1.5)), {})),
]


@pytest.mark.parametrize("name,case", ASSERT_CLOSE, ids=[c[0] for c in ASSERT_CLOSE])
def test_assert_close_matches_torch(torch_ref, name, case):
    (a, e), kw = case(ampjit)
    got = outcome(lambda: ampjit.testing.assert_close(a, e, **kw))
    (a, e), kw = case(torch_ref)
    want = outcome(lambda: torch_ref.testing.assert_close(a, e, **kw))
    # The messages name the classes, whose modules differ: ampjit._C.Tensor is torch.Tensor.
    got = tuple(str(g).replace("ampjit._C.", "torch.").replace("ampjit.", "torch.") for g in got)
    assert got == tuple(str(w) for w in want)


def test_trace_check_reports_through_assert_close(torch_ref):
    # The trace check's message is assert_close's (one comparison, in ampjit.testing), so a 0-dim
    # output that differs is reported as torch reports it: "Scalars are not close!".
    def detail(m, make_output):
        def f(x):
            return make_output(m, x)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            m.jit.trace(f, (m.ones(2, 4),))
        [message] = [str(r.message) for r in rec if "Detailed error" in str(r.message)]
        return message.split("Detailed error:\n")[1]
    for make_output in (lambda m, x: x.sum() + m.rand(()), lambda m, x: x + m.rand(2, 4)):
        got, want = detail(ampjit, make_output), detail(torch_ref, make_output)
        assert got.splitlines()[0] == want.splitlines()[0] in ("Scalars are not close!", "Tensor-likes are not close!")
        assert "(up to 1e-05 allowed)" in got


# --- torch.testing.FileCheck -------------------------------------------------------------------

TEXT = "a = 1\nb = foo(a)\nc = bar(b)\nreturn c\n"

# (name, checks, whether a failure's first line is torch's: ampjit words the line-position
# failures of check_next and check_same plainly, where torch says 'Expected to not find "\n"'.)
FILE_CHECKS = [
    ("in order", lambda f: f.check("foo").check("bar"), True),
    ("out of order", lambda f: f.check("bar").check("foo"), True),
    ("missing", lambda f: f.check("zzz"), True),
    ("not between", lambda f: f.check("foo").check_not("zzz").check("bar"), True),
    ("not between, found", lambda f: f.check("a =").check_not("foo").check("bar"), True),
    ("not at the end", lambda f: f.check("c =").check_not("a"), True),
    ("not before the first", lambda f: f.check_not("return").check("a ="), True),
    ("next", lambda f: f.check("foo").check_next("bar"), True),
    ("next, too far", lambda f: f.check("a = 1").check_next("bar"), False),
    ("next after the last line", lambda f: f.check("return c\n").check_next("c"), False),
    ("same", lambda f: f.check("b =").check_same("foo"), True),
    ("same, next line", lambda f: f.check("b =").check_same("bar"), False),
    ("count", lambda f: f.check_count("=", 3), True),
    ("count exactly", lambda f: f.check_count("=", 3, exactly=True), True),
    ("count exactly, more", lambda f: f.check_count("=", 2, exactly=True), True),
    ("count, too few", lambda f: f.check_count("=", 4), True),
    ("count zero exactly", lambda f: f.check_count("zzz", 0, exactly=True), True),
    ("dag", lambda f: f.check("b =").check_dag("c").check_dag("bar").check("return"), True),
    ("dag, missing", lambda f: f.check_dag("bar").check_dag("zzz"), True),
]


@pytest.mark.parametrize("name,build,torch_wording", FILE_CHECKS, ids=[c[0] for c in FILE_CHECKS])
def test_file_check_matches_torch(torch_ref, name, build, torch_wording):
    got = outcome(lambda: build(ampjit.testing.FileCheck()).run(TEXT))
    want = outcome(lambda: build(torch_ref.testing.FileCheck()).run(TEXT))
    assert got[0] == want[0]
    if got[0] == "RuntimeError":
        lines, want_lines = got[1].rstrip().splitlines(), want[1].rstrip().splitlines()
        assert lines[-1] == want_lines[-1]  # "From CHECK-NOT: foo": the failing check, as torch names it
        assert "<--- HERE" in got[1]
        if torch_wording:
            assert lines[0] == want_lines[0]
    assert outcome(lambda: ampjit.testing.FileCheck().run(TEXT))[0] == "RuntimeError"  # no checks


def test_file_check_reads_check_comments_and_graphs(torch_ref):
    checks = "# CHECK: a =\n#   CHECK-NEXT: foo\n# CHECK-NOT: zzz\n# CHECK-COUNT-EXACTLY-2: bar\n"
    for m in (ampjit, torch_ref):
        m.testing.FileCheck().run(checks, "a = 1\nb = foo(a)\nbar bar\n")
        assert outcome(lambda: m.testing.FileCheck().run(checks, "a = 1\nb = foo(a)\nbar bar bar\n"))[0] \
            == "RuntimeError"
        assert outcome(lambda: m.testing.FileCheck().run("# CHECKS: x", "x"))[0] == "RuntimeError"

        def f(x):
            return x * 2 + 1
        graph = m.jit.trace(f, (m.ones(2),)).graph
        m.testing.FileCheck().check("aten::mul").check("aten::add").check_not("aten::sub").run(graph)
        m.testing.FileCheck().check("aten::add").check_next("return").run(graph)


# --- threads, memory formats, default dtype ----------------------------------------------------

def test_num_threads(torch_ref):
    n = ampjit.get_num_threads()
    assert isinstance(n, int) and n >= 1 and isinstance(torch_ref.get_num_threads(), int)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ampjit.set_num_threads(n)  # the count in use: nothing to say
    for bad in (0, -1, 1.5, "2", True):
        assert outcome(ampjit.set_num_threads, bad) == outcome(torch_ref.set_num_threads, bad)
    # the count changes for the kernels (and the results do not)
    x = ampjit.randn(64, 256)
    want = (x @ x.t()).sum(1)
    try:
        ampjit.set_num_threads(1)
        assert ampjit.get_num_threads() == 1
        np.testing.assert_allclose((x @ x.t()).sum(1).numpy(), want.numpy(), rtol=1e-5)
        ampjit.set_num_threads(n + 1)
        assert ampjit.get_num_threads() == n + 1
    finally:
        ampjit.set_num_threads(n)
    assert ampjit.get_num_threads() == n


def test_memory_format_objects_and_is_contiguous_match_torch(torch_ref):
    for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
        fmt, ref = getattr(ampjit, name), getattr(torch_ref, name)
        assert repr(fmt) == str(fmt) == repr(ref) and isinstance(fmt, ampjit.memory_format)
        assert pickle.loads(pickle.dumps(fmt)) is fmt and copy.deepcopy(fmt) is fmt
    views = [
        lambda m: m.ones(2, 3, 4, 5),
        lambda m: m.ones(2, 1, 4, 5),
        lambda m: m.ones(2, 3, 1, 1),
        lambda m: m.ones(3),
        lambda m: m.ones(3, 4).t(),
        lambda m: m.ones(2, 3, 4, 5).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2),
        lambda m: m.ones(2, 3, 4, 5, 6),
        lambda m: m.ones(2, 3, 4, 5, 6).permute(0, 2, 3, 4, 1).contiguous().permute(0, 4, 1, 2, 3),
    ]
    for make in views:
        for name in ("contiguous_format", "preserve_format", "channels_last", "channels_last_3d"):
            got = make(ampjit).is_contiguous(memory_format=getattr(ampjit, name))
            want = make(torch_ref).is_contiguous(memory_format=getattr(torch_ref, name))
            assert got == want, (name, make(ampjit).shape, make(ampjit).stride())
    for bad in (lambda m: None, lambda m: m.float32, lambda m: "channels_last", lambda m: m.ones(1)):
        got = outcome(lambda: ampjit.ones(3).is_contiguous(memory_format=bad(ampjit)))
        assert got == outcome(lambda: torch_ref.ones(3).is_contiguous(memory_format=bad(torch_ref)))
        assert got[0] == "TypeError"


def test_memory_format_arguments_keep_values_and_torch_errors(torch_ref):
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    for call in (lambda m, t: t.contiguous(memory_format=m.channels_last),
                 lambda m, t: t.contiguous(memory_format=m.contiguous_format),
                 lambda m, t: t.to(memory_format=m.channels_last),
                 lambda m, t: t.to(m.float64, memory_format=m.contiguous_format),
                 lambda m, t: t.to(memory_format=m.preserve_format)):
        same_values(call(ampjit, ampjit.from_numpy(x)), call(torch_ref, torch_ref.from_numpy(x)))
    for call in (lambda m: m.ones(3).contiguous(memory_format=m.channels_last),
                 lambda m: m.ones(2, 3, 4, 5).contiguous(memory_format=m.channels_last_3d),
                 lambda m: m.ones(3).contiguous(memory_format=m.preserve_format),
                 lambda m: m.ones(3).contiguous(memory_format=None),
                 lambda m: m.ones(3).contiguous(memory_format=m.float32),
                 lambda m: m.ones(3).to(memory_format=m.channels_last)):
        assert outcome(call, ampjit) == outcome(call, torch_ref)
    assert outcome(lambda: ampjit.ones(3).to(memory_format=ampjit.float32))[0] == "TypeError"  # as torch's
    # Note [Channels-last tensors]: torch's channels-last strides.
    y = ampjit.ones(2, 3, 4, 5).contiguous(memory_format=ampjit.channels_last)
    assert y.stride() == torch_ref.ones(2, 3, 4, 5).contiguous(memory_format=torch_ref.channels_last).stride()
    assert not y.is_contiguous() and y.is_contiguous(memory_format=ampjit.channels_last)
    assert y.contiguous(memory_format=ampjit.channels_last) is y
    # Module.to(memory_format=) converts the 4-D and 5-D parameters only, as torch's; outputs agree.
    tnn = torch_ref.nn
    torch_model = tnn.Sequential(tnn.Conv2d(3, 4, 3), tnn.Flatten(), tnn.Linear(36, 2))
    model = nn.Sequential(nn.Conv2d(3, 4, 3), nn.Flatten(), nn.Linear(36, 2))
    model.load_state_dict({k: ampjit.from_numpy(v.detach().numpy().copy())
                           for k, v in torch_model.state_dict().items()})
    torch_model.to(memory_format=torch_ref.channels_last)
    model.to(memory_format=ampjit.channels_last)
    inp = np.random.default_rng(0).standard_normal((1, 3, 5, 5)).astype(np.float32)
    np.testing.assert_allclose(model(ampjit.from_numpy(inp)).detach().numpy(),
                               torch_model(torch_ref.from_numpy(inp)).detach().numpy(), rtol=1e-5, atol=1e-5)


def _default_dtype_probe(lib):
    """The dtypes of what the default dtype decides (torch 1.13's list)."""
    i = lib.ones(2, dtype=lib.int64)
    return [str(t.dtype) for t in (lib.ones(1), lib.zeros(2), lib.empty(1), lib.tensor([1.5]), lib.tensor([]),
                                   lib.tensor(2), i * 1.5, lib.arange(0., 2), lib.arange(2), lib.rand(1),
                                   lib.randn(1), lib.full((1,), 2.))]


def test_default_dtype(torch_ref):
    assert ampjit.get_default_dtype() is ampjit.float32
    assert repr(ampjit.get_default_dtype()) == repr(torch_ref.get_default_dtype())
    for bad in ("int64", "bool"):
        assert outcome(ampjit.set_default_dtype, getattr(ampjit, bad)) == \
            outcome(torch_ref.set_default_dtype, getattr(torch_ref, bad))
    assert outcome(ampjit.set_default_dtype, float) == outcome(torch_ref.set_default_dtype, float)
    assert ampjit.get_default_dtype() is ampjit.float32  # a refused dtype changes nothing
    try:
        for name in ("float64", "float16", "bfloat16", "float32"):
            ampjit.set_default_dtype(getattr(ampjit, name))
            torch_ref.set_default_dtype(getattr(torch_ref, name))
            assert ampjit.get_default_dtype() is getattr(ampjit, name)
            assert _default_dtype_probe(ampjit) == _default_dtype_probe(torch_ref), name
    finally:
        ampjit.set_default_dtype(ampjit.float32)
        torch_ref.set_default_dtype(torch_ref.float32)
    assert ampjit.ones(1).dtype is ampjit.float32


def test_default_dtype_reaches_scripted_and_traced_code():
    @ampjit.jit.script
    def make(x: ampjit.Tensor):
        return ampjit.ones(2) + x * 1.5

    def traced_fn(x):
        return x * 1.5
    traced = ampjit.jit.trace(traced_fn, ampjit.ones(2, dtype=ampjit.int64))
    try:
        ampjit.set_default_dtype(ampjit.float64)
        assert make(ampjit.ones(2, dtype=ampjit.int64)).dtype is ampjit.float64
        assert traced(ampjit.ones(2, dtype=ampjit.int64)).dtype is ampjit.float64
    finally:
        ampjit.set_default_dtype(ampjit.float32)
    assert make(ampjit.ones(2, dtype=ampjit.int64)).dtype is ampjit.float32


def test_an_unknown_cpu_isa_cap_is_a_clear_error():
    # Note [CPU dispatch]: AMPJIT_CPU_ISA names a level; anything else is an error naming the valid ones.
    import os
    import subprocess
    import sys
    env = dict(os.environ, AMPJIT_CPU_ISA="avx9000")
    r = subprocess.run([sys.executable, "-c", "import ampjit; ampjit.mm(ampjit.ones(2, 2), ampjit.ones(2, 2))"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode != 0
    assert "AMPJIT_CPU_ISA=avx9000: expected one of avx2, avx512, avx512_bf16, amx" in r.stderr
    env["AMPJIT_CPU_ISA"] = "avx2"
    r = subprocess.run([sys.executable, "-c", "import ampjit; print(ampjit._C._cpu_description())"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.startswith("avx2 (")
