"""What scripted and traced modules share (torch.jit.ScriptModule's common part).

Both are nn.Modules that share the original module's parameters, buffers and submodules, and run a
compiled forward on a runtime module object (``self._c``, ampjit._C._Module) from which the graph
reads weights at call time. This class keeps that object in step with the Python module and gives
the forward's graph and code; the scripted and traced classes supply only how their forward is
made (``_forward_function``) and what is particular to them.
"""
_base = None


class ScriptModule:
    """Marker base of compiled modules (torch.jit.ScriptModule)."""


def compiled_module_base():
    """The common base class, made on first use (ampjit.nn imports ampjit.jit)."""
    global _base
    if _base is None:
        from ..nn import Module

        class CompiledModule(Module, ScriptModule):
            def _forward_function(self):
                """The compiled forward (a ScriptFunction bound to this module)."""
                raise NotImplementedError

            @property
            def forward(self):
                """The compiled forward: a ScriptFunction bound to this module (graph, code, call)."""
                return self._forward_function()

            def __call__(self, *args, **kwargs):
                return self._forward_function()(*args, **kwargs)

            def save(self, f, _extra_files=None):
                """ScriptModule.save: torch.jit.save(self, f, _extra_files)."""
                from ._serialization import save
                save(self, f, _extra_files)

            def graph_for(self, *args, **kwargs):
                return self._forward_function().graph_for(*args, **kwargs)

            @property
            def graph(self):
                return self._forward_function().graph

            @property
            def inlined_graph(self):
                return self._forward_function().inlined_graph

            @property
            def code(self):
                return self._forward_function().code

            def _sync(self):
                """Re-points the runtime object's attributes at this module's current tensors
                (after ``to()``, ``float()``, ``load_state_dict`` or assignment), submodules too.
                A parameter or buffer that is None keeps the runtime object's value."""
                for name, t in list(self._parameters.items()) + list(self._buffers.items()):
                    if t is not None:
                        self._c._set_attr(name, t)
                for sub in self._modules.values():
                    if sub is not None:
                        sub._sync()

            def _plain_attributes(self):
                """{name: is_constant} of the plain (non-module, non-tensor) attributes the compiled
                code reads from the runtime object."""
                return {}

            def __setattr__(self, name, value):
                """Assignments reach the runtime object the compiled code reads: plain attributes,
                training, parameters and buffers. A constant is inlined, so it cannot change."""
                d = self.__dict__
                plain = self._plain_attributes() if "_c" in d else {}
                if name in plain:
                    if plain[name]:
                        raise RuntimeError("Cannot assign to the constant '{}' of a scripted module "
                                           "(it is inlined into the graph)".format(name))
                    object.__setattr__(self, name, value)
                    self._c._set_attr(name, value)
                    return
                Module.__setattr__(self, name, value)
                if name == "training":
                    self._c._set_attr("training", value)
                elif name in d.get("_parameters", {}) or name in d.get("_buffers", {}):
                    self._c._set_attr(name, value)

            def _apply(self, fn, _memo=None):
                Module._apply(self, fn, _memo)
                self._sync()
                return self

        _base = CompiledModule
    return _base


def frozen_module(mod, preserved):
    """The frozen version of the compiled module `mod` (torch.jit.freeze; Note [Freezing] in
    script/passes/freeze.h): a compiled module running the frozen forward on `mod`'s runtime object,
    whose attributes the frozen graph reads only where they were preserved or are assigned."""
    from ..nn import Module
    fwd = mod._forward_function()
    frozen_c = fwd._c._freeze(preserved)
    cls = type(fwd)

    class RecursiveScriptModule(compiled_module_base()):
        def __init__(self):
            Module.__init__(self)
            object.__setattr__(self, "_c", mod._c)
            object.__setattr__(self, "original_name", getattr(mod, "original_name", type(mod).__name__))
            object.__setattr__(self, "training", False)
            bound = cls.__new__(cls)
            bound.__dict__.update(fwd.__dict__)
            bound._c = frozen_c
            object.__setattr__(self, "_frozen_forward", bound)
            for name in preserved:
                if hasattr(mod, name):
                    object.__setattr__(self, name, getattr(mod, name))

        def _forward_function(self):
            return self.__dict__["_frozen_forward"]

        def _get_name(self):
            return "RecursiveScriptModule"

        def extra_repr(self):
            return "original_name={}".format(self.original_name)

        def _sync(self):
            pass  # nothing to keep in step: the frozen graph holds its own copies

        def __setattr__(self, name, value):
            Module.__setattr__(self, name, value)  # the runtime object is the original module's

    return RecursiveScriptModule()


def is_frozen(mod):
    return "_frozen_forward" in getattr(mod, "__dict__", {})
