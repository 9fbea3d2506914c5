"""PyTorch 1.13.1's 38 CUDA autocast test cases (test/test_jit_autocast.py), unchanged, under
ampjit: they run where a GPU is (the GPU bundle carries this file, its shims and the upstream
files) and are skipped without one, as every GPU test here. A case that fails, errors or that
torch's own decorators skip on a GPU machine fails its test."""
import unittest

import pytest

import upstream

CUDA_CASES = [("TestAutocast", t) for t in (
    "test_autocast_api", "test_autocast_autodiff", "test_autocast_decorator_outside_jit",
    "test_autocast_mixed_dtypes", "test_callees", "test_callees_with_autocast_off", "test_callees_with_autocast_on",
    "test_conditional_autocast", "test_divergent_autocast", "test_divergent_types", "test_duplicate_inputs",
    "test_eager_and_script", "test_explicit_casts", "test_fp32_policy", "test_fp32_policy_with_fp64",
    "test_fp32_set_opt_dtype_policy", "test_fp32_set_opt_dtype_policy_fp64", "test_implicitly_nested_autocast",
    "test_inplace", "test_jit_autocast_softmax_gpu", "test_jit_call_method_under_autocast",
    "test_jit_executor_under_autocast", "test_jit_freeze_autocast_basic", "test_jit_freeze_autocast_constants",
    "test_linear_bf16", "test_minimal", "test_minimal_cpu", "test_minimal_off", "test_nested_autocast",
    "test_promote_policy", "test_promote_policy_fp64", "test_reused_autocast", "test_runtime_autocast_state",
    "test_runtime_autocast_state_expr", "test_script_and_tracing", "test_script_module", "test_tracing_and_script",
)] + [("TestJitTraceAutocast", "test_script_autocast_cuda")]


def test_there_are_38():
    assert len(set(CUDA_CASES)) == 38


@pytest.mark.parametrize("cls,test", CUDA_CASES, ids=["{}.{}".format(c, t) for c, t in CUDA_CASES])
def test_pytorch_cuda_case(suite_root, cls, test):
    import ampjit
    if not ampjit.cuda.is_available():
        pytest.skip("no GPU")
    case = getattr(upstream.load("test_jit_autocast"), cls)(test)
    result = unittest.TestResult()
    case.run(result)
    problems = result.errors + result.failures
    assert not problems, problems[0][1]
    assert not result.skipped, "skipped: {}".format(result.skipped[0][1])
