"""The Python half of ampjit.Tensor: methods generated from the op table, conversions, indexing.

The Tensor type itself, its properties and its operators live in C++ (frontend/python).
"""
import builtins
import collections
import ctypes
from copy import deepcopy

from . import _C, _memory_format
from ._C import Tensor


class Size(tuple):
    """torch.Size: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    def __repr__(self):
        return "torch.Size([{}])".format(", ".join(str(s) for s in self))

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


_C._set_size_type(Size)

# torch.return_types: named tuples for ops with named results (max.dim -> (values, indices)).
_return_types = {}


def _namedtuple(op_name, fields, values):
    key = (op_name, fields)
    t = _return_types.get(key)
    if t is None:
        t = collections.namedtuple(op_name, fields)
        t.__module__ = "torch.return_types"
        _return_types[key] = t
    return t(*values)


_C._set_namedtuple_factory(_namedtuple)


def _method(base, inplace):
    name = base.split("::", 1)[1]
    if inplace:
        def method(self, *args, **kwargs):
            _C._call(base, (self,) + args, kwargs)
            return self
    else:
        def method(self, *args, **kwargs):
            return _C._call(base, (self,) + args, kwargs)
    method.__name__ = method.__qualname__ = name
    return method


# --- dtype and device conversions ----------------------------------------------------------

def _parse_to(*args, **kwargs):
    """The arguments of Tensor.to and Module.to: (device, dtype, non_blocking, copy, memory_format)
    from to(dtype), to(device), to(device, dtype), to(tensor), with non_blocking=, copy= and
    memory_format= (None when not given)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    non_blocking = kwargs.pop("non_blocking", False)
    memory_format = kwargs.pop("memory_format", None)
    if memory_format is not None:
        _memory_format._check_memory_format("to", memory_format)
    if kwargs:
        raise TypeError("to() got an unexpected keyword argument '{}'".format(next(iter(kwargs))))
    for a in args:
        if isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, (str, _C.device)):
            device = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, builtins.bool):
            non_blocking = a
        elif a is not None:
            raise TypeError("to() received an invalid combination of arguments: {!r}".format(a))
    return device, dtype, non_blocking, copy, memory_format


def _to(self, *args, **kwargs):
    """Tensor.to(dtype) / to(device) / to(device, dtype) / to(other), with copy=, non_blocking= and
    memory_format= (checked as torch checks it; channels_last gives that layout: Note [Channels-last
    tensors] in _memory_format.py)."""
    device, dtype, non_blocking, copy, memory_format = _parse_to(*args, **kwargs)
    if memory_format is not None:
        _memory_format._check_rank(self, memory_format)
    if device is not None:
        out = _C._call_overload("aten::to.device", (self, device, dtype, non_blocking, copy), {})
    elif dtype is None:
        out = self
    else:
        out = _C._call_overload("aten::to.dtype", (self, dtype, non_blocking, copy), {})
    if memory_format is _memory_format.channels_last:
        out = _memory_format._as_channels_last(out)
    return out


def _cpu(self):
    return self.to("cpu")


def _cuda(self, device=None):
    return self.to("cuda" if device is None else device)


def _type_conv(dt):
    def conv(self, memory_format=None):
        """Tensor.float() and friends: self.to(dtype, memory_format=...)."""
        if memory_format is None:
            return self.to(dt)
        return self.to(dt, memory_format=memory_format)
    return conv


# --- NumPy, pickle and copy ------------------------------------------------------------------

def _array(self, dtype=None):
    """Tensor.__array__: np.asarray(t) and np.array(t) are t.numpy() (same memory, same dtype)
    cast to `dtype` if given; as in torch, a bfloat16 tensor raises TypeError ("Got unsupported
    ScalarType BFloat16") and one that requires grad raises RuntimeError."""
    if dtype is None:
        return self.numpy()
    return self.numpy().astype(dtype, copy=False)


def _array_wrap(self, array, *_context):
    """Tensor.__array_wrap__: a NumPy ufunc applied to a tensor (np.sin(t)) gives a tensor, and,
    as torch 1.13 does, a bool result becomes uint8."""
    if array.dtype == builtins.bool:
        array = array.astype("uint8")
    return _C.from_numpy(array)


def _dtype_named(name):
    """The dtype whose torch name is `name` ("float32")."""
    for d in _C._dtypes:
        if repr(d) == "torch." + name:
            return d
    raise ValueError("unknown dtype torch.{}".format(name))


def _rebuild_tensor(data, dtype_name, shape, device, requires_grad):
    """The inverse of Tensor.__reduce_ex__ (pickle calls it by this module-level name): a tensor
    of `shape` and the dtype named `dtype_name` whose bytes are `data`."""
    t = _C._call("aten::empty", (list(shape),), {"dtype": _dtype_named(dtype_name)})
    if len(data) != t.numel() * t.element_size():
        raise ValueError("cannot unpickle a tensor of shape {} and dtype torch.{} from {} bytes".format(
            list(shape), dtype_name, len(data)))
    if data:
        ctypes.memmove(t.data_ptr(), data, len(data))
    if device != "cpu":
        t = t.to(device)
    if requires_grad:
        t.requires_grad = True
    return t


