"""torchvision 0.14's model definitions, unchanged, with ampjit as `torch`.

The files are Debian's python3-torchvision (the product never imports torchvision; the tests read
its source). They load as the package `ampjit_tv`, from the installed files, through an import hook
that gives each module an `__import__` mapping `torch` to `ampjit` and `torchvision` to `ampjit_tv`,
so the real torch and torchvision stay importable in the same process as the oracle. Three helper
modules that pull in image I/O or torch.hub are replaced by the few names the models use:
`utils` (_log_api_usage_once, _make_ntuple), `transforms._presets` (the weights' preprocessing
metadata) and `_internally_replaced_utils` (weight downloads, never used here).
"""
import builtins
import collections.abc
import enum
import importlib
import importlib.abc
import importlib.util
import itertools
import os
import sys
import types

PACKAGE = "ampjit_tv"


def torchvision_root():
    """The installed torchvision package's folder, or None."""
    for base in sys.path + ["/usr/lib/python3/dist-packages"]:
        path = os.path.join(base or ".", "torchvision", "models", "resnet.py")
        if os.path.isfile(path):
            return os.path.dirname(os.path.dirname(path))
    return None


def _mapped(name):
    if name == "torch" or name.startswith("torch."):
        return "ampjit" + name[len("torch"):]
    if name == "torchvision" or name.startswith("torchvision."):
        return PACKAGE + name[len("torchvision"):]
    return name


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0:
        name = _mapped(name)
    return builtins.__import__(name, globals, locals, fromlist, level)


_BUILTINS = dict(vars(builtins), __import__=_import)


class _Loader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__["__builtins__"] = _BUILTINS
        with open(self.path, encoding="utf-8") as f:
            code = compile(f.read(), self.path, "exec")
        exec(code, module.__dict__)


class _Finder(importlib.abc.MetaPathFinder):
    def __init__(self, root):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        if fullname != PACKAGE and not fullname.startswith(PACKAGE + "."):
            return None
        rel = fullname[len(PACKAGE):].lstrip(".").replace(".", os.sep)
        base = os.path.join(self.root, rel)
        if os.path.isfile(os.path.join(base, "__init__.py")):
            init = os.path.join(base, "__init__.py")
            # The package itself: its __init__ imports everything (io, datasets, ...); an empty
            # package with the real folder as its path is enough for the models.
            spec = importlib.util.spec_from_loader(fullname, _EmptyPackage() if fullname in _EMPTY else
                                                   _Loader(init), is_package=True)
            spec.submodule_search_locations = [base]
            spec.origin = init
            return spec
        if os.path.isfile(base + ".py"):
            spec = importlib.util.spec_from_loader(fullname, _Loader(base + ".py"))
            spec.origin = base + ".py"
            return spec
        return None


class _EmptyPackage(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        if module.__name__ == PACKAGE + ".ops":
            # `from torchvision.ops import StochasticDepth`: the layers of ops.misc and
            # ops.stochastic_depth, loaded on first use (ops' own __init__ needs the C extension).
            def __getattr__(name):
                for sub in ("misc", "stochastic_depth"):
                    mod = importlib.import_module(module.__name__ + "." + sub)
                    if hasattr(mod, name):
                        return getattr(mod, name)
                raise AttributeError(name)
            module.__getattr__ = __getattr__


# Packages whose __init__ imports far more than the models need (datasets, io, image decoders).
_EMPTY = {PACKAGE, PACKAGE + ".ops", PACKAGE + ".transforms", PACKAGE + ".models"}


def _stub(name, **attrs):
    mod = types.ModuleType(name)
    mod.__dict__.update(attrs)
    sys.modules[name] = mod
    return mod


def _make_ntuple(x, n):
    if isinstance(x, collections.abc.Iterable):
        return tuple(x)
    return tuple(itertools.repeat(x, n))


class _InterpolationMode(enum.Enum):
    NEAREST = "nearest"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"


class _ImageClassification:
    """Only its constructor: the weights' metadata builds it with partial()."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _no_download(*args, **kwargs):
    raise RuntimeError("the model harness never downloads weights")


_installed = None


def install():
    """Installs the hook once; returns the models package (`ampjit_tv.models`, empty: import the
    model modules from it, `ampjit_tv.models.resnet`)."""
    global _installed
    if _installed is not None:
        return _installed
    root = torchvision_root()
    if root is None:
        raise ImportError("python3-torchvision is not installed (scripts/setup.sh --with-torch installs it)")
    sys.meta_path.insert(0, _Finder(root))
    _stub(PACKAGE + ".utils", _log_api_usage_once=lambda obj: None, _make_ntuple=_make_ntuple)
    _stub(PACKAGE + "._internally_replaced_utils", load_state_dict_from_url=_no_download,
          _get_extension_path=_no_download)
    _stub(PACKAGE + ".transforms._presets", ImageClassification=_ImageClassification,
          InterpolationMode=_InterpolationMode)
    _installed = importlib.import_module(PACKAGE + ".models")
    return _installed


def load_as_ampjit(path, name):
    """The Python file `path` loaded as module `name` with `torch` mapped to ampjit (the harness's
    own model files, written against torch's API)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_loader(name, _Loader(path))
    spec.origin = path
    module = importlib.util.module_from_spec(spec)
    module.__file__ = path
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
