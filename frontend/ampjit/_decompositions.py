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


def broadcast_tensors(tensors: List[Tensor]) -> List[Tensor]:
    shape: List[int] = []
    for t in tensors:
        shape = _broadcast_shape(shape, t.size())
    return [t.expand(shape) for t in tensors]


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
    if len(rows) == 0:  # through self, as torch's, so that the empty result has a history
        return self.index_select(0, torch.zeros([0], dtype=torch.int64)).reshape([0, r])
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
    # Onehot.cpp's zeros then a 1 per row, as an index_put_ of rows and labels (the comparison
    # with arange(num_classes) and its cast to int64 wrote the whole result twice).
    n = self.numel()
    out = torch.zeros([n, num_classes], dtype=torch.int64, device=self.device)
    rows = torch.arange(n, dtype=torch.int64, device=self.device)
    indices: List[Optional[Tensor]] = [rows, self.reshape([n])]
    no_dims: List[int] = []
    out.index_put_(indices, torch.ones(no_dims, dtype=torch.int64, device=self.device))
    shape.append(num_classes)
    return out.view(shape)


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


# ---- complex views on real tensors ---------------------------------------------------------------
# ampjit's tensors are real (complex dtypes are out of scope): conjugation is the identity.

def conj(self: Tensor) -> Tensor:
    return self


def conj_physical(self: Tensor) -> Tensor:
    return self.clone()


def conj_physical_(self: Tensor) -> Tensor:
    return self


def resolve_conj(self: Tensor) -> Tensor:
    return self


def resolve_neg(self: Tensor) -> Tensor:
    return self


def is_conj(self: Tensor) -> bool:
    return False


def is_neg(self: Tensor) -> bool:
    return False


def real(self: Tensor) -> Tensor:
    return self


def imag(self: Tensor) -> Tensor:
    raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")


def angle(self: Tensor) -> Tensor:
    x = self if self.is_floating_point() else self * 1.0
    pi = torch.full_like(x, math.pi)
    out = torch.where(x < 0, pi, torch.zeros_like(x))
    return torch.where(torch.isnan(x), x, out)


def adjoint(self: Tensor) -> Tensor:
    if self.dim() == 0:
        return self
    if self.dim() < 2:
        raise RuntimeError("tensor.adjoint() is only supported on matrices or batches of matrices. Got 1-D tensor.")
    return self.transpose(-2, -1)


# ---- random sampling -------------------------------------------------------------------------------

def _check_std(std: float):
    if std < 0.0:
        raise RuntimeError("normal expects std >= 0.0, but found std {}".format(std))


def normal__Tensor_float(mean: Tensor, std: float = 1.) -> Tensor:
    _check_std(std)
    return mean + torch.randn_like(mean) * std


def normal__float_Tensor(mean: float, std: Tensor) -> Tensor:
    if std.numel() > 0 and bool(torch.any(std < 0)):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    return torch.randn_like(std) * std + mean


def normal__Tensor_Tensor(mean: Tensor, std: Tensor) -> Tensor:
    if std.numel() > 0 and bool(torch.any(std < 0)):
        raise RuntimeError("normal expects all elements of std >= 0.0")
    shape = _broadcast_shape(mean.size(), std.size())
    noise = torch.randn(shape, dtype=torch.promote_types(mean.dtype, std.dtype), device=mean.device)
    return mean + noise * std


