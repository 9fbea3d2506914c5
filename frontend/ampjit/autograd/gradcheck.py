"""torch.autograd.gradcheck: analytical gradients (from backward) against central finite differences,
one input element at a time. Use float64 inputs, as torch recommends."""
from .. import _C


def _flat(x):
    return x.reshape(-1)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_unused):
    from .. import Tensor, zeros, no_grad
    if isinstance(inputs, Tensor):
        inputs = (inputs,)
    inputs = tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the "
                         "them have requires_grad=True.")

    def outputs_of(args):
        out = func(*args)
        return (out,) if isinstance(out, Tensor) else tuple(o for o in out if isinstance(o, Tensor))

    outs = outputs_of(inputs)
    for o_idx, out in enumerate(outs):
        if not out.requires_grad:
            continue
        n_out = out.numel()
        for i in diff:
            x = inputs[i]
            n_in = x.numel()
            analytical = zeros((n_out, n_in), dtype=x.dtype)
            numerical = zeros((n_out, n_in), dtype=x.dtype)
            for j in range(n_out):
                g = zeros(out.shape, dtype=out.dtype)
                _flat(g)[j] = 1.0
                (gx,) = _C._grad((out,), (x,), (g,), True, False, True)
                if gx is not None:
                    analytical[j] = _flat(gx)
            with no_grad():
                base = x.detach().clone()
                for k in range(n_in):
                    args_p = list(inputs)
                    args_m = list(inputs)
                    xp = base.clone()
                    xm = base.clone()
                    _flat(xp)[k] = float(_flat(base)[k]) + eps
                    _flat(xm)[k] = float(_flat(base)[k]) - eps
                    args_p[i] = xp
                    args_m[i] = xm
                    fp = outputs_of(args_p)[o_idx]
                    fm = outputs_of(args_m)[o_idx]
                    numerical[:, k] = _flat((fp - fm) / (2 * eps))
            err = (analytical - numerical).abs()
            bound = atol + rtol * numerical.abs()
            if bool((err > bound).any()):
                if raise_exception:
                    raise RuntimeError("Jacobian mismatch for output {} with respect to input {},\nnumerical:{}\n"
                                       "analytical:{}\n".format(o_idx, i, numerical, analytical))
                return False
    return True
