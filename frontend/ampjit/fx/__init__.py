"""ampjit.fx: torch.fx's `wrap` only, which model files call at import time to mark a function as a
leaf for symbolic tracing. ampjit has no symbolic tracer: `wrap` returns its argument unchanged."""


def wrap(fn_or_name):
    """torch.fx.wrap: a marker for torch.fx's symbolic tracing; a no-op here."""
    return fn_or_name
