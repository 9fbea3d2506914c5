"""Flatten: collapses dims start_dim..end_dim into one."""
from .module import Module


class Flatten(Module):
    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return "start_dim={}, end_dim={}".format(self.start_dim, self.end_dim)
