"""Inputs a hostile user tries (issue 14): sizes that overflow, conversions that cannot be exact,
device strings out of range. Each gives torch 1.13's error (class and message), never a crash, a
hang or a tensor with no memory behind it; where torch is silently wrong, ampjit raises instead.
"""
import pytest

import ampjit

BIG = 2 ** 62

# (expression over a torch-like module, the exception class, the message) — torch 1.13's own.
SAME_AS_TORCH = [
    ("zeros(2**62)", lambda t: t.zeros(BIG), RuntimeError,
     "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    ("ones(2**62)", lambda t: t.ones(BIG), RuntimeError,
     "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    ("full(2**62)", lambda t: t.full((BIG,), 1.0), RuntimeError,
     "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    ("randn(2**62)", lambda t: t.randn(BIG), RuntimeError,
     "Storage size calculation overflowed with sizes=[4611686018427387904]"),
    ("empty(2**32, 2**32)", lambda t: t.empty(2 ** 32, 2 ** 32), RuntimeError,
     "Storage size calculation overflowed with sizes=[4294967296, 4294967296]"),
    ("empty(3, 2**62)", lambda t: t.empty(3, BIG), RuntimeError,
     "Storage size calculation overflowed with sizes=[3, 4611686018427387904]"),
    ("expand(2**62, 4)", lambda t: t.ones(4).expand(BIG, 4), RuntimeError,
     "numel: integer multiplication overflow"),
    ("negative size", lambda t: t.empty(-1), RuntimeError,
     "Trying to create tensor with negative dimension -1: [-1]"),
    ("narrow past the end", lambda t: t.ones(2).narrow(0, 2 ** 63 - 1, 1), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 9223372036854775807)"),
    ("narrow length", lambda t: t.ones(3).narrow(0, 2, 2), RuntimeError,
     "start (2) + length (2) exceeds dimension size (3)."),
    ("arange overflow", lambda t: t.arange(0, 1e300, 1e-300), RuntimeError, "invalid size, possible overflow?"),
    ("arange int64 range", lambda t: t.arange(-2 ** 63, 2 ** 63 - 1), RuntimeError,
     "invalid size, possible overflow?"),
    ("int(nan)", lambda t: int(t.tensor(float("nan"))), ValueError, "cannot convert float NaN to integer"),
    ("int(inf)", lambda t: int(t.tensor(float("inf"))), OverflowError, "cannot convert float infinity to integer"),
    ("full nan int64", lambda t: t.full((2,), float("nan"), dtype=t.int64), RuntimeError,
     "value cannot be converted to type int64_t without overflow"),
    ("full 1e20 int32", lambda t: t.full((2,), 1e20, dtype=t.int32), RuntimeError,
     "value cannot be converted to type int without overflow"),
    ("fill_ inf int16", lambda t: t.zeros(2, dtype=t.int16).fill_(float("inf")), RuntimeError,
     "value cannot be converted to type int16_t without overflow"),
    ("fill_ 300 uint8", lambda t: t.zeros(2, dtype=t.uint8).fill_(300.0), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    # Past the range by less than one: torch checks the value, not its truncation.
    ("full 127.5 int8", lambda t: t.full((1,), 127.5, dtype=t.int8), RuntimeError,
     "value cannot be converted to type int8_t without overflow"),
    ("full -0.5 uint8", lambda t: t.full((1,), -0.5, dtype=t.uint8), RuntimeError,
     "value cannot be converted to type uint8_t without overflow"),
    ("device index too big", lambda t: t.device("cuda:99999999999"), RuntimeError,
     "Could not parse device index '99999999999' in device string 'cuda:99999999999'"),
    ("device leading zero", lambda t: t.device("cuda:01"), RuntimeError, "Invalid device string: 'cuda:01'"),
]


def outcome(fn, module):
    try:
        fn(module)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return type(e), str(e).splitlines()[0]
    return None, "no error"


@pytest.mark.parametrize("name,fn,cls,message", SAME_AS_TORCH, ids=[c[0] for c in SAME_AS_TORCH])
def test_same_error_as_torch(name, fn, cls, message):
    assert outcome(fn, ampjit) == (cls, message)


@pytest.mark.parametrize("name,fn,cls,message", SAME_AS_TORCH, ids=[c[0] for c in SAME_AS_TORCH])
def test_the_pinned_error_is_torchs(torch_ref, name, fn, cls, message):
    assert outcome(fn, torch_ref) == (cls, message)


def test_where_torch_is_silently_wrong_ampjit_raises():
    # torch 1.13 keeps the index's low byte: cuda:300 is cuda:44.
    with pytest.raises(RuntimeError, match=r"Device index 300 in device string 'cuda:300' is out of range \(at most 127\)"):
        ampjit.device("cuda:300")
    assert str(ampjit.device("cuda:127")) == "cuda:127"
    # torch 1.13 stores 2.0**63 into int64 as the minimum.
    with pytest.raises(RuntimeError, match="value cannot be converted to type int64_t without overflow"):
        ampjit.full((1,), 2.0 ** 63, dtype=ampjit.int64)


def test_huge_eye_and_contiguous_expand_fail_cleanly():
    for fn in (lambda: ampjit.eye(2 ** 63 - 1), lambda: ampjit.eye(2 ** 31),
               lambda: ampjit.ones(4).expand(BIG, 4).contiguous()):
        with pytest.raises(RuntimeError, match="overflow"):
            fn()


def test_in_range_conversions_still_truncate_like_torch():
    assert ampjit.full((2,), 2.9, dtype=ampjit.int32).tolist() == [2, 2]
    assert ampjit.full((1,), -128.0, dtype=ampjit.int8).tolist() == [-128]
    assert ampjit.full((1,), 255.0, dtype=ampjit.uint8).tolist() == [255]
    assert ampjit.full((1,), -2.0 ** 63, dtype=ampjit.int64).tolist() == [-2 ** 63]
    assert ampjit.empty(2 ** 62, 2 ** 62, 0).shape == (2 ** 62, 2 ** 62, 0)  # no element, no overflow
    assert ampjit.full((1,), 1e20, dtype=ampjit.bool).tolist() == [True]
    assert int(ampjit.tensor(3.7)) == 3


def test_a_call_chain_deeper_than_the_limit_is_a_compile_error(tmp_path, monkeypatch):
    # torch raises RecursionError near 2,000 levels; ampjit compiles 200 levels and refuses more,
    # naming the chain, instead of running out of stack.
    src = "def f0(x: int):\n    return x\n" + "".join(
        "def f{}(x: int):\n    return f{}(x) + 1\n".format(i, i - 1) for i in range(1, 2000))
    (tmp_path / "chain_mod.py").write_text(src)
    monkeypatch.syspath_prepend(str(tmp_path))
    import chain_mod
    assert ampjit.jit.script(chain_mod.f150)(1) == 151
    with pytest.raises(RuntimeError, match=r"calls nested too deeply to compile: 'f1799' is the 201th function"):
        ampjit.jit.script(chain_mod.f1999)
