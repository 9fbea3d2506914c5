"""ampjit.nn and ampjit.nn.functional.

Oracles: NumPy float64 references written here, and the real PyTorch 1.13 (the `torch_ref`
fixture) with the same state loaded into the torch layer. Float32 results are compared with
rtol=1e-5, atol=1e-5 unless a test states otherwise (reductions over a few hundred elements stay
well inside that).
"""
import collections
import inspect
import math

import numpy as np
import pytest

import ampjit
import ampjit.nn as nn
import ampjit.nn.functional as F

RTOL = 1e-5
ATOL = 1e-5
rng = np.random.default_rng(1234)



# Ops the op table does not have yet (beyond the foundation's op list). These wrappers must fail
# with a NotImplementedError naming the missing op; strict, so a test flips the day the op lands.
MISSING_OPS = {}


def missing(cases):
    """Wraps parametrize cases whose op is missing in a strict xfail that names it."""
    out = []
    for c in cases:
        name = c[0]
        if name in MISSING_OPS:
            out.append(pytest.param(*c, id=name, marks=pytest.mark.xfail(
                raises=NotImplementedError, strict=True, reason="ampjit lacks " + MISSING_OPS[name])))
        else:
            out.append(pytest.param(*c, id=name))
    return out

def randn(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def A(arr):
    """An ampjit tensor with a copy of a NumPy array."""
    return ampjit.from_numpy(np.ascontiguousarray(arr).copy())


def _tensor_of(module):
    """NumPy array -> tensor (a copy) of `module`: ampjit or the real torch."""
    return lambda arr: module.from_numpy(np.ascontiguousarray(arr).copy())


def npy(t):
    return t.detach().numpy()


def assert_close(actual, expected, rtol=RTOL, atol=ATOL):
    if isinstance(actual, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_close(a, e, rtol, atol)
        return
    a = npy(actual) if isinstance(actual, ampjit.Tensor) else np.asarray(actual)
    e = expected.detach().numpy() if hasattr(expected, "detach") else np.asarray(expected)
    assert a.shape == e.shape, "shape {} != {}".format(a.shape, e.shape)
    assert a.dtype == e.dtype, "dtype {} != {}".format(a.dtype, e.dtype)
    np.testing.assert_allclose(a, e, rtol=rtol, atol=atol)


def random_state(module, seed=0):
    """A random state for `module` as NumPy arrays: floats ~N(0,1) (running_var positive), others kept."""
    r = np.random.default_rng(seed)
    state = collections.OrderedDict()
    for k, v in module.state_dict().items():
        arr = v.numpy().copy()
        if arr.dtype.kind == "f":
            arr = r.standard_normal(arr.shape).astype(arr.dtype)
            if k.endswith("running_var"):
                arr = np.abs(arr) + 0.5
        state[k] = arr
    return state


def layer_pair(torch_ref, factory, seed=0):
    """The layer `factory(nn)` built in ampjit and in torch, one random state loaded into both."""
    a, t = factory(nn), factory(torch_ref.nn)
    assert list(a.state_dict().keys()) == list(t.state_dict().keys())
    state = random_state(a, seed)
    a.load_state_dict({k: A(v) for k, v in state.items()})
    t.load_state_dict({k: torch_ref.from_numpy(v.copy()) for k, v in state.items()})
    return a, t


def test_package_never_imports_torch():
    import subprocess
    import sys
    code = ("import sys, ampjit, ampjit.nn, ampjit.nn.functional, ampjit.nn.init; "
            "assert 'torch' not in sys.modules, 'ampjit imported torch'")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- Parameter ---------------------------------------------------------------------------------


def test_parameter_is_a_tensor_aliasing_its_data():
    data = ampjit.zeros([2, 3])
    p = nn.Parameter(data)
    assert isinstance(p, ampjit.Tensor) and isinstance(p, nn.Parameter)
    assert type(p) is nn.Parameter
    assert p.requires_grad and p.is_leaf
    assert not data.requires_grad
    assert p.data_ptr() == data.data_ptr()
    data.fill_(2.0)
    assert p.detach().tolist() == [[2.0] * 3] * 2
    assert list(p.shape) == [2, 3] and p.dtype == ampjit.float32
    # Ops accept a Parameter like any tensor and return plain tensors.
    out = p + data
    assert type(out) is ampjit.Tensor and out.tolist() == [[4.0] * 3] * 2
    assert type(ampjit.add(p, 1.0)) is ampjit.Tensor
    assert type(p.detach()) is ampjit.Tensor


def test_parameter_requires_grad_flag_and_default_data():
    assert not nn.Parameter(ampjit.ones([2]), requires_grad=False).requires_grad
    empty = nn.Parameter()
    assert list(empty.shape) == [0] and empty.requires_grad
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


def test_parameter_repr(torch_ref):
    p = nn.Parameter(ampjit.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tp = torch_ref.nn.Parameter(torch_ref.tensor([[1.0, 2.0], [3.0, 4.0]]))
    assert repr(p) == repr(tp)
    assert repr(p).startswith("Parameter containing:\ntensor(")


def test_parameter_deepcopy_copies_data():
    import copy
    p = nn.Parameter(ampjit.ones([3]))
    q = copy.deepcopy(p)
    assert type(q) is nn.Parameter and q.requires_grad
    assert q.data_ptr() != p.data_ptr()
    assert q.detach().tolist() == [1.0, 1.0, 1.0]


# --- Module: registration and traversal -----------------------------------------------------------


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.register_buffer("steps", ampjit.zeros([1]))
        self.register_buffer("scratch", ampjit.zeros([2]), persistent=False)
        self.scale = nn.Parameter(ampjit.ones([4]))
        self.name = "block"

    def forward(self, x):
        return self.fc(x) * self.scale


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Block()
        self.b = Block()
        self.head = nn.Linear(4, 2, bias=False)

    def forward(self, x):
        return self.head(self.b.fc(x) + self.a(x))


def test_attribute_assignment_registers_parameters_buffers_modules():
    b = Block()
    assert list(b._parameters) == ["scale"]
    assert list(b._buffers) == ["steps", "scratch"]
    assert list(b._modules) == ["fc"]
    assert "name" in b.__dict__ and "fc" not in b.__dict__
    assert b.scale is b._parameters["scale"] and b.fc is b._modules["fc"] and b.steps is b._buffers["steps"]
    # Reassigning a buffer name with a tensor keeps it a buffer; a Parameter moves it to parameters.
    b.steps = ampjit.ones([1])
    assert b._buffers["steps"].tolist() == [1.0]
    b.steps = nn.Parameter(ampjit.ones([1]))
    assert "steps" in b._parameters and "steps" not in b._buffers
    # None is allowed for a registered parameter, buffer or module.
    b.scale = None
    assert b._parameters["scale"] is None and b.scale is None
    b.fc = None
    assert b._modules["fc"] is None


def _registration_errors(nn_, ones):
    """(exception type, message) for each misuse of the registration API, None where none is raised."""
    class Blk(nn_.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn_.Linear(3, 4)
            self.register_buffer("steps", ones(1))
            self.scale = nn_.Parameter(ones(4))
            self.name = "block"

    class Early(nn_.Module):
        def __init__(self):
            self.w = nn_.Parameter(ones(1))

    b = Blk()
    actions = [
        lambda: setattr(b, "scale", ones(4)),
        lambda: setattr(b, "fc", 3),
        lambda: setattr(b, "steps", "x"),
        lambda: b.register_buffer("a.b", ones(1)),
        lambda: b.register_buffer("", ones(1)),
        lambda: b.register_buffer("name", ones(1)),
        lambda: b.register_buffer(3, ones(1)),
        lambda: b.register_buffer("buf", [1.0]),
        lambda: b.register_parameter("", None),
        lambda: b.register_parameter("w", ones(1)),
        lambda: b.register_parameter("fc", None),
        lambda: b.add_module("m", ones(1)),
        lambda: b.add_module("x.y", nn_.ReLU()),
        lambda: b.add_module("name", nn_.ReLU()),
        lambda: b.missing,
        lambda: Early(),
        lambda: setattr(b, "fc", None),
        lambda: setattr(b, "scale", None),
    ]
    out = []
    for act in actions:
        try:
            act()
            out.append(None)
        except Exception as e:  # noqa: BLE001 - the point is to compare them
            out.append((type(e).__name__, str(e)))
    return out


def test_registration_errors():
    errors = _registration_errors(nn, lambda n: ampjit.ones([n]))
    assert errors[0] == ("TypeError", "cannot assign 'torch.FloatTensor' as parameter 'scale' "
                                      "(torch.nn.Parameter or None expected)")
    assert errors[1] == ("TypeError", "cannot assign 'int' as child module 'fc' (torch.nn.Module or None expected)")
    assert errors[2] == ("TypeError", "cannot assign 'str' as buffer 'steps' (torch.Tensor or None expected)")
    assert errors[3] == ("KeyError", repr('buffer name can\'t contain "."'))
    assert errors[5] == ("KeyError", repr("attribute 'name' already exists"))
    assert errors[9] == ("TypeError", "cannot assign 'torch.FloatTensor' object to parameter 'w' "
                                      "(torch.nn.Parameter or None required)")
    assert errors[11] == ("TypeError", "torch.FloatTensor is not a Module subclass")
    assert errors[14] == ("AttributeError", "'Blk' object has no attribute 'missing'")
    assert errors[15] == ("AttributeError", "cannot assign parameters before Module.__init__() call")
    assert errors[16:] == [None, None]


def test_registration_errors_match_torch(torch_ref):
    assert _registration_errors(nn, lambda n: ampjit.ones([n])) == \
        _registration_errors(torch_ref.nn, lambda n: torch_ref.ones(n))


def test_add_module_register_parameter_and_delattr():
    m = nn.Module()
    m.add_module("relu", nn.ReLU())
    m.register_parameter("w", nn.Parameter(ampjit.ones([2])))
    m.register_buffer("buf", None)
    assert isinstance(m.relu, nn.ReLU) and m.w.tolist() == [1.0, 1.0] and m.buf is None
    assert [n for n, _ in m.named_parameters()] == ["w"]
    assert list(m.named_buffers()) == []  # None buffers are skipped
    del m.w, m.relu, m.buf
    assert not m._parameters and not m._modules and not m._buffers
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        m(ampjit.ones([1]))


def test_traversal_names_and_order():
    net = Net()
    assert [n for n, _ in net.named_parameters()] == [
        "a.scale", "a.fc.weight", "a.fc.bias", "b.scale", "b.fc.weight", "b.fc.bias", "head.weight"]
    assert [n for n, _ in net.named_buffers()] == ["a.steps", "a.scratch", "b.steps", "b.scratch"]
    assert [n for n, _ in net.named_children()] == ["a", "b", "head"]
    assert [n for n, _ in net.named_modules()] == ["", "a", "a.fc", "b", "b.fc", "head"]
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Block", "Linear", "Block", "Linear", "Linear"]
    assert [type(m).__name__ for m in net.children()] == ["Block", "Block", "Linear"]
    assert len(list(net.parameters())) == 7
    assert [n for n, _ in net.named_parameters(recurse=False)] == []
    assert [n for n, _ in net.a.named_parameters(prefix="a")] == ["a.scale", "a.fc.weight", "a.fc.bias"]
    assert net.get_submodule("a.fc") is net.a.fc


def test_shared_parameters_and_modules_are_deduplicated():
    net = Net()
    net.b.fc = net.a.fc  # a shared submodule
    net.head.weight = net.a.scale  # a tied parameter (shape differs; traversal does not care)
    names = [n for n, _ in net.named_parameters()]
    assert names == ["a.scale", "a.fc.weight", "a.fc.bias", "b.scale"]
    assert len(list(net.parameters())) == 4
    assert [n for n, _ in net.named_modules()] == ["", "a", "a.fc", "b", "head"]
    assert len([n for n, _ in net.named_parameters(remove_duplicate=False)]) == 7


def test_named_parameters_match_torch(torch_ref):
    def build(nn_):
        return nn_.Sequential(nn_.Linear(2, 3), nn_.BatchNorm1d(3), nn_.Sequential(nn_.ReLU(), nn_.Linear(3, 1)))
    a, t = build(nn), build(torch_ref.nn)
    assert [n for n, _ in a.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert [n for n, _ in a.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in a.named_modules()] == [n for n, _ in t.named_modules()]
    assert list(a.state_dict().keys()) == list(t.state_dict().keys())


# --- Module: state_dict -----------------------------------------------------------------------


def test_state_dict_contents_and_aliasing():
    net = Net()
    sd = net.state_dict()
    assert isinstance(sd, collections.OrderedDict)
    assert list(sd) == ["a.scale", "a.steps", "a.fc.weight", "a.fc.bias", "b.scale", "b.steps", "b.fc.weight",
                        "b.fc.bias", "head.weight"]
    assert "a.scratch" not in sd  # non-persistent
    assert type(sd["a.fc.weight"]) is ampjit.Tensor and not sd["a.fc.weight"].requires_grad
    assert sd["a.fc.weight"].data_ptr() == net.a.fc.weight.data_ptr()  # values alias, like torch
    assert net.state_dict(keep_vars=True)["a.fc.weight"] is net.a.fc.weight
    assert list(net.a.state_dict(prefix="x.")) == ["x.scale", "x.steps", "x.fc.weight", "x.fc.bias"]
    assert sd._metadata[""] == {"version": 1} and "a.fc" in sd._metadata


def test_state_dict_round_trip():
    ampjit.manual_seed(1)
    src = Net()
    ampjit.manual_seed(2)
    dst = Net()
    assert not np.array_equal(npy(src.head.weight), npy(dst.head.weight))
    result = dst.load_state_dict(src.state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert repr(result) == "<All keys matched successfully>"
    for (n1, p1), (n2, p2) in zip(src.state_dict().items(), dst.state_dict().items()):
        assert n1 == n2 and np.array_equal(p1.numpy(), p2.numpy())
    # The data is copied into the existing parameters, which stay the same objects.
    w = dst.head.weight
    dst.load_state_dict(Net().state_dict())
    assert dst.head.weight is w and type(w) is nn.Parameter
    # A plain dict (no metadata) of arrays-as-tensors loads too.
    dst.load_state_dict({k: v.clone() for k, v in src.state_dict().items()})
    assert np.array_equal(npy(dst.a.fc.bias), npy(src.a.fc.bias))


def test_load_state_dict_errors_match_torch(torch_ref):
    def build(nn_):
        return nn_.Sequential(nn_.Linear(2, 3), nn_.ReLU(), nn_.Linear(3, 1))

    a, t = build(nn), build(torch_ref.nn)
    good_a = a.state_dict()
    good_t = t.state_dict()

    def error(module, sd):
        with pytest.raises(RuntimeError) as e:
            module.load_state_dict(sd)
        return str(e.value)

    # Missing and unexpected keys.
    bad_a = {k: v for k, v in good_a.items() if k != "2.bias"}
    bad_a["extra"] = ampjit.ones([1])
    bad_a["0.junk"] = ampjit.ones([1])
    bad_t = {k: v for k, v in good_t.items() if k != "2.bias"}
    bad_t["extra"] = torch_ref.ones(1)
    bad_t["0.junk"] = torch_ref.ones(1)
    msg = error(a, bad_a)
    assert msg == error(t, bad_t)
    assert msg == ('Error(s) in loading state_dict for Sequential:\n\tMissing key(s) in state_dict: "2.bias". '
                   '\n\tUnexpected key(s) in state_dict: "extra", "0.junk". ')
    # Shape mismatch.
    mism_a = dict(good_a, **{"0.weight": ampjit.ones([2, 2])})
    mism_t = dict(good_t, **{"0.weight": torch_ref.ones(2, 2)})
    msg = error(a, mism_a)
    assert msg == error(t, mism_t)
    assert "size mismatch for 0.weight: copying a param with shape torch.Size([2, 2]) from checkpoint, the shape in " \
           "current model is torch.Size([3, 2])." in msg
    # Not a tensor.
    assert "expected torch.Tensor or Tensor-like object from checkpoint" in error(a, dict(good_a, **{"0.bias": 1.0}))
    # strict=False reports instead of raising.
    res = a.load_state_dict(bad_a, strict=False)
    res_t = t.load_state_dict(bad_t, strict=False)
    assert res.missing_keys == res_t.missing_keys == ["2.bias"]
    assert res.unexpected_keys == res_t.unexpected_keys == ["extra", "0.junk"]
    assert repr(res) == repr(res_t)
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        a.load_state_dict([1, 2])


def test_state_dict_loads_across_frameworks(torch_ref):
    a = nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.Flatten(), nn.Linear(12, 2))
    t = torch_ref.nn.Sequential(torch_ref.nn.Conv2d(2, 3, 3), torch_ref.nn.BatchNorm2d(3), torch_ref.nn.Flatten(),
                                torch_ref.nn.Linear(12, 2))
    a.load_state_dict({k: A(v.numpy()) for k, v in t.state_dict().items()})
    for k, v in t.state_dict().items():
        assert np.array_equal(a.state_dict()[k].numpy(), v.numpy()), k
    assert a.state_dict()["1.num_batches_tracked"].dtype == ampjit.int64


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked():
    bn = nn.BatchNorm2d(2)
    sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    assert bn.load_state_dict(sd).missing_keys == []  # version < 2: filled in like torch


# --- Module: modes, conversions, repr --------------------------------------------------------


def test_train_eval_recurse():
    net = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Dropout(), nn.BatchNorm1d(2)))
    assert net.training and all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net[1].train()
    assert not net.training and net[1].training and net[1][0].training
    net.train(True)
    assert all(m.training for m in net.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        net.train("yes")


@pytest.mark.parametrize("convert, dtype", [
    (lambda m: m.half(), "float16"), (lambda m: m.double(), "float64"), (lambda m: m.bfloat16(), "bfloat16"),
    (lambda m: m.to(ampjit.float16), "float16"), (lambda m: m.to(dtype=ampjit.float64), "float64"),
    (lambda m: m.double().float(), "float32"), (lambda m: m.to("cpu", ampjit.float64), "float64"),
])
def test_dtype_conversion_casts_floating_params_and_buffers(convert, dtype):
    net = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    net[0].register_buffer("count", ampjit.zeros([2], dtype=ampjit.int32))
    before = npy(net[0].weight).astype(np.float64)
    assert convert(net) is net
    want = getattr(ampjit, dtype)
    for name, p in net.named_parameters():
        assert type(p) is nn.Parameter and p.requires_grad and p.dtype == want, name
    assert net[1].running_mean.dtype == want and net[1].running_var.dtype == want
    assert net[1].num_batches_tracked.dtype == ampjit.int64
    assert net[0].count.dtype == ampjit.int32
    after = net[0].weight.detach().to(ampjit.float64).numpy()
    np.testing.assert_allclose(after, before, rtol=1e-2 if dtype in ("float16", "bfloat16") else 0)


def test_dtype_conversion_keeps_tied_weights_tied_and_rejects_integer_dtypes():
    a, b = nn.Linear(2, 2), nn.Linear(2, 2)
    b.weight = a.weight
    net = nn.Sequential(a, b).double()
    assert net[0].weight is net[1].weight and net[0].weight.dtype == ampjit.float64
    same = net[0].weight
    net.to(ampjit.float64)  # nothing changes: the same objects stay
    assert net[0].weight is same
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point or complex dtypes, but got "
                                        "desired dtype=torch.int64"):
        net.to(ampjit.int64)


def test_double_module_matches_numpy_float64():
    lin = nn.Linear(5, 3).double()
    x = rng.standard_normal((4, 5))
    out = lin(ampjit.from_numpy(x))
    assert out.dtype == ampjit.float64
    np.testing.assert_allclose(npy(out), x @ npy(lin.weight).T + npy(lin.bias), rtol=1e-12, atol=1e-12)


def test_zero_grad_and_requires_grad_():
    net = nn.Linear(2, 2)
    net.zero_grad()
    net.weight.grad = ampjit.ones([2, 2])
    net.zero_grad()
    assert net.weight.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    net.zero_grad(set_to_none=True)
    assert net.weight.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())


def test_apply_visits_children_first():
    seen = []
    nn.Sequential(nn.ReLU(), nn.Sequential(nn.Tanh())).apply(lambda m: seen.append(type(m).__name__))
    assert seen == ["ReLU", "Tanh", "Sequential", "Sequential"]


def _repr_model(nn_):
    return nn_.Sequential(collections.OrderedDict([
        ("conv", nn_.Conv2d(3, 8, 3, stride=2, padding=1, bias=False)),
        ("conv2", nn_.Conv2d(8, 8, (3, 1), dilation=2, groups=4, padding="same")),
        ("conv1", nn_.Conv1d(2, 4, 5)),
        ("deconv", nn_.ConvTranspose2d(8, 4, 2, stride=2, output_padding=1)),
        ("bn", nn_.BatchNorm2d(8, momentum=None)),
        ("ln", nn_.LayerNorm([4, 5], eps=1e-6, elementwise_affine=False)),
        ("gn", nn_.GroupNorm(2, 8)),
        ("acts", nn_.ModuleList([nn_.ReLU(inplace=True), nn_.GELU(), nn_.GELU(approximate="tanh"), nn_.Sigmoid(),
                                 nn_.Tanh(), nn_.SiLU(), nn_.LeakyReLU(0.2), nn_.ELU(), nn_.Softplus()])),
        ("sm", nn_.Softmax(dim=1)),
        ("lsm", nn_.LogSoftmax(-1)),
        ("drop", nn_.Dropout(0.25)),
        ("emb", nn_.Embedding(10, 4, padding_idx=0)),
        ("pool", nn_.MaxPool2d(2)),
        ("avg", nn_.AvgPool2d(3, stride=2, padding=1)),
        ("ada", nn_.AdaptiveAvgPool2d((1, None))),
        ("flat", nn_.Flatten()),
        ("id", nn_.Identity()),
        ("heads", nn_.ModuleDict({"cls": nn_.Linear(4, 2), "reg": nn_.Linear(4, 1, bias=False)})),
        ("losses", nn_.Sequential(nn_.MSELoss(), nn_.CrossEntropyLoss(label_smoothing=0.1), nn_.L1Loss(),
                                  nn_.NLLLoss(), nn_.BCELoss(), nn_.BCEWithLogitsLoss())),
    ]))


def test_repr_matches_torch(torch_ref):
    assert repr(_repr_model(nn)) == repr(_repr_model(torch_ref.nn))


def test_repr_format():
    net = nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU()))
    assert repr(net) == ("Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n"
                         "  (1): Sequential(\n    (0): ReLU()\n  )\n)")


