"""Module-level functions generated from the op table.

Each ATen base name (``aten::add``) becomes ``ampjit.add``; calling it resolves the overload from
the arguments (Note [Overload resolution from Python] in frontend/python/module.cpp).
"""
import re

from . import _C

# Functions torch exposes under another name than the ATen op, or not at the top level.
_RENAMED = {"cross_entropy_loss": None, "mT": None, "mH": None}

# An out= argument in a schema as _op_schemas prints it: only functions of ops with an out= overload
# check for it (the rest pay nothing per call).
_OUT_ARG = re.compile(r"\bTensor(\(a!\))? out\b")


# The out= tensors of an op with several results: the keyword-only tensors of its out= overload
# (sort.values: `values`, `indices`). torch's Python signature takes them as one tuple, `out=`.
_WRITTEN_KWARG = re.compile(r"\bTensor(?:\([a-z]!\))? (\w+)")


def _out_names(schemas):
    for sch in schemas:
        args = sch.split(") ->", 1)[0]
        if "*" in args:
            names = _WRITTEN_KWARG.findall(args.split("*", 1)[1])
            if len(names) > 1:
                return tuple(names)
    return None


def _make_function(base):
    name = base.split("::", 1)[1]
    schemas = _C._op_schemas(base)
    out_names = _out_names(schemas)
    if out_names:
        def fn(*args, **kwargs):
            out = kwargs.get("out")
            if isinstance(out, (tuple, list)):
                if len(out) != len(out_names):
                    raise TypeError("{}(): argument 'out' must be a tuple of {} Tensors".format(
                        name, len(out_names)))
                kwargs = dict(kwargs)
                del kwargs["out"]
                kwargs.update(zip(out_names, out))
                result = _C._call(base, args, kwargs)
                # torch returns the very `out` tensors (the op wrote into them)
                return type(result)(*out) if hasattr(result, "_fields") else tuple(out)
            return _C._call(base, args, kwargs)
    elif not any(_OUT_ARG.search(sch) for sch in schemas):  # no out= overload: nothing to return
        def fn(*args, **kwargs):
            return _C._call(base, args, kwargs)
    else:
        def fn(*args, **kwargs):
            result = _C._call(base, args, kwargs)
            out = kwargs.get("out")
            # torch returns the very `out` object (the op wrote into its tensor)
            return out if out is not None and type(out) is type(result) and out is not result and \
                out.data_ptr() == result.data_ptr() else result

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "ampjit op {}:\n  ".format(base) + "\n  ".join(schemas)
    return name, fn


class _NNOps:
    """torch._C._nn: ops by their ATen names, as torch.nn.functional calls them (some, such as
    cross_entropy_loss, are not at torch's top level). Calling an op the table lacks raises
    NotImplementedError naming it."""

    __name__ = "ampjit._C._nn"

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        base = "aten::" + name

        def fn(*args, **kwargs):
            return _C._call(base, args, kwargs)

        fn.__name__ = fn.__qualname__ = name
        fn.__module__ = self.__name__
        setattr(self, name, fn)
        return fn


_C._nn = _NNOps()


class _DisableFuncTorch:
    """torch._C._DisableFuncTorch: a guard that turns functorch's transforms off while it lives.
    ampjit has no functorch, so holding one changes nothing (torch's test helpers hold one around
    their RNG bookkeeping)."""


_C._DisableFuncTorch = _DisableFuncTorch


def meshgrid(*tensors, indexing=None):
    """torch.meshgrid: the tensors (or one list of them) as coordinate grids, a tuple; without
    `indexing` it is "ij" and warns, as torch 1.13 does."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    kwargs = {} if indexing is None else {"indexing": indexing}
    return tuple(_C._call("aten::meshgrid", (list(tensors),), kwargs))


def einsum(equation, *operands):
    """torch.einsum: the operands as varargs or one list (Note [einsum] in composite_ops.cpp)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = operands[0]
    return _C._call("aten::einsum", (equation, list(operands)), {})


def _atleast(op):
    base = "aten::" + op

    def fn(*tensors):
        """torch.{0}: one tensor gives one tensor; several (or one list of them) a tuple.""".format(op)
        if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)):
            return _C._call(base, (tensors[0],), {})
        if len(tensors) == 1:
            tensors = tensors[0]
        return tuple(_C._call(base, (list(tensors),), {}))
    fn.__name__ = fn.__qualname__ = op
    return fn


def _tensor_varargs(op):
    base = "aten::" + op

    def fn(*tensors):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tensors[0]
        return _C._call(base, (list(tensors),), {})
    fn.__name__ = fn.__qualname__ = op
    return fn


