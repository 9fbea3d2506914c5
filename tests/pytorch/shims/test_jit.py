"""test/test_jit.py's JitTestCase, which test_jit_autocast.py imports from there."""
from .jit_utils import JitTestCase  # noqa: F401
