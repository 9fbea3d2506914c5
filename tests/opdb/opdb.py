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
Beside its cells, each OpInfo gets a grad, a script, a trace and an autocast check (Note [Gradient,
script and trace checks]).
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
def _has_sparse(v):
    if isinstance(v, torch.Tensor):
        return v.layout != torch.strided
    if isinstance(v, (list, tuple)):
        return any(_has_sparse(x) for x in v)
    return False


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
    if terr is None and _has_sparse(expected):
        return ("out-of-scope", "sparse result")
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


# ---- gradients, script and trace -----------------------------------------------------------------
# Note [Gradient, script and trace checks]
# Beside its cells, each OpInfo gets three checks, each on its first samples and each counted only
# where torch itself gets through it with the same infrastructure:
#   - grad: in float64 (float32 where the op lacks it), the gradient of a fixed weighted sum of the
#     op's floating outputs (through the sample's output_process_fn_grad and the OpInfo's
#     gradcheck_wrapper) with respect to every input that requires grad, against torch's;
#   - script: a function calling the op by its public name (`torch.NAME(i0, 2, dim=1)`, or
#     `i0.NAME(...)` for a method-only op), its tensors as parameters and everything else as
#     literals, scripted by each library: ampjit's scripted result must be torch's eager one;
#   - trace: that function traced by each library on the sample and rerun on it;
#   - autocast: the function variant on float32 and bfloat16 samples under CPU autocast (bfloat16)
#     gives torch's result dtypes and shapes (run_autocast): the op has torch 1.13's CPU policy.
# Script and trace compare with torch's eager values, or, where those differ beyond tolerance (the
# cells' business), with ampjit's own eager values.
# A check is "n/a" when the op has no such variant (random ops, ops torch does not differentiate,
# samples whose arguments have no literal), or when torch fails it on every sample.

_CHECK_SAMPLES = 3


def _leaves(s):
    out = []

    def walk(v):
        if isinstance(v, torch.Tensor):
            if v.requires_grad and v.layout == torch.strided and v.numel() > 0 and id(v) not in \
                    {id(t) for t in out}:
                out.append(v)
        elif isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
    walk(s.input)
    walk(s.args)
    walk(s.kwargs)
    return out


def _weighted_sum(lib, outs):
    """A fixed, position-weighted sum of every floating tensor in `outs` (None when there is none),
    so that each output element's gradient differs."""
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    total = None
    for i, o in enumerate(outs):
        if isinstance(o, (tuple, list)):
            o = _weighted_sum(lib, o)
            if o is None:
                continue
        if isinstance(o, lib.Tensor) and o.is_floating_point() and o.requires_grad:
            # in float64 and rounded: a reduced-precision linspace is not the same in both
            w = lib.linspace(-1.0, 1.0, o.numel(), dtype=lib.float64).to(o.dtype).reshape(tuple(o.shape))
            term = (o * w * (i + 1)).sum()
            total = term if total is None else total + term
    return total


def _grad_dtype(op):
    names = cpu_dtypes(op)
    return "float64" if "float64" in names else "float32" if "float32" in names else None


