"""ampjit.cpu.amp: CPU autocast (torch.cpu.amp)."""
from ...amp.autocast_mode import autocast as _autocast


class autocast(_autocast):
    """torch.cpu.amp.autocast(enabled=True, dtype=torch.bfloat16, cache_enabled=True)."""

    def __init__(self, enabled=True, dtype=None, cache_enabled=True):
        from ... import bfloat16
        super().__init__("cpu", enabled=enabled, dtype=bfloat16 if dtype is None else dtype,
                         cache_enabled=cache_enabled)
