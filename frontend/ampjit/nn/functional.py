"""torch.nn.functional: torch's Python signatures and defaults, each mapped to its ATen op.

Every function here converts torch's Python-level arguments (reduction strings, ``None`` strides,
implicit softmax dims, the F.batch_norm argument order) and calls the op-table entry; an op the
table lacks raises NotImplementedError naming it, from the generic call.
"""
import warnings

from .. import _C
from . import _reduction
from .modules.utils import _list_with_default

__all__ = [
    "relu", "relu_", "relu6", "elu", "leaky_relu", "hardtanh", "gelu", "silu", "mish", "sigmoid", "tanh",
    "softplus", "logsigmoid", "hardsigmoid", "hardswish", "softmax", "softmin", "log_softmax",
    "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "max_pool1d", "max_pool2d", "avg_pool1d", "avg_pool2d", "adaptive_avg_pool1d", "adaptive_avg_pool2d",
    "layer_norm", "batch_norm", "group_norm", "normalize", "dropout", "embedding", "one_hot", "pad",
    "l1_loss", "mse_loss", "smooth_l1_loss", "binary_cross_entropy", "binary_cross_entropy_with_logits",
    "cross_entropy", "nll_loss",
]


def _aten(name, *args, **kwargs):
    return _C._call("aten::" + name, args, kwargs)


# --- activations ------------------------------------------------------------------------------

def relu(input, inplace=False):
    return _aten("relu_", input) if inplace else _aten("relu", input)


def relu_(input):
    return _aten("relu_", input)


def relu6(input, inplace=False):
    return _aten("relu6_", input) if inplace else _aten("relu6", input)


def elu(input, alpha=1.0, inplace=False):
    return _aten("elu_", input, alpha) if inplace else _aten("elu", input, alpha)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _aten("leaky_relu_", input, negative_slope) if inplace else _aten("leaky_relu", input, negative_slope)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _aten("hardtanh_", input, min_val, max_val) if inplace else _aten("hardtanh", input, min_val, max_val)


def gelu(input, approximate="none"):
    return _aten("gelu", input, approximate=approximate)


def silu(input, inplace=False):
    return _aten("silu_", input) if inplace else _aten("silu", input)


def mish(input, inplace=False):
    return _aten("mish_", input) if inplace else _aten("mish", input)


def sigmoid(input):
    return _aten("sigmoid", input)


def tanh(input):
    return _aten("tanh", input)


def softplus(input, beta=1, threshold=20):
    return _aten("softplus", input, beta, threshold)


def logsigmoid(input):
    return _aten("log_sigmoid", input)


def hardsigmoid(input, inplace=False):
    return _aten("hardsigmoid_", input) if inplace else _aten("hardsigmoid", input)


def hardswish(input, inplace=False):
    return _aten("hardswish_", input) if inplace else _aten("hardswish", input)


