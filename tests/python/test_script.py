"""jit.script: a corpus of scripted functions and modules against the same Python run eagerly
under every eager autocast state, the ScriptFunction API (graph, code, schema, keyword arguments
and defaults), source extraction, name resolution, diagnostics pinned by message and by the
user's file:line, and one scripted function called from eight threads."""
import inspect
import math
import threading
from typing import List, Optional, Tuple

import pytest

import ampjit as torch
import ampjit.nn as nn
import ampjit.nn.functional as F
from ampjit import Tensor, _C
from ampjit.jit import CompileError, Final
from ampjit.nn.functional import gelu as imported_gelu
from ampjit import relu as imported_relu

HERE = __file__


def same(a, b):
    """Bitwise agreement of (nested) results: with the JIT autocast pass off, a script runs the
    same kernels through the same eager autocast dispatcher as Python does."""
    if isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            same(x, y)
        return
    if isinstance(a, Tensor):
        assert isinstance(b, Tensor), b
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        assert a.shape == b.shape
        assert a.tolist() == b.tolist()
        return
    assert type(a) is type(b) and a == b, (a, b)


@pytest.fixture
def eager_autocast_only():
    """The JIT autocast pass off: scripted code autocasts only through the eager dispatcher layer,
    so it must agree with eager bit for bit. With the pass on (torch's default) a call under
    eager autocast runs torch 1.13's JIT pass; test_script_torch.py compares that with torch."""
    old = _C._jit_set_autocast_mode(False)
    try:
        yield
    finally:
        _C._jit_set_autocast_mode(old)


def line_of(fn, text):
    """The file line of the first source line of `fn` containing `text`."""
    lines, first = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if text in line:
            return first + i
    raise AssertionError("{!r} not in the source of {}".format(text, fn.__name__))


# ---- The corpus ------------------------------------------------------------------------------------

def int_arith(a: int, b: int) -> int:
    c = (a + b) * 3 // 2 - a % 3
    c += b * b
    return c - (a - b) // 4


def float_arith(x: float, y: float) -> float:
    z = x * y + x / y - 2.5
    return z * z - math.sqrt(abs(y))


def number_mix(a: int, x: float) -> Tuple[float, int, bool]:
    return a * x + 1, a // 2 + int(x), a > x


def if_elif_else(x: Tensor, n: int) -> Tensor:
    if n > 2:
        y = x * 2.0
    elif n == 2:
        y = x + 1.0
    else:
        y = -x
    return y.relu()


def for_range(x: Tensor, n: int) -> Tensor:
    acc = x
    for i in range(n):
        acc = acc * 0.5 + i
    return acc


def while_break_continue(x: Tensor, n: int) -> Tensor:
    i = 0
    while True:
        i += 1
        if i % 2 == 0:
            continue
        if i > n:
            break
        x = x + i
    return x


def early_return_in_loop(x: Tensor, n: int) -> Tensor:
    for i in range(10):
        if i == n:
            return x * i
        x = x + 1.0
    return x


def list_ops(x: Tensor) -> Tuple[Tensor, List[Tensor], int]:
    xs = [x, x * 2.0]
    xs.append(x + 1.0)
    total = xs[1] + xs[-1]
    return total, xs[1:], len(xs)


def list_comprehension(n: int) -> List[int]:
    squares = [i * i for i in range(n)]
    out: List[int] = []
    for s in squares:
        if s % 2 == 0:
            out.append(s)
    return out


def tuples_and_unpacking(x: Tensor, w: Tensor) -> Tuple[Tensor, Tensor]:
    t = (x, w)
    a, b = t
    c, (d, e) = a, (b, a)
    return d @ e.t(), c + a


def optional_refinement(x: Tensor, bias: Optional[Tensor] = None) -> Tensor:
    if bias is None:
        return x * 2.0
    return x + bias


def helper(x: Tensor, k: int) -> Tensor:
    return x * k + 1.0


def helper_of_helper(x: Tensor) -> Tensor:
    return helper(x, 3).tanh()


def calls_plain_functions(x: Tensor) -> Tensor:
    return helper(x, 2) + helper_of_helper(x)


