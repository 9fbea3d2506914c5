"""ampjit.cpu"""
from . import amp  # noqa: F401
