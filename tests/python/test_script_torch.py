"""jit.script against the real torch.jit.script (the oracle): the same programs, scripted by both
and called under each eager autocast state with the JIT autocast pass on (torch's default), must
give the same output dtypes, values within bfloat16 tolerance, and the same number of casts the
pass puts into the graph a call runs (graph_for)."""
import importlib.util
import sys
import textwrap
import warnings

import pytest

PROGRAM = """
import ampjit as torch
import ampjit.nn as nn
import ampjit.nn.functional as F
from ampjit import Tensor
from typing import List, Optional, Tuple


def matmul_chain(x: Tensor, w: Tensor) -> Tensor:
    h = torch.mm(x, w)
    h = torch.mm(h.t(), h)
    return torch.softmax(h, dim=-1)


def control_flow(x: Tensor, w: Tensor) -> Tensor:
    acc = torch.mm(x, w)
    for i in range(3):
        if i % 2 == 0:
            acc = acc + torch.mm(x, w) * 0.5
        else:
            acc = acc.relu()
    k = 0
    while k < 2:
        acc = acc * 0.5
        k += 1
    return acc


def functional_ops(x: Tensor, w: Tensor) -> Tuple[Tensor, Tensor]:
    h = F.linear(x, w.t())
    g = F.gelu(h) + F.gelu(h, approximate="tanh")
    return F.layer_norm(torch.mm(g, g.t()), [g.shape[0]]), F.log_softmax(g, dim=1)


def optional_bias(x: Tensor, w: Tensor, b: Optional[Tensor] = None) -> Tensor:
    y = torch.mm(x, w)
    if b is not None:
        y = y + b
    return y


def helper(x: Tensor, w: Tensor) -> Tensor:
    return torch.mm(x, w).tanh()


def calls_helper(x: Tensor, w: Tensor) -> List[Tensor]:
    ys = [helper(x, w), helper(x, w) * 2.0]
    ys.append(torch.cat(ys, 0))
    return ys


def autocast_inside(x: Tensor, w: Tensor) -> Tuple[Tensor, Tensor]:
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = torch.mm(x, w)
        z = torch.mm(y, w.t())
    return y, z.float() + 1.0


def autocast_disabled_inside(x: Tensor, w: Tensor) -> Tensor:
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=False):
        y = torch.mm(x, w)
    return y


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(16, 6)
        self.norm = nn.LayerNorm(6)

    def forward(self, x):
        return self.norm(self.fc2(self.act(self.fc1(x))))


def make_model():
    torch.manual_seed(0)
    return MLP().eval()


FUNCTIONS = [matmul_chain, control_flow, functional_ops, optional_bias, calls_helper, autocast_inside,
             autocast_disabled_inside]
"""

NAMES = ["matmul_chain", "control_flow", "functional_ops", "optional_bias", "calls_helper", "autocast_inside",
         "autocast_disabled_inside", "model"]
STATES = [False, True]


@pytest.fixture(scope="module")
def programs(torch_ref, tmp_path_factory):
    """The program imported twice from real files (script needs the source): as written, and with
    the real torch in place of ampjit."""
    root = tmp_path_factory.mktemp("script_programs")
    out = []
    for name, text in (("ampjit_script_program", PROGRAM), ("torch_script_program", PROGRAM.replace("ampjit", "torch"))):
        path = root / (name + ".py")
        path.write_text(textwrap.dedent(text))
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[name] = mod
        spec.loader.exec_module(mod)
        out.append(mod)
    yield out
    for m in out:
        sys.modules.pop(m.__name__, None)


def flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def to_torch(torch_ref, t):
    return torch_ref.tensor(t.float().tolist()).to(getattr(torch_ref, repr(t.dtype).split(".")[1]))


def call(mod, fn, args, autocast_on):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mod.autocast("cpu", enabled=autocast_on):
            return fn(*args)


def inputs(torch_ref, prog_a, index):
    import ampjit
    ampjit.manual_seed(3)
    args = [ampjit.randn(4, 8), ampjit.randn(8, 6)]
    if NAMES[index] == "model":
        args = args[:1]
    if NAMES[index] == "optional_bias":
        args.append(ampjit.randn(4, 6))
    return tuple(args), tuple(torch_ref.tensor(a.tolist()) for a in args)


def scripted_pair(torch_ref, programs, index):
    prog_a, prog_t = programs
    if NAMES[index] == "model":
        model_a, model_t = prog_a.make_model(), prog_t.make_model()
        with torch_ref.no_grad():
            for pa, pt in zip(model_a.parameters(), model_t.parameters()):
                pt.copy_(torch_ref.tensor(pa.tolist()))
        return (prog_a.torch.jit.script(model_a), torch_ref.jit.script(model_t))
    return (prog_a.torch.jit.script(prog_a.FUNCTIONS[index]), torch_ref.jit.script(prog_t.FUNCTIONS[index]))


