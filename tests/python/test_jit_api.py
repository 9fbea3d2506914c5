"""torch.jit's function modifiers and small torch API pieces that model files use (issue 15):
jit.unused / ignore / export / _overload_method, torch._assert, op aliases (torch.divide ...),
torch.fx.wrap and torch.utils.checkpoint."""
from typing import Any, Optional

import pytest

import ampjit as torch
import ampjit.nn as nn


class WithUnused(nn.Module):
    def forward(self, x):
        if torch.jit.is_scripting():
            return x + 1
        return self.python_only(x)

    @torch.jit.unused
    def python_only(self, x):
        return x.numpy()  # not scriptable: script compiles a stub


class CallsUnused(nn.Module):
    def forward(self, x):
        return self.helper(x)

    @torch.jit.unused
    def helper(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def test_unused_method_compiles_as_a_stub_that_raises():
    x = torch.ones(2)
    assert isinstance(WithUnused()(x), type(x.numpy()))  # Python runs it as written
    scripted = torch.jit.script(WithUnused())
    assert torch.equal(scripted(x), x + 1)
    called = torch.jit.script(CallsUnused())
    # torch.jit.Error, as torch raises it: not a RuntimeError
    with pytest.raises(torch.jit.Error, match="This Python function is annotated to be ignored and cannot be run"):
        called(x)


def test_ignored_method_is_a_compile_error_naming_it():
    class M(nn.Module):
        def forward(self, x):
            return self.py(x)

        @torch.jit.ignore
        def py(self, x):
            return x

    assert torch.equal(M()(torch.ones(1)), torch.ones(1))
    with pytest.raises(torch.jit.CompileError, match=r"M\.py is decorated with @torch\.jit\.ignore"):
        torch.jit.script(M())


def test_overload_declarations_keep_the_last_definition():
    class M(nn.Module):
        @torch.jit._overload_method  # noqa: F811
        def forward(self, x):
            pass

        def forward(self, x):  # noqa: F811
            return x * 3

    assert torch.equal(torch.jit.script(M())(torch.ones(1)), torch.full([1], 3.0))


def test_assert_in_python_and_script():
    def f(x):
        torch._assert(x.sum() > 0, "positive")
        return x

    scripted = torch.jit.script(f)
    assert torch.equal(scripted(torch.ones(2)), torch.ones(2))
    with pytest.raises(AssertionError, match="positive"):
        f(-torch.ones(2))
    with pytest.raises(torch.jit.Error, match="AssertionError: positive") as e:
        scripted(-torch.ones(2))
    assert not isinstance(e.value, RuntimeError)


def test_op_aliases_are_their_ops():
    x = torch.tensor([1.0, -2.0, 3.0])
    assert torch.divide is torch.div and torch.multiply is torch.mul
    assert torch.equal(x.subtract(1), x - 1) and torch.equal(torch.clip(x, -1, 1), torch.clamp(x, -1, 1))

    def f(a):
        return torch.divide(a, 2), a.multiply(a), torch.greater(a, 0)

    g = str(torch.jit.script(f).graph)
    # As torch's graphs after its normalization of aliases (normalize_ops.cpp).
    assert "aten::div(" in g and "aten::mul(" in g and "aten::gt(" in g and "divide" not in g


def test_fx_wrap_and_checkpoint():
    import ampjit.fx
    import ampjit.utils.checkpoint as cp
    fn = ampjit.fx.wrap("name")
    assert fn == "name"
    lin = nn.Linear(2, 2)
    x = torch.ones(1, 2)
    assert torch.equal(cp.checkpoint(lin, x), lin(x))
    assert torch.equal(cp.checkpoint_sequential(nn.Sequential(lin, nn.ReLU()), 1, x), torch.relu(lin(x)))


def _pieces(torch_):
    def f(x):
        a = x.chunk(3, 1)
        b = torch_.split(x, 2, dim=0)
        c = x.unbind(1)
        return a[0], a[2], b[1], c[3], torch_.diff(x, dim=1), torch_.diff(x, n=2, dim=0)
    return f


def test_chunk_split_unbind_diff_match_torch_eager_and_scripted(torch_ref):
    import numpy as np
    x = np.random.default_rng(3).standard_normal((5, 7)).astype(np.float32)
    want = [t.numpy() for t in _pieces(torch_ref)(torch_ref.from_numpy(x))]
    for fn in (_pieces(torch), torch.jit.script(_pieces(torch))):
        got = [t.numpy() for t in fn(torch.from_numpy(x))]
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        torch.ones(3).chunk(0)
    with pytest.raises(RuntimeError, match="chunk expects `chunks` to be greater than 0, got: 0"):
        torch_ref.ones(3).chunk(0)
    b = torch.diff(torch.tensor([True, False, False, True]))
    assert b.tolist() == torch_ref.diff(torch_ref.tensor([True, False, False, True])).tolist()


# ---- f-strings and the frontend's error classes ------------------------------------------------------

def _fstrings(x: int, s: str, t: float):
    a = f"a{x}b{s}c{{x}}" + f'{x + 1}'
    b = F"{[x, x * 2]} {t} {x > 2}" f"|{s!='q'}"
    return a + b


def test_fstrings_are_format_calls_as_in_torch(torch_ref):
    want = torch_ref.jit.script(_fstrings)(3, "q", 0.5)
    assert _fstrings(3, "q", 0.5) == want  # torch's script agrees with Python here
    assert torch.jit.script(_fstrings)(3, "q", 0.5) == want
    graph = str(torch.jit.script(_fstrings).graph)
    assert "aten::format" in graph


def _conversion(x: int):
    return f"{x!r}"


def _two_generators(x: int):
    return [y for y in range(x) for z in range(2)]


def _try(x: int):
    try:
        return x
    except Exception:
        return 0


def _lambda(x: int):
    return (lambda: 1)()


@pytest.mark.parametrize("fn", [_conversion, _two_generators, _try, _lambda])
def test_unsupported_syntax_raises_torch_frontend_classes(fn, torch_ref):
    with pytest.raises(Exception) as theirs:
        torch_ref.jit.script(fn)
    with pytest.raises(Exception) as ours:
        torch.jit.script(fn)
    # the same class (by name), in the same place of the hierarchy: not a RuntimeError
    assert type(ours.value).__name__ == type(theirs.value).__name__
    assert [c.__name__ for c in type(ours.value).__mro__] == [c.__name__ for c in type(theirs.value).__mro__]
    assert not isinstance(ours.value, RuntimeError)
    assert isinstance(ours.value, torch.jit.frontend.NotSupportedError)
    assert type(ours.value).__module__ == "ampjit.jit.frontend"
    line = fn.__code__.co_firstlineno + 1
    assert ":{}:".format(line) in str(ours.value).splitlines()[0]


def test_a_type_error_in_script_is_a_runtime_error():
    def bad(x: int):
        return x + "a"
    with pytest.raises(RuntimeError) as e:
        torch.jit.script(bad)
    assert isinstance(e.value, torch.jit.CompileError)


def _generator(x: int):
    return sum(y * 2 for y in range(x)) + len([y for y in range(x)])


def test_generator_expressions_compile_as_list_comprehensions(torch_ref):
    assert torch.jit.script(_generator)(5) == torch_ref.jit.script(_generator)(5) == _generator(5)


# ---- traced modules: check_inputs of another shape, repr, code -------------------------------------

def _nested(L):
    class Sub(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = L.nn.Linear(3, 3)

        def forward(self, x):
            return L.relu(self.lin(x))

    class Top(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.sub = Sub()

        def forward(self, x):
            return self.sub(x) * 2
    return Top()


def test_traced_module_check_inputs_repr_and_code_as_torch(torch_ref):
    # another batch size in check_inputs: torch compares the graphs without shapes, so does ampjit
    got = torch.jit.trace(_nested(torch), (torch.ones(2, 3),), check_inputs=[(torch.ones(4, 3),)])
    want = torch_ref.jit.trace(_nested(torch_ref), (torch_ref.ones(2, 3),), check_inputs=[(torch_ref.ones(4, 3),)])
    assert repr(got) == repr(want)  # original_name on every level
    assert "original_name=Sub" in repr(got)
    code = got.code
    assert code.startswith("def forward(self,\n    x: Tensor) -> Tensor:\n") and "__torch__.forward" not in code
    # a graph that really differs still fails the check
    def branchy(x):
        return x * 2 if x.shape[0] == 2 else x + 1
    with pytest.raises(torch.jit.TracingCheckError, match="Graphs differed|different lengths|First diverging"):
        torch.jit.trace(branchy, (torch.ones(2, 3),), check_inputs=[(torch.ones(4, 3),)])


def _raises(x):
    if x.sum() > 0:
        raise ValueError("boom")
    return x


def test_raise_in_script_is_torch_jit_error(torch_ref):
    for L in (torch_ref, torch):
        with pytest.raises(L.jit.Error, match="boom") as e:
            L.jit.script(_raises)(L.ones(1))
        assert [c.__name__ for c in type(e.value).__mro__] == ["Error", "Exception", "BaseException", "object"]
    # ampjit's message: the exception's name and text, at the raise statement's line
    with pytest.raises(torch.jit.Error) as e:
        torch.jit.script(_raises)(torch.ones(1))
    line = _raises.__code__.co_firstlineno + 2
    assert str(e.value).startswith("{}:{}:9: ValueError: boom".format(__file__, line))


# ---- jit.isinstance, fork/wait, Attribute, interface, script_if_tracing ----------------------------

def test_jit_api_pieces_as_torch(torch_ref):
    from typing import Dict, List, Optional, Tuple
    for L in (torch_ref, torch):
        checks = [L.jit.isinstance([1, 2], List[int]), L.jit.isinstance([1.0], List[int]),
                  L.jit.isinstance({"a": L.ones(1)}, Dict[str, L.Tensor]), L.jit.isinstance(None, Optional[int]),
                  L.jit.isinstance((1, "a"), Tuple[int, str]), L.jit.isinstance((1, 2), Tuple[int, str])]
        assert checks == [True, False, True, True, True, False]
        fut = L.jit.fork(lambda a, b: a + b, L.ones(2), L.ones(2))
        assert L.jit.wait(fut).tolist() == [2.0, 2.0]
        attr = L.jit.Attribute([1], List[int])
        assert attr.value == [1] and attr.type == List[int]

        @L.jit.interface
        class Iface(L.nn.Module):
            def forward(self, x: L.Tensor) -> L.Tensor:
                pass
        assert Iface is not None


@torch.jit.script_if_tracing
def _data_dependent(x):
    if x.sum() > 0:
        return x * 2
    return x


def test_script_if_tracing_keeps_control_flow_in_a_trace():
    traced = torch.jit.trace(lambda x: _data_dependent(x) + 1, (torch.ones(2),))
    assert traced(-torch.ones(2)).tolist() == [0.0, 0.0]  # the branch the trace did not take
    assert traced(torch.ones(2)).tolist() == [3.0, 3.0]
    assert _data_dependent(torch.ones(2)).tolist() == [2.0, 2.0]  # Python, outside a trace


# ---- str methods in script ---------------------------------------------------------------------------

def _str_methods(s: str, sep: str):
    parts = s.split(sep)
    words = ("  " + s + " \n").split()
    return (parts, words, sep.join(parts), s.startswith("ab"), s.endswith("z"), s.upper().lower(),
            ("  " + s + "  ").strip(), ("xx" + s).lstrip("x"), s.rstrip("z"), s.replace("b", "BB"),
            s.find("c"), s.count("b"), "123".isdigit(), s.isalpha(), " \t".isspace(), s.split(sep, 1))


@pytest.mark.parametrize("s,sep", [("ab,cb,z", ","), ("abc", "b"), ("a  b", " "), ("", ",")])
def test_str_methods_in_script_as_torch(s, sep, torch_ref):
    want = torch_ref.jit.script(_str_methods)(s, sep)
    assert tuple(want) == _str_methods(s, sep)  # torch's script agrees with Python here
    assert tuple(torch.jit.script(_str_methods)(s, sep)) == tuple(want)


# ---- fork/wait in script; Any values and isinstance refinement ------------------------------------

def _work(x: torch.Tensor, k: int) -> torch.Tensor:
    return x * k


def _forks(x: torch.Tensor) -> torch.Tensor:
    futs = [torch.jit.fork(_work, x, k) for k in range(3)]
    return torch.stack([torch.jit.wait(f) for f in futs]).sum(0)


def _any_arg(a: Any, x: torch.Tensor, y: Optional[torch.Tensor]) -> torch.Tensor:
    if isinstance(a, int):
        x = x + a
    elif isinstance(a, str):
        x = x * len(a)
    if isinstance(y, torch.Tensor):
        x = x - y
    return x


def test_fork_wait_and_any_in_script_as_torch(torch_ref):
    x = torch.ones(2)
    assert torch.jit.script(_forks)(x).tolist() == [3.0, 3.0]
    s = torch.jit.script(_any_arg)
    got = [s(3, x, None).tolist(), s("ab", x, x).tolist(), s(1.5, x, None).tolist()]
    assert got == [[4.0, 4.0], [1.0, 1.0], [1.0, 1.0]]
    assert got == [_any_arg(3, x, None).tolist(), _any_arg("ab", x, x).tolist(), _any_arg(1.5, x, None).tolist()]


@torch.jit.interface
class _Iface(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        pass


class _Impl(_Iface):
    def forward(self, x, y):
        return torch.mm(x, y)


class _Holder(nn.Module):
    impl: _Iface

    def forward(self, x, y):
        with torch.cpu.amp.autocast():
            a = torch.mm(x, y)
            return self.impl.forward(a, x)


def test_a_scripted_submodule_is_reused_when_its_parent_is_scripted():
    # (PyTorch's test_jit_call_method_under_autocast, on the CPU)
    holder = _Holder()
    holder.impl = torch.jit.script(_Impl())
    scripted = torch.jit.script(holder)
    x, y = torch.rand(2, 2), torch.rand(2, 2)
    with torch.cpu.amp.autocast():
        got = scripted.forward(x, y)
    assert got.dtype == torch.bfloat16
    assert float((got.float() - torch.mm(torch.mm(x, y), x)).abs().max()) < 0.05
    assert scripted.impl is holder.impl or scripted.impl._c is holder.impl._c  # the same runtime object


# ---- interface-typed attributes: calls stay calls (Note [Interface calls]) --------------------------

@torch.jit.interface
class _MmIface(torch.nn.Module):
    def forward(self, x, y) -> torch.Tensor:
        pass


class _MmImpl(_MmIface):
    def forward(self, x, y):
        return torch.mm(x, y)


class _CallsThroughInterface(torch.nn.Module):
    impl: _MmIface

    def forward(self, x, y):
        with torch.cpu.amp.autocast():
            a = torch.mm(x, y)
            return self.impl.forward(a, x)


class _CallsPlainSubmodule(torch.nn.Module):
    def forward(self, x, y):
        with torch.cpu.amp.autocast():
            a = torch.mm(x, y)
            return self.impl.forward(a, x)


def test_interface_calls_stay_calls_as_torch():
    # torch 1.13 (test_jit_call_method_under_autocast, on CPU): under eager autocast the region's
    # state is the eager one and the call runs; without it the JIT autocast pass refuses the call.
    thing = _CallsThroughInterface()
    thing.impl = torch.jit.script(_MmImpl())
    scripted = torch.jit.script(thing)
    assert "interface_call" in str(scripted.graph) and "prim::CallFunction" in str(scripted.graph)
    x, y = torch.rand(2, 2), torch.rand(2, 2)
    with torch.cpu.amp.autocast():
        out = scripted(x, y)
    assert out.dtype is torch.bfloat16
    torch.testing.assert_close(out.float(), torch.mm(torch.mm(x, y), x), atol=0.05, rtol=0.02)
    with pytest.raises(RuntimeError, match="Unexpected prim::CallMethod form with AMP & JIT") as info:
        scripted(x, y)
    assert "{}:{}:".format(__file__, _line_of(_CallsThroughInterface.forward, "self.impl.forward")) in str(info.value)
    # the same code with a plain submodule is inlined and runs either way
    plain = _CallsPlainSubmodule()
    plain.impl = _MmImpl()
    s2 = torch.jit.script(plain)
    assert "prim::CallFunction" not in str(s2.inlined_graph)
    assert s2(x, y).dtype is torch.bfloat16  # the region casts the inlined mm


def _line_of(fn, text):
    import inspect
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)
