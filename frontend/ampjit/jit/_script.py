"""jit.script: compile the source of a Python function or module with the script compiler.

The compiler is C++ (script/compiler.h). This file gives it what only Python knows: the source
text of a function (with its real file name and first line, so diagnostics point at the user's
file:line), and a resolver that says what each free name of that source is, read from the
function's closure, globals and builtins (Note [Resolver descriptors] in
frontend/python/script_bindings.cpp). A module becomes a description of its class (attributes
with their types, the methods forward reaches) plus the runtime object the graph reads its
weights from, shared with the Python module as the tracer shares them.
"""
import ast
import inspect
import textwrap
import math
import types
import typing
import warnings

from .. import _C
from ._module import ScriptModule, compiled_module_base
from ._source import _function_source
from ._trace import ScriptFunction, _check_semantics, _torch_class_name


class CompileError(RuntimeError):
    """Source that script cannot compile: ``file:line:col: what``, the source line, a caret under
    the offending range, and one ``called from`` note per enclosing call."""


from .frontend import NotSupportedError, UnsupportedNodeError  # noqa: E402

_C._set_compile_error(CompileError, NotSupportedError, UnsupportedNodeError)

Final = typing.Final

_SCRIPT_ATTR = "__ampjit_script__"

# ---- What a name refers to ------------------------------------------------------------------------

_namespace_of_value = None  # id(object) -> ("namespace", path) / ("autocast", path), built at first use
_keepalive = []             # the objects whose ids key that table


def _torch_path(module_name):
    """ampjit.nn.functional -> torch.nn.functional."""
    return "torch" + module_name[len("ampjit"):]


def _builtin_table():
    """Modules of builtins, the builtin functions they hold, and the autocast classes, by identity."""
    global _namespace_of_value
    if _namespace_of_value is not None:
        return _namespace_of_value
    import ampjit
    import ampjit.nn.functional
    table = {}

    def put(obj, desc):
        if id(obj) not in table:
            table[id(obj)] = desc
            _keepalive.append(obj)

    # Autocast classes first: ampjit.autocast is ampjit.amp.autocast (torch.autocast too).
    put(ampjit.autocast, ("autocast", "torch.autocast"))
    put(ampjit.cpu.amp.autocast, ("autocast", "torch.cpu.amp.autocast"))
    put(ampjit.cuda.amp.autocast, ("autocast", "torch.cuda.amp.autocast"))
    put(ampjit.Tensor, ("namespace", "torch.Tensor"))
    put(ampjit.dtype, ("namespace", "torch.dtype"))
    put(ampjit.device, ("namespace", "torch.device"))
    namespaces = [(ampjit, "torch"), (ampjit.nn.functional, "torch.nn.functional"), (ampjit.jit, "torch.jit"),
                  (ampjit.amp, "torch.amp"), (ampjit.cpu.amp, "torch.cpu.amp"), (ampjit.cuda.amp, "torch.cuda.amp"),
                  (ampjit.cpu, "torch.cpu"), (ampjit.cuda, "torch.cuda"), (ampjit.nn, "torch.nn"), (math, "math"),
                  (ampjit._C._nn, "torch._C._nn")]
    for mod, path in namespaces:
        put(mod, ("namespace", path))
    for mod, path in namespaces:
        for name, value in vars(mod).items():
            if name.startswith("__") or not callable(value) or isinstance(value, (type, types.ModuleType)):
                continue
            # A function belongs to the namespace that defines it (F.relu is not torch.relu); the
            # top level holds the op table's functions and the C extension's.
            owner = getattr(value, "__module__", None) or ""
            if mod is ampjit or mod is math or owner == mod.__name__:
                put(value, ("namespace", path + "." + name))
    for name in ("List", "Tuple", "Optional", "Dict", "Final", "Union", "Any"):
        put(getattr(typing, name), ("namespace", "typing." + name))
    put(typing, ("namespace", "typing"))
    put(warnings, ("namespace", "warnings"))
    put(warnings.warn, ("namespace", "warnings.warn"))
    _namespace_of_value = table
    return table