def broadcast_shapes(*shapes):
    """torch.broadcast_shapes: the shape tensors of these shapes broadcast to, a torch.Size."""
    from ._tensor import Size
    out = []
    for shape in shapes:
        if isinstance(shape, int):
            shape = (shape,)
        shape = tuple(shape)
        for s in shape:
            if not isinstance(s, int) or isinstance(s, bool):
                raise RuntimeError("Input shapes should be of type ints, a tuple of ints, or a list of ints, "
                                   "got {}".format(shape))
            if s < 0:
                raise RuntimeError("Trying to create tensor with negative dimension {}: {}".format(s, list(shape)))
        n = max(len(out), len(shape))
        a = [1] * (n - len(out)) + out
        b = [1] * (n - len(shape)) + list(shape)
        for i in range(n):
            if a[i] != b[i] and a[i] != 1 and b[i] != 1:
                raise RuntimeError("Shape mismatch: objects cannot be broadcast to a single shape.  Mismatch is "
                                   "between arg 0 and arg {}.".format(shapes.index(shape) if shape in shapes else 1))
        out = [b[i] if a[i] == 1 else a[i] for i in range(n)]
    return Size(out)


def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: each tensor expanded to their common shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*[tuple(t.shape) for t in tensors])
    return tuple(t.expand(shape) for t in tensors)


def nonzero(input, *, out=None, as_tuple=False):
    """torch.nonzero: the indices of the nonzero elements, one row each, or one tensor per dimension
    with as_tuple=True (a 0-dim input counts as one dimension)."""
    if out is not None:
        return _C._call("aten::nonzero", (input,), {"out": out})
    result = _C._call("aten::nonzero", (input,), {})
    if not as_tuple:
        return result
    if input.dim() == 0:
        return (result.reshape(-1),)
    return tuple(result.unbind(1))


def where(condition, *args, **kwargs):
    """torch.where(condition, x, y), or torch.where(condition): nonzero(condition, as_tuple=True)."""
    if not args and not kwargs:
        return nonzero(condition, as_tuple=True)
    return _C._call("aten::where", (condition,) + args, kwargs)


def tensordot(a, b, dims=2, out=None):
    """torch.tensordot: `dims` an int (the last dims of a with the first of b), a pair of lists, or a
    list of pairs."""
    if isinstance(dims, int) or (hasattr(dims, "dim") and dims.dim() == 0):
        n = int(dims)
        if n < 0:
            raise RuntimeError("tensordot expects dims >= 0, but got dims={}".format(n))
        da, db = list(range(a.dim() - n, a.dim())), list(range(n))
    else:
        dims = [list(d) if isinstance(d, (list, tuple)) else d for d in dims]
        if len(dims) != 2:
            raise RuntimeError("tensordot expects dims to be a pair of lists")
        da, db = dims
        if isinstance(da, int):
            da, db = [da], [db]
    kwargs = {} if out is None else {"out": out}
    result = _C._call("aten::tensordot", (a, b, list(da), list(db)), kwargs)
    return out if out is not None else result


