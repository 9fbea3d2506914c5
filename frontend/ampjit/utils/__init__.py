"""ampjit.utils: torch.utils' modules that model code imports (checkpoint)."""
from . import checkpoint  # noqa: F401
