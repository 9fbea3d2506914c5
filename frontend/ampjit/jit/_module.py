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

            def _apply(self, fn, _memo=None):
                Module._apply(self, fn, _memo)
                self._sync()
                return self

        _base = CompiledModule
    return _base
