"""torch.jit.load and torch.jit.save: TorchScript archives (Note [Loading TorchScript archives] in
serialization/jit_load.h, Note [Saving TorchScript archives] in serialization/jit_save.h).

The archive is read, described and compiled by the C++ loader (``_C._jit_load``), which runs
nothing the file contains except the TorchScript code it compiles. This file gives the loaded
module torch's Python face: a ``RecursiveScriptModule`` per module object, whose parameters,
buffers and submodules are the runtime object's own tensors and modules, whose ``forward`` and other
methods are compiled on first call, and whose ``train()``/``eval()``, ``to()`` and assignments
reach the runtime object the compiled code reads.
"""
import os

from .. import _C
from ._module import compiled_module_base
from ._trace import ScriptFunction

_loaded_class = None


class _LoadedMethod(ScriptFunction):
    """A method of a loaded module, bound to its runtime object."""

    def __init__(self, c, qualified_name):
        ScriptFunction.__init__(self, c, qualified_name)
        self.__name__ = qualified_name.rsplit(".", 1)[-1]

    @property
    def name(self):
        return self.__name__

    @property
    def code(self):
        return self._c.code.replace("def " + self._c.name + "(", "def " + self.name + "(", 1)


def _make_loaded_class():
    from ..nn import Module, Parameter

    class RecursiveScriptModule(compiled_module_base()):
        """A module loaded from a TorchScript archive."""

        def __init__(self, loaded):
            Module.__init__(self)
            object.__setattr__(self, "_c", loaded._object())
            object.__setattr__(self, "_loaded", loaded)
            object.__setattr__(self, "_methods", {})
            object.__setattr__(self, "_plain", {})
            object.__setattr__(self, "original_name", loaded.class_name.rsplit(".", 1)[-1])
            for name, kind, value in loaded._attributes():
                if kind == "parameter":
                    self._parameters[name] = None if value is None else Parameter(value)
                    if value is not None:
                        self._c._set_attr(name, self._parameters[name])
                elif kind == "buffer":
                    self._buffers[name] = value
                elif kind == "module":
                    self._modules[name] = RecursiveScriptModule(value)
                elif name == "training":
                    object.__setattr__(self, "training", bool(value))
                else:
                    self._plain[name] = kind == "constant"
                    object.__setattr__(self, name, value)

        def _method(self, name):
            methods = self.__dict__["_methods"]
            m = methods.get(name)
            if m is None:
                loaded = self.__dict__["_loaded"]
                m = _LoadedMethod(loaded._method(name), "{}.{}".format(loaded.class_name, name))
                methods[name] = m
            return m

        def _forward_function(self):
            return self._method("forward")

        def __getattr__(self, name):
            try:
                return Module.__getattr__(self, name)
            except AttributeError:
                loaded = self.__dict__.get("_loaded")
                if loaded is not None and loaded._has_method(name):
                    return self._method(name)
                raise

        def __dir__(self):
            return sorted(set(super().__dir__()) | set(self.__dict__["_loaded"]._method_names()))

        def _get_name(self):
            return "RecursiveScriptModule"

        def extra_repr(self):
            return "original_name={}".format(self.original_name)

        def _plain_attributes(self):
            return self.__dict__.get("_plain", {})

    return RecursiveScriptModule


def _source(f, what):
    """A path (str) for the loader, or the bytes of a file-like object."""
    if isinstance(f, (str, os.PathLike)):
        path = os.fspath(f)
        if not os.path.exists(path):
            raise ValueError("The provided filename {} does not exist".format(path))
        if os.path.isdir(path):
            raise ValueError("The provided filename {} is a directory".format(path))
        return path
    if not hasattr(f, "read"):
        raise TypeError("{}: expected a path or a file-like object, got {}".format(what, type(f).__name__))
    data = f.read()
    if not isinstance(data, bytes):
        raise TypeError("{}: the file-like object must be opened in binary mode".format(what))
    return data


def _device_of(map_location):
    from .. import device
    if map_location is None:
        return None
    if isinstance(map_location, str):
        return device(map_location)
    if isinstance(map_location, device):
        return map_location
    raise ValueError("torch.jit.load: map_location should be a string or a torch.device, got {}".format(
        type(map_location).__name__))


