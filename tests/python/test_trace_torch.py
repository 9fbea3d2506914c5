"""jit.trace against the real torch.jit.trace (the oracle): the same program, traced under each
placement of CPU autocast, must give the same output dtypes, the same number of baked-in casts
and the same values (within bfloat16 tolerance), and the same diagnostics."""
import warnings

import pytest

PROGRAM = """
import ampjit as torch
import ampjit.nn as nn
import ampjit.nn.functional as F

def act_chain(x, w):
    return torch.tanh(F.gelu(x @ w)).sigmoid() * 2.0 - torch.relu(x).sum(1, keepdim=True)

def matmul_chain(x, w):
    h = torch.mm(x, w)
    return torch.softmax(torch.mm(h.t(), h), dim=-1)

def mixed(x, w):
    return torch.cat([x @ w, x[:, :6]], 0), torch.addmm(x[:, :6], x, w)

def norms(x, w):
    return F.layer_norm(x @ w, (6,)), F.log_softmax(x, 1)

def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 6), nn.LayerNorm(6)).eval()

FUNCTIONS = [act_chain, matmul_chain, mixed, norms]
"""

PLACEMENTS = [(False, False), (True, False), (False, True), (True, True)]

# torch 1.13's CPU layer_norm refuses a bfloat16 input with float32 weights ("expected scalar type
# BFloat16 but found Float"), so torch cannot trace the model under autocast at all; ampjit's
# kernel computes mixed dtypes in float32 (torch 2.x behavior). Pinned until the kernels follow
# the selected profile.
LAYER_NORM_MIXED = {("model", True, False), ("model", True, True)}


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def to_torch(torch_ref, t):
    return torch_ref.tensor(t.float().tolist()).to(getattr(torch_ref, repr(t.dtype).split(".")[1]))


@pytest.mark.parametrize("trace_ac,call_ac", PLACEMENTS, ids=["plain", "ac-trace", "ac-call", "ac-both"])
@pytest.mark.parametrize("fn_index", range(5), ids=["act_chain", "matmul_chain", "mixed", "norms", "model"])
def test_traced_dtypes_casts_and_values_match_torch(run_as_torch_program, torch_ref, fn_index, trace_ac, call_ac,
                                                    request):
    name = ["act_chain", "matmul_chain", "mixed", "norms", "model"][fn_index]
    if (name, trace_ac, call_ac) in LAYER_NORM_MIXED:
        request.applymarker(pytest.mark.xfail(strict=True, raises=RuntimeError,
                                              reason="torch 1.13 CPU layer_norm rejects mixed dtypes"))
    ns_a, ns_t = run_as_torch_program(PROGRAM)
    model_a = ns_a["make_model"]()
    results = []
    for ns, mod in ((ns_a, ns_a["torch"]), (ns_t, torch_ref)):
        mod.manual_seed(3)
        x, w = mod.randn(4, 8), mod.randn(8, 6)
        if fn_index == 4:
            fn, args = (model_a if ns is ns_a else ns["make_model"]()), (x,)
            if ns is ns_t:  # the same weights on both sides
                for pa, pt in zip(model_a.parameters(), fn.parameters()):
                    pt.data.copy_(mod.tensor(pa.tolist()))
        else:
            fn, args = ns["FUNCTIONS"][fn_index], (x, w)
        if mod is not torch_ref:  # same inputs on both sides
            args = tuple(a for a in args)
            inputs = [a.tolist() for a in args]
        else:
            args = tuple(mod.tensor(v) for v in inputs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with mod.autocast("cpu", enabled=trace_ac, cache_enabled=False):
                traced = mod.jit.trace(fn, args, check_trace=False)
            with mod.autocast("cpu", enabled=call_ac):
                out = traced(*args)
        casts = traced.graph.str(False).count("aten::to(") if mod is not torch_ref else \
            str(traced.graph).count("aten::to(")
        results.append((flat(out), casts))
    (a_out, a_casts), (t_out, t_casts) = results
    assert a_casts == t_casts
    assert [o.dtype for o in t_out] == [getattr(torch_ref, repr(o.dtype).split(".")[1]) for o in a_out]
    for a, t in zip(a_out, t_out):
        assert torch_ref.allclose(to_torch(torch_ref, a).float(), t.float(), rtol=2e-2, atol=5e-2)


def test_same_errors_as_torch(torch_ref):
    import ampjit
    for mod in (ampjit, torch_ref):
        x = mod.ones(2)
        with pytest.raises(RuntimeError) as e:
            mod.jit.trace(lambda a, b: a, (x, 3))
        msgs = [str(e.value)]
        with pytest.raises(RuntimeError) as e:
            mod.jit.trace(lambda a: 3, (x,))
        msgs.append(str(e.value))
        traced = mod.jit.trace(lambda a, b: a + b, (x, x))
        with pytest.raises(RuntimeError) as e:
            traced(x, 3)
        msgs.append(str(e.value).replace("<lambda>", "L"))
        if mod is ampjit:
            expected = msgs
        else:
            assert msgs == expected
