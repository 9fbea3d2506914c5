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
        cell = results.get(op, {}).get("cells", {}).get(dtype)
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
