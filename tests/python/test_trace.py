"""jit.trace: traced functions and modules against eager under every autocast state, golden
graphs and the text round trip, TracerWarnings and trace checks, bad input, and threads."""
import threading
import warnings

import pytest

import ampjit as torch
import ampjit.nn as nn
import ampjit.nn.functional as F
from ampjit import _C
from ampjit.jit import TracerWarning, TracingCheckError


def same(a, b):
    """Bitwise agreement of (nested) tensor results: the trace runs the same kernels as eager."""
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
        return
    assert a.dtype == b.dtype, (a.dtype, b.dtype)
    assert a.shape == b.shape
    assert a.tolist() == b.tolist()


@pytest.fixture
def eager_autocast_only():
    """The JIT autocast pass off: a traced function then runs its ops through the eager autocast
    dispatcher only, so it must agree with eager bit for bit. With the pass on (torch's default),
    a call under eager autocast reruns torch 1.13's JIT pass over the trace; test_trace_torch.py
    checks that against torch itself."""
    old = _C._jit_set_autocast_mode(False)
    try:
        yield
    finally:
        _C._jit_set_autocast_mode(old)


def graph_text(traced):
    return traced.graph.str(False)


# ---- The corpus: functions and modules ----------------------------------------------------------

def act_chain(x, w):
    return torch.tanh(F.gelu(x @ w)).sigmoid() * 2.0 - torch.relu(x).sum(1, keepdim=True)


def matmul_chain(x, w):
    h = torch.mm(x, w)
    h = torch.mm(h.t(), h)
    return torch.softmax(h, dim=-1)


def broadcasting(x, w):
    return (x.unsqueeze(-1) + w[:1, :].unsqueeze(0)) * x.mean()


def tuple_out(x, w):
    y = x @ w
    return y, (y.relu(), torch.cat([y, x @ w], 0))


def conv_fn(x, w):
    return F.max_pool2d(F.relu(F.conv2d(x, w, padding=1)), 2)


def norm_fn(x, w):
    return F.layer_norm(x @ w, (w.shape[1],)) + F.batch_norm(x, None, None, training=True).sum()


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(16, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x):
        return self.norm(self.fc2(self.act(self.fc1(x))))


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        h = F.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return self.head(h.flatten(1)), h


def corpus():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    w = torch.randn(8, 6)
    img = torch.randn(2, 3, 8, 8)
    cw = torch.randn(4, 3, 3, 3)
    yield "act_chain", act_chain, (x, w)
    yield "matmul_chain", matmul_chain, (x, w)
    yield "broadcasting", broadcasting, (x, w)
    yield "tuple_out", tuple_out, (x, w)
    yield "conv_fn", conv_fn, (img, cw)
    yield "norm_fn", norm_fn, (x, w)
    yield "MLP", MLP().eval(), (torch.randn(3, 8),)
    yield "ConvNet", ConvNet().eval(), (img,)


CASES = list(corpus())
AUTOCAST = [(False, False), (True, False), (False, True), (True, True)]


@pytest.mark.parametrize("trace_ac,call_ac", AUTOCAST, ids=["plain", "ac-trace", "ac-call", "ac-both"])
@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_trace_matches_eager(name, fn, args, trace_ac, call_ac, eager_autocast_only):
    # Autocast around the trace bakes its casts in; around the call the interpreter dispatches
    # through eager autocast. Either way the result is eager's under autocast, bit for bit.
    with torch.autocast("cpu", enabled=trace_ac, cache_enabled=False):
        traced = torch.jit.trace(fn, args)
    with torch.autocast("cpu", enabled=trace_ac or call_ac):
        expected = fn(*args)
    with torch.autocast("cpu", enabled=call_ac):
        got = traced(*args)
    same(got, expected)
    # New inputs of the same shapes: the trace generalizes.
    torch.manual_seed(1)
    args2 = tuple(torch.randn(*a.shape) for a in args)
    with torch.autocast("cpu", enabled=trace_ac or call_ac):
        expected2 = fn(*args2)
    with torch.autocast("cpu", enabled=call_ac):
        same(traced(*args2), expected2)


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_trace_graph_round_trips(name, fn, args):
    with torch.autocast("cpu", cache_enabled=False):
        traced = torch.jit.trace(fn, args)
    for ranges in (True, False):
        text = traced.graph.str(ranges)
        assert str(_C._parse_graph(text).str(ranges)) == text


