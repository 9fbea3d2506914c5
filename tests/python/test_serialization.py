"""torch.save / torch.load (Note [Saving and loading] in frontend/ampjit/serialization.py): torch's zip
format both ways (ampjit -> ampjit, torch 1.13 -> ampjit, ampjit -> torch 1.13) for every dtype, 0-dim,
empty, non-contiguous and storage-sharing tensors, nested containers, state dicts and Parameters;
and a loader that refuses every global it does not know, runs nothing and checks every reference."""
import collections
import io
import os
import pickle
import zipfile

import numpy as np
import pytest

import ampjit

DTYPES = ["float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"]


def _values(lib, t):
    return np.asarray(t.float().tolist()) if t.dtype in (lib.bfloat16, lib.float16) else np.asarray(t.tolist())


def _sample(lib):
    """The same object graph in ampjit or torch: every dtype, odd layouts, shared storage."""
    base = lib.arange(24, dtype=lib.float32).reshape(2, 3, 4)
    obj = collections.OrderedDict()
    for name in DTYPES:
        dt = getattr(lib, name)
        obj[name] = ((lib.arange(6) % 3 == 1) if name == "bool" else (lib.arange(6) * 3 - 5).to(dt)).reshape(2, 3)
    obj["scalar"] = lib.tensor(2.5)
    obj["empty"] = lib.zeros(0, 3)
    obj["transposed"] = base.transpose(0, 2)
    obj["view"] = base[1]
    obj["base"] = base
    obj["nested"] = {"list": [base[0, 1], 3, 2.5, "text", None, True], "tuple": (lib.ones(2), -7)}
    obj["dtype"] = lib.float16
    obj["device"] = lib.device("cpu")
    obj["size"] = base.shape
    return obj


def _check_sample(lib, got):
    assert list(got.keys())[:len(DTYPES)] == DTYPES
    for name in DTYPES:
        t = got[name]
        assert t.dtype is getattr(lib, name) and tuple(t.shape) == (2, 3)
        want = (np.arange(6) % 3 == 1) if name == "bool" else (np.arange(6) * 3 - 5)
        if name == "uint8":
            want = want.astype(np.uint8)
        np.testing.assert_array_equal(_values(lib, t).ravel(), want.astype(_values(lib, t).dtype))
    assert got["scalar"].dim() == 0 and got["scalar"].item() == 2.5
    assert tuple(got["empty"].shape) == (0, 3)
    base = got["base"]
    assert tuple(got["transposed"].stride()) == (1, 4, 12) and got["transposed"].equal(base.transpose(0, 2))
    assert got["view"].storage_offset() == 12
    assert got["nested"]["list"][1:] == [3, 2.5, "text", None, True]
    assert got["nested"]["tuple"][1] == -7 and got["nested"]["tuple"][0].tolist() == [1.0, 1.0]
    assert got["dtype"] is lib.float16 and str(got["device"]) == "cpu"
    assert tuple(got["size"]) == (2, 3, 4) and type(got["size"]) is type(lib.ones(1).shape)
    # the views share the base's storage again: a write through one shows in the others
    base[1, 0, 0] = 100.0
    assert got["view"][0, 0].item() == 100.0 and got["transposed"][0, 0, 1].item() == 100.0
    assert got["nested"]["list"][0].tolist() == [4.0, 5.0, 6.0, 7.0]


def test_round_trip_through_a_file_and_bytes(tmp_path):
    path = tmp_path / "sample.pt"
    ampjit.save(_sample(ampjit), path)
    _check_sample(ampjit, ampjit.load(path))
    buf = io.BytesIO()
    ampjit.save(_sample(ampjit), buf)
    buf.seek(0)
    _check_sample(ampjit, ampjit.load(buf))
    names = zipfile.ZipFile(path).namelist()
    assert names[0] == "sample/data.pkl" and "sample/version" in names
    assert len([n for n in names if n.startswith("sample/data/")]) == len(DTYPES) + 4  # base's views share one


def test_torch_files_load_in_ampjit(torch_ref, tmp_path):
    path = tmp_path / "from_torch.pt"
    torch_ref.save(_sample(torch_ref), path)
    _check_sample(ampjit, ampjit.load(path))


def test_ampjit_files_load_in_torch(torch_ref, tmp_path):
    path = tmp_path / "from_ampjit.pt"
    ampjit.save(_sample(ampjit), path)
    _check_sample(torch_ref, torch_ref.load(path))
    # torch's own safe loader accepts ampjit's tensors (its 1.13 version knows no float opcode, so
    # the sample's 2.5 stays out)
    ampjit.save({"x": ampjit.arange(4.0)[1:], "y": [ampjit.ones(2, dtype=ampjit.bfloat16), 3]}, path)
    got = torch_ref.load(path, weights_only=True)
    assert got["x"].tolist() == [1.0, 2.0, 3.0] and got["y"][0].dtype is torch_ref.bfloat16


