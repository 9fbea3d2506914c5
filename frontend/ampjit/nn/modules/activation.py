"""Activation modules: thin wrappers over nn.functional with torch's constructor arguments and reprs."""
from .. import functional as F
from .module import Module


class _Inplace(Module):
    """An activation with only an ``inplace`` flag."""
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    _fn = staticmethod(F.relu)


class ReLU6(_Inplace):
    _fn = staticmethod(F.relu6)


class SiLU(_Inplace):
    _fn = staticmethod(F.silu)


class Mish(_Inplace):
    _fn = staticmethod(F.mish)


class Hardsigmoid(_Inplace):
    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_Inplace):
    _fn = staticmethod(F.hardswish)


class LeakyReLU(Module):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return "negative_slope={}{}".format(self.negative_slope, ", inplace=True" if self.inplace else "")


class ELU(Module):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return "alpha={}{}".format(self.alpha, ", inplace=True" if self.inplace else "")


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return "approximate={}".format(repr(self.approximate))


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


class Softplus(Module):
    def __init__(self, beta=1, threshold=20):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return "beta={}, threshold={}".format(self.beta, self.threshold)


class _SoftmaxNd(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return "dim={dim}".format(dim=self.dim)


class Softmax(_SoftmaxNd):
    _fn = staticmethod(F.softmax)


class Softmin(_SoftmaxNd):
    _fn = staticmethod(F.softmin)


class LogSoftmax(_SoftmaxNd):
    _fn = staticmethod(F.log_softmax)
