"""ampjit.cuda: device queries. The CUDA backend registers its allocator and kernels when built
and a GPU is present; until then these report that CUDA is not available."""
from .. import _C
from . import amp  # noqa: F401


def is_available():
    return _C._cuda_is_available()


def device_count():
    return 1 if is_available() else 0


def is_bf16_supported():
    return is_available()


def synchronize(device=None):
    if not is_available():
        raise RuntimeError("ampjit.cuda.synchronize(): CUDA is not available")


def manual_seed(seed):
    _C.manual_seed(seed)


def manual_seed_all(seed):
    _C.manual_seed(seed)
