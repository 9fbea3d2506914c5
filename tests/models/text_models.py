"""The harness's two sequence models, written against torch's API and loaded twice: with torch 1.13
itself and with ampjit as `torch` (tvload.load_as_ampjit). Token ids in, logits out.

- TransformerText: nn.Embedding, then nn.TransformerEncoder (two nn.TransformerEncoderLayer,
  batch_first, GELU, a padding-free input), mean over the sequence, nn.Linear to the classes.
- LSTMTagger: nn.Embedding, a two-layer bidirectional nn.LSTM (batch_first), nn.Linear per token.
"""
import torch
from torch import Tensor, nn

VOCAB = 500


class TransformerText(nn.Module):
    def __init__(self, d_model: int = 64, nhead: int = 4, layers: int = 2, classes: int = 10):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=128, dropout=0.1,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens: Tensor) -> Tensor:
        x = self.encoder(self.embedding(tokens))
        return self.head(x.mean(dim=1))


class LSTMTagger(nn.Module):
    def __init__(self, dim: int = 32, hidden: int = 48, tags: int = 17):
        super().__init__()
        self.embedding = nn.Embedding(VOCAB, dim)
        self.lstm = nn.LSTM(dim, hidden, num_layers=2, bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, tokens: Tensor) -> Tensor:
        out, _ = self.lstm(self.embedding(tokens))
        return self.head(out)


def transformer_text():
    return TransformerText()


def lstm_tagger():
    return LSTMTagger()
