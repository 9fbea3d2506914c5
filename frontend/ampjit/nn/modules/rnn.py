"""LSTM and GRU, as torch 1.13 defines them: parameters weight_ih_l{k}[_reverse], weight_hh_...,
bias_ih_..., bias_hh_..., initialized U(-1/sqrt(hidden), 1/sqrt(hidden)), and forward calling the
aten::lstm / aten::gru op with the flat weight list (kernels/cpu/rnn_ops.cpp). Packed sequences and
projections (proj_size) are not supported."""
import math
import numbers
from typing import List, Optional, Tuple

import ampjit as torch
from ampjit import Tensor

from .. import init
from ..parameter import Parameter
from .module import Module
from .utils import _factory


class RNNBase(Module):
    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size != 0:
            raise NotImplementedError("ampjit's {} does not implement projections (proj_size > 0)".format(mode))
        gate_size = {"LSTM": 4, "GRU": 3}[mode] * hidden_size
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"] + (["bias_ih_l{}{}", "bias_hh_l{}{}"] if bias else [])
                shapes = [(gate_size, layer_input_size), (gate_size, hidden_size)] + (
                    [(gate_size,), (gate_size,)] if bias else [])
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes):
                    setattr(self, name, Parameter(_factory("empty", shape, device, dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    def _init_flat_weights(self):
        self._flat_weights = [getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]

    def __setattr__(self, attr, value):
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            # keep the flat list in sync when a parameter is replaced
            idx = self._flat_weights_names.index(attr)
            self._flat_weights[idx] = value
        super().__setattr__(attr, value)

    def _apply(self, fn, *args, **kwargs):
        ret = super()._apply(fn, *args, **kwargs)
        self._init_flat_weights()
        return ret

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = "{input_size}, {hidden_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    def _batched_input(self, input: Tensor, is_batched: bool, batch_dim: int) -> Tuple[Tensor, List[int]]:
        """The input with its batch dim (added when unbatched), checked, and the hidden state's size."""
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        _check_input(input, self.input_size, True)
        max_batch_size = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return input, [self.num_layers * num_directions, max_batch_size, self.hidden_size]

    @property
    def all_weights(self):
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]


def _check_input(input: Tensor, input_size: int, is_batched: bool):
    expected = 3 if is_batched else 2
    if input.dim() != expected:
        raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
    if input_size != input.size(-1):
        raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {input_size}, got {input.size(-1)}")


def _check_hidden(hx: Tensor, expected: List[int], what: str):
    if hx.size() != expected:
        raise RuntimeError(f"Expected {what} size ({expected[0]}, {expected[1]}, {expected[2]}), got {hx.size()}")


class LSTM(RNNBase):
    """A multi-layer LSTM; returns output and (h_n, c_n)."""

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input: Tensor,
                hx: Optional[Tuple[Tensor, Tensor]] = None) -> Tuple[Tensor, Tuple[Tensor, Tensor]]:
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        input, expected = self._batched_input(input, is_batched, batch_dim)
        if hx is None:
            h0 = torch.zeros(expected, dtype=input.dtype, device=input.device)
            c0 = torch.zeros(expected, dtype=input.dtype, device=input.device)
        else:
            h0 = hx[0]
            c0 = hx[1]
            if is_batched:
                if h0.dim() != 3 or c0.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx and cx should also be 3-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            else:
                if h0.dim() != 2 or c0.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx and cx should also be 2-D but got "
                                       f"({h0.dim()}-D, {c0.dim()}-D) tensors")
                h0 = h0.unsqueeze(1)
                c0 = c0.unsqueeze(1)
            _check_hidden(h0, expected, "hidden[0]")
            _check_hidden(c0, expected, "hidden[1]")
        result = torch.lstm(input, [h0, c0], self._flat_weights, self.bias, self.num_layers, self.dropout,
                            self.training, self.bidirectional, self.batch_first)
        output = result[0]
        h_n = result[1]
        c_n = result[2]
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            c_n = c_n.squeeze(1)
        return output, (h_n, c_n)


class GRU(RNNBase):
    """A multi-layer GRU; returns output and h_n."""

    def __init__(self, *args, **kwargs):
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        input, expected = self._batched_input(input, is_batched, batch_dim)
        if hx is None:
            h0 = torch.zeros(expected, dtype=input.dtype, device=input.device)
        else:
            h0 = hx
            if is_batched:
                if h0.dim() != 3:
                    raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {h0.dim()}-D tensor")
            else:
                if h0.dim() != 2:
                    raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {h0.dim()}-D tensor")
                h0 = h0.unsqueeze(1)
            _check_hidden(h0, expected, "hidden")
        result = torch.gru(input, h0, self._flat_weights, self.bias, self.num_layers, self.dropout, self.training,
                           self.bidirectional, self.batch_first)
        output = result[0]
        h_n = result[1]
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
        return output, h_n
