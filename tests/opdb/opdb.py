"""PyTorch 1.13's operator database as ampjit's yardstick: a differential harness.

Note [The operator database harness]
`op_db` (torch.testing._internal.common_methods_invocations, shipped in Debian's python3-torch) holds
one OpInfo per operator: the callables of its variants (function, method, in-place, aliases), the
dtypes it takes on the CPU, and a generator of sample inputs per dtype. This harness runs every
sample through torch 1.13 and through ampjit in the same process and compares:
  - each variant of the OpInfo is translated to ampjit by name: a torch function, method or module
    becomes the ampjit object at the same path (`torch.linalg.det` -> `ampjit.linalg.det`); a Python
    function of torch's test files (a lambda wrapping an op) is rebound to ampjit's namespaces
    (its globals and closure translated), so it runs unchanged on ampjit;
  - inputs are copied with their sizes, strides and storage offsets (a tensor passed twice is one
    copy); dtypes, devices, sizes and memory formats become ampjit's; a torch layer passed as an
    argument becomes the ampjit layer of its name, with its attributes and tensors translated;
  - results must have torch's structure, dtypes and shapes exactly, and values within torch's own
    default tolerances for the dtype (torch.testing.assert_close), NaNs equal;
  - an in-place variant must return its input and leave torch's values in it;
  - where torch raises, ampjit must raise the same class (NotImplementedError never counts as
    another class: it is what ampjit raises for what it lacks);
  - a random op (one whose torch results change with the seed, found by running it under two seeds)
    is compared by structure, dtype and shape only; so is each sample of an op torch's tests wrap in
    wrapper_set_seed whose results change with the seed once that wrapper's fixed seed is lifted;
  - `error_inputs` (every sample torch's database says must fail) must raise torch's class.
A cell is an (OpInfo, dtype): it passes when every sample of every variant passes. Complex dtypes,
complex results, sparse layouts and CUDA-only ops are out of scope (DESIGN.md, docs/ops.md).

Usage (Debian's /usr/bin/python3, PYTHONPATH=build/python):
  python3 tests/opdb/opdb.py                      # every op, every dtype: a summary
  python3 tests/opdb/opdb.py --ops add,sort -v    # some ops, each failure printed
  python3 tests/opdb/opdb.py --json results.json --doc docs/ops.md
"""
import argparse
import builtins
import collections
import contextlib
import functools
import json
import math
import os
import signal
import sys
import time
import types
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "shims"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import ampjit  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db  # noqa: E402
    from torch.utils._mode_utils import no_dispatch as _no_dispatch  # noqa: E402

# The dtypes of the yardstick, in report order (complex and quantized dtypes are out of scope).
DTYPES = ["float64", "float32", "bfloat16", "float16", "int64", "int32", "int16", "int8", "uint8",
          "bool"]

# Namespaces whose names ampjit mirrors, searched in this order for a torch object's public path.
_NAMESPACES = ["torch", "torch.nn.functional", "torch.linalg", "torch.fft", "torch.special",
               "torch.masked", "torch.nn", "torch._C._nn", "torch.Tensor", "torch.autograd",
               "torch.nn.init"]


class Missing(Exception):
    """ampjit has no object at this path."""


class OutOfScope(Exception):
    """The sample needs what the yardstick leaves out (complex, sparse, CUDA)."""


class Timeout(Exception):
    pass


class _MissingObject:
    """Stands for an ampjit name that does not exist; using it raises Missing(path)."""

    def __init__(self, path):
        self._path = path

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _MissingObject(self._path + "." + name)

    def __call__(self, *args, **kwargs):
        raise Missing(self._path)

    def __repr__(self):
        return "<missing {}>".format(self._path)


def _resolve(root, dotted):
    obj = root
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@functools.lru_cache(maxsize=None)
def _torch_paths():
    """id(torch object) -> its public path ("torch.add", "torch.Tensor.add", ...)."""
    paths, later = {}, []
    for ns in _NAMESPACES:
        try:
            mod = _resolve(torch, ns[len("torch."):]) if ns != "torch" else torch
        except AttributeError:
            continue
        paths.setdefault(id(mod), ns)
        for name in dir(mod):
            if name.startswith("_") and not (ns == "torch.Tensor" and name.startswith("__")) \
                    and ns != "torch._C._nn":
                continue
            try:
                obj = getattr(mod, name)
            except Exception:
                continue
            if isinstance(obj, (int, float, str, bool, torch.dtype)):
                continue
            # A name that is not the object's own (a leftover loop variable such as torch.obj)
            # only counts when no namespace has it under its own name.
            if getattr(obj, "__name__", name) != name:
                later.append((id(obj), ns + "." + name))
                continue
            paths.setdefault(id(obj), ns + "." + name)
    for key, path in later:
        paths.setdefault(key, path)
    return paths