def test_state_dicts_and_parameters_both_ways(torch_ref, tmp_path):
    torch_ref.manual_seed(0)
    tm = torch_ref.nn.Sequential(torch_ref.nn.Conv2d(3, 4, 3), torch_ref.nn.BatchNorm2d(4), torch_ref.nn.Linear(2, 2))
    torch_ref.save(tm.state_dict(), tmp_path / "sd.pt")
    sd = ampjit.load(tmp_path / "sd.pt")
    assert type(sd) is collections.OrderedDict and list(sd) == list(tm.state_dict())
    assert sd._metadata[""] == {"version": 1} and sd._metadata["1"]["version"] == 2
    am = ampjit.nn.Sequential(ampjit.nn.Conv2d(3, 4, 3), ampjit.nn.BatchNorm2d(4), ampjit.nn.Linear(2, 2))
    am.load_state_dict(sd)
    np.testing.assert_array_equal(am[0].weight.detach().numpy(), tm[0].weight.detach().numpy())
    assert am[1].num_batches_tracked.dtype is ampjit.int64

    ampjit.save({"p": ampjit.nn.Parameter(ampjit.ones(3)), "sd": am.state_dict()}, tmp_path / "a.pt")
    back = torch_ref.load(tmp_path / "a.pt")
    assert isinstance(back["p"], torch_ref.nn.Parameter) and back["p"].requires_grad
    tm.load_state_dict(back["sd"])
    loaded = ampjit.load(tmp_path / "a.pt")
    assert isinstance(loaded["p"], ampjit.nn.Parameter) and loaded["p"].requires_grad


def test_map_location(tmp_path):
    ampjit.save({"x": ampjit.ones(2)}, tmp_path / "m.pt")
    assert ampjit.load(tmp_path / "m.pt", map_location="cpu")["x"].tolist() == [1.0, 1.0]
    assert ampjit.load(tmp_path / "m.pt", map_location={"cpu": "cpu"})["x"].tolist() == [1.0, 1.0]
    seen = []
    ampjit.load(tmp_path / "m.pt", map_location=lambda storage, loc: seen.append(loc))
    assert seen == ["cpu"]


# --- hostile and corrupt files ------------------------------------------------------------------

def _archive(tmp_path, data_pkl, records=(), name="evil"):
    path = tmp_path / (name + ".pt")
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(name + "/data.pkl", data_pkl)
        for rec, data in records:
            z.writestr(name + "/" + rec, data)
        z.writestr(name + "/version", "3\n")
    return path


class _RunsCommand:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (os.system, ("touch " + str(self.target),))


class _WritesFile:
    def __init__(self, target):
        self.target = target

    def __reduce__(self):
        return (eval, ("open({!r}, 'w').write('pwned')".format(str(self.target)),))


