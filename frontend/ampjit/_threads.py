"""torch.get_num_threads / torch.set_num_threads: the number of threads ampjit's CPU kernels use.

Note [The thread count is fixed per process]
ampjit's CPU kernels split their work over OpenMP threads, at most max_threads() at a time
(runtime/tensor.cpp), a count read once from the OpenMP runtime, on the first parallel loop; the C++
extension offers no way to change it. So get_num_threads asks the OpenMP runtime the extension loaded
for that count, and set_num_threads can only check its argument and warn when it asks for another
count: OMP_NUM_THREADS in the environment of the process, before it starts, sets the count. (Setting
os.environ["OMP_NUM_THREADS"] from Python would not help: the runtime read it when it was loaded.)
Changing the count at run time needs a C++ entry that resets max_threads().
"""
import ctypes
import os
import warnings

# Names of the OpenMP runtimes an ampjit build can link (GCC's, LLVM's, Intel's).
_OPENMP_LIBRARIES = ("libgomp.so.1", "libomp.so", "libomp.so.5", "libiomp5.so", "libomp.dylib")
_openmp = None


def _openmp_runtime():
    """The OpenMP runtime already loaded with ampjit's extension (RTLD_NOLOAD: never a second one)."""
    global _openmp
    if _openmp is None:
        for name in _OPENMP_LIBRARIES:
            try:
                _openmp = ctypes.CDLL(name, mode=os.RTLD_NOLOAD)
                break
            except OSError:
                continue
        else:
            raise RuntimeError("get_num_threads: none of the OpenMP runtimes {} is loaded in this process".format(
                ", ".join(_OPENMP_LIBRARIES)))
    return _openmp


def get_num_threads():
    """torch.get_num_threads(): the number of threads ampjit's CPU kernels use, as the OpenMP
    runtime reports it (OMP_NUM_THREADS, else the CPUs this process may run on)."""
    return _openmp_runtime().omp_get_max_threads()


def set_num_threads(n):
    """torch.set_num_threads(n): checks `n` as torch does. ampjit fixes its thread count per process
    (Note [The thread count is fixed per process]): asking for the count in use does nothing, asking
    for another warns that it has no effect and that OMP_NUM_THREADS=n at start-up sets it."""
    if not isinstance(n, int) or isinstance(n, bool):
        raise RuntimeError("set_num_threads expects an int, but got {}".format(type(n).__name__))
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    current = get_num_threads()
    if n != current:
        warnings.warn("set_num_threads({}) has no effect: ampjit's CPU kernels use {} threads for the life of "
                      "the process; start it with OMP_NUM_THREADS={} to use {}".format(n, current, n, n),
                      stacklevel=2)
