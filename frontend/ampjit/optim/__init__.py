"""ampjit.optim: torch.optim's SGD, Adam and AdamW, with torch 1.13's update rules (its
single-tensor code paths, the ones it runs on the CPU), state and state_dict layout."""
from .optimizer import Optimizer  # noqa: F401
from .sgd import SGD  # noqa: F401
from .adam import Adam, AdamW  # noqa: F401
