"""ampjit.nn: torch.nn's modules, parameters, functional ops and initializers, in Python over
ampjit's op table. Layers compute through nn.functional; both are written in the scriptable subset,
so script compiles them from this source."""
from .parameter import Parameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init

__all__ = ["Parameter", "functional", "init"] + _modules_all


def _name_functional_source():
    """Errors in compiled nn.functional code name this package's functional.py, when it holds the
    text the library compiles (Note [Functionals from their own source])."""
    import os
    from .. import _C
    path = os.path.abspath(functional.__file__)
    try:
        with open(path, encoding="utf-8", newline="") as f:
            same = f.read() == _C._functional_source()
    except OSError:
        same = False
    if same:
        _C._set_functional_source_path(path)


_name_functional_source()