MODULE_CLASSES = [
    "Linear", "Identity", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "ReLU", "ReLU6", "SiLU", "Mish", "Hardsigmoid", "Hardswish", "LeakyReLU", "ELU", "GELU", "Sigmoid", "Tanh",
    "Softplus", "Softmax", "Softmin", "LogSoftmax", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "Dropout", "Embedding", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "Flatten", "Sequential", "ModuleList", "ModuleDict", "L1Loss",
    "MSELoss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss", "CrossEntropyLoss",
]


def _params(fn):
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", MODULE_CLASSES)
def test_module_constructor_signature_matches_torch(torch_ref, name):
    ours, theirs = _params(getattr(nn, name).__init__), _params(getattr(torch_ref.nn, name).__init__)
    if name == "Embedding":  # torch 2.x adds _freeze after _weight; 1.13 has none
        theirs = [p for p in theirs if p[0] != "_freeze"]
    assert ours == theirs


FUNCTIONAL_NAMES = [n for n in F.__all__]


@pytest.mark.parametrize("name", FUNCTIONAL_NAMES)
def test_functional_signature_matches_torch(torch_ref, name):
    theirs = getattr(torch_ref.nn.functional, name)
    try:
        theirs_params = _params(theirs)
    except (ValueError, TypeError):
        pytest.skip("torch.nn.functional.{} is a builtin without a Python signature".format(name))
    if [kind for _, kind, _ in theirs_params] == [inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD]:
        pytest.skip("torch.nn.functional.{} dispatches on return_indices behind (*args, **kwargs)".format(name))
    assert _params(getattr(F, name)) == theirs_params