def _unsupported(value):
    return ("unsupported", "python value of type '{}' cannot be used in script".format(type(value).__name__))


class _Resolver:
    """resolver(name) -> descriptor, over a closure, a chain of globals dicts and Python's builtins."""

    __slots__ = ("closure", "globals")

    def __init__(self, globals_list, closure=None):
        self.globals = globals_list
        self.closure = closure or {}

    @staticmethod
    def for_function(fn):
        closure = {}
        code = fn.__code__
        if fn.__closure__:
            for name, cell in zip(code.co_freevars, fn.__closure__):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:  # an empty cell: the name is not bound yet
                    pass
        return _Resolver([fn.__globals__], closure)

    def __call__(self, name):
        if name in self.closure:
            return _describe(self.closure[name])
        for g in self.globals:
            if name in g:
                return _describe(g[name])
        # Not found, or one of Python's builtins (len, range, float, isinstance, ...), which the
        # compiler knows itself, as it does for a standalone file.
        return ("unknown",)


def _describe(value):
    """The resolver descriptor of one Python value."""
    if isinstance(value, int) and not isinstance(value, bool) and not -2**63 <= value < 2**63:
        return ("unsupported", "the integer {} does not fit in script's int (64-bit)".format(value))
    if value is None or isinstance(value, (bool, int, float, str)) or (
            type(value) is tuple and _plain_value(value)):
        return ("constant", value)
    from .. import dtype, device, memory_format
    if isinstance(value, (dtype, device)):
        return ("constant", value)
    if isinstance(value, memory_format):
        return ("constant", value._code)  # an int in TorchScript, as c10::MemoryFormat
    if isinstance(value, ScriptFunction):
        return ("function", value._c)
    table = _builtin_table()
    desc = table.get(id(value))
    if desc is not None:
        return desc
    if isinstance(value, types.ModuleType):
        if value.__name__ == "ampjit" or value.__name__.startswith("ampjit."):
            return ("namespace", _torch_path(value.__name__))
        return ("unsupported", "python module '{}' cannot be used in script".format(value.__name__))
    if isinstance(value, types.FunctionType):
        cached = value.__dict__.get(_SCRIPT_ATTR, {}).get((id(value), None))
        if cached is not None:
            return ("function", cached._c)
        try:
            fn, text, filename, first_line = _source_to_compile(value)
        except _Unsupported as e:
            return ("unsupported", str(e))
        except (OSError, TypeError) as e:
            return ("unsupported", "the source of Python function '{}' is not available ({})".format(
                value.__qualname__, e))
        return ("source", text, filename, first_line, _Resolver.for_function(fn), id(value))
    if isinstance(value, type) and issubclass(value, tuple) and hasattr(value, "_fields"):
        return _named_tuple_descriptor(value)
    unsupported = getattr(value, "__script_unsupported", None)
    if unsupported is not None:
        return ("unsupported", "TorchScript error: " + unsupported)
    if isinstance(value, type):
        return _class_descriptor(value)
    return _unsupported(value)


# ---- Script classes ---------------------------------------------------------------------------------
# A plain Python class that script code reaches compiles as a script class, as torch compiles it
# (decorated with @torch.jit.script or not): Note [Script classes] in script/compiler.h. Its instances
# cross into script as objects holding their instance attributes, and come back as instances of the
# class with the object's attributes.

_script_classes = {}  # qualified name -> class


