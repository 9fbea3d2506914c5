"""The decomposed ops: each op of runtime/ops/decompositions.def written once, in terms of other
ops, in the scriptable subset (Note [Decomposed ops] in runtime/op_table.h).

libampjit embeds this file and compiles the def of an op the first time the op runs, on any device;
autograd records the ops a def calls, so these need no derivatives. A def has the op's schema:
its name (NAME__OVERLOAD for an overload), its arguments in order with their names and types.
Errors are raised with torch's exception class and message.
"""
import math
from typing import List, Optional, Tuple

import ampjit as torch
from ampjit import Tensor


# ---- pointwise ------------------------------------------------------------------------------------

# A Python float times an integer tensor is the default floating dtype (torch's promotion of
# wrapped numbers), which is what torch's integer-to-float ops return.

def deg2rad(self: Tensor) -> Tensor:
    return self * (math.pi / 180.0)


def rad2deg(self: Tensor) -> Tensor:
    return self * (180.0 / math.pi)


def square(self: Tensor) -> Tensor:
    return torch.pow(self, 2)


def outer(self: Tensor, vec2: Tensor) -> Tensor:
    if self.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError("outer: Expected 1-D argument self, but got {}-D".format(self.dim()))
    return self.unsqueeze(1) * vec2


def positive(self: Tensor) -> Tensor:
    if self.dtype == torch.bool:
        raise TypeError("The `+` operator, on a bool tensor is not supported.")
    return self


def sgn(self: Tensor) -> Tensor:
    return torch.sign(self)


def logit(self: Tensor, eps: Optional[float] = None) -> Tensor:
    x = self if self.is_floating_point() else self * 1.0  # integers and bools in the default dtype
    if eps is not None:
        x = torch.clamp(x, eps, 1.0 - eps)
    return torch.log(x / (1.0 - x))


def float_power__Tensor_Tensor(self: Tensor, exponent: Tensor) -> Tensor:
    return torch.pow(self.to(torch.float64), exponent.to(torch.float64))


def float_power__Tensor_Scalar(self: Tensor, exponent: float) -> Tensor:
    return torch.pow(self.to(torch.float64), float(exponent))


def float_power__Scalar(self: float, exponent: Tensor) -> Tensor:
    return torch.pow(float(self), exponent.to(torch.float64))


def ldexp__Tensor(self: Tensor, other: Tensor) -> Tensor:
    return torch.mul(self, torch.pow(2.0, other))


def isreal(self: Tensor) -> Tensor:
    return torch.ones_like(self, dtype=torch.bool)


def mvlgamma(self: Tensor, p: int) -> Tensor:
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = self if self.is_floating_point() else self * 1.0  # integers in the default dtype
    if not bool(torch.all(x > (p - 1) / 2.0)):
        raise RuntimeError("All elements must be greater than (p-1)/2")
    args = x.unsqueeze(-1) - torch.arange(p, dtype=x.dtype, device=x.device) / 2.0
    return torch.lgamma(args).sum(-1) + p * (p - 1) / 4.0 * math.log(math.pi)


# ---- reductions -------------------------------------------------------------------------------------

def nansum(self: Tensor, dim: Optional[List[int]] = None, keepdim: bool = False,
           dtype: Optional[int] = None) -> Tensor:
    x = self
    if self.is_floating_point():
        x = torch.where(torch.isnan(self), torch.zeros_like(self), self)
    if dim is None:
        dim = torch.jit.annotate(List[int], [])
    return torch.sum(x, dim, keepdim, dtype=dtype)


def nanmean(self: Tensor, dim: Optional[List[int]] = None, keepdim: bool = False,
            dtype: Optional[int] = None) -> Tensor:
    if not self.is_floating_point():
        raise RuntimeError("nanmean(): expected input to have floating point dtype but got {}".format(self.dtype))
    count = torch.logical_not(torch.isnan(self)).sum(dim, keepdim)
    return torch.nansum(self, dim, keepdim, dtype=dtype) / count


def count_nonzero__dim_IntList(self: Tensor, dim: List[int]) -> Tensor:
    return torch.ne(self, 0).sum(dim)


def count_nonzero(self: Tensor, dim: Optional[int] = None) -> Tensor:
    if dim is None:
        return torch.ne(self, 0).sum()
    return torch.ne(self, 0).sum([dim])


def aminmax(self: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    if dim is None:
        if self.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation "
                               "has no identity.")
        lo = torch.amin(self.reshape([-1]), [0], False)
        hi = torch.amax(self.reshape([-1]), [0], False)
        if keepdim:
            shape: List[int] = []
            for _ in range(self.dim()):
                shape.append(1)
            if self.dim() == 0:
                shape.append(1)
            return lo.reshape(shape), hi.reshape(shape)
        return lo, hi
    if self.dim() == 0 and keepdim:  # torch gives a 0-dim input a dimension here
        return torch.amin(self, [dim], keepdim).reshape([1]), torch.amax(self, [dim], keepdim).reshape([1])
    return torch.amin(self, [dim], keepdim), torch.amax(self, [dim], keepdim)


def std_mean(self: Tensor, unbiased: bool = True) -> Tuple[Tensor, Tensor]:
    return torch.std(self, unbiased), torch.mean(self)


def std_mean__dim(self: Tensor, dim: Optional[List[int]], unbiased: bool = True,
                  keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    return torch.std(self, dim, unbiased, keepdim), torch.mean(self, dim, keepdim)


def std_mean__correction(self: Tensor, dim: Optional[List[int]], correction: Optional[int],
                         keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    return torch.std(self, dim, correction=correction, keepdim=keepdim), torch.mean(self, dim, keepdim)


def var_mean(self: Tensor, unbiased: bool = True) -> Tuple[Tensor, Tensor]:
    return torch.var(self, unbiased), torch.mean(self)


def var_mean__dim(self: Tensor, dim: Optional[List[int]], unbiased: bool = True,
                  keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    return torch.var(self, dim, unbiased, keepdim), torch.mean(self, dim, keepdim)


def var_mean__correction(self: Tensor, dim: Optional[List[int]], correction: Optional[int],
                         keepdim: bool = False) -> Tuple[Tensor, Tensor]:
    return torch.var(self, dim, correction=correction, keepdim=keepdim), torch.mean(self, dim, keepdim)


def dist(self: Tensor, other: Tensor, p: float = 2) -> Tensor:
    return torch.norm(self - other, p)


def trace(self: Tensor) -> Tensor:
    if self.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim {}".format(self.dim()))
    d = torch.diagonal(self)
    if self.is_floating_point():
        return d.sum()
    return d.sum(dtype=torch.int64)


def renorm(self: Tensor, p: float, dim: int, maxnorm: float) -> Tensor:
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError("renorm: expected maxnorm to be >= 0 but got {}".format(maxnorm))
    if self.dim() <= 1:
        raise RuntimeError("renorm: input needs at least 2 dimensions, got {} dimensions".format(self.dim()))
    d = dim if dim >= 0 else dim + self.dim()
    reduce: List[int] = []
    for i in range(self.dim()):
        if i != d:
            reduce.append(i)
    norms = torch.norm(self, p, reduce, True)
    factor = torch.where(norms > maxnorm, maxnorm / (norms + 1e-7), torch.ones_like(norms))
    return self * factor


# ---- diagonals, scatters into views -----------------------------------------------------------------

def _broadcast_shape(a: List[int], b: List[int]) -> List[int]:
    """The broadcast of two shapes, torch's rule."""
    n = max(len(a), len(b))
    out: List[int] = []
    for i in range(n):
        x = a[i - n + len(a)] if i - n + len(a) >= 0 else 1
        y = b[i - n + len(b)] if i - n + len(b) >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
                               "dimension {}".format(x, y, i))
        out.append(y if x == 1 else x)
    return out


def _wrap(d: int, n: int) -> int:
    if d < -n or d >= n:
        raise IndexError("Dimension out of range (expected to be in range of [{}, {}], but got {})".format(
            -n, n - 1, d))
    return d + n if d < 0 else d


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    n = self.dim()
    d1 = _wrap(dim1, n)
    d2 = _wrap(dim2, n)
    if d1 == d2:
        raise RuntimeError("diagonal dimensions cannot be identical {}, {}".format(dim1, dim2))
    sizes = self.size()
    strides = self.stride()
    length = 0
    start = self.storage_offset()
    if offset >= 0:
        length = max(min(sizes[d1], sizes[d2] - offset), 0)
        if length > 0:
            start += offset * strides[d2]
    else:
        length = max(min(sizes[d1] + offset, sizes[d2]), 0)
        if length > 0:
            start -= offset * strides[d1]
    out_sizes: List[int] = []
    out_strides: List[int] = []
    for i in range(n):
        if i != d1 and i != d2:
            out_sizes.append(sizes[i])
            out_strides.append(strides[i])
    out_sizes.append(length)
    out_strides.append(strides[d1] + strides[d2])
    return torch.as_strided(self, out_sizes, out_strides, start)


def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    n = self.dim() + 1
    d1 = _wrap(dim1, n)
    d2 = _wrap(dim2, n)
    if d1 == d2:
        raise RuntimeError("diagonal dimensions cannot be identical {}, {}".format(dim1, dim2))
    last = self.size(-1) + abs(offset)
    shape: List[int] = []
    k = 0
    for i in range(n):
        if i == d1 or i == d2:
            shape.append(last)
        else:
            shape.append(self.size(k))
            k += 1
    out = torch.zeros(shape, dtype=self.dtype, device=self.device)
    torch.diagonal(out, offset, d1, d2).copy_(self)
    return out


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    if self.dim() == 1:
        return torch.diag_embed(self, diagonal, 0, 1)
    if self.dim() == 2:
        return torch.diagonal(self, diagonal, 0, 1).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got {}D".format(self.dim()))


def diagflat(self: Tensor, offset: int = 0) -> Tensor:
    return torch.diag_embed(self.reshape([-1]), offset, 0, 1)


def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    out = self.clone()
    view = torch.diagonal(out, offset, dim1, dim2)
    if view.size() != src.size():
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = {}, slice size = {}".format(
            src.size(), view.size()))
    view.copy_(src)
    return out