# --- containers ---------------------------------------------------------------------------------


def test_sequential_indexing_len_iteration_and_ordereddict():
    l1, l2, l3 = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(l1, l2, l3)
    assert len(seq) == 3 and list(seq) == [l1, l2, l3]
    assert seq[0] is l1 and seq[-1] is l3
    sub = seq[1:]
    assert type(sub) is nn.Sequential and list(sub) == [l2, l3] and list(sub._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]
    seq[1] = nn.Tanh()
    assert isinstance(seq[1], nn.Tanh)
    del seq[1]
    assert len(seq) == 2 and list(seq._modules) == ["0", "2"]
    assert nn.Sequential(nn.ReLU()).append(l1)[1] is l1
    named = nn.Sequential(collections.OrderedDict([("fc", l1), ("act", l2)]))
    assert list(named._modules) == ["fc", "act"] and named.fc is l1 and named[1] is l2
    assert [n for n, _ in named.named_parameters()] == ["fc.weight", "fc.bias"]


def test_sequential_forward_chains_modules():
    seq = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = randn(5, 3)
    w1, b1, w2, b2 = (npy(p).astype(np.float64) for p in seq.parameters())
    want = np.maximum(x @ w1.T + b1, 0) @ w2.T + b2
    np.testing.assert_allclose(npy(seq(A(x))), want, rtol=RTOL, atol=ATOL)


