"""torch.ops: every op of the table by its qualified name, as torch's OpOverloadPacket and OpOverload
(`ampjit.ops.aten.slice.Tensor(x, 0, 1, 4)`, `ampjit.ops.aten.add(x, y)`), the spelling torch's
own tests and decomposition code use. A packet resolves the overload from the arguments, as a
torch function does; an overload runs that one schema (`default` is the overload without a name).
"""
from . import _C


class OpOverload:
    def __init__(self, packet, overload):
        self._packet = packet
        self._overloadname = overload
        self._qualified = packet._qualified + ("" if overload == "default" else "." + overload)
        self.__name__ = "{}.{}".format(packet.__name__, overload)

    def __call__(self, *args, **kwargs):
        return _C._call_overload(self._qualified, args, kwargs)

    @property
    def overloadpacket(self):
        return self._packet

    def __repr__(self):
        return "<OpOverload(op='{}.{}', overload='{}')>".format(self._packet._namespace,
                                                                 self._packet.__name__,
                                                                 self._overloadname)


class OpOverloadPacket:
    def __init__(self, namespace, name, schemas):
        self._namespace = namespace
        self._qualified = "{}::{}".format(namespace, name)
        self.__name__ = name
        self._schemas = schemas
        overloads = []
        for s in schemas:
            head = s.split("(", 1)[0]
            overloads.append(head.split(".", 1)[1] if "." in head.split("::", 1)[1] else "default")
        self._overloads = overloads

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, overload):
        if overload.startswith("__") or overload not in self.__dict__.get("_overloads", ()):
            raise AttributeError("The underlying op of '{}.{}' has no overload name '{}'".format(
                self._namespace, self.__name__, overload))
        op = OpOverload(self, overload)
        setattr(self, overload, op)
        return op

    def __call__(self, *args, **kwargs):
        return _C._call(self._qualified, args, kwargs)

    def __repr__(self):
        return "<OpOverloadPacket(op='{}.{}')>".format(self._namespace, self.__name__)


class _OpNamespace:
    def __init__(self, name):
        self._name = name

    def __getattr__(self, op_name):
        if op_name.startswith("__"):
            raise AttributeError(op_name)
        schemas = _C._op_schemas("{}::{}".format(self._name, op_name))
        if not schemas:
            raise AttributeError("'_OpNamespace' '{}' object has no attribute '{}'".format(
                self._name, op_name))
        packet = OpOverloadPacket(self._name, op_name, schemas)
        setattr(self, op_name, packet)
        return packet


class _Ops:
    """The `ops` object: its namespaces (aten, prim, ampjit) made on first use."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        ns = _OpNamespace(name)
        setattr(self, name, ns)
        return ns


ops = _Ops()
