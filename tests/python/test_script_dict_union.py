"""Dict[K, V] and Union[...] in script (Note [Script dicts] in runtime/ivalue.h; Type::union_).

The same program is scripted by ampjit and, where PyTorch is installed, by torch 1.13's script (the
oracle): results, graph types and schemas must agree. Errors are pinned by message and line."""
import re
from typing import Dict, List, Union

import pytest

import ampjit as torch
from ampjit import nn

PROGRAM = '''
import ampjit as torch
from ampjit import Tensor
from typing import Dict, List, Optional, Tuple, Union


def dict_methods(d: Dict[str, int]) -> Tuple[Optional[int], int, int, List[str], List[int], Dict[str, int], int]:
    a = d.get("x")
    b = d.setdefault("y", 5)
    c = d.pop("y", 7)
    e = dict(d)
    e["z"] = 9
    n = len(e)
    f = {k: v * 2 for k, v in e.items()}
    d2 = d.copy()
    d2.clear()
    return a, b, c, list(e.keys()), list(e.values()), f, n + len(d2) + e.get("nope", 100)


def dict_of_tensors(xs: Dict[str, Tensor], scale: float) -> Dict[str, Tensor]:
    out: Dict[str, Tensor] = {}
    for k in xs:
        out[k + "_s"] = xs[k] * scale
    if "a" in xs:
        out["a2"] = xs["a"] + 1
    for k, v in xs.items():
        if k not in out:
            out[k] = v.relu()
    return out


def int_keys(d: Dict[int, float]) -> Tuple[float, int, bool, bool]:
    s = 0.0
    for k in d:
        s += d[k] * k
    if 3 in d:
        del d[3]
    return s, len(d), 4 in d, bool(d)


def literals(x: Tensor) -> Dict[str, List[int]]:
    shapes = {"x": list(x.shape), "t": list(x.t().shape)}
    more = dict([("n", [x.dim()])])
    shapes.update(more)
    k, v = shapes.popitem()
    shapes[k + "!"] = v
    empty = {}
    shapes["e"] = [len(empty)]
    return shapes


def union_arg(u: Union[int, str, List[int]], x: Tensor) -> Tensor:
    if isinstance(u, int):
        return x + u
    elif isinstance(u, str):
        return x * len(u)
    else:
        return x + sum(u)


def union_none(u: Union[int, float, None]) -> float:
    if u is None:
        return -1.0
    if isinstance(u, int):
        return float(u) * 2
    return u


def missing_key(d: Dict[str, int]) -> int:
    return d["nope"]


def empty_popitem(d: Dict[str, int]) -> Tuple[str, int]:
    return d.popitem()
'''


@pytest.fixture(scope="module")
def programs(program_modules):
    """(module, library) for ampjit and, where torch is installed, for torch."""
    return program_modules("dict_union", PROGRAM)