@pytest.mark.parametrize("autocast_on", STATES, ids=["no-autocast", "cpu-autocast"])
@pytest.mark.parametrize("index", range(len(NAMES)), ids=NAMES)
def test_scripted_dtypes_and_values_match_torch(torch_ref, programs, index, autocast_on):
    # (Unlike tracing, scripting layer_norm under CPU autocast works in torch 1.13: its JIT pass
    # runs layer_norm in float32, so the kernel never sees bfloat16 next to float32 weights.)
    import ampjit
    s_a, s_t = scripted_pair(torch_ref, programs, index)
    args_a, args_t = inputs(torch_ref, programs[0], index)
    out_a = flat(call(ampjit, s_a, args_a, autocast_on))
    # torch's profiling executor optimizes at the second call; the result must not change.
    call(torch_ref, s_t, args_t, autocast_on)
    out_t = flat(call(torch_ref, s_t, args_t, autocast_on))
    assert [repr(o.dtype) for o in out_a] == [repr(o.dtype) for o in out_t]
    for a, t in zip(out_a, out_t):
        assert torch_ref.allclose(to_torch(torch_ref, a).float(), t.float(), rtol=2e-2, atol=5e-2)


def torch_graph_for(torch_ref, fn, args):
    """The graph torch runs for a call made now (its graph_for, or the last executed optimized
    graph after two calls where graph_for cannot tell)."""
    fn(*args)
    fn(*args)
    try:
        return str(fn.graph_for(*args))
    except Exception:  # noqa: BLE001 - torch's own fallback
        return str(torch_ref.jit.last_executed_optimized_graph())


# Straight-line programs only: torch's graph_for is the profiling executor's fully optimized graph
# (loops unrolled, then common subexpressions merged), so casts inside loops are counted after
# transformations ampjit's pipeline (torch's preoptimizeGraph) does not make.
CAST_CASES = ["matmul_chain", "optional_bias", "calls_helper", "autocast_inside", "autocast_disabled_inside"]


@pytest.mark.parametrize("autocast_on", STATES, ids=["no-autocast", "cpu-autocast"])
@pytest.mark.parametrize("name", CAST_CASES)
def test_graph_for_casts_match_torch(torch_ref, programs, name, autocast_on):
    import ampjit
    index = NAMES.index(name)
    s_a, s_t = scripted_pair(torch_ref, programs, index)
    args_a, args_t = inputs(torch_ref, programs[0], index)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with ampjit.autocast("cpu", enabled=autocast_on):
            g_a = str(s_a.graph_for(*args_a))
        with torch_ref.autocast("cpu", enabled=autocast_on):
            g_t = torch_graph_for(torch_ref, s_t, args_t)
    for kind in ("aten::_autocast_to_reduced_precision", "aten::_autocast_to_full_precision"):
        assert distinct_casts(g_a, kind) == distinct_casts(g_t, kind), (kind, g_a, g_t)


def distinct_casts(graph_text, kind):
    """How many different values a cast kind is applied to. ampjit's pipeline merges identical
    casts of one value (common subexpression elimination; a helper inlined twice casts its inputs
    once), where torch 1.13's graph_for keeps one cast per inlined call site; the values cast, and
    so where the casts are, are what must agree."""
    operands = set()
    for line in graph_text.splitlines():
        if kind + "(" in line:
            operands.add(line.split(kind + "(", 1)[1].split(",", 1)[0].split(".")[0])
    return len(operands)


def test_same_compile_errors_as_torch(torch_ref, tmp_path):
    """The kinds of error torch reports at script time are CompileErrors (RuntimeErrors) here too,
    naming the same thing."""
    import ampjit
    text = textwrap.dedent("""
        import ampjit as torch

        def undefined(x):
            return x + not_defined_anywhere

        @torch.autocast("cpu")
        def decorated(x):
            return torch.mm(x, x)

        def calls_decorated(x):
            return decorated(x)
        """)
    mods = []
    for name, src in (("ampjit_script_errors", text), ("torch_script_errors", text.replace("ampjit", "torch"))):
        path = tmp_path / (name + ".py")
        path.write_text(src)
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        mods.append(mod)
    for mod, lib in zip(mods, (ampjit, torch_ref)):
        with pytest.raises(RuntimeError, match="not_defined_anywhere"):
            lib.jit.script(mod.undefined)
        with pytest.raises(RuntimeError, match=r"@autocast\(\) decorator is not supported in script mode"):
            lib.jit.script(mod.calls_decorated)
