"""jit.trace: record what a Python function or module does on example inputs as a graph.

The recording happens in C++ (tracer/): while ``fn(*inputs)`` runs, every op that reaches the
tracer dispatch layer, below eager autocast as in torch, becomes a node. This file wraps the
result as torch does: a ``ScriptFunction`` for functions, a ``TopLevelTracedModule`` (an
nn.Module whose weights the graph reads with ``prim::GetAttr``) for modules, and runs torch's
trace check (re-trace, compare graphs, compare outputs with the Python function).
"""
import inspect
import re
import sys
import warnings

from .. import _C
from ._module import ScriptModule, compiled_module_base


class TracerWarning(Warning):
    """A trace may not generalize to other inputs (torch.jit.TracerWarning)."""

    @staticmethod
    def ignore_lib_warnings():
        warnings.filterwarnings("ignore", category=TracerWarning, module="ampjit")


class TracingCheckError(Exception):
    """check_trace found that the trace does not reproduce the function (torch's message)."""

    def __init__(self, graph_diff_error, tensor_compare_error, extra_msg=None):
        self.message = "Tracing failed sanity checks!\n"
        if extra_msg is not None:
            self.message += extra_msg + "\n"
        if graph_diff_error is not None:
            self.message += "ERROR: Graphs differed across invocations!\n" + graph_diff_error + "\n"
        if tensor_compare_error is not None:
            self.message += ("ERROR: Tensor-valued Constant nodes differed in value across invocations. "
                             "This often indicates that the tracer has encountered untraceable code.\n"
                             + tensor_compare_error + "\n")
        super().__init__(self.message)





def _arg_names(fn, n, skip_self=False):
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if skip_self and names and names[0] == "self":
        names = names[1:]
    if len(names) < n:
        names += ["input" if i == 0 else "input_{}".format(i) for i in range(len(names), n)]
    return names[:n]


def _as_tuple(example_inputs):
    from .. import Tensor
    if isinstance(example_inputs, Tensor) or not isinstance(example_inputs, tuple):
        return (example_inputs,)
    return example_inputs


_PACKAGE_DIR = __file__.rsplit("/jit/", 1)[0] + "/"


def _warn(message):
    """A TracerWarning attributed to the innermost caller outside ampjit (the user's line)."""
    f, level = sys._getframe(0), 1
    while f is not None and f.f_code.co_filename.startswith(_PACKAGE_DIR):
        f, level = f.f_back, level + 1
    warnings.warn(message, TracerWarning, stacklevel=level)


def _warn_all(messages):
    for m in messages:
        _warn(m)


_C._set_tracer_warning(TracerWarning, _PACKAGE_DIR)


# ---- Autocast semantics and interop warnings (interop/ in C++) ------------------------------------

class AutocastInteropWarning(UserWarning):
    """Where eager, traced and scripted code meet under autocast and PyTorch would silently give
    another result than eager execution, ampjit says so with this warning, pointing at the source
    line (Note [Interop warnings] in runtime/diagnostic.h)."""


_C._set_interop_warning(AutocastInteropWarning)

_SEMANTICS = ("torchscript", "eager")


def _check_semantics(mode, what="autocast_semantics"):
    if not isinstance(mode, str) or mode not in _SEMANTICS:
        raise ValueError("{}: expected 'torchscript' or 'eager', got {!r}".format(what, mode))
    return mode


def set_autocast_semantics(mode):
    """Sets the process-wide JIT autocast semantics, ``"torchscript"`` (PyTorch's TorchScript
    behavior, its limitations included) or ``"eager"`` (traced and scripted code give what eager
    execution gives, under every autocast state); returns the previous one. Functions with their
    own setting (``trace(..., autocast_semantics=...)``) keep it. Starts as
    ``$AMPJIT_AUTOCAST_SEMANTICS`` (default ``"torchscript"``)."""
    return _C._set_autocast_semantics(_check_semantics(mode, "set_autocast_semantics"))


def get_autocast_semantics():
    """The process-wide JIT autocast semantics: ``"torchscript"`` or ``"eager"``."""
    return _C._get_autocast_semantics()


def _resolve_semantics(mode):
    """A trace's semantics: the argument, else the process-wide one now (the trace is pinned to it)."""
    return get_autocast_semantics() if mode is None else _check_semantics(mode)


