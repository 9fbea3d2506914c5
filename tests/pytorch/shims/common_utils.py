"""torch.testing._internal.common_utils, the parts PyTorch 1.13.1's autocast tests use, written on
ampjit's public API: TestCase (unittest's, with torch's assertEqual for tensors), run_tests and the
flags and decorators the files import."""
import contextlib
import functools
import math
import unittest
import warnings

import ampjit as torch

TEST_WITH_ROCM = False
GRAPH_EXECUTOR = None


class ProfilingMode:
    LEGACY = "legacy"
    SIMPLE = "simple"
    PROFILING = "profiling"


@contextlib.contextmanager
def enable_profiling_mode_for_profiling_tests():
    yield


def slowTest(fn):
    return fn


def suppress_warnings(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    return wrapper


class TestCase(unittest.TestCase):
    """unittest.TestCase with torch's assertEqual: tensors must have the same dtype and shape and
    agree within the dtype's default tolerance (torch.testing.assert_close's); sequences compare
    element by element; numbers within a small tolerance."""

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, exact_dtype=True, **kwargs):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not isinstance(x, torch.Tensor):
                x = torch.tensor(x, dtype=y.dtype)
            if not isinstance(y, torch.Tensor):
                y = torch.tensor(y, dtype=x.dtype)
            if exact_dtype:
                self.assertIs(x.dtype, y.dtype, msg)
            torch.testing.assert_close(x, y, rtol=rtol, atol=atol, check_dtype=exact_dtype, msg=msg)
            return
        if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
            self.assertEqual(len(x), len(y), msg)
            for a, b in zip(x, y):
                self.assertEqual(a, b, msg, atol=atol, rtol=rtol, exact_dtype=exact_dtype)
            return
        if isinstance(x, float) and isinstance(y, (int, float)) and not (math.isnan(x) and math.isnan(y)):
            self.assertTrue(math.isclose(x, y, rel_tol=rtol or 1.3e-6, abs_tol=atol or 1e-5), msg or (x, y))
            return
        super().assertEqual(x, y, msg)


def run_tests():
    unittest.main()
