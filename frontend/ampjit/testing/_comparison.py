"""torch.testing.assert_close: compares tensors, numbers and (nested) sequences and mappings of
them with torch 1.13's default tolerances and writes torch's mismatch messages
(torch/testing/_comparison.py). torch.jit.trace's output check uses it too (jit/_trace.py).
"""
import cmath
import collections.abc
import sys

from .. import _C
from .._C import Tensor

# torch's _DTYPE_PRECISIONS, by dtype name: (rtol, atol). Other dtypes compare exactly.
_DTYPE_PRECISIONS = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex128": (1e-7, 1e-7),  # Python complex numbers
}

# The dtype a Python number compares as (NumberPair._TYPE_TO_DTYPE).
_NUMBER_DTYPE = {bool: "int64", int: "int64", float: "float64", complex: "complex128"}


def _dtype_name(dtype):
    return dtype if isinstance(dtype, str) else repr(dtype)[len("torch."):]


def default_tolerances(*inputs):
    """The loosest (rtol, atol) of the inputs' dtypes (tensors or dtypes), as torch's
    torch.testing._comparison.default_tolerances."""
    names = []
    for i in inputs:
        if isinstance(i, Tensor):
            names.append(_dtype_name(i.dtype))
        elif isinstance(i, (_C.dtype, str)):
            names.append(_dtype_name(i))
        else:
            raise TypeError("Expected a torch.Tensor or a torch.dtype, but got {} instead.".format(type(i)))
    rtols, atols = zip(*[_DTYPE_PRECISIONS.get(n, (0.0, 0.0)) for n in names])
    return max(rtols), max(atols)


class _Mismatch(Exception):
    """A failed comparison: the exception type to raise, torch's message, and the path of the item
    inside the compared containers."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.type(msg)
        generated = self.msg
        if self.id:
            generated += "\n\nThe failure occurred for item {}".format("".join(str([i]) for i in self.id))
        return self.type(msg(generated) if callable(msg) else generated)


class _Unsupported(Exception):
    """The inputs are not of the kind a comparison handles; the next kind is tried."""


def _tolerances(dtypes, rtol, atol, id):
    if (rtol is None) ^ (atol is None):
        raise _Mismatch(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, but got no {}."
                        .format("rtol" if rtol is None else "atol"), id)
    if rtol is not None:
        return rtol, atol
    return default_tolerances(*dtypes)


def _mismatch_msg(default_identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def diff_msg(kind, diff, idx, tol):
        if idx is None:
            msg = "{} difference: {}".format(kind.title(), diff)
        else:
            msg = "Greatest {} difference: {} at index {}".format(kind, diff, idx)
        if not equality:
            msg += " (up to {} allowed)".format(tol)
        return msg + "\n"

    msg = "{} are not {}!\n\n".format(default_identifier, "equal" if equality else "close")
    if extra:
        msg += extra.strip() + "\n"
    msg += diff_msg("absolute", abs_diff, abs_idx, atol)
    msg += diff_msg("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_mismatch_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_msg("Scalars", None, abs_diff, None, atol, rel_diff, None, rtol)


def _first_max(values):
    """(index, value) of torch.max over a flat list: the first NaN, else the first greatest."""
    best_i, best = 0, values[0]
    for i, v in enumerate(values):
        if v != v:
            return i, v
        if v > best:
            best_i, best = i, v
    return best_i, best


def _unravel(flat_index, shape):
    index = []
    for size in reversed(shape):
        flat_index, mod = divmod(flat_index, size)
        index.append(mod)
    return tuple(reversed(index))


def _values_mismatch(actual, expected, rtol, atol, equal_nan):
    """torch's _compare_regular_values_close for two tensors of one shape, dtype and device: None
    when every element is close (torch.isclose), else torch's message. Floating values compare
    as float64, the others (bool included) as int64."""
    from .. import float64, int64
    floating = actual.dtype.is_floating_point
    a = actual.to(float64 if floating else int64)
    b = expected.to(float64 if floating else int64)
    close = a == b
    if equal_nan and floating:
        close = close | ((a != a) & (b != b))
    if rtol != 0 or atol != 0:
        err = (a.to(float64) - b.to(float64)).abs()
        close = close | ((err <= atol + rtol * b.to(float64).abs()) & (err < float("inf")))
    mismatches = int((~close).sum())
    if mismatches == 0:
        return None
    if a.dim() == 0:
        return _scalar_mismatch_msg(a.item(), b.item(), rtol, atol)
    total = a.numel()
    extra = "Mismatched elements: {} / {} ({:.1%})".format(mismatches, total, mismatches / total)
    abs_diff = _C._call("aten::where", (close, 0, (a - b).abs()), {})
    rel_diff = _C._call("aten::where", (close, 0.0, abs_diff / b.abs()), {})
    abs_i, abs_max = _first_max(abs_diff.reshape(-1).tolist())
    rel_i, rel_max = _first_max(rel_diff.reshape(-1).tolist())
    shape = tuple(a.shape)
    return _mismatch_msg("Tensor-likes", extra, abs_max, _unravel(abs_i, shape), atol,
                         rel_max, _unravel(rel_i, shape), rtol)


def _promote_types(a, b):
    """torch.promote_types(a, b), read off the op table's own promotion (the dtype of a sum)."""
    if a == b:
        return a
    empty = _C._call("aten::empty", ([0],), {"dtype": a}) + _C._call("aten::empty", ([0],), {"dtype": b})
    return empty.dtype


def _numpy_types(*names):
    np = sys.modules.get("numpy")  # inputs can only be NumPy objects if NumPy is imported
    return tuple(getattr(np, n) for n in names) if np is not None else ()


def _as_bool(b):
    return b if isinstance(b, bool) else b.item()