def select_scatter(self: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    out = self.clone()
    view = out.select(dim, index)
    if view.size() != src.size():
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = {}, slice size = {}".format(
            src.size(), view.size()))
    view.copy_(src)
    return out


def slice_scatter(self: Tensor, src: Tensor, dim: int = 0, start: Optional[int] = None,
                  end: Optional[int] = None, step: int = 1) -> Tensor:
    out = self.clone()
    view = out.slice(dim, start, end, step)
    if view.size() != src.size():
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = {}, slice size = {}".format(
            src.size(), view.size()))
    view.copy_(src)
    return out


def as_strided_scatter(self: Tensor, src: Tensor, size: List[int], stride: List[int],
                       storage_offset: Optional[int] = None) -> Tensor:
    out = self.clone()
    view = torch.as_strided(out, size, stride, storage_offset)
    if view.size() != src.size():
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = {}, slice size = {}".format(
            src.size(), view.size()))
    view.copy_(src)
    return out


# ---- shapes -----------------------------------------------------------------------------------------

def movedim__intlist(self: Tensor, source: List[int], destination: List[int]) -> Tensor:
    n = self.dim()
    if len(source) != len(destination):
        raise RuntimeError("movedim: Invalid source or destination dims: source ({} dims) should contain the "
                           "same number of dims as destination ({} dims)".format(len(source), len(destination)))
    src: List[int] = []
    dst: List[int] = []
    for s in source:
        w = _wrap(s, max(n, 1))
        if w in src:
            raise RuntimeError("movedim: repeated dim in `source` ({})".format(source))
        src.append(w)
    for d in destination:
        w = _wrap(d, max(n, 1))
        if w in dst:
            raise RuntimeError("movedim: repeated dim in `destination` ({})".format(destination))
        dst.append(w)
    if n == 0:
        return self
    order: List[int] = []
    for _ in range(n):
        order.append(-1)
    for i in range(len(src)):
        order[dst[i]] = src[i]
    rest: List[int] = []
    for i in range(n):
        if i not in src:
            rest.append(i)
    k = 0
    for i in range(n):
        if order[i] == -1:
            order[i] = rest[k]
            k += 1
    return self.permute(order)


def movedim__int(self: Tensor, source: int, destination: int) -> Tensor:
    return torch.movedim(self, [source], [destination])


def moveaxis__intlist(self: Tensor, source: List[int], destination: List[int]) -> Tensor:
    return torch.movedim(self, source, destination)


def moveaxis__int(self: Tensor, source: int, destination: int) -> Tensor:
    return torch.movedim(self, [source], [destination])


def broadcast_to(self: Tensor, size: List[int]) -> Tensor:
    return self.expand(size)


def atleast_1d(self: Tensor) -> Tensor:
    if self.dim() == 0:
        return self.reshape([1])
    return self


def atleast_2d(self: Tensor) -> Tensor:
    if self.dim() == 0:
        return self.reshape([1, 1])
    if self.dim() == 1:
        return self.unsqueeze(0)
    return self


def atleast_3d(self: Tensor) -> Tensor:
    if self.dim() == 0:
        return self.reshape([1, 1, 1])
    if self.dim() == 1:
        return self.unsqueeze(0).unsqueeze(-1)
    if self.dim() == 2:
        return self.unsqueeze(-1)
    return self


def atleast_1d__Sequence(tensors: List[Tensor]) -> List[Tensor]:
    return [torch.atleast_1d(t) for t in tensors]


def atleast_2d__Sequence(tensors: List[Tensor]) -> List[Tensor]:
    return [torch.atleast_2d(t) for t in tensors]


def atleast_3d__Sequence(tensors: List[Tensor]) -> List[Tensor]:
    return [torch.atleast_3d(t) for t in tensors]


def ravel(self: Tensor) -> Tensor:
    return self.reshape([-1])


def unflatten__int(self: Tensor, dim: int, sizes: List[int]) -> Tensor:
    if len(sizes) == 0:
        raise RuntimeError("unflatten: sizes must be non-empty")
    d = _wrap(dim, max(self.dim(), 1))
    shape: List[int] = []
    for i in range(d):
        shape.append(self.size(i))
    for s in sizes:
        shape.append(s)
    for i in range(d + 1, self.dim()):
        shape.append(self.size(i))
    return self.view(shape)


def fliplr(self: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return torch.flip(self, [1])


def flipud(self: Tensor) -> Tensor:
    if self.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return torch.flip(self, [0])


def rot90(self: Tensor, k: int = 1, dims: List[int] = [0, 1]) -> Tensor:
    if len(dims) != 2:
        raise RuntimeError("expected total rotation dims == 2, but got dims = {}".format(len(dims)))
    if self.dim() < 2:
        raise RuntimeError("expected total dims >= 2, but got total dims = {}".format(self.dim()))
    d0 = _wrap(dims[0], self.dim())
    d1 = _wrap(dims[1], self.dim())
    if d0 == d1:
        raise RuntimeError("expected rotation dims to be different, but got dim0 = {} and dim1 = {}".format(
            dims[0], dims[1]))
    k = k % 4
    if k == 1:
        return torch.flip(self, [d1]).transpose(d0, d1)
    if k == 2:
        return torch.flip(self, [d0, d1])
    if k == 3:
        return torch.flip(self, [d0]).transpose(d0, d1)
    return self.clone()


def tile(self: Tensor, dims: List[int]) -> Tensor:
    reps: List[int] = []
    for _ in range(self.dim() - len(dims)):
        reps.append(1)
    for d in dims:
        reps.append(d)
    return self.repeat(reps)


def _check_stack(tensors: List[Tensor], name: str):
    if len(tensors) == 0:
        raise RuntimeError("{} expects a non-empty TensorList".format(name))


def vstack(tensors: List[Tensor]) -> Tensor:
    _check_stack(tensors, "vstack")
    return torch.cat(torch.atleast_2d(tensors), 0)


def row_stack(tensors: List[Tensor]) -> Tensor:
    return torch.vstack(tensors)


def hstack(tensors: List[Tensor]) -> Tensor:
    _check_stack(tensors, "hstack")
    ts = torch.atleast_1d(tensors)
    if ts[0].dim() == 1:
        return torch.cat(ts, 0)
    return torch.cat(ts, 1)


def dstack(tensors: List[Tensor]) -> Tensor:
    _check_stack(tensors, "dstack")
    return torch.cat(torch.atleast_3d(tensors), 2)


def column_stack(tensors: List[Tensor]) -> Tensor:
    _check_stack(tensors, "column_stack")
    cols: List[Tensor] = []
    for t in tensors:
        if t.dim() <= 1:
            cols.append(t.reshape([t.numel(), 1]))
        else:
            cols.append(t)
    return torch.cat(cols, 1)


def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    return torch.narrow(self, dim, start, length).clone()


def tensor_split__indices(self: Tensor, indices: List[int], dim: int = 0) -> List[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    d = _wrap(dim, self.dim())
    size = self.size(d)
    out: List[Tensor] = []
    start = 0
    for i in indices:
        stop = max(min(i if i >= 0 else i + size, size), start)
        out.append(self.slice(d, start, stop))
        start = stop
    out.append(self.slice(d, start, size))
    return out


def tensor_split__sections(self: Tensor, sections: int, dim: int = 0) -> List[Tensor]:
    if self.dim() == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a tensor with 0 dims")
    if sections <= 0:
        raise RuntimeError("number of sections must be larger than 0, got {}".format(sections))
    d = _wrap(dim, self.dim())
    size = self.size(d)
    small = size // sections
    extra = size % sections
    out: List[Tensor] = []
    start = 0
    for i in range(sections):
        length = small + 1 if i < extra else small
        out.append(self.slice(d, start, start + length))
        start += length
    return out


def tensor_split__tensor_indices_or_sections(self: Tensor, tensor_indices_or_sections: Tensor,
                                             dim: int = 0) -> List[Tensor]:
    t = tensor_indices_or_sections
    if t.dtype != torch.int64:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to have dtype of long, but got {}".format(
            t.dtype))
    if t.dim() > 1:
        raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-dimensional or "
                           "one-dimensional tensor, but got a tensor with {} dims".format(t.dim()))
    if t.dim() == 0:
        return torch.tensor_split(self, int(t), dim)
    indices: List[int] = []
    for i in range(t.numel()):
        indices.append(int(t[i]))
    return torch.tensor_split(self, indices, dim)


def _split_dim_check(self: Tensor, name: str, need: int):
    if self.dim() < need:
        raise RuntimeError("torch.{} requires a tensor with at least {} dimension, but got a tensor with {} "
                           "dimensions!".format(name, need, self.dim()))


def hsplit__int(self: Tensor, sections: int) -> List[Tensor]:
    _split_dim_check(self, "hsplit", 1)
    d = 1 if self.dim() > 1 else 0
    if self.size(d) % sections != 0:
        raise RuntimeError("torch.hsplit attempted to split along dimension {}, but the size of the dimension {} "
                           "is not divisible by the split_size {}!".format(d, self.size(d), sections))
    return torch.tensor_split(self, sections, d)


def hsplit__array(self: Tensor, indices: List[int]) -> List[Tensor]:
    _split_dim_check(self, "hsplit", 1)
    return torch.tensor_split(self, indices, 1 if self.dim() > 1 else 0)