def load(f, map_location=None, _extra_files=None):
    """torch.jit.load: the module a TorchScript archive holds (written by torch.jit.save, by torch or by
    ampjit), from a path or a binary file-like object. ``map_location`` (a device or its name) moves its
    tensors there; each key of ``_extra_files`` gets that extra file's bytes (b"" when absent)."""
    global _loaded_class
    target = _device_of(map_location)
    names = list(_extra_files.keys()) if _extra_files is not None else []
    loaded, files = _C._jit_load(_source(f, "torch.jit.load"), names)
    if _extra_files is not None:  # each key: the file's bytes, or b"" when the archive lacks it
        for name in names:
            _extra_files[name] = files[name]
    if _loaded_class is None:
        _loaded_class = _make_loaded_class()
    mod = _loaded_class(loaded)
    if target is not None and target.type != "cpu":
        mod.to(target)
    return mod



# ---- torch.jit.save ---------------------------------------------------------------------------------

def _spec(mod):
    """(runtime object, class name, [(name, kind, constant value)], [(method, _Function)]) of one
    compiled module: scripted, traced or loaded."""
    from ..nn import Module
    d = mod.__dict__
    attrs = []
    if "_loaded" in d:  # loaded from an archive: its class's declarations
        loaded = d["_loaded"]
        name = loaded.class_name
        for a, kind, value in loaded._attributes():
            attrs.append((a, kind, value if kind == "constant" else None))
        methods = [(m, f._c) for m, f in d["_methods"].items()]
    elif "_desc" in d:  # scripted
        desc = d["_desc"]
        name = desc["class_name"]
        for a, kind, value, is_constant in desc["attrs"]:
            declared = None
            if kind == "tensor":
                kind = "parameter" if a in mod._parameters else "buffer"
            elif kind == "value" and is_constant:
                kind = "constant"
            elif kind == "value" and (a in mod._parameters or a in mod._buffers):
                # a parameter or buffer that is None (MultiheadAttention's q_proj_weight): declared
                # Optional[Tensor], which torch 1.13 runs (declared NoneType, its executor fails on
                # the code that tests it)
                declared = "Optional[Tensor]"
            attrs.append((a, kind, value if kind == "constant" else None, declared))
        methods = []
    else:  # traced: its parameters, buffers and submodules, as the trace reads them
        name = mod._c._class_name
        mod._c._set_attr("training", mod.training)
        attrs.append(("training", "value", None))
        attrs += [(a, "parameter", None) for a, p in mod._parameters.items() if p is not None]
        attrs += [(a, "buffer", None) for a, b in mod._buffers.items() if b is not None]
        attrs += [(a, "module", None) for a, sub in mod._modules.items() if isinstance(sub, Module)]
        methods = []
    return mod._c, name, attrs, methods


def save(m, f, _extra_files=None):
    """torch.jit.save: writes the compiled module `m` (scripted, traced or loaded) as a TorchScript
    archive in torch's format, to a path or a binary file-like object; torch 1.13's torch.jit.load
    and ampjit's load it. ``_extra_files`` ({name: bytes or str}) go into its extra/ folder."""
    from ._module import ScriptModule, is_frozen
    extra = {}
    for k, v in (_extra_files or {}).items():
        extra[k] = v.encode() if isinstance(v, str) else bytes(v)
    if isinstance(m, ScriptFunction):
        # as torch saves a function: the forward of a module of class PlaceholderModule
        c = _C._Module("__torch__.PlaceholderModule")
        c._set_attr("training", True)
        specs = [(c, "__torch__.PlaceholderModule", [("training", "value", None)], [("forward", m._c)])]
        if isinstance(f, (str, os.PathLike)):
            _C._jit_save(c, specs, extra, os.fspath(f))
        else:
            f.write(_C._jit_save(c, specs, extra))
        return
    if not isinstance(m, ScriptModule):
        raise AttributeError("'{}' object has no attribute 'save'".format(type(m).__name__))
    if is_frozen(m):
        raise RuntimeError("torch.jit.save of a frozen module is not supported by ampjit yet")
    specs, seen = [], set()

    def visit(mod):
        if id(mod) in seen:
            return
        seen.add(id(mod))
        specs.append(_spec(mod))
        for sub in mod._modules.values():
            if sub is not None:
                visit(sub)
    visit(m)
    c, name, attrs, methods = specs[0]
    forward = m._forward_function()
    specs[0] = (c, name, attrs, [("forward", forward._c)] + [x for x in methods if x[0] != "forward"])
    if isinstance(f, (str, os.PathLike)):
        _C._jit_save(c, specs, extra, os.fspath(f))
    else:
        f.write(_C._jit_save(c, specs, extra))