def _class_descriptor(cls):
    from ..nn import Module
    import enum
    if issubclass(cls, (Module, BaseException, enum.Enum)) or cls.__module__ == "builtins":
        return ("unsupported", "python class '{}' cannot be used in script".format(cls.__qualname__))
    cached = cls.__dict__.get("__ampjit_script_desc__")
    if cached is not None:
        return cached
    name = _torch_class_name(cls)
    methods, globals_list, closure = [], [], {}
    for mname, fn in cls.__dict__.items():  # its own methods only: torch's script classes inherit none
        if isinstance(fn, (staticmethod, classmethod)):
            return ("unsupported", "script class '{}': {}s are not supported ({})".format(
                cls.__qualname__, type(fn).__name__, mname))
        if not isinstance(fn, types.FunctionType) or (
                mname.startswith("__") and mname.endswith("__") and mname != "__init__"):
            continue
        try:
            text, filename, first_line = _function_source(fn)
        except (OSError, TypeError) as e:
            return ("unsupported", "the source of script class '{}' is not available ({})".format(cls.__qualname__, e))
        methods.append((mname, text, filename, first_line))
        if all(fn.__globals__ is not g for g in globals_list):
            globals_list.append(fn.__globals__)
        if fn.__closure__:
            closure.update(_Resolver.for_function(fn).closure)
    if not any(cls.__name__ in g for g in globals_list):
        closure.setdefault(cls.__name__, cls)  # a class local to a function names itself
    desc = ("class", name, methods, _Resolver(globals_list, closure))
    type.__setattr__(cls, "__ampjit_script_desc__", desc)
    type.__setattr__(cls, "__ampjit_script_class__", name)
    _script_classes[name] = cls
    return desc


def _script_object(name, names, values):
    """The Python instance of a script class's object leaving script, or None for other objects."""
    cls = _script_classes.get(name)
    if cls is None:
        return None
    obj = cls.__new__(cls)
    obj.__dict__.update(zip(names, values))
    return obj


_C._set_script_object_factory(_script_object)


# ---- NamedTuple classes -----------------------------------------------------------------------------
# A typing.NamedTuple or collections.namedtuple class is a tuple type with field names in script, named
# as torch names it ("__torch__.module.Class"); its fields' annotations (Tensor where there is none, as
# in torch) are given as text for the compiler to parse. A scripted function returning one returns an
# instance of the class.

_named_tuple_classes = {}  # qualified name -> class


def _annotation_text(ann):
    from .. import Tensor
    if isinstance(ann, str):
        return ann
    if ann is None or ann is type(None):
        return "None"
    if ann is Tensor:
        return "Tensor"
    if ann in (int, float, bool, str):
        return ann.__name__
    origin, args = typing.get_origin(ann), typing.get_args(ann)
    if origin is typing.Union and len(args) == 2 and type(None) in args:
        return "Optional[{}]".format(_annotation_text(args[0] if args[1] is type(None) else args[1]))
    if origin in (list, typing.List):
        return "List[{}]".format(_annotation_text(args[0]))
    if origin in (tuple, typing.Tuple):
        return "Tuple[{}]".format(", ".join(_annotation_text(a) for a in args))
    if origin in (dict, typing.Dict):
        return "Dict[{}, {}]".format(_annotation_text(args[0]), _annotation_text(args[1]))
    if origin is typing.Union:
        return "Union[{}]".format(", ".join(_annotation_text(a) for a in args))
    raise _Unsupported("the annotation {!r} cannot be used in a script NamedTuple".format(ann))


def _named_tuple_descriptor(cls):
    name = "__torch__.{}.{}".format(cls.__module__, cls.__qualname__)
    annotations = getattr(cls, "__annotations__", {})
    try:
        texts = [_annotation_text(annotations.get(f, "Tensor")) for f in cls._fields]
    except _Unsupported as e:
        return ("unsupported", str(e))
    _named_tuple_classes[name] = cls
    return ("namedtuple", name, list(cls._fields), texts)


def _named_tuple_instance(name, fields, values):
    cls = _named_tuple_classes.get(name)
    if cls is None or tuple(cls._fields) != tuple(fields):
        import collections
        cls = collections.namedtuple(name.rsplit(".", 1)[-1], fields)
    return cls(*values)


_C._set_named_tuple_class(_named_tuple_instance)


# ---- Functions --------------------------------------------------------------------------------------

