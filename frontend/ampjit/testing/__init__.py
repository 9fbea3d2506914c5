"""torch.testing: assert_close (numeric comparison with torch's tolerances and messages) and
FileCheck (ordered text checks on graphs), as torch 1.13 has them."""
from ._comparison import assert_close
from ._file_check import FileCheck

__all__ = ["assert_close", "assert_allclose", "FileCheck"]


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """torch.testing.assert_allclose (deprecated in torch 1.13, which still ships it): assert_close
    with the dtypes compared after promotion and NaN equal to NaN by default."""
    import warnings
    warnings.warn("torch.testing.assert_allclose() is deprecated since 1.12 and will be removed in 1.14. "
                  "Use torch.testing.assert_close() instead.", FutureWarning)
    from .. import Tensor, tensor
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    return assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_dtype=False,
                        msg=msg or None)
