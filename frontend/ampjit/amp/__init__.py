"""ampjit.amp: autocast, plus ampjit's policy profiles and per-op overrides.

Profiles (the op lists autocast applies): "torch-1.13" (default: CPU lists measured from the real
PyTorch 1.13.1), "documented" (the lists of PyTorch's docs), "torch-2". Chosen by the environment
variable AMPJIT_AUTOCAST_PROFILE at import or by set_autocast_profile(name). One op's policy per
device can be overridden: set_op_policy("cpu", "aten::gelu", "fp32").
"""
from .. import _C
from .autocast_mode import autocast, custom_fwd, custom_bwd  # noqa: F401
from .grad_scaler import GradScaler  # noqa: F401


def autocast_profiles():
    """The names of the available policy profiles."""
    return list(_C._autocast_profile_names())


def get_autocast_profile():
    return _C._autocast_get_profile()


def set_autocast_profile(name):
    """Switches every op's autocast policy to the lists of profile `name` (overrides survive)."""
    _C._autocast_set_profile(name)


def set_op_policy(device_type, op, policy):
    """Overrides the autocast policy of one op (base name, e.g. "aten::gelu") on a device type.

    policy: "lower_precision_fp", "fp32", "fp32_set_opt_dtype", "fp32_append_dtype", "promote",
    "banned" or "none".
    """
    _C._autocast_set_op_policy(device_type, op, policy)


def get_op_policy(device_type, op):
    return _C._autocast_get_op_policy(device_type, op)


def reset_op_policy(device_type, op=None):
    """Drops the override of one op, or of every op when `op` is None."""
    if op is None:
        _C._autocast_reset_op_policies()
    else:
        _C._autocast_reset_op_policy(device_type, op)