def run_grad(op, timeout=20):
    """The grad check: {"status", "detail"}."""
    dt = _grad_dtype(op)
    if not op.supports_autograd or dt is None:
        return {"status": "n/a", "detail": "not differentiable"}
    torch.manual_seed(0)
    try:
        samples = [s for s in op.sample_inputs("cpu", getattr(torch, dt), requires_grad=True)]
    except Exception as e:
        return {"status": "n/a", "detail": "no samples: " + _describe(e)}
    checked = 0
    for s in samples:
        if checked == _CHECK_SAMPLES:
            break
        leaves = _leaves(s)
        if not leaves:
            continue
        fresh = {id(t): t.detach().clone().requires_grad_() for t in leaves}

        def sub(v):
            if isinstance(v, torch.Tensor):
                return fresh.get(id(v), v)
            if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
                return type(v)(sub(x) for x in v)
            if isinstance(v, dict):
                return {k: sub(x) for k, x in v.items()}
            return v
        t_leaves = [fresh[id(t)] for t in leaves]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.manual_seed(0)
                first = _call(lambda i, *a, **k: op.gradcheck_wrapper(op.op, i, *a, **k),
                              sub(s.input), sub(s.args), sub(s.kwargs), timeout)
                # torch's tests wrap random ops in wrapper_set_seed: ask the unwrapped op
                unseeded = _unseeded(op.op) or op.op
                torch.manual_seed(0)
                again = _call(lambda i, *a, **k: op.gradcheck_wrapper(unseeded, i, *a, **k),
                              sub(s.input), sub(s.args), sub(s.kwargs), timeout)
                if _is_random_value(again, lambda: op.gradcheck_wrapper(
                        unseeded, sub(s.input), *sub(s.args), **sub(s.kwargs))):
                    return {"status": "n/a", "detail": "random"}
                if _has_complex(first):
                    continue
                loss = _weighted_sum(torch, s.output_process_fn_grad(first))
                if loss is None:
                    continue
                want = torch.autograd.grad(loss, t_leaves, allow_unused=True)
        except Exception:
            continue  # torch does not get through this sample
        tr = Translator()
        try:
            a_leaves = []
            for t in leaves:
                a = to_ampjit_tensor(t).clone().requires_grad_()
                tr._memo[("tensor", id(t))] = a
                tr._keep.append(t)
                a_leaves.append(a)
            ain, aargs, akwargs = tr.value(s.input), tr.value(s.args), tr.value(s.kwargs)
            afn, aprocess, awrap = tr.obj(op.op), tr.obj(s.output_process_fn_grad), \
                tr.obj(op.gradcheck_wrapper)
        except OutOfScope:
            continue
        checked += 1
        try:
            ampjit.manual_seed(0)
            out = _call(lambda i, *a, **k: awrap(afn, i, *a, **k), ain, aargs, akwargs, timeout)
            # a random op (torch's tests fix its seed with wrapper_set_seed, around the op or as
            # its gradcheck_wrapper: lifted here) draws other numbers than torch's
            afree = tr.obj(_unseeded(op.op) or op.op)
            with ampjit.no_grad():
                ampjit.manual_seed(0)
                one = _call(afree, ain, aargs, akwargs, timeout)
                ampjit.manual_seed(1)
                two = _call(afree, ain, aargs, akwargs, timeout)
            if not _outputs_equal(_as_torch(one), _as_torch(two)):
                return {"status": "n/a", "detail": "random"}
            aloss = _weighted_sum(ampjit, aprocess(out))
            if aloss is None:
                return {"status": "wrong", "detail": "no output requires grad"}
            got = ampjit.autograd.grad(aloss, a_leaves, allow_unused=True)
        except Exception as e:
            kind = "missing" if _is_missing_error(e) else "raises"
            return {"status": kind, "detail": _describe(e)}
        try:
            compare(tuple(want), tuple(got), False, "gradient")
        except OutOfScope:
            checked -= 1
        except Mismatch as e:
            return {"status": "wrong", "detail": str(e)[:300]}
    if not checked:
        return {"status": "n/a", "detail": "torch differentiates no sample"}
    return {"status": "pass", "detail": ""}


def _is_random_value(first, again):
    try:
        torch.manual_seed(1)
        return not _outputs_equal(first, again())
    except Exception:
        return False


class _NoLiteral(Exception):
    pass


