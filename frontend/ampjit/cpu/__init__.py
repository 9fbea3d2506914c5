"""ampjit.cpu"""
from .. import _C
from . import amp  # noqa: F401


def empty_cache():
    """Returns the CPU caches' idle memory to the system: the large-buffer cache and oneDNN's
    primitives (Note [Long-lived caches] in runtime/caches.h). The CPU counterpart of
    torch.cuda.empty_cache; tensors in use keep their memory."""
    for name in ("cpu large buffers", "onednn matmul", "onednn conv", "onednn conv backward"):
        if any(c[0] == name for c in _C._caches()):
            _C._empty_caches(name)