def normal__float_float(mean: float, std: float, size: List[int], dtype: Optional[int] = None,
                        device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    _check_std(std)
    out = torch.randn(size, dtype=dtype, device=device) * std + mean
    return out.requires_grad_(requires_grad)


def _randint(low: int, high: int, size: List[int], like: Optional[Tensor], dtype: Optional[int],
             device: Optional[torch.device]) -> Tensor:
    # torch: at::empty(size).random_(low, high), which checks low < high.
    if like is None:
        out = torch.empty(size, dtype=torch.int64 if dtype is None else dtype, device=device)
    else:
        out = torch.empty_like(like, dtype=like.dtype if dtype is None else dtype)
    return out.random_(low, high)


def randint(high: int, size: List[int], dtype: Optional[int] = None, device: Optional[torch.device] = None,
            requires_grad: bool = False) -> Tensor:
    return _randint(0, high, size, None, dtype, device)


def randint__low(low: int, high: int, size: List[int], dtype: Optional[int] = None,
                 device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    return _randint(low, high, size, None, dtype, device)


def randint_like(self: Tensor, high: int, dtype: Optional[int] = None, device: Optional[torch.device] = None,
                 requires_grad: bool = False) -> Tensor:
    return _randint(0, high, self.size(), self, dtype, device)


def randint_like__low_dtype(self: Tensor, low: int, high: int, dtype: Optional[int] = None,
                            device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    return _randint(low, high, self.size(), self, dtype, device)


def multinomial(self: Tensor, num_samples: int, replacement: bool = False) -> Tensor:
    if self.dim() < 1 or self.dim() > 2:
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not self.is_floating_point():
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: {}".format(self.dtype))
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    n = self.size(-1)
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    p = self.to(torch.float64)
    if bool(torch.any(torch.logical_or(p < 0, torch.logical_not(torch.isfinite(p))))):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = p if p.dim() == 2 else p.unsqueeze(0)
    totals = rows.sum(-1, True)
    if bool(torch.any(totals <= 0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if replacement:
        cdf = torch.cumsum(rows / totals, -1)
        u = torch.rand([rows.size(0), num_samples], dtype=torch.float64, device=self.device)
        out = torch.searchsorted(cdf, u, right=True).clamp(0, n - 1)
    else:
        # the Gumbel-top-k trick: the num_samples largest log p - log(-log u) are a draw without
        # replacement, each in proportion to its probability among those left
        u = torch.rand(rows.size(), dtype=torch.float64, device=self.device).clamp(1e-300, 1.0)
        keys = torch.log(rows) - torch.log(-torch.log(u))
        _, out = torch.topk(keys, num_samples, -1)
    return out if self.dim() == 2 else out.squeeze(0)


def empty_strided(size: List[int], stride: List[int], dtype: Optional[int] = None,
                  device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    extent = 1
    for i in range(len(size)):
        if size[i] < 0:
            raise RuntimeError("Trying to create tensor with negative dimension {}: {}".format(size[i], size))
        if size[i] == 0:
            extent = 0
    if extent != 0:
        for i in range(len(size)):
            extent += (size[i] - 1) * stride[i]
    storage = torch.empty([extent], dtype=dtype, device=device)
    return torch.as_strided(storage, size, stride, 0).requires_grad_(requires_grad)


def new_empty_strided(self: Tensor, size: List[int], stride: List[int], dtype: Optional[int] = None,
                      device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    return torch.empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                               device=self.device if device is None else device, requires_grad=requires_grad)


# ---- more compositions -----------------------------------------------------------------------------

def sum_to_size(self: Tensor, size: List[int]) -> Tensor:
    if len(size) == 0:  # torch sums to a scalar, promoting as sum does
        return self.sum()
    shape = self.size()
    if len(size) > len(shape):
        raise RuntimeError("size {{{}}} is not expandable to size {{{}}}.".format(size, shape))
    lead = len(shape) - len(size)
    dims: List[int] = []
    for i in range(len(shape)):
        if i < lead:
            dims.append(i)
        elif size[i - lead] == 1 and shape[i] != 1:
            dims.append(i)
        elif size[i - lead] != shape[i]:
            raise RuntimeError("size {} is not expandable to size {}.".format(size, shape))
    if len(dims) == 0:
        return self
    return self.sum(dims, True).reshape(size)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    n = max(self.dim(), 1)
    d = _wrap(dimension, n)
    length = self.size(d) if self.dim() > 0 else 1
    if size > length:
        raise RuntimeError("maximum size for tensor at dimension {} is {} but size is {}".format(d, length, size))
    if step <= 0:
        raise RuntimeError("step is {} but must be > 0".format(step))
    sizes: List[int] = []
    strides: List[int] = []
    st = self.stride()
    for i in range(self.dim()):
        if i == d:
            sizes.append((length - size) // step + 1)
            strides.append(step * st[i])
        else:
            sizes.append(self.size(i))
            strides.append(st[i])
    sizes.append(size)
    strides.append(st[d] if self.dim() > 0 else 1)
    return torch.as_strided(self, sizes, strides, self.storage_offset())


def _triangle_indices(row: int, col: int, offset: int, lower: bool, dtype: Optional[int],
                      device: Optional[torch.device]) -> Tensor:
    if row < 0 or col < 0:
        raise RuntimeError("row must be non-negative, got{}".format(row if row < 0 else col))
    r = torch.arange(row, device=device).unsqueeze(1)
    c = torch.arange(col, device=device).unsqueeze(0)
    keep = (c - r <= offset) if lower else (c - r >= offset)
    out = torch.nonzero(keep).t()
    return out.to(torch.int64 if dtype is None else dtype)


def tril_indices(row: int, col: int, offset: int = 0, dtype: Optional[int] = None,
                 device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row: int, col: int, offset: int = 0, dtype: Optional[int] = None,
                 device: Optional[torch.device] = None, requires_grad: bool = False) -> Tensor:
    return _triangle_indices(row, col, offset, False, dtype, device)


def isin__Tensor_Tensor(elements: Tensor, test_elements: Tensor, assume_unique: bool = False,
                        invert: bool = False) -> Tensor:
    tests = test_elements.reshape([-1])
    if tests.numel() == 0:
        return torch.full_like(elements, invert, dtype=torch.bool)
    s, _ = torch.sort(tests)
    pos = torch.searchsorted(s, elements).clamp(0, s.numel() - 1)
    found = torch.eq(s[pos.reshape([-1])].reshape(elements.size()), elements)
    return torch.logical_not(found) if invert else found


def isin__Tensor_Scalar(elements: Tensor, test_element: float, assume_unique: bool = False,
                        invert: bool = False) -> Tensor:
    found = torch.eq(elements, test_element)
    return torch.logical_not(found) if invert else found


def isin__Scalar_Tensor(element: float, test_elements: Tensor, assume_unique: bool = False,
                        invert: bool = False) -> Tensor:
    found = torch.any(torch.eq(test_elements, element))
    return torch.logical_not(found) if invert else found


def repeat_interleave__self_int(self: Tensor, repeats: int, dim: Optional[int] = None,
                                output_size: Optional[int] = None) -> Tensor:
    if repeats < 0:
        raise RuntimeError("repeats can not be negative")
    x = self.reshape([-1]) if dim is None else self
    d = 0 if dim is None else _wrap(dim, max(self.dim(), 1))
    if x.dim() == 0:
        x = x.reshape([1])
    shape = x.size()
    expanded = x.unsqueeze(d + 1).expand(shape[:d + 1] + [repeats] + shape[d + 1:])
    shape[d] = shape[d] * repeats
    return expanded.reshape(shape)


def repeat_interleave__self_Tensor(self: Tensor, repeats: Tensor, dim: Optional[int] = None,
                                   output_size: Optional[int] = None) -> Tensor:
    x = self.reshape([-1]) if dim is None else self
    d = 0 if dim is None else _wrap(dim, max(self.dim(), 1))
    if x.dim() == 0:
        x = x.reshape([1])
    r = repeats
    if r.dim() == 0 or r.numel() == 1:
        r = r.reshape([1]).expand([x.size(d)])
    elif r.dim() != 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if r.size(0) != x.size(d):
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = {} and "
                           "input.size({}) = {}".format(r.size(0), d, x.size(d)))
    return x.index_select(d, torch.repeat_interleave(r, output_size=output_size))
# ---- fft ----
# torch.fft, torch.stft, torch.istft and the window functions, as torch 1.13 writes them
# (aten/src/ATen/native/SpectralOps.cpp, TensorFactories.cpp), over the FFT primitives
# torch.ops.ampjit._fft_r2c, _fft_c2r and _fft_c2c (Note [FFTs without a complex dtype] in
# kernels/fft_meta.h): a complex intermediate is a real tensor with its (real, imaginary) pairs in
# a last dimension of 2. A function whose result would be complex checks its arguments as torch
# does, then raises NotImplementedError.

def _fft_complex_result(fname: str) -> str:
    return ("{} returns a complex tensor: complex tensors are out of scope in ampjit (of torch.fft, "
            "irfft, hfft and their 2-d and n-d forms return real tensors)").format(fname)


def _fft_norm(norm: Optional[str], forward: bool) -> int:
    """torch's norm_from_string: ATen's fft_norm_mode (0: none, 1: by_root_n, 2: by_n)."""
    if norm is None or norm == "backward":
        return 0 if forward else 2
    if norm == "forward":
        return 2 if forward else 0
    if norm == "ortho":
        return 1
    raise RuntimeError("Invalid normalization mode: \"{}\"".format(norm))


def _fft_promote(x: Tensor) -> Tensor:
    """torch's promote_tensor_fft: integers and bools in the default dtype; float32 or float64."""
    if not x.is_floating_point():
        x = x * 1.0
    if x.dtype == torch.float16:
        raise RuntimeError("Unsupported dtype Half")
    if x.dtype == torch.bfloat16:
        raise RuntimeError("Unsupported dtype BFloat16")
    return x


def _fft_size(x: Tensor, d: int) -> int:
    # torch reads the size of dim 0 of a 0-dim tensor as 0
    return x.size(d) if x.dim() > 0 else 0


def _fft_pairs(x: Tensor) -> Tensor:
    """A real tensor as complex values: zero imaginary parts."""
    return torch.stack([x, torch.zeros_like(x)], -1)


def _fft_conj(z: Tensor) -> Tensor:
    return torch.stack([z.select(-1, 0), torch.neg(z.select(-1, 1))], -1)


def _fft_resize(x: Tensor, dims: List[int], sizes: List[int]) -> Tensor:
    """torch's resize_fft_input: each dim sliced from 0, or zero-padded at its end, to its size."""
    if x.dim() == 0:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           "of the input. Pad length is 2while the input has 0dimensions.")
    pad = [0] * (2 * x.dim())
    must_pad = False
    for i in range(len(dims)):
        d = dims[i]
        n = sizes[i]
        if n != -1:
            if x.size(d) < n:
                must_pad = True
                pad[len(pad) - 2 * d - 1] = n - x.size(d)
            if x.size(d) > n:
                x = x.narrow(d, 0, n)
    if must_pad:
        return torch.constant_pad_nd(x, pad)
    return x


def _fft_c2r(fname: str, self: Tensor, n: Optional[int], dim: int, norm: Optional[str],
             forward: bool) -> Tensor:
    """irfft and hfft: torch's fft_c2r on a real input (complex with zero imaginary parts, which
    hfft's conjugation leaves as they are)."""
    x = _fft_promote(self)
    d = _wrap(dim, max(x.dim(), 1))
    last = 2 * (_fft_size(x, d) - 1)
    if n is not None:
        last = n
    if last < 1:
        raise RuntimeError("Invalid number of data points ({}) specified".format(last))
    if n is not None:
        x = _fft_resize(x, [d], [last // 2 + 1])
    return torch.ops.ampjit._fft_c2r(_fft_pairs(x), [d], _fft_norm(norm, forward), last)


def _fft_1d_complex(fname: str, self: Tensor, n: Optional[int], dim: int, norm: Optional[str],
                    forward: bool) -> Tensor:
    """fft, ifft, rfft, ihfft of a real input: torch's checks of fft_r2c, then the complex result
    ampjit cannot return."""
    x = _fft_promote(self)
    d = _wrap(dim, max(x.dim(), 1))
    m = _fft_size(x, d)
    if n is not None:
        m = n
    if m < 1:
        raise RuntimeError("Invalid number of data points ({}) specified".format(m))
    _fft_norm(norm, forward)
    raise NotImplementedError(_fft_complex_result(fname))


def _fft_shape_and_dims(x: Tensor, s: Optional[List[int]],
                        dim: Optional[List[int]]) -> Tuple[List[int], List[int]]:
    """torch's canonicalize_fft_shape_and_dim_args: the signal's sizes and its wrapped dims."""
    ndim = x.dim()
    dims: List[int] = []
    if dim is not None:
        for d in dim:
            dims.append(_wrap(d, max(ndim, 1)))
        seen: List[int] = []
        for d in dims:
            if d in seen:
                raise RuntimeError("FFT dims must be unique")
            seen.append(d)
    shape: List[int] = []
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError("Got shape with {} values but input tensor only has {} dimensions."
                               .format(len(s), ndim))
        if dim is None:
            for d in range(ndim - len(s), ndim):
                dims.append(d)
        for i in range(len(s)):
            shape.append(_fft_size(x, dims[i]) if s[i] == -1 else s[i])
    elif dim is None:
        for d in range(ndim):
            dims.append(d)
            shape.append(x.size(d))
    else:
        for d in dims:
            shape.append(_fft_size(x, d))
    for n in shape:
        if n <= 0:
            raise RuntimeError("Invalid number of data points ({}) specified".format(n))
    return shape, dims


def _fft_c2rn(fname: str, self: Tensor, s: Optional[List[int]], dim: Optional[List[int]],
              norm: Optional[str], forward: bool) -> Tensor:
    """irfftn and hfftn of a real input (torch's fft_irfftn and fft_hfftn)."""
    shape, dims = _fft_shape_and_dims(self, s, dim)
    if len(shape) == 0:
        raise RuntimeError("{} must transform at least one axis".format(fname))
    last = shape[-1]
    if s is None or s[-1] == -1:
        last = 2 * (_fft_size(self, dims[-1]) - 1)
    if last < 1:
        raise RuntimeError("Invalid number of data points ({}) specified".format(last))
    shape[-1] = last // 2 + 1
    x = _fft_resize(_fft_promote(self), dims, shape)
    mode = _fft_norm(norm, forward)
    z = _fft_pairs(x)
    if not forward:
        return torch.ops.ampjit._fft_c2r(z, dims, mode, last)
    # hfftn: forward over all dims but the last, conjugated, then c2r along the last
    if len(dims) > 1:
        z = torch.ops.ampjit._fft_c2c(z, dims[:-1], mode, True)
    return torch.ops.ampjit._fft_c2r(_fft_conj(z), dims[-1:], mode, last)


def _fftn_complex(fname: str, self: Tensor, s: Optional[List[int]], dim: Optional[List[int]],
                  norm: Optional[str], forward: bool, onesided: bool) -> Tensor:
    """fftn, ifftn, rfftn, ihfftn of a real input: torch's checks, then the complex result ampjit
    cannot return."""
    shape, dims = _fft_shape_and_dims(self, s, dim)
    if onesided and len(shape) == 0:
        raise RuntimeError("{} must transform at least one axis".format(fname))
    _fft_promote(self)
    _fft_norm(norm, forward)
    raise NotImplementedError(_fft_complex_result(fname))


def fft_fft(self: Tensor, n: Optional[int] = None, dim: int = -1,
            norm: Optional[str] = None) -> Tensor:
    return _fft_1d_complex("torch.fft.fft", self, n, dim, norm, True)


def fft_ifft(self: Tensor, n: Optional[int] = None, dim: int = -1,
             norm: Optional[str] = None) -> Tensor:
    return _fft_1d_complex("torch.fft.ifft", self, n, dim, norm, False)


def fft_rfft(self: Tensor, n: Optional[int] = None, dim: int = -1,
             norm: Optional[str] = None) -> Tensor:
    return _fft_1d_complex("torch.fft.rfft", self, n, dim, norm, True)


def fft_ihfft(self: Tensor, n: Optional[int] = None, dim: int = -1,
              norm: Optional[str] = None) -> Tensor:
    return _fft_1d_complex("torch.fft.ihfft", self, n, dim, norm, False)


def fft_irfft(self: Tensor, n: Optional[int] = None, dim: int = -1,
              norm: Optional[str] = None) -> Tensor:
    return _fft_c2r("irfft", self, n, dim, norm, False)


def fft_hfft(self: Tensor, n: Optional[int] = None, dim: int = -1,
             norm: Optional[str] = None) -> Tensor:
    return _fft_c2r("hfft", self, n, dim, norm, True)


def fft_fftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
             norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("torch.fft.fftn", self, s, dim, norm, True, False)


def fft_ifftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
              norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("torch.fft.ifftn", self, s, dim, norm, False, False)


def fft_rfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
              norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("rfftn", self, s, dim, norm, True, True)


def fft_ihfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
               norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("ihfftn", self, s, dim, norm, False, True)


def fft_irfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
               norm: Optional[str] = None) -> Tensor:
    return _fft_c2rn("irfftn", self, s, dim, norm, False)


def fft_hfftn(self: Tensor, s: Optional[List[int]] = None, dim: Optional[List[int]] = None,
              norm: Optional[str] = None) -> Tensor:
    return _fft_c2rn("hfftn", self, s, dim, norm, True)


def fft_fft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
             norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("torch.fft.fft2", self, s, dim, norm, True, False)


def fft_ifft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
              norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("torch.fft.ifft2", self, s, dim, norm, False, False)


def fft_rfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
              norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("rfftn", self, s, dim, norm, True, True)


def fft_ihfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
               norm: Optional[str] = None) -> Tensor:
    return _fftn_complex("ihfftn", self, s, dim, norm, False, True)


def fft_irfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
               norm: Optional[str] = None) -> Tensor:
    return _fft_c2rn("irfftn", self, s, dim, norm, False)


def fft_hfft2(self: Tensor, s: Optional[List[int]] = None, dim: List[int] = [-2, -1],
              norm: Optional[str] = None) -> Tensor:
    return _fft_c2rn("hfftn", self, s, dim, norm, True)


def _fft_shift(self: Tensor, dim: Optional[List[int]], inverse: bool) -> Tensor:
    dims: List[int] = []
    if dim is None:
        for d in range(self.dim()):
            dims.append(d)
    else:
        for d in dim:
            dims.append(_wrap(d, max(self.dim(), 1)))
    shifts: List[int] = []
    for d in dims:
        if self.dim() == 0:
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        shifts.append((self.size(d) + 1) // 2 if inverse else self.size(d) // 2)
    return torch.roll(self, shifts, dims)


def fft_fftshift(self: Tensor, dim: Optional[List[int]] = None) -> Tensor:
    return _fft_shift(self, dim, False)


def fft_ifftshift(self: Tensor, dim: Optional[List[int]] = None) -> Tensor:
    return _fft_shift(self, dim, True)


def _fft_freq(fname: str, n: int, d: float, onesided: bool, dtype: Optional[int],
              device: Optional[torch.device]) -> Tensor:
    """torch's fft_fftfreq_out and fft_rfftfreq_out: 0, 1, ..., then (fftfreq) the negative
    frequencies, times 1 / (n d)."""
    out = torch.empty([n // 2 + 1 if onesided else n], dtype=dtype, device=device)
    if not out.is_floating_point():
        raise RuntimeError("{} requires a floating point or complex dtype".format(fname))
    if onesided:
        out = torch.arange(n // 2 + 1, dtype=out.dtype, device=out.device)
    else:
        out = torch.cat([torch.arange((n + 1) // 2, dtype=out.dtype, device=out.device),
                         torch.arange(-(n // 2), 0, dtype=out.dtype, device=out.device)])
    scale = math.inf if n * d == 0.0 else 1.0 / (n * d)
    return out * _scalar_of(out, scale)


def fft_fftfreq(n: int, d: float = 1.0, dtype: Optional[int] = None,
                device: Optional[torch.device] = None) -> Tensor:
    return _fft_freq("fftfreq", n, d, False, dtype, device)


def fft_rfftfreq(n: int, d: float = 1.0, dtype: Optional[int] = None,
                 device: Optional[torch.device] = None) -> Tensor:
    return _fft_freq("rfftfreq", n, d, True, dtype, device)


def _scalar_of(x: Tensor, v: float) -> Tensor:
    """`v` in x's dtype: torch 1.13's CPU kernels round a Python scalar to a reduced-precision
    tensor's dtype before they multiply or add it (arange(16, dtype=bfloat16) * (2 pi / 15) has
    5.0, not 5.03125, at 12), which the windows and frequencies inherit."""
    return torch.tensor(v, dtype=x.dtype, device=x.device)


def _window_checks(fname: str, window_length: int, dtype: Optional[int],
                   device: Optional[torch.device]) -> Tensor:
    """torch's window_function_checks; an empty tensor of the window's dtype and device."""
    base = torch.empty([0], dtype=dtype, device=device)
    if not base.is_floating_point():
        names = {torch.int64: "long int", torch.int32: "int", torch.int16: "short int",
                 torch.int8: "signed char", torch.uint8: "unsigned char", torch.bool: "bool"}
        raise RuntimeError(
            "{} expects floating point dtypes, got: TensorOptions(dtype={}, device=cpu, "
            "layout=Strided (default), requires_grad=false (default), pinned_memory=false, "
            "memory_format=(nullopt))".format(fname, names[base.dtype]))
    if window_length < 0:
        raise RuntimeError("{} requires non-negative window_length, got window_length={}".format(
            fname, window_length))
    return base


def _window_arange(base: Tensor, window_length: int, periodic: bool, kernel: str) -> Tensor:
    """0, 1, ..., n - 1 in the window's dtype, n one more than window_length when periodic."""
    if base.dtype == torch.float16:  # torch's CPU kernels (cos, kaiser) take no Half
        raise RuntimeError("\"{}\" not implemented for 'Half'".format(kernel))
    n = window_length + 1 if periodic else window_length
    return torch.arange(n, dtype=base.dtype, device=base.device)


def _hamming(fname: str, window_length: int, periodic: bool, alpha: float, beta: float,
             dtype: Optional[int], device: Optional[torch.device]) -> Tensor:
    base = _window_checks(fname, window_length, dtype, device)
    if window_length == 0:
        return base
    if window_length == 1:
        return torch.ones([1], dtype=base.dtype, device=base.device)
    w = _window_arange(base, window_length, periodic, "cos_vml_cpu")
    n = w.size(0)
    w = (torch.cos(w * _scalar_of(w, math.pi * 2.0 / (n - 1))) * _scalar_of(w, -beta) +
         _scalar_of(w, alpha))
    return w.narrow(0, 0, n - 1) if periodic else w


def hamming_window(window_length: int, dtype: Optional[int] = None,
                   device: Optional[torch.device] = None) -> Tensor:
    return _hamming("hamming_window", window_length, True, 0.54, 0.46, dtype, device)


def hamming_window__periodic(window_length: int, periodic: bool, dtype: Optional[int] = None,
                             device: Optional[torch.device] = None) -> Tensor:
    return _hamming("hamming_window", window_length, periodic, 0.54, 0.46, dtype, device)


def hamming_window__periodic_alpha(window_length: int, periodic: bool, alpha: float,
                                   dtype: Optional[int] = None,
                                   device: Optional[torch.device] = None) -> Tensor:
    return _hamming("hamming_window", window_length, periodic, alpha, 0.46, dtype, device)


def hamming_window__periodic_alpha_beta(window_length: int, periodic: bool, alpha: float,
                                        beta: float, dtype: Optional[int] = None,
                                        device: Optional[torch.device] = None) -> Tensor:
    return _hamming("hamming_window", window_length, periodic, alpha, beta, dtype, device)


def hann_window(window_length: int, dtype: Optional[int] = None,
                device: Optional[torch.device] = None) -> Tensor:
    return _hamming("hann_window", window_length, True, 0.5, 0.5, dtype, device)


def hann_window__periodic(window_length: int, periodic: bool, dtype: Optional[int] = None,
                          device: Optional[torch.device] = None) -> Tensor:
    return _hamming("hann_window", window_length, periodic, 0.5, 0.5, dtype, device)


def _bartlett(window_length: int, periodic: bool, dtype: Optional[int],
              device: Optional[torch.device]) -> Tensor:
    base = _window_checks("bartlett_window", window_length, dtype, device)
    if window_length == 0:
        return base
    if window_length == 1:
        return torch.ones([1], dtype=base.dtype, device=base.device)
    if periodic:
        window_length += 1
    w = torch.arange(window_length, dtype=base.dtype, device=base.device)
    w = w * _scalar_of(w, 2.0 / (window_length - 1))
    first = ((window_length - 1) >> 1) + 1
    w = torch.cat([w.narrow(0, 0, first),
                   torch.neg(w.narrow(0, first, window_length - first)) + _scalar_of(w, 2.0)])
    return w.narrow(0, 0, window_length - 1) if periodic else w


def bartlett_window(window_length: int, dtype: Optional[int] = None,
                    device: Optional[torch.device] = None) -> Tensor:
    return _bartlett(window_length, True, dtype, device)


def bartlett_window__periodic(window_length: int, periodic: bool, dtype: Optional[int] = None,
                              device: Optional[torch.device] = None) -> Tensor:
    return _bartlett(window_length, periodic, dtype, device)


def _blackman(window_length: int, periodic: bool, dtype: Optional[int],
              device: Optional[torch.device]) -> Tensor:
    base = _window_checks("blackman_window", window_length, dtype, device)
    if window_length == 0:
        return base
    if window_length == 1:
        return torch.ones([1], dtype=base.dtype, device=base.device)
    w = _window_arange(base, window_length, periodic, "cos_vml_cpu")
    n = w.size(0)
    w = w * _scalar_of(w, math.pi / (n - 1))
    w = (torch.cos(w * _scalar_of(w, 4.0)) * _scalar_of(w, 0.08) -
         torch.cos(w * _scalar_of(w, 2.0)) * _scalar_of(w, 0.5) + _scalar_of(w, 0.42))
    return w.narrow(0, 0, n - 1) if periodic else w


def blackman_window(window_length: int, dtype: Optional[int] = None,
                    device: Optional[torch.device] = None) -> Tensor:
    return _blackman(window_length, True, dtype, device)


def blackman_window__periodic(window_length: int, periodic: bool, dtype: Optional[int] = None,
                              device: Optional[torch.device] = None) -> Tensor:
    return _blackman(window_length, periodic, dtype, device)


def _kaiser(window_length: int, periodic: bool, beta: float, dtype: Optional[int],
            device: Optional[torch.device]) -> Tensor:
    base = _window_checks("kaiser_window", window_length, dtype, device)
    if window_length == 0:
        return base
    if window_length == 1:
        return torch.ones([1], dtype=base.dtype, device=base.device)
    a = _window_arange(base, window_length, periodic, "kaiser_window_cpu")
    n = a.size(0)
    # torch's kaiser_window kernel: i0(beta sqrt(1 - ((a - alpha) / alpha)^2)) / i0(beta), each
    # step in the window's dtype
    alpha = _scalar_of(a, (n - 1) / 2.0)
    b = _scalar_of(a, beta)
    w = torch.i0(b * torch.sqrt(_scalar_of(a, 1.0) - torch.pow((a - alpha) / alpha,
                                                                _scalar_of(a, 2.0)))) / torch.i0(b)
    return w.narrow(0, 0, n - 1) if periodic else w


def kaiser_window(window_length: int, dtype: Optional[int] = None,
                  device: Optional[torch.device] = None) -> Tensor:
    return _kaiser(window_length, True, 12.0, dtype, device)


def kaiser_window__periodic(window_length: int, periodic: bool, dtype: Optional[int] = None,
                            device: Optional[torch.device] = None) -> Tensor:
    return _kaiser(window_length, periodic, 12.0, dtype, device)


def kaiser_window__beta(window_length: int, periodic: bool, beta: float,
                        dtype: Optional[int] = None,
                        device: Optional[torch.device] = None) -> Tensor:
    return _kaiser(window_length, periodic, beta, dtype, device)


def _fft_type_name(x: Tensor) -> str:
    """torch's Tensor::toString: "torch.DoubleTensor"."""
    names = {torch.float64: "Double", torch.float32: "Float", torch.float16: "Half",
             torch.bfloat16: "BFloat16", torch.int64: "Long", torch.int32: "Int",
             torch.int16: "Short", torch.int8: "Char", torch.uint8: "Byte", torch.bool: "Bool"}
    return "torch.{}Tensor".format(names[x.dtype])


def _fft_flag(b: Optional[bool]) -> str:
    # a C++ stream's bool and optional
    if b is None:
        return "None"
    return "1" if b else "0"


def _fft_window_repr(window: Optional[Tensor]) -> str:
    if window is None:
        return "None"
    return _fft_type_name(window) + "{" + "{}".format(window.shape) + "}"


def _fft_frame_indices(n_frames: int, size: int, hop: int, device: torch.device) -> Tensor:
    """The indices of frame f's elements, f * hop + k, as one [n_frames * size] list."""
    starts = torch.arange(n_frames, dtype=torch.int64, device=device) * hop
    return (starts.unsqueeze(1) + torch.arange(size, dtype=torch.int64, device=device)).reshape([-1])


def stft__center(self: Tensor, n_fft: int, hop_length: Optional[int] = None,
                 win_length: Optional[int] = None, window: Optional[Tensor] = None,
                 center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
                 onesided: Optional[bool] = None, return_complex: Optional[bool] = None) -> Tensor:
    x = self
    if center:
        signal_dim = self.dim()
        extended: List[int] = []
        for _ in range(3 - signal_dim):
            extended.append(1)
        for s in self.shape:
            extended.append(s)
        pad = n_fft // 2
        if not self.is_floating_point() and (pad_mode == "replicate" or
                                             (pad_mode == "reflect" and pad < extended[-1])):
            # torch's 1-d reflection and replication padding kernels take floating types only
            # (after reflection's check of the padding size, which F.pad makes)
            raise RuntimeError("\"{}\" not implemented for '{}'".format(
                "reflection_pad1d" if pad_mode == "reflect" else "replication_pad1d_cpu",
                _fft_type_name(self)[len("torch."):-len("Tensor")]))
        x = torch.nn.functional.pad(self.view(extended), [pad, pad], pad_mode)
        if signal_dim > 0:  # torch's input.shape[-signal_dim:] keeps every dim of a 0-dim input
            x = x.view(x.shape[len(x.shape) - signal_dim:])
    return torch.stft(x, n_fft, hop_length, win_length, window, normalized, onesided,
                      return_complex)


def stft(self: Tensor, n_fft: int, hop_length: Optional[int] = None,
         win_length: Optional[int] = None, window: Optional[Tensor] = None,
         normalized: bool = False, onesided: Optional[bool] = None,
         return_complex: Optional[bool] = None) -> Tensor:
    hop = n_fft >> 2
    if hop_length is not None:
        hop = hop_length
    win = n_fft
    if win_length is not None:
        win = win_length
    where = ("stft({}{}, n_fft={}, hop_length={}, win_length={}, window={}, normalized={}, "
             "onesided={}, return_complex={}) ".format(
                 _fft_type_name(self), self.shape, n_fft, hop, win, _fft_window_repr(window),
                 _fft_flag(normalized), _fft_flag(onesided), _fft_flag(return_complex)))
    if not self.is_floating_point():
        raise RuntimeError(where + ": expected a tensor of floating point or complex values")
    if self.dim() > 2 or self.dim() < 1:
        raise RuntimeError(where + ": expected a 1D or 2D tensor")
    x = self.unsqueeze(0) if self.dim() == 1 else self
    batch = x.size(0)
    length = x.size(1)
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(where + ": expected 0 < n_fft < {}, but got n_fft={}".format(length, win))
    if hop <= 0:
        raise RuntimeError(where + ": expected hop_length > 0, but got hop_length={}".format(hop))
    if win <= 0 or win > n_fft:
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft, but got win_length={}"
                           .format(win))
    if window is not None:
        if window.dim() != 1 or window.size(0) != win:
            raise RuntimeError(where + ": expected a 1D window tensor of size equal to "
                               "win_length={}, but got window with size {}".format(win, window.shape))
    w: Optional[Tensor] = window
    if win < n_fft:  # the window centered in n_fft points
        left = (n_fft - win) // 2
        if window is None:
            w = torch.constant_pad_nd(torch.ones([win], dtype=self.dtype, device=self.device),
                                      [left, n_fft - win - left])
        else:
            w = torch.constant_pad_nd(window, [left, n_fft - win - left])
    n_frames = 1 + (length - n_fft) // hop
    frames = x.index_select(1, _fft_frame_indices(n_frames, n_fft, hop, x.device))
    frames = frames.view([batch, n_frames, n_fft])
    if w is not None:
        frames = frames * w
    if return_complex is not None and return_complex:
        raise NotImplementedError(
            "torch.stft with return_complex=True returns a complex tensor: complex tensors are "
            "out of scope in ampjit (return_complex=False gives torch's real layout)")
    sides = True
    if onesided is not None:
        sides = onesided
    out = torch.ops.ampjit._fft_r2c(frames, [2], 1 if normalized else 0, sides)
    out = out.transpose(1, 2)
    return out.squeeze(0) if self.dim() == 1 else out


def istft(self: Tensor, n_fft: int, hop_length: Optional[int] = None,
          win_length: Optional[int] = None, window: Optional[Tensor] = None, center: bool = True,
          normalized: bool = False, onesided: Optional[bool] = None, length: Optional[int] = None,
          return_complex: bool = False) -> Tensor:
    hop = n_fft >> 2
    if hop_length is not None:
        hop = hop_length
    win = n_fft
    if win_length is not None:
        win = win_length
    length_repr = "None" if length is None else "{}".format(length)
    where = ("istft({}{}, n_fft={}, hop_length={}, win_length={}, window={}, center={}, "
             "normalized={}, onesided={}, length={}, return_complex={}) ".format(
                 _fft_type_name(self), self.shape, n_fft, hop, win, _fft_window_repr(window),
                 _fft_flag(center), _fft_flag(normalized), _fft_flag(onesided), length_repr,
                 _fft_flag(return_complex)))
    input_dim = self.dim()
    n_frames = self.size(-2)
    fft_size = self.size(-3)
    expected_len = n_fft + hop * (n_frames - 1)
    if self.numel() == 0:
        raise RuntimeError(where + ": input tensor cannot be empty.")
    if input_dim != 3 and input_dim != 4:
        raise RuntimeError(where + ": expected a tensor with 3 or 4 dimensions of real, or 2 or 3 "
                           "dimensions of  complex, but got {}".format(input_dim))
    if self.size(-1) != 2:
        raise RuntimeError(where + ": expected the last dimension to be 2 (corresponding to real "
                           "and imaginary parts), but got {}".format(self.size(-1)))
    sides = fft_size != n_fft
    if onesided is not None:
        sides = onesided
    if sides:
        if n_fft // 2 + 1 != fft_size:
            raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of "
                               "the input tensor to match n_fft / 2 + 1 when onsided=True, but "
                               "got {}".format(fft_size))
    elif n_fft != fft_size:
        raise RuntimeError(where + ": expected the frequency dimension (3rd to the last) of the "
                           "input tensor to match n_fft when onsided=False, but got {}"
                           .format(fft_size))
    if not (0 < hop and hop <= win):
        raise RuntimeError(where + ": expected 0 < hop_length <= win_length")
    if not (0 < win and win <= n_fft):
        raise RuntimeError(where + ": expected 0 < win_length <= n_fft")
    if window is not None:
        if window.dim() != 1 or window.size(0) != win:
            raise RuntimeError(where + ": Invalid window shape. window has to be 1D and length of "
                               "`win_length`")
    if not self.is_floating_point():
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           "but got a tensor of scalar type: {}".format(
                               _fft_type_name(self)[len("torch."):-len("Tensor")]))
    w = torch.ones([win], dtype=self.dtype, device=self.device)
    if window is not None:
        w = window
    if win != n_fft:  # the window centered in n_fft points
        left = (n_fft - win) // 2
        w = torch.constant_pad_nd(w, [left, n_fft - win - left])
    x = self.unsqueeze(0) if input_dim == 3 else self
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size, 2)
    if return_complex:
        if sides:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        raise NotImplementedError(
            "torch.istft with return_complex=True returns a complex tensor: complex tensors are "
            "out of scope in ampjit")
    if not sides:
        x = x.narrow(2, 0, n_fft // 2 + 1)
    frames = torch.ops.ampjit._fft_c2r(x, [2], 1 if normalized else 2, n_fft)
    frames = frames * w.view([1, 1, n_fft])  # (channel, n_frames, n_fft)
    # overlap-add of the frames and of the squared window (torch's unfold_backward)
    index = _fft_frame_indices(n_frames, n_fft, hop, frames.device)
    channels = frames.size(0)
    y = torch.zeros([channels, expected_len], dtype=frames.dtype, device=frames.device)
    y = y.index_add(1, index, frames.reshape([channels, n_frames * n_fft]))
    squares = torch.pow(w, 2).expand([n_frames, n_fft]).reshape([1, n_frames * n_fft])
    envelope = torch.zeros([1, expected_len], dtype=squares.dtype, device=squares.device)
    envelope = envelope.index_add(1, index, squares)
    start = n_fft // 2 if center else 0
    end = expected_len
    if length is not None:
        end = start + length
    elif center:
        end = -(n_fft // 2)
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool(torch.abs(envelope).min() < 1e-11):
        raise RuntimeError(where + "window overlap add min: 1")
    y = y / envelope
    if input_dim == 3:
        y = y.squeeze(0)
    if end > expected_len:
        y = torch.constant_pad_nd(y, [0, end - expected_len])
    return y
# ---- linalg ----
# torch.linalg's composite ops, over the LAPACK-backed ones of runtime/ops/linalg_lapack.def, as
# torch composes them (aten/src/ATen/native/BatchLinearAlgebra.cpp, LinearAlgebra.cpp): torch's
# checks and messages, torch's order of operations. Real dtypes only (complex is out of scope).

def _linalg_check_errors(info: Tensor, api_name: str, kind: str, is_matrix: bool):
    """torch's _linalg_check_errors (kernels/lapack_meta.h has the kernels' copy): the first nonzero
    LAPACK code of the batch as torch's error for `kind` ("inv", "solve", "cholesky", "lu_factor")."""
    if info.numel() == 0:
        return
    flat = info.reshape([-1])
    bad = torch.nonzero(flat)
    if bad.size(0) == 0:
        return
    b = int(bad[0][0])
    code = int(flat[b])
    where = api_name
    if not is_matrix:
        where = "{}: (Batch element {})".format(api_name, b)
    if kind == "inv":
        raise LinAlgError("{}: The diagonal element {} is zero, the inversion could not be completed because the "
                          "input matrix is singular.".format(where, code))
    if kind == "solve":
        raise LinAlgError("{}: The solver failed because the input matrix is singular.".format(where))
    if kind == "cholesky":
        raise LinAlgError("{}: The factorization could not be completed because the input is not positive-definite "
                          "(the leading minor of order {} is not positive-definite).".format(where, code))
    if kind == "lu_factor":
        raise RuntimeError("{}: U[{},{}] is zero and using it on lu_solve would result in a division by zero. If you "
                           "still want to perform the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)".format(where, code, code))
    raise RuntimeError("{}: Unknown error code: {}.".format(api_name, code))


def _check_square(A: Tensor, f_name: str, arg_name: str = "A"):
    """checkIsMatrix and squareCheckInputs."""
    if A.dim() < 2:
        raise RuntimeError("{}: The input tensor {} must have at least 2 dimensions.".format(f_name, arg_name))
    if A.size(-1) != A.size(-2):
        raise RuntimeError("{}: {} must be batches of square matrices, but they are {} by {} matrices".format(
            f_name, arg_name, A.size(-2), A.size(-1)))


def _check_floating(A: Tensor, f_name: str):
    """checkFloatingOrComplex."""
    if not A.is_floating_point():
        raise RuntimeError("{}: Expected a floating point or complex tensor as input. Got {}".format(
            f_name, _torch_type_name(A.dtype)))


def _torch_type_name(dtype: int) -> str:
    if dtype == torch.float32:
        return "Float"
    if dtype == torch.float64:
        return "Double"
    if dtype == torch.float16:
        return "Half"
    if dtype == torch.bfloat16:
        return "BFloat16"
    if dtype == torch.int64:
        return "Long"
    if dtype == torch.int32:
        return "Int"
    if dtype == torch.int16:
        return "Short"
    if dtype == torch.int8:
        return "Char"
    if dtype == torch.uint8:
        return "Byte"
    return "Bool"


def _scalar_shape() -> List[int]:
    """The shape of a 0-dim tensor (a bare [] would be a Tensor[] in script)."""
    return torch.jit.annotate(List[int], [])


def _mT(A: Tensor) -> Tensor:
    return A.transpose(-2, -1)


def _eps(dtype: int) -> float:
    if dtype == torch.float64:
        return 2.220446049250313e-16
    return 1.1920928955078125e-07


def _lu_det_P(pivots: Tensor) -> Tensor:
    """The determinant of the permutation of getrf's pivots: -1 per row interchange."""
    k = pivots.size(-1)
    swaps = torch.ne(pivots, torch.arange(1, k + 1, dtype=torch.int32, device=pivots.device)).sum(-1)
    return 1 - 2 * torch.remainder(swaps, 2)


def linalg_lu_factor(A: Tensor, pivot: bool = True) -> Tuple[Tensor, Tensor]:
    LU, pivots, info = torch.linalg.lu_factor_ex(A, pivot=pivot)
    _linalg_check_errors(info, "torch.linalg.lu_factor", "lu_factor", A.dim() == 2)
    return LU, pivots


def linalg_lu(A: Tensor, pivot: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
    if A.dim() < 2:
        raise RuntimeError("linalg.lu: Expected tensor with 2 or more dimensions. Got size: {} instead".format(
            A.size()))
    LU, pivots, info = torch.linalg.lu_factor_ex(A, pivot=pivot)
    return torch.lu_unpack(LU, pivots, True, pivot)


def _lu_with_info(self: Tensor, pivot: bool = True, check_errors: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
    return torch.linalg.lu_factor_ex(self, pivot=pivot, check_errors=check_errors)


def _permute_rows(P: Tensor, B: Tensor, transpose: bool) -> Tensor:
    """P^T B (transpose) or P B for a permutation matrix P: B's rows gathered, exactly, as LAPACK's
    row interchanges (laswp) move them."""
    n = B.size(-2)
    if n == 0:
        return torch.matmul(_mT(P), B) if transpose else torch.matmul(P, B)
    idx = P.argmax(-2) if transpose else P.argmax(-1)
    batch = _broadcast_shape(idx.size()[:-1], B.size()[:-2])
    shape = batch + [n, B.size(-1)]
    return torch.gather(B.expand(shape), -2, idx.unsqueeze(-1).expand(shape))


def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, left: bool = True, adjoint: bool = False) -> Tensor:
    """getrs as torch runs it: the row interchanges, then the two triangular solves."""
    if LU.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor LU must have at least 2 dimensions.")
    if B.dim() < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    n = LU.size(-1)
    if LU.size(-2) != n:
        raise RuntimeError("linalg.lu_solve: LU must be batches of square matrices, but they are {} by {} "
                           "matrices".format(LU.size(-2), n))
    if left:
        if B.size(-2) != n:
            raise RuntimeError("linalg.lu_solve: Incompatible shapes of A and B for the equation AX = B ({}x{} and "
                               "{}x{})".format(n, n, B.size(-2), B.size(-1)))
    elif B.size(-1) != n:
        raise RuntimeError("linalg.lu_solve: Incompatible shapes of A and B for the equation XA = B ({}x{} and "
                           "{}x{})".format(n, n, B.size(-2), B.size(-1)))
    if pivots.dtype != torch.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    if LU.dtype != B.dtype:
        raise RuntimeError("linalg.lu_solve: Expected LU and B to have the same dtype, but found LU of type {} and "
                           "B of type {} instead".format(_torch_type_name(LU.dtype), _torch_type_name(B.dtype)))
    if not left:  # X A = B is A^H X^H = B^H
        return _mT(torch.linalg.lu_solve(LU, pivots, _mT(B), left=True, adjoint=not adjoint))
    P, L, U = torch.lu_unpack(LU, pivots)
    if adjoint:  # A^H X = B with A = P L U: X = P L^-H U^-H B
        X = torch.linalg.solve_triangular(_mT(U), B, upper=False)
        X = torch.linalg.solve_triangular(_mT(L), X, upper=True, unitriangular=True)
        return _permute_rows(P, X, False)
    X = _permute_rows(P, B, True)
    X = torch.linalg.solve_triangular(L, X, upper=False, unitriangular=True)
    return torch.linalg.solve_triangular(U, X, upper=True)


def lu_solve(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has {} dimensions instead".format(self.dim()))
    if LU_data.dim() < 2:
        raise RuntimeError("LU_data should have at least 2 dimensions, but has {} dimensions instead".format(
            LU_data.dim()))
    return torch.linalg.lu_solve(LU_data, LU_pivots, self)


def _linalg_solve_is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    return B.dim() == 1 or (A.dim() - 1 == B.dim() and B.size() == A.size()[:-1])


def linalg_solve_ex(A: Tensor, B: Tensor, left: bool = True, check_errors: bool = False) -> Tuple[Tensor, Tensor]:
    _check_floating(A, "linalg.solve")
    vector_case = _linalg_solve_is_vector_rhs(A, B)
    B_ = B
    if vector_case:
        B_ = B.unsqueeze(-1) if left else B.unsqueeze(-2)
    _check_square(A, "linalg.solve")
    if B_.dim() < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    if (left and A.size(-1) != B_.size(-2)) or (not left and A.size(-1) != B_.size(-1)):
        raise RuntimeError("linalg.solve: Incompatible shapes of A and B for the equation {} ({}x{} and {}x{})".format(
            "AX = B" if left else "XA = B", A.size(-2), A.size(-1), B_.size(-2), B_.size(-1)))
    if A.dtype != B.dtype:
        raise RuntimeError("linalg.solve: Expected A and B to have the same dtype, but found A of type {} and B of "
                           "type {} instead".format(_torch_type_name(A.dtype), _torch_type_name(B.dtype)))
    LU, pivots, info = torch.linalg.lu_factor_ex(A)
    X = torch.linalg.lu_solve(LU, pivots, B_, left=left)
    if check_errors:
        _linalg_check_errors(info, "torch.linalg.solve_ex", "solve", A.dim() == 2)
    if vector_case:
        X = X.squeeze(-1) if left else X.squeeze(-2)
    return X, info


def linalg_solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
    X, info = torch.linalg.solve_ex(A, B, left=left)
    _linalg_check_errors(info, "torch.linalg.solve", "solve", A.dim() == 2)
    return X


def linalg_inv_ex(A: Tensor, check_errors: bool = False) -> Tuple[Tensor, Tensor]:
    _check_square(A, "linalg.inv")
    _check_floating(A, "linalg.inv")
    n = A.size(-1)
    eye = torch.eye(n, dtype=A.dtype, device=A.device).expand(A.size())
    LU, pivots, info = torch.linalg.lu_factor_ex(A)
    inverse = torch.linalg.lu_solve(LU, pivots, eye)
    if check_errors:
        _linalg_check_errors(info, "linalg.inv_ex", "inv", A.dim() == 2)
    return inverse, info


def linalg_inv(A: Tensor) -> Tensor:
    inverse, info = torch.linalg.inv_ex(A)
    _linalg_check_errors(info, "linalg.inv", "inv", A.dim() == 2)
    return inverse


def inverse(self: Tensor) -> Tensor:
    return torch.linalg.inv(self)


def linalg_det(A: Tensor) -> Tensor:
    _check_square(A, "linalg.det")
    _check_floating(A, "linalg.det")
    LU, pivots, info = torch.linalg.lu_factor_ex(A)
    return _lu_det_P(pivots) * torch.prod(torch.diagonal(LU, 0, -2, -1), -1)


def det(self: Tensor) -> Tensor:
    return torch.linalg.det(self)


def linalg_slogdet(A: Tensor) -> Tuple[Tensor, Tensor]:
    _check_square(A, "linalg.slogdet")
    _check_floating(A, "linalg.slogdet")
    LU, pivots, info = torch.linalg.lu_factor_ex(A)
    diag_U = torch.diagonal(LU, 0, -2, -1)
    sign = torch.sign(diag_U).prod(-1) * _lu_det_P(pivots)
    logabsdet = torch.log(torch.abs(diag_U)).sum(-1)
    return sign, logabsdet


def slogdet(self: Tensor) -> Tuple[Tensor, Tensor]:
    return torch.linalg.slogdet(self)


def logdet(self: Tensor) -> Tensor:
    _check_square(self, "logdet")
    _check_floating(self, "logdet")
    sign, logabsdet = torch.linalg.slogdet(self)
    return torch.where(sign == -1.0, torch.full_like(logabsdet, math.nan), logabsdet)


def linalg_cholesky(self: Tensor, upper: bool = False) -> Tensor:
    L, info = torch.linalg.cholesky_ex(self, upper=upper)
    _linalg_check_errors(info, "linalg.cholesky", "cholesky", self.dim() == 2)
    return L


def cholesky(self: Tensor, upper: bool = False) -> Tensor:
    _check_square(self, "cholesky")
    L, info = torch.linalg.cholesky_ex(self, upper=upper)
    _linalg_check_errors(info, "cholesky", "cholesky", self.dim() == 2)
    return L


def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
    """potrs as two triangular solves: A = U^H U (upper) or L L^H."""
    if self.dim() < 2:
        raise RuntimeError("b should have at least 2 dimensions, but has {} dimensions instead".format(self.dim()))
    if input2.dim() < 2:
        raise RuntimeError("u should have at least 2 dimensions, but has {} dimensions instead".format(input2.dim()))
    if self.dtype != input2.dtype:
        raise RuntimeError("Expected b and A to have the same dtype, but found b of type {} and A of type {} "
                           "instead.".format(_torch_type_name(self.dtype), _torch_type_name(input2.dtype)))
    if upper:
        X = torch.linalg.solve_triangular(_mT(input2), self, upper=False)
        return torch.linalg.solve_triangular(input2, X, upper=True)
    X = torch.linalg.solve_triangular(input2, self, upper=False)
    return torch.linalg.solve_triangular(_mT(input2), X, upper=True)


def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("cholesky_inverse: The input tensor A must have at least 2 dimensions.")
    _check_square(self, "cholesky_inverse")
    n = self.size(-1)
    eye = torch.eye(n, dtype=self.dtype, device=self.device).expand(self.size())
    return torch.cholesky_solve(eye, self, upper)


def qr(self: Tensor, some: bool = True) -> Tuple[Tensor, Tensor]:
    return torch.linalg.qr(self, "reduced" if some else "complete")


def orgqr(self: Tensor, input2: Tensor) -> Tensor:
    return torch.linalg.householder_product(self, input2)


def linalg_svd(A: Tensor, full_matrices: bool = True, driver: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
    return torch._linalg_svd(A, full_matrices, True, driver=driver)


def linalg_svdvals(A: Tensor, driver: Optional[str] = None) -> Tensor:
    # U and V^H only where a gradient may need them, as torch (_may_require_fw_or_bw_grad)
    return torch._linalg_svd(A, False, A.requires_grad, driver=driver)[1]


def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
    if self.dim() < 2:
        raise RuntimeError("linalg.svd: input should have at least 2 dimensions, but has {} dimensions "
                           "instead".format(self.dim()))
    if compute_uv:
        U, S, Vh = torch.linalg.svd(self, full_matrices=not some)
        return U, S, _mT(Vh)
    S = torch.linalg.svdvals(self)
    m = self.size(-2)
    n = self.size(-1)
    batch = self.size()[:-2]
    U = torch.zeros(batch + [m, m], dtype=self.dtype, device=self.device)
    V = torch.zeros(batch + [n, n], dtype=self.dtype, device=self.device)
    return U, S, V


def linalg_eigvalsh(self: Tensor, UPLO: str = "L") -> Tensor:
    return torch.linalg.eigh(self, UPLO)[0]


def symeig(self: Tensor, eigenvectors: bool = False, upper: bool = True) -> Tuple[Tensor, Tensor]:
    L, V = torch.linalg.eigh(self, "U" if upper else "L")
    if not eigenvectors:
        V = torch.empty([0], dtype=self.dtype, device=self.device)
    return L, V


def linalg_eigvals(self: Tensor) -> Tensor:
    return torch.linalg.eig(self)[0]


def linalg_ldl_factor(self: Tensor, hermitian: bool = False) -> Tuple[Tensor, Tensor]:
    LD, pivots, info = torch.linalg.ldl_factor_ex(self, hermitian=hermitian)
    _linalg_check_errors(info, "torch.linalg.ldl_factor", "ldl", self.dim() == 2)
    return LD, pivots


def triangular_solve(self: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Tuple[Tensor, Tensor]:
    if self.dim() < 2:
        raise RuntimeError("torch.triangular_solve: Expected b to have at least 2 dimensions, but it has {} "
                           "dimensions instead".format(self.dim()))
    if A.dim() < 2:
        raise RuntimeError("torch.triangular_solve: Expected A to have at least 2 dimensions, but it has {} "
                           "dimensions instead".format(A.dim()))
    batch = _broadcast_shape(self.size()[:-2], A.size()[:-2])
    A_ = A.expand(batch + A.size()[-2:])
    M = _mT(A_) if transpose else A_
    X = torch.linalg.solve_triangular(M, self, upper=upper != transpose, unitriangular=unitriangular)
    return X, A_.clone()


def linalg_matrix_power(self: Tensor, n: int) -> Tensor:
    _check_square(self, "linalg.matrix_power")
    if n == 0:
        eye = torch.eye(self.size(-1), dtype=self.dtype, device=self.device)
        return eye.expand(self.size()).clone()
    a = self
    if n < 0:
        a = torch.linalg.inv(self)
        n = -n
    if n == 1:
        return a.clone()
    if n == 2:
        return torch.matmul(a, a)
    if n == 3:
        return torch.matmul(torch.matmul(a, a), a)
    # binary decomposition of n, as torch multiplies
    z = a
    result = a
    first_z = True
    have_result = False
    while n > 0:
        bit = n % 2
        n = n // 2
        if first_z:
            first_z = False
        else:
            z = torch.matmul(z, z)
        if bit == 1:
            if have_result:
                result = torch.matmul(result, z)
            else:
                result = z
                have_result = True
    return result


def matrix_power(self: Tensor, n: int) -> Tensor:
    return torch.linalg.matrix_power(self, n)


def linalg_multi_dot(tensors: List[Tensor]) -> Tensor:
    n = len(tensors)
    if n < 2:
        raise RuntimeError("multi_dot(): expected at least 2 tensors but got {}".format(n))
    out_shape: List[int] = []
    ts: List[Tensor] = []
    first = tensors[0]
    if first.dim() == 1:
        first = first.unsqueeze(0)
    elif first.dim() == 2:
        out_shape.append(first.size(0))
    else:
        raise RuntimeError("multi_dot(): the first tensor must be 1D or 2D but got {}D".format(first.dim()))
    ts.append(first)
    for i in range(1, n - 1):
        if tensors[i].dim() != 2:
            raise RuntimeError("multi_dot(): tensor {} must be 2D but got {}D".format(i, tensors[i].dim()))
        ts.append(tensors[i])
    last = tensors[n - 1]
    if last.dim() == 1:
        last = last.unsqueeze(-1)
    elif last.dim() == 2:
        out_shape.append(last.size(1))
    else:
        raise RuntimeError("multi_dot(): the last tensor must be 1D or 2D but got {}D".format(last.dim()))
    ts.append(last)
    for i in range(1, n):
        if ts[i].dtype != ts[0].dtype:
            raise RuntimeError("multi_dot(): all tensors must have be the same dtype but tensor 0 is {} and tensor {} "
                               "{}".format(ts[0].dtype, i, ts[i].dtype))
        if ts[i - 1].size(-1) != ts[i].size(0):
            raise RuntimeError("multi_dot(): tensors {} and {} with shapes {} and {} cannot be multiplied".format(
                i - 1, i, tensors[i - 1].size(), tensors[i].size()))
    if n == 2:
        return torch.mm(ts[0], ts[1]).view(out_shape)
    if n == 3:
        a = ts[0].size(0)
        b = ts[1].size(0)
        c = ts[2].size(0)
        d = ts[2].size(1)
        if (a * c) * (b + d) > (b * d) * (a + c):
            return torch.mm(ts[0], torch.mm(ts[1], ts[2])).view(out_shape)
        return torch.mm(torch.mm(ts[0], ts[1]), ts[2]).view(out_shape)
    # the cheapest order of the chain (torch's matrix_chain_order), then every product of that order
    p: List[int] = []
    for i in range(n):
        p.append(ts[i].size(0))
    p.append(ts[n - 1].size(1))
    cost: List[int] = [0 for _ in range(n * n)]
    split: List[int] = [0 for _ in range(n * n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i * n + j] = 9223372036854775807
            for k in range(i, j):
                q = cost[i * n + k] + cost[(k + 1) * n + j] + p[i] * p[k + 1] * p[j + 1]
                if q < cost[i * n + j]:
                    cost[i * n + j] = q
                    split[i * n + j] = k
    prods: List[Tensor] = [ts[0] for _ in range(n * n)]
    for i in range(n):
        prods[i * n + i] = ts[i]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            k = split[i * n + j]
            prods[i * n + j] = torch.mm(prods[i * n + k], prods[(k + 1) * n + j])
    return prods[n - 1].view(out_shape)


def linalg_vecdot(x: Tensor, y: Tensor, dim: int = -1) -> Tensor:
    if x.dtype != y.dtype:
        raise RuntimeError("linalg.vecdot: Expected x and y to have the same dtype, but found x of type {} and y of "
                           "type {} instead".format(_torch_type_name(x.dtype), _torch_type_name(y.dtype)))
    return (x * y).sum(dim)


def linalg_vander(x: Tensor, N: Optional[int] = None) -> Tensor:
    if x.dtype == torch.float16 or x.dtype == torch.bfloat16 or x.dtype == torch.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, but got {}".format(
            _torch_type_name(x.dtype)))
    x_ = x.unsqueeze(-1) if x.dim() == 0 else x
    shape = x_.size()
    n = shape[-1]
    if N is not None:
        n = N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    shape.append(n - 1)
    result = torch.cumprod(x_.unsqueeze(-1).expand(shape), -1)
    shape[-1] = 1
    ones = torch.ones(shape, dtype=result.dtype, device=result.device)
    return torch.cat([ones, result], -1)


def linalg_tensorinv(self: Tensor, ind: int = 2) -> Tensor:
    if ind <= 0:
        raise RuntimeError("Expected a strictly positive integer for 'ind', but got {}".format(ind))
    shape_end = self.size()[ind:]
    shape_start = self.size()[:ind]
    prod_end = 1
    for s in shape_end:
        prod_end *= s
    prod_start = 1
    for s in shape_start:
        prod_start *= s
    if prod_end != prod_start:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           "prod(self.shape[:ind]), but got {} != {}".format(prod_end, prod_start))
    result, info = torch.linalg.inv_ex(self.reshape([prod_start, prod_end]))
    _linalg_check_errors(info, "inv", "inv", True)
    return result.reshape(shape_end + shape_start)


def linalg_tensorsolve(self: Tensor, other: Tensor, dims: Optional[List[int]] = None) -> Tensor:
    ndim = self.dim()
    self_ = self
    if dims is not None:
        dest: List[int] = []
        for i in range(len(dims)):
            dest.append(ndim - len(dims) + i)
        self_ = torch.movedim(self_, dims, dest)
    result_shape = self_.size()[other.dim():]
    result_product = 1
    for s in result_shape:
        result_product *= s
    other_product = other.numel()
    if result_product != other_product:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
                           "prod(self.shape[:other.ndim]), but got {} != {}".format(result_product, other_product))
    self_ = self_.reshape([result_product, result_product])
    return torch.linalg.solve(self_, other.flatten()).reshape(result_shape)


def linalg_matrix_exp(self: Tensor) -> Tensor:
    """Scaling and squaring with the degree-13 Pade approximant (Higham 2005), in float64 whatever
    the dtype, rounded once."""
    _check_square(self, "linalg.matrix_exp")
    n = self.size(-1)
    if n == 0 or self.numel() == 0:
        return self.clone()
    if n == 1:
        return torch.exp(self)
    A = self.to(torch.float64)
    b = [64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0, 129060195264000.0,
         10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0, 40840800.0, 960960.0, 16380.0, 182.0, 1.0]
    norm1 = torch.abs(A).sum(-2).amax(-1)
    s = torch.clamp(torch.ceil(torch.log2(norm1 / 5.371920351148152)), 0.0, 1024.0)
    s = torch.where(torch.isfinite(s), s, torch.zeros_like(s))
    A = A / torch.pow(2.0, s).unsqueeze(-1).unsqueeze(-1)
    eye = torch.eye(n, dtype=torch.float64, device=self.device)
    A2 = torch.matmul(A, A)
    A4 = torch.matmul(A2, A2)
    A6 = torch.matmul(A4, A2)
    U = torch.matmul(A6, b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2 + b[1] * eye
    U = torch.matmul(A, U)
    V = torch.matmul(A6, b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
    R = torch.linalg.solve(V - U, V + U)
    steps = int(s.max())
    for i in range(steps):
        R = torch.where((s > i).unsqueeze(-1).unsqueeze(-1), torch.matmul(R, R), R)
    return R.to(self.dtype)


def matrix_exp(self: Tensor) -> Tensor:
    return torch.linalg.matrix_exp(self)


def linalg_cross(self: Tensor, other: Tensor, dim: int = -1) -> Tensor:
    if self.dim() != other.dim():
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = _wrap(dim, self.dim())
    if self.size(d) != 3 or other.size(d) != 3:
        raise RuntimeError("linalg.cross: inputs dimension {} must have length 3. Got {} and {}".format(
            dim, self.size(d), other.size(d)))
    shape = _broadcast_shape(self.size(), other.size())
    x = self.expand(shape)
    y = other.expand(shape)
    x0 = x.select(d, 0)
    x1 = x.select(d, 1)
    x2 = x.select(d, 2)
    y0 = y.select(d, 0)
    y1 = y.select(d, 1)
    y2 = y.select(d, 2)
    return torch.stack([x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0], d)


def cross(self: Tensor, other: Tensor, dim: Optional[int] = None) -> Tensor:
    if dim is None:
        for i in range(self.dim()):
            if self.size(i) == 3:
                return torch.linalg.cross(self, other, dim=i)
        raise RuntimeError("no dimension of size 3 in input")
    return torch.linalg.cross(self, other, dim=dim)


def mT(self: Tensor) -> Tensor:
    """Tensor.mT (script spells the attribute as this op, as torch); a 0-dim tensor's is a view of it."""
    if self.dim() == 0:
        return self.view(self.size())
    if self.dim() < 2:
        raise RuntimeError("tensor.mT is only supported on matrices or batches of matrices. Got {}-D tensor.".format(
            self.dim()))
    return self.transpose(-2, -1)


def mH(self: Tensor) -> Tensor:
    """Tensor.mH: the adjoint, the transpose of a real tensor."""
    if self.dim() == 0:
        return self.view(self.size())
    if self.dim() < 2:
        raise RuntimeError("tensor.mH is only supported on matrices or batches of matrices. Got {}-D tensor.".format(
            self.dim()))
    return self.transpose(-2, -1)


def linalg_diagonal(A: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return torch.diagonal(A, offset, dim1, dim2)


def linalg_matmul(self: Tensor, other: Tensor) -> Tensor:
    return torch.matmul(self, other)


def _check_norm_dtype(dtype: Optional[int], self_dtype: int, f_name: str):
    if dtype is not None:
        if not (dtype == torch.float32 or dtype == torch.float64 or dtype == torch.float16 or dtype == torch.bfloat16):
            raise RuntimeError("{}: dtype should be floating point or complex, but got {}".format(
                f_name, _torch_type_name(dtype)))


def linalg_vector_norm(self: Tensor, ord: float = 2.0, dim: Optional[List[int]] = None, keepdim: bool = False,
                       dtype: Optional[int] = None) -> Tensor:
    _check_floating(self, "linalg.vector_norm")
    _check_norm_dtype(dtype, self.dtype, "linalg.vector_norm")
    o = float(ord)
    x = self
    if dtype is not None:
        x = self.to(dtype)
    dims: List[int] = []
    if dim is not None:
        dims = dim
    if self.numel() == 0 and (o < 0.0 or o == math.inf):
        if len(dims) == 0:
            raise RuntimeError("linalg.vector_norm cannot compute the {} norm on an empty tensor because the "
                               "operation does not have an identity".format(ord))
        for d in dims:
            if self.size(d) == 0:
                raise RuntimeError("linalg.vector_norm cannot compute the {} norm on the dimension {}because this "
                                   "dimension is empty and the operation does not have an identity".format(ord, d))
    if len(dims) == 0:
        if x.dim() == 0:
            return torch.abs(x) if o != 0.0 else torch.ne(x, 0).to(x.dtype)
        dims = [i for i in range(x.dim())]
    return torch.norm(x, o, dims, keepdim)


def _backshift_permutation(dim0: int, dim1: int, ndim: int) -> List[int]:
    perm: List[int] = []
    for i in range(ndim):
        if i != dim0 and i != dim1:
            perm.append(i)
    perm.append(dim0)
    perm.append(dim1)
    return perm


def _reverse_permutation(perm: List[int]) -> List[int]:
    rev: List[int] = [0 for _ in range(len(perm))]
    for i in range(len(perm)):
        rev[perm[i]] = i
    return rev


def _matrix_norm_dims(A: Tensor, dim: List[int], dtype: Optional[int], low_precision: bool) -> List[int]:
    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 dimensions.")
    _check_floating(A, "linalg.matrix_norm")
    if not low_precision and (A.dtype == torch.float16 or A.dtype == torch.bfloat16):
        raise RuntimeError("linalg.matrix_norm: Low precision dtypes not supported. Got {}".format(
            _torch_type_name(A.dtype)))
    if len(dim) != 2:
        raise RuntimeError("linalg.matrix_norm: dim must be a 2-tuple. Got {}".format(dim))
    d0 = _wrap(dim[0], A.dim())
    d1 = _wrap(dim[1], A.dim())
    if d0 == d1:
        raise RuntimeError("linalg.matrix_norm: dims must be different. Got ({}, {})".format(d0, d1))
    _check_norm_dtype(dtype, A.dtype, "linalg.matrix_norm")
    return [d0, d1]


def linalg_matrix_norm(self: Tensor, ord: float, dim: List[int] = [-2, -1], keepdim: bool = False,
                       dtype: Optional[int] = None) -> Tensor:
    o = float(ord)
    abs_ord = abs(o)
    if not (abs_ord == 2.0 or abs_ord == 1.0 or abs_ord == math.inf):
        raise RuntimeError("linalg.matrix_norm: Order {} not supported.".format(ord))
    d = _matrix_norm_dims(self, dim, dtype, abs_ord != 2.0)
    if abs_ord == 2.0:
        perm = _backshift_permutation(d[0], d[1], self.dim())
        A = self
        if dtype is not None:
            A = self.to(dtype)
        S = torch.linalg.svdvals(A.permute(perm))
        result = S.amax(-1) if o > 0 else S.amin(-1)
        if keepdim:
            result = result.unsqueeze(-1).unsqueeze(-1).permute(_reverse_permutation(perm))
        return result
    d0 = d[0]
    d1 = d[1]
    if abs_ord == math.inf:
        d0 = d[1]
        d1 = d[0]
    if not keepdim and d0 < d1:
        d1 -= 1
    v = torch.linalg.vector_norm(self, 1.0, [d0], keepdim, dtype=dtype)
    return v.amax(d1, keepdim) if o > 0 else v.amin(d1, keepdim)


def linalg_matrix_norm__str_ord(self: Tensor, ord: str = "fro", dim: List[int] = [-2, -1], keepdim: bool = False,
                                dtype: Optional[int] = None) -> Tensor:
    if ord != "fro" and ord != "nuc":
        raise RuntimeError("linalg.matrix_norm: Order {} not supported.".format(ord))
    d = _matrix_norm_dims(self, dim, dtype, ord != "nuc")
    if ord == "fro":
        return torch.linalg.vector_norm(self, 2.0, d, keepdim, dtype=dtype)
    A = self
    if dtype is not None:
        A = self.to(dtype)
    perm = _backshift_permutation(d[0], d[1], self.dim())
    result = torch.linalg.svdvals(A.permute(perm)).sum(-1, keepdim)
    if keepdim:
        result = result.unsqueeze(-1).permute(_reverse_permutation(perm))
    return result


def linalg_norm(self: Tensor, ord: Optional[float] = None, dim: Optional[List[int]] = None, keepdim: bool = False,
                dtype: Optional[int] = None) -> Tensor:
    if dim is not None:
        if len(dim) != 1 and len(dim) != 2:
            raise RuntimeError("linalg.norm: If dim is specified, it must be of length 1 or 2. Got {}".format(dim))
    elif ord is not None:
        if self.dim() != 1 and self.dim() != 2:
            raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                               "{}D.".format(self.dim()))
    if ord is not None:
        if (dim is not None and len(dim) == 2) or (dim is None and self.dim() == 2):
            mdim = [0, 1]
            if dim is not None:
                mdim = dim
            return torch.linalg.matrix_norm(self, ord, mdim, keepdim, dtype=dtype)
        return torch.linalg.vector_norm(self, ord, dim, keepdim, dtype=dtype)
    return torch.linalg.vector_norm(self, 2.0, dim, keepdim, dtype=dtype)


def linalg_norm__ord_str(self: Tensor, ord: str, dim: Optional[List[int]] = None, keepdim: bool = False,
                         dtype: Optional[int] = None) -> Tensor:
    if dim is not None:
        if len(dim) != 1 and len(dim) != 2:
            raise RuntimeError("linalg.norm: If dim is specified, it mut be of length 1 or 2. Got {}".format(dim))
    elif self.dim() != 1 and self.dim() != 2:
        raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. Got "
                           "{}D.".format(self.dim()))
    mdim = [0, 1]
    if dim is not None:
        mdim = dim
    return torch.linalg.matrix_norm(self, ord, mdim, keepdim, dtype=dtype)


def frobenius_norm(self: Tensor) -> Tensor:
    return torch.norm(self, 2.0)


def frobenius_norm__dim(self: Tensor, dim: List[int], keepdim: bool = False) -> Tensor:
    if len(dim) > 2:
        raise RuntimeError("Expected at most 2 dimensions, but got {} dimensions instead.".format(len(dim)))
    if len(dim) <= 1:
        if len(dim) == 0:
            return torch.norm(self, 2.0, [i for i in range(self.dim())], keepdim)
        return torch.norm(self, 2.0, dim, keepdim)
    d0 = _wrap(dim[0], self.dim())
    d1 = _wrap(dim[1], self.dim())
    if d0 == d1:
        raise RuntimeError("Expected dims to be different, got {} instead".format(dim))
    return torch.sqrt(torch.sum(self * self, [d0, d1], keepdim))


def nuclear_norm(self: Tensor, keepdim: bool = False) -> Tensor:
    if self.dim() != 2:
        raise RuntimeError("Expected a tensor with 2 dimensions, but got a tensor with {} dimension{} instead.".format(
            self.dim(), "" if self.dim() == 1 else "s"))
    return torch.linalg.matrix_norm(self, "nuc", [0, 1], keepdim)


def nuclear_norm__dim(self: Tensor, dim: List[int], keepdim: bool = False) -> Tensor:
    return torch.linalg.matrix_norm(self, "nuc", dim, keepdim)


def _get_atol_rtol(A: Tensor, atol: Optional[Tensor], rtol: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
    """get_atol_rtol: the tolerances as float64 tensors; rtol defaults to eps * max(m, n) unless atol > 0."""
    zero = torch.zeros(_scalar_shape(), dtype=torch.float64, device=A.device)
    default_rtol = torch.full(_scalar_shape(), _eps(A.dtype) * max(A.size(-1), A.size(-2)), dtype=torch.float64,
                              device=A.device)
    atol_ = zero
    if atol is not None:
        atol_ = atol
    rtol_ = default_rtol
    if rtol is not None:
        rtol_ = rtol
    elif atol is not None:
        rtol_ = torch.where(atol > 0, zero, default_rtol)
    return atol_, rtol_


def _float_tols(A: Tensor, atol: Optional[float], rtol: Optional[float]) -> Tuple[Tensor, Tensor]:
    a = 0.0
    if atol is not None:
        a = atol
    r = 0.0
    if rtol is not None:
        r = rtol
    elif a <= 0.0:
        r = _eps(A.dtype) * max(A.size(-1), A.size(-2))
    return (torch.full(_scalar_shape(), a, dtype=torch.float64, device=A.device),
            torch.full(_scalar_shape(), r, dtype=torch.float64, device=A.device))


def linalg_pinv__atol_rtol_tensor(self: Tensor, atol: Optional[Tensor] = None, rtol: Optional[Tensor] = None,
                                  hermitian: bool = False) -> Tensor:
    if not (self.dtype == torch.float32 or self.dtype == torch.float64) or self.dim() < 2:
        raise RuntimeError("linalg.pinv({}{}): expected a tensor with 2 or more dimensions of float, double, cfloat "
                           "or cdouble types".format(_torch_type_name(self.dtype), self.size()))
    atol_, rtol_ = _get_atol_rtol(self, atol, rtol)
    if self.numel() == 0:
        U, S, V = torch.svd(self)
        return torch.matmul(V * S.reciprocal().unsqueeze(-2), _mT(U))
    if not hermitian:
        U, S, V = torch.svd(self)
        max_val = S.narrow(-1, 0, 1)
        tol = torch.max(atol_.unsqueeze(-1), rtol_.unsqueeze(-1) * max_val)
        S_pinv = torch.where(S > tol, S.reciprocal(), torch.zeros(_scalar_shape(), dtype=S.dtype, device=S.device)).to(self.dtype)
        return torch.matmul(V * S_pinv.unsqueeze(-2), _mT(U))
    L, Q = torch.linalg.eigh(self)
    L_abs = L.abs()
    max_val = L_abs.amax(-1, True)
    tol = torch.max(atol_.unsqueeze(-1), rtol_.unsqueeze(-1) * max_val)
    L_pinv = torch.where(L_abs > tol, L.reciprocal(), torch.zeros(_scalar_shape(), dtype=L.dtype, device=L.device)).to(self.dtype)
    return torch.matmul(Q * L_pinv.unsqueeze(-2), _mT(Q))


def linalg_pinv__atol_rtol_float(self: Tensor, atol: Optional[float] = None, rtol: Optional[float] = None,
                                 hermitian: bool = False) -> Tensor:
    a, r = _float_tols(self, atol, rtol)
    return torch.linalg.pinv(self, atol=a, rtol=r, hermitian=hermitian)


def linalg_pinv(self: Tensor, rcond: float, hermitian: bool = False) -> Tensor:
    return torch.linalg.pinv(self, atol=0.0, rtol=rcond, hermitian=hermitian)


def linalg_pinv__rcond_tensor(self: Tensor, rcond: Tensor, hermitian: bool = False) -> Tensor:
    return torch.linalg.pinv(self, atol=torch.zeros(_scalar_shape(), dtype=torch.float64, device=self.device), rtol=rcond,
                             hermitian=hermitian)


def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
    return torch.linalg.pinv(self, rcond, False)


def linalg_matrix_rank__atol_rtol_tensor(input: Tensor, atol: Optional[Tensor] = None, rtol: Optional[Tensor] = None,
                                         hermitian: bool = False) -> Tensor:
    if input.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    atol_, rtol_ = _get_atol_rtol(input, atol, rtol)
    if input.numel() == 0:
        return torch.zeros(input.size()[:-2], dtype=torch.int64, device=input.device)
    if not hermitian:
        S = torch.linalg.svdvals(input)
        max_S = S.narrow(-1, 0, 1)
    else:
        S = torch.linalg.eigvalsh(input).abs()
        max_S = S.amax(-1, True)
    tol = torch.max(atol_.unsqueeze(-1), rtol_.unsqueeze(-1) * max_S)
    return torch.sum(S > tol, -1)


def linalg_matrix_rank__atol_rtol_float(self: Tensor, atol: Optional[float] = None, rtol: Optional[float] = None,
                                        hermitian: bool = False) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least 2 dimensions.")
    a, r = _float_tols(self, atol, rtol)
    return torch.linalg.matrix_rank(self, atol=a, rtol=r, hermitian=hermitian)


def linalg_matrix_rank(self: Tensor, tol: float, hermitian: bool = False) -> Tensor:
    return torch.linalg.matrix_rank(self, atol=tol, rtol=0.0, hermitian=hermitian)


def linalg_matrix_rank__tol_tensor(input: Tensor, tol: Tensor, hermitian: bool = False) -> Tensor:
    return torch.linalg.matrix_rank(input, atol=tol, rtol=torch.zeros(_scalar_shape(), dtype=tol.dtype, device=tol.device),
                                    hermitian=hermitian)


def _cond_check_ord(ord: float):
    a = abs(ord)
    if not (a == 2.0 or a == 1.0 or a == math.inf):
        raise RuntimeError("linalg.cond got an invalid norm type: {}".format(ord))


def linalg_cond(self: Tensor, p: Optional[float] = None) -> Tensor:
    if self.dim() < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    o = 2.0
    if p is not None:
        o = float(p)
    _cond_check_ord(o)
    if self.numel() == 0:
        return torch.zeros(self.size()[:-2], dtype=self.dtype, device=self.device)
    if abs(o) == 2.0:
        S = torch.linalg.svdvals(self)
        s_max = S.narrow(-1, 0, 1)
        s_min = S.narrow(-1, S.size(-1) - 1, 1)
        if o == -2.0:
            return torch.div(s_min, s_max).squeeze(-1)
        return torch.div(s_max, s_min).squeeze(-1)
    _check_square(self, "linalg.cond(ord={})".format(o))
    inverse, info = torch.linalg.inv_ex(self)
    inverse = inverse.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    result = torch.linalg.matrix_norm(self, o) * torch.linalg.matrix_norm(inverse, o)
    return torch.nan_to_num(result, math.inf, math.inf, -math.inf)


def linalg_cond__p_str(self: Tensor, p: str) -> Tensor:
    _check_square(self, "linalg.cond(ord={})".format(p))
    if p != "fro" and p != "nuc":
        raise RuntimeError("linalg.cond got an invalid norm type: {}".format(p))
    if self.numel() == 0:
        return torch.zeros(self.size()[:-2], dtype=self.dtype, device=self.device)
    if p == "nuc":
        S = torch.linalg.svdvals(self)
        return S.sum(-1) * S.reciprocal().sum(-1)
    inverse, info = torch.linalg.inv_ex(self)
    inverse = inverse.masked_fill((info > 0).unsqueeze(-1).unsqueeze(-1), math.inf)
    result = torch.linalg.matrix_norm(self, p) * torch.linalg.matrix_norm(inverse, p)
    return torch.nan_to_num(result, math.inf, math.inf, -math.inf)
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
    # the empty and all-zero results through self, as torch's _pdist_forward has a history
    if n <= 1:
        return self.reshape([-1]).narrow(0, 0, 0)
    if self.size(1) == 0:
        return torch.zeros([n * (n - 1) // 2], dtype=self.dtype, device=self.device) + self.sum() * 0
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


# ---- quantile ------------------------------------------------------------------------------------
# torch 1.13's quantile_compute (aten/src/ATen/native/Sorting.cpp): the values sorted along the
# reduced dim (all of them when dim is None), each q's rank in them (the last index where a NaN is,
# so that the quantile is NaN; for nanquantile, among the non-NaN values), the rank rounded as the
# interpolation asks, and the values at the ranks below and above interpolated.

def _quantile(self: Tensor, q: Tensor, dim: Optional[int], keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
    name = "nanquantile" if ignore_nan else "quantile"
    if self.numel() == 0:
        raise RuntimeError("{}() input tensor must be non-empty".format(name))
    if q.dim() > 1:
        raise RuntimeError("{}() q must be a scalar or 1D tensor".format(name))
    if self.dtype != torch.float32 and self.dtype != torch.float64:
        raise RuntimeError("{}() input tensor must be either float or double dtype".format(name))
    if self.dtype != q.dtype:
        raise RuntimeError("{}() q tensor must be same dtype as the input tensor".format(name))
    if interpolation != "linear" and interpolation != "lower" and interpolation != "higher" and \
            interpolation != "midpoint" and interpolation != "nearest":
        raise RuntimeError("{}() interpolation must be one of linear, lower, higher, midpoint or nearest. Got {}"
                           .format(name, interpolation))
    if not bool(torch.logical_and(q.ge(0), q.le(1)).all()):
        raise RuntimeError("{}() q values must be in the range [0, 1]".format(name))
    out_shape: List[int] = []
    if dim is not None and self.dim() > 0:
        d = _wrap(dim, self.dim())
        for i in range(self.dim()):
            if i != d:
                out_shape.append(self.size(i))
            elif keepdim:
                out_shape.append(1)
    elif keepdim:
        out_shape = [1 for _ in range(self.dim())]
    if dim is None:
        sorted_values = torch.sort(self.flatten())[0]
    else:
        d = _wrap(dim, max(self.dim(), 1))
        sorted_values = torch.sort(self.unsqueeze(-1).transpose(d, -1))[0]
    n = sorted_values.size(-1)
    sorted_values = sorted_values.reshape(out_shape + [n])
    q1 = q.reshape([-1])
    if ignore_nan:
        ranks = q1 * (sorted_values.isnan().logical_not().sum(-1, True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = n - 1
        ranks = (q1 * last).expand(out_shape + [q1.numel()])
        ranks = ranks.masked_fill(sorted_values.isnan().any(-1, True), last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    ranks_below = ranks.to(torch.int64)
    values = sorted_values.gather(-1, ranks_below)
    if interpolation == "linear" or interpolation == "midpoint":
        if interpolation == "midpoint":
            weights = torch.full_like(ranks, 0.5)
        else:
            weights = ranks - ranks_below
        values_above = sorted_values.gather(-1, ranks.ceil().to(torch.int64))
        values = torch.lerp(values, values_above, weights)
    if q.dim() == 0:
        return values.squeeze(-1)
    return values.unsqueeze(0).transpose(0, -1).squeeze(-1)


def _check_q(q: float, name: str):
    if q < 0.0 or q > 1.0:
        raise RuntimeError("{}() q must be in the range [0, 1] but got {}".format(name, q))


def quantile(self: Tensor, q: Tensor, dim: Optional[int] = None, keepdim: bool = False,
             interpolation: str = "linear") -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, False)


def quantile__scalar(self: Tensor, q: float, dim: Optional[int] = None, keepdim: bool = False,
                     interpolation: str = "linear") -> Tensor:
    _check_q(q, "quantile")
    return _quantile(self, torch.tensor(q, dtype=self.dtype), dim, keepdim, interpolation, False)


def nanquantile(self: Tensor, q: Tensor, dim: Optional[int] = None, keepdim: bool = False,
                interpolation: str = "linear") -> Tensor:
    return _quantile(self, q, dim, keepdim, interpolation, True)


def nanquantile__scalar(self: Tensor, q: float, dim: Optional[int] = None, keepdim: bool = False,
                        interpolation: str = "linear") -> Tensor:
    _check_q(q, "nanquantile")
    return _quantile(self, torch.tensor(q, dtype=self.dtype), dim, keepdim, interpolation, True)