def vsplit__int(self: Tensor, sections: int) -> List[Tensor]:
    _split_dim_check(self, "vsplit", 2)
    if self.size(0) % sections != 0:
        raise RuntimeError("torch.vsplit attempted to split along dimension 0, but the size of the dimension {} "
                           "is not divisible by the split_size {}!".format(self.size(0), sections))
    return torch.tensor_split(self, sections, 0)


def vsplit__array(self: Tensor, indices: List[int]) -> List[Tensor]:
    _split_dim_check(self, "vsplit", 2)
    return torch.tensor_split(self, indices, 0)


def dsplit__int(self: Tensor, sections: int) -> List[Tensor]:
    _split_dim_check(self, "dsplit", 3)
    if self.size(2) % sections != 0:
        raise RuntimeError("torch.dsplit attempted to split along dimension 2, but the size of the dimension {} "
                           "is not divisible by the split_size {}!".format(self.size(2), sections))
    return torch.tensor_split(self, sections, 2)


def dsplit__array(self: Tensor, indices: List[int]) -> List[Tensor]:
    _split_dim_check(self, "dsplit", 3)
    return torch.tensor_split(self, indices, 2)


# ---- products -------------------------------------------------------------------------------------

def inner(self: Tensor, other: Tensor) -> Tensor:
    if self.dim() == 0 or other.dim() == 0:
        return self * other
    if self.size(-1) != other.size(-1):
        raise RuntimeError("inner() the last dimension must match on both input tensors but got shapes {} and {}".format(
            self.size(), other.size()))
    return torch.tensordot(self, other, [self.dim() - 1], [other.dim() - 1])


def vdot(self: Tensor, other: Tensor) -> Tensor:
    return torch.dot(self, other)


def addr(self: Tensor, vec1: Tensor, vec2: Tensor, beta: float = 1, alpha: float = 1) -> Tensor:
    if vec1.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError("addr: Expected 1-D argument vec1, but got {}-D".format(vec1.dim()))
    prod = torch.outer(vec1, vec2)
    if self.dtype == torch.bool:  # and, or: beta and alpha as truth values
        scaled = prod if bool(alpha) else torch.zeros_like(prod)
        if not bool(beta):
            return scaled.expand(_broadcast_shape(self.size(), prod.size())).clone()
        return torch.logical_or(self, scaled)
    if beta == 0:
        return (prod * alpha).expand(_broadcast_shape(self.size(), prod.size())).clone()
    return self * beta + prod * alpha


def kron(self: Tensor, other: Tensor) -> Tensor:
    n = max(self.dim(), other.dim())
    a = self.reshape([1 for _ in range(n - self.dim())] + self.size())
    b = other.reshape([1 for _ in range(n - other.dim())] + other.size())
    a_shape: List[int] = []
    b_shape: List[int] = []
    out_shape: List[int] = []
    for i in range(n):
        a_shape.append(a.size(i))
        a_shape.append(1)
        b_shape.append(1)
        b_shape.append(b.size(i))
        out_shape.append(a.size(i) * b.size(i))
    return (a.reshape(a_shape) * b.reshape(b_shape)).reshape(out_shape)


def tensordot(self: Tensor, other: Tensor, dims_self: List[int], dims_other: List[int]) -> Tensor:
    if len(dims_self) != len(dims_other):
        raise RuntimeError("both dimension lists should have same length")
    ds: List[int] = []
    do: List[int] = []
    for i in range(len(dims_self)):
        a = _wrap(dims_self[i], max(self.dim(), 1))
        b = _wrap(dims_other[i], max(other.dim(), 1))
        if self.size(a) != other.size(b):
            raise RuntimeError("contracted dimensions need to match, but first has size {} in dim {} and second has "
                               "size {} in dim {}".format(self.size(a), a, other.size(b), b))
        ds.append(a)
        do.append(b)
    free_self: List[int] = []
    free_other: List[int] = []
    out_shape: List[int] = []
    k = 1
    for i in range(self.dim()):
        if i not in ds:
            free_self.append(i)
            out_shape.append(self.size(i))
    for i in range(other.dim()):
        if i not in do:
            free_other.append(i)
            out_shape.append(other.size(i))
    for i in ds:
        k *= self.size(i)
    m = 1
    for i in free_self:
        m *= self.size(i)
    n = 1
    for i in free_other:
        n *= other.size(i)
    a = self.permute(free_self + ds).reshape([m, k])
    b = other.permute(do + free_other).reshape([k, n])
    return torch.mm(a, b).reshape(out_shape)


def cov(self: Tensor, correction: int = 1, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an input with {} "
                           "dimensions".format(self.dim()))
    x = self if self.dim() == 2 else self.reshape([1, -1])
    n = x.size(1)
    w: Optional[Tensor] = None
    if fweights is not None:
        if fweights.dim() > 1:
            raise RuntimeError("cov(): expected fweights to have one or fewer dimensions but got fweights with {} "
                               "dimensions".format(fweights.dim()))
        if fweights.is_floating_point():
            raise RuntimeError("cov(): expected fweights to have integral dtype but got fweights with {} dtype".format(
                fweights.dtype))
        if fweights.numel() != n:
            raise RuntimeError("cov(): expected fweights to have the same numel as there are observations in the "
                               "input but got {} != {}".format(fweights.numel(), n))
        if bool(torch.any(fweights < 0)):
            raise RuntimeError("cov(): fweights cannot be negative")
        w = fweights
    if aweights is not None:
        if aweights.dim() > 1:
            raise RuntimeError("cov(): expected aweights to have one or fewer dimensions but got aweights with {} "
                               "dimensions".format(aweights.dim()))
        if not aweights.is_floating_point():
            raise RuntimeError("cov(): expected aweights to have floating point dtype but got aweights with {} "
                               "dtype".format(aweights.dtype))
        if aweights.numel() != n:
            raise RuntimeError("cov(): expected aweights to have the same numel as there are observations in the "
                               "input but got {} != {}".format(aweights.numel(), n))
        if bool(torch.any(aweights < 0)):
            raise RuntimeError("cov(): aweights cannot be negative")
        w = aweights if w is None else w * aweights
    if not x.is_floating_point():
        x = x * 1.0  # an integer input computes in the default floating dtype
    if w is None:
        avg = x.mean(1)
        w_sum = torch.tensor(float(n), dtype=x.dtype)
        norm_factor = w_sum - correction
    else:
        avg = (x * w).sum(1) / w.sum()
        w_sum = w.sum()
        if aweights is None or correction == 0:
            norm_factor = w_sum - correction
        else:
            norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    norm_factor = torch.clamp(norm_factor, 0)
    xc = x - avg.unsqueeze(1)
    xw = xc if w is None else xc * w
    return (torch.mm(xw, xc.t()) / norm_factor).squeeze()


def corrcoef(self: Tensor) -> Tensor:
    if self.dim() > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got an input with {} "
                           "dimensions".format(self.dim()))
    c = torch.cov(self)
    if c.dim() == 0:
        return c / c
    d = torch.diagonal(c)
    stddev = torch.sqrt(d)
    c = c / stddev.unsqueeze(1)
    c = c / stddev.unsqueeze(0)
    return torch.clamp(c, -1, 1)


def cartesian_prod(tensors: List[Tensor]) -> Tensor:
    for t in tensors:
        if t.dim() != 1:
            raise RuntimeError("Expect a 1D vector, but got shape {}".format(t.size()))
    if len(tensors) == 1:
        return tensors[0]
    grids = torch.meshgrid(tensors, indexing="ij")
    return torch.stack([g.reshape([-1]) for g in grids], 1)


def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    if self.dim() != 1:
        raise RuntimeError("Expect a 1D vector, but got shape {}".format(self.size()))
    if r < 0:
        raise RuntimeError("Expect a non-negative number, but got {}".format(r))
    if r == 0:
        return torch.empty([0], dtype=self.dtype)
    n = self.numel()
    rows: List[List[int]] = []
    idx: List[int] = [0 for _ in range(r)]
    if not with_replacement:
        idx = [i for i in range(r)]
    done = n == 0 or (not with_replacement and r > n)
    while not done:
        rows.append([i for i in idx])
        # the next combination in lexicographic order
        i = r - 1
        moved = False
        while i >= 0 and not moved:
            limit = n - 1 if with_replacement else n - r + i
            if idx[i] < limit:
                idx[i] += 1
                for j in range(i + 1, r):
                    idx[j] = idx[i] if with_replacement else idx[j - 1] + 1
                moved = True
            i -= 1
        done = not moved
    if len(rows) == 0:
        return torch.empty([0, r], dtype=self.dtype)
    flat: List[int] = []
    for row in rows:
        for v in row:
            flat.append(v)
    return self.index_select(0, torch.tensor(flat, dtype=torch.int64)).reshape([len(rows), r])


def block_diag(tensors: List[Tensor]) -> Tensor:
    rows = 0
    cols = 0
    mats: List[Tensor] = []
    for i in range(len(tensors)):
        t = tensors[i]
        if t.dim() > 2:
            raise RuntimeError("torch.block_diag: Input tensors must have 2 or fewer dimensions. Input {} has {} "
                               "dimensions".format(i, t.dim()))
        m = t.reshape([1, -1]) if t.dim() < 2 else t
        if t.dim() == 0:
            m = t.reshape([1, 1])
        mats.append(m)
        rows += m.size(0)
        cols += m.size(1)
    if len(mats) == 0:
        return torch.zeros([0, 0])
    dtype = torch.promote_types(mats[0].dtype, mats[0].dtype)
    for m in mats:
        dtype = torch.promote_types(dtype, m.dtype)
    out = torch.zeros([rows, cols], dtype=dtype, device=mats[0].device)
    r = 0
    c = 0
    for m in mats:
        out.narrow(0, r, m.size(0)).narrow(1, c, m.size(1)).copy_(m)
        r += m.size(0)
        c += m.size(1)
    return out