@pytest.mark.parametrize("payload,global_name", [(_RunsCommand, "posix.system"), (_WritesFile, "__builtin__.eval")])
def test_a_pickle_that_would_run_code_is_refused_and_runs_nothing(tmp_path, payload, global_name):
    target = tmp_path / "created_by_the_file"
    path = _archive(tmp_path, pickle.dumps({"x": payload(target)}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="names the global '{}'".format(global_name.replace(".", r"\."))):
        ampjit.load(path)
    assert not target.exists()


def test_user_classes_and_foreign_state_are_refused(tmp_path):
    path = _archive(tmp_path, pickle.dumps(collections.Counter(a=1), protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="'collections.Counter'"):
        ampjit.load(path)
    # BUILD on anything but an OrderedDict: a dtype given attributes
    evil = b"\x80\x02ctorch\nfloat32\n}X\x01\x00\x00\x00aK\x01sb."
    with pytest.raises(pickle.UnpicklingError, match="sets the state of a dtype object"):
        ampjit.load(_archive(tmp_path, evil, name="build"))
    assert not hasattr(ampjit.float32, "a")


def _tensor_pickle(numel, offset=0, size=(2,), stride=(1,), key="0", storage="FloatStorage"):
    """torch's pickle of one tensor, written opcode by opcode (so each field can be made wrong)."""
    body = io.BytesIO()
    body.write(b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(")
    body.write(b"(X\x07\x00\x00\x00storagectorch\n" + storage.encode() + b"\n")
    key_b = key.encode()
    body.write(b"X" + len(key_b).to_bytes(4, "little") + key_b + b"X\x03\x00\x00\x00cpu")
    body.write(b"J" + numel.to_bytes(4, "little", signed=True) + b"tQ")
    body.write(b"J" + offset.to_bytes(4, "little", signed=True))
    body.write(b"(" + b"".join(b"J" + s.to_bytes(4, "little", signed=True) for s in size) + b"t")
    body.write(b"(" + b"".join(b"J" + s.to_bytes(4, "little", signed=True) for s in stride) + b"t")
    body.write(b"\x89ccollections\nOrderedDict\n)RtR.")
    return body.getvalue()


def test_the_hand_written_tensor_pickle_is_torchs(torch_ref, tmp_path):
    path = _archive(tmp_path, _tensor_pickle(2), [("data/0", np.array([1.5, 2.5], np.float32).tobytes())])
    assert ampjit.load(path).tolist() == [1.5, 2.5] == torch_ref.load(path).tolist()


@pytest.mark.parametrize("kwargs,records,message", [
    (dict(numel=4), [("data/0", b"\0" * 8)],
     "declares 4 elements of torch.float32 \\(16 bytes\\) but its record holds 8"),
    (dict(numel=2, key="7"), [("data/0", b"\0" * 8)], "refers to the storage 'data/7', which the archive lacks"),
    (dict(numel=2, offset=1, size=(2,)), [("data/0", b"\0" * 8)], "reaches past its storage of 2 elements"),
    (dict(numel=2, size=(2, 2), stride=(2, 1)), [("data/0", b"\0" * 8)], "reaches past its storage"),
    (dict(numel=2, size=(-1,)), [("data/0", b"\0" * 8)], "size -1"),
    (dict(numel=2 ** 30), [("data/0", b"\0" * 8)], "declares 1073741824 elements"),
    (dict(numel=2, storage="Evil"), [("data/0", b"\0" * 8)], "'torch.Evil'"),
])
def test_bad_storage_references_get_clear_errors(tmp_path, kwargs, records, message):
    path = _archive(tmp_path, _tensor_pickle(**kwargs), records)
    with pytest.raises((pickle.UnpicklingError, RuntimeError), match=message):
        ampjit.load(path)


def test_corrupt_and_foreign_files_get_clear_errors(tmp_path):
    good = io.BytesIO()
    ampjit.save({"x": ampjit.ones(1000)}, good)
    data = good.getvalue()
    for cut in (len(data) // 2, len(data) - 10, 30):
        with pytest.raises(RuntimeError, match="zip archive|truncated|corrupt"):
            ampjit.load(io.BytesIO(data[:cut]))
    with pytest.raises(RuntimeError, match="not a zip archive"):
        ampjit.load(io.BytesIO(b"\x80\x02}q\x00."))  # the legacy format starts with a pickle
    with pytest.raises(RuntimeError, match="not a zip archive"):
        ampjit.load(io.BytesIO(b""))
    # a truncated pickle inside a valid archive
    with pytest.raises(pickle.UnpicklingError, match="corrupt pickle"):
        ampjit.load(_archive(tmp_path, b"\x80\x02(K\x01", name="trunc"))
    # a TorchScript archive belongs to torch.jit.load
    path = tmp_path / "ts.pt"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("ts/data.pkl", b"\x80\x02N.")
        z.writestr("ts/constants.pkl", b"\x80\x02).")
    with pytest.raises(RuntimeError, match="TorchScript archive; load it with torch.jit.load"):
        ampjit.load(path)


def test_a_zip_bomb_is_refused(tmp_path):
    # Note [Zip archives]: a record may expand at most 1024 times its compressed size.
    path = tmp_path / "bomb.pt"
    numel = 2 ** 24  # 64 MiB of float32 zeros, which bzip2 stores in a few hundred bytes
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("bomb/data.pkl", _tensor_pickle(numel, size=(numel,)))
        z.writestr("bomb/data/0", b"\0" * (numel * 4), compress_type=zipfile.ZIP_BZIP2)
        z.writestr("bomb/version", "3\n")
    assert os.path.getsize(path) < 2 ** 16
    with pytest.raises(RuntimeError, match="zip bomb"):
        ampjit.load(path)


# --- the C++ restricted unpickler (Note [Restricted unpickler] in serialization/unpickler.h) -----

def _plain(x):
    """Python values as the C++ unpickler gives them: dicts for OrderedDicts, tuples for Sizes,
    tensors as (dtype, shape, stride, offset, values, requires_grad)."""
    if isinstance(x, ampjit.Tensor):
        return (str(x.dtype), tuple(x.shape), tuple(x.stride()), x.storage_offset(),
                x.float().tolist() if x.dtype is ampjit.bfloat16 else x.tolist(), x.requires_grad)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x) if type(x) in (list, tuple) else tuple(_plain(v) for v in x)
    return x


def _cpp_load(data):
    archive = ampjit._C._ZipReader(data)
    return ampjit._C._unpickle(archive.read("data.pkl"), archive)


@pytest.mark.parametrize("writer", ["ampjit", "torch"])
def test_the_cpp_unpickler_reads_what_the_python_loader_reads(torch_ref, writer):
    lib = ampjit if writer == "ampjit" else torch_ref
    obj = _sample(lib)
    obj["param"] = lib.nn.Parameter(lib.ones(2))
    obj["state_dict"] = lib.nn.Linear(2, 3).state_dict()
    buf = io.BytesIO()
    lib.save(obj, buf)
    want = ampjit.load(io.BytesIO(buf.getvalue()))
    got = _cpp_load(buf.getvalue())
    assert list(got) == list(want)
    assert _plain(got) == _plain(want)
    # shared storage survives: base and its views are one storage again
    got["base"][1, 0, 0] = -1.0
    assert got["view"][0, 0].item() == -1.0


def _cpp_error(pickled):
    with pytest.raises(RuntimeError) as e:
        ampjit._C._unpickle(pickled)
    return str(e.value)


def test_the_cpp_unpickler_refuses_code_and_bounds_hostile_input(tmp_path):
    target = tmp_path / "created"
    assert "names the global 'posix.system'" in _cpp_error(pickle.dumps(_RunsCommand(target), protocol=2))
    assert "names the global '__builtin__.eval'" in _cpp_error(pickle.dumps(_WritesFile(target), protocol=2))
    assert not target.exists()
    assert "'collections.Counter'" in _cpp_error(pickle.dumps(collections.Counter(a=1), protocol=2))
    assert "BUILD sets the state of 'torch.float32'" in _cpp_error(b"\x80\x02ctorch\nfloat32\n}b.")
    # a list inside itself, and a list changed after it was put in another container
    assert "inside itself" in _cpp_error(b"\x80\x02]q\x00h\x00a.")
    assert "after putting it in another one" in _cpp_error(b"\x80\x02]q\x00]q\x01ah\x01K\x01a.")
    deep = b"\x80\x02" + b"]" * 1001 + b"a" * 1000 + b"."
    assert "nest more than 1000 deep" in _cpp_error(deep)
    ok = b"\x80\x02" + b"]" * 999 + b"a" * 998 + b"."
    assert isinstance(ampjit._C._unpickle(ok), list)
    assert "larger than the pickle" in _cpp_error(b"\x80\x02Nr\xff\xff\xff\x7f.")
    assert "never wrote" in _cpp_error(b"\x80\x02h\x05.")
    # MEMOIZE's index is the memo's size, as Python's, also after a sparse LONG_BINPUT
    sparse = b"\x80\x04(Nr\x05\x00\x00\x00K\x07\x94h\x01t."
    assert ampjit._C._unpickle(sparse) == pickle.loads(sparse) == (None, 7, 7)
    assert "truncated" in _cpp_error(b"\x80\x02X\xff\xff\xff\x7fabc")
    assert "wider than 64 bits" in _cpp_error(b"\x80\x02\x8a\x09" + b"\x01" * 9 + b".")
    assert "'torch.float32' cannot be called" in _cpp_error(b"\x80\x02ctorch\nfloat32\n)R.")
    assert "opcode 0x49" in _cpp_error(b"\x80\x02I12\n.")  # protocol-0 INT: not one torch writes
    assert "references a storage, and none is given" in _cpp_error(_tensor_pickle(2))
    assert ampjit._C._unpickle(b"\x80\x02\x8a\x08" + (2 ** 63 - 1).to_bytes(8, "little") + b".") == 2 ** 63 - 1
    assert ampjit._C._unpickle(b"\x80\x02\x8a\x08" + (-2 ** 63).to_bytes(8, "little", signed=True) + b".") == -2 ** 63
    assert ampjit._C._unpickle(b"\x80\x02\x8a\x01\xff.") == -1


@pytest.mark.parametrize("kwargs,records,message", [
    (dict(numel=4), [("data/0", b"\0" * 8)], "declares 4 elements of float32 \\(16 bytes\\) but its record holds 8"),
    (dict(numel=2, key="7"), [("data/0", b"\0" * 8)], "refers to the storage 'data/7', which it lacks"),
    (dict(numel=2, offset=1, size=(2,)), [("data/0", b"\0" * 8)], "reaches past its storage of 2 elements"),
    (dict(numel=2, storage="Evil"), [("data/0", b"\0" * 8)], "'torch.Evil'"),
])
def test_the_cpp_unpickler_checks_storage_references(tmp_path, kwargs, records, message):
    data = _archive(tmp_path, _tensor_pickle(**kwargs), records).read_bytes()
    with pytest.raises(RuntimeError, match=message):
        _cpp_load(data)