@torch.jit.script
def scripted_helper(x: Tensor) -> Tensor:
    return torch.sigmoid(x) * 3.0


def calls_scripted(x: Tensor) -> Tensor:
    return scripted_helper(x) + 1.0


def _traced_body(x):
    return torch.mm(x, x.t()).relu()


traced_helper = torch.jit.trace(_traced_body, (torch.randn(4, 8),))


def calls_traced(x: Tensor) -> Tensor:
    return traced_helper(x) * 0.5


def functional_ops(x: Tensor, w: Tensor) -> Tensor:
    h = F.linear(x, w.t())
    h = F.gelu(h) + imported_gelu(h, approximate="tanh")
    h = F.softmax(h, dim=-1) + imported_relu(h)
    return F.layer_norm(torch.mm(h, h.t()), [h.shape[0]])


def dtype_constants(x: Tensor) -> Tuple[Tensor, Tensor]:
    h = x.to(torch.float16)
    b = x.to(dtype=torch.bfloat16)
    return h.float() + b.to(torch.float32), torch.zeros([2, 2], dtype=torch.float64)


def matmul_chain(x: Tensor, w: Tensor) -> Tensor:
    h = torch.mm(x, w)
    h = torch.mm(h.t(), h)
    return torch.softmax(h, dim=-1)