# ---- integration --------------------------------------------------------------------------------------

def _trapezoid_check(y: Tensor, dim: int) -> int:
    if y.dim() == 0:
        raise IndexError("trapezoid: Dimension specified as {} but tensor has no dimensions".format(dim))
    return _wrap(dim, y.dim())


def trapezoid__x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
    d = _trapezoid_check(y, dim)
    if y.size(d) == 0:
        return torch.zeros_like(y).sum(d)
    dx = torch.diff(x, dim=-1 if x.dim() == 1 else d)
    if x.dim() == 1:
        shape = [1 for _ in range(y.dim())]
        shape[d] = dx.size(0)
        dx = dx.reshape(shape)
    left = y.narrow(d, 0, y.size(d) - 1)
    right = y.narrow(d, 1, y.size(d) - 1)
    return ((left + right) * dx).sum(d) / 2.0


def trapezoid__dx(y: Tensor, dx: float = 1, dim: int = -1) -> Tensor:
    d = _trapezoid_check(y, dim)
    if y.size(d) == 0:
        return torch.zeros_like(y).sum(d)
    left = y.narrow(d, 0, y.size(d) - 1)
    right = y.narrow(d, 1, y.size(d) - 1)
    return (left + right).sum(d) * dx / 2.0


def trapz__x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
    return torch.trapezoid(y, x, dim=dim)


def trapz__dx(y: Tensor, dx: float = 1., dim: int = -1) -> Tensor:
    return torch.trapezoid(y, dx=dx, dim=dim)


def cumulative_trapezoid__x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
    d = _trapezoid_check(y, dim)
    if y.size(d) == 0:
        return y.narrow(d, 0, 0) * 1.0
    dx = torch.diff(x, dim=-1 if x.dim() == 1 else d)
    if x.dim() == 1:
        shape = [1 for _ in range(y.dim())]
        shape[d] = dx.size(0)
        dx = dx.reshape(shape)
    left = y.narrow(d, 0, y.size(d) - 1)
    right = y.narrow(d, 1, y.size(d) - 1)
    return torch.cumsum((left + right) * dx / 2.0, d)


def cumulative_trapezoid__dx(y: Tensor, dx: float = 1, dim: int = -1) -> Tensor:
    d = _trapezoid_check(y, dim)
    if y.size(d) == 0:
        return y.narrow(d, 0, 0) * 1.0
    left = y.narrow(d, 0, y.size(d) - 1)
    right = y.narrow(d, 1, y.size(d) - 1)
    return torch.cumsum((left + right) * dx / 2.0, d)


# ---- gathers and counts --------------------------------------------------------------------------------

def take_along_dim(self: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
    if indices.dtype != torch.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got {}".format(indices.dtype))
    if dim is None:
        return self.reshape([-1]).gather(0, indices.reshape([-1]))
    d = _wrap(dim, max(self.dim(), 1))
    if self.dim() != indices.dim():
        raise RuntimeError("torch.take_along_dim(): input and indices should have the same number of dimensions, "
                           "but got {} dimensions for input, and {} dimensions for indices".format(
                               self.dim(), indices.dim()))
    self_shape = self.size()
    self_shape[d] = indices.size(d)
    idx_b = _broadcast_shape(self_shape, indices.size())
    self_b = _broadcast_shape(self_shape, indices.size())
    self_b[d] = self.size(d)
    return self.expand(self_b).gather(d, indices.expand(idx_b))


def argwhere(self: Tensor) -> Tensor:
    return torch.nonzero(self)


def histc(self: Tensor, bins: int = 100, min: float = 0, max: float = 0) -> Tensor:
    if bins <= 0:
        raise RuntimeError("torch.histc(): bins must be > 0, but got {} for dimension 0".format(bins))
    if not self.is_floating_point():
        raise RuntimeError("\"histogram_cpu\" not implemented for '{}'".format(self.dtype))
    lo = float(min)
    hi = float(max)
    if lo == hi and self.numel() > 0:
        lo = float(self.min())
        hi = float(self.max())
    if lo == hi:
        lo -= 1.0
        hi += 1.0
    if lo > hi:
        raise RuntimeError("torch.histc(): max must be larger than min")
    if lo - lo != 0.0 or hi - hi != 0.0:  # an infinity or a NaN
        raise RuntimeError("torch.histc(): range of [{}, {}] is not finite".format(lo, hi))
    x = self.reshape([-1]).to(torch.float64)
    keep = torch.logical_and(x >= lo, x <= hi)
    x = torch.masked_select(x, keep)
    pos = torch.floor((x - lo) * bins / (hi - lo)).to(torch.int64)
    pos = torch.clamp(pos, 0, bins - 1)
    counts = torch.zeros([bins], dtype=torch.float64).scatter_add(0, pos, torch.ones_like(x))
    return counts.to(self.dtype)


def bincount(self: Tensor, weights: Optional[Tensor] = None, minlength: int = 0) -> Tensor:
    if self.dim() != 1:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if self.is_floating_point() or self.dtype == torch.bool:
        raise RuntimeError("\"bincount_cpu\" not implemented for '{}'".format(self.dtype))
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if self.numel() > 0 and int(self.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = minlength
    if self.numel() > 0:
        n = max(n, int(self.max()) + 1)
    idx = self.to(torch.int64)
    if weights is None:
        return torch.zeros([n], dtype=torch.int64).scatter_add(0, idx, torch.ones_like(idx))
    if weights.dim() != 1 or weights.numel() != self.numel():
        raise RuntimeError("weights should be 1-d and have the same length as input")
    dt = weights.dtype if weights.is_floating_point() else torch.float64
    if weights.dtype == torch.float32 or weights.dtype == torch.float16 or weights.dtype == torch.bfloat16:
        dt = torch.float32 if weights.dtype == torch.float32 else torch.float64
    return torch.zeros([n], dtype=torch.float64).scatter_add(0, idx, weights.to(torch.float64)).to(dt)


# ---- Python's bitwise operators ----------------------------------------------------------------------

def __and____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return torch.bitwise_and(self, other)


def __and____Scalar(self: Tensor, other: int) -> Tensor:
    return torch.bitwise_and(self, other)


def __or____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return torch.bitwise_or(self, other)


def __or____Scalar(self: Tensor, other: int) -> Tensor:
    return torch.bitwise_or(self, other)


def __xor____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return torch.bitwise_xor(self, other)


def __xor____Scalar(self: Tensor, other: int) -> Tensor:
    return torch.bitwise_xor(self, other)


def __lshift____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return torch.bitwise_left_shift(self, other)


def __lshift____Scalar(self: Tensor, other: int) -> Tensor:
    return torch.bitwise_left_shift(self, other)


def __rshift____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return torch.bitwise_right_shift(self, other)


def __rshift____Scalar(self: Tensor, other: int) -> Tensor:
    return torch.bitwise_right_shift(self, other)


def __iand____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return self.bitwise_and_(other)


def __iand____Scalar(self: Tensor, other: int) -> Tensor:
    return self.bitwise_and_(other)


def __ior____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return self.bitwise_or_(other)


def __ior____Scalar(self: Tensor, other: int) -> Tensor:
    return self.bitwise_or_(other)


def __ixor____Tensor(self: Tensor, other: Tensor) -> Tensor:
    return self.bitwise_xor_(other)


def __ixor____Scalar(self: Tensor, other: int) -> Tensor:
    return self.bitwise_xor_(other)


# ---- overloads torch has beside an op with a kernel -------------------------------------------------

def max__other(self: Tensor, other: Tensor) -> Tensor:
    return torch.maximum(self, other)


def min__other(self: Tensor, other: Tensor) -> Tensor:
    return torch.minimum(self, other)


def narrow__Tensor(self: Tensor, dim: int, start: Tensor, length: int) -> Tensor:
    if start.dim() != 0 or start.is_floating_point():
        raise RuntimeError("start must be an 0-dim integral Tensor.")
    return torch.narrow(self, dim, int(start), length)


def special_round(self: Tensor, decimals: int = 0) -> Tensor:
    if not self.is_floating_point():
        raise RuntimeError("\"round_vml_cpu\" not implemented for '{}'".format(self.dtype))
    return torch.round(self, decimals=decimals)


def _float_power_inplace_check(self: Tensor):
    if self.dtype != torch.float64:
        raise RuntimeError("the base given to float_power_ has dtype {} but the operation's result requires dtype "
                           "Double".format(self.dtype))


def float_power___Tensor(self: Tensor, exponent: Tensor) -> Tensor:
    _float_power_inplace_check(self)
    return self.copy_(torch.float_power(self, exponent))


def float_power___Scalar(self: Tensor, exponent: float) -> Tensor:
    _float_power_inplace_check(self)
    return self.copy_(torch.float_power(self, exponent))
# ---- sorting and selection -------------------------------------------------------------------------

def argsort(self: Tensor, dim: int = -1, descending: bool = False) -> Tensor:
    return torch.sort(self, dim, descending)[1]


def argsort__stable(self: Tensor, stable: bool, dim: int = -1, descending: bool = False) -> Tensor:
    return torch.sort(self, stable=stable, dim=dim, descending=descending)[1]


def msort(self: Tensor) -> Tensor:
    return torch.sort(self, 0)[0]
# ---- nn ---------------------------------------------------------------------------------------------
# The 1-D pools are their 2-D ops over a height of one, with torch's own checks first
# (aten/src/ATen/native/Pooling.cpp, AdaptiveAveragePooling.cpp, AdaptiveMaxPooling2d.cpp).

def _check_dim_range(fn: str, self: Tensor, lo: int, hi: int):
    """torch's checkDimRange: lo <= self.dim() < hi."""
    if self.dim() < lo or self.dim() >= hi:
        raise RuntimeError("Expected {} to {} dimensions, but got {}-dimensional tensor for argument #1 'self' "
                           "(while checking arguments for {})".format(lo, hi - 1, self.dim(), fn))


def _check1d(fn: str, arg: str, v: List[int]):
    if len(v) != 1:
        raise RuntimeError("{}() argument '{}' should contain one int (got {})".format(fn, arg, len(v)))


def _pooled_size(size: int, k: int, pad: int, stride: int, dilation: int, ceil_mode: bool) -> int:
    """torch's pooling_output_shape."""
    num = size + 2 * pad - dilation * (k - 1) - 1
    if ceil_mode:
        num = num + stride - 1
    out = num // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out = out - 1
    return out


def max_pool1d_with_indices(self: Tensor, kernel_size: List[int], stride: List[int], padding: List[int],
                            dilation: List[int], ceil_mode: bool) -> Tuple[Tensor, Tensor]:
    if len(stride) == 0:
        stride = kernel_size
    _check_dim_range("max_pool1d", self, 2, 4)
    _check1d("max_pool1d", "kernel_size", kernel_size)
    _check1d("max_pool1d", "stride", stride)
    _check1d("max_pool1d", "padding", padding)
    _check1d("max_pool1d", "dilation", dilation)
    out = torch.max_pool2d_with_indices(self.unsqueeze(-2), [1, kernel_size[0]], [1, stride[0]], [0, padding[0]],
                                        [1, dilation[0]], ceil_mode)
    return out[0].squeeze(-2), out[1].squeeze(-2)


def max_pool1d(self: Tensor, kernel_size: List[int], stride: List[int], padding: List[int], dilation: List[int],
               ceil_mode: bool) -> Tensor:
    # check_max_pool1d (MaxPooling.cpp): unlike the 2-D op, an output of length 0 is allowed
    valid = self.dim() == 2 or self.dim() == 3
    if valid:
        for i in range(self.dim() - 2, self.dim()):
            valid = valid and self.size(i) != 0
    if not valid:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for "
                           "input, but got:{}".format(self.size()))
    if len(kernel_size) != 1:
        raise RuntimeError("max_pool1d() kernel_size must be an int, list of ints or tuple of ints of size 1 but "
                           "got size {}".format(len(kernel_size)))
    if len(stride) != 0 and len(stride) != 1:
        raise RuntimeError("max_pool1d() stride must be None, an int, list of ints, or tuple of ints of size 1 but "
                           "got size {}".format(len(stride)))
    if len(padding) != 1:
        raise RuntimeError("max_pool1d() padding must be an int, list of ints, or tuple of ints of size 1 but got "
                           "size {}".format(len(padding)))
    if len(dilation) != 1:
        raise RuntimeError("max_pool1d() dilation must be an int, list of ints or tuple of ints of size 1 but got "
                           "size {}".format(len(dilation)))
    if len(stride) == 0:
        stride = kernel_size
    k = kernel_size[0]
    s = stride[0]
    p = padding[0]
    d = dilation[0]
    if k <= 0:
        raise RuntimeError("max_pool1d() kernel_size must be greater than zero, but got {}".format(k))
    if s <= 0:
        raise RuntimeError("max_pool1d() stride must be greater than zero, but got {}".format(s))
    if p < 0:
        raise RuntimeError("max_pool1d() padding must be non-negative, but got {}".format(p))
    if p > k // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but got padding={} and "
                           "kernel_size={}".format(p, k))
    if d <= 0:
        raise RuntimeError("max_pool1d() dilation must be greater than zero, but got {}".format(d))
    ow = _pooled_size(self.size(-1), k, p, s, d, ceil_mode)
    if ow < 0:
        raise RuntimeError("max_pool1d() Invalid computed output size: {}".format(ow))
    if ow == 0:
        shape = self.size()
        shape[-1] = 0
        return self.new_empty(shape)
    return torch.max_pool2d(self.unsqueeze(-2), [1, k], [1, s], [0, p], [1, d], ceil_mode).squeeze(-2)


