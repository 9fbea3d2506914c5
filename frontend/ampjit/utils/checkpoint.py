"""torch.utils.checkpoint: activation checkpointing trades memory for a second forward pass.

`checkpoint(function, *args)` runs `function` without recording its graph (its activations are not
kept) and records one node instead (an autograd.Function, as torch's reentrant variant): in
backward it runs `function` again on the saved inputs with recording on -- with the CPU random
state it first ran with, so dropout draws the same mask (preserve_rng_state) -- and back-propagates
through that. The gradients are those of the plain call.
"""
import warnings

from .. import _C
from ..autograd.function import Function


def _detach_inputs(inputs):
    from .. import Tensor
    out = []
    for x in inputs:
        if isinstance(x, Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        from .. import Tensor
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = _C.get_rng_state()
        ctx.inputs = []
        ctx.tensor_indices = []
        tensors = []
        for i, arg in enumerate(args):
            if isinstance(arg, Tensor):
                tensors.append(arg)
                ctx.tensor_indices.append(i)
                ctx.inputs.append(None)
            else:
                ctx.inputs.append(arg)
        ctx.save_for_backward(*tensors)
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from .. import Tensor, enable_grad, autograd
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = _detach_inputs(inputs)
        saved_state = _C.get_rng_state() if ctx.preserve_rng_state else None
        try:
            if ctx.preserve_rng_state:
                _C.set_rng_state(ctx.fwd_cpu_state)
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if saved_state is not None:
                _C.set_rng_state(saved_state)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        autograd.backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, Tensor) else None for x in detached)


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    from .. import Tensor, is_grad_enabled
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if is_grad_enabled() and not any(isinstance(a, Tensor) and a.requires_grad for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
    return CheckpointFunction.apply(function, preserve, *args)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    """Runs the modules in `segments` checkpointed chunks (the last chunk plainly, as torch)."""
    preserve = kwargs.pop("preserve_rng_state", True)
    modules = list(functions) if isinstance(functions, (list, tuple)) else list(functions.children())

    def run_function(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = modules[j](x)
            return x
        return forward

    segment_size = max(len(modules) // segments, 1)
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, preserve_rng_state=preserve)
    return run_function(end + 1, len(modules) - 1)(input)