def test_autocast_around_trace_bakes_casts_in():
    x, w = torch.randn(4, 8), torch.randn(8, 6)
    with torch.autocast("cpu"):
        traced = torch.jit.trace(matmul_chain, (x, w))
    g = graph_text(traced)
    # mm is lower-precision on CPU: both operands cast to bfloat16 (15), once; the second mm
    # and softmax take bfloat16 already (torch 1.13's CPU softmax is not an fp32 op).
    assert g.count("aten::to(") == 2
    assert "prim::Constant[value=15]()" in g
    assert "Enter" not in g and "Exit" not in g
    assert traced(x, w).dtype == torch.bfloat16
    assert torch.jit.trace(matmul_chain, (x, w)).graph.str(False).count("aten::to(") == 0


def test_golden_traced_linear_under_autocast():
    torch.manual_seed(0)
    lin = nn.Linear(4, 3)
    with torch.autocast("cpu", cache_enabled=False):
        traced = torch.jit.trace(lin, torch.randn(2, 4))
    assert graph_text(traced) == (
        "graph(%self : __torch__.torch.nn.modules.linear.Linear,\n"
        "      %input : Float(2, 4, device=cpu)):\n"
        "  %0 : int = prim::Constant[value=15]()\n"
        "  %1 : bool = prim::Constant[value=0]()\n"
        "  %2 : bool = prim::Constant[value=0]()\n"
        "  %3 : BFloat16(2, 4, device=cpu) = aten::to(%input, %0, %1, %2)\n"
        "  %weight : Float(3, 4, device=cpu) = prim::GetAttr[name=\"weight\"](%self)\n"
        "  %4 : int = prim::Constant[value=15]()\n"
        "  %5 : bool = prim::Constant[value=0]()\n"
        "  %6 : bool = prim::Constant[value=0]()\n"
        "  %7 : BFloat16(3, 4, device=cpu) = aten::to(%weight, %4, %5, %6)\n"
        "  %bias : Float(3, device=cpu) = prim::GetAttr[name=\"bias\"](%self)\n"
        "  %8 : int = prim::Constant[value=15]()\n"
        "  %9 : bool = prim::Constant[value=0]()\n"
        "  %10 : bool = prim::Constant[value=0]()\n"
        "  %11 : BFloat16(3, device=cpu) = aten::to(%bias, %8, %9, %10)\n"
        "  %12 : BFloat16(2, 3, device=cpu) = aten::linear(%3, %7, %11)\n"
        "  return (%12)\n")
    assert traced.code == (
        "def forward(self,\n"
        "    input: Tensor) -> Tensor:\n"
        "  weight = self.weight\n"
        "  bias = self.bias\n"
        "  return torch.linear(torch.to(input, 15), torch.to(weight, 15), torch.to(bias, 15))\n")


def test_golden_traced_function_code_and_locations():
    def f(x, y):
        z = x * y
        return torch.relu(z.mm(y.t())) + 1.0, z
    x = torch.randn(3, 4)
    traced = torch.jit.trace(f, (x, x))
    assert traced.code == (
        "def f(x: Tensor,\n"
        "    y: Tensor) -> Tuple[Tensor, Tensor]:\n"
        "  _0 = torch.mul(x, y)\n"
        "  return (torch.add(torch.relu(torch.mm(_0, torch.t(y))), 1.), _0)\n")
    line = f.__code__.co_firstlineno
    nodes = traced.graph._node_tuples()
    assert nodes[0][0] == "aten::mul" and nodes[0][1] == "{}:{}:0".format(__file__, line + 1)
    assert nodes[1][0] == "aten::t" and nodes[1][1].endswith(":{}:0".format(line + 2))
    assert traced.name == "f" and traced.schema == "f(Tensor x, Tensor y) -> (Tensor, Tensor)"
    assert str(traced.inlined_graph) == str(traced.graph)


