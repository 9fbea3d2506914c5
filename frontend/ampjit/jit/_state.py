"""torch.jit._state: the process-wide state of the script compiler."""
from .. import _C


def _clear_class_state():
    """Forgets what the compiler keeps across programs: the compiled defs of torch.nn.functional
    (Note [Function caches] in script/compiler.h). Compiled functions and modules keep what they
    use; later programs compile the library again."""
    _C._empty_caches("library functions")