class _CompiledFunction(ScriptFunction):
    """A compiled function that binds keyword arguments and defaults from the Python signature,
    and shows its plain name (the compiler names functions by their qualified name, "__torch__.f",
    which is torch's qualified_name, not its name)."""

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) < self._nargs:
            args = _bind(self, self._arg_names, self._defaults, args, kwargs)
        return self._c._run(args)

    @property
    def name(self):
        return self._c.name.rsplit(".", 1)[-1]

    @property
    def code(self):
        return self._c.code.replace("def " + self._c.name + "(", "def " + self.name + "(", 1)

    @property
    def schema(self):
        decl = self._c._declaration
        return self.name + decl[len(self._c.name):] if decl.startswith(self._c.name + "(") else decl


class _ScriptedFunction(_CompiledFunction):
    """A scripted function."""

    def __init__(self, c, qualified_name, fn):
        ScriptFunction.__init__(self, c, qualified_name)
        self.__name__ = self.name
        self.__doc__ = fn.__doc__
        self.__wrapped__ = fn
        names, defaults = _signature(fn)
        self._arg_names = names
        self._defaults = defaults
        self._nargs = len(names)


def _signature(fn, skip_self=False):
    params = list(inspect.signature(fn).parameters.values())
    if skip_self and params:
        params = params[1:]
    names = tuple(p.name for p in params)
    defaults = {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}
    return names, defaults


def _bind(f, names, defaults, args, kwargs):
    """Positional arguments for a call: args, then keyword arguments and defaults by name. A
    missing argument stops the list short, so the C++ call reports it with torch's message."""
    out = list(args)
    if len(out) > len(names):
        return tuple(out)
    for name in names[len(out):]:
        if name in kwargs:
            out.append(kwargs.pop(name))
        elif name in defaults:
            out.append(defaults[name])
        else:
            break
    if kwargs:
        name = next(iter(kwargs))
        if name in names[:len(args)]:
            raise RuntimeError("{}() got multiple values for argument '{}'. Declaration: {}".format(
                f.name, name, f.schema))
        raise RuntimeError("{}() got an unexpected keyword argument '{}'. Declaration: {}".format(
            f.name, name, f.schema))
    return tuple(out)


def _qualified_name(fn):
    mod = getattr(fn, "__module__", None) or "__main__"
    if mod == "ampjit" or mod.startswith("ampjit."):
        mod = _torch_path(mod)
    parts = ["__torch__"] + ([] if mod == "__main__" else [mod]) + [fn.__qualname__.replace(".<locals>", "")]
    return ".".join(parts)


class _Unsupported(Exception):
    pass


def _source_to_compile(value):
    """(the function whose source is compiled, its text, filename, first line) for a Python
    function. An autocast decorator's wrapper compiles from the decorated function's source with
    its decorators: the compiler makes them regions (eager semantics) or torch's error
    (torchscript). Other wrappers compile from the function they wrap (`__wrapped__`), as torch's
    inspect.getsource does."""
    fn = inspect.unwrap(value)
    for f in (value, fn):
        message = getattr(f, "__script_unsupported", None)
        if message is not None and "@autocast()" not in message:
            raise _Unsupported("TorchScript error: " + message)
    if fn.__name__ == "<lambda>":
        raise _Unsupported("lambda functions cannot be used in script; define the function with def")
    decorated = getattr(value, "__script_unsupported", None) is not None
    text, filename, first_line = _function_source(fn, keep_decorators=decorated)
    if decorated and not text.lstrip().startswith("@"):
        # Decorated by a call (`autocast("cpu")(f)`), not in the source: nothing to compile it from.
        raise _Unsupported("TorchScript error: " + getattr(value, "__script_unsupported"))
    return fn, text, filename, first_line


