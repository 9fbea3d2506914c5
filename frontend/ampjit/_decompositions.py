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
