"""torch.optim.SGD (torch 1.13): momentum, dampening, Nesterov, weight decay, maximize."""
from .. import _C, no_grad
from .optimizer import Optimizer, required


def _fusable(p, grad, buf):
    """Whether the fused CPU step (kernels/cpu/optim_ops.cpp) serves this parameter."""
    from .. import float32, float64
    tensors = [p, grad] + ([buf] if buf is not None else [])
    return all(t.device.type == "cpu" and t.dtype in (float32, float64) and t.dtype == p.dtype and t.is_contiguous()
               and t.shape == p.shape for t in tensors)


class SGD(Optimizer):
    def __init__(self, params, lr=required, momentum=0, dampening=0, weight_decay=0, nesterov=False, *,
                 maximize=False, foreach=None, differentiable=False):
        if lr is not required and lr < 0.0:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if momentum < 0.0:
            raise ValueError("Invalid momentum value: {}".format(momentum))
        if weight_decay < 0.0:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                        nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)

    def step(self, closure=None):
        from .. import empty_like
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
                weight_decay, nesterov, maximize = group["weight_decay"], group["nesterov"], group["maximize"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if _fusable(p, p.grad, buf):  # Note [Fused optimizer steps]
                        first = buf is None and momentum != 0
                        if first:
                            buf = empty_like(p)
                        _C._sgd_step(p, p.grad, buf, lr, momentum, dampening, weight_decay, nesterov, maximize,
                                     first)
                        state["momentum_buffer"] = buf
                        continue
                    d_p = p.grad if not maximize else -p.grad
                    if weight_decay != 0:
                        d_p = d_p.add(p, alpha=weight_decay)
                    if momentum != 0:
                        if buf is None:
                            buf = d_p.clone().detach()
                        else:
                            buf.mul_(momentum).add_(d_p, alpha=1 - dampening)
                        d_p = d_p.add(buf, alpha=momentum) if nesterov else buf
                    state["momentum_buffer"] = buf  # None without momentum, as torch keeps it
                    p.add_(d_p, alpha=-lr)
        return loss