class ScriptFunction:
    """A compiled graph function (what jit.trace returns for a function): callable, with
    ``graph``, ``inlined_graph``, ``code`` and ``name`` as in torch."""

    def __init__(self, c, qualified_name=None):
        self._c = c
        self.__name__ = c.name
        self.qualified_name = qualified_name or c.name

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind_kwargs(args, kwargs)
        return self._c._run(args)

    def _bind_kwargs(self, args, kwargs):
        names = self._c._declaration.split("(", 1)[1].rsplit(")", 1)[0].split(", ")
        names = [n.split(" ")[-1] for n in names if n]
        if names and names[0] == "self":
            names = names[1:]
        args = list(args)
        for n in names[len(args):]:
            if n not in kwargs:
                break
            args.append(kwargs.pop(n))
        if kwargs:
            raise RuntimeError("{}() got an unexpected keyword argument '{}'. Declaration: {}".format(
                self.name, next(iter(kwargs)), self._c._declaration))
        return tuple(args)

    @property
    def graph(self):
        return self._c.graph

    @property
    def inlined_graph(self):
        return self._c.inlined_graph

    @property
    def code(self):
        return self._c.code

    @property
    def name(self):
        return self._c.name

    @property
    def schema(self):
        return self._c._declaration

    def save(self, f, _extra_files=None):
        """ScriptFunction.save: the function as torch saves one (the forward of a
        PlaceholderModule), in torch's TorchScript archive format."""
        from ._serialization import save
        save(self, f, _extra_files)

    def graph_for(self, *args, **kwargs):
        """The graph a call made now runs: optimized (inlined, and cast by the JIT autocast pass)
        for this thread's eager autocast state. The arguments are accepted as torch accepts them;
        only the autocast state selects the graph."""
        return self._c.graph_for()

    def _set_ignore_amp(self, ignore):
        """torch's ``fn._set_ignore_amp(True)``: never run the JIT autocast pass for this function."""
        self._c._set_ignore_amp(ignore)

    @property
    def _autocast_semantics(self):
        """This function's own autocast semantics, or None (the process-wide one at each call)."""
        return self._c._autocast_semantics

    def _set_autocast_semantics(self, mode):
        self._c._set_autocast_semantics(None if mode is None else _check_semantics(mode))

    def __repr__(self):
        return "<ampjit.jit.ScriptFunction {}>".format(self.name)


def _torch_class_name(cls):
    """torch's qualified TorchScript name of a module class: __torch__.<module>.<qualname>, with
    __main__ dropped and ampjit's own classes named as their torch counterparts."""
    mod = cls.__module__
    if mod == "ampjit" or mod.startswith("ampjit."):
        mod = "torch" + mod[len("ampjit"):]
    parts = ["__torch__"] + ([] if mod == "__main__" else [mod]) + [cls.__qualname__.replace(".<locals>", "")]
    return ".".join(parts)


class TracedModule(ScriptModule):
    pass


def _make_traced_module_class():
    from ..nn import Module

    class TopLevelTracedModule(compiled_module_base(), TracedModule):
        """A traced module: an nn.Module sharing the original's parameters and buffers, whose
        ``forward`` runs the recorded graph (weights read through prim::GetAttr at call time)."""

        def __init__(self, orig, cmod):
            Module.__init__(self)
            object.__setattr__(self, "_c", cmod)
            object.__setattr__(self, "_methods", {})
            object.__setattr__(self, "original_name", type(orig).__name__)
            self.training = orig.training
            for name, p in orig._parameters.items():
                self._parameters[name] = p
            for name, b in orig._buffers.items():
                self._buffers[name] = b
            for name, sub in orig._modules.items():
                if sub is None:
                    self._modules[name] = None
                    continue
                self._modules[name] = TopLevelTracedModule(sub, cmod._get_attr(name))

        def __setattr__(self, name, value):
            Module.__setattr__(self, name, value)
            if name in self.__dict__.get("_parameters", {}) or name in self.__dict__.get("_buffers", {}):
                if value is not None:
                    self._c._set_attr(name, value)

        def __getattr__(self, name):
            methods = self.__dict__.get("_methods", {})
            if name in methods:
                return methods[name]
            return Module.__getattr__(self, name)

        def _forward_function(self):
            fwd = self.__dict__["_methods"].get("forward")
            if fwd is None:
                raise RuntimeError("'{}' has no traced forward".format(self.original_name))
            return fwd

        @property
        def forward(self):
            """The traced forward; a submodule the trace did not call has none (AttributeError)."""
            fwd = self.__dict__["_methods"].get("forward")
            if fwd is None:
                raise AttributeError("'{}' has no traced forward".format(self.original_name))
            return fwd

        def _get_name(self):
            return self.original_name

        def extra_repr(self):
            return "original_name={}".format(self.original_name)

    return TopLevelTracedModule