def _script_function(value, semantics):
    # By (function, semantics): functools.wraps copies a function's __dict__ into its wrapper.
    cache = value.__dict__.setdefault(_SCRIPT_ATTR, {})
    cached = cache.get((id(value), semantics))
    if cached is not None:
        return cached
    try:
        fn, text, filename, first_line = _source_to_compile(value)
    except _Unsupported as e:
        raise CompileError(str(e)) from None
    c = _C._script_function(text, filename, first_line, _Resolver.for_function(fn), semantics)
    scripted = _ScriptedFunction(c, _qualified_name(fn), fn)
    cache[(id(value), semantics)] = scripted
    return scripted


# ---- Modules ----------------------------------------------------------------------------------------

_MODULE_INTERNALS = frozenset(["training", "_parameters", "_buffers", "_non_persistent_buffers_set", "_modules",
                               "_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_state_dict_hooks",
                               "_load_state_dict_pre_hooks", "_is_full_backward_hook", "dump_patches",
                               "_version"])


def _plain_value(v, tensors=False):
    """Whether a module attribute's value has a script type (numbers, strings, None, dtypes,
    devices, and tuples/lists of them)."""
    from .. import dtype, device, Tensor
    if isinstance(v, (tuple, list)):  # with tensors=True, tensors too (nn.LSTM's _flat_weights)
        return all(_plain_value(e, tensors) or (tensors and isinstance(e, Tensor)) for e in v)
    if isinstance(v, dict):  # a Dict[K, V] attribute: keys plain, values as list elements
        return all(isinstance(k, (bool, int, float, str)) for k in v) and _plain_value(list(v.values()), tensors)
    return v is None or isinstance(v, (bool, int, float, str, dtype, device))


def _is_tensor(v):
    from .. import Tensor
    return isinstance(v, Tensor)


def _is_final(annotation):
    if annotation is typing.Final or typing.get_origin(annotation) is typing.Final:
        return True
    return isinstance(annotation, str) and (annotation.startswith("Final") or annotation.startswith("typing.Final")
                                            or annotation.startswith("torch.jit.Final"))


def _self_references(text):
    """The names X of every `self.X` in a method's source (to find the methods forward reaches)."""
    try:
        tree = ast.parse(textwrap.dedent(text))  # a method's text keeps its indentation
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
            out.add(node.attr)
    return out


def _module_methods(mod):
    """(name -> function defining it, globals chain, constant names) for `mod`'s class, from the most
    derived class up to nn.Module. ampjit's own layers are compiled from their own source, as torch
    compiles torch.nn's: their forwards are written in the scriptable subset."""
    from ..nn import Module
    found = {}
    globals_list = []
    constants = set()
    for klass in type(mod).__mro__:
        if klass is Module or klass is object:
            break
        constants.update(klass.__dict__.get("__constants__", ()))
        for name, ann in klass.__dict__.get("__annotations__", {}).items():
            if _is_final(ann):
                constants.add(name)
        for name, v in klass.__dict__.items():
            if isinstance(v, types.FunctionType) and name not in found and not (
                    name.startswith("__") and name.endswith("__")):
                found[name] = v
                g = inspect.unwrap(v).__globals__  # a decorated method's own module
                if all(g is not x for x in globals_list):
                    globals_list.append(g)
    return found, globals_list, constants


def _interface_attributes(cls):
    """The attributes a module class annotates with a @torch.jit.interface type (`impl: Iface`): calls
    through them stay calls (Note [Interface calls] in script/passes/inline_calls.h)."""
    import sys
    out = set()
    for klass in cls.__mro__:
        g = getattr(sys.modules.get(klass.__module__), "__dict__", {})
        for name, ann in klass.__dict__.get("__annotations__", {}).items():
            if isinstance(ann, str):
                ann = g.get(ann)
            if isinstance(ann, type) and ann.__dict__.get("__ampjit_interface__"):
                out.add(name)
    return out