def _ampjit_at(path):
    """The ampjit object at torch's `path`, or a _MissingObject."""
    rest = path[len("torch"):].lstrip(".")
    obj = ampjit
    for part in rest.split(".") if rest else []:
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return _MissingObject("torch." + rest)
    return obj


_DTYPE_NAMES = {getattr(torch, n): n for n in DTYPES}


def ampjit_dtype(dt):
    if dt.is_complex:
        raise OutOfScope("complex dtype")
    name = _DTYPE_NAMES.get(dt)
    if name is None:
        raise OutOfScope("dtype {}".format(dt))
    return getattr(ampjit, name)


def to_ampjit_tensor(t):
    """A copy of torch tensor `t` with its sizes, strides and storage offset."""
    if t.is_sparse or t.layout != torch.strided:
        raise OutOfScope("sparse layout")
    if t.is_complex():
        raise OutOfScope("complex tensor")
    if t.is_quantized:
        raise OutOfScope("quantized tensor")
    if t.device.type != "cpu":
        raise OutOfScope("a {} tensor".format(t.device.type))
    t = t.detach()
    dt = ampjit_dtype(t.dtype)
    n = t.storage().size()
    flat = torch.as_strided(t, (n,), (1,), 0)
    if t.dtype == torch.bfloat16:
        base = ampjit.from_numpy(flat.float().numpy().copy()).to(dt)
    else:
        base = ampjit.from_numpy(flat.numpy().copy())
    if t.is_contiguous() and t.storage_offset() == 0 and n == t.numel():
        out = base.reshape(tuple(t.shape))
    else:
        out = ampjit.as_strided(base, tuple(t.shape), tuple(t.stride()), t.storage_offset())
    return out


def to_torch_tensor(a):
    """A torch copy of ampjit tensor `a` (values only)."""
    name = repr(a.dtype)[len("torch."):]
    if name in ("bfloat16",):
        return torch.from_numpy(a.detach().float().numpy().copy()).to(torch.bfloat16)
    return torch.from_numpy(np.array(a.detach().numpy(), copy=True)).to(getattr(torch, name)) \
        if a.dim() else torch.tensor(a.detach().numpy().item(), dtype=getattr(torch, name))


