// torch.is_grad_enabled / no_grad / enable_grad / set_grad_enabled: whether gradients are being
// recorded, per thread (on unless turned off), as torch's GradMode. Python's context managers set
// it (frontend/ampjit/_grad_mode.py) and compiled code reads it (`torch.is_grad_enabled()` in
// script and in torch's archives, whose nn.Transformer code picks its fast path by it). ampjit does
// not record gradients yet; the mode is the state torch's programs consult.
#pragma once

namespace ampjit {

bool grad_enabled();
void set_grad_enabled(bool enabled);

}  // namespace ampjit
