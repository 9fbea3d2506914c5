"""torch.jit.load of TorchScript archives (Note [Loading TorchScript archives] in
serialization/jit_load.h; the dialect torch's code printer writes: Note [Serialized code] in
script/emit/serialized.cpp): archives written by torch 1.13, scripted and traced, load in ampjit with
their parameters, buffers, submodules, attributes and methods, and give torch's outputs, in float32
and under CPU autocast; bad archives get clear errors and run nothing."""
import importlib.util
import io
import os
import sys
import textwrap
import zipfile

import numpy as np
import pytest

import ampjit

HERE = os.path.dirname(os.path.abspath(__file__))

MODULE_SOURCE = '''
import torch
from typing import Dict, List, Optional, Tuple


class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 3)
        self.register_buffer("scale", torch.arange(3, dtype=torch.float32) + 1)

    def forward(self, x):
        return self.lin(x) * self.scale


class Net(torch.nn.Module):
    offset: Optional[int]

    def __init__(self, offset: Optional[int]):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(4)
        self.head = Head()
        self.offset = offset
        self.steps: List[int] = [1, 2]
        self.weights: Dict[str, float] = {"a": 0.5, "b": -1.0}
        self.name = "net"

    def features(self, x):
        y = torch.relu(self.bn(self.conv(x)))
        return y.mean(dim=(2, 3)).repeat(1, 2)[:, :6]

    def forward(self, x, k: int = 2) -> Tuple[torch.Tensor, torch.Tensor]:
        z = self.head(self.features(x))
        o = self.offset
        if o is not None:
            z = z + o
        for s in self.steps:
            z = z * s + self.weights["a"]
        with torch.cpu.amp.autocast():
            w = torch.mm(z, z.t())
        if self.training:
            z = z - 1
        return z + k, w
'''


@pytest.fixture(scope="module")
def torch_nets(torch_ref, tmp_path_factory):
    """The source above imported with torch: (module, a folder for archives)."""
    root = tmp_path_factory.mktemp("jit_archives")
    path = root / "archive_models.py"
    path.write_text(MODULE_SOURCE)
    spec = importlib.util.spec_from_file_location("archive_models", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["archive_models"] = mod
    spec.loader.exec_module(mod)
    yield mod, root
    del sys.modules["archive_models"]


def _np(t):
    return np.asarray(t.float().tolist()) if hasattr(t, "float") else np.asarray(t)


def _to_ampjit(torch_ref, x):
    return ampjit.tensor(x.tolist(), dtype=getattr(ampjit, str(x.dtype).split(".")[1]))


def _net(torch_ref, mod, offset=3):
    torch_ref.manual_seed(0)
    net = mod.Net(offset).eval()
    with torch_ref.no_grad():  # running statistics other than 0 and 1
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 1.5)
    return net


