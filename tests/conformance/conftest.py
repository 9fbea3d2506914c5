"""Fixtures of the conformance suite (see matrix.py for the `row` registry).

``semantics`` runs a test once per JIT autocast semantics, with the process-wide setting set for
the test and restored after it; a row test asserts that semantics' column. Set
AMPJIT_MATRIX_OUT=<file> to write the collected rows as JSON (for docs/limitations.md).
"""
import json
import os

import pytest

import ampjit as torch
import matrix


def pytest_configure(config):
    config.addinivalue_line("markers", "matrix_row(section, pytorch, torchscript, eager, test): the "
                                       "limitation-matrix row (docs/limitations.md) a conformance test shows")


@pytest.fixture(params=["torchscript", "eager"])
def semantics(request):
    prev = torch.jit.set_autocast_semantics(request.param)
    try:
        yield request.param
    finally:
        torch.jit.set_autocast_semantics(prev)
        # A conformance test never leaks autocast state into the next one.
        assert not torch.is_autocast_cpu_enabled(), "autocast left enabled by the test"


@pytest.fixture(scope="session")
def torch_ref():
    """The real torch (PyTorch 1.13) for the PyTorch column; skipped where it is not installed."""
    return pytest.importorskip("torch", reason="the PyTorch column needs the real PyTorch installed")


def pytest_sessionfinish(session, exitstatus):
    out = os.environ.get("AMPJIT_MATRIX_OUT")
    if out:
        with open(out, "w") as f:
            json.dump(matrix.rows(), f, indent=2)
