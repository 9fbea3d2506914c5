"""ampjit: a small, exact JIT for mixed-precision tensor programs, shaped like torch.

``import ampjit as torch`` runs programs written against the subset of the torch API that ampjit
implements. Every function here comes from ampjit's op table (one declaration per op, in C++);
where ampjit lacks a torch feature it raises NotImplementedError naming it.
"""
from . import _C
from ._C import Tensor, dtype, device, tensor, from_numpy, manual_seed, initial_seed, get_rng_state, set_rng_state

# dtypes, with torch's names and aliases (ampjit.half is ampjit.float16).
_by_name = {repr(d)[len("torch."):]: d for d in _C._dtypes}
uint8 = _by_name["uint8"]
int8 = _by_name["int8"]
int16 = short = _by_name["int16"]
int32 = int = _by_name["int32"]
int64 = long = _by_name["int64"]
float16 = half = _by_name["float16"]
float32 = float = _by_name["float32"]
float64 = double = _by_name["float64"]
bfloat16 = _by_name["bfloat16"]
bool = _by_name["bool"]
del _by_name

from ._tensor import Size, _install_tensor_methods  # noqa: E402
from ._ops import _install_functions  # noqa: E402
from . import _ops  # noqa: E402

_install_functions(globals())
_install_tensor_methods()
_ops._install_python_methods(Tensor)

from . import jit  # noqa: E402
from . import amp, cpu, cuda  # noqa: E402
from .amp.autocast_mode import autocast  # noqa: E402
from ._autocast_state import (  # noqa: E402
    is_autocast_enabled, set_autocast_enabled, is_autocast_cpu_enabled, set_autocast_cpu_enabled,
    get_autocast_cpu_dtype, set_autocast_cpu_dtype, get_autocast_gpu_dtype, set_autocast_gpu_dtype,
    autocast_increment_nesting, autocast_decrement_nesting, clear_autocast_cache,
    is_autocast_cache_enabled, set_autocast_cache_enabled)
from . import nn  # noqa: E402
from . import fx, utils  # noqa: E402,F401
from ._grad_mode import (  # noqa: E402
    no_grad, enable_grad, is_grad_enabled, set_grad_enabled, inference_mode, is_inference_mode_enabled)
from . import autograd, optim  # noqa: E402
from ._memory_format import (  # noqa: E402
    memory_format, contiguous_format, preserve_format, channels_last, channels_last_3d)
from ._default_dtype import get_default_dtype, set_default_dtype  # noqa: E402
from ._threads import get_num_threads, set_num_threads  # noqa: E402
from . import testing  # noqa: E402
from . import special  # noqa: E402,F401
from . import masked  # noqa: E402,F401
from . import fft  # noqa: E402,F401
from . import linalg  # noqa: E402
# torch's linear-algebra functions that are Python in torch (torch/functional.py, torch/_lowrank.py)
lu = linalg._lu
norm = linalg._norm
svd_lowrank = linalg._svd_lowrank
pca_lowrank = linalg._pca_lowrank
Tensor.norm = linalg._norm_method
Tensor.lu = linalg._lu_method
# torch._C._DisableFuncTorch: functorch's off switch (torch's test helpers enter it around the RNG
# state); ampjit has no functorch, so it does nothing.
import contextlib as _contextlib  # noqa: E402
_C._DisableFuncTorch = _contextlib.nullcontext
from ._torch_ops import ops  # noqa: E402
from .serialization import save, load  # noqa: E402

__version__ = "0.1.0"


class _DisableFuncTorch:
    """torch._C._DisableFuncTorch: a context that turns functorch's transforms off; ampjit has none
    to turn off, so it does nothing (torch's test helpers enter it around RNG state changes)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_C._DisableFuncTorch = _DisableFuncTorch


def _assert(condition, message):
    """torch._assert: `assert condition, message` (a bool tensor counts by its value); script
    compiles it to the same check."""
    assert condition, message