_traced_module_class = None


def _build_cmodule(mod, memo):
    """The C++ module object mirroring `mod`'s tree: parameters, buffers, submodules."""
    if id(mod) in memo:
        return memo[id(mod)]
    c = _C._Module(_torch_class_name(type(mod)))
    memo[id(mod)] = c
    for name, p in mod._parameters.items():
        if p is not None:
            c._set_attr(name, p)
    for name, b in mod._buffers.items():
        if b is not None:
            c._set_attr(name, b)
    for name, sub in mod._modules.items():
        if sub is not None:
            c._set_attr(name, _build_cmodule(sub, memo))
    return c


def _flatten_tensors(x, out):
    from .. import Tensor
    if isinstance(x, Tensor):
        out.append(x)
    elif isinstance(x, (tuple, list)):
        for e in x:
            _flatten_tensors(e, out)
    elif isinstance(x, dict):
        for e in x.values():
            _flatten_tensors(e, out)
    return out


def _clone_inputs(args):
    from .. import Tensor

    def clone(a):
        if isinstance(a, Tensor):
            c = a.detach().clone()
            c.requires_grad = a.requires_grad
            return c
        if isinstance(a, (tuple, list)):
            return type(a)(clone(e) for e in a)
        return a
    return tuple(clone(a) for a in args)


def _compare_error(orig, ref, rtol):
    """torch.testing.assert_close's message for a traced output against the reference, or None when
    they are close: rtol is check_tolerance, atol the dtypes' default, NaNs equal. (torch compares
    the two as float64, so a dtype difference alone passes there; ampjit reports it.)"""
    from ..testing import assert_close
    from ..testing._comparison import default_tolerances
    try:
        assert_close(orig, ref, rtol=rtol, atol=default_tolerances(orig, ref)[1], equal_nan=True)
    except AssertionError as e:
        return str(e)
    return None


def _nondeterministic_nodes(graph):
    nd = ("aten::rand", "aten::randn", "aten::rand_like", "aten::randn_like", "aten::dropout",
          "aten::dropout_", "aten::bernoulli", "aten::multinomial", "aten::normal", "aten::randint")
    return [line.strip() for line in graph.str(True).splitlines()
            if any(" = {}(".format(k) in line for k in nd)]


_REFINED_TENSOR = re.compile(r"\b(?:Float|Double|Half|BFloat16|Long|Int|Short|Char|Byte|Bool|Tensor)\([^()]*\)")


def _erase_tensor_types(text):
    """A graph's text with each refined tensor type (Float(2, 3, device=cpu)) written Tensor."""
    return _REFINED_TENSOR.sub("Tensor", text)


