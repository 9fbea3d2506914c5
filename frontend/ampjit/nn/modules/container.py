"""Containers: Sequential, ModuleList, ModuleDict."""
import collections
import collections.abc
import operator
from itertools import islice

from .module import Module


class Sequential(Module):
    """Runs its modules in order: ``Sequential(m1, m2)`` or ``Sequential(OrderedDict(...))``."""

    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], collections.OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)

    def _get_item_by_idx(self, iterator, idx):
        size = len(self)
        idx = operator.index(idx)
        if not -size <= idx < size:
            raise IndexError("index {} is out of range".format(idx))
        idx %= size
        return next(islice(iterator, idx, None))

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(collections.OrderedDict(list(self._modules.items())[idx]))
        return self._get_item_by_idx(self._modules.values(), idx)

    def __setitem__(self, idx, module):
        key = self._get_item_by_idx(self._modules.keys(), idx)
        setattr(self, key, module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for key in list(self._modules.keys())[idx]:
                delattr(self, key)
        else:
            delattr(self, self._get_item_by_idx(self._modules.keys(), idx))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def forward(self, input):
        for module in self:
            input = module(input)
        return input


class ModuleList(Module):
    """Holds submodules in a list, registered under '0', '1', ..."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self += modules

    def _get_abs_string_index(self, idx):
        idx = operator.index(idx)
        if not (-len(self) <= idx < len(self)):
            raise IndexError("index {} is out of range".format(idx))
        if idx < 0:
            idx += len(self)
        return str(idx)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            return self.__class__(list(self._modules.values())[idx])
        return self._modules[self._get_abs_string_index(idx)]

    def __setitem__(self, idx, module):
        setattr(self, self._get_abs_string_index(idx), module)

    def __delitem__(self, idx):
        if isinstance(idx, slice):
            for k in range(len(self._modules))[idx]:
                delattr(self, str(k))
        else:
            delattr(self, self._get_abs_string_index(idx))
        # Renumber so the keys stay 0..n-1.
        str_indices = [str(i) for i in range(len(self._modules))]
        self._modules = collections.OrderedDict(zip(str_indices, self._modules.values()))

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        combined = ModuleList()
        for i, module in enumerate(list(self) + list(other)):
            combined.add_module(str(i), module)
        return combined

    def insert(self, index, module):
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules):
        if not isinstance(modules, collections.abc.Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got " + type(modules).__name__)
        offset = len(self)
        for i, module in enumerate(modules):
            self.add_module(str(offset + i), module)
        return self


class ModuleDict(Module):
    """Holds submodules in an ordered dict."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def __delitem__(self, key):
        del self._modules[key]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def __contains__(self, key):
        return key in self._modules

    def clear(self):
        self._modules.clear()

    def pop(self, key):
        v = self[key]
        del self[key]
        return v

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()

    def update(self, modules):
        if isinstance(modules, collections.abc.Mapping):
            for key, module in modules.items():
                self[key] = module
        else:
            for j, m in enumerate(modules):
                if len(m) != 2:
                    raise ValueError("ModuleDict update sequence element #{} has length {}; 2 is required".format(
                        j, len(m)))
                self[m[0]] = m[1]
