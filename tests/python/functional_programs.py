"""Programs that call torch.nn.functional, for test_functional_script.py: each runs eager and
scripted, under ampjit and under torch 1.13. The test loads this file once per library, with the two
imports below pointing at that library. ARGS gives each program's inputs from a tensor constructor
T(numpy_array)."""
from typing import List, Tuple

import numpy as np
import torch
import torch.nn.functional as F

_rng = np.random.default_rng(7)


def _randn(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


X2, Y2 = _randn(4, 6), _randn(4, 6)
X4 = _randn(2, 4, 7, 7)
W33, W22 = _randn(3, 4, 3, 3), _randn(3, 4, 2, 2)
PROBS = (1.0 / (1.0 + np.exp(-X2))).astype(np.float32)
LABELS = np.array([0, 5, 2, 3], dtype=np.int64)
EMB, IDX = _randn(6, 3) * 3, np.array([[0, 2], [5, 2]], dtype=np.int64)


def relu_inplace(x):
    y = x.clone()
    F.relu(y, inplace=True)
    return y


def activations(x):
    return F.relu(x), F.silu(x), F.gelu(x, approximate="tanh"), F.sigmoid(x), F.tanh(x)


def softmaxes(x):
    return F.softmax(x, dim=1), F.log_softmax(x, 0), F.softmin(x, dim=-1), F.softmax(x, 1, dtype=torch.float64)


def softmax_implicit_dim(x):
    return F.softmax(x)


def l1_legacy_size_average(x, y):
    return F.l1_loss(x, y, size_average=False)


def mse_legacy_reduce(x, y):
    return F.mse_loss(x, y, reduce=False)


def l1_elementwise_mean(x, y):
    return F.l1_loss(x, y, reduction="elementwise_mean")


def mse_broadcast(x, y):
    return F.mse_loss(x, y[:1])


def classification_losses(x, labels):
    return (F.cross_entropy(x, labels), F.cross_entropy(x, labels, label_smoothing=0.1, reduction="sum"),
            F.nll_loss(F.log_softmax(x, 1), labels, ignore_index=2), F.cross_entropy(x, labels, size_average=False))


def binary_losses(p, t, x):
    return (F.binary_cross_entropy(p, t), F.binary_cross_entropy(p, t, weight=x[0].abs()),
            F.binary_cross_entropy_with_logits(x, t, pos_weight=p[0]))


def pooling(x):
    return (F.max_pool2d(x, 2), F.max_pool2d(x, (3, 2), stride=(2, 1), padding=1, ceil_mode=True),
            F.max_pool2d(x, 3, None, 1, 1, False, False), F.avg_pool2d(x, 3, stride=2, padding=1),
            F.adaptive_avg_pool2d(x, 3), F.adaptive_avg_pool2d(x, [2, 4]))


def convolutions(x, w3, w2):
    return (F.conv2d(x, w3, padding="same"), F.conv2d(x, w2, padding="same"), F.conv2d(x, w3, None, 1, "valid"),
            F.conv2d(x, w2, padding="same", dilation=2), F.conv2d(x, w3, stride=2, padding=1))


def normalization(x):
    rm, rv = torch.zeros([4]), torch.ones([4])
    y = F.batch_norm(x, rm, rv, training=True, momentum=0.3)
    return (y, rm, rv, F.group_norm(x, 2), F.layer_norm(x, [7, 7]), F.normalize(x, dim=1),
            F.dropout(x, 0.3, training=False))


def embedding_max_norm(idx, w):
    w = w.clone()
    y = F.embedding(idx, w, max_norm=1.5)
    return y, w


def embedding_padding(idx, w):
    return F.embedding(idx, w, padding_idx=-1), F.embedding(idx, w, 2)


def padding(x):
    return F.pad(x, [1, 2, 0, 1]), F.pad(x, [1, 1], value=3.0), F.linear(x, x[0, 0])


ARGS = {
    "relu_inplace": lambda T: (T(X2),),
    "activations": lambda T: (T(X2),),
    "softmaxes": lambda T: (T(X2),),
    "softmax_implicit_dim": lambda T: (T(X4[0, 0]),),
    "l1_legacy_size_average": lambda T: (T(X2), T(Y2)),
    "mse_legacy_reduce": lambda T: (T(X2), T(Y2)),
    "l1_elementwise_mean": lambda T: (T(X2), T(Y2)),
    "mse_broadcast": lambda T: (T(X2), T(Y2)),
    "classification_losses": lambda T: (T(X2), T(LABELS)),
    "binary_losses": lambda T: (T(PROBS), T(PROBS[::-1].copy()), T(X2)),
    "pooling": lambda T: (T(X4),),
    "convolutions": lambda T: (T(X4), T(W33), T(W22)),
    "normalization": lambda T: (T(X4),),
    "embedding_max_norm": lambda T: (T(IDX), T(EMB)),
    "embedding_padding": lambda T: (T(IDX), T(EMB)),
    "padding": lambda T: (T(X4),),
}
