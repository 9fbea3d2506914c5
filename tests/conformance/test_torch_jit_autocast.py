"""PyTorch's own test/test_jit_autocast.py (1.13/2.x), the cases that run on CPU.

torch's cases are CUDA/float16; the CPU analogues here use torch.cpu.amp.autocast and bfloat16 (the
reference's translation). Cases a seed-000 section already shows are rows of that section; TORCH_CASES
maps every case of torch's file to the test that shows it (or to why it is not run on CPU), and
test_every_torch_case_is_mapped checks that each mapped test exists.
"""
import importlib

import pytest

from harness import Crashes, Expect, Warn, check
from matrix import row

USAGE = "Usage"
MISSING = "Missing autocast policies"
UNCOMMON = "Uncommon autocast usage patterns may not be supported"
MIXING = "Mixing eager mode and scripting autocast"
SCRIPT_CALLS_TRACED = "Mixing tracing and scripting autocast (script calling traced)"
DISABLING = "Disabling eager autocast with scripted autocast"

NOT_ON_CPU = None  # a case with no CPU analogue (the value of its entry says why)

# torch's test name -> "module::test" showing it here, or (NOT_ON_CPU, why).
TORCH_CASES = {
    "test_jit_generic_autocast": (NOT_ON_CPU, "CUDA generic autocast vs torch.cuda.amp.autocast"),
    "test_minimal": "test_torch_jit_autocast::test_torch_minimal",
    "test_linear_bf16": "test_usage::test_usage_autocast_spellings",
    "test_minimal_cpu": "test_torch_jit_autocast::test_torch_minimal_other_device",
    "test_minimal_off": "test_constant_argument::test_const_enabled_literal",
    "test_runtime_autocast_state": "test_constant_argument::test_const_runtime_enabled",
    "test_runtime_autocast_state_expr": "test_constant_argument::test_const_enabled_expression",
    "test_explicit_casts": "test_torch_jit_autocast::test_torch_explicit_casts",
    "test_duplicate_inputs": "test_torch_jit_autocast::test_torch_duplicate_inputs",
    "test_fp32_policy": "test_torch_jit_autocast::test_torch_fp32_policy",
    "test_fp32_policy_with_fp64": "test_torch_jit_autocast::test_torch_fp32_policy_with_fp64",
    "test_promote_policy": "test_promote_policy::test_promote_addcmul",
    "test_promote_policy_fp64": "test_promote_policy::test_promote_fp64",
    "test_fp32_set_opt_dtype_policy": "test_torch_jit_autocast::test_torch_fp32_set_opt_dtype_policy",
    "test_fp32_set_opt_dtype_policy_fp64": "test_torch_jit_autocast::test_torch_fp32_set_opt_dtype_policy_fp64",
    "test_control_flow": (NOT_ON_CPU, "skipped in torch (broken: no type propagation)"),
    "test_divergent_types": "test_torch_jit_autocast::test_torch_divergent_types",
    "test_divergent_autocast": "test_uncommon_patterns::test_uncommon_instances_entered_in_branches",
    "test_conditional_autocast": "test_uncommon_patterns::test_uncommon_conditional_instance",
    "test_nested_autocast": "test_usage::test_usage_nested_regions",
    "test_implicitly_nested_autocast": "test_uncommon_patterns::test_uncommon_implicitly_nested",
    "test_reused_autocast": "test_uncommon_patterns::test_uncommon_reused_instance",
    "test_reused_autocast_expr": "test_uncommon_patterns::test_uncommon_as_binding",
    "test_callees": "test_torch_jit_autocast::test_torch_callees",
    "test_callees_with_autocast_on": "test_torch_jit_autocast::test_torch_callees_with_autocast_on",
    "test_callees_with_autocast_off": "test_torch_jit_autocast::test_torch_callees_with_autocast_off",
    "test_eager_and_script": "test_mixing_eager_and_script::test_mix_specialized_on_eager_state",
    "test_script_and_tracing": "test_script_calling_traced::test_sct_traced_without_regions",
    "test_script_and_tracing_with_autocast": "test_script_calling_traced::test_sct_seed_example",
    "test_tracing_and_script": "test_traced_calling_script::test_tcs_script_with_its_own_region",
    "test_tracing_with_autocast_and_script": "test_traced_calling_script::test_tcs_seed_example",
    "test_script_module": "test_torch_jit_autocast::test_torch_script_module",
    "test_autocast_decorator": "test_autocast_decorators::test_deco_script_of_decorated_function",
    "test_autocast_decorator_outside_jit": "test_autocast_decorators::test_deco_eager_decorator_around_script",
    "test_inplace": "test_torch_jit_autocast::test_torch_inplace",
    "test_autocast_api": "test_usage::test_usage_autocast_spellings",
    "test_autocast_api_not_supported": "test_usage::test_usage_autocast_without_dtype",
    "test_autocast_mixed_dtypes": (NOT_ON_CPU, "nested CPU and CUDA regions need CUDA tensors"),
    "test_jit_executor_under_autocast": "test_torch_jit_autocast::test_torch_jit_executor_under_autocast",
    "test_autocast_autodiff": (NOT_ON_CPU, "backward of a scripted function (ampjit has no autograd)"),
    "test_jit_call_method_under_autocast": (NOT_ON_CPU, "interface calls (ampjit's script has no interfaces)"),
    "test_jit_freeze_autocast_basic": (NOT_ON_CPU, "torch.jit.freeze (not in ampjit)"),
    "test_jit_freeze_autocast_constants": (NOT_ON_CPU, "torch.jit.freeze (not in ampjit)"),
    "test_jit_autocast_softmax_cpu": "test_torch_jit_autocast::test_torch_autocast_softmax_cpu",
    "test_jit_autocast_softmax_gpu": (NOT_ON_CPU, "CUDA softmax upcast (the pass clears CPU for softmax)"),
    "test_ignore_amp": "test_torch_jit_autocast::test_torch_ignore_amp",
    "test_generate_autocast_jit_trace_model": (NOT_ON_CPU, "MnistNet + torch.jit.freeze"),
    "test_nchw_autocast_jit_trace_model": (NOT_ON_CPU, "MnistNet + torch.jit.freeze"),
    "test_nhwc_autocast_jit_trace_model": (NOT_ON_CPU, "channels_last + torch.jit.freeze"),
    "test_cat_promote": "test_torch_jit_autocast::test_torch_cat_promote",
    "test_script_autocast_cpu": "test_mixing_eager_and_script::test_mix_is_autocast_enabled_in_script",
    "test_script_autocast_cuda": (NOT_ON_CPU, "torch.is_autocast_enabled() with CUDA autocast"),
    "test_scripted_aliasing": (NOT_ON_CPU, "CUDA region; graph-level alias check"),
    "test_script_autocast_enable_and_check": "test_torch_jit_autocast::test_torch_script_autocast_enable_and_check",
}


