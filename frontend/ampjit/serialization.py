"""torch.save and torch.load: torch's zip archive format, in and out, with a loader that runs nothing.

Note [Saving and loading]
``save`` writes what torch 1.13's ``torch.save`` writes (Note [Zip archives] in
serialization/zip_archive.h): a zip of ``<stem>/data.pkl`` (a protocol-2 pickle of the object),
``<stem>/data/<key>`` (each storage's raw bytes, once: Note [Saved storages] in
serialization_bindings.cpp) and ``<stem>/version``. A tensor pickles as torch's does, as a call of
``torch._utils._rebuild_tensor_v2`` on a persistent storage reference
``('storage', torch.<Type>Storage, key, location, numel)``; a Parameter as
``torch._utils._rebuild_parameter``; dtypes, devices and Sizes as torch's globals. So torch 1.13
loads ampjit's files, and ampjit loads torch's.

``load`` reads the pickle with a restricted unpickler: ``find_class`` knows only the globals torch's
archives of tensors and containers use (the rebuild functions, the storage types, dtypes,
``torch.device``, ``torch.Size``, ``collections.OrderedDict``) and maps each to ampjit's own
function or class; any other global (``os.system``, ``builtins.eval``, a user's class) is refused
with an error naming it, before anything runs. Storage references are checked against the archive
(the record exists and holds exactly ``numel`` elements) and every tensor view against its storage,
so a hostile or corrupt file gets an error, not a crash, an unbounded allocation or a read outside
its data. Saving a user's class is possible (it pickles by reference, as with torch) but loading it
is refused, as torch's ``weights_only=True`` does.
"""
import collections
import io
import os
import pickle

from . import _C

DEFAULT_PROTOCOL = 2
_VERSION = b"3\n"

# torch's storage type names, by dtype name.
_STORAGE_TYPES = {
    "float64": "DoubleStorage", "float32": "FloatStorage", "float16": "HalfStorage",
    "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
    "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage", "bool": "BoolStorage",
}


def _dtype(name):
    import ampjit
    return getattr(ampjit, name)


class _Global:
    """A name the pickle writes as a GLOBAL opcode (torch's function or class, not imported here).
    One object per name, so that the pickler's memo writes each name once, as torch's does."""

    _all = {}

    def __new__(cls, module, name):
        key = (module, name)
        if key not in cls._all:
            g = super().__new__(cls)
            g.module, g.name = module, name
            cls._all[key] = g
        return cls._all[key]

    def __call__(self, *args):
        raise TypeError("{}.{} is a name in a pickle, not a function".format(self.module, self.name))


class _StorageRef:
    """A tensor's storage, pickled as torch's persistent storage reference."""

    def __init__(self, tensor):
        self.tensor = tensor