def test_module_list_append_extend_insert_index_len_iter():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    ml.append(nn.Linear(1, 1))
    ml.extend([nn.Sigmoid()])
    ml += [nn.Identity()]
    assert len(ml) == 5 and list(ml._modules) == ["0", "1", "2", "3", "4"]
    assert isinstance(ml[2], nn.Linear) and isinstance(ml[-1], nn.Identity)
    assert [type(m).__name__ for m in ml] == ["ReLU", "Tanh", "Linear", "Sigmoid", "Identity"]
    assert [n for n, _ in ml.named_parameters()] == ["2.weight", "2.bias"]
    ml.insert(1, nn.GELU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "GELU", "Tanh", "Linear", "Sigmoid", "Identity"]
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3", "4"] and isinstance(ml[0], nn.GELU)
    assert type(ml[1:3]) is nn.ModuleList and len(ml[1:3]) == 2
    ml[0] = nn.ReLU()
    assert isinstance(ml[0], nn.ReLU)
    with pytest.raises(IndexError):
        ml[10]
    with pytest.raises(TypeError, match="should be called with an iterable"):
        ml.extend(nn.ReLU())

    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(2, 2) for _ in range(3))

    assert len(list(Stack().parameters())) == 6


def test_module_dict():
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Linear(1, 1)
    md.update([("c", nn.Tanh())])
    assert list(md.keys()) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert [n for n, _ in md.named_parameters()] == ["b.weight", "b.bias"]
    assert isinstance(md.pop("a"), nn.ReLU) and list(md) == ["b", "c"]


# --- default initialization ---------------------------------------------------------------------


def _assert_uniform_within(t, bound):
    v = npy(t).ravel()
    assert np.all(np.abs(v) <= bound * (1 + 1e-6)), "values outside U(-{0}, {0})".format(bound)
    assert v.max() > 0.7 * bound and v.min() < -0.7 * bound, "values do not fill U(-{0}, {0})".format(bound)


def test_linear_and_conv_default_init_ranges():
    ampjit.manual_seed(0)
    lin = nn.Linear(50, 40)
    _assert_uniform_within(lin.weight, 1 / math.sqrt(50))
    _assert_uniform_within(lin.bias, 1 / math.sqrt(50))
    conv = nn.Conv2d(4, 64, 3)
    _assert_uniform_within(conv.weight, 1 / math.sqrt(4 * 9))
    _assert_uniform_within(conv.bias, 1 / math.sqrt(4 * 9))
    conv1 = nn.Conv1d(6, 32, 5, groups=2)
    _assert_uniform_within(conv1.weight, 1 / math.sqrt(3 * 5))
    deconv = nn.ConvTranspose2d(16, 64, 3)  # weight (in, out, k, k): fan_in = out * k * k, like torch
    assert list(deconv.weight.shape) == [16, 64, 3, 3]
    _assert_uniform_within(deconv.weight, 1 / math.sqrt(64 * 9))
    _assert_uniform_within(deconv.bias, 1 / math.sqrt(64 * 9))


def test_norm_and_embedding_default_init():
    ln = nn.LayerNorm((3, 4))
    assert npy(ln.weight).tolist() == [[1.0] * 4] * 3 and not npy(ln.bias).any()
    bn = nn.BatchNorm2d(5)
    assert npy(bn.weight).tolist() == [1.0] * 5 and not npy(bn.bias).any()
    assert bn.running_mean.tolist() == [0.0] * 5 and bn.running_var.tolist() == [1.0] * 5
    assert bn.num_batches_tracked.dtype == ampjit.int64 and bn.num_batches_tracked.dim() == 0
    assert bn.num_batches_tracked.item() == 0
    gn = nn.GroupNorm(2, 4)
    assert npy(gn.weight).tolist() == [1.0] * 4
    emb = nn.Embedding(400, 50, padding_idx=-1)
    assert emb.padding_idx == 399
    w = npy(emb.weight)
    assert not w[399].any()
    assert abs(w[:399].mean()) < 0.02 and abs(w[:399].std() - 1.0) < 0.02  # N(0, 1), 19950 samples


def test_default_init_follows_manual_seed():
    ampjit.manual_seed(7)
    a = nn.Linear(4, 3)
    ampjit.manual_seed(7)
    b = nn.Linear(4, 3)
    c = nn.Linear(4, 3)
    assert np.array_equal(npy(a.weight), npy(b.weight)) and np.array_equal(npy(a.bias), npy(b.bias))
    assert not np.array_equal(npy(a.weight), npy(c.weight))


def test_layers_take_dtype_argument():
    lin = nn.Linear(3, 2, dtype=ampjit.float64)
    assert lin.weight.dtype == ampjit.float64 and lin.bias.dtype == ampjit.float64
    assert np.all(np.abs(npy(lin.weight)) <= 1 / math.sqrt(3))
    half = nn.Conv2d(2, 3, 3, dtype=ampjit.float16)
    assert half.weight.dtype == ampjit.float16
    bn = nn.BatchNorm2d(3, dtype=ampjit.bfloat16)
    assert bn.running_mean.dtype == ampjit.bfloat16 and bn.num_batches_tracked.dtype == ampjit.int64


def test_init_functions():
    from ampjit.nn import init
    t = ampjit.empty([30, 20])
    init.xavier_uniform_(t)
    _assert_uniform_within(t, math.sqrt(6.0 / 50))
    init.kaiming_uniform_(t, nonlinearity="relu")
    _assert_uniform_within(t, math.sqrt(2.0) * math.sqrt(3.0 / 20))
    init.constant_(t, 0.5)
    assert np.all(npy(t) == 0.5)
    init.zeros_(t)
    assert not npy(t).any()
    init.normal_(t, mean=3.0, std=0.1)
    assert abs(npy(t).mean() - 3.0) < 0.02
    assert init.calculate_gain("tanh") == 5.0 / 3 and init.calculate_gain("leaky_relu", 0.2) == math.sqrt(2 / 1.04)
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(ampjit.empty([3]))


# --- layers vs torch ------------------------------------------------------------------------------

LAYERS = [
    ("Linear", lambda nn_: nn_.Linear(5, 3), (4, 5)),
    ("Linear_nobias_3d", lambda nn_: nn_.Linear(5, 3, bias=False), (2, 4, 5)),
    ("Conv1d", lambda nn_: nn_.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
    ("Conv2d", lambda nn_: nn_.Conv2d(3, 4, 3), (2, 3, 7, 6)),
    ("Conv2d_strided_grouped", lambda nn_: nn_.Conv2d(4, 6, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2),
                                                      groups=2, bias=False), (2, 4, 8, 7)),
    ("Conv2d_same", lambda nn_: nn_.Conv2d(2, 3, 4, padding="same"), (1, 2, 6, 6)),
    ("Conv2d_reflect", lambda nn_: nn_.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"), (1, 2, 5, 5)),
    ("Conv3d", lambda nn_: nn_.Conv3d(2, 3, 2), (1, 2, 4, 4, 3)),
    ("ConvTranspose2d", lambda nn_: nn_.ConvTranspose2d(4, 3, 3, stride=2, padding=1, output_padding=1),
     (2, 4, 5, 5)),
    ("ReLU", lambda nn_: nn_.ReLU(), (3, 7)),
    ("GELU", lambda nn_: nn_.GELU(), (3, 7)),
    ("GELU_tanh", lambda nn_: nn_.GELU(approximate="tanh"), (3, 7)),
    ("Sigmoid", lambda nn_: nn_.Sigmoid(), (3, 7)),
    ("Tanh", lambda nn_: nn_.Tanh(), (3, 7)),
    ("SiLU", lambda nn_: nn_.SiLU(), (3, 7)),
    ("LeakyReLU", lambda nn_: nn_.LeakyReLU(0.2), (3, 7)),
    ("Softmax", lambda nn_: nn_.Softmax(dim=1), (3, 7, 2)),
    ("LogSoftmax", lambda nn_: nn_.LogSoftmax(dim=-1), (3, 7)),
    ("LayerNorm", lambda nn_: nn_.LayerNorm(6), (3, 4, 6)),
    ("LayerNorm_2d_noaffine", lambda nn_: nn_.LayerNorm([4, 6], eps=1e-3, elementwise_affine=False), (3, 4, 6)),
    ("GroupNorm", lambda nn_: nn_.GroupNorm(2, 4), (2, 4, 3, 3)),
    ("BatchNorm2d_eval", lambda nn_: nn_.BatchNorm2d(3).eval(), (4, 3, 5, 5)),
    ("BatchNorm2d_train", lambda nn_: nn_.BatchNorm2d(3), (4, 3, 5, 5)),
    ("BatchNorm1d_train", lambda nn_: nn_.BatchNorm1d(3), (8, 3)),
    ("MaxPool2d", lambda nn_: nn_.MaxPool2d(2), (2, 3, 6, 6)),
    ("MaxPool2d_strided", lambda nn_: nn_.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 7, 7)),
    ("AvgPool2d", lambda nn_: nn_.AvgPool2d(2), (2, 3, 6, 6)),
    ("AvgPool2d_padded", lambda nn_: nn_.AvgPool2d(3, stride=2, padding=1, count_include_pad=False), (2, 3, 7, 7)),
    ("AdaptiveAvgPool2d", lambda nn_: nn_.AdaptiveAvgPool2d((2, 3)), (2, 3, 7, 8)),
    ("AdaptiveAvgPool2d_global", lambda nn_: nn_.AdaptiveAvgPool2d(1), (2, 3, 5, 4)),
    ("Flatten", lambda nn_: nn_.Flatten(), (2, 3, 4)),
    ("Identity", lambda nn_: nn_.Identity(54, unused=True), (2, 3)),
    ("Dropout_eval", lambda nn_: nn_.Dropout(0.5).eval(), (3, 4)),
]