def plain(v):
    """A comparable form of a result: tensors as lists, containers recursively."""
    if hasattr(v, "tolist"):
        return ("tensor", str(v.dtype).replace("torch.", ""), v.tolist())
    if isinstance(v, dict):
        return {k if not hasattr(k, "tolist") else id(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(plain(x) for x in v)
    return v


def run_both(programs, fname, make_args):
    """Scripts `fname` with each library and calls it with arguments built by make_args(lib)."""
    results = []
    for mod, lib in programs:
        results.append(plain(lib.jit.script(getattr(mod, fname))(*make_args(lib))))
    if len(results) == 2:
        assert results[0] == results[1], fname
    return results[0]


@pytest.mark.parametrize("d", [{"x": 1}, {}, {"y": 3, "x": 2, "q": 8}])
def test_dict_methods_as_torch(programs, d):
    got = run_both(programs, "dict_methods", lambda lib: (dict(d),))
    e = dict(d)
    want_b = e.setdefault("y", 5)
    assert got[0] == d.get("x") and got[1] == want_b and got[2] == want_b


def test_dict_of_tensors_as_torch(programs):
    got = run_both(programs, "dict_of_tensors",
                   lambda lib: ({"a": lib.tensor([1.0, -2.0]), "b": lib.tensor([-3.0])}, 2.0))
    assert list(got) == ["a_s", "b_s", "a2", "a", "b"]  # insertion order, as Python's dict
    assert got["a_s"] == ("tensor", "float32", [2.0, -4.0]) and got["b"] == ("tensor", "float32", [0.0])


def test_int_keys_literals_and_unions_as_torch(programs):
    assert run_both(programs, "int_keys", lambda lib: ({3: 1.5, 4: 2.0},)) == (12.5, 1, True, True)
    got = run_both(programs, "literals", lambda lib: (lib.ones(2, 3),))
    assert got == {"t": [3, 2], "n": [2], "x!": [2, 3], "e": [0]}  # torch's popitem takes the first
    for u, want in ((2, [3.0, 3.0]), ("abc", [3.0, 3.0]), ([1, 2, 3], [7.0, 7.0])):
        assert run_both(programs, "union_arg", lambda lib: (u, lib.ones(2))) == ("tensor", "float32", want)
    for u, want in ((None, -1.0), (3, 6.0), (2.5, 2.5)):
        assert run_both(programs, "union_none", lambda lib: (u,)) == want


def test_graph_types_and_schema_as_torch(programs):
    for mod, lib in programs:
        f = lib.jit.script(mod.union_arg)
        assert re.search(r"%u(\.1)? : Union\(int\[\], int, str\)", str(f.graph))
        assert "prim::isinstance" in str(f.graph)
        assert str(f.schema) == "union_arg(Union(int[], int, str) u, Tensor x) -> Tensor"
        g = lib.jit.script(mod.dict_methods)
        assert re.match(r"graph\(%d(\.1)? : Dict\(str, int\)\):", str(g.graph))
        assert "aten::setdefault" in str(g.graph) and "prim::DictConstruct" in str(g.graph)
        code = lib.jit.script(mod.int_keys).code
        assert "def int_keys(d: Dict[int, float]) -> Tuple[float, int, bool, bool]:" in code


def test_runtime_errors_as_torch(programs):
    for mod, lib in programs:
        with pytest.raises(RuntimeError, match="KeyError: nope"):
            lib.jit.script(mod.missing_key)({"a": 1})
        with pytest.raises(RuntimeError, match=r"popitem\(\): dictionary is empty"):
            lib.jit.script(mod.empty_popitem)({})
        f = lib.jit.script(mod.union_none)
        with pytest.raises(RuntimeError, match=r"Expected a value of type 'Union.float, int, NoneType.' for "
                                               r"argument 'u' but instead found type 'str'"):
            f("s")


@pytest.mark.parametrize("source,message,line", [
    ("def f(d: Dict[str, int]) -> int:\n    return d[1]\n",
     "Expected a value of type 'str' for argument 'key' but instead found type 'int'.", 2),
    ("def f(d: Dict[str, int]):\n    d['a'] = 'b'\n",
     "Expected a value of type 'int' for argument 'value' but instead found type 'str'.", 2),
    ("def f(d: Dict[List[int], int]):\n    return d\n",
     "Dict keys must be str, int, float, bool, Device or Tensor, not int[]", 1),
    ("def f():\n    return {'a': 1, 'b': 'c'}\n",
     "Dict values must contain only a single type, expected: int but found str instead", 2),
    ("def f(d: Dict[str, int]):\n    return d.get('a', 'b')\n",
     "Expected a value of type 'int' for argument 'default_value' but instead found type 'str'.", 2),
    ("def f(d: Dict[str, int]):\n    return d.nope()\n",
     "'Dict(str, int)' object has no method 'nope' in script", 2),
    ("def f(u: Union[int, str]) -> int:\n    return u + 1\n", "Union(int, str)", 2),
    ("def f(x: int):\n    del x\n    return x\n", "undefined value x", 3),
])
def test_compile_errors(source, message, line, script_error_of):
    text, path = script_error_of("bad_dict_union", "from typing import Dict, List, Union\n" + source)
    assert message in text
    assert text.startswith("{}:{}:".format(path, line + 1))  # the import is line 1


def test_python_dicts_cross_the_boundary():
    @torch.jit.script
    def f(d: Dict[str, torch.Tensor]) -> Dict[str, List[int]]:
        return {k: list(v.shape) for k, v in d.items()}
    assert f({"a": torch.ones(2, 3), "b": torch.ones(1)}) == {"a": [2, 3], "b": [1]}
    with pytest.raises(RuntimeError, match=r"Expected a value of type 'Dict\(str, Tensor\)' for argument 'd' "
                                           r"but instead found type 'dict'"):
        f({"a": 1})
    with pytest.raises(RuntimeError, match="but instead found type 'list'"):
        f([1])

    @torch.jit.script
    def g(d: Dict[str, float], u: Union[List[float], str]) -> float:  # ints become floats
        return d["a"] / 2 + (sum(u) if isinstance(u, list) else 0.0)
    assert g({"a": 3}, [1, 2]) == 4.5 and isinstance(g({"a": 3}, "s"), float)


class _Scales(nn.Module):
    def __init__(self):
        super().__init__()
        self.scales = {"a": 1.0, "b": 2.5}
        self.heads = nn.ModuleDict({"a": nn.Identity(), "b": nn.ReLU()})

    def forward(self, x: torch.Tensor) -> Dict[str, torch.Tensor]:
        out: Dict[str, torch.Tensor] = {}
        for name, head in self.heads.items():
            out[name] = head(x) * self.scales[name]
        return out


def test_module_with_a_dict_attribute_and_dict_output():
    m = _Scales()
    x = torch.tensor([-1.0, 2.0])
    s = torch.jit.script(m)
    got, want = s(x), m(x)
    assert list(got) == ["a", "b"] and all(got[k].tolist() == want[k].tolist() for k in want)

