"""ampjit.nn: torch.nn's modules, parameters, functional ops and initializers, in pure Python over
ampjit's op table. Layers compute through nn.functional, which maps each function to its ATen op."""
from .parameter import Parameter
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all
from . import functional, init

__all__ = ["Parameter", "functional", "init"] + _modules_all
