"""Script's scalar ops (runtime/ops/scalar.def, flagged kScriptOnly) stay out of Python's namespaces:
no new functions or Tensor methods, no scalar overloads behind the existing ones."""
import pytest

import ampjit


@pytest.mark.parametrize("name", ["__range_length", "__derive_index", "Int", "Float", "Bool", "floordiv",
                                  "__not__", "len", "min", "max"])
def test_script_only_ops_are_not_functions(name):
    if name in ("min", "max"):  # ampjit.min is the tensor reduction, not prim::min.int
        with pytest.raises(TypeError):
            getattr(ampjit, name)(1, 2)
    else:
        assert not hasattr(ampjit, name)


def test_script_only_ops_are_not_tensor_methods():
    for name in ["__range_length", "__derive_index", "floordiv", "__not__", "len", "Int"]:
        assert not hasattr(ampjit.Tensor, name), name


def test_tensor_ops_of_the_same_base_name_still_work():
    x = ampjit.ones(2)
    assert ampjit.add(x, 1).tolist() == [2.0, 2.0]
    assert (x + 1).tolist() == [2.0, 2.0]
    assert (-x).tolist() == [-1.0, -1.0]
    assert ampjit.sqrt(ampjit.full((2,), 4.0)).tolist() == [2.0, 2.0]
    assert x.size() == (2,)
    assert x.size(0) == 2
    assert ampjit.eq(x, 1).tolist() == [True, True]


def test_scalar_overloads_are_not_reachable_from_python():
    # torch.add(1, 2) is a TypeError in torch: no overload takes two numbers.
    with pytest.raises(TypeError):
        ampjit.add(1, 2)
    assert "add.int" not in ampjit.add.__doc__
    with pytest.raises(NotImplementedError):
        ampjit._C._call_overload("aten::add.int", (1, 2), {})
