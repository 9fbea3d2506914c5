"""torch.autograd.Function: user functions with their own backward, recorded into the graph as
one node (runtime/autograd/autograd.h, FunctionNode)."""
from .. import _C
from .._grad_mode import is_grad_enabled, no_grad

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after "
          "they have already been freed). Saved intermediate values of the graph are freed when you call "
          ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the "
          "graph a second time or if you need to access saved tensors after calling backward.")


def _legacy_type(t):
    names = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
             "bfloat16": "BFloat16Tensor", "int64": "LongTensor", "int32": "IntTensor",
             "bool": "BoolTensor", "uint8": "ByteTensor", "int8": "CharTensor", "int16": "ShortTensor"}
    prefix = "torch." if t.device.type == "cpu" else "torch.cuda."
    return prefix + names.get(repr(t.dtype)[len("torch."):], "Tensor")


class FunctionCtx:
    """What forward and backward share (torch's ctx): saved tensors, flags and any attribute."""

    def __init__(self):
        self._saved = None
        self._saved_versions = None
        self._freed = False
        self._dirty = ()
        self._non_differentiable = ()
        self._materialize_grads = True
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        self._saved = tensors
        self._saved_versions = tuple(None if t is None else t._version for t in tensors)

    @property
    def saved_tensors(self):
        if self._freed:
            raise RuntimeError(_FREED)
        if self._saved is None:
            return ()
        for t, v in zip(self._saved, self._saved_versions):
            if t is not None and t._version != v:
                which = "" if t.grad_fn is None else ", which is output {} of {},".format(
                    t.output_nr, t.grad_fn.name())
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified by an inplace "
                    "operation: [{} [{}]]{} is at version {}; expected version {} instead. Hint: enable anomaly "
                    "detection to find the operation that failed to compute its gradient, with "
                    "torch.autograd.set_detect_anomaly(True).".format(
                        _legacy_type(t), ", ".join(str(s) for s in t.shape), which, t._version, v))
        return self._saved

    def mark_dirty(self, *tensors):
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable = tensors

    def set_materialize_grads(self, value):
        self._materialize_grads = bool(value)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``; call ``apply``."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is deprecated. Please "
                           "use new-style autograd function with static forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    @classmethod
    def apply(cls, *args):
        from .. import Tensor, zeros
        ctx = FunctionCtx()
        grad_on = is_grad_enabled()
        ctx.needs_input_grad = tuple(grad_on and isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            outputs = cls.forward(ctx, *args)
        if not any(ctx.needs_input_grad):
            return outputs
        is_tuple = isinstance(outputs, tuple)
        outs = outputs if is_tuple else (outputs,)
        tensor_pos = [i for i, o in enumerate(outs) if isinstance(o, Tensor)]
        metas = [(outs[i].shape, outs[i].dtype, outs[i].device) for i in tensor_pos]
        n_args = len(args)
        input_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]

        def backward(grads):
            full = [None] * len(outs)
            for k, i in enumerate(tensor_pos):
                g = grads[k] if k < len(grads) else None
                if g is None and ctx._materialize_grads:
                    shape, dtype, device = metas[k]
                    g = zeros(shape, dtype=dtype, device=device)
                full[i] = g
            result = cls.backward(ctx, *full)
            if not isinstance(result, tuple):
                result = (result,)
            if len(result) != n_args:
                if len(result) > n_args and all(r is None for r in result[n_args:]):
                    result = result[:n_args]
                else:
                    raise RuntimeError("function {} returned an incorrect number of gradients (expected {}, "
                                       "got {})".format(cls._backward_name, n_args, len(result)))
            for i, r in enumerate(result):
                if r is not None and not isinstance(r, Tensor):
                    raise TypeError("function {} returned a gradient different than None at position {}, "
                                    "but the corresponding forward input was not a Variable".format(
                                        cls._backward_name, i + 1))
            return [result[i] for i in input_pos]

        def release():
            ctx._freed = True

        new = _C._record_function(cls._backward_name, backward, release,
                                  [args[i] for i in input_pos], [outs[i] for i in tensor_pos],
                                  list(ctx._dirty), list(ctx._non_differentiable))
        outs = list(outs)
        for k, i in enumerate(tensor_pos):
            outs[i] = new[k]
        return tuple(outs) if is_tuple else outs[0]


def once_differentiable(fn):
    """torch.autograd.function.once_differentiable: backward runs without recording."""
    import functools

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)
    return wrapper
