"""torch.nn.init: in-place initializers. Random ones draw from ampjit's generator, which is torch's
(Note [torch's CPU generator] in runtime/random.h): after the same manual_seed, uniform initializers
(the layers' defaults) give torch's values bit for bit, normal ones to within a rounding."""
import math
import struct
import warnings

from .. import _C, float32, float64
from .._grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_", "zeros_", "eye_",
           "xavier_uniform_", "xavier_normal_", "kaiming_uniform_", "kaiming_normal_"]


def _fill_random(tensor, factory, offset, scale):
    """tensor := offset + scale * factory(shape), drawn as torch's uniform_/normal_ draw: the
    uniforms (rand) of float32 mapped in float64 and rounded once, as torch's uniform kernel; the
    normals (randn) scaled in float32, as torch's normal_fill (float64 tensors in float64)."""
    shape = list(tensor.shape)
    dtype = float64 if tensor.dtype is float64 else float32
    r = _C._call(factory, (shape,), {"dtype": dtype, "device": tensor.device})
    if factory == "aten::rand":
        r = r.to(float64)
    base = _C._call("aten::full", (shape, offset), {"dtype": r.dtype, "device": tensor.device})
    with no_grad():
        tensor.copy_(base.add(r, alpha=scale) if factory == "aten::rand" else r.mul(scale).add(base))
    return tensor


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (torch.nn.init.calculate_gain)."""
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError("negative_slope {} not a valid number".format(param))
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError("Unsupported nonlinearity {}".format(nonlinearity))


def _f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def uniform_(tensor, a=0.0, b=1.0):
    """Fills tensor with values drawn from U(a, b). As torch's kernel for a non-double tensor, the
    bounds are the tensor's type (float) and b - a is computed in it."""
    if tensor.dtype is not float64:
        a, b = _f32(a), _f32(b)
        return _fill_random(tensor, "aten::rand", a, _f32(b - a))
    return _fill_random(tensor, "aten::rand", a, b - a)


def normal_(tensor, mean=0.0, std=1.0):
    """Fills tensor with values drawn from N(mean, std^2)."""
    return _fill_random(tensor, "aten::randn", mean, std)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0):
    """Fills tensor with values drawn from N(mean, std^2) truncated to [a, b]: draws outside the
    interval are drawn again (the same distribution as torch's inverse-CDF method; the stream of
    numbers differs)."""
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. "
                      "The distribution of values may be incorrect.", stacklevel=2)
    with no_grad():
        normal_(tensor, mean, std)
        for _ in range(1000):
            outside = (tensor < a).logical_or(tensor > b)
            if not outside.any().item():
                break
            fresh = normal_(_C._call("aten::empty_like", (tensor,), {}), mean, std)
            tensor.copy_(_C._call("aten::where", (outside, fresh, tensor), {}))
        return tensor.clamp_(min=a, max=b)


def constant_(tensor, val):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return tensor.copy_(_C._call("aten::eye", tuple(tensor.shape), {"dtype": tensor.dtype}))


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field_size = 1
    for s in tensor.shape[2:]:
        receptive_field_size *= s
    return tensor.size(1) * receptive_field_size, tensor.size(0) * receptive_field_size


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid_modes = ["fan_in", "fan_out"]
    if mode not in valid_modes:
        raise ValueError("Mode {} not supported, please use one of {}".format(mode, valid_modes))
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a)


def xavier_normal_(tensor, gain=1.0):
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)))


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu"):
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op")
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0.0, std)
