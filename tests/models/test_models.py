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


def test_bench_models_runs_a_cell_of_each_kind(torch_ref, capsys):
    """bench/bench_models.py (docs/performance.md) on its smallest cells: a timed cell prints both
    times and the ratio; a cell torch 1.13 cannot run (LayerNorm under autocast) prints ampjit's
    time and torch's error."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
    import ampjit
    import bench_models
    threads = ampjit.get_num_threads(), torch_ref.get_num_threads()
    try:
        bench_models.main(["--models", "transformer_text", "--batches", "1", "--threads", "1",
                           "--variants", "eager", "--dtypes", "f32,bf16", "--rounds", "1"])
    finally:
        ampjit.set_num_threads(threads[0])
        torch_ref.set_num_threads(threads[1])
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| transformer_text")]
    assert len(rows) == 2
    f32 = rows[0].split("|")
    assert f32[5].strip() == "f32" and float(f32[6]) > 0 and float(f32[7]) > 0 and float(f32[8]) > 0
    bf16 = rows[1].split("|")
    assert float(bf16[6]) > 0 and "torch: expected scalar type BFloat16 but found Float" in bf16[8]


def test_bench_models_runs_a_channels_last_cell(torch_ref, capsys):
    """--channels-last converts the vision model and its input in both libraries (Note [Channels-last
    tensors]); the frozen cell runs and gives both times."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
    import ampjit
    import bench_models
    threads = ampjit.get_num_threads(), torch_ref.get_num_threads()
    try:
        bench_models.main(["--models", "mobilenet_v2", "--batches", "1", "--threads", "1", "--variants",
                           "frozen", "--dtypes", "f32", "--rounds", "1", "--hw", "32", "--channels-last"])
    finally:
        ampjit.set_num_threads(threads[0])
        torch_ref.set_num_threads(threads[1])
    out = capsys.readouterr().out
    assert "| channels_last" in out
    rows = [line.split("|") for line in out.splitlines() if line.startswith("| mobilenet_v2")]
    assert len(rows) == 1 and all(float(rows[0][k]) > 0 for k in (6, 7, 8))
