"""The Optimizer base (torch/optim/optimizer.py of torch 1.13): parameter groups, per-parameter
state, zero_grad and state_dict."""
from collections import defaultdict
from copy import deepcopy
from itertools import chain


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


class Optimizer:
    def __init__(self, params, defaults):
        from .. import Tensor
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or "
                            "dicts, but got " + type(params).__name__)
        self.state = defaultdict(dict)
        self.param_groups = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\nParameter Group {0}".format(i)
            for key in sorted(group.keys()):
                if key != "params":
                    s += "\n    {0}: {1}".format(key, group[key])
        return s + "\n)"

    def add_param_group(self, param_group):
        from .. import Tensor
        if not isinstance(param_group, dict):
            raise TypeError("param group must be a dict")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the "
                            "ordering of tensors in sets will change between runs. Please use a list instead.")
        else:
            param_group["params"] = list(params)
        for param in param_group["params"]:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + type(param).__name__)
            if not param.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required optimization parameter "
                                 + name)
            param_group.setdefault(name, default)
        param_set = set()
        for group in self.param_groups:
            param_set.update(set(map(id, group["params"])))
        if not param_set.isdisjoint(set(map(id, param_group["params"]))):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=False):
        """Clears the gradients: sets them to None, or (torch 1.13's default) zeroes them in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def state_dict(self):
        """{'state': {index: state}, 'param_groups': [group with 'params' as indices]}, as torch."""
        mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                             if id(p) not in mappings})
            packed["params"] = [mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(mappings[id(k)] if id(k) in mappings else k): v for k, v in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict):
        from .. import Tensor
        state_dict = deepcopy(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        param_lens = (len(g["params"]) for g in groups)
        saved_lens = (len(g["params"]) for g in saved_groups)
        if any(p_len != s_len for p_len, s_len in zip(param_lens, saved_lens)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {old_id: p for old_id, p in zip(chain.from_iterable((g["params"] for g in saved_groups)),
                                                 chain.from_iterable((g["params"] for g in groups)))}

        def cast(param, value, key=None):
            if isinstance(value, Tensor):
                if key != "step":  # torch keeps `step` as it was saved
                    if param.is_floating_point():
                        value = value.to(dtype=param.dtype)
                    value = value.to(device=param.device)
                return value
            if isinstance(value, dict):
                return {k: cast(param, v, key=k) for k, v in value.items()}
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = cast(param, v)
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            return new_group

        self.__setstate__({"state": state,
                           "param_groups": [update_group(g, ng) for g, ng in zip(groups, saved_groups)]})

    def step(self, closure=None):
        raise NotImplementedError

    @staticmethod
    def _closure_loss(closure):
        """What step(closure) returns: the closure's loss, evaluated with grad enabled."""
        if closure is None:
            return None
        from .. import enable_grad
        with enable_grad():
            return closure()