class Translator:
    """torch objects -> ampjit objects (Note [The operator database harness])."""

    def __init__(self):
        self._memo = {}
        self._keep = []

    def value(self, v):
        """A sample argument: tensors copied, containers walked, torch objects mapped. A tensor
        that appears twice in a sample (kthvalue(t, 5, out=(t, i))) becomes one ampjit tensor, so
        the sample's aliasing is kept."""
        if isinstance(v, torch.Tensor):
            key = ("tensor", id(v))
            if key not in self._memo:
                self._memo[key] = to_ampjit_tensor(v)
                self._keep.append(v)
            return self._memo[key]
        if isinstance(v, torch.Size):
            return tuple(v)
        if isinstance(v, tuple) and hasattr(v, "_fields"):
            return type(v)(*(self.value(x) for x in v))
        if isinstance(v, (list, tuple)):
            return type(v)(self.value(x) for x in v)
        if isinstance(v, dict):
            return {k: self.value(x) for k, x in v.items()}
        if isinstance(v, torch.Generator):
            raise OutOfScope("a torch.Generator argument")
        return self.obj(v)

    def obj(self, v):
        """A non-tensor object: a callable, a module, a dtype, a device, ..."""
        if v is None or isinstance(v, (bool, int, float, str, complex, bytes, range, slice)) \
                or v is Ellipsis:
            if isinstance(v, complex):
                raise OutOfScope("a complex number")
            return v
        if isinstance(v, torch.dtype):
            return ampjit_dtype(v)
        if isinstance(v, torch.device):
            if v.type != "cpu":
                raise OutOfScope("device {}".format(v))
            return ampjit.device(str(v)) if hasattr(ampjit, "device") else str(v)
        if isinstance(v, torch.memory_format):
            return _ampjit_at("torch." + str(v).split(".")[-1])
        if isinstance(v, torch.layout):
            if v != torch.strided:
                raise OutOfScope("layout {}".format(v))
            return _ampjit_at("torch.strided")
        key = id(v)
        if key in self._memo:
            return self._memo[key]
        out = self._translate(v)
        self._memo[key] = out
        self._keep.append(v)
        return out

    def _translate(self, v):
        paths = _torch_paths()
        if id(v) in paths:
            return _ampjit_at(paths[id(v)])
        if isinstance(v, torch._ops.OpOverload):  # torch.ops.aten.slice.Tensor
            packet = v.overloadpacket
            return _ampjit_at("torch.ops.{}.{}.{}".format(v.namespace, packet.__name__,
                                                          v._overloadname))
        if isinstance(v, torch._ops.OpOverloadPacket):
            return _ampjit_at("torch.ops.{}".format(v._qualified_op_name.replace("::", ".")))
        if v is _no_dispatch:  # torch's test helpers step around torch's own dispatch modes
            return contextlib.nullcontext
        if isinstance(v, torch.nn.Module):  # a layer passed as an argument (a distance_function)
            return self._module(v)
        if isinstance(v, types.ModuleType):
            name = v.__name__
            if name == "torch" or name.startswith("torch.") and not name.startswith("torch.testing"):
                return _ampjit_at(name)
            return v
        if isinstance(v, functools.partial):
            return functools.partial(self.obj(v.func), *(self.value(a) for a in v.args),
                                     **{k: self.value(a) for k, a in v.keywords.items()})
        if isinstance(v, types.FunctionType):
            mod = getattr(v, "__module__", "") or ""
            if mod.startswith("torch.testing") or mod == "__main__":
                return self._rebind(v)
            if mod.startswith("torch"):
                qual = v.__qualname__
                if qual.startswith("Tensor."):
                    return _ampjit_at("torch." + qual)
                return _MissingObject("{}.{}".format(mod, qual))
            return v
        if isinstance(v, (types.BuiltinFunctionType, types.BuiltinMethodType)) or \
                type(v).__name__ in ("method_descriptor", "wrapper_descriptor", "getset_descriptor"):
            mod = getattr(v, "__module__", None) or ""
            owner = getattr(v, "__objclass__", None)
            if owner is not None and owner.__name__ == "_TensorBase":
                return _ampjit_at("torch.Tensor." + v.__name__)
            if mod.startswith("torch"):
                return _MissingObject("{}.{}".format(mod, getattr(v, "__name__", "?")))
            return v
        if isinstance(v, type):
            mod = v.__module__ or ""
            if mod.startswith("torch") and not mod.startswith("torch.testing"):
                return _MissingObject("{}.{}".format(mod, v.__qualname__))
            return v
        if isinstance(v, (list, tuple)):
            return type(v)(self.obj(x) if not isinstance(x, torch.Tensor) else x for x in v)
        if type(v).__module__.startswith("torch.cuda"):
            raise OutOfScope("a CUDA-only callable")
        return v

    def _module(self, m):
        """torch layer `m` as the ampjit layer of the same name: its public attributes, parameters,
        buffers and submodules translated, no constructor run."""
        cls = _ampjit_at("torch.nn." + type(m).__name__)
        if not isinstance(cls, type):
            return _MissingObject("torch.nn." + type(m).__name__)
        out = cls.__new__(cls)
        ampjit.nn.Module.__init__(out)
        for name, x in vars(m).items():
            if not name.startswith("_"):
                setattr(out, name, self.value(x))
        for name, p in m._parameters.items():
            setattr(out, name, None if p is None else
                    ampjit.nn.Parameter(self.value(p.detach()), p.requires_grad))
        for name, b in m._buffers.items():
            out.register_buffer(name, None if b is None else self.value(b))
        for name, sub in m._modules.items():
            setattr(out, name, self.obj(sub))
        return out

    def _rebind(self, fn):
        """`fn` with its globals and closure translated: the same code on ampjit's namespaces."""
        names = set()
        stack = [fn.__code__]
        while stack:
            code = stack.pop()
            names.update(code.co_names)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        g = {"__builtins__": fn.__globals__.get("__builtins__", builtins)}
        for n in names:
            if n in fn.__globals__:
                g[n] = self.obj(fn.__globals__[n])
        closure = None
        if fn.__closure__:
            cells = []
            for c in fn.__closure__:
                try:
                    contents = c.cell_contents
                except ValueError:
                    cells.append(types.CellType())
                    continue
                cells.append(types.CellType(self.value(contents)))
            closure = tuple(cells)
        defaults = tuple(self.value(d) for d in fn.__defaults__) if fn.__defaults__ else None
        new = types.FunctionType(fn.__code__, g, fn.__name__, defaults, closure)
        if fn.__kwdefaults__:
            new.__kwdefaults__ = {k: self.value(d) for k, d in fn.__kwdefaults__.items()}
        return new


# ---- comparison ----------------------------------------------------------------------------------