def _reduce_ex(self, protocol):
    """Tensor.__reduce_ex__: pickles the dtype, shape, device, requires_grad and the bytes of the
    values (native byte order; no NumPy needed, and bfloat16 as its own bits). The unpickled tensor
    is row-major and owns its memory: unlike torch, views of one storage pickled together come
    back as separate tensors. As in torch 1.13, neither .grad nor Python attributes set on the
    tensor travel."""
    t = self.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    t = t.contiguous()
    nbytes = t.numel() * t.element_size()
    data = ctypes.string_at(t.data_ptr(), nbytes) if nbytes else b""
    args = (data, repr(self.dtype)[len("torch."):], tuple(self.shape), str(self.device), self.requires_grad)
    return (_rebuild_tensor, args)


def _deepcopy(self, memo):
    """Tensor.__deepcopy__, as torch's: a leaf only; a new tensor with self's values, dtype, device
    and requires_grad, and deep copies of its .grad and Python attributes. (torch copies the
    storage, so views deep-copied together stay views of one copy; ampjit copies each tensor.)"""
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support the deepcopy "
                           "protocol at the moment")
    key = id(self)
    if key in memo:
        return memo[key]
    new = self.detach().clone()
    if type(self) is not Tensor:
        new.__class__ = type(self)
    new.requires_grad = self.requires_grad
    memo[key] = new
    if self.grad is not None:
        new.grad = deepcopy(self.grad, memo)
    for k, v in self.__dict__.items():
        setattr(new, k, deepcopy(v, memo))
    return new


# --- autograd (runtime/autograd/autograd.h) ----------------------------------------------------

def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Tensor.backward: accumulates the gradient of self into the .grad of the leaves (or only of
    `inputs`). A non-scalar needs `gradient`; the graph is freed unless retain_graph."""
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    _C._backward((self,), None if gradient is None else (gradient,), retain_graph, create_graph,
                 None if inputs is None else tuple(inputs))


def _requires_grad_(self, requires_grad=True):
    """Tensor.requires_grad_: sets requires_grad in place (leaves only, floating dtypes); returns
    self."""
    self.requires_grad = requires_grad
    return self


def _register_hook(self, hook):
    """Tensor.register_hook: `hook(grad)` runs when the gradient of self is computed and may return
    a replacement. Returns a handle whose remove() unregisters it."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return self._register_hook(hook)


# --- indexing --------------------------------------------------------------------------------

def _sequence_as_tuple(index):
    """torch's treatSequenceAsTuple (NumPy's rule): a list (or other non-tensor sequence) shorter
    than 32 that holds a tensor, a sequence, a slice, Ellipsis or None indexes as a tuple of its
    items (x[[slice(None), [0, 3]]] is x[:, [0, 3]]); one of ints alone is an index tensor."""
    if isinstance(index, (Tensor, str, bytes)) or not isinstance(index, (list, range)) and not (
            hasattr(index, "__len__") and hasattr(index, "__getitem__") and not hasattr(index, "__array__")):
        return False
    if len(index) >= 32:
        return False
    return any(isinstance(i, (Tensor, list, tuple, slice, range)) or i is Ellipsis or i is None for i in index)


def _expand_index(self, index):
    if not isinstance(index, tuple):
        index = tuple(index) if _sequence_as_tuple(index) else (index,)
    n_ellipsis = sum(1 for i in index if i is Ellipsis)
    if n_ellipsis > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = sum(1 for i in index if i is not None and i is not Ellipsis and not (
        isinstance(i, Tensor) and i.dtype == _bool_dtype() and i.dim() > 1))
    used += sum(i.dim() - 1 for i in index if isinstance(i, Tensor) and i.dtype == _bool_dtype() and i.dim() > 1)
    if used > self.dim():
        raise IndexError("too many indices for tensor of dimension {}".format(self.dim()))
    out = []
    for i in index:
        if i is Ellipsis:
            out.extend([slice(None)] * (self.dim() - used))
        else:
            out.append(i)
    return out


def _bool_dtype():
    from . import bool as b
    return b


def _as_index_tensor(i):
    """A list, tuple or array of ints or bools as the index tensor torch makes of it."""
    if isinstance(i, Tensor):
        return i
    if not isinstance(i, (list, tuple)) and hasattr(i, "__array__"):
        from . import from_numpy
        import numpy
        return from_numpy(numpy.asarray(i))
    return _C.tensor(i)