def _literal(v):
    """Script source for a non-tensor argument."""
    if v is None or isinstance(v, (builtins.bool, str)):
        return repr(v)
    if isinstance(v, int):
        return repr(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "float('nan')"
        if math.isinf(v):
            return "float('inf')" if v > 0 else "-float('inf')"
        return repr(v)
    if isinstance(v, torch.dtype):
        return str(v)
    if isinstance(v, torch.memory_format):
        return str(v)
    if isinstance(v, torch.Size):
        v = tuple(v)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        if not v:
            raise _NoLiteral("an empty sequence")  # its element type is unknown to script
        items = [_literal(x) for x in v]
        return "[" + ", ".join(items) + "]" if isinstance(v, list) else \
            "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    raise _NoLiteral(type(v).__name__)


def _script_source(op, s, method):
    """(source text, tensors in parameter order) of a function calling the op on sample `s`."""
    params, tensors, counter = [], [], [0]

    def arg(v):
        if isinstance(v, torch.Tensor):
            if v.layout != torch.strided:
                raise OutOfScope("sparse layout")
            name = "i{}".format(counter[0])
            counter[0] += 1
            params.append(name + ": Tensor")
            tensors.append(v)
            return name
        if isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
            name = "i{}".format(counter[0])
            counter[0] += 1
            params.append(name + ": List[Tensor]")
            tensors.append(list(v))
            return name
        return _literal(v)
    first = arg(s.input)
    rest = [arg(a) for a in s.args] + ["{}={}".format(k, arg(v)) for k, v in s.kwargs.items()]
    if method:
        call = "{}.{}({})".format(first, op.name, ", ".join(rest))
    else:
        call = "{}({})".format(_torch_paths()[id(op.op)], ", ".join([first] + rest))
    text = "def the_fn({}):\n    return {}\n".format(", ".join(params), call)
    return text, tensors


_SOURCE_SERIAL = [0]


def _function_from_source(text, lib):
    """A Python function defined by `text` with `torch` bound to `lib`, its source findable (in
    linecache) so that either library's script compiler reads it."""
    _SOURCE_SERIAL[0] += 1
    filename = "<opdb-script-{}>".format(_SOURCE_SERIAL[0])
    import linecache
    lines = text.splitlines(True)
    linecache.cache[filename] = (len(text), None, lines, filename)
    g = {"torch": lib, "Tensor": lib.Tensor, "List": __import__("typing").List,
         "__name__": "opdb_script_{}".format(_SOURCE_SERIAL[0])}
    exec(compile(text, filename, "exec"), g)
    return g["the_fn"]


def _jit_variant(op):
    """(method?) of the variant the script and trace checks call, or None."""
    path = _torch_paths().get(id(op.op))
    if path is not None and not path.startswith("torch.Tensor.") and \
            path.rsplit(".", 1)[0] in ("torch", "torch.nn.functional", "torch.linalg", "torch.fft",
                                       "torch.special"):
        return False
    if op.method_variant is not None and op.name.isidentifier():
        return True
    return None


def _has_tensor(v):
    if isinstance(v, torch.Tensor):
        return True
    return isinstance(v, (list, tuple)) and any(_has_tensor(x) for x in v)


def _as_torch(v):
    """An ampjit result as torch objects (tensors copied), for compare()."""
    if isinstance(v, ampjit.Tensor):
        return to_torch_tensor(v)
    if isinstance(v, (list, tuple)) and not hasattr(v, "_fields"):
        return type(v)(_as_torch(x) for x in v)
    if isinstance(v, tuple):
        return tuple(_as_torch(x) for x in v)
    return v


def run_jit(op, timeout=20):
    """The script and trace checks: ({"status", "detail"}, {"status", "detail"})."""
    na = {"status": "n/a", "detail": "no public function or method"}
    method = _jit_variant(op)
    names = cpu_dtypes(op)
    if method is None or not names:
        return na, na
    dt = "float32" if "float32" in names else names[0]
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", getattr(torch, dt), requires_grad=False))
    except Exception as e:
        return ({"status": "n/a", "detail": "no samples: " + _describe(e)},) * 2
    results = {}
    for kind in ("script", "trace"):
        checked, failure = 0, None
        for s in samples:
            if checked == _CHECK_SAMPLES or failure:
                break
            try:
                text, tensors = _script_source(op, s, method)
            except (_NoLiteral, OutOfScope):
                continue
            # torch: eager, then the same through its own script or trace, on clones
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    tfn = _function_from_source(text, torch)
                    clones = [[t.clone() for t in x] if isinstance(x, list) else x.clone()
                              for x in tensors]
                    torch.manual_seed(0)
                    expected = tfn(*clones)
                    if _is_random_value(expected, lambda: tfn(*[
                            [t.clone() for t in x] if isinstance(x, list) else x.clone()
                            for x in tensors])):
                        return ({"status": "n/a", "detail": "random"},) * 2
                    if _has_complex(expected) or kind == "trace" and not _has_tensor(expected):
                        continue  # a trace returns tensors only
                    clones = [[t.clone() for t in x] if isinstance(x, list) else x.clone()
                              for x in tensors]
                    compiled = torch.jit.script(tfn) if kind == "script" else \
                        torch.jit.trace(tfn, tuple(clones), check_trace=False)
                    clones = [[t.clone() for t in x] if isinstance(x, list) else x.clone()
                              for x in tensors]
                    if not _outputs_equal(expected, compiled(*clones)):
                        continue
            except Exception:
                continue  # torch does not get through this sample
            tr = Translator()
            try:
                ains = [tr.value(x) for x in tensors]
            except OutOfScope:
                continue
            checked += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    afn = _function_from_source(text, ampjit)
                    ampjit.manual_seed(0)
                    acompiled = ampjit.jit.script(afn) if kind == "script" else \
                        ampjit.jit.trace(afn, tuple([[t.clone() for t in x] if isinstance(x, list)
                                                     else x.clone() for x in ains]),
                                         check_trace=False)
                    actual = acompiled(*ains)
            except Exception as e:
                failure = {"status": "missing" if _is_missing_error(e) else "raises",
                           "detail": "{}: {}".format(text.splitlines()[1].strip(), _describe(e))}
                break
            try:
                try:
                    compare(expected, actual, False, kind + " result")
                except ValueMismatch:
                    # values off torch's are the cells' business: the check asks that the
                    # compiled function give ampjit's eager values
                    eager = afn(*[[t.clone() for t in x] if isinstance(x, list) else x.clone()
                                  for x in ains])
                    compare(_as_torch(eager), actual, False, kind + " result against eager")
            except OutOfScope:
                checked -= 1
            except Mismatch as e:
                failure = {"status": "wrong", "detail": "{}: {}".format(
                    text.splitlines()[1].strip(), str(e)[:300])}
        results[kind] = failure or ({"status": "pass", "detail": ""} if checked else
                                    {"status": "n/a", "detail": "torch gets through no sample"})
    return results["script"], results["trace"]


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


CHECKS = ("grad", "script", "trace", "autocast")


def run_autocast(op, timeout=20):
    """The autocast check: in float32 and bfloat16 samples, the function variant under CPU autocast
    (bfloat16) gives torch's result structure, dtypes and shapes: the op has torch 1.13's CPU policy
    (lower precision, float32, promote or none) whatever it is made of."""
    names = cpu_dtypes(op)
    if not any(d in names for d in ("float32", "bfloat16")):
        return {"status": "n/a", "detail": "no float32 or bfloat16"}
    checked = 0
    for dt in ("float32", "bfloat16"):
        if dt not in names:
            continue
        torch.manual_seed(0)
        try:
            samples = list(op.sample_inputs("cpu", getattr(torch, dt), requires_grad=False))
        except Exception:
            continue
        done = 0
        for s in samples:
            if done == _CHECK_SAMPLES:
                break
            tin, targs, tkwargs = _clone_sample(s)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        expected = _call(op.op, tin, targs, tkwargs, timeout)
            except Exception:
                continue
            if _has_complex(expected):
                continue
            tr = Translator()
            try:
                afn = tr.obj(op.op)
                ain, aargs, akwargs = tr.value(s.input), tr.value(s.args), tr.value(s.kwargs)
            except OutOfScope:
                continue
            done += 1
            checked += 1
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    with ampjit.autocast("cpu", dtype=ampjit.bfloat16):
                        actual = _call(afn, ain, aargs, akwargs, timeout)
            except Exception as e:
                return {"status": "missing" if _is_missing_error(e) else "raises",
                        "detail": "{}: {}".format(dt, _describe(e))}
            try:
                compare(expected, actual, True, "{} under autocast".format(dt))
            except OutOfScope:
                checked -= 1
            except Mismatch as e:
                return {"status": "wrong", "detail": str(e)[:300]}
    if not checked:
        return {"status": "n/a", "detail": "torch gets through no sample"}
    return {"status": "pass", "detail": ""}


def run_checks(op, timeout=20):
    """{check: {"status", "detail"}} (Note [Gradient, script and trace checks])."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        grad = run_grad(op, timeout)
        script, trace = run_jit(op, timeout)
        autocast = run_autocast(op, timeout)
    return {"grad": grad, "script": script, "trace": trace, "autocast": autocast}


def run(ops, dtypes, verbose=False, timeout=20, errors=True, out=sys.stdout, checks=True):
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
        if checks:
            entry["checks"] = run_checks(op, timeout)
            if verbose:
                for name, c in entry["checks"].items():
                    if c["status"] not in ("pass", "n/a"):
                        print("{:40s} {:9s} {:12s} {}".format(key, name, c["status"], c["detail"]),
                              file=out, flush=True)
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
    for name, (p, n) in summarize_checks(results).items():
        if n:
            print("{:6s} check: {} / {} ops ({:.1f}%) where torch gets through it".format(
                name, p, n, 100.0 * p / n), file=out)


def summarize_checks(results):
    """Per check: (passed, applicable) over ops."""
    per = collections.OrderedDict((c, [0, 0]) for c in CHECKS)
    for entry in results.values():
        for name, c in entry.get("checks", {}).items():
            if c["status"] != "n/a":
                per[name][1] += 1
                per[name][0] += c["status"] == "pass"
    return per


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
    checks = summarize_checks(results)
    if any(n for _, n in checks.values()):
        lines += ["", "Gradient, script and trace checks (Note [Gradient, script and trace checks] in "
                  "`tests/opdb/opdb.py`), over the ops where torch itself gets through the check:", "",
                  "| check | ops passing | applicable | share |", "|---|---|---|---|"]
        for name, (p, n) in checks.items():
            lines.append("| {} | {} | {} | {:.1f}% |".format(name, p, n, 100.0 * p / max(n, 1)))
    lines += ["", "## Every op", "",
              "A cell: `ok`, or the first failure (`missing`: ampjit lacks a name or kernel; "
              "`raises`: ampjit raises where torch does not; `wrong`: another value, dtype or shape; "
              "`wrong-error`/`no-error`: torch raises and ampjit raises another class or nothing). "
              "`-`: the op does not take the dtype on the CPU.", "",
              "| op | " + " | ".join(DTYPES + list(CHECKS)) + " | first failure |",
              "|---|" + "---|" * (len(DTYPES) + len(CHECKS)) + "---|"]
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
        for name in CHECKS:
            c = e.get("checks", {}).get(name)
            st = "-" if c is None else c["status"]
            row.append("ok" if st == "pass" else st)
            if st not in ("pass", "n/a", "-") and not first:
                first = "{}: {}".format(name, c["detail"].replace("|", "\\|")[:140])
        lines.append("| `{}` | {} | {} |".format(key, " | ".join(row), first))
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


EXPECTED = os.path.join(HERE, "expected.txt")


def passing_cells(results):
    """The sorted "op dtype" lines of every passing cell."""
    return sorted(["{} {}".format(k, d) for k, e in results.items()
                   for d, c in e["cells"].items() if c["status"] == "pass"] +
                  ["{} {}".format(k, name) for k, e in results.items()
                   for name, c in e.get("checks", {}).items() if c["status"] == "pass"])


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
    p.add_argument("--no-checks", action="store_true", help="skip the grad, script and trace checks")
    p.add_argument("--timeout", type=int, default=20, help="seconds per sample")
    p.add_argument("--update-expected", action="store_true",
                   help="rewrite tests/opdb/expected.txt from this run (all ops and dtypes)")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    ops = select_ops(a.ops.split(",") if a.ops else None)
    t0 = time.time()
    results = run(ops, set(a.dtypes.split(",")), a.verbose, a.timeout, not a.no_errors,
                  checks=not a.no_checks)
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
