"""PyTorch 1.13's operator database, differentially (Note [The operator database harness] in
opdb.py): every OpInfo, every CPU dtype it declares, every variant; the passing cells must be
exactly tests/opdb/expected.txt, so a regression fails and so does a new pass not yet recorded."""
import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import opdb  # noqa: E402


@pytest.fixture(scope="module")
def results():
    return opdb.run(opdb.select_ops(), set(opdb.DTYPES), errors=True)


def test_the_passing_cells_are_the_expected_ones(results):
    opdb.print_summary(results)
    got = set(opdb.passing_cells(results))
    want = set(opdb.read_expected())
    lost = sorted(want - got)
    new = sorted(got - want)
    detail = []
    for line in lost[:40]:
        op, dtype = line.rsplit(" ", 1)
        entry = results.get(op, {})
        cell = entry.get("cells", {}).get(dtype) or entry.get("checks", {}).get(dtype)
        detail.append("  {}: {}".format(line, cell and (cell["status"] + " " + cell["detail"])))
    assert not lost, "cells that passed no longer do:\n" + "\n".join(detail)
    assert not new, ("cells pass that tests/opdb/expected.txt does not list (run tests/opdb/opdb.py "
                     "--update-expected):\n  " + "\n  ".join(new[:40]))


def test_the_harness_fails_a_wrong_result():
    """The comparison can fail: an op whose ampjit variant is replaced by another op's."""
    import ampjit
    op = next(o for o in opdb.op_db if o.name == "sin")
    real = ampjit.sin
    try:
        ampjit.sin = ampjit.cos
        cell = opdb.run_cell(op, "float32")
    finally:
        ampjit.sin = real
    assert cell["status"] == "wrong", cell
    assert opdb.run_cell(op, "float32")["status"] == "pass"


def test_the_grad_check_fails_a_wrong_gradient():
    """A gradient that is not torch's fails the grad check: sin whose gradient is lost (its input
    detached, plus a zero term that keeps the output differentiable)."""
    import ampjit
    op = next(o for o in opdb.op_db if o.name == "sin")
    real = ampjit.sin
    try:
        ampjit.sin = lambda x, *a, **k: real(x.detach(), *a, **k) + x * 0
        check = opdb.run_grad(op)
    finally:
        ampjit.sin = real
    assert check["status"] == "wrong", check
    assert opdb.run_grad(op)["status"] == "pass"


def test_the_autocast_check_fails_a_wrong_policy():
    """mm without its lower-precision policy gives float32 under CPU autocast, where torch gives
    bfloat16: the autocast check fails."""
    import ampjit
    op = next(o for o in opdb.op_db if o.name == "mm")
    try:
        ampjit.amp.set_op_policy("cpu", "aten::mm", "none")
        check = opdb.run_autocast(op)
    finally:
        ampjit.amp.reset_op_policy("cpu", "aten::mm")
    assert check["status"] == "wrong", check
    assert opdb.run_autocast(op)["status"] == "pass"


def test_the_script_check_calls_the_op_by_its_public_name():
    """The script check's source for a sample: tensors as parameters, the rest as literals."""
    op = next(o for o in opdb.op_db if o.name == "sum")
    from torch.testing._internal.opinfo.core import SampleInput
    s = SampleInput(opdb.torch.ones(2, 3), args=(1,), kwargs={"keepdim": True})
    text, tensors = opdb._script_source(op, s, opdb._jit_variant(op))
    assert text == "def the_fn(i0: Tensor):\n    return torch.sum(i0, 1, keepdim=True)\n"
    assert len(tensors) == 1
    assert opdb.run_jit(op) == ({"status": "pass", "detail": ""},) * 2