def _build(mod, memo):
    """The description _C._script_module compiles from (a dict, see script_bindings.cpp) and the
    runtime _Module (in the description as "_c") for `mod` and, recursively, its submodules."""
    from ..nn import Module
    if id(mod) in memo:
        return memo[id(mod)]
    scripted = mod.__dict__.get("_desc")
    if scripted is not None and _script_module_class is not None and isinstance(mod, _script_module_class):
        # an already scripted submodule: its own description (and runtime object), as torch reuses
        # a ScriptModule assigned into a module it scripts
        memo[id(mod)] = scripted
        return scripted
    c = _C._Module(_torch_class_name(type(mod)))
    desc = {"class_name": c._class_name, "attrs": [], "methods": [], "resolver": None, "is_sequence": False,
            "sequence": [], "_c": c, "_module": mod, "_plain": {}}
    memo[id(mod)] = desc
    methods, globals_list, constants = _module_methods(mod)
    desc["_forward_fn"] = methods.get("forward")
    attrs = desc["attrs"]

    attrs.append(("training", "value", mod.training, False))
    c._set_attr("training", mod.training)
    for store in (mod._parameters, mod._buffers):
        for name, t in store.items():
            attrs.append((name, "tensor", None, False) if t is not None else (name, "value", None, False))
            c._set_attr(name, t)
    interfaces = _interface_attributes(type(mod))
    for name, sub in mod._modules.items():
        if sub is None:
            attrs.append((name, "value", None, False))
            c._set_attr(name, None)
            continue
        sd = _build(sub, memo)
        attrs.append((name, "module", sd, False))
        c._set_attr(name, sd["_c"])
        if name in interfaces:
            desc.setdefault("interfaces", []).append(name)
    from ..nn import ModuleDict
    if isinstance(mod, _sequence_types()) or isinstance(mod, ModuleDict):
        desc["is_sequence"] = not isinstance(mod, ModuleDict)
        desc["is_dict"] = isinstance(mod, ModuleDict)
        desc["sequence"] = [n for n, s in mod._modules.items() if s is not None]
    seen = set(a[0] for a in attrs)
    values = [(k, v) for k, v in vars(mod).items() if k not in _MODULE_INTERNALS]
    for name in sorted(constants):
        if name not in vars(mod) and hasattr(type(mod), name):
            values.append((name, getattr(type(mod), name)))
    for name, v in values:
        # plain values, and tensors that are neither parameters nor buffers (`self.x = torch.rand(3)`),
        # as torch's attributes
        if name in seen or isinstance(v, Module) or not (_plain_value(v, tensors=True) or _is_tensor(v)):
            continue
        seen.add(name)
        is_const = name in constants
        attrs.append((name, "value", v, is_const))
        desc["_plain"][name] = is_const
        if not is_const:
            c._set_attr(name, v)

    # The methods forward reaches (by `self.name` references), with their sources.
    if "forward" in methods:
        todo, chosen = ["forward"], []
        while todo:
            name = todo.pop()
            if name in chosen:
                continue
            chosen.append(name)
            fn = methods[name]
            keep = False
            if getattr(fn, "__script_unsupported", None) and hasattr(fn, "__wrapped__"):
                # an @autocast-decorated method: its own source, decorator included, for the
                # compiler to decide on (ignored with a warning in torchscript semantics)
                fn, keep = inspect.unwrap(fn), True
            text, filename, first_line = _function_source(fn, keep_decorators=keep)
            modifier = getattr(fn, "_ampjit_jit_modifier", None)
            if modifier == "unused":
                text = _unused_stub(text)
            elif modifier == "ignore":
                raise CompileError("{}.{} is decorated with @torch.jit.ignore: ampjit's compiled code cannot call "
                                   "back into Python (use @torch.jit.unused, or script the function)".format(
                                       type(mod).__qualname__, name))
            desc["methods"].append((name, text, filename, first_line))
            todo.extend(r for r in _self_references(text) if r in methods and r not in chosen)
            from . import _get_overloaded_methods
            for i, decl in enumerate(_get_overloaded_methods(fn) or ()):
                mangled = "{}__{}".format(name, i)
                otext, ofirst = _overload_text(text, first_line, decl)
                desc["methods"].append((mangled, otext, filename, ofirst))
                desc.setdefault("overloads", {}).setdefault(name, []).append(mangled)
    closure = {}
    for fn in methods.values():
        if fn.__closure__:
            closure.update(_Resolver.for_function(fn).closure)
    desc["resolver"] = _Resolver(globals_list, closure)
    return desc


