class M(Module):
  __parameters__ = ["weight", ]
  __buffers__ = []
  weight : Tensor
  training : bool
  def forward(self: __torch__.M,
    x: Tensor) -> Tensor:
    _0 = __torch__.helper
    d = {"a": 1.5, "b": inf}
    return _0(x, d, [1, 2, 3], )
def helper(x: Tensor,
    d: Dict[str, float],
    sizes: List[int]) -> Tensor:
  _1 = torch.tensor([1., 2.], dtype=6, device=torch.device("cpu"), requires_grad=False)
  n = torch.__getitem__(sizes, -1)
  _2 = torch.__contains__(d, "a")
  if _2:
    _3 = d["a"]
  else:
    _3 = 0.
  return torch.add(torch.mul(x, _3), torch.sum(_1))
