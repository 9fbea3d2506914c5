"""torch.optim.Adam and AdamW (torch 1.13's single-tensor rules): bias-corrected moments, amsgrad,
maximize; Adam adds weight decay to the gradient, AdamW decays the parameter."""
import math

from .. import _C, no_grad
from .optimizer import Optimizer


def _fusable(p, grad, state, amsgrad):
    """Whether the fused CPU step (kernels/cpu/optim_ops.cpp) serves this parameter: contiguous
    float32/float64 CPU tensors throughout."""
    from .. import float32, float64
    tensors = [p, grad, state["exp_avg"], state["exp_avg_sq"]] + ([state["max_exp_avg_sq"]] if amsgrad else [])
    return all(t.device.type == "cpu" and t.dtype in (float32, float64) and t.dtype == p.dtype and t.is_contiguous()
               and t.shape == p.shape for t in tensors)


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *,
                 foreach=None, maximize=False, capturable=False, differentiable=False, fused=False):
        if not 0.0 <= lr:
            raise ValueError("Invalid learning rate: {}".format(lr))
        if not 0.0 <= eps:
            raise ValueError("Invalid epsilon value: {}".format(eps))
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: {}".format(betas[0]))
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError("Invalid beta parameter at index 1: {}".format(betas[1]))
        if not 0.0 <= weight_decay:
            raise ValueError("Invalid weight_decay value: {}".format(weight_decay))
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                        maximize=maximize, foreach=foreach, capturable=capturable)
        if not self._decoupled:  # torch 1.13's Adam has these two options, its AdamW does not
            defaults.update(differentiable=differentiable, fused=fused)
        Optimizer.__init__(self, params, defaults)

    def step(self, closure=None):
        from .. import zeros_like, tensor, float32, maximum
        loss = self._closure_loss(closure)
        with no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
                amsgrad, maximize = group["amsgrad"], group["maximize"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad if not maximize else -p.grad
                    state = self.state[p]
                    if len(state) == 0:
                        state["step"] = tensor(0.0, dtype=float32)
                        state["exp_avg"] = zeros_like(p)
                        state["exp_avg_sq"] = zeros_like(p)
                        if amsgrad:
                            state["max_exp_avg_sq"] = zeros_like(p)
                    exp_avg, exp_avg_sq, step_t = state["exp_avg"], state["exp_avg_sq"], state["step"]
                    step_t += 1
                    if _fusable(p, p.grad, state, amsgrad):  # Note [Fused optimizer steps]
                        _C._adam_step(p, p.grad, exp_avg, exp_avg_sq, state.get("max_exp_avg_sq"), lr, beta1,
                                      beta2, eps, weight_decay, float(step_t), amsgrad, maximize, self._decoupled)
                        continue
                    if self._decoupled:
                        p.mul_(1 - lr * weight_decay)
                    elif weight_decay != 0:
                        grad = grad.add(p, alpha=weight_decay)
                    exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
                    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
                    step = float(step_t)
                    bias_correction1 = 1 - beta1 ** step
                    bias_correction2 = 1 - beta2 ** step
                    step_size = lr / bias_correction1
                    bias_correction2_sqrt = math.sqrt(bias_correction2)
                    if amsgrad:
                        max_sq = state["max_exp_avg_sq"]
                        max_sq.copy_(maximum(max_sq, exp_avg_sq))
                        denom = (max_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    else:
                        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
                    p.addcdiv_(exp_avg, denom, value=-step_size)
        return loss


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *,
                 maximize=False, foreach=None, capturable=False):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                         foreach=foreach, maximize=maximize, capturable=capturable)
