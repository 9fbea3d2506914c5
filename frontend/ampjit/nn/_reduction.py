"""torch.nn._reduction: loss reductions as ATen's enum (0 none, 1 mean, 2 sum). The functions are
nn.functional's, which script compiles too (one definition)."""
from .functional import _get_enum as get_enum, _legacy_get_string as legacy_get_string


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))
