"""ampjit.cuda: device queries, synchronization, memory statistics and the device generator, as
torch.cuda has them. The CUDA backend (kernels/cuda) is loaded with ampjit._C when ampjit was
built with it; on a machine without a GPU is_available() is False and allocating a CUDA tensor
raises RuntimeError("CUDA is not available: ...")."""
from .. import _C
from . import amp  # noqa: F401

OutOfMemoryError = _C.OutOfMemoryError


def is_available():
    return _C._cuda_device_count() > 0


def device_count():
    return _C._cuda_device_count()


def is_bf16_supported():
    # Every GPU ampjit builds for (sm_80 and sm_90) has bfloat16 tensor cores.
    return is_available()


def _index(device):
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    from .. import device as _device
    d = device if isinstance(device, _device) else _device(device)
    if d.type != "cuda":
        raise ValueError("Expected a cuda device, but got: {}".format(d))
    return -1 if d.index is None else d.index


def current_device():
    return _C._cuda_current_device()


def set_device(device):
    _C._cuda_set_device(_index(device))


def synchronize(device=None):
    """Waits for all kernels on the device (the current one by default) to finish."""
    _C._cuda_synchronize(_index(device))


def memory_allocated(device=None):
    return _C._cuda_memory_stats(_index(device))["allocated_bytes.all.current"]


def memory_reserved(device=None):
    return _C._cuda_memory_stats(_index(device))["reserved_bytes.all.current"]


def max_memory_allocated(device=None):
    return _C._cuda_memory_stats(_index(device))["allocated_bytes.all.peak"]


def memory_stats(device=None):
    return dict(_C._cuda_memory_stats(_index(device)))


def reset_peak_memory_stats(device=None):
    _C._cuda_reset_peak_memory_stats(_index(device))


def empty_cache():
    """Returns the caching allocator's unused blocks to the driver."""
    _C._cuda_empty_cache()


def manual_seed(seed):
    _C._cuda_manual_seed_all(int(seed))


def manual_seed_all(seed):
    _C._cuda_manual_seed_all(int(seed))