def test_nested_tuple_inputs_and_list_outputs():
    def f(pair, z):
        a, (b, c) = pair
        return [a + b, c * z]
    x = torch.randn(2)
    with pytest.warns(TracerWarning, match="Encountering a list at the output of the tracer"):
        traced = torch.jit.trace(f, ((x, (x, x)), x))
    g = graph_text(traced)
    assert "prim::TupleUnpack" in g and "prim::ListConstruct" in g
    same(traced((x, (x * 2, x)), x), f((x, (x * 2, x)), x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.jit.trace(f, ((x, (x, x)), x), strict=False)


def test_module_shares_weights_and_resyncs():
    torch.manual_seed(0)
    m = MLP().eval()
    x = torch.randn(3, 8)
    traced = torch.jit.trace(m, x)
    assert traced.fc1.weight is m.fc1.weight
    assert [n for n, _ in traced.named_parameters()] == [n for n, _ in m.named_parameters()]
    assert "prim::GetAttr[name=\"fc1\"](%self)" in graph_text(traced)
    with torch.no_grad():
        m.fc2.bias.add_(1.0)  # in place: the trace reads the same tensor
    same(traced(x), m(x))
    traced.fc2.bias = nn.Parameter(torch.zeros(4))  # assignment: the graph follows
    m.fc2.bias = traced.fc2.bias
    same(traced(x), m(x))
    traced.double()  # replaced tensors: resynced
    assert traced(x.double()).dtype == torch.float64
    assert isinstance(traced, torch.jit.ScriptModule) and isinstance(traced, nn.Module)
    assert str(traced.forward.graph) == str(traced.graph) and traced.forward.code == traced.code
    same(traced.forward(x.double()), traced(x.double()))
    with pytest.raises(AttributeError):
        traced.fc1.forward  # submodules were not traced on their own (torch: no forward either)


# ---- Warnings and checks ----------------------------------------------------------------------

@pytest.mark.parametrize("convert,what", [
    (lambda t: bool(t.sum() > 0), "a Python boolean"),
    (lambda t: t.sum().item(), "a Python number"),
    (lambda t: float(t.sum()), "a Python float"),
    (lambda t: int(t.sum()), "a Python integer"),
    (lambda t: t.tolist(), "a Python list"),
])
def test_python_dataflow_warns(convert, what):
    def f(x):
        convert(x)
        return x + 1
    with pytest.warns(TracerWarning) as rec:
        torch.jit.trace(f, (torch.ones(2),), check_trace=False)
    msgs = [str(r.message) for r in rec]
    assert ("Converting a tensor to {} might cause the trace to be incorrect. We can't record the data flow "
            "of Python values, so this value will be treated as a constant in the future. This means that "
            "the trace might not generalize to other inputs!".format(what)) in msgs
    # Outside a trace, converting warns nothing.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        convert(torch.ones(2))


def test_dataflow_warning_points_at_the_user_line():
    def f(x):
        if x.sum() > 0:  # this line
            return x * 2
        return x
    with pytest.warns(TracerWarning) as rec:
        torch.jit.trace(f, (torch.ones(2),), check_trace=False)
    assert rec[0].filename == __file__
    assert rec[0].lineno == f.__code__.co_firstlineno + 1


def test_check_trace_warns_on_nondeterminism():
    def f(x):
        return x + torch.rand(1)
    with pytest.warns(TracerWarning) as rec:
        torch.jit.trace(f, (torch.ones(2, 4),))
    msgs = [str(r.message) for r in rec]
    assert msgs[0].startswith("Trace had nondeterministic nodes. Did you forget call .eval() on your model? Nodes:\n\t")
    assert "aten::rand(" in msgs[0]
    assert msgs[1].startswith("Output nr 1. of the traced function does not match the corresponding output of "
                              "the Python function. Detailed error:\nTensor-likes are not close!\n\nMismatched elements:")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        torch.jit.trace(f, (torch.ones(2, 4),), check_trace=False)


def test_check_trace_rejects_graphs_that_differ():
    def f(x):
        return x * 2 if x.shape[0] > 2 else x + 1
    with pytest.raises(TracingCheckError, match="Graphs differed across invocations"):
        torch.jit.trace(f, (torch.ones(3),), check_inputs=[(torch.ones(1),)])


def test_weight_cache_under_autocast():
    lin = nn.Linear(4, 3)
    x = torch.randn(2, 4)
    with pytest.raises(RuntimeError, match="Cannot insert a Tensor that requires grad as a constant"):
        with torch.autocast("cpu"):
            torch.jit.trace(lin, x)
    assert not torch.jit.is_tracing() and not torch.is_autocast_cpu_enabled()
    with torch.autocast("cpu", cache_enabled=False):
        traced = torch.jit.trace(lin, x)
    assert traced(x).dtype == torch.bfloat16
    with torch.autocast("cpu"):  # without the check, the first trace records the cast itself
        assert torch.jit.trace(lin, x, check_trace=False)(x).dtype == torch.bfloat16


def test_traced_autocast_scopes_are_metadata_only():
    def f(x, w):
        a = x @ w
        with torch.autocast("cpu", enabled=False):
            b = x @ w  # this line
        return a, b
    x, w = torch.randn(2, 3), torch.randn(3, 3)
    # The check runs the trace under the same autocast, which now also casts the inner matmul:
    # the traced autocast(False) is lost, as in torch (the limitation the interop layer flags).
    with pytest.warns(TracerWarning, match=r"(?s)Output nr 2\..*'dtype' do not match: torch.bfloat16 != torch.float32") as rec:
        with torch.autocast("cpu", cache_enabled=False):
            traced = torch.jit.trace(f, (x, w))
    assert rec[0].filename == __file__
    nodes = [n for n in traced.graph._node_tuples() if n[0] == "aten::matmul"]
    assert len(nodes) == 2
    assert "autocast" not in nodes[0][2]  # recorded outside any scope entered while tracing
    inner = nodes[1][2]
    assert inner["autocast_scope_enabled"] is False and inner["autocast_dtype"] == torch.bfloat16
    assert inner["autocast_where"] == "{}:{}:0".format(__file__, f.__code__.co_firstlineno + 2)
    g = graph_text(traced)
    assert "Enter" not in g and "Exit" not in g
    a, b = traced(x, w)
    assert a.dtype == torch.bfloat16 and b.dtype == torch.float32


# ---- Bad input ----------------------------------------------------------------------------------

def test_non_tensor_example_inputs():
    with pytest.raises(RuntimeError, match=r"Type 'Tuple\[Tensor, int\]' cannot be traced. Only Tensors and "
                                           r"\(possibly nested\) Lists, Dicts, and Tuples of Tensors can be traced"):
        torch.jit.trace(lambda x, y: x, (torch.ones(1), 3))
    with pytest.raises(RuntimeError, match=r"Type 'Tuple\[Tuple\[Tensor, str\]\]' cannot be traced"):
        torch.jit.trace(lambda p: p[0], ((torch.ones(1), "a"),))


@pytest.mark.parametrize("out", [3, "s", None, {"a": 1}])
def test_non_tensor_outputs(out):
    with pytest.raises(RuntimeError, match="Only tensors, lists, tuples of tensors, or dictionary of tensors can "
                                           "be output from traced functions"):
        torch.jit.trace(lambda x: out, (torch.ones(1),))
    assert not torch.jit.is_tracing()


def test_wrong_calls():
    def h(x, y):
        return x.mm(y).relu()
    x = torch.randn(2, 2)
    traced = torch.jit.trace(h, (x, x))
    with pytest.raises(RuntimeError, match=r"^h\(\) is missing value for argument 'y'. Declaration: "
                                           r"h\(Tensor x, Tensor y\) -> Tensor$"):
        traced(x)
    with pytest.raises(RuntimeError, match=r"^h\(\) expected at most 2 argument\(s\) but received 3 argument\(s\)"):
        traced(x, x, x)
    with pytest.raises(RuntimeError) as e:
        traced(x, 3)
    assert str(e.value) == ("h() Expected a value of type 'Tensor' for argument 'y' but instead found type 'int'.\n"
                            "Position: 1\nValue: 3\nDeclaration: h(Tensor x, Tensor y) -> Tensor\n"
                            "Cast error details: Unable to cast 3 to Tensor")
    with pytest.raises(RuntimeError, match=r"size mismatch|shapes|mm"):
        traced(x, torch.randn(3, 3))
    same(traced(y=x, x=x), h(x, x))


def test_exceptions_leave_no_state_behind():
    def f(x):
        with torch.autocast("cpu"):
            raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        torch.jit.trace(f, (torch.ones(1),))
    assert not torch.jit.is_tracing() and not torch.is_autocast_cpu_enabled()
    same(torch.jit.trace(lambda x: x * 3, (torch.ones(2),))(torch.ones(2)), torch.full((2,), 3.0))


def test_nested_trace_is_rejected():
    def outer(x):
        torch.jit.trace(lambda y: y + 1, (x,))
        return x
    with pytest.raises(RuntimeError, match="nested traces are not supported"):
        torch.jit.trace(outer, (torch.ones(1),))
    assert not torch.jit.is_tracing()


def test_tracing_an_already_traced_function_returns_it():
    traced = torch.jit.trace(lambda x: x + 1, (torch.ones(1),))
    with pytest.warns(UserWarning, match="already a ScriptModule"):
        assert torch.jit.trace(traced, (torch.ones(1),)) is traced


# ---- Threads ------------------------------------------------------------------------------------

def test_one_trace_called_from_eight_threads_with_their_own_autocast(eager_autocast_only):
    torch.manual_seed(0)
    x, w = torch.randn(16, 32), torch.randn(32, 8)
    def mm_gelu(x, w):
        return F.gelu(torch.mm(x, w)) * 2.0
    traced = torch.jit.trace(mm_gelu, (x, w))
    with torch.autocast("cpu"):
        expected_ac = mm_gelu(x, w)
    expected = mm_gelu(x, w)
    errors = []
    barrier = threading.Barrier(8)

    def work(i):
        try:
            barrier.wait()
            for _ in range(50):
                with torch.autocast("cpu", enabled=i % 2 == 0):
                    got = traced(x, w)
                same(got, expected_ac if i % 2 == 0 else expected)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert expected_ac.dtype == torch.bfloat16 and expected.dtype == torch.float32


# ---- The JIT autocast pass on traced functions: graph_for and _jit_set_autocast_mode ----------------

def _mm_gelu(x, w):
    return F.gelu(torch.mm(x, w)) * 2.0


def _casts(graph):
    text = str(graph)
    return text.count("aten::_autocast_to_reduced_precision("), text.count("aten::_autocast_to_full_precision(")


def test_graph_for_is_the_optimized_graph_for_the_callers_autocast_state():
    x, w = torch.randn(4, 8), torch.randn(8, 6)
    traced = torch.jit.trace(_mm_gelu, (x, w))
    assert _casts(traced.graph_for(x, w)) == (0, 0)
    with torch.autocast("cpu"):
        # mm's inputs to bfloat16; gelu's input (fp32 list) and mul's tensor input (promote list,
        # its traced input type is float32) back to float32.
        assert _casts(traced.graph_for(x, w)) == (2, 2)
        assert traced(x, w).dtype == torch.float32
    assert "_autocast_to" not in str(traced.graph)  # .graph never shows the casts
    assert _casts(traced.graph_for(x, w)) == (0, 0)


def test_jit_set_autocast_mode_turns_the_pass_off_and_returns_the_old_value():
    x, w = torch.randn(4, 8), torch.randn(8, 6)
    traced = torch.jit.trace(_mm_gelu, (x, w))
    assert torch._C._jit_set_autocast_mode is _C._jit_set_autocast_mode
    assert _C._jit_set_autocast_mode(False) is True
    try:
        with torch.autocast("cpu"):
            assert "_autocast_to" not in str(traced.graph_for(x, w))
            # Only eager autocast applies: bit for bit what eager gives.
            same(traced(x, w), _mm_gelu(x, w))
    finally:
        assert _C._jit_set_autocast_mode(True) is False
    with torch.autocast("cpu"):
        assert _casts(traced.graph_for(x, w)) == (2, 2)


def test_set_ignore_amp_skips_the_pass_for_one_function():
    x, w = torch.randn(4, 8), torch.randn(8, 6)
    traced, other = torch.jit.trace(_mm_gelu, (x, w)), torch.jit.trace(_mm_gelu, (x, w))
    traced._set_ignore_amp(True)
    with torch.autocast("cpu"):
        assert "_autocast_to" not in str(traced.graph_for(x, w))
        assert "_autocast_to" in str(other.graph_for(x, w))
        same(traced(x, w), _mm_gelu(x, w))


def test_graphs_print_and_read_nodes_without_outputs_as_torch():
    text = ("graph(%a : Tensor, %on : bool):\n"
            "  %dev : str = prim::Constant[value=\"cpu\"]()\n"
            "  %dt : int = prim::Constant[value=15]()\n"
            "  %ac : __torch__.torch.amp.autocast_mode.autocast = prim::CreateObject()\n"
            "   = prim::SetAttr[name=\"_enabled\"](%ac, %on)\n"
            "   = prim::SetAttr[name=\"device\"](%ac, %dev)\n"
            "   = prim::SetAttr[name=\"fast_dtype\"](%ac, %dt)\n"
            "  %e : NoneType = prim::Enter(%ac)\n"
            "  %x : NoneType = prim::Exit(%ac)\n"
            "  return (%a)\n")
    graph = _C._parse_graph(text)
    assert "   = prim::SetAttr[name=\"_enabled\"](%ac, %on)" in str(graph)  # torch's form, read back


def test_traced_call_under_autocast_matches_torch_with_the_pass_on_and_off(torch_ref):
    """torch runs its JIT autocast pass on traced graphs called under eager autocast; with
    _jit_set_autocast_mode(False), only eager autocast applies. Same dtypes and casts as torch."""
    results = []
    for mod in (torch, torch_ref):
        fn = _mm_gelu if mod is torch else (lambda x, w: torch_ref.nn.functional.gelu(torch_ref.mm(x, w)) * 2.0)
        x, w = mod.ones(4, 8), mod.ones(8, 6)
        seen = []
        for mode in (True, False):
            old = mod._C._jit_set_autocast_mode(mode)
            try:
                traced = mod.jit.trace(fn, (x, w))  # torch builds a function's graphs once per state
                with mod.autocast("cpu"):
                    out = traced(x, w)
                    text = str(traced.graph_for(x, w))
                seen.append((old, repr(out.dtype).split(".")[1], "_autocast_to_reduced_precision" in text))
            finally:
                mod._C._jit_set_autocast_mode(True)
        results.append(seen)
    assert results[0] == results[1]
    assert results[0][0] == (True, "float32", True)