def tensor_indexing(x: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
    return x[0], x[:, 1:3], x[1:, -1]


def assert_and_raise(x: Tensor, n: int) -> Tensor:
    assert n >= 0, "n must be non-negative"
    if n > 100:
        raise ValueError("n is too large")
    return x * n


SCALE = 1.5
SHAPE = (2, 16)


def reads_global_constant(x: Tensor) -> Tensor:
    return x.reshape(SHAPE) * SCALE


def corpus():
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    w = torch.randn(8, 6)
    b = torch.randn(4, 8)
    yield "int_arith", int_arith, [(7, 3), (-5, 2)]
    yield "float_arith", float_arith, [(1.5, -2.25), (3.0, 0.5)]
    yield "number_mix", number_mix, [(5, 2.5), (-3, 0.25)]
    yield "if_elif_else", if_elif_else, [(x, 3), (x, 2), (x, 0)]
    yield "for_range", for_range, [(x, 0), (x, 4)]
    yield "while_break_continue", while_break_continue, [(x, 0), (x, 5)]
    yield "early_return_in_loop", early_return_in_loop, [(x, 3), (x, 20)]
    yield "list_ops", list_ops, [(x,)]
    yield "list_comprehension", list_comprehension, [(0,), (7,)]
    yield "tuples_and_unpacking", tuples_and_unpacking, [(x, b)]
    yield "optional_refinement", optional_refinement, [(x,), (x, b), (x, None)]
    yield "calls_plain_functions", calls_plain_functions, [(x,)]
    yield "calls_scripted", calls_scripted, [(x,)]
    yield "calls_traced", calls_traced, [(x,)]
    yield "functional_ops", functional_ops, [(x, w)]
    yield "dtype_constants", dtype_constants, [(x,)]
    yield "matmul_chain", matmul_chain, [(x, w)]
    yield "tensor_indexing", tensor_indexing, [(x,)]
    yield "assert_and_raise", assert_and_raise, [(x, 3)]
    yield "reads_global_constant", reads_global_constant, [(x,)]


CASES = list(corpus())
STATES = [None, ("cpu", torch.bfloat16)]
STATE_IDS = ["no-autocast", "cpu-bf16"]


def under(state, fn, args):
    if state is None:
        return fn(*args)
    with torch.autocast(state[0], dtype=state[1]):
        return fn(*args)


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
@pytest.mark.parametrize("name,fn,arg_sets", CASES, ids=[c[0] for c in CASES])
def test_script_matches_eager_bitwise(name, fn, arg_sets, state, eager_autocast_only):
    scripted = torch.jit.script(fn)
    for args in arg_sets:
        same(under(state, scripted, args), under(state, fn, args))


def test_autocast_inside_script_gives_eager_dtypes():
    # With the JIT autocast pass on (the default), a script's `with torch.autocast("cpu")` casts
    # as eager does: mm runs in bfloat16, the result stays bfloat16 after the region.
    def mm_in_autocast(x: Tensor, w: Tensor) -> Tuple[Tensor, Tensor]:
        with torch.autocast("cpu"):
            y = torch.mm(x, w)
        return y, y.float() + 1.0
    torch.manual_seed(0)
    x, w = torch.randn(4, 8), torch.randn(8, 6)
    scripted = torch.jit.script(mm_in_autocast)
    got, expected = scripted(x, w), mm_in_autocast(x, w)
    assert [t.dtype for t in got] == [t.dtype for t in expected] == [torch.bfloat16, torch.float32]
    same(got, expected)  # the same bfloat16 kernel on the same cast inputs


def test_scripted_calls_with_keywords_and_defaults():
    scripted = torch.jit.script(optional_refinement)
    x, b = torch.ones(2, 2), torch.full([2, 2], 3.0)
    same(scripted(x), x * 2.0)
    same(scripted(x, bias=b), x + b)
    same(scripted(bias=b, x=x), x + b)
    with pytest.raises(RuntimeError, match="unexpected keyword argument 'scale'"):
        scripted(x, scale=2)
    with pytest.raises(RuntimeError, match="missing value for argument 'x'"):
        scripted()


def test_script_argument_types_are_checked_and_ints_become_floats():
    scripted = torch.jit.script(float_arith)
    assert scripted(2, 4) == float_arith(2.0, 4.0)
    assert isinstance(scripted(2, 4), float)
    with pytest.raises(RuntimeError, match="Expected a value of type 'int' for argument 'a' but instead found "
                                           "type 'str'"):
        torch.jit.script(int_arith)("1", 2)


def test_script_function_api():
    scripted = torch.jit.script(matmul_chain)
    assert isinstance(scripted, torch.jit.ScriptFunction)
    assert scripted.name == "matmul_chain"
    assert str(scripted.graph).startswith("graph(%x : Tensor,\n      %w : Tensor):")
    assert "aten::mm" in str(scripted.graph)
    assert scripted.code.startswith("def matmul_chain(x: Tensor,\n    w: Tensor) -> Tensor:")
    assert scripted.schema == "matmul_chain(Tensor x, Tensor w) -> Tensor"
    assert "aten::mm" in str(scripted.graph_for(torch.ones(2, 8), torch.ones(8, 2)))
    assert "prim::CallFunction" not in str(torch.jit.script(calls_scripted).inlined_graph)


def test_script_is_cached_and_idempotent():
    s1 = torch.jit.script(matmul_chain)
    assert torch.jit.script(matmul_chain) is s1
    assert torch.jit.script(s1) is s1
    assert torch.jit.script(traced_helper) is traced_helper
    assert torch.jit.script(scripted_helper) is scripted_helper


def test_closure_variables_and_nested_defs():
    scale = 3
    offset = 0.5

    def inner(x: Tensor) -> Tensor:
        return x * scale + offset

    def outer(x: Tensor) -> Tensor:
        return inner(x).relu()
    x = torch.randn(3, 3)
    same(torch.jit.script(outer)(x), outer(x))


def test_source_with_multiline_signature_and_flush_left_docstring():
    def spread(
        x: Tensor,
        k: int = 2,
    ) -> Tensor:
        """A docstring
whose second line starts at column 0."""
        return x * k
    x = torch.randn(2, 2)
    scripted = torch.jit.script(spread)
    same(scripted(x), spread(x))
    same(scripted(x, 5), spread(x, 5))


def test_decorated_with_script_directly():
    @torch.jit.script
    def twice(x: Tensor) -> Tensor:
        return x + x
    assert isinstance(twice, torch.jit.ScriptFunction)
    same(twice(torch.ones(2)), torch.full([2], 2.0))


def test_assert_and_raise_at_run_time():
    scripted = torch.jit.script(assert_and_raise)
    with pytest.raises(Exception, match="n must be non-negative"):
        scripted(torch.ones(2), -1)
    with pytest.raises(Exception, match="n is too large"):
        scripted(torch.ones(2), 101)


# ---- Name resolution ------------------------------------------------------------------------------

def test_resolver_descriptors():
    import typing
    from ampjit.jit import _script
    d = _script._describe
    assert d(torch) == ("namespace", "torch")
    assert d(F) == ("namespace", "torch.nn.functional")
    assert d(nn) == ("namespace", "torch.nn")
    assert d(torch.jit) == ("namespace", "torch.jit")
    assert d(torch.cuda.amp) == ("namespace", "torch.cuda.amp")
    assert d(torch.cpu.amp) == ("namespace", "torch.cpu.amp")
    assert d(math) == ("namespace", "math")
    assert d(imported_relu) == ("namespace", "torch.relu")
    # F.gelu is torch.gelu, as in torch (an op bound by name in nn/functional.py); F.silu is a def.
    assert d(imported_gelu) == ("namespace", "torch.gelu")
    assert d(F.silu) == ("namespace", "torch.nn.functional.silu")
    assert d(F.max_pool2d) == ("namespace", "torch.nn.functional.max_pool2d")
    assert d(F.softplus) == ("namespace", "torch._C._nn.softplus")
    assert d(math.sqrt) == ("namespace", "math.sqrt")
    assert d(torch.autocast) == ("autocast", "torch.autocast")
    assert d(torch.amp.autocast) == ("autocast", "torch.autocast")
    assert d(ampjit_cpu_autocast()) == ("autocast", "torch.cpu.amp.autocast")
    assert d(torch.cuda.amp.autocast) == ("autocast", "torch.cuda.amp.autocast")
    assert d(3) == ("constant", 3) and d(None) == ("constant", None) and d("s") == ("constant", "s")
    assert d(torch.float16) == ("constant", torch.float16)
    assert d(typing.Optional) == ("namespace", "typing.Optional")
    assert d(scripted_helper) == ("function", scripted_helper._c)
    kind, text, filename, first_line, resolver, identity = d(helper)
    assert kind == "source" and text.startswith("def helper(") and filename == HERE
    assert first_line == helper.__code__.co_firstlineno and identity == id(helper)
    assert resolver("torch") == ("namespace", "torch") and resolver("no_such_name") == ("unknown",)
    assert resolver("len") == ("unknown",)
    assert d({}) == ("unsupported", "python value of type 'dict' cannot be used in script")
    assert d([1]) == ("unsupported", "python value of type 'list' cannot be used in script")
    assert d((1, 2.5, "a")) == ("constant", (1, 2.5, "a"))
    assert d(2 ** 64) == ("unsupported", "the integer 18446744073709551616 does not fit in script's int (64-bit)")
    # An autocast decorator: the decorated function's source with its decorator (the compiler makes
    # it torch's error or a region, by semantics); decorated by a call, there is no source for it.
    kind, text, filename, first_line, _, identity = d(autocast_decorated)
    assert kind == "source" and text.startswith('@torch.autocast("cpu")\ndef autocast_decorated(')
    assert first_line == line_of(autocast_decorated, "@torch.autocast") and identity == id(autocast_decorated)
    assert d(torch.autocast("cpu")(helper)) == (
        "unsupported", "TorchScript error: @autocast() decorator is not supported in script mode")


def ampjit_cpu_autocast():
    import ampjit.cpu.amp
    return ampjit.cpu.amp.autocast


# ---- Diagnostics ----------------------------------------------------------------------------------

def bad_undefined(x: Tensor) -> Tensor:
    y = x + 1.0
    return y * not_defined_anywhere  # noqa: F821


def bad_argument_type(x: Tensor) -> Tensor:
    return torch.mm(x, "weights")


def bad_construct(x: Tensor) -> Tensor:
    try:
        x = x + 1.0
    except Exception:
        pass
    return x


def bad_callee(x: Tensor) -> Tensor:
    return x + missing_in_callee  # noqa: F821


def calls_bad_callee(x: Tensor) -> Tensor:
    y = x * 2.0
    return bad_callee(y)


@torch.autocast("cpu")
def autocast_decorated(x: Tensor) -> Tensor:
    return torch.mm(x, x)


def calls_autocast_decorated(x: Tensor) -> Tensor:
    return autocast_decorated(x)


UNSUPPORTED_GLOBAL = {"a": 1}


def uses_unsupported_global(x: Tensor) -> Tensor:
    return x * UNSUPPORTED_GLOBAL


def compile_error(fn):
    with pytest.raises(CompileError) as info:
        torch.jit.script(fn)
    assert isinstance(info.value, RuntimeError)
    return str(info.value)


def test_error_undefined_name_points_at_the_user_line():
    line = line_of(bad_undefined, "not_defined_anywhere")
    assert compile_error(bad_undefined) == (
        "{}:{}:16: undefined value not_defined_anywhere\n"
        "    return y * not_defined_anywhere  # noqa: F821\n"
        "               ~~~~~~~~~~~~~~~~~~~~".format(HERE, line))


def test_error_argument_type_names_the_argument():
    msg = compile_error(bad_argument_type)
    line = line_of(bad_argument_type, "torch.mm")
    assert msg.startswith("{}:{}:12: Arguments for call to aten::mm are not valid.".format(HERE, line)), msg
    assert "Expected a value of type 'Tensor' for argument 'mat2' but instead found type 'str'." in msg
    assert msg.endswith('    return torch.mm(x, "weights")\n           ~~~~~~~~~~~~~~~~~~~~~~')


def test_error_unsupported_construct():
    # torch.jit.frontend.UnsupportedNodeError, as torch raises for `try`: not a RuntimeError
    with pytest.raises(torch.jit.frontend.UnsupportedNodeError) as info:
        torch.jit.script(bad_construct)
    assert not isinstance(info.value, RuntimeError)
    assert str(info.value) == (
        "{}:{}:5: try statements are not supported in script\n    try:\n    ~~~".format(
            HERE, line_of(bad_construct, "try:")))


def test_error_in_callee_carries_the_call_chain():
    assert compile_error(calls_bad_callee) == (
        "{}:{}:16: undefined value missing_in_callee\n"
        "    return x + missing_in_callee  # noqa: F821\n"
        "               ~~~~~~~~~~~~~~~~~\n"
        "  called from {}:{}:12\n"
        "    return bad_callee(y)\n"
        "           ~~~~~~~~~~~~~".format(HERE, line_of(bad_callee, "missing_in_callee"), HERE,
                                          line_of(calls_bad_callee, "bad_callee(y)")))


def test_error_autocast_decorator_in_torchscript_semantics():
    decorator = line_of(autocast_decorated, "@torch.autocast")
    assert compile_error(calls_autocast_decorated) == (
        "{}:{}:2: TorchScript error: @autocast() decorator is not supported in script mode\n"
        "@torch.autocast(\"cpu\")\n"
        " ~~~~~~~~~~~~~~~~~~~~~\n"
        "  called from {}:{}:12\n"
        "    return autocast_decorated(x)\n"
        "           ~~~~~~~~~~~~~~~~~~~~~".format(HERE, decorator, HERE,
                                                  line_of(calls_autocast_decorated, "return autocast_decorated")))
    assert compile_error(autocast_decorated).startswith(
        "{}:{}:2: TorchScript error: @autocast() decorator is not supported in script mode\n".format(HERE, decorator))


@pytest.mark.parametrize("fn", [autocast_decorated, calls_autocast_decorated], ids=["decorated", "caller"])
def test_autocast_decorator_is_a_region_in_eager_semantics(fn):
    scripted = torch.jit.script(fn, autocast_semantics="eager")
    x = torch.randn(4, 4)
    same(scripted(x), fn(x))
    assert scripted(x).dtype == torch.bfloat16
    assert scripted._autocast_semantics == "eager"


def test_script_autocast_semantics_argument_is_checked():
    with pytest.raises(ValueError, match="'torchscript' or 'eager'"):
        torch.jit.script(matmul_chain, autocast_semantics="Eager")
    pinned = torch.jit.script(matmul_chain, autocast_semantics="torchscript")
    assert pinned is not torch.jit.script(matmul_chain)  # cached per semantics
    assert pinned._autocast_semantics == "torchscript" and torch.jit.script(matmul_chain)._autocast_semantics is None


def test_error_unsupported_python_value():
    assert compile_error(uses_unsupported_global).startswith(
        "{}:{}:16: python value of type 'dict' cannot be used in script\n".format(
            HERE, line_of(uses_unsupported_global, "UNSUPPORTED_GLOBAL"))), compile_error(uses_unsupported_global)


def test_error_column_in_an_indented_def_is_the_users():
    def nested(x: Tensor) -> Tensor:
        return x + nested_missing  # noqa: F821
    msg = compile_error(nested)
    assert msg.startswith("{}:{}:20: undefined value nested_missing".format(HERE, line_of(nested, "nested_missing")))


def test_compile_error_is_exported():
    assert issubclass(torch.jit.CompileError, RuntimeError)


# ---- Modules ----------------------------------------------------------------------------------------

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
        self.pool = nn.MaxPool2d(2)
        self.flat = nn.Flatten()
        self.head = nn.Linear(4 * 4 * 4, 5)

    def forward(self, x):
        h = self.pool(torch.relu(self.bn(self.conv(x))))
        return self.head(self.flat(h)), h


class Stack(nn.Module):
    """A ModuleList looped over, a Final constant, a plain attribute and a helper method."""
    depth: Final[int] = 3

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(6, 6) for _ in range(self.depth)])
        self.alpha = 0.5

    def mix(self, x: Tensor, y: Tensor) -> Tensor:
        return self.alpha * x + (1.0 - self.alpha) * y

    def forward(self, x):
        for layer in self.layers:
            x = self.mix(torch.tanh(layer(x)), x)
        return x * self.depth


