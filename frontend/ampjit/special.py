"""torch.special: the ops named aten::special_NAME, and torch's aliases of other ops (special.expit is
torch.sigmoid, special.gammaln is torch.lgamma), as ampjit.special.NAME.

Every function comes from the op table or its alias table (Note [Op aliases] in script/builtins.h),
so script resolves torch.special.NAME to the same op.
"""
from . import _C
from . import _ops


def _install(namespace):
    prefix = "special_"
    for base, _is_method, _inplace in _C._op_table():
        name = base.split("::", 1)[1]
        if name.startswith(prefix):
            namespace.setdefault(name[len(prefix):], _ops._make_function(base)[1])
    import ampjit
    for alias, target in _C._op_aliases():
        if alias.startswith(prefix) and hasattr(ampjit, target):
            namespace.setdefault(alias[len(prefix):], getattr(ampjit, target))


_install(globals())
del _install