@pytest.mark.parametrize("name, factory, shape", missing(LAYERS))
def test_layer_matches_torch(torch_ref, name, factory, shape):
    a, t = layer_pair(torch_ref, factory)
    assert repr(a) == repr(t)
    x = randn(*shape)
    out, want = a(A(x)), t(torch_ref.from_numpy(x))
    assert isinstance(out, ampjit.Tensor) and list(out.shape) == list(want.shape)
    assert_close(out, want)
    for (k, va), (_, vt) in zip(a.state_dict().items(), t.state_dict().items()):
        assert_close(va, vt)  # the same running-stat updates (train-mode BatchNorm)


def test_conv_transpose_output_size_matches_torch(torch_ref):
    a, t = layer_pair(torch_ref, lambda nn_: nn_.ConvTranspose2d(2, 3, 3, stride=2))
    x = randn(1, 2, 4, 4)
    assert_close(a(A(x), output_size=[10, 10]), t(torch_ref.from_numpy(x), output_size=[10, 10]))
    with pytest.raises(ValueError, match="requested an output size of"):
        a(A(x), output_size=[20, 20])


def test_embedding_matches_torch(torch_ref):
    a, t = layer_pair(torch_ref, lambda nn_: nn_.Embedding(10, 3, padding_idx=2))
    idx = np.array([[1, 2, 9], [0, 0, 4]], dtype=np.int64)
    assert repr(a) == repr(t)
    assert_close(a(A(idx)), t(torch_ref.from_numpy(idx)))


_LX, _LY = randn(4, 5), randn(4, 5)
_LTARGET = np.array([1, 0, 4, 2], dtype=np.int64)
_LW = np.abs(randn(5)) + 0.1


def _sig(a):
    return 1 / (1 + np.exp(-a))


LOSS_MODULES = [
    ("MSELoss", lambda nn_, T: nn_.MSELoss(), lambda T: (T(_LX), T(_LY))),
    ("L1Loss_sum", lambda nn_, T: nn_.L1Loss(reduction="sum"), lambda T: (T(_LX), T(_LY))),
    ("SmoothL1Loss", lambda nn_, T: nn_.SmoothL1Loss(beta=0.5), lambda T: (T(_LX), T(_LY))),
    ("CrossEntropyLoss", lambda nn_, T: nn_.CrossEntropyLoss(), lambda T: (T(_LX), T(_LTARGET))),
    ("CrossEntropyLoss_weight", lambda nn_, T: nn_.CrossEntropyLoss(weight=T(_LW), label_smoothing=0.2),
     lambda T: (T(_LX), T(_LTARGET))),
    ("NLLLoss", lambda nn_, T: nn_.NLLLoss(ignore_index=4, reduction="none"), lambda T: (T(_LX), T(_LTARGET))),
    ("BCEWithLogitsLoss", lambda nn_, T: nn_.BCEWithLogitsLoss(pos_weight=T(_LW)), lambda T: (T(_LX), T(_sig(_LY)))),
    ("BCELoss", lambda nn_, T: nn_.BCELoss(), lambda T: (T(_sig(_LX)), T(_sig(_LY)))),
]


@pytest.mark.parametrize("name, make, inputs", missing(LOSS_MODULES))
def test_loss_module_matches_torch(torch_ref, name, make, inputs):
    la, lt = make(nn, _tensor_of(ampjit)), make(torch_ref.nn, _tensor_of(torch_ref))
    assert repr(la) == repr(lt)
    assert [n for n, _ in la.named_buffers()] == [n for n, _ in lt.named_buffers()]
    assert_close(la(*inputs(_tensor_of(ampjit))), lt(*inputs(_tensor_of(torch_ref))))


# --- layers vs NumPy -------------------------------------------------------------------------------


def test_linear_matches_numpy():
    lin = nn.Linear(6, 4)
    x = randn(3, 2, 6)
    w, b = npy(lin.weight).astype(np.float64), npy(lin.bias).astype(np.float64)
    out = lin(A(x))
    assert list(out.shape) == [3, 2, 4] and out.dtype == ampjit.float32
    np.testing.assert_allclose(npy(out), x @ w.T + b, rtol=RTOL, atol=ATOL)


def _conv2d_ref(x, w, b, stride, padding):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return out + b[None, :, None, None]


def test_conv2d_matches_numpy():
    conv = nn.Conv2d(3, 5, 3, stride=2, padding=1)
    x = randn(2, 3, 7, 8)
    want = _conv2d_ref(x, npy(conv.weight).astype(np.float64), npy(conv.bias).astype(np.float64), 2, 1)
    out = conv(A(x))
    assert list(out.shape) == [2, 5, 4, 4]
    np.testing.assert_allclose(npy(out), want, rtol=RTOL, atol=ATOL)