class Scaler(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("factor", torch.full([1], 2.0))

    def scale(self, x: Tensor) -> Tensor:
        return x * self.factor

    def forward(self, x):
        return self.scale(x) + 1.0


class CallsSubmoduleMethod(nn.Module):
    def __init__(self):
        super().__init__()
        self.scaler = Scaler()
        self.lin = nn.Linear(5, 5)

    def forward(self, x):
        return self.scaler.scale(self.lin(x))


def module_cases():
    torch.manual_seed(0)
    yield "MLP", MLP().eval(), (torch.randn(3, 8),)
    yield "ConvNet", ConvNet().eval(), (torch.randn(2, 3, 8, 8),)
    yield "Sequential", nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 3),
                                      nn.Softmax(dim=-1)).eval(), (torch.randn(4, 8),)
    yield "Stack", Stack(), (torch.randn(2, 6),)
    yield "CallsSubmoduleMethod", CallsSubmoduleMethod(), (torch.randn(2, 5),)


MODULES = list(module_cases())


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
@pytest.mark.parametrize("name,mod,args", MODULES, ids=[c[0] for c in MODULES])
def test_scripted_module_matches_eager_bitwise(name, mod, args, state, eager_autocast_only):
    scripted = torch.jit.script(mod)
    same(under(state, scripted, args), under(state, mod, args))


