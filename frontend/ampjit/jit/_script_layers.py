"""Scriptable forwards for ampjit's own layers (jit.script of a module whose class is one of
them compiles these instead of the Python forward).

These are copies of the layers' forwards in frontend/ampjit/nn/modules/, pending issue 13 item 1
(library layers compiled from their own source, as torch does)."""
import typing

# Scriptable forwards for ampjit's own layers, written as torch's modules write theirs (their
# Python forwards use things script has no use for, like staticmethod tables and _stacklevel).
# Each class is keyed by the ampjit layer it stands for; `__constants__` are inlined, as torch's.
# These methods are compiled, never run: their free names (F, torch) resolve through
# _override_globals, not this module's globals (the package is still loading when this module is).

class _IdentityScript:
    def forward(self, input):
        return input


class _LinearScript:
    __constants__ = ["in_features", "out_features"]

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)


_CONV_CONSTANTS = ["stride", "padding", "dilation", "groups", "padding_mode", "output_padding", "in_channels",
                   "out_channels", "kernel_size"]


class _Conv1dScript:
    __constants__ = _CONV_CONSTANTS

    def forward(self, input):
        return F.conv1d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _Conv2dScript:
    __constants__ = _CONV_CONSTANTS

    def forward(self, input):
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _Conv3dScript:
    __constants__ = _CONV_CONSTANTS

    def forward(self, input):
        return F.conv3d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class _Conv1dPaddedScript:
    __constants__ = _CONV_CONSTANTS + ["_reversed_padding_repeated_twice"]

    def forward(self, input):
        return F.conv1d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                        self.weight, self.bias, self.stride, [0], self.dilation, self.groups)


class _Conv2dPaddedScript:
    __constants__ = _CONV_CONSTANTS + ["_reversed_padding_repeated_twice"]

    def forward(self, input):
        return F.conv2d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                        self.weight, self.bias, self.stride, [0, 0], self.dilation, self.groups)


class _Conv3dPaddedScript:
    __constants__ = _CONV_CONSTANTS + ["_reversed_padding_repeated_twice"]

    def forward(self, input):
        return F.conv3d(F.pad(input, self._reversed_padding_repeated_twice, mode=self.padding_mode),
                        self.weight, self.bias, self.stride, [0, 0, 0], self.dilation, self.groups)


class _ConvTranspose1dScript:
    __constants__ = _CONV_CONSTANTS

    def forward(self, input):
        return F.conv_transpose1d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class _ConvTranspose2dScript:
    __constants__ = _CONV_CONSTANTS

    def forward(self, input):
        return F.conv_transpose2d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class _ConvTranspose3dScript:
    __constants__ = _CONV_CONSTANTS

    def forward(self, input):
        return F.conv_transpose3d(input, self.weight, self.bias, self.stride, self.padding, self.output_padding,
                                  self.groups, self.dilation)


class _ReLUScript:
    __constants__ = ["inplace"]

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)


class _ReLU6Script:
    __constants__ = ["inplace"]

    def forward(self, input):
        return F.relu6(input, inplace=self.inplace)


class _SiLUScript:
    __constants__ = ["inplace"]

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)


class _MishScript:
    __constants__ = ["inplace"]

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)


class _HardsigmoidScript:
    __constants__ = ["inplace"]

    def forward(self, input):
        return F.hardsigmoid(input, inplace=self.inplace)


class _HardswishScript:
    __constants__ = ["inplace"]

    def forward(self, input):
        return F.hardswish(input, inplace=self.inplace)


class _LeakyReLUScript:
    __constants__ = ["inplace", "negative_slope"]

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)


class _ELUScript:
    __constants__ = ["alpha", "inplace"]

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)


class _GELUScript:
    __constants__ = ["approximate"]

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)


class _SigmoidScript:
    def forward(self, input):
        return torch.sigmoid(input)


class _TanhScript:
    def forward(self, input):
        return torch.tanh(input)


class _SoftplusScript:
    __constants__ = ["beta", "threshold"]

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)


class _SoftmaxScript:
    __constants__ = ["dim"]

    def forward(self, input):
        return F.softmax(input, self.dim)


class _SoftminScript:
    __constants__ = ["dim"]

    def forward(self, input):
        return F.softmin(input, self.dim)


class _LogSoftmaxScript:
    __constants__ = ["dim"]

    def forward(self, input):
        return F.log_softmax(input, self.dim)


class _LayerNormScript:
    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)


class _GroupNormScript:
    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)


class _BatchNormScript:
    __constants__ = ["track_running_stats", "momentum", "eps", "num_features", "affine"]

    def forward(self, input):
        self._check_input_dim(input)
        if self.momentum is None:
            exponential_average_factor = 0.0
        else:
            exponential_average_factor = self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
                if self.momentum is None:
                    exponential_average_factor = 1.0 / float(self.num_batches_tracked)
                else:
                    exponential_average_factor = self.momentum
        if self.training:
            bn_training = True
        else:
            bn_training = (self.running_mean is None) and (self.running_var is None)
        return F.batch_norm(input, self.running_mean if not self.training or self.track_running_stats else None,
                            self.running_var if not self.training or self.track_running_stats else None,
                            self.weight, self.bias, bn_training, exponential_average_factor, self.eps)


class _BatchNorm1dScript(_BatchNormScript):
    def _check_input_dim(self, input):
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError("expected 2D or 3D input")


