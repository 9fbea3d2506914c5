"""Convolutions: Conv1d/2d/3d and ConvTranspose1d/2d/3d (torch/nn/modules/conv.py)."""
from __future__ import annotations  # the annotations are for the script compiler

import math
from typing import List, Optional

import ampjit as torch

from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _factory, _pair, _reverse_repeat_tuple, _single, _triple


class _ConvNd(Module):
    __constants__ = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                     "out_channels", "kernel_size"]
    _ntuple = None

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation, transposed, output_padding,
                 groups, bias, padding_mode, device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        valid_padding_strings = {"same", "valid"}
        if isinstance(padding, str):
            if padding not in valid_padding_strings:
                raise ValueError("Invalid padding string {!r}, should be one of {}".format(
                    padding, valid_padding_strings))
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        valid_padding_modes = {"zeros", "reflect", "replicate", "circular"}
        if padding_mode not in valid_padding_modes:
            raise ValueError("padding_mode must be one of {}, but got padding_mode='{}'".format(
                valid_padding_modes, padding_mode))
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(self.padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size, range(len(kernel_size) - 1, -1, -1)):
                    total_padding = d * (k - 1)
                    left_pad = total_padding // 2
                    self._reversed_padding_repeated_twice[2 * i] = left_pad
                    self._reversed_padding_repeated_twice[2 * i + 1] = total_padding - left_pad
        else:
            self._reversed_padding_repeated_twice = _reverse_repeat_tuple(self.padding, 2)
        if transposed:
            shape = (in_channels, out_channels // groups) + tuple(kernel_size)
        else:
            shape = (out_channels, in_channels // groups) + tuple(kernel_size)
        self.weight = Parameter(_factory("empty", shape, device, dtype))
        if bias:
            self.bias = Parameter(_factory("empty", (out_channels,), device, dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            if fan_in != 0:
                bound = 1 / math.sqrt(fan_in)
                init.uniform_(self.bias, -bound, bound)

    def extra_repr(self):
        s = "{in_channels}, {out_channels}, kernel_size={kernel_size}, stride={stride}"
        if self.padding != (0,) * len(self.padding):
            s += ", padding={padding}"
        if self.dilation != (1,) * len(self.dilation):
            s += ", dilation={dilation}"
        if self.output_padding != (0,) * len(self.output_padding):
            s += ", output_padding={output_padding}"
        if self.groups != 1:
            s += ", groups={groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += ", padding_mode={padding_mode}"
        return s.format(**self.__dict__)


class _Conv(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        t = self._ntuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation), False, t(0), groups, bias,
                         padding_mode, device, dtype)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    _ntuple = staticmethod(_single)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Optional[Tensor]):
        if self.padding_mode != "zeros":
            return F.conv1d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, [0], self.dilation, self.groups)
        return F.conv1d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv2d(_Conv):
    _ntuple = staticmethod(_pair)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Optional[Tensor]):
        if self.padding_mode != "zeros":
            return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, [0, 0], self.dilation, self.groups)
        return F.conv2d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class Conv3d(_Conv):
    _ntuple = staticmethod(_triple)

    def _conv_forward(self, input: Tensor, weight: Tensor, bias: Optional[Tensor]):
        if self.padding_mode != "zeros":
            return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode), weight, bias,
                            self.stride, [0, 0, 0], self.dilation, self.groups)
        return F.conv3d(input, weight, bias, self.stride, self.padding, self.dilation, self.groups)


class _ConvTransposeNd(_ConvNd):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, output_padding=0, groups=1,
                 bias=True, dilation=1, padding_mode="zeros", device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError('Only "zeros" padding mode is supported for {}'.format(type(self).__name__))
        t = self._ntuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding), t(dilation), True,
                         t(output_padding), groups, bias, padding_mode, device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size, num_spatial_dims, dilation=None):
        if output_size is None:
            return _single(self.output_padding)
        has_batch_dim = input.dim() == num_spatial_dims + 2
        num_non_spatial_dims = 2 if has_batch_dim else 1
        if len(output_size) == num_non_spatial_dims + num_spatial_dims:
            output_size = output_size[num_non_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError("ConvTranspose{}D: for {}D input, output_size must have {} or {} elements (got {})".format(
                num_spatial_dims, input.dim(), num_spatial_dims, num_non_spatial_dims + num_spatial_dims,
                len(output_size)))
        min_sizes, max_sizes = [], []
        for d in range(num_spatial_dims):
            dim_size = ((input.size(d + num_non_spatial_dims) - 1) * stride[d] - 2 * padding[d]
                        + (dilation[d] if dilation is not None else 1) * (kernel_size[d] - 1) + 1)
            min_sizes.append(dim_size)
            max_sizes.append(min_sizes[d] + stride[d] - 1)
        for i, size in enumerate(output_size):
            if size < min_sizes[i] or size > max_sizes[i]:
                raise ValueError("requested an output size of {}, but valid sizes range from {} to {} (for an input "
                                 "of {})".format(output_size, min_sizes, max_sizes, input.size()[2:]))
        return [output_size[d] - min_sizes[d] for d in range(num_spatial_dims)]

    def _padding_for(self, input, output_size):
        """output_padding for this call: the module's, or the one that gives `output_size` (eager only)."""
        return self._output_padding(input, output_size, self.stride, self.padding, self.kernel_size,
                                    len(self.kernel_size), self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    _ntuple = staticmethod(_single)

    def forward(self, input, output_size: Optional[List[int]] = None):
        if torch.jit.is_scripting():
            if output_size is not None:
                raise ValueError("ConvTranspose1d(output_size=...) is not supported in script")
            output_padding = self.output_padding
        else:
            output_padding = self._padding_for(input, output_size)
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                      self.dilation)


class ConvTranspose2d(_ConvTransposeNd):
    _ntuple = staticmethod(_pair)

    def forward(self, input, output_size: Optional[List[int]] = None):
        if torch.jit.is_scripting():
            if output_size is not None:
                raise ValueError("ConvTranspose2d(output_size=...) is not supported in script")
            output_padding = self.output_padding
        else:
            output_padding = self._padding_for(input, output_size)
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                      self.dilation)


class ConvTranspose3d(_ConvTransposeNd):
    _ntuple = staticmethod(_triple)

    def forward(self, input, output_size: Optional[List[int]] = None):
        if torch.jit.is_scripting():
            if output_size is not None:
                raise ValueError("ConvTranspose3d(output_size=...) is not supported in script")
            output_padding = self.output_padding
        else:
            output_padding = self._padding_for(input, output_size)
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, output_padding, self.groups,
                      self.dilation)
