"""ampjit.jit: tracing (``trace``, ``trace_module``) and scripting, torch.jit's API."""
from .. import _C
from ._trace import (TracerWarning, TracingCheckError, ScriptFunction, ScriptModule, TracedModule,  # noqa: F401
                     trace, trace_module)
from ._trace import AutocastInteropWarning, get_autocast_semantics, set_autocast_semantics  # noqa: F401
from ._script import CompileError, Final, script  # noqa: F401
from .frontend import NotSupportedError, UnsupportedNodeError  # noqa: F401


class Error(Exception):
    """torch.jit.Error: what compiled code raises itself (`raise`, a failed `assert`), with the
    Python exception's name and the statement's file:line:col in its message. Not a RuntimeError,
    as torch's is not."""


_C._set_script_error(Error)


# ---- Function modifiers (torch.jit.unused, ignore, export; overload declarations) -------------------
# Python runs the functions as written; the mark tells script what to do with a module's method:
# `unused` compiles it as a stub that raises (Note [Unused methods] in _script.py), `export` compiles
# it besides forward, and `ignore`d functions cannot be called from script (torch would call back into
# Python; ampjit's compiled code never runs Python) — the compile error says so.

_MODIFIER = "_ampjit_jit_modifier"


def _mark(fn, modifier):
    if isinstance(fn, property):
        for f in (fn.fget, fn.fset):
            if f is not None:
                setattr(f, _MODIFIER, modifier)
        return fn
    setattr(fn, _MODIFIER, modifier)
    return fn


def unused(fn):
    """torch.jit.unused: script compiles the method as a stub that raises when called."""
    return _mark(fn, "unused")


def ignore(drop=False, **kwargs):
    """torch.jit.ignore (and ignore(drop=True), which is unused)."""
    if callable(drop):
        return _mark(drop, "ignore")
    return lambda fn: _mark(fn, "unused" if drop else "ignore")


def export(fn):
    """torch.jit.export: script compiles the method besides forward."""
    return _mark(fn, "export")


def _overload(fn):
    """torch.jit._overload: a typed declaration of a function defined again below; Python keeps the
    last definition."""
    return fn


# (module, qualified name) -> the @_overload_method declarations of that method, in source order.
_overloaded_methods = {}


def _overload_method(fn):
    """torch.jit._overload_method: a typed declaration of a method defined again below. Python keeps
    the last definition; script compiles its body once per declaration, under the declaration's
    signature (``forward__0``, ``forward__1``, as torch names them), and a call takes the first
    overload whose parameters accept its arguments."""
    decls = _overloaded_methods.setdefault((fn.__module__, fn.__qualname__), [])
    line = fn.__code__.co_firstlineno  # a module imported again declares again: one per line
    decls[:] = sorted([d for d in decls if d.__code__.co_firstlineno != line] + [fn],
                      key=lambda d: d.__code__.co_firstlineno)
    return fn


def _get_overloaded_methods(fn):
    """The declarations of method `fn`, or None."""
    return _overloaded_methods.get((fn.__module__, fn.__qualname__))


def is_scripting():
    """False in Python; True only inside compiled script code."""
    return False


def annotate(the_type, the_value):
    """The value: script reads `the_type` (``torch.jit.annotate(List[int], [])``), Python ignores it."""
    return the_value


def last_executed_optimized_graph():
    """torch.jit.last_executed_optimized_graph: the optimized graph of the last compiled function
    or module this thread ran (the one for the autocast state it ran under), or None."""
    return _C._last_executed_optimized_graph()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze, its checks and its interface. ampjit returns the module itself: its graph
    already reads weights from the module at each call and folds what is constant; inlining the
    attributes as constants (and the conv/batch-norm folding that allows) is not done yet."""
    from ._module import ScriptModule
    if not isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return mod


def is_tracing():
    """Whether this thread is recording a trace."""
    return _C._is_tracing()