def _check_trace(check_inputs, func, traced, tolerance, strict, retrace):
    """torch's trace check: each check input is traced again (the graphs must agree) and the trace
    is run next to the Python function (the outputs must agree, else a TracerWarning)."""
    for inputs in check_inputs:
        inputs = _as_tuple(inputs)
        check_c = retrace(_clone_inputs(inputs))
        # compared without shapes, dtypes and devices (torch erases the shape information first)
        a = _erase_tensor_types(traced.graph.str(False))
        b = _erase_tensor_types(check_c.graph.str(False))
        if a != b:
            diff = "\n".join("  First diverging line:\n    {}\n    {}".format(x, y)
                             for x, y in zip(a.splitlines(), b.splitlines()) if x != y)
            raise TracingCheckError(diff or "  The graphs have different lengths", None)
        traced_out = traced(*_clone_inputs(inputs))
        fn_out = func(*_clone_inputs(inputs))
        t_outs = _flatten_tensors(traced_out, [])
        f_outs = _flatten_tensors(fn_out, [])
        warned_nd = False
        for i, (o, r) in enumerate(zip(t_outs, f_outs)):
            err = _compare_error(o, r, tolerance)
            if err is None:
                continue
            nodes = _nondeterministic_nodes(traced.graph)
            if nodes and not warned_nd:
                warned_nd = True
                _warn(
                    "Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n"
                    + "\n".join("\t" + n for n in nodes)
                    + "\nThis may cause errors in trace checking. To disable trace checking, pass "
                      "check_trace=False to torch.jit.trace()")
            _warn(
                "Output nr {}. of the traced function does not match the corresponding output of the "
                "Python function. Detailed error:\n{}".format(i + 1, err))


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, *, autocast_semantics=None):
    """Traces `func` (a function or an nn.Module) on `example_inputs` (a tensor or a tuple of
    them) and returns a ScriptFunction or a traced module, as torch.jit.trace.

    ``autocast_semantics`` (an ampjit extension; default: the process-wide setting) decides what
    the trace records and how it runs: ``"torchscript"`` records the casts eager autocast made,
    baked in, as torch does; ``"eager"`` records the ops as called and each ``with autocast(...)``
    region as a ``prim::AutocastRegion`` node, so the trace gives what ``func`` gives under any
    later autocast state. The trace keeps that semantics."""
    from ..nn import Module
    autocast_semantics = _resolve_semantics(autocast_semantics)
    if isinstance(func, (ScriptModule, ScriptFunction)):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. Returning the object as is.")
        return func
    if isinstance(func, Module):
        return trace_module(func, {"forward": example_inputs}, None, check_trace,
                            None if check_inputs is None else [{"forward": c} for c in check_inputs],
                            check_tolerance, strict, autocast_semantics=autocast_semantics)
    if inspect.ismethod(func) and isinstance(func.__self__, Module) and func.__name__ == "forward":
        return trace_module(func.__self__, {"forward": example_inputs}, None, check_trace,
                            None if check_inputs is None else [{"forward": c} for c in check_inputs],
                            check_tolerance, strict, autocast_semantics=autocast_semantics)
    if not callable(func):
        raise TypeError("trace(): expected a function or an nn.Module, got {}".format(type(func).__name__))
    example_inputs = _as_tuple(example_inputs)
    names = _arg_names(func, len(example_inputs))
    name = getattr(func, "__name__", "fn")
    if name == "<lambda>":
        name = "_lambda"  # torch's name for it

    def do_trace(inputs):
        c, msgs = _C._trace(func, inputs, names, None, strict, name, autocast_semantics)
        _warn_all(msgs)
        return c

    traced = ScriptFunction(do_trace(example_inputs), getattr(func, "__qualname__", name))
    if check_trace:
        _check_trace(check_inputs or [example_inputs], func, traced, check_tolerance, strict,
                     lambda inputs: ScriptFunction(do_trace(inputs)))
    return traced


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None, *,
                 autocast_semantics=None):
    """Traces methods of `mod`: `inputs` maps a method name to its example inputs.
    ``autocast_semantics``: as for ``trace``."""
    global _traced_module_class
    from ..nn import Module
    autocast_semantics = _resolve_semantics(autocast_semantics)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    if _traced_module_class is None:
        _traced_module_class = _make_traced_module_class()
    cmod = _build_cmodule(mod, {})
    traced = _traced_module_class(mod, cmod)
    for method_name, example in inputs.items():
        func = mod if method_name == "forward" else getattr(mod, method_name)
        example = _as_tuple(example)
        names = _arg_names(getattr(mod, method_name), len(example), skip_self=True)

        def do_trace(args, func=func, names=names, method_name=method_name, cm=cmod):
            c, msgs = _C._trace(func, args, names, cm, strict, method_name, autocast_semantics)
            _warn_all(msgs)
            return c

        fn = ScriptFunction(do_trace(example), "{}.{}".format(cmod._class_name, method_name))
        traced._methods[method_name] = fn
        if check_trace:
            checks = [c[method_name] for c in check_inputs] if check_inputs else [example]
            _check_trace(checks, func, fn, check_tolerance, strict,
                         lambda args, dt=do_trace: ScriptFunction(dt(args, cm=_build_cmodule(mod, {}))))
    return traced
