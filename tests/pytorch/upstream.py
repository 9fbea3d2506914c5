"""Runs PyTorch 1.13.1's own test files, unchanged, with ampjit as `torch`.

scripts/fetch-pytorch-tests.sh fetches the files from Debian's source package of the oracle
(`apt-get source --download-only pytorch`). They import torch's test infrastructure, which is not
part of any installed package; `shims/` writes the pieces they use (TestCase, JitTestCase,
run_tests, TEST_CUDA, ...) on ampjit's public API. An import hook gives each loaded file an
`__import__` that maps, in this order:
  - `torch.testing._internal.X` and `test_jit` -> shims/X.py (written here),
  - `torch.testing._internal.autocast_test_lists` and `jit.test_models` -> the upstream file,
  - `torch` and `torch.*` -> `ampjit` and `ampjit.*`.
"""
import builtins
import importlib.abc
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PREFIX = "ampjit_upstream"
# upstream module name -> path relative to the fetched folder
UPSTREAM = {
    "torch.testing._internal.autocast_test_lists": "torch/testing/_internal/autocast_test_lists.py",
    "jit.test_models": "test/jit/test_models.py",
    "test_autocast": "test/test_autocast.py",
    "test_jit_autocast": "test/test_jit_autocast.py",
}
# upstream module name -> the shim file (shims/NAME.py) standing in for it
SHIMS = {"torch.testing._internal.common_utils": "common_utils", "torch.testing._internal.jit_utils": "jit_utils",
         "torch.testing._internal.common_cuda": "common_cuda",
         "torch.testing._internal.common_quantization": "common_quantization",
         "test_jit": "jit_test_case"}  # (no test_*.py name: pytest would collect it)

_root = None


def _target(name):
    """The module to import for the upstream spelling `name`."""
    if name in SHIMS:
        return PREFIX + ".shims." + SHIMS[name]
    if name in UPSTREAM:
        return PREFIX + "." + name.replace(".", "_")
    if name == "jit":
        return PREFIX + ".jit"
    if name == "torch" or name.startswith("torch."):
        return "ampjit" + name[len("torch"):]
    return name


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0:
        target = _target(name)
        if target != name:
            module = importlib.import_module(target)
            if fromlist or not (name == "torch" or name.startswith("torch.")):
                return module
            return importlib.import_module("ampjit")  # `import torch.nn as nn` binds through the top
    return builtins.__import__(name, globals, locals, fromlist, level)


_BUILTINS = dict(vars(builtins), __import__=_import)


class _Loader(importlib.abc.Loader):
    def __init__(self, path):
        self.path = path

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__dict__["__builtins__"] = _BUILTINS
        module.__file__ = self.path
        with open(self.path, encoding="utf-8") as f:
            code = compile(f.read(), self.path, "exec")
        exec(code, module.__dict__)


class _Package(importlib.abc.Loader):
    def create_module(self, spec):
        return None

    def exec_module(self, module):
        pass


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in (PREFIX, PREFIX + ".shims", PREFIX + ".jit"):
            spec = importlib.util.spec_from_loader(fullname, _Package(), is_package=True)
            spec.submodule_search_locations = []
            return spec
        if fullname.startswith(PREFIX + ".shims."):
            path = os.path.join(HERE, "shims", fullname.rsplit(".", 1)[-1] + ".py")
        else:
            rel = next((p for n, p in UPSTREAM.items() if PREFIX + "." + n.replace(".", "_") == fullname), None)
            if rel is None:
                return None
            path = os.path.join(_root, rel)
        spec = importlib.util.spec_from_loader(fullname, _Loader(path))
        spec.origin = path
        return spec


def install(root):
    """Installs the hook for the upstream files under `root` (scripts/fetch-pytorch-tests.sh's folder)."""
    global _root
    if _root is None:
        sys.meta_path.insert(0, _Finder())
    _root = root


def load(name):
    """The upstream test module `name` ("test_autocast", "test_jit_autocast")."""
    return importlib.import_module(_target(name))