def _get_softmax_dim(name, ndim, stacklevel):
    warnings.warn("Implicit dimension choice for {} has been deprecated. Change the call to include dim=X "
                  "as an argument.".format(name), stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmax", input.dim(), _stacklevel)
    return _aten("softmax", input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("softmin", input.dim(), _stacklevel)
    return _aten("softmax", -input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        dim = _get_softmax_dim("log_softmax", input.dim(), _stacklevel)
    return _aten("log_softmax", input, dim, dtype)


# --- linear and convolution -------------------------------------------------------------------

def linear(input, weight, bias=None):
    return _aten("linear", input, weight, bias)


def _conv(name, input, weight, bias, stride, padding, dilation, groups):
    # padding='same'/'valid' is ATen's separate `.padding` overload, named so a table without it says so.
    if isinstance(padding, str):
        return _C._call_overload("aten::{}.padding".format(name),
                                 (input, weight, bias, stride, padding, dilation, groups), {})
    return _aten(name, input, weight, bias, stride, padding, dilation, groups)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv("conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _aten("conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _aten("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _aten("conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups, dilation)


# --- pooling ------------------------------------------------------------------------------------
# torch's `stride=None` means "the kernel size"; ATen spells that as an empty list.

def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    stride = [] if stride is None else stride
    if return_indices:
        return tuple(_aten("max_pool1d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode))
    return _aten("max_pool1d", input, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False):
    stride = [] if stride is None else stride
    if return_indices:
        return tuple(_aten("max_pool2d_with_indices", input, kernel_size, stride, padding, dilation, ceil_mode))
    return _aten("max_pool2d", input, kernel_size, stride, padding, dilation, ceil_mode)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    stride = [] if stride is None else stride
    return _aten("avg_pool1d", input, kernel_size, stride, padding, ceil_mode, count_include_pad)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    stride = [] if stride is None else stride
    return _aten("avg_pool2d", input, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool1d(input, output_size):
    return _aten("adaptive_avg_pool1d", input, output_size)


def adaptive_avg_pool2d(input, output_size):
    return _aten("adaptive_avg_pool2d", input, _list_with_default(output_size, input.size()))


# --- normalization ------------------------------------------------------------------------------

def _verify_batch_size(size):
    size_prods = size[0]
    for s in size[2:]:
        size_prods *= s
    if size_prods == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size {}".format(size))


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05):
    return _aten("layer_norm", input, normalized_shape, weight, bias, eps, True)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False, momentum=0.1, eps=1e-05):
    """In training mode ATen's batch_norm also updates running_mean/running_var in place."""
    if training:
        _verify_batch_size(input.size())
    return _aten("batch_norm", input, weight, bias, running_mean, running_var, training, momentum, eps, True)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05):
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received {}".format(input.dim()))
    _verify_batch_size([input.size(0) * input.size(1) // num_groups, num_groups] + list(input.size()[2:]))
    return _aten("group_norm", input, num_groups, weight, bias, eps, True)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    if out is not None:
        raise NotImplementedError("ampjit does not implement normalize(..., out=)")
    denom = input.norm(p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    return input / denom


# --- dropout, embedding, padding ----------------------------------------------------------------

def dropout(input, p=0.5, training=True, inplace=False):
    if p < 0.0 or p > 1.0:
        raise ValueError("dropout probability has to be between 0 and 1, but got {}".format(p))
    return _aten("dropout_", input, p, training) if inplace else _aten("dropout", input, p, training)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < weight.size(0), "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -weight.size(0), "Padding_idx must be within num_embeddings"
            padding_idx = weight.size(0) + padding_idx
    else:
        padding_idx = -1
    if max_norm is not None:
        input = input.contiguous()
        _aten("embedding_renorm_", weight, input, max_norm, norm_type)
    return _aten("embedding", weight, input, padding_idx, scale_grad_by_freq, sparse)


def one_hot(tensor, num_classes=-1):
    return _aten("one_hot", tensor, num_classes)


def pad(input, pad, mode="constant", value=None):
    return _aten("pad", input, list(pad), mode, value)


# --- losses -------------------------------------------------------------------------------------

def _broadcast_pair(input, target):
    """torch.broadcast_tensors for two tensors, as views."""
    a, b = list(input.shape), list(target.shape)
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    shape = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            raise RuntimeError("The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton "
                               "dimension {}".format(x, y, len(shape)))
        shape.append(y if x == 1 else x)
    return input.expand(shape), target.expand(shape)


def _pointwise_loss_inputs(input, target):
    if target.size() != input.size():
        warnings.warn("Using a target size ({}) that is different to the input size ({}). This will likely lead to "
                      "incorrect results due to broadcasting. Please ensure they have the same size.".format(
                          target.size(), input.size()), stacklevel=3)
        return _broadcast_pair(input, target)
    return input, target


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    input, target = _pointwise_loss_inputs(input, target)
    return _aten("l1_loss", input, target, reduction_enum)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    input, target = _pointwise_loss_inputs(input, target)
    return _aten("mse_loss", input, target, reduction_enum)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    input, target = _pointwise_loss_inputs(input, target)
    if beta == 0.0:
        return _aten("l1_loss", input, target, reduction_enum)
    return _aten("smooth_l1_loss", input, target, reduction_enum, beta)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError("Using a target size ({}) that is different to the input size ({}) is deprecated. "
                         "Please ensure they have the same size.".format(target.size(), input.size()))
    if weight is not None:
        weight = _broadcast_pair(target, weight)[1]
    return _aten("binary_cross_entropy", input, target, weight, reduction_enum)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean",
                                     pos_weight=None):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError("Target size ({}) must be the same as input size ({})".format(target.size(), input.size()))
    return _aten("binary_cross_entropy_with_logits", input, target, weight, pos_weight, reduction_enum)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean",
                  label_smoothing=0.0):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    return _aten("cross_entropy_loss", input, target, weight, reduction_enum, ignore_index, label_smoothing)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
    reduction_enum = _reduction.resolve(size_average, reduce, reduction)
    return _aten("nll_loss_nd", input, target, weight, reduction_enum, ignore_index)