def _as_tensor(x):
    if isinstance(x, Tensor):
        return x
    if hasattr(x, "__array_interface__"):
        return _C.tensor(x)
    raise _Unsupported()


def _compare_pair(actual, expected, id, opts):
    """Compares two leaves as the first of torch's NonePair, BooleanPair, NumberPair and
    TensorLikePair that takes them; raises _Unsupported if none does, else _Mismatch on failure.
    Returns a function that does the comparison (torch first makes every pair, then compares)."""
    if actual is None or expected is None:
        def compare():
            if not (actual is None and expected is None):
                raise _Mismatch(AssertionError, "None mismatch: {} is not {}".format(actual, expected), id)
        return compare

    bools = (bool,) + _numpy_types("bool_")
    if isinstance(actual, bools) and isinstance(expected, bools):
        a, e = _as_bool(actual), _as_bool(expected)

        def compare():
            if a is not e:
                raise _Mismatch(AssertionError, "Booleans mismatch: {} is not {}".format(a, e), id)
        return compare

    numbers = (int, float, complex) + _numpy_types("number")
    if isinstance(actual, numbers) and isinstance(expected, numbers):
        a = actual.item() if not isinstance(actual, (int, float, complex)) else actual
        e = expected.item() if not isinstance(expected, (int, float, complex)) else expected
        rtol, atol = _tolerances([_NUMBER_DTYPE[type(a)], _NUMBER_DTYPE[type(e)]], opts["rtol"], opts["atol"], id)

        def compare():
            if opts["check_dtype"] and type(a) is not type(e):
                raise _Mismatch(AssertionError, "The (d)types do not match: {} != {}.".format(type(a), type(e)), id)
            if a == e or (opts["equal_nan"] and cmath.isnan(a) and cmath.isnan(e)):
                return
            diff = abs(a - e)
            if cmath.isfinite(diff) and diff <= atol + rtol * abs(e):
                return
            raise _Mismatch(AssertionError, _scalar_mismatch_msg(a, e, rtol, atol), id)
        return compare

    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported()
    if not opts["allow_subclasses"] and type(actual) is not type(expected):
        raise _Unsupported()
    a, e = _as_tensor(actual), _as_tensor(expected)
    rtol, atol = _tolerances([a.dtype, e.dtype], opts["rtol"], opts["atol"], id)

    def compare():
        msg = _tensors_mismatch(a, e, rtol, atol, opts)
        if msg is not None:
            raise _Mismatch(AssertionError, msg, id)
    return compare


def _tensors_mismatch(actual, expected, rtol, atol, opts):
    """torch's TensorLikePair.compare: the attribute checks, then the values; None if they agree."""
    def attribute(name, a, e):
        return "The values for attribute '{}' do not match: {} != {}.".format(name, a, e)
    if actual.shape != expected.shape:
        return attribute("shape", actual.shape, expected.shape)
    if opts["check_stride"] and actual.stride() != expected.stride():
        return attribute("stride()", actual.stride(), expected.stride())
    if opts["check_device"] and actual.device != expected.device:
        return attribute("device", actual.device, expected.device)
    if opts["check_dtype"] and actual.dtype != expected.dtype:
        return attribute("dtype", actual.dtype, expected.dtype)
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype != expected.dtype:
        dtype = _promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(dtype), expected.to(dtype)
    return _values_mismatch(actual, expected, rtol, atol, opts["equal_nan"])


def _originate(actual, expected, id, opts, out):
    """Appends the comparisons of the leaves of `actual` and `expected`, walked together."""
    if (isinstance(actual, collections.abc.Sequence) and not isinstance(actual, str)
            and isinstance(expected, collections.abc.Sequence) and not isinstance(expected, str)):
        if len(actual) != len(expected):
            raise _Mismatch(AssertionError, "The length of the sequences mismatch: {} != {}".format(
                len(actual), len(expected)), id)
        for i in range(len(actual)):
            _originate(actual[i], expected[i], id + (i,), opts, out)
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Mismatch(AssertionError, (
                "The keys of the mappings do not match:\nMissing keys in the actual mapping: {}\n"
                "Additional keys in the actual mapping: {}").format(
                    sorted(expected_keys - actual_keys), sorted(actual_keys - expected_keys)), id)
        try:
            keys = sorted(actual_keys)
        except TypeError:
            keys = actual_keys
        for k in keys:
            _originate(actual[k], expected[k], id + (k,), opts, out)
        return
    try:
        out.append(_compare_pair(actual, expected, id, opts))
    except _Unsupported:
        raise _Mismatch(TypeError, "No comparison pair was able to handle inputs of type {} and {}.".format(
            type(actual), type(expected)), id) from None


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """torch.testing.assert_close: asserts that `actual` and `expected` are close, elementwise
    through nested sequences and mappings. Tensors must agree in shape, device and dtype (unless
    check_device / check_dtype is False) and in value: ``|actual - expected| <= atol + rtol *
    |expected|``, NaNs equal only with equal_nan. Without rtol and atol, the defaults are by dtype
    (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7, others
    exact), the loosest of the two inputs'. Raises AssertionError with torch's message ("Tensor-likes
    are not close!", the mismatched elements, the greatest absolute and relative differences), or
    `msg` instead (a string, or a function of torch's message). ampjit tensors are all strided, so
    check_layout has nothing to check."""
    __tracebackhide__ = True
    opts = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol, "equal_nan": equal_nan,
            "check_device": check_device, "check_dtype": check_dtype, "check_stride": check_stride}
    comparisons = []
    try:
        _originate(actual, expected, (), opts, comparisons)
    except _Mismatch as m:
        raise m.to_error() from None
    for compare in comparisons:
        try:
            compare()
        except _Mismatch as m:
            raise m.to_error(msg) from None