def layer_cases():
    torch.manual_seed(0)
    img = torch.randn(2, 3, 6, 6)
    yield "Linear", nn.Linear(6, 3), (img,)
    yield "Conv1d", nn.Conv1d(3, 2, 3, stride=2), (torch.randn(1, 3, 9),)
    yield "Conv2d", nn.Conv2d(3, 2, 3, padding=1, dilation=1, groups=1, bias=False), (img,)
    yield "ConvTranspose2d", nn.ConvTranspose2d(3, 2, 3, stride=2), (img,)
    yield "BatchNorm2d-train", nn.BatchNorm2d(3), (img,)
    yield "BatchNorm2d-eval", nn.BatchNorm2d(3).eval(), (img,)
    yield "BatchNorm2d-no-stats", nn.BatchNorm2d(3, affine=False, track_running_stats=False), (img,)
    yield "LayerNorm", nn.LayerNorm([6, 6]), (img,)
    yield "GroupNorm", nn.GroupNorm(3, 3), (img,)
    yield "Embedding", nn.Embedding(10, 4, padding_idx=0), (torch.tensor([[1, 2, 0]]),)
    yield "MaxPool2d", nn.MaxPool2d(2), (img,)
    yield "AvgPool2d", nn.AvgPool2d(2, stride=1), (img,)
    yield "AdaptiveAvgPool2d", nn.AdaptiveAvgPool2d((1, 1)), (img,)
    yield "Flatten", nn.Flatten(), (img,)
    yield "Identity", nn.Identity(), (img,)
    yield "Dropout-eval", nn.Dropout(0.5).eval(), (img,)
    yield "ReLU", nn.ReLU(), (img,)
    yield "GELU-tanh", nn.GELU(approximate="tanh"), (img,)
    yield "SiLU", nn.SiLU(), (img,)
    yield "Sigmoid", nn.Sigmoid(), (img,)
    yield "Tanh", nn.Tanh(), (img,)
    yield "Softmax", nn.Softmax(dim=1), (img,)
    yield "LogSoftmax", nn.LogSoftmax(dim=-1), (img,)
    yield "MSELoss", nn.MSELoss(), (img, img * 0.5)
    yield "CrossEntropyLoss", nn.CrossEntropyLoss(), (torch.randn(3, 5), torch.tensor([1, 0, 4]))