class Mismatch(Exception):
    pass


def _structure_error(what, expected, actual):
    return Mismatch("{}: expected {}, got {}".format(what, expected, actual))


class ValueMismatch(Mismatch):
    """Structure, dtypes and shapes agree; some values are not within torch's tolerance."""


def _within_reference(expected, actual, reference):
    """Whether ampjit's values are as near the float64 result as torch's are: |a - r| <=
    2 |e - r| + atol + rtol |r| elementwise, torch's default (rtol, atol) for the dtype."""
    e = expected.detach().double()
    a = to_torch_tensor(actual).double()
    r = reference.detach().double()
    if r.shape != e.shape:
        return False
    rtol, atol = torch.testing._comparison.default_tolerances(expected)
    nan = torch.isnan(r) | torch.isnan(e)
    ok = (a - r).abs() <= 2 * (e - r).abs() + atol + rtol * r.abs()
    ok = ok | (a == r) | (nan & (torch.isnan(a) | torch.isnan(e)))
    return bool(ok.all())


def compare(expected, actual, random_op, where="result", reference=None):
    """Raises Mismatch unless ampjit's `actual` matches torch's `expected`: within torch's default
    tolerance, or (given torch's float64 `reference`) as near it as torch's result is."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(actual, ampjit.Tensor):
            raise _structure_error(where, "a tensor", type(actual).__name__)
        if expected.is_complex():
            raise OutOfScope("complex result")
        edt = str(expected.dtype)[len("torch."):]
        adt = repr(actual.dtype)[len("torch."):]
        if edt != adt:
            raise _structure_error(where + " dtype", edt, adt)
        if tuple(expected.shape) != tuple(actual.shape):
            raise _structure_error(where + " shape", tuple(expected.shape), tuple(actual.shape))
        if random_op:
            return
        got = to_torch_tensor(actual)
        try:
            torch.testing.assert_close(got, expected.detach(), equal_nan=True, check_stride=False,
                                       check_device=False)
        except AssertionError as e:
            if isinstance(reference, torch.Tensor) and expected.is_floating_point() and \
                    _within_reference(expected, actual, reference):
                return
            lines = [ln for ln in str(e).splitlines() if ln.strip()]
            raise ValueMismatch("{}: {}".format(where, " ".join(lines[:4])))
        return
    if isinstance(expected, (tuple, list)) and not isinstance(expected, torch.Size):
        if not isinstance(actual, (tuple, list)):
            raise _structure_error(where, type(expected).__name__, type(actual).__name__)
        if len(expected) != len(actual):
            raise _structure_error(where + " length", len(expected), len(actual))
        refs = reference if isinstance(reference, (tuple, list)) and \
            len(reference) == len(expected) else [None] * len(expected)
        for i, (e, a, r) in enumerate(zip(expected, actual, refs)):
            compare(e, a, random_op, "{}[{}]".format(where, i), r)
        return
    if isinstance(expected, torch.Size):
        if tuple(expected) != tuple(actual):
            raise _structure_error(where, tuple(expected), actual)
        return
    if isinstance(expected, builtins.bool) or expected is None or isinstance(expected, str):
        if expected != actual or type(actual) is not type(expected):
            raise _structure_error(where, repr(expected), repr(actual))
        return
    if isinstance(expected, (int, float)):
        if not isinstance(actual, (int, float)) or isinstance(actual, builtins.bool):
            raise _structure_error(where, type(expected).__name__, type(actual).__name__)
        if random_op:
            return
        if math.isnan(expected) and math.isnan(actual):
            return
        if not math.isclose(expected, actual, rel_tol=1.3e-6, abs_tol=1e-5):
            if isinstance(reference, (int, float)) and \
                    abs(actual - reference) <= 2 * abs(expected - reference) + 1e-5 + \
                    1.3e-6 * abs(reference):
                return
            raise ValueMismatch("{}: expected {}, got {}".format(where, expected, actual))
        return
    if isinstance(expected, torch.dtype):
        if repr(actual) != str(expected):
            raise _structure_error(where, expected, actual)
        return
    raise Mismatch("{}: cannot compare a {}".format(where, type(expected).__name__))


# ---- running one OpInfo --------------------------------------------------------------------------

def _alarm(_signum, _frame):
    raise Timeout()


def _call(fn, inp, args, kwargs, timeout):
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        return fn(inp, *args, **kwargs)
    finally:
        signal.alarm(0)


def _clone_sample(s):
    clones = {}  # a tensor passed twice is cloned once, keeping the sample's aliasing

    def c(v):
        if isinstance(v, torch.Tensor):
            if v.layout != torch.strided:
                return v
            if id(v) not in clones:
                clones[id(v)] = v.clone()
            return clones[id(v)]
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            return type(v)(c(x) for x in v)
        return v
    return c(s.input), c(s.args), {k: c(v) for k, v in s.kwargs.items()}


def _is_missing_error(e):
    return isinstance(e, (Missing, NotImplementedError)) or \
        (isinstance(e, AttributeError) and "ampjit" in str(e)) or \
        (isinstance(e, AttributeError) and "Tensor" in str(e))


def _describe(e):
    msg = str(e).strip().splitlines()
    return "{}: {}".format(type(e).__name__, msg[0][:160] if msg else "")


def variants_of(op):
    """(kind, torch callable) for each variant the OpInfo names, aliases included."""
    out, seen = [], set()

    def add(kind, fn):
        if fn is not None and id(fn) not in seen:
            seen.add(id(fn))
            out.append((kind, fn))

    add("function", op.op)
    add("method", op.method_variant)
    add("inplace", op.inplace_variant)
    for a in op.aliases:
        add("alias " + a.name, a.op)
        add("alias {} method".format(a.name), a.method_variant)
        add("alias {} inplace".format(a.name), a.inplace_variant)
    return out


def _outputs_equal(x, y):
    if isinstance(x, torch.Tensor):
        return isinstance(y, torch.Tensor) and x.shape == y.shape and \
            torch.equal(x.detach(), y.detach()) if x.dtype == y.dtype and not x.is_complex() \
            else False
    if isinstance(x, (list, tuple)):
        return isinstance(y, (list, tuple)) and len(x) == len(y) and \
            all(_outputs_equal(a, b) for a, b in zip(x, y))
    return x == y


def _is_random(op, sample, fn, timeout):
    """Whether torch gives other results under another seed (the op draws random numbers)."""
    try:
        torch.manual_seed(0)
        a = _call(fn, *_clone_sample(sample), timeout)
        torch.manual_seed(1)
        b = _call(fn, *_clone_sample(sample), timeout)
    except Exception:
        return False
    try:
        return not _outputs_equal(a, b)
    except Exception:
        return False


def _has_complex(v):
    if isinstance(v, torch.Tensor):
        return v.is_complex()
    if isinstance(v, (list, tuple)):
        return any(_has_complex(x) for x in v)
    return isinstance(v, complex)
def _unseeded(fn):
    """`fn` with torch's `wrapper_set_seed` replaced by a plain call, or None when `fn` does not call
    it. The OpInfos of random ops (dropout, rrelu, bernoulli, ...) wrap them in wrapper_set_seed,
    which seeds torch with 42 inside every call so that torch's own tests see the same draws twice;
    ampjit cannot give torch's draws, so the harness asks, sample by sample, whether the draws matter
    (_is_random on the unseeded call) and compares the samples where they do as random ones."""
    if not isinstance(fn, types.FunctionType) or "wrapper_set_seed" not in fn.__code__.co_names:
        return None
    g = dict(fn.__globals__)
    g["wrapper_set_seed"] = lambda op, *args, **kwargs: op(*args, **kwargs)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def run_sample(kind, tfn, afn, sample, random_op, timeout):
    """None when ampjit matches torch on this sample, else (status, detail)."""
    inplace = kind.endswith("inplace")
    tin, targs, tkwargs = _clone_sample(sample)
    torch.manual_seed(0)
    try:
        expected = _call(tfn, tin, targs, tkwargs, timeout)
        terr = None
    except Timeout:
        return ("torch-timeout", "")
    except Exception as e:  # torch raises: ampjit must raise the same class
        terr = e
    if terr is None and _has_complex(expected):
        return ("out-of-scope", "complex result")
    tr = Translator()
    try:
        ain = tr.value(sample.input)
        aargs = tr.value(sample.args)
        akwargs = tr.value(sample.kwargs)
    except OutOfScope as e:
        return ("out-of-scope", str(e))
    except Exception as e:  # ampjit could not take the inputs
        return ("raises", "converting the inputs: " + _describe(e))
    ampjit.manual_seed(0)
    try:
        actual = _call(afn, ain, aargs, akwargs, timeout)
        aerr = None
    except OutOfScope as e:
        return ("out-of-scope", str(e))
    except Timeout:
        return ("timeout", "")
    except Exception as e:
        aerr = e
    if terr is not None:
        if aerr is None:
            return ("no-error", "torch raises " + _describe(terr))
        if isinstance(aerr, type(terr)) and not (isinstance(aerr, NotImplementedError) and
                                                 not isinstance(terr, NotImplementedError)):
            return None
        if _is_missing_error(aerr):
            return ("missing", _describe(aerr))
        return ("wrong-error", "torch raises {}, ampjit {}".format(type(terr).__name__,
                                                                   _describe(aerr)))
    if aerr is not None:
        if _is_missing_error(aerr):
            return ("missing", _describe(aerr))
        return ("raises", _describe(aerr))
    try:
        try:
            compare(expected, actual, random_op)
        except ValueMismatch:
            reference = _float64_reference(tfn, sample, timeout)
            if reference is None:
                raise
            try:
                compare(expected, actual, random_op, reference=reference)
            except ValueMismatch:
                # an integer input the op computes on in floating point (torch.fft.hfft2 of an
                # int64 tensor, in float32): the reference takes that input in float64 too
                if not _is_integer_tensor(sample.input):
                    raise
                reference = _float64_reference(tfn, sample, timeout, integer_input=True)
                if reference is None:
                    raise
                compare(expected, actual, random_op, reference=reference)
        if inplace:
            if not isinstance(actual, ampjit.Tensor) or actual.data_ptr() != ain.data_ptr() or \
                    tuple(actual.shape) != tuple(ain.shape):
                raise Mismatch("the in-place variant does not return its input")
            compare(tin, ain, random_op, "the input after the in-place op",
                    _float64_reference(tfn, sample, timeout) if tin.is_floating_point() else None)
    except OutOfScope as e:
        return ("out-of-scope", str(e))
    except Mismatch as e:
        return ("wrong", str(e))
    return None


def _is_integer_tensor(v):
    return isinstance(v, torch.Tensor) and not v.is_floating_point() and not v.is_complex()


def _float64_reference(tfn, sample, timeout, integer_input=False):
    """torch's result on the sample with every floating tensor in float64 (and, with
    `integer_input`, the sample's integer or bool input tensor too), or None."""
    def up(v):
        if isinstance(v, torch.Tensor):
            return v.detach().to(torch.float64, copy=True) if v.is_floating_point() else v.clone()
        if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
            return type(v)(up(x) for x in v)
        return v
    inp = sample.input.detach().to(torch.float64) if integer_input else up(sample.input)
    try:
        torch.manual_seed(0)
        return _call(tfn, inp, up(sample.args),
                     {k: up(v) for k, v in sample.kwargs.items()}, timeout)
    except Exception:
        return None