_CDIST_MODES = {None: None, "use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
                "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """torch.cdist: compute_mode by name, as torch.functional.cdist takes it."""
    if compute_mode not in _CDIST_MODES:
        raise ValueError("{} is not a valid value for compute_mode".format(compute_mode))
    return _C._call("aten::cdist", (x1, x2, p, _CDIST_MODES[compute_mode]), {})


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique (torch/functional.py): aten::_unique2, or aten::unique_dim along `dim`; the
    output, then the inverse and the counts when asked."""
    if dim is not None:
        output, inverse, counts = _C._call(
            "aten::unique_dim", (input, dim),
            {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts})
    else:
        output, inverse, counts = _C._call(
            "aten::_unique2", (input,),
            {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts})
    return _unique_results(output, inverse, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive (torch/functional.py): aten::unique_consecutive's output, then the
    inverse and the counts when asked."""
    output, inverse, counts = _C._call(
        "aten::unique_consecutive", (input,),
        {"return_inverse": return_inverse, "return_counts": return_counts, "dim": dim})
    return _unique_results(output, inverse, counts, return_inverse, return_counts)


def _unique_results(output, inverse, counts, return_inverse, return_counts):
    if return_inverse and return_counts:
        return output, inverse, counts
    if return_inverse:
        return output, inverse
    if return_counts:
        return output, counts
    return output


def _window(name):
    """torch.hann_window and the other windows: the op, then torch's requires_grad= (Note [FFTs
    without a complex dtype] in kernels/fft_meta.h)."""
    base = "aten::" + name

    def fn(*args, requires_grad=False, **kwargs):
        result = _C._call(base, args, kwargs)
        if requires_grad:
            result.requires_grad_(True)
        return result
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = "ampjit op {}:\n  ".format(base) + "\n  ".join(_C._op_schemas(base))
    return fn


# Functions whose Python signature differs from their op's (varargs), by name.
_PYTHON = {"meshgrid": meshgrid, "einsum": einsum, "atleast_1d": _atleast("atleast_1d"),
           "atleast_2d": _atleast("atleast_2d"), "atleast_3d": _atleast("atleast_3d"),
           "block_diag": _tensor_varargs("block_diag"), "cartesian_prod": _tensor_varargs("cartesian_prod"),
           "broadcast_shapes": broadcast_shapes, "broadcast_tensors": broadcast_tensors,
           "nonzero": nonzero, "where": where, "tensordot": tensordot, "cdist": cdist, "unique": unique,
           "unique_consecutive": unique_consecutive}
_PYTHON.update({name: _window(name) for name in ("hann_window", "hamming_window",
                                                 "bartlett_window", "blackman_window",
                                                 "kaiser_window")})


def _hermitian(self):
    """Tensor.H: a matrix's (conjugate) transpose; real tensors only."""
    if self.dim() != 2 and self.dim() != 0:
        raise RuntimeError("tensor.H is only supported on matrices (2-D tensors). Got {}-D tensor."
                           .format(self.dim()))
    return self if self.dim() == 0 else self.transpose(0, 1)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """torch.gradient: central differences inside, one-sided at the ends (edge_order 1 or 2), along
    `dim` (every dim when None), with a scalar spacing, one per dim, or coordinates per dim."""
    import ampjit
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if spacing is None:
        spacing = 1
    dims = list(range(input.dim())) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    dims = [d % input.dim() for d in dims]
    if isinstance(spacing, (int, float)):
        spacing = [spacing] * len(dims)
    elif isinstance(spacing, (list, tuple)) and len(spacing) == 1 and len(dims) > 1:
        spacing = list(spacing) * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError("torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
                           "arguments to have the same length, but got a spacing argument of length {} and a dim "
                           "argument of length {}.".format(len(spacing), len(dims)))
    out = []
    for d, h in zip(dims, spacing):
        n = input.shape[d]
        if n < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
        x = input if input.is_floating_point() else input.to(ampjit.get_default_dtype())
        sl = lambda a, b: x.narrow(d, a, b - a)  # noqa: E731
        if isinstance(h, ampjit.Tensor):  # coordinates
            shape = [1] * x.dim()
            shape[d] = n
            c = h.reshape(shape).to(x.dtype)
            cs = lambda a, b: c.narrow(d, a, b - a)  # noqa: E731
            dx1 = cs(1, n - 1) - cs(0, n - 2)
            dx2 = cs(2, n) - cs(1, n - 1)
            a = -dx2 / (dx1 * (dx1 + dx2))
            b = (dx2 - dx1) / (dx1 * dx2)
            cc = dx1 / (dx2 * (dx1 + dx2))
            interior = a * sl(0, n - 2) + b * sl(1, n - 1) + cc * sl(2, n)
            first = (sl(1, 2) - sl(0, 1)) / (cs(1, 2) - cs(0, 1))
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / (cs(n - 1, n) - cs(n - 2, n - 1))
            if edge_order == 2:
                h1, h2 = cs(1, 2) - cs(0, 1), cs(2, 3) - cs(1, 2)
                first = (-(2 * h1 + h2) / (h1 * (h1 + h2)) * sl(0, 1) + (h1 + h2) / (h1 * h2) * sl(1, 2)
                         - h1 / (h2 * (h1 + h2)) * sl(2, 3))
                h1, h2 = cs(n - 2, n - 1) - cs(n - 3, n - 2), cs(n - 1, n) - cs(n - 2, n - 1)
                last = (h2 / (h1 * (h1 + h2)) * sl(n - 3, n - 2) - (h1 + h2) / (h1 * h2) * sl(n - 2, n - 1)
                        + (2 * h2 + h1) / (h2 * (h1 + h2)) * sl(n - 1, n))
        else:
            interior = (sl(2, n) - sl(0, n - 2)) / (2.0 * h)
            first = (sl(1, 2) - sl(0, 1)) / h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
            if edge_order == 2:
                first = (-1.5 * sl(0, 1) + 2.0 * sl(1, 2) - 0.5 * sl(2, 3)) / h
                last = (0.5 * sl(n - 3, n - 2) - 2.0 * sl(n - 2, n - 1) + 1.5 * sl(n - 1, n)) / h
        out.append(ampjit.cat([first, interior, last], d))
    return tuple(out)


_PYTHON["gradient"] = gradient


def _install_python_methods(tensor):
    """Tensor methods whose Python signature differs from their op's."""
    def nonzero_method(self, *, as_tuple=False):
        return nonzero(self, as_tuple=as_tuple)
    nonzero_method.__name__ = "nonzero"
    tensor.nonzero = nonzero_method
    tensor.H = property(_hermitian)

    def polygamma_method(self, n):
        return _C._call("aten::polygamma", (n, self), {})
    polygamma_method.__name__ = "polygamma"
    tensor.polygamma = polygamma_method

    def where_method(self, condition, y):
        return _C._call("aten::where", (condition, self, y), {})
    where_method.__name__ = "where"
    tensor.where = where_method


def _install_functions(namespace):
    for base, _is_method, _inplace in _C._op_table():
        name, fn = _make_function(base)
        if name in _RENAMED:
            if _RENAMED[name] is None:
                continue
            name = _RENAMED[name]
        namespace.setdefault(name, fn)
    namespace.update(_PYTHON)
    # Note [Op aliases] (script/builtins.h): torch.divide is torch.div, the same function.
    for alias, target in _C._op_aliases():
        if target in namespace:
            namespace.setdefault(alias, namespace[target])