def avg_pool1d(self: Tensor, kernel_size: List[int], stride: List[int], padding: List[int], ceil_mode: bool,
               count_include_pad: bool) -> Tensor:
    if len(stride) == 0:
        stride = kernel_size
    _check_dim_range("avg_pool1d", self, 2, 4)
    _check1d("avg_pool1d", "kernel_size", kernel_size)
    _check1d("avg_pool1d", "stride", stride)
    _check1d("avg_pool1d", "padding", padding)
    return torch.avg_pool2d(self.unsqueeze(-2), [1, kernel_size[0]], [1, stride[0]], [0, padding[0]], ceil_mode,
                            count_include_pad).squeeze(-2)


def adaptive_avg_pool1d(self: Tensor, output_size: List[int]) -> Tensor:
    _check_dim_range("adaptive_avg_pool1d", self, 2, 4)
    _check1d("adaptive_avg_pool1d", "output_size", output_size)
    return torch.adaptive_avg_pool2d(self.unsqueeze(-2), [1, output_size[0]]).squeeze(-2)


def adaptive_max_pool1d(self: Tensor, output_size: List[int]) -> Tuple[Tensor, Tensor]:
    _check_dim_range("adaptive_max_pool1d", self, 2, 4)
    _check1d("adaptive_max_pool1d", "output_size", output_size)
    for i in range(1, self.dim()):
        if self.size(i) <= 0:
            raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for non-batch "
                               "dimensions, but input has sizes {} with dimension {} being empty".format(self.size(), i))
    out = torch._C._nn.adaptive_max_pool2d(self.unsqueeze(-2), [1, output_size[0]])
    return out[0].squeeze(-2), out[1].squeeze(-2)


# pixel_shuffle and friends (PixelShuffle.cpp, ChanelShuffle.cpp): reshapes around one permute.

