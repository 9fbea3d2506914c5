"""ChannelShuffle, as torch 1.13's torch/nn/modules/channelshuffle.py."""
from .. import functional as F
from .module import Module


class ChannelShuffle(Module):
    __constants__ = ["groups"]

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return "groups={}".format(self.groups)
