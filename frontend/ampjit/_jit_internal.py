"""torch._jit_internal: what script reads from Python code written for both (annotations, dispatch).

``BroadcastingList2[int]`` is a parameter type of torch.nn.functional: a List[int] that also takes
one int, repeated (Note [Broadcasting lists] in script/emit/torch_namespace.cpp).
"""


class _BroadcastingListCls:
    def __getitem__(self, types):
        return self


BroadcastingList1 = _BroadcastingListCls()
BroadcastingList2 = BroadcastingList1
BroadcastingList3 = BroadcastingList1


def boolean_dispatch(arg_name, arg_index, default, if_true, if_false, module_name, func_name):
    """One function of two, picked by the bool argument `arg_name` (at position `arg_index`).
    Script picks at compile time, so the flag must be a constant there (script/emit/
    torch_namespace.cpp reads these calls from nn/functional.py)."""

    def fn(*args, **kwargs):
        if arg_name in kwargs:
            flag = kwargs[arg_name]
        elif arg_index < len(args):
            flag = args[arg_index]
        else:
            flag = default
        return if_true(*args, **kwargs) if flag else if_false(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = func_name
    fn.__module__ = module_name
    fn.__doc__ = if_false.__doc__
    return fn