LAYERS = list(layer_cases())


@pytest.mark.parametrize("state", STATES, ids=STATE_IDS)
@pytest.mark.parametrize("name,mod,args", LAYERS, ids=[c[0] for c in LAYERS])
def test_builtin_layers_script_like_eager(name, mod, args, state, eager_autocast_only):
    # Each ampjit layer compiles from its scriptable forward (written as torch's), reading the
    # same weights; in training mode the BatchNorm running statistics move the same way.
    scripted = torch.jit.script(mod)
    if name == "BatchNorm2d-train":
        before = mod.running_mean.clone()
        got = under(state, scripted, args)
        after_script = mod.running_mean.clone()
        mod.running_mean.copy_(before)
        mod.num_batches_tracked.zero_()
        same(got, under(state, mod, args))
        same(after_script, mod.running_mean)
        return
    same(under(state, scripted, args), under(state, mod, args))


def test_layer_with_tuple_constant_and_string_padding_scripts_like_eager():
    # padding="same" is a str constant of the layer: script picks aten::conv2d.padding, as torch.
    torch.manual_seed(0)
    conv = nn.Conv2d(3, 2, 4, padding="same", dilation=(1, 2))
    x = torch.randn(1, 3, 6, 7)
    scripted = torch.jit.script(conv)
    assert torch.equal(scripted(x), conv(x))


