"""ampjit.autograd: reverse-mode differentiation (runtime/autograd/autograd.h, Note [Autograd]).

``backward`` and ``grad`` run the C++ engine; ``Function`` records user functions into the same
graph; ``gradcheck`` compares a function's analytical gradients with finite differences.
"""
from .. import _C
from .._grad_mode import no_grad, enable_grad, set_grad_enabled, inference_mode  # noqa: F401
from .function import Function, FunctionCtx  # noqa: F401
from .gradcheck import gradcheck  # noqa: F401


def _tensor_tuple(x):
    if x is None:
        return None
    from .. import Tensor
    return (x,) if isinstance(x, Tensor) else tuple(x)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """torch.autograd.backward: accumulates the gradients of `tensors` into the leaves' .grad."""
    tensors = _tensor_tuple(tensors)
    grads = _tensor_tuple(grad_tensors)
    if grads is not None and len(grads) != len(tensors):
        raise RuntimeError("grad can be implicitly created only for scalar outputs" if not grads
                           else "got {} tensors and {} gradients".format(len(tensors), len(grads)))
    _C._backward(tensors, grads, retain_graph, create_graph, _tensor_tuple(inputs))


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, only_inputs=True,
         allow_unused=False, is_grads_batched=False):
    """torch.autograd.grad: the gradients of `outputs` with respect to `inputs` (a tuple); no .grad
    changes. Unused inputs get None with allow_unused, else an error."""
    if is_grads_batched:
        raise NotImplementedError("torch.autograd.grad(is_grads_batched=True) is not implemented")
    outputs = _tensor_tuple(outputs)
    inputs = _tensor_tuple(inputs)
    grads = _tensor_tuple(grad_outputs)
    if grads is not None and len(grads) != len(outputs):
        raise RuntimeError("grad_outputs should be a sequence of length {} (got {})".format(
            len(outputs), len(grads)))
    return _C._grad(outputs, inputs, grads, retain_graph, create_graph, allow_unused)


class Variable:
    """torch.autograd.Variable(t): since torch 0.4 the tensor itself."""

    def __new__(cls, data, requires_grad=False):
        t = data.detach()
        t.requires_grad = requires_grad
        return t
