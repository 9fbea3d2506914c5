"""Loss reductions: torch's strings mapped to ATen's int enum (0 none, 1 mean, 2 sum)."""
import warnings


def get_enum(reduction):
    if reduction == "none":
        return 0
    if reduction == "mean":
        return 1
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated, please use reduction='mean' instead.")
        return 1
    if reduction == "sum":
        return 2
    raise ValueError("{} is not a valid value for reduction".format(reduction))


def legacy_get_string(size_average, reduce, emit_warning=True):
    """The reduction string for the deprecated size_average/reduce flags."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    if emit_warning:
        warnings.warn("size_average and reduce args will be deprecated, please use reduction='{}' instead.".format(ret))
    return ret


def legacy_get_enum(size_average, reduce, emit_warning=True):
    return get_enum(legacy_get_string(size_average, reduce, emit_warning))


def resolve(size_average, reduce, reduction):
    """The ATen enum for a loss's (size_average, reduce, reduction) arguments."""
    if size_average is not None or reduce is not None:
        return legacy_get_enum(size_average, reduce)
    return get_enum(reduction)
