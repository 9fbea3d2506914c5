class M(Module):
  __parameters__ = ["weight", ]
  __buffers__ = []
  weight : Tensor
  training : bool
  def forward(self: __torch__.M,
    x: Tensor,
    k: Optional[int]=None) -> Tuple[Tensor, Optional[Tensor]]:
    _0 = "expected {} dims"
    if torch.ne(torch.dim(x), 2):
      ops.prim.RaiseException(torch.format(_0, 2), "builtins.ValueError")
    else:
      pass
    if torch.__isnot__(k, None):
      k0 = unchecked_cast(int, k)
      y = torch.mul(x, k0)
      z = uninitialized(Tensor)
    else:
      y = x
      z = ops.prim.NumToTensor(torch.size(x, 0))
    _1 = __torch__.torch.cpu.amp.autocast_mode.autocast.__new__(__torch__.torch.cpu.amp.autocast_mode.autocast)
    _2 = (_1).__init__(True, 15, True, )
    with _1:
      w = torch.mm(y, self.weight)
    return (w, z)
