"""The model harness's fast subset in CI (harness.py has the variants and tolerances; the whole
table is docs/models.md). A cell that passes must keep passing; a cell that fails today is listed
with the reason, strictly, so that the day it passes this file says so."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402

# (model, variant or "*") -> a substring of today's failure.
KNOWN_FAILURES = {
}


def _expected_failure(model, variant):
    return KNOWN_FAILURES.get((model, variant)) or KNOWN_FAILURES.get((model, "*"))


@pytest.fixture(scope="module")
def torch_ref():
    torch = pytest.importorskip("torch", reason="differential test: the real PyTorch is the oracle")
    pytest.importorskip("torchvision", reason="the models come from python3-torchvision")
    torch.manual_seed(0)
    return torch


@pytest.mark.parametrize("variant", harness.VARIANTS)
@pytest.mark.parametrize("model", harness.FAST)
def test_model_matches_torch(torch_ref, model, variant):
    cell = harness.run_cell(model, variant, torch_ref, timing=False)
    reason = _expected_failure(model, variant)
    if reason is None:
        assert cell.ok, cell.message
    else:
        assert not cell.ok, "now passes: remove ({}, {}) from KNOWN_FAILURES".format(model, variant)
        assert reason in cell.message, cell.message