def _basic_view(self, index):
    """Applies ints, slices, None, Ellipsis and Python bools as views; returns the view and the
    advanced indices as aten::index takes them (one entry per dim of the view, None where a dim is
    taken whole; Note [Advanced indexing] in kernels/cpu/advanced_index_ops.cpp)."""
    t = self
    dim = 0
    indices = []
    for i in _expand_index(self, index):
        if i is None:
            t = t.unsqueeze(dim)
            dim += 1
        elif isinstance(i, builtins.bool) or (isinstance(i, Tensor) and i.dtype == _bool_dtype() and i.dim() == 0):
            # a scalar bool adds a dimension, of length 1 (True) or 0 (False)
            t = t.unsqueeze(dim)
            if not builtins.bool(i):
                t = t.narrow(dim, 0, 0)
            dim += 1
        elif isinstance(i, builtins.int) or (hasattr(i, "__index__") and not isinstance(i, (Tensor, list, tuple))):
            t = t.select(dim, i.__index__())
        elif isinstance(i, slice):
            step = 1 if i.step is None else i.step
            if step <= 0:
                raise ValueError("step must be greater than zero")
            t = _C._call_overload("aten::slice.Tensor", (t, dim, i.start, i.stop, step), {})
            dim += 1
        elif isinstance(i, (Tensor, list, tuple)) or hasattr(i, "__array__"):
            idx = _as_index_tensor(i)
            indices.extend([None] * (dim - len(indices)))
            indices.append(idx)
            dim += idx.dim() if idx.dtype == _bool_dtype() or idx.dtype == _uint8_dtype() else 1
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or bool tensors are "
                "valid indices (got {})".format(type(i).__name__))
    return t, indices


def _uint8_dtype():
    from . import uint8
    return uint8


def _getitem(self, index):
    t, indices = _basic_view(self, index)
    if not indices:
        return t
    return _C._call("aten::index", (t, indices), {})


def _int64():
    from . import int64
    return int64


def _setitem(self, index, value):
    t, indices = _basic_view(self, index)
    if not indices:
        if isinstance(value, Tensor):
            t.copy_(value)
        else:
            t.fill_(value)
        return
    if isinstance(value, Tensor):
        value = value.to(t.dtype)
    else:
        value = _C._call("aten::full", ([], value), {"dtype": t.dtype})
    _C._call("aten::index_put_", (t, indices, value), {})


def _iter(self):
    if self.dim() == 0:
        raise TypeError("iteration over a 0-d tensor")
    return (self.select(0, i) for i in range(self.shape[0]))


def _T(self):
    return self.permute(list(range(self.dim() - 1, -1, -1)))


def _floordiv(self, other):
    # torch 1.13: `a // b` is floor_divide, i.e. division rounded toward negative infinity.
    return _C._call("aten::div", (self, other), {"rounding_mode": "floor"})


def _rfloordiv(self, other):
    return _C._call("aten::div", (_C.tensor(other), self), {"rounding_mode": "floor"})


def _unique_method(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
    from ._ops import unique
    return unique(self, sorted=sorted, return_inverse=return_inverse,
                  return_counts=return_counts, dim=dim)


def _unique_consecutive_method(self, return_inverse=False, return_counts=False, dim=None):
    from ._ops import unique_consecutive
    return unique_consecutive(self, return_inverse=return_inverse, return_counts=return_counts,
                              dim=dim)


def _install_tensor_methods():
    own = set(Tensor.__dict__)
    for base, is_method, inplace in _C._op_table():
        name = base.split("::", 1)[1]
        if not is_method or name in own:
            continue
        setattr(Tensor, name, _method(base, inplace))
    # Note [Op aliases] (script/builtins.h): x.multiply(y) is x.mul(y).
    for alias, target in _C._op_aliases():
        if alias not in own and hasattr(Tensor, target) and not hasattr(Tensor, alias):
            setattr(Tensor, alias, getattr(Tensor, target))
    from . import float32, float16, bfloat16, float64, int64, int32, bool as bool_, uint8, int8, int16
    Tensor.to = _to
    Tensor.cpu = _cpu
    Tensor.cuda = _cuda
    for name, dt in (("float", float32), ("half", float16), ("bfloat16", bfloat16),
                     ("double", float64), ("long", int64), ("int", int32), ("bool", bool_),
                     ("byte", uint8), ("char", int8), ("short", int16)):
        setattr(Tensor, name, _type_conv(dt))
    Tensor.__getitem__ = _getitem
    Tensor.__setitem__ = _setitem
    Tensor.__iter__ = _iter
    Tensor.__floordiv__ = _floordiv
    Tensor.__rfloordiv__ = _rfloordiv
    # Python 2's names, which torch's Tensor still has (its own tests call x.__div__(y))
    Tensor.__div__ = Tensor.__truediv__
    Tensor.__rdiv__ = Tensor.__rtruediv__
    if hasattr(Tensor, "__itruediv__"):
        Tensor.__idiv__ = Tensor.__itruediv__
    Tensor.T = property(_T)
    # properties in torch (aten::mT and aten::mH, which script and the tracer record)
    Tensor.mT = property(lambda self: _C._call("aten::mT", (self,), {}))
    Tensor.mH = property(lambda self: _C._call("aten::mH", (self,), {}))
    Tensor.unique = _unique_method
    Tensor.unique_consecutive = _unique_consecutive_method
    Tensor.backward = _backward
    Tensor.register_hook = _register_hook
    Tensor.requires_grad_ = _requires_grad_
    Tensor.__array_priority__ = 1000  # numpy defers to our reflected operators
    Tensor.__array__ = _array
    Tensor.__array_wrap__ = _array_wrap
    Tensor.__reduce_ex__ = _reduce_ex
    Tensor.__deepcopy__ = _deepcopy
    _memory_format._install(Tensor.contiguous)
