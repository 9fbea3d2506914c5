"""torch.get_num_threads / torch.set_num_threads: the number of threads ampjit's CPU kernels use.

ampjit's CPU kernels split their work over at most max_threads() OpenMP threads (runtime/tensor.cpp):
OMP_NUM_THREADS (else the CPUs) at first use, and what set_num_threads sets after; set_num_threads
also sets the OpenMP count of the calling thread, which oneDNN's GEMMs and convolutions read, as
torch's does.
"""
from . import _C


def get_num_threads():
    """torch.get_num_threads(): the number of threads ampjit's CPU kernels use."""
    return _C._get_num_threads()


def set_num_threads(n):
    """torch.set_num_threads(n): the kernels use n threads from now on (n checked as torch does)."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError("set_num_threads expects an int, but got {}".format(type(n).__name__))
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _C._set_num_threads(n)
