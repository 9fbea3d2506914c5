"""torch.utils.checkpoint: activation checkpointing trades memory for a second forward pass in
backward. ampjit has no autograd yet, so there is nothing to recompute: `checkpoint` runs the
function once and returns its result, which is what torch's forward returns too."""


def checkpoint(function, *args, use_reentrant=True, **kwargs):
    preserve = kwargs.pop("preserve_rng_state", True)  # noqa: F841 (no recomputation, no RNG replay)
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=True, **kwargs):
    if isinstance(functions, (list, tuple)):
        modules = list(functions)
    else:
        modules = list(functions.children())
    for module in modules:
        input = module(input)
    return input
