"""ampjit.jit: tracing (``trace``, ``trace_module``) and scripting, torch.jit's API."""
import builtins
import collections
import typing

from .. import _C
from ._trace import (TracerWarning, TracingCheckError, ScriptFunction, ScriptModule, TracedModule,  # noqa: F401
                     trace, trace_module)
from ._trace import AutocastInteropWarning, get_autocast_semantics, set_autocast_semantics  # noqa: F401
from ._script import CompileError, Final, script  # noqa: F401
from .frontend import NotSupportedError, UnsupportedNodeError  # noqa: F401
from ._serialization import load, save  # noqa: F401
from . import _state  # noqa: F401


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
    if builtins.isinstance(fn, property):
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


def interface(obj):
    """torch.jit.interface: marks a class as a script interface type. A module attribute annotated
    with it (`impl: Iface`) is called through, never inlined, as torch's interface calls are (Note
    [Interface calls] in script/passes/inline_calls.h); script binds the call to the attribute's
    module as it is when the module is scripted. Python uses the class as written."""
    type.__setattr__(obj, "__ampjit_interface__", True)
    return obj


# torch.jit.Attribute(value, type): a (value, type) pair declaring a module attribute's script type, as
# torch's named tuple.
Attribute = collections.namedtuple("Attribute", ["value", "type"])


def _check_type(obj, target):
    origin, args = typing.get_origin(target), typing.get_args(target)
    if origin is None:
        if target is float:
            return builtins.isinstance(obj, float)
        if target is int:
            return builtins.isinstance(obj, int) and not builtins.isinstance(obj, bool)
        return builtins.isinstance(obj, target)
    if origin is typing.Union:
        return any(_check_type(obj, a) for a in args)
    if origin is list:
        return builtins.isinstance(obj, list) and all(_check_type(e, args[0]) for e in obj)
    if origin is tuple:
        return builtins.isinstance(obj, tuple) and len(obj) == len(args) and all(
            _check_type(e, a) for e, a in zip(obj, args))
    if origin is dict:
        return builtins.isinstance(obj, dict) and all(_check_type(k, args[0]) and _check_type(v, args[1])
                                             for k, v in obj.items())
    raise RuntimeError("torch.jit.isinstance does not support the type {}".format(target))


def isinstance(obj, target_type):  # noqa: A001 (torch's name; this module calls builtins.isinstance)
    """torch.jit.isinstance: isinstance that also checks the element types of List, Tuple, Dict and
    Optional annotations (an empty list matches any List[T])."""
    return _check_type(obj, target_type)


class Future:
    """What torch.jit.fork returns. ampjit runs the task when its result is first asked for
    (wait()), on the calling thread: the same results as torch's asynchronous task, without the
    parallelism."""

    def __init__(self, fn, args, kwargs):
        self._fn, self._args, self._kwargs = fn, args, kwargs
        self._done, self._value = False, None

    def wait(self):
        if not self._done:
            self._value = self._fn(*self._args, **self._kwargs)
            self._done = True
            self._fn = self._args = self._kwargs = None
        return self._value

    def done(self):
        return self._done


def fork(func, *args, **kwargs):
    """torch.jit.fork in Python: a Future of func(*args, **kwargs), run at wait() (Future's note).
    Script does not compile fork/wait yet."""
    return Future(func, args, kwargs)


def wait(future):
    """torch.jit.wait: the result of a fork."""
    return future.wait()


def script_if_tracing(fn):
    """torch.jit.script_if_tracing: fn, scripted at its first call made while tracing (so a trace
    records its control flow), called as Python otherwise."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if not is_tracing():
            return fn(*args, **kwargs)
        scripted = wrapper.__dict__.get("_scripted")
        if scripted is None:
            scripted = wrapper._scripted = script(fn)
        return scripted(*args, **kwargs)
    wrapper.__original_fn = fn
    wrapper.__script_if_tracing_wrapper = True
    return wrapper


def last_executed_optimized_graph():
    """torch.jit.last_executed_optimized_graph: the optimized graph of the last compiled function
    or module this thread ran (the one for the autocast state it ran under), or None."""
    return _C._last_executed_optimized_graph()


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """torch.jit.freeze: a module whose forward has the module's attributes as constants, copied
    now (Note [Freezing] in script/passes/freeze.h): tensor ops on them folded, eval-mode batch norms
    folded into the convolutions before them, and under autocast the weights cast once per autocast
    state rather than on every call. Attributes the forward assigns, and those named in
    `preserved_attrs`, stay attributes of the module."""
    from ._module import ScriptModule, frozen_module
    if not builtins.isinstance(mod, ScriptModule):
        raise RuntimeError("Freezing expects a ScriptModule as input. Please use torch.jit.script or "
                           "torch.jit.trace to script your 'nn.Module'.")
    if mod.training:
        raise RuntimeError("Freezing is currently only implemented for modules in eval mode. Please call .eval() "
                           "on your module before freezing.")
    return frozen_module(mod, list(preserved_attrs or []))


def optimize_for_inference(mod, other_methods=None):
    """torch.jit.optimize_for_inference: freezes the module (when it is not already frozen), then
    runs frozen convolution chains in channels-last layout (Note [Inference layouts] in
    script/passes/inference.h), as torch's runs them in mkldnn's. The module is optimized in place
    and returned; its forward returns what the frozen one does."""
    from ._module import ScriptModule, is_frozen
    if not builtins.isinstance(mod, ScriptModule):
        raise RuntimeError("optimize_for_inference expects a ScriptModule as input. "
                           "Please use torch.jit.script or torch.jit.trace to script your 'nn.Module'.")
    if not is_frozen(mod):
        mod = freeze(mod.eval(), preserved_attrs=other_methods or [])
    fwd = mod.__dict__["_frozen_forward"]
    if not fwd.__dict__.get("_optimized_for_inference"):
        bound = type(fwd).__new__(type(fwd))
        bound.__dict__.update(fwd.__dict__)
        bound._c = fwd._c._optimize_for_inference()
        bound._optimized_for_inference = True
        mod.__dict__["_frozen_forward"] = bound
    return mod


def is_tracing():
    """Whether this thread is recording a trace."""
    return _C._is_tracing()
