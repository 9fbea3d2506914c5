"""Activation modules: thin wrappers over nn.functional with torch's constructor arguments and reprs."""
import ampjit as torch
from .. import functional as F
from .module import Module


class _Inplace(Module):
    """An activation with only an ``inplace`` flag."""
    __constants__ = ["inplace"]

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class ReLU6(_Inplace):
    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)


class SiLU(_Inplace):
    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class Mish(_Inplace):
    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class Hardsigmoid(_Inplace):
    def forward(self, input):
        return F.hardsigmoid(input, inplace=self.inplace)


class Hardswish(_Inplace):
    def forward(self, input):
        return F.hardswish(input, inplace=self.inplace)


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return "negative_slope={}{}".format(self.negative_slope, ", inplace=True" if self.inplace else "")


class ELU(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return "alpha={}{}".format(self.alpha, ", inplace=True" if self.inplace else "")


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return "approximate={}".format(repr(self.approximate))


class Sigmoid(Module):
    def forward(self, input):
        return torch.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return torch.tanh(input)


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return "beta={}, threshold={}".format(self.beta, self.threshold)


class _SoftmaxNd(Module):
    __constants__ = ["dim"]

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class Softmax(_SoftmaxNd):
    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)


class Softmin(_SoftmaxNd):
    def forward(self, input):
        return F.softmin(input, self.dim, _stacklevel=5)


class LogSoftmax(_SoftmaxNd):
    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)
