"""PyTorch 1.13.1's own autocast tests, unchanged, under ampjit (issue 15, item 6).

test/test_autocast.py and test/test_jit_autocast.py hold 16 test cases that run on a CPU-only
build of torch and 38 that need CUDA. Each CPU case runs here, by name, with ampjit as `torch`
(upstream.py); a case that fails, errors or is skipped fails its test. The CUDA cases are counted
here (a new or lost one fails the count) and run in the GPU bundle's run.
"""
import unittest

import pytest

import upstream

CPU_CASES = {
    ("test_autocast", "TestAutocastCPU"): [
        "test_autocast_torch_expect_builtin_promote", "test_autocast_methods_expect_builtin_promote",
        "test_autocast_torch_bf16", "test_autocast_nn_bf16", "test_autocast_torch_fp32", "test_autocast_nn_fp32",
        "test_autocast_torch_need_autocast_promote"],
    ("test_autocast", "TestTorchAutocast"): ["test_autocast_fast_dtype"],
    ("test_jit_autocast", "TestAutocast"): ["test_jit_autocast_softmax_cpu", "test_ignore_amp"],
    ("test_jit_autocast", "TestJitTraceAutocast"): [
        "test_generate_autocast_jit_trace_model", "test_nchw_autocast_jit_trace_model",
        "test_nhwc_autocast_jit_trace_model", "test_script_autocast_cpu", "test_scripted_aliasing",
        "test_script_autocast_enable_and_check"],
}
CUDA_CASE_COUNT = 38


CASES = [(m, c, t) for (m, c), tests in CPU_CASES.items() for t in tests]


@pytest.mark.parametrize("module,cls,test", CASES, ids=["{}.{}".format(c, t) for _, c, t in CASES])
def test_pytorch_cpu_case(suite_root, module, cls, test):
    case = getattr(upstream.load(module), cls)(test)
    result = unittest.TestResult()
    case.run(result)
    problems = result.errors + result.failures
    assert not problems, problems[0][1]
    assert not result.skipped, "skipped: {}".format(result.skipped[0][1])
    assert result.testsRun == 1


def test_the_cpu_and_cuda_cases_are_all_accounted_for(suite_root):
    """Every test method of the two files is one of the 16 CPU cases above or one of the CUDA
    cases (skipped without CUDA, or skipped by torch itself)."""
    cpu = {(m, c, t) for m, c, t in CASES}
    assert len(cpu) == 16
    others = []
    for module in ("test_autocast", "test_jit_autocast"):
        mod = upstream.load(module)
        for name, cls in vars(mod).items():
            if isinstance(cls, type) and issubclass(cls, unittest.TestCase):
                for t in unittest.TestLoader().getTestCaseNames(cls):
                    if (module, name, t) not in cpu:
                        others.append((module, name, t))
    names = sorted("{}.{}".format(c, t) for _, c, t in others)
    assert len(others) == CUDA_CASE_COUNT + 6, names  # and 6 that torch skips itself, unconditionally