class _Pickler(pickle._Pickler):
    """The pure-Python pickler (its save_global can write names ampjit does not import), with torch's
    reductions for tensors, Parameters, dtypes, devices and Sizes."""

    def __init__(self, f, protocol):
        super().__init__(f, protocol)
        self.storages = {}  # storage key -> (record key, tensor)

    def persistent_id(self, obj):
        if not isinstance(obj, _StorageRef):
            return None
        t = obj.tensor
        sk = _C._storage_key(t)
        if sk not in self.storages:
            self.storages[sk] = (str(len(self.storages)), t)
        key = self.storages[sk][0]
        location = str(t.device)
        return ("storage", _Global("torch", _STORAGE_TYPES[str(t.dtype)[len("torch."):]]), key,
                location, _C._storage_numel(t))

    def reducer_override(self, obj):
        import ampjit
        from .nn.parameter import Parameter
        if isinstance(obj, Parameter):
            return (_Global("torch._utils", "_rebuild_parameter"),
                    (obj.detach(), obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, ampjit.Tensor):
            name = str(obj.dtype)[len("torch."):]
            if name not in _STORAGE_TYPES:
                raise pickle.PicklingError("ampjit.save: cannot save a tensor of dtype " + str(obj.dtype))
            return (_Global("torch._utils", "_rebuild_tensor_v2"),
                    (_StorageRef(obj), obj.storage_offset(), tuple(obj.shape), tuple(obj.stride()),
                     obj.requires_grad, collections.OrderedDict()))
        if isinstance(obj, ampjit.Size):
            return (_Global("torch", "Size"), (tuple(obj),))
        if isinstance(obj, ampjit.device):
            return (_Global("torch", "device"), (str(obj),))
        return NotImplemented

    def save_torch_global(self, obj):
        import ampjit
        g = _Global("torch", str(obj)[len("torch."):]) if isinstance(obj, ampjit.dtype) else obj
        self.write(pickle.GLOBAL + "{}\n{}\n".format(g.module, g.name).encode("utf-8"))
        self.memoize(obj)

    dispatch = dict(pickle._Pickler.dispatch)
    dispatch[_Global] = save_torch_global
    dispatch[_C.dtype] = save_torch_global


def _stem(f):
    if isinstance(f, (str, os.PathLike)):
        stem = os.path.splitext(os.path.basename(os.fspath(f)))[0]
        if stem and all(c.isalnum() or c in "_-." for c in stem):
            return stem
    return "archive"


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL, _use_new_zipfile_serialization=True):
    """torch.save(obj, f): writes obj to a path or a binary file object in torch's zip format
    (Note [Saving and loading])."""
    if not _use_new_zipfile_serialization:
        raise RuntimeError("ampjit.save writes torch's zip format only (_use_new_zipfile_serialization=True)")
    if pickle_protocol < 2:
        raise ValueError("ampjit.save: pickle_protocol must be at least 2 (torch's default)")
    buf = io.BytesIO()
    pickler = _Pickler(buf, pickle_protocol)
    pickler.dump(obj)
    records = [("data.pkl", buf.getvalue())]
    for key, t in sorted(pickler.storages.values(), key=lambda kv: int(kv[0])):
        records.append(("data/" + key, t))  # written from the tensor's own memory
    records.append(("version", _VERSION))
    if isinstance(f, (str, os.PathLike)):
        _C._zip_write(_stem(f), records, os.fspath(f))
    else:
        f.write(_C._zip_write(_stem(f), records))


# --- loading -------------------------------------------------------------------------------------

class _StorageType:
    """torch.<Type>Storage as the loader knows it: only its dtype."""

    __slots__ = ("name", "dtype_name")

    def __init__(self, name, dtype_name):
        self.name, self.dtype_name = name, dtype_name


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False, backward_hooks=None,
                       metadata=None):
    if not isinstance(storage, _C.Tensor):
        raise pickle.UnpicklingError("ampjit.load: a tensor's storage is not a saved storage")
    t = _C._rebuild_tensor(storage, int(storage_offset), tuple(size), tuple(stride))
    t.requires_grad = bool(requires_grad)
    return t


def _rebuild_parameter(data, requires_grad, backward_hooks=None):
    from .nn.parameter import Parameter
    if not isinstance(data, _C.Tensor):
        raise pickle.UnpicklingError("ampjit.load: a parameter's data is not a tensor")
    return Parameter(data, bool(requires_grad))


def _size(dims=()):
    import ampjit
    return ampjit.Size(dims)


def _device(*args):
    import ampjit
    return ampjit.device(*args)


def _allowed_globals():
    table = {
        ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
        ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
        ("collections", "OrderedDict"): collections.OrderedDict,
        ("torch", "Size"): _size,
        ("torch", "device"): _device,
    }
    for dtype_name, storage in _STORAGE_TYPES.items():
        table[("torch", storage)] = _StorageType(storage, dtype_name)
        table[("torch", dtype_name)] = _dtype(dtype_name)
    for alias, dtype_name in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                              ("long", "int64"), ("int", "int32"), ("short", "int16")):
        table[("torch", alias)] = _dtype(dtype_name)
    return table


