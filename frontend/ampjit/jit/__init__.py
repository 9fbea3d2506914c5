"""ampjit.jit: tracing and scripting (the graph IR, tracer and script compiler are being built)."""


def trace(*args, **kwargs):
    raise NotImplementedError("ampjit.jit.trace is not implemented yet (the tracer is in progress)")


def script(*args, **kwargs):
    raise NotImplementedError("ampjit.jit.script is not implemented yet (the script compiler is in progress)")


def is_scripting():
    return False


def is_tracing():
    return False