def test_layer_norm_and_softmax_match_numpy():
    ln = nn.LayerNorm(8, eps=1e-5)
    ln.weight = nn.Parameter(A(randn(8)))
    ln.bias = nn.Parameter(A(randn(8)))
    x = randn(4, 8).astype(np.float64)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    want = (x - mu) / np.sqrt(var + 1e-5) * npy(ln.weight) + npy(ln.bias)
    np.testing.assert_allclose(npy(ln(A(x.astype(np.float32)))), want, rtol=1e-4, atol=1e-5)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(npy(nn.Softmax(dim=1)(A(x.astype(np.float32)))), e / e.sum(1, keepdims=True),
                               rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(npy(F.log_softmax(A(x.astype(np.float32)), dim=1)),
                               np.log(e / e.sum(1, keepdims=True)), rtol=RTOL, atol=ATOL)


def test_activations_match_numpy():
    x = randn(50)
    xd = x.astype(np.float64)
    erf = np.vectorize(math.erf)
    cases = [
        (nn.ReLU(), np.maximum(xd, 0)),
        (nn.Sigmoid(), 1 / (1 + np.exp(-xd))),
        (nn.Tanh(), np.tanh(xd)),
        (nn.GELU(), 0.5 * xd * (1 + erf(xd / math.sqrt(2)))),
        (nn.SiLU(), xd / (1 + np.exp(-xd))),
    ]
    for module, want in cases:
        np.testing.assert_allclose(npy(module(A(x))), want, rtol=RTOL, atol=ATOL, err_msg=repr(module))


def test_embedding_matches_numpy_gather():
    emb = nn.Embedding(7, 3)
    idx = np.array([[0, 6], [3, 3]], dtype=np.int64)
    out = emb(A(idx))
    assert list(out.shape) == [2, 2, 3]
    np.testing.assert_array_equal(npy(out), npy(emb.weight)[idx])


# --- BatchNorm running statistics -----------------------------------------------------------------


def test_batchnorm_training_uses_batch_stats_and_updates_running_stats():
    bn = nn.BatchNorm2d(3, momentum=0.1)
    x = randn(4, 3, 5, 5) * 2 + 1
    xd = x.astype(np.float64)
    out = bn(A(x))
    mean = xd.mean(axis=(0, 2, 3))
    var_b = xd.var(axis=(0, 2, 3))
    var_u = xd.var(axis=(0, 2, 3), ddof=1)
    want = (xd - mean[None, :, None, None]) / np.sqrt(var_b[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(npy(out), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn.running_mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn.running_var.numpy(), 0.9 + 0.1 * var_u, rtol=1e-5, atol=1e-6)
    assert bn.num_batches_tracked.item() == 1
    # Eval uses the running statistics and leaves them alone.
    bn.eval()
    rm, rv = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    out = bn(A(x))
    want = (xd - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(npy(out), want, rtol=1e-4, atol=1e-5)
    assert np.array_equal(bn.running_mean.numpy(), rm) and bn.num_batches_tracked.item() == 1


def test_batchnorm_cumulative_average_when_momentum_is_none():
    bn = nn.BatchNorm1d(2, momentum=None)
    x1, x2 = randn(6, 2), randn(6, 2) + 3
    bn(A(x1))
    bn(A(x2))
    want = (x1.astype(np.float64).mean(0) + x2.astype(np.float64).mean(0)) / 2
    np.testing.assert_allclose(bn.running_mean.numpy(), want, rtol=1e-5, atol=1e-6)
    assert bn.num_batches_tracked.item() == 2


def test_batchnorm_without_running_stats_and_input_checks():
    bn = nn.BatchNorm2d(2, affine=False, track_running_stats=False)
    assert bn.running_mean is None and bn.num_batches_tracked is None and bn.weight is None
    assert list(bn.state_dict()) == []
    x = randn(3, 2, 2, 2)
    bn.eval()  # still batch statistics: there are no running ones
    out = npy(bn(A(x)))
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), [0, 0], atol=1e-5)
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        bn(A(randn(2, 2, 2)))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(2)(A(randn(1, 2)))


def test_batchnorm_several_steps_match_torch(torch_ref):
    a, t = layer_pair(torch_ref, lambda nn_: nn_.BatchNorm2d(3, momentum=0.3))
    for step in range(3):
        x = randn(2, 3, 4, 4) + step
        assert_close(a(A(x)), t(torch_ref.from_numpy(x)))
    a.eval(), t.eval()
    x = randn(2, 3, 4, 4)
    assert_close(a(A(x)), t(torch_ref.from_numpy(x)))
    for (k, va), (_, vt) in zip(a.state_dict().items(), t.state_dict().items()):
        assert_close(va, vt)


# --- Dropout ---------------------------------------------------------------------------------


def test_dropout_train_and_eval():
    x = ampjit.ones([100, 100])
    drop = nn.Dropout(0.3)
    out = npy(drop(x))
    kept = out != 0
    assert abs(kept.mean() - 0.7) < 0.03
    np.testing.assert_allclose(out[kept], 1 / 0.7, rtol=1e-6)
    drop.eval()
    assert np.array_equal(npy(drop(x)), np.ones((100, 100), np.float32))
    assert np.array_equal(npy(F.dropout(x, 0.3, training=False)), npy(x))
    assert np.array_equal(npy(F.dropout(x, 0.0)), npy(x))
    assert not npy(F.dropout(x, 1.0)).any()
    ampjit.manual_seed(3)
    a = npy(F.dropout(x, 0.5))
    ampjit.manual_seed(3)
    assert np.array_equal(a, npy(F.dropout(x, 0.5)))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"):
        nn.Dropout(1.5)
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got -0.1"):
        F.dropout(x, -0.1)


def test_dropout_inplace_writes_input():
    x = ampjit.ones([50, 50])
    out = F.dropout(x, 0.5, inplace=True)
    assert out.data_ptr() == x.data_ptr()
    assert (npy(x) == 0).any()


# --- functional ----------------------------------------------------------------------------------

X2, X4, X3 = randn(4, 6), randn(2, 4, 6, 6), randn(2, 4, 9)
W_LIN, B_LIN = randn(3, 6), randn(3)
W_CONV, B_CONV = randn(6, 2, 3, 3), randn(6)
W_CONV1 = randn(5, 4, 3)
W_CONV3, X5 = randn(3, 2, 2, 2, 2), randn(1, 2, 3, 4, 4)
W_DECONV = randn(4, 3, 3, 3)
GAMMA, BETA = randn(6), randn(6)
RM, RV = randn(4), np.abs(randn(4)) + 0.5
IDX = np.array([[0, 2], [5, 2]], dtype=np.int64)
EMB = randn(6, 3)

FUNCTIONAL = [
    ("relu", lambda F_, T: F_.relu(T(X2))),
    ("relu_inplace", lambda F_, T: F_.relu(T(X2), inplace=True)),
    ("gelu", lambda F_, T: F_.gelu(T(X2))),
    ("gelu_tanh", lambda F_, T: F_.gelu(T(X2), approximate="tanh")),
    ("silu", lambda F_, T: F_.silu(T(X2))),
    ("sigmoid", lambda F_, T: F_.sigmoid(T(X2))),
    ("tanh", lambda F_, T: F_.tanh(T(X2))),
    ("leaky_relu", lambda F_, T: F_.leaky_relu(T(X2), 0.1)),
    ("elu", lambda F_, T: F_.elu(T(X2), alpha=0.5)),
    ("hardtanh", lambda F_, T: F_.hardtanh(T(X2), -0.5, 0.5)),
    ("softplus", lambda F_, T: F_.softplus(T(X2), beta=2)),
    ("softplus_threshold", lambda F_, T: F_.softplus(T(X2 * 30), beta=1, threshold=5)),
    ("relu6", lambda F_, T: F_.relu6(T(X2 * 8))),
    ("relu6_inplace", lambda F_, T: F_.relu6(T(X2 * 8), inplace=True)),
    ("hardswish", lambda F_, T: F_.hardswish(T(X2 * 4))),
    ("hardswish_inplace", lambda F_, T: F_.hardswish(T(X2 * 4), inplace=True)),
    ("hardsigmoid", lambda F_, T: F_.hardsigmoid(T(X2 * 4))),
    ("mish", lambda F_, T: F_.mish(T(X2 * 3))),
    ("logsigmoid", lambda F_, T: F_.logsigmoid(T(X2 * 30))),
    ("leaky_relu_inplace", lambda F_, T: F_.leaky_relu(T(X2), 0.2, inplace=True)),
    ("elu_inplace", lambda F_, T: F_.elu(T(X2), 0.7, inplace=True)),
    ("hardtanh_inplace", lambda F_, T: F_.hardtanh(T(X2), -0.3, 0.4, inplace=True)),
    ("softmax", lambda F_, T: F_.softmax(T(X2), dim=1)),
    ("softmax_dim0", lambda F_, T: F_.softmax(T(X4), 0)),
    ("softmax_dtype", lambda F_, T: F_.softmax(T(X2), dim=-1, dtype=T(np.zeros(1)).dtype)),
    ("log_softmax", lambda F_, T: F_.log_softmax(T(X2), dim=0)),
    ("linear", lambda F_, T: F_.linear(T(X2), T(W_LIN), T(B_LIN))),
    ("linear_nobias", lambda F_, T: F_.linear(T(X2), T(W_LIN))),
    ("conv1d", lambda F_, T: F_.conv1d(T(X3), T(W_CONV1), padding=1, stride=2)),
    ("conv2d", lambda F_, T: F_.conv2d(T(X4), T(W_CONV), T(B_CONV), stride=2, padding=1, groups=2)),
    ("conv2d_tuple_args", lambda F_, T: F_.conv2d(T(X4), T(W_CONV), None, (1, 2), (2, 0), (2, 1), 2)),
    ("conv3d", lambda F_, T: F_.conv3d(T(X5), T(W_CONV3))),
    ("conv_transpose2d", lambda F_, T: F_.conv_transpose2d(T(X4), T(W_DECONV), stride=2, padding=1,
                                                           output_padding=1)),
    ("max_pool2d", lambda F_, T: F_.max_pool2d(T(X4), 2)),
    ("max_pool2d_args", lambda F_, T: F_.max_pool2d(T(X4), (3, 2), stride=(2, 1), padding=1, ceil_mode=True)),
    ("max_pool2d_indices", lambda F_, T: F_.max_pool2d(T(X4), 2, return_indices=True)),
    ("avg_pool2d", lambda F_, T: F_.avg_pool2d(T(X4), 2)),
    ("avg_pool2d_args", lambda F_, T: F_.avg_pool2d(T(X4), 3, stride=2, padding=1, count_include_pad=False)),
    ("adaptive_avg_pool2d", lambda F_, T: F_.adaptive_avg_pool2d(T(X4), (4, None))),
    ("adaptive_avg_pool2d_int", lambda F_, T: F_.adaptive_avg_pool2d(T(X4), 3)),
    ("layer_norm", lambda F_, T: F_.layer_norm(T(X2), (6,), T(GAMMA), T(BETA), eps=1e-3)),
    ("layer_norm_4d", lambda F_, T: F_.layer_norm(T(X4), [6, 6])),
    ("batch_norm_eval", lambda F_, T: F_.batch_norm(T(X4), T(RM), T(RV), T(GAMMA[:4]), T(BETA[:4]))),
    ("batch_norm_train", lambda F_, T: F_.batch_norm(T(X4), None, None, training=True)),
    ("group_norm", lambda F_, T: F_.group_norm(T(X4), 2, T(GAMMA[:4]), T(BETA[:4]))),
    ("dropout_eval", lambda F_, T: F_.dropout(T(X2), 0.4, training=False)),
    ("embedding", lambda F_, T: F_.embedding(T(IDX), T(EMB))),
    ("embedding_padding_idx", lambda F_, T: F_.embedding(T(IDX), T(EMB), padding_idx=-1)),
    ("pad", lambda F_, T: F_.pad(T(X4), (1, 2, 0, 1))),
    ("pad_value", lambda F_, T: F_.pad(T(X4), (1, 1), value=3.0)),
    ("pad_reflect", lambda F_, T: F_.pad(T(X4), (2, 1, 1, 2), mode="reflect")),
    ("normalize", lambda F_, T: F_.normalize(T(X2), dim=1)),
]


@pytest.mark.parametrize("name, fn", missing(FUNCTIONAL))
def test_functional_matches_torch(torch_ref, name, fn):
    out = fn(F, _tensor_of(ampjit))
    want = fn(torch_ref.nn.functional, _tensor_of(torch_ref))
    assert_close(out, want)


def test_layer_norm_shape_must_be_a_sequence_like_torch(torch_ref):
    with pytest.raises(TypeError, match="normalized_shape"):
        F.layer_norm(A(X2), 6)
    with pytest.raises(TypeError, match="normalized_shape"):
        torch_ref.nn.functional.layer_norm(torch_ref.from_numpy(X2), 6)
    assert_close(F.layer_norm(A(X2), A(X2).shape[1:]), F.layer_norm(A(X2), [6]))


def test_softmax_implicit_dim_warns_like_torch():
    x = A(X2)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        out = F.softmax(x)
    assert_close(out, npy(F.softmax(x, dim=1)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for log_softmax"):
        out = F.log_softmax(A(X3))  # 3-d: dim 0
    assert_close(out, npy(F.log_softmax(A(X3), dim=0)))


LOGITS = randn(5, 4)
LABELS = np.array([3, 0, 1, 3, 2], dtype=np.int64)
PROBS = 1 / (1 + np.exp(-randn(5, 4)))
TARGETS01 = (randn(5, 4) > 0).astype(np.float32)
CLASS_W = np.abs(randn(4)) + 0.2
LOSSES = [
    ("mse_loss", lambda F_, T, r: F_.mse_loss(T(X2), T(X2[::-1]), reduction=r)),
    ("l1_loss", lambda F_, T, r: F_.l1_loss(T(X2), T(X2[::-1]), reduction=r)),
    ("smooth_l1_loss", lambda F_, T, r: F_.smooth_l1_loss(T(X2), T(X2[::-1]) * 2, reduction=r, beta=0.5)),
    ("binary_cross_entropy", lambda F_, T, r: F_.binary_cross_entropy(T(PROBS), T(TARGETS01), reduction=r)),
    ("binary_cross_entropy_weight", lambda F_, T, r: F_.binary_cross_entropy(T(PROBS), T(TARGETS01), T(CLASS_W),
                                                                             reduction=r)),
    ("bce_with_logits", lambda F_, T, r: F_.binary_cross_entropy_with_logits(T(LOGITS), T(TARGETS01), reduction=r)),
    ("bce_with_logits_weights", lambda F_, T, r: F_.binary_cross_entropy_with_logits(
        T(LOGITS), T(TARGETS01), T(CLASS_W), reduction=r, pos_weight=T(CLASS_W[::-1]))),
    ("cross_entropy", lambda F_, T, r: F_.cross_entropy(T(LOGITS), T(LABELS), reduction=r)),
    ("cross_entropy_weight_ignore", lambda F_, T, r: F_.cross_entropy(T(LOGITS), T(LABELS), T(CLASS_W),
                                                                      ignore_index=3, reduction=r)),
    ("cross_entropy_smoothing", lambda F_, T, r: F_.cross_entropy(T(LOGITS), T(LABELS), reduction=r,
                                                                  label_smoothing=0.1)),
    ("cross_entropy_probs", lambda F_, T, r: F_.cross_entropy(T(LOGITS), T(PROBS / PROBS.sum(1, keepdims=True)),
                                                              reduction=r)),
    ("cross_entropy_4d", lambda F_, T, r: F_.cross_entropy(T(X4[:, :3]), T(np.argmax(X4[:, :3], 1)), reduction=r)),
    ("nll_loss", lambda F_, T, r: F_.nll_loss(T(LOGITS), T(LABELS), reduction=r)),
    ("nll_loss_weight_ignore", lambda F_, T, r: F_.nll_loss(T(LOGITS), T(LABELS), T(CLASS_W), ignore_index=0,
                                                            reduction=r)),
]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("name, fn", missing(LOSSES))
def test_loss_matches_torch(torch_ref, name, fn, reduction):
    out = fn(F, _tensor_of(ampjit), reduction)
    want = fn(torch_ref.nn.functional, _tensor_of(torch_ref), reduction)
    assert_close(out, want)


def test_losses_match_numpy():
    x, y = X2.astype(np.float64), X2[::-1].astype(np.float64)
    np.testing.assert_allclose(F.mse_loss(A(X2), A(X2[::-1])).item(), ((x - y) ** 2).mean(), rtol=1e-5)
    np.testing.assert_allclose(npy(F.l1_loss(A(X2), A(X2[::-1]), reduction="none")), np.abs(x - y), rtol=1e-6)
    lg = LOGITS.astype(np.float64)
    logp = lg - np.log(np.exp(lg).sum(1, keepdims=True))
    nll = -logp[np.arange(5), LABELS]
    np.testing.assert_allclose(F.cross_entropy(A(LOGITS), A(LABELS), reduction="sum").item(), nll.sum(), rtol=1e-5)
    np.testing.assert_allclose(npy(F.nll_loss(A(logp.astype(np.float32)), A(LABELS), reduction="none")), nll,
                               rtol=1e-5)


@pytest.mark.parametrize("name, fn", LOSSES, ids=[c[0] for c in LOSSES])
def test_loss_rejects_bad_reduction(name, fn):
    with pytest.raises(ValueError, match="^bogus is not a valid value for reduction$"):
        fn(F, _tensor_of(ampjit), "bogus")


def test_loss_legacy_arguments_and_shape_checks():
    x, y = A(X2), A(X2[::-1])
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        out = F.mse_loss(x, y, size_average=False)
    np.testing.assert_allclose(out.item(), F.mse_loss(x, y, reduction="sum").item(), rtol=1e-6)
    assert nn.MSELoss(reduce=False).reduction == "none"
    with pytest.warns(UserWarning, match="Using a target size"):
        F.mse_loss(x, A(X2[:1]))
    with pytest.raises(ValueError, match="must be the same as input size"):
        F.binary_cross_entropy_with_logits(x, A(X2[:1]))
    with pytest.raises(ValueError, match="Using a target size .* is deprecated"):
        F.binary_cross_entropy(A(PROBS), A(PROBS[:2]))


def test_missing_op_raises_not_implemented_naming_it():
    # conv_transpose3d is the rarest op here; the error comes from the op table lookup, by ATen name.
    if "aten::conv_transpose3d" in [b for b, _, _ in ampjit._C._op_table()]:
        pytest.skip("the op table implements aten::conv_transpose3d")
    with pytest.raises(NotImplementedError, match="aten::conv_transpose3d"):
        F.conv_transpose3d(A(X5), A(randn(2, 2, 2, 2, 2)))


# --- programs written for torch, run by both ------------------------------------------------------

MLP_PROGRAM = """
import ampjit as torch
import ampjit.nn as nn
import ampjit.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in, d_hidden, n_classes):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(d_hidden)
        self.drop = nn.Dropout(p=0.1)
        self.fc2 = nn.Linear(d_hidden, n_classes)

    def forward(self, x):
        h = self.drop(self.norm(self.act(self.fc1(x))))
        return self.fc2(h)


def build():
    return MLP(8, 16, 4)


def run(model, x, labels):
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, labels)
        probs = torch.softmax(logits, dim=-1)
        pred = logits.argmax(dim=1)
    return logits, loss, probs, pred
"""

CONVNET_PROGRAM = """
import collections

import ampjit as torch
from ampjit import nn
from ampjit.nn import functional as F


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(collections.OrderedDict([
            ("conv1", nn.Conv2d(3, 8, kernel_size=3, padding=1)),
            ("bn1", nn.BatchNorm2d(8)),
            ("relu1", nn.ReLU(inplace=True)),
            ("pool", nn.MaxPool2d(2)),
            ("conv2", nn.Conv2d(8, 16, 3, stride=2, bias=False)),
            ("relu2", nn.ReLU()),
        ]))
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(16, 10))

    def forward(self, x):
        x = self.features(x)
        x = self.pool(x)
        return self.classifier(x)


def build():
    return ConvNet()


def run(model, x, labels):
    model.train()
    train_logits = model(x)  # updates the BatchNorm running statistics
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, labels, reduction="sum")
        logp = F.log_softmax(logits, dim=1)
    return train_logits, logits, loss, logp, model.features.bn1.running_var
"""

EMBEDDING_PROGRAM = """
import ampjit as torch
import ampjit.nn as nn
import ampjit.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, vocab=20, dim=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0)
        self.blocks = nn.ModuleList([nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, dim), nn.SiLU())
                                     for _ in range(2)])
        self.out = nn.Linear(dim, 1)

    def forward(self, tokens):
        h = self.embed(tokens)
        for block in self.blocks:
            h = h + block(h)
        return torch.sigmoid(self.out(h.mean(dim=1))).squeeze(-1)


def build():
    return Encoder().eval()


def run(model, tokens, targets):
    with torch.no_grad():
        p = model(tokens)
        return p, F.binary_cross_entropy(p, targets)
"""


def _run_program_both_ways(run_as_torch_program, torch_ref, source, inputs):
    ns_a, ns_t = run_as_torch_program(source)
    model_a, model_t = ns_a["build"](), ns_t["build"]()
    assert repr(model_a) == repr(model_t)
    assert [(k, list(v.shape)) for k, v in model_a.state_dict().items()] == \
           [(k, list(v.shape)) for k, v in model_t.state_dict().items()]
    # The same weights in both: ampjit's initialization, loaded into torch as a checkpoint would be.
    model_t.load_state_dict({k: torch_ref.from_numpy(v.numpy().copy()) for k, v in model_a.state_dict().items()})
    out_a = ns_a["run"](model_a, *[_tensor_of(ampjit)(x) for x in inputs])
    out_t = ns_t["run"](model_t, *[_tensor_of(torch_ref)(x) for x in inputs])
    assert_close(out_a, out_t, rtol=1e-4, atol=1e-5)
    return model_a, model_t


def test_mlp_program_runs_like_torch(run_as_torch_program, torch_ref):
    x = randn(6, 8)
    labels = np.array([0, 3, 1, 2, 3, 0], dtype=np.int64)
    _run_program_both_ways(run_as_torch_program, torch_ref, MLP_PROGRAM, [x, labels])


def test_convnet_program_runs_like_torch(run_as_torch_program, torch_ref):
    x = randn(4, 3, 12, 12)
    labels = np.array([9, 0, 4, 4], dtype=np.int64)
    model_a, model_t = _run_program_both_ways(run_as_torch_program, torch_ref, CONVNET_PROGRAM, [x, labels])
    assert model_a.features.bn1.num_batches_tracked.item() == model_t.features.bn1.num_batches_tracked.item() == 1


def test_embedding_program_runs_like_torch(run_as_torch_program, torch_ref):
    tokens = np.array([[1, 5, 0, 0], [7, 19, 3, 0], [2, 2, 2, 2]], dtype=np.int64)
    targets = np.array([1.0, 0.0, 1.0], dtype=np.float32)
    _run_program_both_ways(run_as_torch_program, torch_ref, EMBEDDING_PROGRAM, [tokens, targets])


def test_model_converted_to_double_matches_float32():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = randn(5, 8)
    ref = npy(model(A(x)))
    model.to(ampjit.float64)
    np.testing.assert_allclose(npy(model(A(x).double())), ref, rtol=1e-5, atol=1e-5)


# ---- Layers compiled from their own source ----------------------------------------------------

def test_scripted_layers_run_their_own_forward_and_the_methods_it_calls():
    """jit.script of a layer compiles the layer's forward from nn/modules/ (no script copy): a
    subclass that overrides a method the forward calls (Conv2d._conv_forward, as weight-standardized
    convolutions do) gets its override in script as in eager."""
    class ScaledConv(nn.Conv2d):
        def _conv_forward(self, input, weight, bias):
            return F.conv2d(input, weight * 2.0, bias, self.stride, self.padding, self.dilation, self.groups)

    ampjit.manual_seed(0)
    m = ScaledConv(3, 4, 3, padding=1)
    x = ampjit.randn(2, 3, 8, 8)
    s = ampjit.jit.script(m)
    assert ampjit.equal(s(x), m(x))
    assert not ampjit.equal(s(x), F.conv2d(x, m.weight, m.bias, 1, 1))  # the override ran
    assert "_conv_forward" in s.code


@pytest.mark.parametrize("layer", [
    lambda: nn.ReLU(), lambda: nn.GELU("tanh"), lambda: nn.Sigmoid(), lambda: nn.Tanh(), lambda: nn.Softmax(1), lambda: nn.LogSoftmax(-1), lambda: nn.SiLU(),
    lambda: nn.Conv2d(3, 4, 3, padding=1), lambda: nn.Conv1d(3, 4, 3), lambda: nn.MaxPool2d(2),
    lambda: nn.AvgPool2d(2), lambda: nn.AdaptiveAvgPool2d(1), lambda: nn.BatchNorm2d(3).eval(),
    lambda: nn.BatchNorm2d(3), lambda: nn.LayerNorm([8]), lambda: nn.GroupNorm(1, 3), lambda: nn.Flatten(),
    lambda: nn.Dropout(0.0), lambda: nn.Identity(), lambda: nn.ConvTranspose2d(3, 2, 3),
])
def test_scripted_layer_matches_eager(layer):
    ampjit.manual_seed(1)
    m = layer()
    x = ampjit.randn(2, 3, 8, 8) if not isinstance(m, nn.Conv1d) else ampjit.randn(2, 3, 8)
    want = m(x.clone())
    s = ampjit.jit.script(m)
    got = s(x.clone())
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6, atol=1e-6)


def test_scripted_conv_transpose_rejects_output_size_with_its_reason():
    s = ampjit.jit.script(nn.ConvTranspose2d(3, 2, 3, stride=2))
    x = ampjit.randn(1, 3, 4, 4)
    assert tuple(s(x).shape) == (1, 2, 9, 9)
    with pytest.raises(Exception, match=r"ConvTranspose2d\(output_size=\.\.\.\) is not supported in script"):
        s(x, [10, 10])


def test_pad_constant_mode_matches_torch(torch_ref):
    x = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    for pad, value in [((1, 2), None), ((1, 1, 2, 0), 1.5), ((-1, 2), None), ((0, 0, -1, -1, 1, 0), 0.25)]:
        got = F.pad(ampjit.tensor(x), pad, value=value)
        want = torch_ref.nn.functional.pad(torch_ref.tensor(x), pad, value=value)
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    for pad, kw in [((1,), {}), ((1,) * 8, {}), ((-3, -2), {}), ((-2, -2), {}), ((1, 1), {"mode": "reflect", "value": 1.0})]:
        def outcome(t):
            try:
                return tuple(t.nn.functional.pad(t.tensor(x), pad, **kw).shape)
            except RuntimeError as e:
                return str(e)
        assert outcome(ampjit) == outcome(torch_ref), pad