def _overload_text(text, first_line, decl):
    """The method `text` (starting at line `first_line`) under the signature of the overload
    declaration `decl`: the declaration's `def` lines, then the implementation's body, whose lines
    keep their numbers. Returns (text, first line)."""
    dtext, _, _ = _function_source(decl)
    dnode = ast.parse(textwrap.dedent(dtext)).body[0]
    inode = ast.parse(textwrap.dedent(text)).body[0]
    if inode.body[0].lineno == inode.lineno or dnode.body[0].lineno == dnode.lineno:
        raise CompileError("{}: an overloaded method and its declarations need their bodies on lines of their "
                           "own".format(decl.__qualname__))
    dlines, ilines = dtext.splitlines(), text.splitlines()
    header = dlines[dnode.lineno - 1:dnode.body[0].lineno - 1]  # without the decorators
    body = ilines[inode.body[0].lineno - 1:]
    return "\n".join(header + body) + "\n", first_line + inode.body[0].lineno - 1 - len(header)


# Note [Unused methods]
# A method marked @torch.jit.unused compiles as torch compiles it: its signature, with a body that
# raises. The header lines are kept as written, so positions in the file stay right.
def _unused_stub(text):
    dedented = textwrap.dedent(text)
    lines = text.splitlines()
    shift = len(lines[0]) - len(dedented.splitlines()[0])  # the method's indentation in its class
    fn = ast.parse(dedented).body[0]
    first = fn.body[0]
    raise_line = "raise Exception(\"{}\")\n".format(_UNUSED_MESSAGE)
    if first.lineno == fn.lineno:  # `def f(self): return x` on one line
        header = lines[fn.lineno - 1][:first.col_offset + shift]
        return header.rstrip() + "\n" + " " * (shift + fn.col_offset + 4) + raise_line
    return "\n".join(lines[:first.lineno - 1]) + "\n" + " " * (first.col_offset + shift) + raise_line


_UNUSED_MESSAGE = "This Python function is annotated to be ignored and cannot be run"


def _sequence_types():
    from ..nn import ModuleList, Sequential
    return (Sequential, ModuleList)


_script_module_class = None


def _make_script_module_class():
    from ..nn import Module

    class RecursiveScriptModule(compiled_module_base()):
        """A scripted module: an nn.Module sharing the original's parameters, buffers and
        submodules (scripted in turn), whose ``forward`` runs the compiled graph. The graph reads
        weights and plain attributes from the runtime module object at call time, so assigning a
        parameter, ``train()``/``eval()`` and ``to()`` are seen by the next call."""

        def __init__(self, desc, memo):
            Module.__init__(self)
            mod = desc["_module"]
            object.__setattr__(self, "_c", desc["_c"])
            object.__setattr__(self, "_desc", desc)
            object.__setattr__(self, "_forward", None)
            object.__setattr__(self, "original_name", type(mod).__name__)
            memo[id(desc)] = self
            object.__setattr__(self, "training", mod.training)
            for name, p in mod._parameters.items():
                self._parameters[name] = p
            for name, b in mod._buffers.items():
                self._buffers[name] = b
            for name, kind, value, _ in desc["attrs"]:
                if kind == "module":
                    sub = memo.get(id(value)) or RecursiveScriptModule(value, memo)
                    self._modules[name] = sub
                elif name in mod._modules:
                    self._modules[name] = None
            for name in desc["_plain"]:
                object.__setattr__(self, name, getattr(mod, name))

        # -- the compiled forward --

        def _forward_function(self):
            fwd = self.__dict__["_forward"]
            if fwd is None:
                desc = self.__dict__["_desc"]
                c = _C._script_module(desc, desc["_c"], desc["_semantics"])
                mod_forward = desc["_forward_fn"]
                names, defaults = _signature(mod_forward, skip_self=True) if mod_forward else ((), {})
                fwd = _BoundForward(c, "{}.forward".format(desc["class_name"]), names, defaults)
                object.__setattr__(self, "_forward", fwd)
            return fwd

        def _get_name(self):
            return "RecursiveScriptModule"

        def extra_repr(self):
            return "original_name={}".format(self.original_name)

        # -- nn.Sequential / nn.ModuleList --

        def _sequence(self):
            if not self.__dict__["_desc"]["is_sequence"]:
                raise TypeError("'{}' is not a Sequential or ModuleList".format(self.original_name))
            return [self._modules[n] for n in self.__dict__["_desc"]["sequence"]]

        def __getitem__(self, idx):
            return self._sequence()[idx]

        def __len__(self):
            return len(self._sequence())

        def __iter__(self):
            return iter(self._sequence())

        def __bool__(self):
            return True

        # -- keeping the runtime object in step (the base's __setattr__) --

        def _plain_attributes(self):
            return self.__dict__.get("_desc", {}).get("_plain", {})

    return RecursiveScriptModule


