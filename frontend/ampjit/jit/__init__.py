"""ampjit.jit: tracing (``trace``, ``trace_module``) and scripting, torch.jit's API."""
from .. import _C
from ._trace import (TracerWarning, TracingCheckError, ScriptFunction, ScriptModule, TracedModule,  # noqa: F401
                     trace, trace_module)
from ._trace import AutocastInteropWarning, get_autocast_semantics, set_autocast_semantics  # noqa: F401
from ._script import CompileError, Final, script  # noqa: F401


def is_scripting():
    """False in Python; True only inside compiled script code."""
    return False


def annotate(the_type, the_value):
    """The value: script reads `the_type` (``torch.jit.annotate(List[int], [])``), Python ignores it."""
    return the_value


def is_tracing():
    """Whether this thread is recording a trace."""
    return _C._is_tracing()
