"""test/test_jit.py's JitTestCase, which test_jit_autocast.py imports from there (`test_jit`)."""
from .jit_utils import JitTestCase  # noqa: F401