def pixel_shuffle(self: Tensor, upscale_factor: int) -> Tensor:
    if self.dim() < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got input with {} "
                           "dimension(s)".format(self.dim()))
    if upscale_factor <= 0:
        raise RuntimeError("pixel_shuffle expects a positive upscale_factor, but got {}".format(upscale_factor))
    f = upscale_factor
    c = self.size(-3)
    if c % (f * f) != 0:
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of "
                           "upscale_factor, but input.size(-3)={} is not divisible by {}".format(c, f * f))
    h = self.size(-2)
    w = self.size(-1)
    batch = self.size()[:-3]
    nb = len(batch)
    x = self.reshape(batch + [c // (f * f), f, f, h, w])
    perm = [i for i in range(nb)] + [nb, nb + 3, nb + 1, nb + 4, nb + 2]
    return x.permute(perm).contiguous().view(batch + [c // (f * f), h * f, w * f])


def pixel_unshuffle(self: Tensor, downscale_factor: int) -> Tensor:
    if self.dim() < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but got input with {} "
                           "dimension(s)".format(self.dim()))
    if downscale_factor <= 0:
        raise RuntimeError("pixel_unshuffle expects a positive downscale_factor, but got {}".format(downscale_factor))
    f = downscale_factor
    c = self.size(-3)
    h = self.size(-2)
    w = self.size(-1)
    if h % f != 0:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, but "
                           "input.size(-2)={} is not divisible by {}".format(h, f))
    if w % f != 0:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, but "
                           "input.size(-1)={} is not divisible by {}".format(w, f))
    batch = self.size()[:-3]
    nb = len(batch)
    x = self.reshape(batch + [c, h // f, f, w // f, f])
    perm = [i for i in range(nb)] + [nb, nb + 2, nb + 4, nb + 1, nb + 3]
    return x.permute(perm).contiguous().view(batch + [c * f * f, h // f, w // f])


def channel_shuffle(self: Tensor, groups: int) -> Tensor:
    if self.dim() <= 2:
        raise RuntimeError("channel_shuffle expects input to have at least 3 dimensions, but got input with {} "
                           "dims".format(self.dim()))
    if groups <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of groups:{}".format(groups))
    c = self.size(1)
    if c % groups != 0:
        raise RuntimeError("Number of channels must be divisible by groups. Got {} channels and {} "
                           "groups.".format(c, groups))
    rest = self.size()[2:]
    x = self.reshape([self.size(0), groups, c // groups] + rest)
    return x.transpose(1, 2).contiguous().view(self.size())


def one_hot(self: Tensor, num_classes: int) -> Tensor:
    """Onehot.cpp: int64 indices only; the class count from the largest index when -1."""
    if self.dtype != torch.int64:
        raise RuntimeError("one_hot is only applicable to index tensor.")
    shape = self.size()
    if self.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        shape.append(num_classes)
        return torch.zeros(shape, dtype=torch.int64, device=self.device)
    if int(self.min()) < 0:
        raise RuntimeError("Class values must be non-negative.")
    if num_classes == -1:
        num_classes = int(self.max()) + 1
    elif num_classes <= int(self.max()):
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = torch.arange(num_classes, dtype=torch.int64, device=self.device)
    return (self.unsqueeze(-1) == classes).to(torch.int64)


def _linspace_from_neg_one(theta: Tensor, num_steps: int, align_corners: bool) -> Tensor:
    """AffineGridGenerator.cpp's range: linspace(-1, 1, num_steps) (as torch's CPU linspace computes
    it: from the start on the first half, from the end on the second), scaled to the pixel centres
    unless align_corners."""
    if num_steps <= 1:
        return torch.zeros([1], dtype=theta.dtype, device=theta.device)
    step = 2.0 / (num_steps - 1)
    half = num_steps // 2
    first = torch.arange(half, dtype=theta.dtype, device=theta.device) * step - 1.0
    second = 1.0 - torch.arange(num_steps - half - 1, -1, -1, dtype=theta.dtype, device=theta.device) * step
    r = torch.cat([first, second])
    if not align_corners:
        r = r * (num_steps - 1) / num_steps
    return r


def affine_grid_generator(theta: Tensor, size: List[int], align_corners: bool) -> Tensor:
    if len(size) != 4 and len(size) != 5:
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) inputs.")
    n = size[0]
    spatial = size[2:]
    nsp = len(spatial)
    shape = [n] + spatial
    coords: List[Tensor] = []
    for i in range(nsp):
        r = _linspace_from_neg_one(theta, spatial[nsp - 1 - i], align_corners)
        for _ in range(i):
            r = r.unsqueeze(-1)
        coords.append(r.expand(shape))
    coords.append(torch.ones(shape, dtype=theta.dtype, device=theta.device))
    base = torch.stack(coords, -1)
    count = 1
    for s in spatial:
        count *= s
    grid = base.view([n, count, nsp + 1]).bmm(theta.transpose(1, 2))
    return grid.view(shape + [nsp])


# ---- nn more ----
# The rest of torch.nn.functional's ops, as torch 1.13's ATen computes them (Activation.cpp,
# Loss.cpp, Distance.cpp, Normalization.cpp, EmbeddingBag.cpp, FractionalMaxPool2d/3d.cpp,
# Dropout.cpp, transformers/attention.cpp).

def celu(self: Tensor, alpha: float = 1.0) -> Tensor:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return torch._C._nn.elu(self, alpha, 1.0, 1.0 / alpha)


def selu(self: Tensor) -> Tensor:
    return torch._C._nn.elu(self, 1.6732632423543772848170429916717, 1.0507009873554804934193349852946)


def glu(self: Tensor, dim: int = -1) -> Tensor:
    if self.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = dim + self.dim() if dim < 0 else dim
    if d < 0 or d >= self.dim():
        raise IndexError("Dimension out of range (expected to be in range of [{}, {}], but got {})".format(
            -self.dim(), self.dim() - 1, dim))
    n = self.size(d)
    if n % 2 != 0:
        raise RuntimeError("Halving dimension must be even, but dimension {} is size {}".format(d, n))
    return self.narrow(d, 0, n // 2) * torch.sigmoid(self.narrow(d, n // 2, n // 2))


def prelu(self: Tensor, weight: Tensor) -> Tensor:
    w = weight
    if weight.numel() != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = self.size(1) if self.dim() > 1 else 1
        if channels != weight.numel():
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = {} "
                               "and channel size = {}.".format(weight.numel(), channels))
        shape = [channels]
        for _ in range(self.dim() - 2):
            shape.append(1)
        w = weight.reshape(shape)
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = {}".format(
            weight.dim()))
    if weight.numel() == 1:
        w = weight.reshape(torch.jit.annotate(List[int], []))
    return torch.where(self > 0, self, w * self)


def rrelu(self: Tensor, lower: float = 0.125, upper: float = 0.33333333333333331, training: bool = False) -> Tensor:
    """Training draws each negative element's slope from U(lower, upper) (not torch's draws)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if training:
        slope = torch.empty_like(self).uniform_(lower, upper)
        return torch.where(self <= 0, self * slope, self)
    return torch._C._nn.leaky_relu(self, (lower + upper) / 2)


def softshrink(self: Tensor, lambd: float = 0.5) -> Tensor:
    if lambd < 0:
        # C++ prints a whole double without its fraction
        shown = str(int(lambd)) if lambd == float(int(lambd)) else str(lambd)
        raise RuntimeError("lambda must be greater or equal to 0, but found to be {}.".format(shown))
    return torch.where(self > lambd, self - lambd, torch.where(self < -lambd, self + lambd, self * 0))


def hardshrink(self: Tensor, lambd: float = 0.5) -> Tensor:
    return torch.where((self >= -lambd) & (self <= lambd), torch.zeros_like(self), self)


def threshold(self: Tensor, threshold: float, value: float) -> Tensor:
    """x <= threshold ? value : x, both numbers first converted to self's dtype, as torch's kernel."""
    if self.dtype == torch.bool:
        raise RuntimeError("\"threshold_cpu\" not implemented for 'Bool'")
    t = torch.full(torch.jit.annotate(List[int], []), threshold, dtype=self.dtype, device=self.device)
    v = torch.full(torch.jit.annotate(List[int], []), value, dtype=self.dtype, device=self.device)
    return torch.where(self <= t, v, self)


def _loss_reduction(loss: Tensor, reduction: int) -> Tensor:
    if reduction == 1:
        return loss.mean()
    if reduction == 2:
        return loss.sum()
    return loss


def kl_div(self: Tensor, target: Tensor, reduction: int = 1, log_target: bool = False) -> Tensor:
    if log_target:
        out = torch.exp(target) * (target - self)
    else:
        out = torch.xlogy(target, target) - target * self
    return _loss_reduction(out, reduction)


def _norm_clamped(x: Tensor, dim: int, eps: float) -> Tensor:
    """||x||_2 along dim, kept, clamped at eps with the clamp outside autograd (torch clamps under
    NoGradGuard, so the gradient flows as through the norm)."""
    n = torch.norm(x, 2.0, [dim], True)
    return n + (n.clamp_min(eps) - n).detach()


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-08) -> Tensor:
    common = torch.result_type(x1, x2)
    if not torch.empty([0], dtype=common).is_floating_point():
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is {}".format(common))
    a = x1 if x1.is_floating_point() else x1.to(common)
    b = x2 if x2.is_floating_point() else x2.to(common)
    sa = a.size()
    sb = b.size()
    n = len(sa) if len(sa) > len(sb) else len(sb)
    shape: List[int] = []
    for i in range(n):
        ia = i - n + len(sa)
        ib = i - n + len(sb)
        x = sa[ia] if ia >= 0 else 1
        y = sb[ib] if ib >= 0 else 1
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
                               "dimension {}".format(x, y, i))
        shape.append(y if x == 1 else x)
    a = a.expand(shape)
    b = b.expand(shape)
    return ((a / _norm_clamped(a, dim, eps)) * (b / _norm_clamped(b, dim, eps))).sum(dim)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2., eps: float = 9.9999999999999995e-07,
                      keepdim: bool = False) -> Tensor:
    d = x1.dim() if x1.dim() > x2.dim() else x2.dim()
    return torch.norm(x1 - x2 + eps, p, [d - 1], keepdim)


def pdist(self: Tensor, p: float = 2.) -> Tensor:
    if self.dim() != 2:
        raise RuntimeError("pdist only supports 2D tensors, got: {}D".format(self.dim()))
    if not self.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = self.size(0)
    if n <= 1:
        return torch.empty([0], dtype=self.dtype, device=self.device)
    if self.size(1) == 0:
        return torch.zeros([n * (n - 1) // 2], dtype=self.dtype, device=self.device)
    r = torch.arange(n, device=self.device)
    upper = r.unsqueeze(0) > r.unsqueeze(1)  # (i, j) with i < j, row-major as torch orders them
    i = torch.masked_select(r.unsqueeze(1).expand([n, n]), upper)
    j = torch.masked_select(r.unsqueeze(0).expand([n, n]), upper)
    return torch.norm(self.index_select(0, i) - self.index_select(0, j), p, [1], False)


def ctc_loss__IntList(log_probs: Tensor, targets: Tensor, input_lengths: List[int], target_lengths: List[int],
                      blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    res = torch._ctc_loss(lp, tg.to(torch.int64), input_lengths, target_lengths, blank, zero_infinity)[0]
    if zero_infinity:
        res = torch.where(res == math.inf, torch.zeros(torch.jit.annotate(List[int], []), dtype=res.dtype, device=res.device), res)
    if reduction == 1:
        lengths = torch.tensor(target_lengths, dtype=res.dtype, device=res.device).clamp_min(1)
        return (res / lengths).mean()
    if reduction == 2:
        return res.sum()
    return res if batched else res.squeeze(0)


def ctc_loss__Tensor(log_probs: Tensor, targets: Tensor, input_lengths: Tensor, target_lengths: Tensor,
                     blank: int = 0, reduction: int = 1, zero_infinity: bool = False) -> Tensor:
    if input_lengths.is_floating_point() or input_lengths.dtype == torch.bool:
        raise RuntimeError("input_lengths must be integral")
    if target_lengths.is_floating_point() or target_lengths.dtype == torch.bool:
        raise RuntimeError("target_lengths must be integral")
    ilt = input_lengths.to(torch.int64).reshape([-1])
    tlt = target_lengths.to(torch.int64).reshape([-1])
    il: List[int] = []
    for i in range(ilt.size(0)):
        il.append(int(ilt[i]))
    tl: List[int] = []
    for i in range(tlt.size(0)):
        tl.append(int(tlt[i]))
    return ctc_loss__IntList(log_probs, targets, il, tl, blank, reduction, zero_infinity)


def instance_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Optional[Tensor],
                  running_var: Optional[Tensor], use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
    """Batch norm of the (1, N * C, ...) view; the running statistics, repeated per batch entry,
    are averaged back over the batch (Normalization.cpp)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when use_input_stats is false")
    n = input.size(0)
    c = input.size(1)
    shape = [1, n * c]
    for i in range(input.dim() - 2):
        shape.append(input.size(i + 2))
    x = input.contiguous().view(shape)
    w: Optional[Tensor] = None
    if weight is not None:
        w = weight.repeat([n])
    b: Optional[Tensor] = None
    if bias is not None:
        b = bias.repeat([n])
    rm: Optional[Tensor] = None
    if running_mean is not None:
        rm = running_mean.repeat([n])
    rv: Optional[Tensor] = None
    if running_var is not None:
        rv = running_var.repeat([n])
    out = torch.batch_norm(x, w, b, rm, rv, use_input_stats, momentum, eps, cudnn_enabled)
    if running_mean is not None and rm is not None:
        running_mean.copy_(rm.view([n, c]).mean(0))
    if running_var is not None and rv is not None:
        running_var.copy_(rv.view([n, c]).mean(0))
    return out.view(input.size())


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    if input1.dim() != input2.dim():
        raise RuntimeError("bilinear(): input dimensions do not match: got {} and {}".format(input1.dim(),
                                                                                         input2.dim()))
    for i in range(input1.dim() - 1):
        if input1.size(i) != input2.size(i):
            raise RuntimeError("bilinear(): input batch dimensions do not match: got {} and {}".format(
                input1.size(i), input2.size(i)))
    if input1.size(-1) != weight.size(1):
        raise RuntimeError("bilinear(): input1 size does not match weight size: got {} but expected {}".format(
            input1.size(-1), weight.size(1)))
    if input2.size(-1) != weight.size(2):
        raise RuntimeError("bilinear(): input2 size does not match weight size: got {} but expected {}".format(
            input2.size(-1), weight.size(2)))
    if bias is not None and bias.size(0) != weight.size(0):
        raise RuntimeError("bilinear(): bias size does not match weight size: got {} but expected {}".format(
            bias.size(0), weight.size(0)))
    lead = input1.size()[:-1]
    dtype = input1.dtype
    # float16 and bfloat16 products in float32, rounded once at the end
    wide = dtype == torch.float16 or dtype == torch.bfloat16
    a = input1.reshape([-1, input1.size(-1)])
    b = input2.reshape([-1, input2.size(-1)])
    w = weight
    if wide:
        a = a.float()
        b = b.float()
        w = w.float()
    # out[n, o] = sum_ij a[n, i] w[o, i, j] b[n, j]: one matmul to (n, o, j), then a batched dot
    t = torch.matmul(a, w.permute([1, 0, 2]).reshape([w.size(1), -1]))
    out = t.view([a.size(0), w.size(0), w.size(2)]).bmm(b.unsqueeze(2)).squeeze(2)
    if bias is not None:
        out = out + (bias.float() if wide else bias)
    if wide:
        out = out.to(dtype)
    return out.view(lead + [weight.size(0)])


def native_layer_norm(input: Tensor, normalized_shape: List[int], weight: Optional[Tensor], bias: Optional[Tensor],
                      eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    out = torch.layer_norm(input, normalized_shape, weight, bias, eps, True)
    axis = input.dim() - len(normalized_shape)
    dims: List[int] = []
    stat_shape: List[int] = []
    for i in range(input.dim()):
        if i >= axis:
            dims.append(i)
            stat_shape.append(1)
        else:
            stat_shape.append(input.size(i))
    x = input.detach()
    if input.numel() == 0:
        mean = torch.zeros(stat_shape, dtype=input.dtype, device=input.device)
        rstd = torch.full(stat_shape, math.nan, dtype=input.dtype, device=input.device)
        return out, mean, rstd
    var, mean = torch.var_mean(x.double(), dims, unbiased=False, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    return out, mean.to(input.dtype), rstd.to(input.dtype)


def native_batch_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Optional[Tensor],
                      running_var: Optional[Tensor], training: bool, momentum: float,
                      eps: float) -> Tuple[Tensor, Tensor, Tensor]:
    c = input.size(1)
    if training:
        dims: List[int] = [0]
        for i in range(input.dim() - 2):
            dims.append(i + 2)
        var, mean = torch.var_mean(input.detach().double(), dims, unbiased=False)
        invstd = torch.rsqrt(var + eps)
        out = torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)
        return out, mean.to(input.dtype), invstd.to(input.dtype)
    out = torch.batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps, True)
    empty = torch.empty([0], dtype=input.dtype, device=input.device)
    return out, empty, empty.clone()


def _embedding_bag_impl(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool, mode: int,
                        per_sample_weights: Optional[Tensor], include_last_offset: bool,
                        padding_idx: int) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Each bag's rows of `weight` summed, averaged or maxed over (EmbeddingBag.cpp); rows at
    padding_idx (-1: none) take no part. The results beside the first are the bag of each index, the
    size of each bag and, for max, the index each maximum came from. scale_grad_by_freq divides the
    gradient of each looked-up row by how often its index occurs in `indices`, as documented and as
    torch's Embedding does (torch 1.13's CPU embedding_bag backward, _embedding_bag_dense_backward_
    cpu_sum_mean in aten/src/ATen/native/EmbeddingBag.cpp, divides a row by the count of another
    index when counts differ)."""
    if indices.dtype != torch.int64 and indices.dtype != torch.int32:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar types: "
                           "Long, Int; but got {} instead (while checking arguments for embedding_bag)".format(
                               indices.dtype))
    if offsets.dtype != indices.dtype:
        raise RuntimeError("Expected tensor for argument #1 'indices' to have the same type as tensor for argument "
                           "#2 'offsets'; but type {} does not equal {} (while checking arguments for "
                           "embedding_bag)".format(indices.dtype, offsets.dtype))
    if not weight.is_floating_point():
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: "
                           "Half, BFloat16, Float, Double; but got {} instead (while checking arguments for "
                           "embedding_bag)".format(weight.dtype))
    if indices.dim() != 1:
        raise RuntimeError("input has to be a 1D or 2D Tensor, but got Tensor of dimension {}".format(indices.dim()))
    if offsets.dim() != 1:
        raise RuntimeError("offsets has to be a 1D Tensor, but got Tensor of dimension {}".format(offsets.dim()))
    if per_sample_weights is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if per_sample_weights.dim() != 1 or per_sample_weights.numel() != indices.numel():
            raise RuntimeError("embedding_bag: per_sample_weights has to be 1D and have as many elements as "
                               "indices")
    if include_last_offset and offsets.size(0) < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")
    n = indices.size(0)
    nb = offsets.size(0) - 1 if include_last_offset else offsets.size(0)
    d = weight.size(1)
    starts = offsets.narrow(0, 0, nb).to(torch.int64)
    if nb > 0:
        first = int(starts[0])
        if first != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
                               "from position 0. However, got {}".format(first))
        last = int(starts[nb - 1])
        if last > n:
            raise RuntimeError("offsets[-1] can not be greater than input's length {} but got offsets[-1] of "
                               "{}".format(n, last))
    idx = indices.to(torch.int64)
    pos = torch.arange(n, device=indices.device)
    # the bag of position p: how many bags start at or before p, less one
    inside = torch.masked_select(starts, starts < n)
    bag = torch.zeros([n], dtype=torch.int64, device=indices.device).index_add(
        0, inside, torch.ones_like(inside)).cumsum(0) - 1
    keep = idx != padding_idx if padding_idx >= 0 else torch.ones([n], dtype=torch.bool, device=indices.device)
    counts = torch.zeros([nb], dtype=torch.int64, device=indices.device).index_add(0, bag, keep.to(torch.int64))
    # float16 and bfloat16 bags summed in float32 and rounded once, as torch's CPU kernel does
    wide = weight.dtype == torch.float16 or weight.dtype == torch.bfloat16
    rows = torch.embedding(weight, idx)  # the row gather, and its gradient an index_add
    if wide:
        rows = rows.float()
    if scale_grad_by_freq and mode != 2:
        freq = torch.zeros([weight.size(0)], dtype=rows.dtype, device=weight.device).index_add(
            0, idx, torch.ones([n], dtype=rows.dtype, device=weight.device))
        scale = (1.0 / freq.index_select(0, idx)).unsqueeze(1)
        fixed = rows.detach()
        rows = fixed + (rows - fixed) * scale  # the rows' values, their gradients scaled
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.to(rows.dtype).unsqueeze(1)
    zero = torch.zeros(torch.jit.annotate(List[int], []), dtype=weight.dtype, device=weight.device)
    if mode == 2:
        max_indices = torch.zeros([nb, d], dtype=indices.dtype, device=indices.device)
        if n == 0 or nb == 0:
            return torch.zeros([nb, d], dtype=weight.dtype, device=weight.device), bag.to(indices.dtype), \
                counts.to(indices.dtype), max_indices
        width = int(torch.zeros([nb], dtype=torch.int64, device=indices.device).index_add(0, bag, torch.ones_like(bag)).max())
        slot = bag * width + pos - starts.index_select(0, bag)
        lowest = torch.full(torch.jit.annotate(List[int], []), -math.inf, dtype=weight.dtype, device=weight.device)
        dense = torch.full([nb * width, d], -math.inf, dtype=weight.dtype, device=weight.device)
        dense = dense.index_copy(0, slot, torch.where(keep.unsqueeze(1), rows.to(weight.dtype), lowest))
        values, arg = dense.view([nb, width, d]).max(1)
        ids = torch.full([nb * width], -1, dtype=torch.int64, device=indices.device).index_copy(0, slot, idx)
        max_indices = ids.view([nb, width]).gather(1, arg).to(indices.dtype)
        empty = (counts == 0).unsqueeze(1)
        return torch.where(empty, zero, values), bag.to(indices.dtype), counts.to(indices.dtype), \
            torch.where(empty, torch.zeros_like(max_indices), max_indices)
    if padding_idx >= 0:
        rows = torch.where(keep.unsqueeze(1), rows, zero.to(rows.dtype))
    out = torch.zeros([nb, d], dtype=rows.dtype, device=weight.device).index_add(0, bag, rows)
    if mode == 1:
        out = out / counts.clamp_min(1).to(rows.dtype).unsqueeze(1)
    elif mode != 0:
        raise RuntimeError("embedding_bag: mode has to be one of sum, mean or max, but got {}".format(mode))
    out = out.to(weight.dtype)
    return out, bag.to(indices.dtype), counts.to(indices.dtype), torch.zeros([nb], dtype=indices.dtype,
                                                                             device=indices.device)


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Optional[Tensor] = None,
                  include_last_offset: bool = False) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return _embedding_bag_impl(weight, indices, offsets, scale_grad_by_freq, mode, per_sample_weights,
                               include_last_offset, -1)


def embedding_bag__padding_idx(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool, mode: int,
                               sparse: bool, per_sample_weights: Optional[Tensor], include_last_offset: bool,
                               padding_idx: Optional[int]) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    p = -1
    if padding_idx is not None:
        num = weight.size(0)
        p = padding_idx
        if p < -num or p >= num:
            raise RuntimeError("padding_idx must be within the number of embeddings, -{} through {}, but got {}".format(
                num, num - 1, p))
        if p < 0:
            p = p + num
    return _embedding_bag_impl(weight, indices, offsets, scale_grad_by_freq, mode, per_sample_weights,
                               include_last_offset, p)


def _embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                   sparse: bool = False, per_sample_weights: Optional[Tensor] = None, include_last_offset: bool = False,
                   padding_idx: int = -1) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    return _embedding_bag_impl(weight, indices, offsets, scale_grad_by_freq, mode, per_sample_weights,
                               include_last_offset, padding_idx)


def _scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None,
                                  dropout_p: float = 0., need_attn_weights: bool = False,
                                  is_causal: bool = False) -> Tuple[Tensor, Tensor]:
    """torch 1.13's math path: q scaled by E^-1/2, a causal mask as a lower triangle, a boolean
    mask filling -inf where it is False, softmax, dropout, then the weighted values."""
    # the scale in query's dtype, as torch's mul kernel converts its scalar operand
    scale = torch.full(torch.jit.annotate(List[int], []), math.sqrt(1.0 / float(query.size(-1))),
                       dtype=query.dtype, device=query.device)
    # float16 and bfloat16 attention in float32, each result rounded once
    wide = query.dtype == torch.float16 or query.dtype == torch.bfloat16
    q = query * scale
    k = key
    v = value
    if wide:
        q = query.float() * scale.float()
        k = key.float()
        v = value.float()
    mask = attn_mask
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                               "is_causal=True")
        mask = torch.ones([q.size(-2), key.size(-2)], dtype=torch.bool, device=q.device).tril()
    attn = torch.matmul(q, k.transpose(-2, -1))
    if mask is not None:
        if mask.dtype == torch.bool:
            attn = attn.masked_fill(mask.logical_not(), -math.inf)
        else:
            attn = attn + mask
    attn = torch.softmax(attn, -1)
    if dropout_p > 0.0:
        attn = torch.dropout(attn, dropout_p, True)
    out = torch.matmul(attn, v)
    if wide:
        return out.to(query.dtype), attn.to(query.dtype)
    # torch 1.13 returns the weights whatever need_attn_weights says
    return out, attn


def _dropout_impl(input: Tensor, p: float, train: bool, feature: bool, alpha: bool) -> Tensor:
    """Dropout.cpp's _dropout_impl: the input itself when nothing is dropped; feature dropout draws
    one value per (batch, channel); alpha dropout keeps the self-normalizing mean and variance."""
    if p < 0 or p > 1:
        raise RuntimeError("dropout probability has to be between 0 and 1, but got {}".format(p))
    if p == 0 or not train or input.numel() == 0:
        return input
    if p == 1:
        return input * torch.zeros(torch.jit.annotate(List[int], []), dtype=input.dtype, device=input.device)
    if feature:
        if input.dim() < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = [input.size(0), input.size(1)]
        for _ in range(input.dim() - 2):
            shape.append(1)
        noise = torch.empty(shape, dtype=input.dtype, device=input.device)
    else:
        noise = torch.empty_like(input)
    noise.bernoulli_(1 - p)
    if alpha:
        selu_alpha = 1.7580993408473766  # SELU's -scale * alpha
        a = 1. / math.sqrt((selu_alpha * selu_alpha * p + 1) * (1 - p))
        b = (noise - 1) * (selu_alpha * a) + selu_alpha * a * p
        return input * (noise * a) + b
    return input * noise.div_(1 - p)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, True, False)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, False, True)


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_impl(input, p, train, True, True)


# The in-place forms name their tensor `self`, the functional ones `input` (ATen's schemas), so the
# table cannot derive them (Note [Derived op variants]): each writes its functional's result.

def _dropout_inplace(self: Tensor, p: float, train: bool, feature: bool, alpha: bool) -> Tensor:
    out = _dropout_impl(self, p, train, feature, alpha)
    if out is self:
        return self
    return self.copy_(out)


def feature_dropout_(self: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_inplace(self, p, train, True, False)


def alpha_dropout_(self: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_inplace(self, p, train, False, True)


def feature_alpha_dropout_(self: Tensor, p: float, train: bool) -> Tensor:
    return _dropout_inplace(self, p, train, True, True)


def _fractional_starts(sample: Tensor, input_size: int, output_size: int, pool_size: int) -> Tensor:
    """FractionalMaxPool2d.cpp's generate_intervals for every plane at once: (planes, output_size)
    window starts from each plane's sample u, int((i + u) alpha) - int(u alpha) in the samples'
    dtype, the last window flush with the end."""
    planes = sample.size(0)
    last = torch.full([planes, 1], input_size - pool_size, dtype=torch.int64, device=sample.device)
    if output_size <= 1:
        return last.narrow(1, 0, output_size)
    alpha = torch.full(torch.jit.annotate(List[int], []), input_size - pool_size, dtype=sample.dtype, device=sample.device) / \
        torch.full(torch.jit.annotate(List[int], []), output_size - 1, dtype=sample.dtype, device=sample.device)
    i = torch.arange(output_size - 1, dtype=sample.dtype, device=sample.device).unsqueeze(0)
    u = sample.unsqueeze(1)
    seq = ((i + u) * alpha).to(torch.int64) - (u * alpha).to(torch.int64)
    return torch.cat([seq, last], 1)


def _fractional_max_pool(self: Tensor, kernel_size: List[int], output_size: List[int], random_samples: Tensor,
                         name: str) -> Tuple[Tensor, Tensor]:
    k = len(kernel_size)
    if len(output_size) != k:
        raise RuntimeError("{}: output_size must either be a single Int or tuple of Ints".format(name))
    if self.dim() != k + 1 and self.dim() != k + 2:
        raise RuntimeError("{}(): Expected {}D or {}D tensor, but got: {}".format(name, k + 1, k + 2, self.size()))
    for i in range(1, self.dim()):
        if self.size(i) <= 0:
            raise RuntimeError("{}(): Expected input to have non-zero size for non-batch dimensions, but got{} "
                               "with dimension {} being empty.".format(name, self.size(), i))
    batched = self.dim() == k + 2
    x = self if batched else self.unsqueeze(0)
    sizes = x.size()[2:]
    names = ["width", "height"] if k == 2 else ["time", "height", "width"]
    for d in range(k):
        nd = d if k == 3 else 1 - d
        if output_size[d] + kernel_size[d] - 1 > sizes[d]:
            raise RuntimeError("{}(): pool {} {} too large relative to input {} {}".format(
                name, names[nd], kernel_size[d], names[nd], sizes[d]))
    planes = x.size(0) * x.size(1)
    samples = random_samples.reshape([planes, k])
    v = x.reshape([planes] + sizes)
    # window positions per spatial dim: (planes, output, kernel); 2-D samples are (w, h), 3-D (t, h, w)
    pos: List[Tensor] = []
    for d in range(k):
        s = samples.select(1, d if k == 3 else 1 - d)
        starts = _fractional_starts(s, sizes[d], output_size[d], kernel_size[d])
        pos.append(starts.unsqueeze(2) + torch.arange(kernel_size[d], device=x.device))
    # gather the windows one spatial dim at a time: (planes, o1 k1, o2 k2, ...)
    for d in range(k):
        shape = v.size()
        view = [planes]
        for e in range(k):
            view.append(output_size[d] * kernel_size[d] if e == d else 1)
        shape[d + 1] = output_size[d] * kernel_size[d]
        v = v.gather(d + 1, pos[d].reshape(view).expand(shape))
    split = [planes]
    for d in range(k):
        split.append(output_size[d])
        split.append(kernel_size[d])
    order = [0]
    for d in range(k):
        order.append(1 + 2 * d)
    for d in range(k):
        order.append(2 + 2 * d)
    out_shape = [planes] + output_size
    window = 1
    for d in range(k):
        window *= kernel_size[d]
    windows = v.reshape(split).permute(order).reshape(out_shape + [window])
    values, arg = windows.max(-1)
    # the flat input index of each maximum: each dim's position picked by its digit of arg
    index = torch.zeros(out_shape, dtype=torch.int64, device=x.device)
    rest = arg
    for d in range(k - 1, -1, -1):
        digit = rest % kernel_size[d]
        rest = rest // kernel_size[d]
        view = [planes]
        for e in range(k):
            view.append(output_size[d] if e == d else 1)
        view.append(kernel_size[d])
        coord = pos[d].reshape(view).expand(out_shape + [kernel_size[d]]).gather(k + 1, digit.unsqueeze(-1))
        stride = 1
        for e in range(d + 1, k):
            stride *= sizes[e]
        index = index + coord.squeeze(-1) * stride
    result_shape = x.size()[:2] + output_size
    values = values.reshape(result_shape)
    index = index.reshape(result_shape)
    if not batched:
        return values.squeeze(0), index.squeeze(0)
    return values, index


def fractional_max_pool2d(self: Tensor, kernel_size: List[int], output_size: List[int],
                          random_samples: Tensor) -> Tuple[Tensor, Tensor]:
    return _fractional_max_pool(self, kernel_size, output_size, random_samples, "fractional_max_pool2d")


def fractional_max_pool3d(self: Tensor, kernel_size: List[int], output_size: List[int],
                          random_samples: Tensor) -> Tuple[Tensor, Tensor]:
    return _fractional_max_pool(self, kernel_size, output_size, random_samples, "fractional_max_pool3d")
