"""nn.Parameter: a Tensor subclass that modules register as a learnable parameter.

Note [Parameter is an alias with another class]
ampjit.Tensor is a Boost.Python class whose C++ value is set by its constructor, so a Python
subclass cannot take its data through ``Tensor.__init__``. ``Parameter(t)`` instead asks the
extension for a new tensor object over t's storage (``_C._alias``: same data, its own
requires_grad and leaf flags, as torch's Parameter shares t's data) and retags that object's class
as Parameter; Python allows this because the subclass adds no slots. ``__init__`` is then a no-op
so Boost.Python never installs a second C++ value. Ops accept a Parameter as any tensor and return
plain Tensors, like torch.
"""
from .. import _C
from .._C import Tensor


class Parameter(Tensor):
    """A Tensor that is a module parameter: ``Parameter(data=None, requires_grad=True)``."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C._call("aten::empty", ([0],), {})
        if not isinstance(data, Tensor):
            raise TypeError("Parameter(): expected a Tensor as data, got {}".format(type(data).__name__))
        p = _C._alias(data)
        p.__class__ = cls
        p.requires_grad = requires_grad
        return p

    def __init__(self, data=None, requires_grad=True):
        pass  # the data was set by __new__ (Note [Parameter is an alias with another class])

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __reduce_ex__(self, protocol):
        # As torch's: the data pickles as a plain tensor and becomes a Parameter again on load.
        return (_rebuild_parameter, (self.detach(), self.requires_grad))

    def __deepcopy__(self, memo):
        key = id(self)
        if key not in memo:
            memo[key] = type(self)(self.detach().clone(), self.requires_grad)
        return memo[key]


def _rebuild_parameter(data, requires_grad):
    """The inverse of Parameter.__reduce_ex__ (pickle calls it by this module-level name)."""
    return Parameter(data, requires_grad)
