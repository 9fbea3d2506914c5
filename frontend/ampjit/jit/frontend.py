"""torch.jit.frontend's error classes. As in torch, Python that script does not support raises
NotSupportedError, and UnsupportedNodeError for a whole kind of syntax (``try``, ``lambda``,
``yield``, generator expressions); neither is a RuntimeError. Other compile errors (names, types,
arguments) are ``ampjit.jit.CompileError``, a RuntimeError as torch's are. Every message is
``file:line:col: what`` with the source line and a caret."""


class FrontendError(Exception):
    """The base of the frontend's errors (torch.jit.frontend.FrontendError)."""


class NotSupportedError(FrontendError):
    """Python that script does not support."""


class UnsupportedNodeError(NotSupportedError):
    """A kind of Python syntax that script does not support at all."""