# The order in which one failure is chosen to describe a cell.
_SEVERITY = ["crash", "missing", "raises", "wrong", "wrong-error", "no-error", "timeout"]


def _uninitialized(fn):
    """Whether torch documents the op's result as uninitialized memory (torch.empty and kin):
    such results are compared by structure, dtype and shape only."""
    return "uninitialized" in (getattr(fn, "__doc__", None) or "")


def run_cell(op, dtype_name, timeout=20, max_samples=None):
    """One (OpInfo, dtype): {"status": "pass" | a failure kind | "out-of-scope", "detail": str,
    "samples": n, "variants": {kind: status}}."""
    dtype = getattr(torch, dtype_name)
    tr = Translator()
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    except Exception as e:
        return {"status": "no-samples", "detail": _describe(e), "samples": 0, "variants": {}}
    if max_samples:
        samples = samples[:max_samples]
    variants = variants_of(op)
    if not variants:
        return {"status": "out-of-scope", "detail": "no variant", "samples": len(samples),
                "variants": {}}
    random_op = bool(samples) and (any(_uninitialized(fn) for _, fn in variants) or
                                   _is_random(op, samples[0], variants[0][1], timeout))
    result = {"status": "pass", "detail": "", "samples": len(samples), "variants": {},
              "random": random_op}
    failures = []
    scope = None
    checked = 0  # samples compared (not out of scope)
    for kind, tfn in variants:
        try:
            afn = tr.obj(tfn)
        except OutOfScope as e:
            scope = str(e)
            continue
        status = "pass"
        in_scope = 0
        unseeded = None if random_op else _unseeded(tfn)
        for s in samples:
            random_sample = random_op or (unseeded is not None and
                                          _is_random(op, s, unseeded, timeout))
            r = run_sample(kind, tfn, afn, s, random_sample, timeout)
            if r is None:
                checked += 1
                in_scope += 1
                continue
            if r[0] == "out-of-scope":
                scope = r[1]
                continue
            status = r[0]
            failures.append((kind, r[0], r[1]))
            break
        # a variant none of whose samples is in scope passes nothing
        result["variants"][kind] = "out-of-scope" if status == "pass" and samples and \
            not in_scope else status
    if failures:
        failures.sort(key=lambda f: _SEVERITY.index(f[1]) if f[1] in _SEVERITY else 99)
        kind, status, detail = failures[0]
        result["status"] = status
        result["detail"] = "{}: {}".format(kind, detail)
    elif scope and checked == 0:  # nothing in scope was compared: complex, sparse, CUDA only
        result["status"] = "out-of-scope"
        result["detail"] = scope
    return result