def test_every_torch_case_is_mapped():
    """Every case of torch's file that runs on CPU names an existing row test."""
    from matrix import rows
    declared = {r["test"] for r in rows()}
    for case, target in TORCH_CASES.items():
        if isinstance(target, tuple):
            assert target[0] is NOT_ON_CPU and target[1], case
            continue
        module, name = target.split("::")
        assert callable(getattr(importlib.import_module(module), name, None)), (case, target)
        assert target in declared, "{} -> {} is not a matrix row".format(case, target)


@row(USAGE,
     pytorch="test_minimal on CPU: `x = mm(a, b); y = sum(x)` in a region: x bfloat16, y float32 (the pass's "
             "sum rule; eager CPU autocast leaves sum alone: bfloat16).",
     torchscript="Same: bfloat16, float32.",
     eager="bfloat16, bfloat16, equal to eager.")
def test_torch_minimal(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32"), eager=Expect("bfloat16", "bfloat16"))


@row(USAGE,
     pytorch="test_minimal_cpu, mirrored: a CUDA autocast region does not cast CPU tensors: float32.",
     torchscript="Same: float32.",
     eager="Same, equal to eager.")
def test_torch_minimal_other_device(semantics, request):
    check(request, semantics, Expect("float32"))


@row(USAGE,
     pytorch="test_explicit_casts: `.double()`/`.float()` around mm in and after a region: float32, float64, "
             "float64 (float64 is never cast).",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_explicit_casts(semantics, request):
    check(request, semantics, Expect("float32", "float64", "float64"))


@row(USAGE,
     pytorch="test_duplicate_inputs: mm(a, a) then mm(e, e): bfloat16, bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_duplicate_inputs(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16"))


@row(MISSING,
     pytorch="test_fp32_policy on CPU: log of a bfloat16 tensor in a region is float32 (the pass's fp32 list; "
             "eager CPU autocast has no log rule: bfloat16).",
     torchscript="Same: float32.",
     eager="bfloat16, equal to eager.")
def test_torch_fp32_policy(semantics, request):
    check(request, semantics, Expect("float32"), eager=Expect("bfloat16"))


@row(USAGE,
     pytorch="test_fp32_policy_with_fp64: log of a float64 tensor in a region stays float64.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_fp32_policy_with_fp64(semantics, request):
    check(request, semantics, Expect("float64"))


@row(MISSING,
     pytorch="test_fp32_set_opt_dtype_policy on CPU: the pass does not upcast softmax on CPU: bfloat16, "
             "bfloat16, float64 (explicit), bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_fp32_set_opt_dtype_policy(semantics, request):
    check(request, semantics, Expect("bfloat16", "bfloat16", "float64", "bfloat16"))


@row(MISSING,
     pytorch="test_fp32_set_opt_dtype_policy_fp64: softmax / log_softmax of float64 inputs: float64 four "
             "times.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_fp32_set_opt_dtype_policy_fp64(semantics, request):
    check(request, semantics, Expect("float64", "float64", "float64", "float64"))


@row(UNCOMMON,
     pytorch="test_divergent_types: branches giving values of different dtypes compile and run: float32, "
             "float32.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_divergent_types(semantics, request):
    check(request, semantics, Expect("float32", "float32"))


@row(USAGE,
     pytorch="test_callees: a Python helper compiled recursively and inlined into the region: bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_callees(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(USAGE,
     pytorch="test_callees_with_autocast_on: the callee's `autocast(True)` wins over the caller's "
             "`autocast(False)`: bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_callees_with_autocast_on(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(USAGE,
     pytorch="test_callees_with_autocast_off: the callee's `autocast(False)` wins over the caller's "
             "`autocast(True)`: float32.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_callees_with_autocast_off(semantics, request):
    check(request, semantics, Expect("float32"))


@row(USAGE,
     pytorch="test_script_module on CPU: weight.mv(input) then a Linear in a region of a scripted forward: "
             "bfloat16.",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_script_module(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(USAGE,
     pytorch="test_inplace: addmm is bfloat16; addmm with out= and addmm_ are not autocast: float32.",
     torchscript="Same: bfloat16, float32, float32.",
     eager="Same, equal to eager.")
def test_torch_inplace(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32", "float32"))


@row(MIXING,
     pytorch="test_jit_executor_under_autocast on CPU: a plain scripted mm under eager autocast runs a graph "
             "with the cast op (bfloat16), without autocast one without it (float32).",
     torchscript="Same: bfloat16, float32; 2 casts under autocast, 0 without.",
     eager="Same dtypes, equal to eager; the pass never runs (0 casts): the eager dispatcher casts.")
def test_torch_jit_executor_under_autocast(semantics, request):
    check(request, semantics, Expect("bfloat16", "float32", facts={"casts_on": 2, "casts_off": 0}),
          eager=Expect("bfloat16", "float32", facts={"casts_on": 0, "casts_off": 0}))


@row(MISSING,
     pytorch="test_jit_autocast_softmax_cpu: F.softmax of a bfloat16 tensor in a CPU region stays bfloat16 "
             "(no CPU upcast).",
     torchscript="Same.",
     eager="Same, equal to eager.")
def test_torch_autocast_softmax_cpu(semantics, request):
    check(request, semantics, Expect("bfloat16"))


@row(MIXING,
     pytorch="test_ignore_amp: after `_set_ignore_amp(True)` the graph run under eager autocast has no cast "
             "op (the eager dispatcher still makes mm bfloat16).",
     torchscript="Same: bfloat16, no cast op.",
     eager="Same, equal to eager.")
def test_torch_ignore_amp(semantics, request):
    check(request, semantics, Expect("bfloat16", facts={"casts": 0}), eager=Expect("bfloat16", facts={"casts": 0}))


@row(SCRIPT_CALLS_TRACED,
     pytorch="TestJitTraceAutocast.test_cat_promote: a trace of cat([float32, bfloat16]) under CPU autocast "
             "is float32; 1.13's CPU autocast does not promote cat, so the trace has no aten::to (2.x lists "
             "cat as promote and records one).",
     torchscript="Same as 1.13: float32, no aten::to.",
     eager="float32, equal to eager; the trace records cat as called.")
def test_torch_cat_promote(semantics, request):
    check(request, semantics, Expect("float32", facts={"to_nodes": 0}), eager=Expect("float32", facts={"to_nodes": 0}))


@row(DISABLING,
     pytorch="test_script_autocast_enable_and_check: (mm, is_autocast_cpu_enabled()) outside, in a region and "
             "in a nested disabled one; PyTorch 1.13 crashes (segmentation fault) under eager autocast.",
     torchscript="No crash; under eager autocast the nested disabled region still autocasts (bfloat16, True), "
                 "with the AutocastInteropWarning at its `with` line.",
     eager="The flag is True exactly when mm is not float32, in every state, equal to eager.")
def test_torch_script_autocast_enable_and_check(semantics, request):
    check(request, semantics,
          Expect("float32", "bfloat16", "float32", "bfloat16", "bfloat16", "bfloat16",
                 values=[False, True, False, True, True, True],
                 warns=[Warn("does not disable eager autocast", at="autocast(enabled=False)")]),
          pytorch=Crashes("PyTorch 1.13 segfaults on is_autocast_cpu_enabled() in a script under eager autocast"),
          eager=Expect("float32", "bfloat16", "float32", "bfloat16", "bfloat16", "float32",
                       values=[False, True, False, True, True, False]))