class _BoundForward(_CompiledFunction):
    """A module's compiled forward, bound to its runtime object."""

    def __init__(self, c, qualified_name, names, defaults):
        ScriptFunction.__init__(self, c, qualified_name)
        self.__name__ = self.name
        self._arg_names = names
        self._defaults = defaults
        self._nargs = len(names)


def _script_module(mod, semantics):
    global _script_module_class
    if _script_module_class is None:
        _script_module_class = _make_script_module_class()
    memo = {}
    desc = _build(mod, memo)
    for d in memo.values():
        d["_semantics"] = semantics
    if "forward" not in dict((m[0], m) for m in desc["methods"]):
        raise CompileError("'{}' has no forward method to script".format(type(mod).__name__))
    scripted = _script_module_class(desc, {})
    scripted._forward_function()  # compile now: errors belong to script()
    return scripted


# ---- script -------------------------------------------------------------------------------------------

def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None, *, autocast_semantics=None):
    """Compiles a function or an nn.Module with the script compiler, as torch.jit.script: a
    function becomes a ScriptFunction (compiled once, cached on the function), a module a
    RecursiveScriptModule sharing its parameters. Source that does not compile raises
    CompileError (a RuntimeError) pointing at the user's file:line:col.

    ``autocast_semantics`` (an ampjit extension): "torchscript" or "eager" pins the compiled
    functions to that semantics (Note [Autocast semantics] in runtime/autocast/semantics.h); None (the
    default) leaves them to the process-wide setting at call time. An ``@autocast`` decorator is
    compiled with the semantics in force at compile time: torch's error, or a region."""
    from ..nn import Module
    if autocast_semantics is not None:
        autocast_semantics = _check_semantics(autocast_semantics)
    if isinstance(obj, (ScriptFunction, ScriptModule)):
        return obj
    if isinstance(obj, Module):
        return _script_module(obj, autocast_semantics)
    if isinstance(obj, type):  # a script class: compiled now (errors here), the class itself returned
        desc = _class_descriptor(obj)
        if desc[0] != "class":
            raise CompileError(desc[1])
        _C._script_class(desc, autocast_semantics)
        return obj
    if isinstance(obj, types.MethodType):
        raise NotImplementedError("ampjit.jit.script of a bound method is not supported; script the module")
    if isinstance(obj, types.FunctionType):
        return _script_function(obj, autocast_semantics)
    unsupported = getattr(obj, "__script_unsupported", None)
    if unsupported is not None:
        raise CompileError("TorchScript error: " + unsupported)
    raise NotImplementedError("ampjit.jit.script cannot compile an object of type '{}'".format(type(obj).__name__))