def test_resolver_failure_is_a_compile_error():
    class Hostile:
        def __getattr__(self, name):
            raise ValueError("no attributes here")
    hostile = Hostile()

    def uses_hostile(x: Tensor) -> Tensor:
        return x * hostile
    with pytest.raises(CompileError, match="resolving 'hostile' failed: ValueError: no attributes here"):
        torch.jit.script(uses_hostile)


def test_scripted_module_api_and_shared_parameters():
    torch.manual_seed(0)
    mlp = MLP().eval()
    scripted = torch.jit.script(mlp)
    assert isinstance(scripted, torch.jit.ScriptModule) and isinstance(scripted, nn.Module)
    assert "prim::GetAttr" in str(scripted.graph)
    assert str(scripted.graph).startswith("graph(%self : __torch__.test_script.MLP,")
    assert "def forward(self" in scripted.code
    assert scripted.fc1.weight is mlp.fc1.weight
    assert repr(scripted.fc1) == "RecursiveScriptModule(original_name=Linear)"  # torch's repr
    assert [n for n, _ in scripted.named_parameters()] == [n for n, _ in mlp.named_parameters()]
    x = torch.randn(2, 8)
    before = scripted(x)
    with torch.no_grad():
        mlp.fc2.weight.mul_(2.0)  # in place on the shared tensor: the next call sees it
    same(scripted(x), mlp(x))
    assert before.tolist() != scripted(x).tolist()
    scripted.fc2.bias = nn.Parameter(torch.zeros(4))  # assignment re-points the graph's attribute
    mlp.fc2.bias = scripted.fc2.bias
    same(scripted(x), mlp(x))


