"""Shared pytest fixtures for ampjit's Python tests.

Differential tests use the real PyTorch (1.13 with Debian's /usr/bin/python3) as the oracle. Only
tests import torch; the ampjit package never does.
"""
import textwrap

import pytest


@pytest.fixture(scope="session")
def torch_ref():
    """The real torch module; the test is skipped, saying why, where PyTorch is not installed."""
    try:
        import torch
    except ImportError:
        pytest.skip("differential test: the real PyTorch is not installed to serve as the oracle")
    return torch


@pytest.fixture(scope="session")
def run_as_torch_program(torch_ref):
    """Runs the source of a program written with ``import ampjit as torch`` twice: as written, and
    with the real torch in its place (every ``ampjit`` in the source becomes ``torch``). Returns the
    two module namespaces (ampjit's, torch's)."""
    def run(source):
        source = textwrap.dedent(source)
        ns_ampjit = {"__name__": "ampjit_program"}
        ns_torch = {"__name__": "torch_program"}
        exec(compile(source, "<ampjit program>", "exec"), ns_ampjit)
        exec(compile(source.replace("ampjit", "torch"), "<torch program>", "exec"), ns_torch)
        return ns_ampjit, ns_torch
    return run