def test_scripted_module_from_torch(torch_ref, torch_nets):
    mod, root = torch_nets
    net = torch_ref.jit.script(_net(torch_ref, mod))
    path = str(root / "net.pt")
    net.save(path)
    loaded = ampjit.jit.load(path)
    x = torch_ref.randn(2, 3, 5, 5)
    want = net(x, 3)
    got = loaded(_to_ampjit(torch_ref, x), 3)
    assert [str(t.dtype) for t in got] == [str(t.dtype) for t in want] == ["torch.float32", "torch.bfloat16"]
    np.testing.assert_allclose(_np(got[0]), _np(want[0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(got[1]), _np(want[1]), rtol=2e-2, atol=2e-2 * float(np.abs(_np(want[1])).max()))
    # default arguments, named methods, attributes, parameters and buffers
    np.testing.assert_allclose(_np(loaded(_to_ampjit(torch_ref, x))[0]), _np(net(x)[0]), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_np(loaded.features(_to_ampjit(torch_ref, x))), _np(net.features(x)),
                               rtol=1e-5, atol=1e-5)
    assert loaded.offset == 3 and loaded.steps == [1, 2] and loaded.weights == {"a": 0.5, "b": -1.0}
    assert loaded.name == "net" and loaded.original_name == "Net"
    want_params = dict(net.named_parameters())
    got_params = dict(loaded.named_parameters())
    assert list(got_params) == list(want_params)
    for name, p in want_params.items():
        np.testing.assert_array_equal(_np(got_params[name]), _np(p.detach()))
        assert got_params[name].requires_grad
    assert [n for n, _ in loaded.named_buffers()] == [n for n, _ in net.named_buffers()]
    assert type(loaded.head).__name__ == "RecursiveScriptModule" and loaded.head.original_name == "Head"
    assert "aten::mm" in str(loaded.inlined_graph) and loaded.code.startswith("def forward(self,")
    assert loaded.features.code.startswith("def features(self,")
    # train() reaches the compiled code's self.training
    loaded.train()
    net.train()
    np.testing.assert_allclose(_np(loaded(_to_ampjit(torch_ref, x))[0]), _np(net(x)[0]), rtol=1e-4, atol=1e-4)


def test_autocast_regions_and_eager_autocast(torch_ref, torch_nets):
    mod, root = torch_nets
    net = torch_ref.jit.script(_net(torch_ref, mod, offset=None))
    buf = io.BytesIO()
    torch_ref.jit.save(net, buf)
    loaded = ampjit.jit.load(io.BytesIO(buf.getvalue()))
    x = torch_ref.randn(2, 3, 5, 5)
    z, w = loaded(_to_ampjit(torch_ref, x))
    tz, tw = net(x)
    assert w.dtype == ampjit.bfloat16 and tw.dtype == torch_ref.bfloat16  # the `with autocast` region
    np.testing.assert_allclose(_np(w), _np(tw), rtol=5e-2, atol=5e-2 * float(np.abs(_np(tw)).max()))
    with torch_ref.cpu.amp.autocast():
        tz, tw = net(x)
    with ampjit.cpu.amp.autocast():
        z, w = loaded(_to_ampjit(torch_ref, x))
    assert str(z.dtype).split(".")[1] == str(tz.dtype).split(".")[1]
    scale = float(np.abs(_np(tz)).max())
    np.testing.assert_allclose(_np(z), _np(tz), rtol=5e-2, atol=5e-2 * scale)


def test_traced_module_and_traced_convolution_under_autocast(torch_ref, torch_nets):
    mod, root = torch_nets
    torch_ref.manual_seed(0)
    net = torch_ref.nn.Sequential(torch_ref.nn.Conv2d(3, 4, 3), torch_ref.nn.ReLU(), torch_ref.nn.Flatten(),
                                  torch_ref.nn.Linear(4 * 9, 2)).eval()
    x = torch_ref.randn(1, 3, 5, 5)
    traced = torch_ref.jit.trace(net, x)
    path = str(root / "traced.pt")
    traced.save(path)
    loaded = ampjit.jit.load(path)
    assert "aten::_convolution" in str(getattr(loaded, "0").graph)
    np.testing.assert_allclose(_np(loaded(_to_ampjit(torch_ref, x))), _np(traced(x)), rtol=1e-5, atol=1e-5)
    # Under autocast the JIT autocast pass casts the traced _convolution's inputs, as torch 1.13's
    # does; called eagerly, _convolution is not autocast (torch registers the policy only for its
    # deprecated overload).
    want_model = torch_ref.jit.load(path)
    with ampjit.cpu.amp.autocast():
        got = loaded(_to_ampjit(torch_ref, x))
        eager = ampjit._C._call("aten::_convolution", (_to_ampjit(torch_ref, x), ampjit.ones(4, 3, 3, 3), None,
                                                       [1, 1], [0, 0], [1, 1], False, [0, 0], 1, False, False,
                                                       True, True), {})
    with torch_ref.cpu.amp.autocast():
        want = want_model(x)
        want_eager = torch_ref.ops.aten._convolution(x, torch_ref.ones(4, 3, 3, 3), None, [1, 1], [0, 0], [1, 1],
                                                     False, [0, 0], 1, False, False, True, True)
    assert got.dtype == ampjit.bfloat16 and want.dtype == torch_ref.bfloat16
    assert eager.dtype == ampjit.float32 and want_eager.dtype == torch_ref.float32
    np.testing.assert_allclose(_np(got), _np(want), rtol=5e-2, atol=5e-2 * float(np.abs(_np(want)).max()))


def test_scripted_function_archive(torch_ref, tmp_path):
    src = tmp_path / "archive_fn.py"
    src.write_text(textwrap.dedent('''
        import torch
        from typing import List

        def fn(x: torch.Tensor, sizes: List[int], label: str) -> torch.Tensor:
            n = len(sizes)
            if label.startswith("sum") and n > 1:
                return x.sum() + sizes[1] // 2
            return torch.tensor([float(s) for s in sizes]) * x.mean()
    '''))
    spec = importlib.util.spec_from_file_location("archive_fn", src)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    scripted = torch_ref.jit.script(m.fn)
    scripted.save(str(tmp_path / "fn.pt"))
    loaded = ampjit.jit.load(str(tmp_path / "fn.pt"))
    x = torch_ref.arange(6, dtype=torch_ref.float32)
    for sizes, label in (([1, 5, 2], "sum!"), ([3], "sum"), ([4, 6], "mean")):
        np.testing.assert_allclose(_np(loaded(_to_ampjit(torch_ref, x), sizes, label)),
                                   _np(scripted(x, sizes, label)), rtol=1e-6)


def test_extra_files_and_map_location(torch_ref, torch_nets):
    mod, root = torch_nets
    net = torch_ref.jit.script(_net(torch_ref, mod))
    path = str(root / "extra.pt")
    torch_ref.jit.save(net, path, _extra_files={"meta.json": b'{"v": 1}'})
    extra = {"meta.json": b"", "absent.txt": b"kept"}
    loaded = ampjit.jit.load(path, map_location="cpu", _extra_files=extra)
    assert extra == {"meta.json": b'{"v": 1}', "absent.txt": b""}  # as torch: absent files read as b""
    assert loaded.head.lin.weight.device.type == "cpu"
    with pytest.raises(ValueError, match="does not exist"):
        ampjit.jit.load(str(root / "missing.pt"))
    with pytest.raises(ValueError, match="is a directory"):
        ampjit.jit.load(str(root))
    with pytest.raises(ValueError, match="map_location"):
        ampjit.jit.load(path, map_location=3)


def _rewrite(path, out, edit):
    """A copy of the archive at `path` with edit(name, bytes) -> bytes applied to each record."""
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as zout:
        for info in zin.infolist():
            zout.writestr(info.filename, edit(info.filename, zin.read(info.filename)))
    return out


def test_bad_archives(torch_ref, torch_nets, tmp_path):
    mod, root = torch_nets
    net = torch_ref.jit.script(_net(torch_ref, mod))
    good = str(tmp_path / "good.pt")
    net.save(good)
    # a torch.save file, and garbage
    torch_ref.save({"w": torch_ref.ones(2)}, str(tmp_path / "state.pt"))
    with pytest.raises(RuntimeError, match="not a TorchScript archive .a torch.save file"):
        ampjit.jit.load(str(tmp_path / "state.pt"))
    (tmp_path / "junk.pt").write_bytes(b"not a zip file at all")
    with pytest.raises(RuntimeError, match="junk.pt"):
        ampjit.jit.load(str(tmp_path / "junk.pt"))
    # a data.pkl that names os.system: refused when the global is read, nothing runs
    marker = tmp_path / "ran"
    evil = b"cos\nsystem\n(S'touch " + str(marker).encode() + b"'\ntR."
    bad = _rewrite(good, str(tmp_path / "evil.pt"), lambda n, b: evil if n.endswith("data.pkl") else b)
    with pytest.raises(RuntimeError, match="names the global 'os.system'"):
        ampjit.jit.load(bad)
    assert not marker.exists()
    # code that does not compile: the error names the record, line and column
    def break_code(n, b):
        return b.replace(b"torch.mm(", b"torch.no_such_op(") if n.endswith("code/__torch__/archive_models.py") else b
    bad = _rewrite(good, str(tmp_path / "badcode.pt"), break_code)
    loaded = ampjit.jit.load(bad)  # methods compile on first use
    with pytest.raises(ampjit.jit.CompileError, match=r"badcode.pt/code/__torch__/archive_models.py:\d+:\d+: "
                                                       r"Unknown builtin op: aten::no_such_op"):
        loaded(ampjit.zeros(1, 3, 4, 4))
    # a class whose code is missing
    bad = _rewrite(good, str(tmp_path / "nocode.pt"),
                   lambda n, b: b.replace(b"class Head(", b"class Hexd(") if n.endswith("archive_models.py") else b)
    with pytest.raises(RuntimeError, match="no code for the class __torch__.archive_models.Head"):
        ampjit.jit.load(bad)
    # a declared attribute missing from data.pkl
    bad = _rewrite(good, str(tmp_path / "noattr.pt"),
                   lambda n, b: b.replace(b"  steps : List[int]\n", b"  steps : List[int]\n  ghost : int\n")
                   if n.endswith("archive_models.py") else b)
    with pytest.raises(ampjit.jit.CompileError, match="attribute 'ghost' of __torch__.archive_models.Net is "
                                                      "declared by its class but missing from data.pkl"):
        ampjit.jit.load(bad)
    # a newer format
    bad = _rewrite(good, str(tmp_path / "newer.pt"), lambda n, b: b"99\n" if n.endswith("/version") else b)
    with pytest.raises(RuntimeError, match="archive format version 99 is not supported"):
        ampjit.jit.load(bad)


def test_fused_transformer_ops_match_torch(torch_ref):
    """torch's inference fast-path ops, which scripted nn.TransformerEncoderLayer code calls."""
    torch_ref.manual_seed(0)
    layer = torch_ref.nn.TransformerEncoderLayer(16, 4, dim_feedforward=24, batch_first=True).eval()
    x = torch_ref.randn(2, 5, 16)
    pad = torch_ref.tensor([[False] * 5, [False, False, False, True, True]])
    sa = layer.self_attn
    for norm_first in (False, True):
        for mask, mask_type in ((None, None), (pad, 1)):
            args = (x, 16, 4, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias,
                    True, norm_first, 1e-5, layer.norm1.weight, layer.norm1.bias, layer.norm2.weight,
                    layer.norm2.bias, layer.linear1.weight, layer.linear1.bias, layer.linear2.weight,
                    layer.linear2.bias, mask, mask_type)
            with torch_ref.no_grad():
                want = torch_ref.ops.aten._transformer_encoder_layer_fwd(*args)
            got = ampjit._C._call("aten::_transformer_encoder_layer_fwd",
                                  tuple(_to_ampjit(torch_ref, a.detach()) if isinstance(a, torch_ref.Tensor)
                                        else a for a in args), {})
            np.testing.assert_allclose(_np(got), _np(want), rtol=1e-4, atol=1e-5)
    with torch_ref.no_grad():
        want = torch_ref.ops.aten._native_multi_head_attention(
            x, x, x, 16, 4, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, pad,
            True, False, 1)
    got = ampjit._C._call("aten::_native_multi_head_attention", tuple(
        _to_ampjit(torch_ref, a.detach()) if isinstance(a, torch_ref.Tensor) else a for a in (
            x, x, x, 16, 4, sa.in_proj_weight, sa.in_proj_bias, sa.out_proj.weight, sa.out_proj.bias, pad,
            True, False, 1)), {})
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-4, atol=1e-5)
    with pytest.raises(RuntimeError, match="ampjit has no nested tensors"):
        ampjit._C._call("aten::_nested_tensor_from_mask", (ampjit.zeros(2, 5, 16), ampjit.ones(2, 5) > 0), {})


# ---- The zoo (tests/models/), scripted and traced by torch 1.13 ----------------------------------

ZOO = ["resnet18", "mobilenet_v2", "googlenet", "densenet121", "transformer_text", "lstm_tagger"]


@pytest.fixture(scope="module")
def zoo_archives(torch_ref, tmp_path_factory):
    sys.path.insert(0, os.path.join(HERE, "..", "models"))
    import text_models
    import torchvision
    root = tmp_path_factory.mktemp("zoo_archives")
    made = {}

    def get(name):
        if name not in made:
            torch_ref.manual_seed(0)
            if name in ("transformer_text", "lstm_tagger"):
                model = getattr(text_models, name)().eval()
                x = torch_ref.randint(0, text_models.VOCAB, (2, 12))
            else:
                kw = {"aux_logits": False, "init_weights": False} if name == "googlenet" else {}
                model = getattr(torchvision.models, name)(**kw).eval()
                x = torch_ref.randn(1, 3, 32, 32)
            s, t = str(root / (name + "_s.pt")), str(root / (name + "_t.pt"))
            torch_ref.jit.script(model).save(s)
            import warnings
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch_ref.jit.trace(model, x, check_trace=False).save(t)
            made[name] = (s, t, x)
        return made[name]
    yield get
    sys.path.remove(os.path.join(HERE, "..", "models"))


def _flat(o):
    if isinstance(o, (tuple, list)):
        return [y for e in o for y in _flat(e)]
    return [o]


@pytest.mark.parametrize("kind", ["script", "trace"])
@pytest.mark.parametrize("name", ZOO)
def test_zoo_archive_from_torch(torch_ref, zoo_archives, name, kind):
    s, t, x = zoo_archives(name)
    path = s if kind == "script" else t
    want_model = torch_ref.jit.load(path)
    loaded = ampjit.jit.load(path)
    xa = _to_ampjit(torch_ref, x)
    for grad in (True, False):  # nn.Transformer's scripted code takes its fused path without grad
        with torch_ref.set_grad_enabled(grad):
            want = _flat(want_model(x))
        with ampjit.set_grad_enabled(grad):
            got = _flat(loaded(xa))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            if w is None:
                assert g is None
                continue
            scale = float(np.abs(_np(w.detach())).max())
            np.testing.assert_allclose(_np(g), _np(w.detach()), rtol=0, atol=1e-4 * scale)


def test_ampjit_dump_reads_archives(torch_ref, torch_nets):
    """ampjit-dump prints each method of an archive's module, before and after the passes."""
    import subprocess
    tool = os.path.join(os.path.dirname(ampjit.__file__), "..", "..", "tools", "ampjit-dump")
    if not os.path.exists(tool):
        pytest.skip("ampjit-dump is not built beside this package")
    mod, root = torch_nets
    path = str(root / "dumped.pt")
    torch_ref.jit.script(_net(torch_ref, mod)).save(path)
    done = subprocess.run([tool, path, "--passes", "all", "--eager-autocast", "cpu=bfloat16"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    headers = [line for line in done.stdout.splitlines() if line.startswith("# ")]
    assert headers == ["# forward: as built", "# after inline, constprop, autocast, cse, dce "
                       "(eager autocast cpu=bfloat16)", "# features: as built",
                       "# after inline, constprop, autocast, cse, dce (eager autocast cpu=bfloat16)"]
    assert "aten::_autocast_to_reduced_precision" in done.stdout
    assert "dumped.pt/code/__torch__/archive_models.py:" in done.stdout  # source locations
    done = subprocess.run([tool, path, "--function", "nope"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "the module in '{}' has no method 'nope'; its methods are: forward, features".format(path) in done.stderr


# ---- torch.jit.save: ampjit's archives, loaded by torch 1.13 and by ampjit ------------------------

@pytest.fixture(scope="module")
def ampjit_nets(tmp_path_factory):
    """MODULE_SOURCE imported with ampjit as torch."""
    root = tmp_path_factory.mktemp("jit_save")
    path = root / "archive_models_a.py"
    path.write_text(MODULE_SOURCE.replace("import torch\n", "import ampjit as torch\n", 1))
    spec = importlib.util.spec_from_file_location("archive_models_a", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["archive_models_a"] = mod
    spec.loader.exec_module(mod)
    yield mod, root
    del sys.modules["archive_models_a"]


def _ampjit_net(mod, offset=3):
    ampjit.manual_seed(0)
    net = mod.Net(offset).eval()
    net.bn.running_mean.copy_(ampjit.tensor([-0.5, -0.2, 0.1, 0.4]))
    net.bn.running_var.copy_(ampjit.tensor([0.5, 0.8, 1.1, 1.4]))
    return net


def test_saved_module_loads_in_torch_and_ampjit(torch_ref, ampjit_nets):
    mod, root = ampjit_nets
    scripted = ampjit.jit.script(_ampjit_net(mod))
    path = str(root / "a_net.pt")
    scripted.save(path, _extra_files={"note.txt": "saved by ampjit"})
    x = ampjit.randn(2, 3, 5, 5)
    want = scripted(x, 3)
    extra = {"note.txt": b""}
    theirs = torch_ref.jit.load(path, _extra_files=extra)
    assert extra["note.txt"] == b"saved by ampjit"
    ours = ampjit.jit.load(path)
    tx = torch_ref.from_numpy(x.numpy())
    for got in (theirs(tx, 3), ours(x, 3)):
        assert [str(t.dtype) for t in got] == ["torch.float32", "torch.bfloat16"]
        np.testing.assert_allclose(_np(got[0]), _np(want[0]), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(_np(got[1]), _np(want[1]), rtol=2e-2, atol=2e-2 * float(np.abs(_np(want[1])).max()))
    # defaults, named methods, attributes, parameters and buffers survive both ways
    np.testing.assert_allclose(_np(theirs(tx)[0]), _np(scripted(x)[0]), rtol=1e-5, atol=1e-5)
    assert theirs.offset == 3 and theirs.steps == [1, 2] and theirs.weights == {"a": 0.5, "b": -1.0}
    assert ours.name == "net" and [n for n, _ in ours.named_parameters()] == [n for n, _ in scripted.named_parameters()]
    for n, p in theirs.named_buffers():
        np.testing.assert_array_equal(_np(p), _np(dict(scripted.named_buffers())[n]))
    # under eager autocast, torch runs the saved code as ampjit runs its own
    with torch_ref.cpu.amp.autocast():
        tz, _ = theirs(tx)
    with ampjit.cpu.amp.autocast():
        az, _ = scripted(x)
    assert str(tz.dtype) == str(az.dtype)
    np.testing.assert_allclose(_np(tz), _np(az), rtol=5e-2, atol=5e-2 * float(np.abs(_np(az)).max()))
    # a file object, and the archive's layout
    buf = io.BytesIO()
    ampjit.jit.save(scripted, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        names = z.namelist()
    for must in ("archive/data.pkl", "archive/constants.pkl", "archive/version",
                 "archive/code/__torch__/archive_models_a.py", "archive/code/__torch__/torch/cpu/amp/autocast_mode.py"):
        assert must in names, names
    np.testing.assert_allclose(_np(torch_ref.jit.load(io.BytesIO(buf.getvalue()))(tx, 3)[0]), _np(want[0]),
                               rtol=1e-5, atol=1e-5)


def test_saving_errors(ampjit_nets):
    mod, root = ampjit_nets
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'save'"):
        ampjit.jit.save(_ampjit_net(mod), str(root / "x.pt"))
    frozen = ampjit.jit.freeze(ampjit.jit.script(_ampjit_net(mod)))
    with pytest.raises(RuntimeError, match="frozen module is not supported"):
        ampjit.jit.save(frozen, str(root / "x.pt"))


def test_loaded_archive_saves_again(torch_ref, zoo_archives, tmp_path):
    """torch 1.13's archive, loaded by ampjit and saved again, loads in torch with its outputs."""
    s, t, x = zoo_archives("resnet18")
    for path in (s, t):
        loaded = ampjit.jit.load(path)
        again = str(tmp_path / "again.pt")
        loaded.save(again)
        want = torch_ref.jit.load(path)(x)
        got = torch_ref.jit.load(again)(x)
        np.testing.assert_allclose(_np(got.detach()), _np(want.detach()), rtol=0,
                                   atol=1e-5 * float(np.abs(_np(want.detach())).max()))


@pytest.mark.parametrize("kind", ["script", "trace"])
@pytest.mark.parametrize("name", ZOO)
def test_zoo_archive_from_ampjit(torch_ref, tmp_path, name, kind):
    """The zoo model built with ampjit, scripted or traced, saved by ampjit: torch 1.13 and ampjit
    load it and give the model's outputs."""
    sys.path.insert(0, os.path.join(HERE, "..", "models"))
    try:
        import harness
        model, hw = harness._build("ampjit", name)
    finally:
        sys.path.remove(os.path.join(HERE, "..", "models"))
    if name in ("transformer_text", "lstm_tagger"):
        x = ampjit.tensor(np.random.RandomState(0).randint(0, 100, (2, 12)).tolist())
    else:
        ampjit.manual_seed(0)
        x = ampjit.randn(1, 3, hw, hw)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = ampjit.jit.script(model) if kind == "script" else ampjit.jit.trace(model, x)
        path = str(tmp_path / "model.pt")
        compiled.save(path)
        want = _flat(compiled(x))
        ours = _flat(ampjit.jit.load(path)(x))
        theirs = _flat(torch_ref.jit.load(path)(torch_ref.from_numpy(x.numpy())))
    assert len(want) == len(ours) == len(theirs)
    for w, a, t in zip(want, ours, theirs):
        if w is None:
            assert a is None and t is None
            continue
        scale = float(np.abs(_np(w)).max())
        np.testing.assert_array_equal(_np(a), _np(w))
        np.testing.assert_allclose(_np(t.detach()), _np(w), rtol=0, atol=1e-4 * scale)


def test_saved_function_loads_in_torch_and_ampjit(torch_ref, tmp_path):
    """A scripted function saves as torch saves one: the forward of a PlaceholderModule."""
    src = tmp_path / "saved_fn.py"
    src.write_text(textwrap.dedent('''
        import ampjit as torch
        from typing import List

        def helper(x: torch.Tensor, n: int) -> torch.Tensor:
            return x * n

        def fn(x: torch.Tensor, sizes: List[int], k: int = 2) -> torch.Tensor:
            total = 0
            for s in sizes:
                total += s
            return helper(x, k) + total
    '''))
    spec = importlib.util.spec_from_file_location("saved_fn", src)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    scripted = ampjit.jit.script(m.fn)
    path = str(tmp_path / "fn.pt")
    scripted.save(path)
    x = ampjit.arange(4, dtype=ampjit.float32)
    want = scripted(x, [1, 2], 3)
    theirs = torch_ref.jit.load(path)
    assert theirs.original_name == "PlaceholderModule"
    np.testing.assert_array_equal(_np(theirs(torch_ref.from_numpy(x.numpy()), [1, 2], 3)), _np(want))
    np.testing.assert_array_equal(_np(theirs(torch_ref.from_numpy(x.numpy()), [1, 2])), _np(scripted(x, [1, 2])))
    np.testing.assert_array_equal(_np(ampjit.jit.load(path)(x, [1, 2], 3)), _np(want))


def test_ops_and_forms_of_zoo_archives(torch_ref, program_modules):
    """What vit/shufflenet traces and swin/maxvit scripts need: floor_divide (rounding down, as torch
    1.13's), and annotate of a list literal to a list of Optionals."""
    a = np.array([-7.5, -7.0, 7.0, 7.5], dtype=np.float32)
    for other in (2, -2.0):
        want = torch_ref.floor_divide(torch_ref.from_numpy(a), other)
        got = ampjit._C._call("aten::floor_divide", (ampjit.from_numpy(a), other), {})
        np.testing.assert_array_equal(_np(got), _np(want))
    ints = np.array([-7, 7, 9], dtype=np.int64)
    want = torch_ref.floor_divide(torch_ref.from_numpy(ints), torch_ref.tensor([2, -2, 4]))
    got = ampjit._C._call("aten::floor_divide", (ampjit.from_numpy(ints), ampjit.tensor([2, -2, 4])), {})
    np.testing.assert_array_equal(_np(got), _np(want))
    src = textwrap.dedent('''
        import ampjit
        from typing import List, Optional

        @ampjit.jit.script
        def pick(a: ampjit.Tensor, b: ampjit.Tensor) -> int:
            xs = ampjit.jit.annotate(List[Optional[ampjit.Tensor]], [a, None, b])
            n = 0
            for x in xs:
                if x is not None:
                    n += 1
            return n
    ''')
    for m, lib in program_modules("annotate_list", src):
        assert m.pick(lib.ones(1), lib.ones(1)) == 2