class _Unpickler(pickle._Unpickler):
    """The pure-Python unpickler with every name lookup (find_class), storage reference
    (persistent_load) and state update (BUILD) restricted to what torch's archives hold."""

    def __init__(self, data, archive, map_location, what):
        super().__init__(io.BytesIO(data))
        self.archive, self.map_location, self.what = archive, map_location, what
        self.allowed = _allowed_globals()
        self.storages = {}

    def find_class(self, module, name):
        found = self.allowed.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(
                "ampjit.load: {} names the global '{}.{}', which ampjit does not load: only tensors, "
                "storages, dtypes, devices, Sizes and OrderedDicts are read from a pickle, and nothing "
                "it names is imported or run".format(self.what, module, name))
        return found

    def load_build(self):
        # torch's state_dict is an OrderedDict with a `_metadata` attribute, set by BUILD; nothing
        # else in its archives has state, so nothing else may be given one.
        state = self.stack.pop()
        inst = self.stack[-1]
        if type(inst) is not collections.OrderedDict or type(state) is not dict \
                or not all(type(k) is str for k in state):
            raise pickle.UnpicklingError("ampjit.load: {} sets the state of a {} object, which ampjit refuses"
                                         .format(self.what, type(inst).__name__))
        inst.__dict__.update(state)

    dispatch = dict(pickle._Unpickler.dispatch)
    dispatch[pickle.BUILD[0]] = load_build

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError("ampjit.load: {} has a persistent reference that is not a storage: {!r}"
                                         .format(self.what, pid if isinstance(pid, (tuple, str)) else type(pid)))
        _, stype, key, location, numel = pid
        if not isinstance(stype, _StorageType) or not isinstance(key, str) or not isinstance(location, str) \
                or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError("ampjit.load: {} has a malformed storage reference".format(self.what))
        if key in self.storages:
            return self.storages[key]
        dtype = _dtype(stype.dtype_name)
        record = "data/" + key
        if not self.archive.has(record):
            raise pickle.UnpicklingError("ampjit.load: {} refers to the storage '{}', which the archive lacks"
                                         .format(self.what, record))
        import ampjit
        itemsize = ampjit.empty(0, dtype=dtype).element_size()
        nbytes = numel * itemsize
        have = self.archive.size(record)
        if have != nbytes:
            raise pickle.UnpicklingError(
                "ampjit.load: {}: storage '{}' declares {} elements of {} ({} bytes) but its record holds {} bytes"
                .format(self.what, record, numel, dtype, nbytes, have))
        t = _C._load_storage(self.archive, record, dtype, numel)  # read straight into the tensor
        t = _map_storage(t, location, self.map_location)
        self.storages[key] = t
        return t


def _map_storage(t, location, map_location):
    import ampjit
    if map_location is None:
        target = location
    elif callable(map_location) and not isinstance(map_location, (str, ampjit.device)):
        result = map_location(t, location)
        return t if result is None else result
    elif isinstance(map_location, dict):
        target = map_location.get(location, location)
    else:
        target = str(map_location)
    target = str(target)
    if target != str(t.device):
        t = t.to(target)
    return t


def load(f, map_location=None, pickle_module=None, weights_only=False, **pickle_load_args):
    """torch.load(f, map_location=None): the object saved in a path or binary file object in torch's
    zip format, by torch or ampjit; only tensors and plain containers are read (Note [Saving and
    loading])."""
    if isinstance(f, (str, os.PathLike)):
        what = os.fspath(f)
        with open(what, "rb") as fh:
            magic = fh.read(2)
        source = what  # libzip reads the file itself
    else:
        what = "the file object"
        source = f.read()
        if not isinstance(source, bytes):
            raise TypeError("ampjit.load: expected a binary file object")
        magic = source[:2]
    if magic != b"PK":
        raise RuntimeError("ampjit.load: {} is not a zip archive: ampjit reads the format torch.save has "
                           "written since torch 1.6 (not the legacy one)".format(what))
    archive = _C._ZipReader(source)
    if archive.has("constants.pkl"):
        raise RuntimeError("ampjit.load: {} is a TorchScript archive; load it with torch.jit.load".format(what))
    if not archive.has("data.pkl"):
        raise RuntimeError("ampjit.load: {} has no data.pkl record".format(what))
    unpickler = _Unpickler(archive.read("data.pkl"), archive, map_location, what)
    try:
        return unpickler.load()
    except pickle.UnpicklingError:
        raise
    except (EOFError, ValueError, IndexError, KeyError, TypeError, AttributeError, RecursionError) as e:
        raise pickle.UnpicklingError("ampjit.load: {} holds a corrupt pickle ({}: {})"
                                     .format(what, type(e).__name__, e)) from None