def run_errors(op, timeout=20):
    """The OpInfo's error_inputs: (passed, total, first failure)."""
    tr = Translator()
    try:
        errors = list(op.error_inputs("cpu"))
    except Exception:
        return 0, 0, ""
    passed, first = 0, ""
    afn = None
    try:
        afn = tr.obj(op.op)
    except OutOfScope:
        return 0, 0, ""
    total = 0
    for ei in errors:
        s = ei.sample_input
        try:
            ain, aargs, akwargs = tr.value(s.input), tr.value(s.args), tr.value(s.kwargs)
        except OutOfScope:
            continue
        except Exception as e:
            total += 1
            if not first:
                first = "converting the inputs: " + _describe(e)
            continue
        total += 1
        try:
            _call(afn, ain, aargs, akwargs, timeout)
            if not first:
                first = "no error (torch: {} {!r})".format(ei.error_type.__name__, ei.error_regex)
        except Exception as e:
            if isinstance(e, ei.error_type) and not (isinstance(e, NotImplementedError) and
                                                     ei.error_type is not NotImplementedError):
                passed += 1
            elif not first:
                first = "{} (torch: {})".format(_describe(e), ei.error_type.__name__)
    return passed, total, first


def op_key(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def cpu_dtypes(op):
    names = {str(d)[len("torch."):] for d in op.supported_dtypes("cpu")}
    return [d for d in DTYPES if d in names]


def select_ops(names=None):
    ops = list(op_db)
    if names:
        wanted = set(names)
        ops = [o for o in ops if op_key(o) in wanted or o.name in wanted]
    return ops


def run(ops, dtypes, verbose=False, timeout=20, errors=True, out=sys.stdout):
    results = {}
    for op in ops:
        key = op_key(op)
        cells = {}
        for d in cpu_dtypes(op):
            if d not in dtypes:
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                cells[d] = run_cell(op, d, timeout)
            if verbose and cells[d]["status"] != "pass":
                print("{:40s} {:9s} {:12s} {}".format(key, d, cells[d]["status"],
                                                      cells[d]["detail"]), file=out, flush=True)
        entry = {"cells": cells}
        if errors:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                entry["errors"] = run_errors(op, timeout)
        results[key] = entry
    return results


# ---- reports -------------------------------------------------------------------------------------

def summarize(results):
    """Per dtype: (passed, in scope) over cells."""
    per = collections.OrderedDict((d, [0, 0]) for d in DTYPES)
    for entry in results.values():
        for d, c in entry["cells"].items():
            if c["status"] == "out-of-scope":
                continue
            per[d][1] += 1
            per[d][0] += c["status"] == "pass"
    return per


def op_status(entry):
    statuses = [c["status"] for c in entry["cells"].values() if c["status"] != "out-of-scope"]
    if not statuses:
        return "out-of-scope"
    if all(s == "pass" for s in statuses):
        return "pass"
    if any(s == "pass" for s in statuses):
        return "partial"
    return "fail"


def print_summary(results, out=sys.stdout):
    per = summarize(results)
    print("op_db cells passing, per dtype:", file=out)
    for d, (p, n) in per.items():
        if n:
            print("  {:9s} {:4d} / {:4d}  {:5.1f}%".format(d, p, n, 100.0 * p / n), file=out)
    counts = collections.Counter(op_status(e) for e in results.values())
    in_scope = sum(v for k, v in counts.items() if k != "out-of-scope")
    print("ops right in every dtype they declare: {} / {} ({:.1f}%); partial {}, failing {}, "
          "out of scope {}".format(counts["pass"], in_scope,
                                   100.0 * counts["pass"] / max(in_scope, 1), counts["partial"],
                                   counts["fail"], counts["out-of-scope"]), file=out)
    ep = sum(e.get("errors", (0, 0, ""))[0] for e in results.values())
    et = sum(e.get("errors", (0, 0, ""))[1] for e in results.values())
    if et:
        print("error_inputs raising torch's class: {} / {}".format(ep, et), file=out)


def write_doc(results, path):
    per = summarize(results)
    lines = [
        "# Operators: PyTorch 1.13's operator database",
        "",
        "Generated by `tests/opdb/opdb.py --doc docs/ops.md` (Note [The operator database harness]):",
        "every OpInfo of torch 1.13's `op_db`, its sample inputs run through torch and ampjit in one",
        "process, in every CPU dtype it declares, through every variant it names (function, method,",
        "in-place, aliases). A cell passes when every sample of every variant gives torch's structure,",
        "dtypes and shapes, values within torch's default tolerance for the dtype, and torch's",
        "exception class where torch raises. `tests/opdb/test_opdb.py` runs it in CI against",
        "`tests/opdb/expected.txt`.",
        "",
        "Out of scope (DESIGN.md): complex dtypes and results, sparse layouts, CUDA-only ops",
        "(`jiterator_*`).",
        "",
        "## Coverage per dtype",
        "",
        "| dtype | cells passing | in scope | share |",
        "|---|---|---|---|",
    ]
    for d, (p, n) in per.items():
        if n:
            lines.append("| {} | {} | {} | {:.1f}% |".format(d, p, n, 100.0 * p / n))
    counts = collections.Counter(op_status(e) for e in results.values())
    in_scope = sum(v for k, v in counts.items() if k != "out-of-scope")
    lines += [
        "",
        "Ops right in every dtype they declare: **{} of {} ({:.1f}%)**; partly right {}, failing {};"
        " out of scope {}.".format(counts["pass"], in_scope, 100.0 * counts["pass"] / max(in_scope, 1),
                                   counts["partial"], counts["fail"], counts["out-of-scope"]),
    ]
    ep = sum(e.get("errors", (0, 0, ""))[0] for e in results.values())
    et = sum(e.get("errors", (0, 0, ""))[1] for e in results.values())
    if et:
        lines.append("`error_inputs` samples raising torch's exception class: {} of {}.".format(ep, et))
    lines += ["", "## Every op", "",
              "A cell: `ok`, or the first failure (`missing`: ampjit lacks a name or kernel; "
              "`raises`: ampjit raises where torch does not; `wrong`: another value, dtype or shape; "
              "`wrong-error`/`no-error`: torch raises and ampjit raises another class or nothing). "
              "`-`: the op does not take the dtype on the CPU.", "",
              "| op | " + " | ".join(DTYPES) + " | first failure |",
              "|---|" + "---|" * len(DTYPES) + "---|"]
    for key in sorted(results):
        e = results[key]
        row, first = [], ""
        for d in DTYPES:
            c = e["cells"].get(d)
            if c is None:
                row.append("-")
                continue
            st = c["status"]
            row.append("ok" if st == "pass" else "n/a" if st == "out-of-scope" else st)
            if st not in ("pass", "out-of-scope") and not first:
                first = c["detail"].replace("|", "\\|")[:140]
        lines.append("| `{}` | {} | {} |".format(key, " | ".join(row), first))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


EXPECTED = os.path.join(HERE, "expected.txt")


def passing_cells(results):
    """The sorted "op dtype" lines of every passing cell."""
    return sorted("{} {}".format(k, d) for k, e in results.items()
                  for d, c in e["cells"].items() if c["status"] == "pass")


def read_expected(path=EXPECTED):
    with open(path) as f:
        return sorted(ln.strip() for ln in f if ln.strip() and not ln.startswith("#"))


def write_expected(results, path=EXPECTED):
    with open(path, "w") as f:
        f.write("# The op_db cells (OpInfo, dtype) ampjit gives torch's results in: "
                "tests/opdb/test_opdb.py\n# checks this list exactly. Rewrite it with "
                "tests/opdb/opdb.py --update-expected.\n")
        for line in passing_cells(results):
            f.write(line + "\n")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ops", help="comma-separated OpInfo names (default: all)")
    p.add_argument("--dtypes", default=",".join(DTYPES))
    p.add_argument("--json", help="write the results here")
    p.add_argument("--doc", help="write the markdown table here (docs/ops.md)")
    p.add_argument("--no-errors", action="store_true", help="skip error_inputs")
    p.add_argument("--timeout", type=int, default=20, help="seconds per sample")
    p.add_argument("--update-expected", action="store_true",
                   help="rewrite tests/opdb/expected.txt from this run (all ops and dtypes)")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    ops = select_ops(a.ops.split(",") if a.ops else None)
    t0 = time.time()
    results = run(ops, set(a.dtypes.split(",")), a.verbose, a.timeout, not a.no_errors)
    print_summary(results)
    print("({} OpInfos in {:.0f} s)".format(len(ops), time.time() - t0))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1, sort_keys=True)
    if a.doc:
        write_doc(results, a.doc)
    if a.update_expected:
        write_expected(results)


if __name__ == "__main__":
    main()