class WithDefault(nn.Module):
    def forward(self, x: Tensor, scale: float = 2.0) -> Tensor:
        return x * scale


def test_scripted_module_forward_keywords_defaults_and_to():
    scripted = torch.jit.script(WithDefault())
    x = torch.ones(2)
    same(scripted(x), x * 2.0)
    same(scripted(x, scale=3), x * 3.0)  # an int for a float parameter, as in torch
    same(scripted.forward(x, 4.0), x * 4.0)
    torch.manual_seed(0)
    seq = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    s = torch.jit.script(seq).double()  # to() re-points the graph's attributes at the new tensors
    xd = torch.randn(2, 4).double()
    assert s(xd).dtype == torch.float64
    same(s(xd), seq.double()(xd))


def test_scripted_module_train_eval_reaches_the_graph():
    torch.manual_seed(0)
    seq = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    scripted = torch.jit.script(seq.eval())
    x = torch.randn(64, 4)
    same(scripted(x), seq(x))
    scripted.train()
    assert scripted.training and scripted[1].training
    out = scripted(x)
    assert (out == 0).sum().item() > 0  # dropout is active again


def test_scripted_module_plain_attribute_update_and_constant():
    torch.manual_seed(0)
    m = Stack()
    scripted = torch.jit.script(m)
    x = torch.randn(2, 6)
    scripted.alpha = 0.25
    m.alpha = 0.25
    same(scripted(x), m(x))
    with pytest.raises(RuntimeError, match="constant 'depth'"):
        scripted.depth = 4


def test_scripted_module_keyword_call_and_errors_point_at_method():
    class Broken(nn.Module):
        def forward(self, x):
            return self.undefined_attribute + x
    with pytest.raises(CompileError) as info:
        torch.jit.script(Broken())
    assert "{}:{}:".format(HERE, line_of(Broken.forward, "undefined_attribute")) in str(info.value)


# ---- Threads ----------------------------------------------------------------------------------------

def mm_gelu(x: Tensor, w: Tensor) -> Tensor:
    return F.gelu(torch.mm(x, w)) * 2.0


@pytest.mark.parametrize("jit_pass", [False, True], ids=["eager-autocast-only", "jit-pass"])
def test_one_script_called_from_eight_threads_with_their_own_autocast(jit_pass):
    old = _C._jit_set_autocast_mode(jit_pass)
    try:
        torch.manual_seed(0)
        x, w = torch.randn(16, 32), torch.randn(32, 8)
        scripted = torch.jit.script(mm_gelu)
        # With the pass on, torch 1.13's JIT lists run gelu in float32 under CPU autocast where
        # eager keeps bfloat16 (torch does the same): each thread must get what one thread gets.
        ref = scripted if jit_pass else mm_gelu
        with torch.autocast("cpu"):
            expected_ac = ref(x, w)
        expected = ref(x, w)
        errors = []
        barrier = threading.Barrier(8)

        def work(i):
            try:
                barrier.wait()
                for _ in range(50):
                    with torch.autocast("cpu", enabled=i % 2 == 0):
                        got = scripted(x, w)
                    same(got, expected_ac if i % 2 == 0 else expected)
            except Exception as e:  # noqa: BLE001 - reported below
                errors.append(e)
        threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
    finally:
        _C._jit_set_autocast_mode(old)


def test_scripted_and_traced_modules_share_one_base():
    # One definition of what the two compiled-module kinds share (jit/_module.py): the runtime
    # object's resync after to()/double(), forward, graph and code.
    from ampjit.jit._module import compiled_module_base
    m = torch.nn.Sequential(torch.nn.Linear(3, 2, bias=False), torch.nn.ReLU())
    x = torch.randn(4, 3)
    scripted = torch.jit.script(m)
    traced = torch.jit.trace(m, x)
    base = compiled_module_base()
    for compiled in (scripted, traced):
        assert isinstance(compiled, base) and isinstance(compiled, torch.jit.ScriptModule)
        assert type(compiled)._sync is base._sync and type(compiled).graph is base.graph
        compiled.double()  # resyncs the runtime object: the graph reads the float64 weight
        assert compiled(x.double()).dtype == torch.float64