class _BatchNorm2dScript(_BatchNormScript):
    def _check_input_dim(self, input):
        if input.dim() != 4:
            raise ValueError("expected 4D input")


class _BatchNorm3dScript(_BatchNormScript):
    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError("expected 5D input")


class _DropoutScript:
    __constants__ = ["p", "inplace"]

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)


class _EmbeddingScript:
    __constants__ = ["num_embeddings", "embedding_dim", "padding_idx", "max_norm", "norm_type", "scale_grad_by_freq",
                     "sparse"]

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)


_POOL_CONSTANTS = ["kernel_size", "stride", "padding", "dilation", "return_indices", "ceil_mode"]


class _MaxPool1dScript:
    __constants__ = _POOL_CONSTANTS

    def forward(self, input):
        return F.max_pool1d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _MaxPool2dScript:
    __constants__ = _POOL_CONSTANTS

    def forward(self, input):
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)


class _AvgPool1dScript:
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad"]

    def forward(self, input):
        return F.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)


class _AvgPool2dScript:
    __constants__ = ["kernel_size", "stride", "padding", "ceil_mode", "count_include_pad", "divisor_override"]

    def forward(self, input):
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)


class _AdaptiveAvgPool1dScript:
    __constants__ = ["output_size"]

    def forward(self, input):
        return F.adaptive_avg_pool1d(input, self.output_size)


class _AdaptiveAvgPool2dScript:
    __constants__ = ["output_size"]

    def forward(self, input):
        return F.adaptive_avg_pool2d(input, self.output_size)


class _FlattenScript:
    __constants__ = ["start_dim", "end_dim"]

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)


class _SequentialScript:
    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class _ModuleListScript:
    pass


class _L1LossScript:
    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class _MSELossScript:
    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class _SmoothL1LossScript:
    __constants__ = ["reduction", "beta"]

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class _BCELossScript:
    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight, reduction=self.reduction)


class _BCEWithLogitsLossScript:
    __constants__ = ["reduction"]

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight, pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class _NLLLossScript:
    __constants__ = ["ignore_index", "reduction"]

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class _CrossEntropyLossScript:
    __constants__ = ["ignore_index", "reduction", "label_smoothing"]

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)


_overrides = None       # ampjit layer class -> (lambda module: script class)
_override_globals = None


def _layer_overrides():
    global _overrides, _override_globals
    if _overrides is None:
        import ampjit
        from .. import nn
        _override_globals = {"F": nn.functional, "torch": ampjit, "Tensor": ampjit.Tensor,
                             "Optional": typing.Optional, "List": typing.List, "Tuple": typing.Tuple}

        def conv(plain, padded):
            return lambda m: plain if m.padding_mode == "zeros" else padded

        simple = {
            nn.Identity: _IdentityScript, nn.Linear: _LinearScript,
            nn.ConvTranspose1d: _ConvTranspose1dScript, nn.ConvTranspose2d: _ConvTranspose2dScript,
            nn.ConvTranspose3d: _ConvTranspose3dScript,
            nn.ReLU: _ReLUScript, nn.ReLU6: _ReLU6Script, nn.SiLU: _SiLUScript, nn.Mish: _MishScript,
            nn.Hardsigmoid: _HardsigmoidScript, nn.Hardswish: _HardswishScript, nn.LeakyReLU: _LeakyReLUScript,
            nn.ELU: _ELUScript, nn.GELU: _GELUScript, nn.Sigmoid: _SigmoidScript, nn.Tanh: _TanhScript,
            nn.Softplus: _SoftplusScript, nn.Softmax: _SoftmaxScript, nn.Softmin: _SoftminScript,
            nn.LogSoftmax: _LogSoftmaxScript, nn.LayerNorm: _LayerNormScript, nn.GroupNorm: _GroupNormScript,
            nn.BatchNorm1d: _BatchNorm1dScript, nn.BatchNorm2d: _BatchNorm2dScript,
            nn.BatchNorm3d: _BatchNorm3dScript, nn.Dropout: _DropoutScript, nn.Embedding: _EmbeddingScript,
            nn.MaxPool1d: _MaxPool1dScript, nn.MaxPool2d: _MaxPool2dScript, nn.AvgPool1d: _AvgPool1dScript,
            nn.AvgPool2d: _AvgPool2dScript, nn.AdaptiveAvgPool1d: _AdaptiveAvgPool1dScript,
            nn.AdaptiveAvgPool2d: _AdaptiveAvgPool2dScript, nn.Flatten: _FlattenScript,
            nn.Sequential: _SequentialScript, nn.ModuleList: _ModuleListScript,
            nn.L1Loss: _L1LossScript, nn.MSELoss: _MSELossScript, nn.SmoothL1Loss: _SmoothL1LossScript,
            nn.BCELoss: _BCELossScript, nn.BCEWithLogitsLoss: _BCEWithLogitsLossScript, nn.NLLLoss: _NLLLossScript,
            nn.CrossEntropyLoss: _CrossEntropyLossScript,
        }
        _overrides = {k: (lambda m, v=v: v) for k, v in simple.items()}
        _overrides[nn.Conv1d] = conv(_Conv1dScript, _Conv1dPaddedScript)
        _overrides[nn.Conv2d] = conv(_Conv2dScript, _Conv2dPaddedScript)
        _overrides[nn.Conv3d] = conv(_Conv3dScript, _Conv3dPaddedScript)
    return _overrides
