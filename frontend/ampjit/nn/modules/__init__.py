"""The layers of ampjit.nn, one file per family as in torch/nn/modules."""
from .module import Module
from .container import Sequential, ModuleList, ModuleDict
from .linear import Identity, Linear
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .activation import (ReLU, ReLU6, SiLU, Mish, Hardsigmoid, Hardswish, LeakyReLU, ELU, GELU, Sigmoid, Tanh,
                         Softplus, Softmax, Softmin, LogSoftmax)
from .normalization import LayerNorm, GroupNorm
from .batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from .dropout import Dropout, Dropout1d, Dropout2d, Dropout3d
from .transformer import MultiheadAttention, TransformerEncoderLayer, TransformerEncoder
from .rnn import RNNBase, LSTM, GRU
from .sparse import Embedding
from .pooling import (MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d, AvgPool1d, AvgPool2d,
                      AvgPool3d, LPPool1d, LPPool2d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
                      AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d)
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad2d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d)
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .channelshuffle import ChannelShuffle
from .upsampling import Upsample, UpsamplingNearest2d, UpsamplingBilinear2d
from .fold import Fold, Unfold
from .flatten import Flatten
from .loss import L1Loss, MSELoss, SmoothL1Loss, BCELoss, BCEWithLogitsLoss, NLLLoss, CrossEntropyLoss
# nn more
from .activation import (Hardtanh, Threshold, RReLU, SELU, CELU, GLU, Softshrink, Hardshrink, PReLU, Softmax2d,
                         LogSigmoid, Softsign, Tanhshrink)
from .loss import (PoissonNLLLoss, GaussianNLLLoss, KLDivLoss, HuberLoss, SoftMarginLoss, MultiLabelMarginLoss,
                   MultiLabelSoftMarginLoss, CosineEmbeddingLoss, MarginRankingLoss, HingeEmbeddingLoss,
                   MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss)
from .distance import PairwiseDistance, CosineSimilarity
from .instancenorm import InstanceNorm1d, InstanceNorm2d, InstanceNorm3d
from .normalization import LocalResponseNorm
from .linear import Bilinear
from .sparse import EmbeddingBag
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d
from .dropout import AlphaDropout, FeatureAlphaDropout

__all__ = [
    "Module", "Sequential", "ModuleList", "ModuleDict", "Identity", "Linear",
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "ReLU", "ReLU6", "SiLU", "Mish", "Hardsigmoid", "Hardswish", "LeakyReLU", "ELU", "GELU", "Sigmoid", "Tanh",
    "Softplus", "Softmax", "Softmin", "LogSoftmax", "LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d",
    "BatchNorm3d", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "MultiheadAttention",
    "TransformerEncoderLayer", "TransformerEncoder", "RNNBase", "LSTM", "GRU", "Embedding", "MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d", "AdaptiveAvgPool1d",
    "AdaptiveAvgPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d", "AvgPool3d", "LPPool1d",
    "LPPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AdaptiveAvgPool3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad2d", "ReflectionPad1d", "ReflectionPad2d",
    "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
    "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "Fold", "Unfold", "Flatten", "L1Loss", "MSELoss", "SmoothL1Loss", "BCELoss", "BCEWithLogitsLoss", "NLLLoss",
    "CrossEntropyLoss",
    # nn more
    "Hardtanh", "Threshold", "RReLU", "SELU", "CELU", "GLU", "Softshrink", "Hardshrink", "PReLU", "Softmax2d",
    "LogSigmoid", "Softsign", "Tanhshrink", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "HuberLoss",
    "SoftMarginLoss", "MultiLabelMarginLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
    "HingeEmbeddingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss",
    "PairwiseDistance", "CosineSimilarity", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
    "LocalResponseNorm", "Bilinear", "EmbeddingBag", "FractionalMaxPool2d", "FractionalMaxPool3d", "AlphaDropout",
    "FeatureAlphaDropout",
]
