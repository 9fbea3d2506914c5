"""torch.testing._internal.jit_utils: JitTestCase and RUN_CUDA, on ampjit's public API."""
import ampjit as torch

from .common_utils import TestCase

RUN_CUDA = torch.cuda.is_available()


class JitTestCase(TestCase):
    """The base of torch's JIT tests; the autocast tests use only its assertions."""
