"""The programs of the limitation matrix, each defined once, for the tests and the demo.

A program is a function of one argument, ``torch``, that writes the row's code as a user would
(``@torch.jit.script``, ``torch.jit.trace``, ``with torch.cpu.amp.autocast(...)``), runs it on fixed
inputs and returns what it computed (tensors, or tuples of tensors and plain values). Every
function it compiles is defined inside it, so each run compiles afresh (per-function state such as
"warn once per function" starts over) and `torch` is a closure variable that script resolves like
a global. The same program runs three ways (harness.py):

* ``program(ampjit)``: ampjit, in the autocast semantics set at the time (the `semantics` fixture);
* ``program(torch)``: the real PyTorch 1.13 (the PyTorch column), when it is installed;
* ``program(EagerTorch(ampjit))``: the same Python run eagerly (``torch.jit.script`` and
  ``torch.jit.trace`` return the function itself), which the `eager` semantics must equal.

The program for the row shown by ``test_<name>`` is ``<name>`` (``PROGRAMS[name]``); the demo
(tools/demo_matrix.py) finds it that way. This module imports neither ampjit nor torch.
"""
from typing import Optional

PROGRAMS = {}


def program(fn):
    """Registers a program under its name (the row test is ``test_<name>``)."""
    if fn.__name__ in PROGRAMS:
        raise ValueError("duplicate program name {!r}".format(fn.__name__))
    PROGRAMS[fn.__name__] = fn
    return fn


def mats(torch, n=2, rows=4, cols=4):
    """`n` float32 matrices with fixed values (the same under ampjit and PyTorch)."""
    base = torch.arange(rows * cols, dtype=torch.float32).reshape(rows, cols)
    return tuple((base * 0.37 + (k + 1.0)).sin() for k in range(n))


class Facts(dict):
    """Facts about the compiled code a program ran (node counts of a graph, ...), returned next to
    its outputs. They are checked per semantics (Expect(facts=...)), never compared with the eager
    run, where nothing is compiled (a fact is then None)."""


def graph_count(fn, args, kind):
    """How many `kind` nodes the graph a call of `fn` made now runs has (None when `fn` was not
    compiled: the eager run)."""
    graph_for = getattr(fn, "graph_for", None)
    if graph_for is None:
        return None
    return str(graph_for(*args)).count(kind + "(")


# ---- Usage -------------------------------------------------------------------------------------------

@program
def usage_seed_example(torch):
    """Seed 000's Usage example on CPU: `with autocast():` around mm in a scripted function."""
    @torch.jit.script
    def func(a, b):
        with torch.cpu.amp.autocast():
            return torch.mm(a, b)

    a, b = mats(torch)
    return func(a, b)


@program
def usage_autocast_spellings(torch):
    """The autocast spellings script accepts: torch.autocast("cpu", dtype=...), device_type=,
    torch.cpu.amp.autocast() and torch.cpu.amp.autocast(dtype=...)."""
    @torch.jit.script
    def fn(a, b):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            w = torch.mm(a, b)
        with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
            x = torch.mm(a, b)
        with torch.cpu.amp.autocast():
            y = torch.mm(a, b)
        with torch.cpu.amp.autocast(dtype=torch.bfloat16):
            z = torch.mm(a, b)
        return w, x, y, z

    a, b = mats(torch)
    return fn(a, b)


@program
def usage_autocast_without_dtype(torch):
    """`torch.autocast("cpu")` without a dtype in script (PyTorch 1.13: an internal assert)."""
    @torch.jit.script
    def fn(a, b):
        with torch.autocast("cpu"):
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def usage_nested_regions(torch):
    """Nested regions in script: off { mm; on { mm; off { mm } } }."""
    @torch.jit.script
    def fn(a, b, c, d):
        with torch.cpu.amp.autocast(enabled=False):
            e = torch.mm(a, b)
            with torch.cpu.amp.autocast(enabled=True):
                f = torch.mm(e, c)
                with torch.cpu.amp.autocast(enabled=False):
                    g = torch.mm(e, d)
        return e, f, g

    a, b, c, d = mats(torch, 4)
    return fn(a, b, c, d)


@program
def usage_module_forward(torch):
    """A scripted nn.Module whose forward autocasts a Linear layer."""
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(4, 3)

        def forward(self, x):
            with torch.cpu.amp.autocast():
                return self.fc(x)

    net = Net()
    with torch.no_grad():
        w, = mats(torch, 1, 3, 4)
        net.fc.weight.copy_(w)
        net.fc.bias.copy_(w[0, :3])
    scripted = torch.jit.script(net)
    x, = mats(torch, 1, 2, 4)
    return scripted(x)


@program
def usage_per_function_semantics(torch):
    """ampjit's `autocast_semantics=` of jit.script / jit.trace pins one function's semantics over
    the process-wide one: a scripted disable and a traced disable, both pinned to "eager", called
    from a scripted region under eager autocast."""
    def traced_part(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    x, y = mats(torch)
    traced = torch.jit.trace(traced_part, (x, y), autocast_semantics="eager")

    def scripted_part(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    pinned = torch.jit.script(scripted_part, autocast_semantics="eager")

    @torch.jit.script
    def caller(a, b):
        with torch.cpu.amp.autocast():
            return traced(a, b), torch.mm(a, b)

    with torch.cpu.amp.autocast():
        return pinned(x, y), caller(x, y)


# ---- Diagnostics -------------------------------------------------------------------------------------

@program
def diag_runtime_enabled_points_at_source(torch):
    """The seed's complaint: a rejected construct's error must point at the user's line."""
    @torch.jit.script
    def fn(a, b, use_amp: bool):
        x = torch.mm(a, b)
        with torch.cpu.amp.autocast(enabled=use_amp):
            return torch.mm(x, b)

    a, b = mats(torch)
    return fn(a, b, True)


@program
def diag_error_in_callee(torch):
    """A rejected construct in a scripted callee: the error names the callee's line and the call."""
    def helper(x, use_amp: bool):
        with torch.cpu.amp.autocast(enabled=use_amp):
            return torch.mm(x, x)

    @torch.jit.script
    def fn(a, use_amp: bool):
        return helper(a, use_amp) + 1.0

    a, = mats(torch, 1)
    return fn(a, True)


@program
def diag_banned_op_under_script_autocast(torch):
    """binary_cross_entropy in a scripted autocast region (the JIT pass bans it on every device)."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            p = torch.sigmoid(torch.mm(a, b))
            return torch.nn.functional.binary_cross_entropy(p, torch.sigmoid(b))

    a, b = mats(torch)
    return fn(a, b)


# ---- Autocast decorators -----------------------------------------------------------------------------

@program
def deco_helper_called_from_script(torch):
    """Seed: an @autocast(enabled=True) helper called from a scripted function."""
    @torch.cpu.amp.autocast(enabled=True)
    def helper(x):
        return torch.mm(x, x)

    @torch.jit.script
    def foo(x):
        return helper(x)  # not supported

    x, = mats(torch, 1)
    return foo(x)


@program
def deco_script_of_decorated_function(torch):
    """Seed: @torch.jit.script over @autocast()."""
    @torch.jit.script
    @torch.cpu.amp.autocast()  # not supported
    def foo(a, b, c, d):
        return torch.mm(a, b), torch.mm(c, d)

    a, b, c, d = mats(torch, 4)
    return foo(a, b, c, d)


@program
def deco_eager_decorator_around_script(torch):
    """@autocast() applied outside @torch.jit.script: an eager region around a scripted call."""
    @torch.cpu.amp.autocast()
    @torch.jit.script
    def fn(a, b):
        return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def deco_disabling_decorator_under_eager_autocast(torch):
    """An @autocast(enabled=False) helper, called from script under eager autocast."""
    @torch.cpu.amp.autocast(enabled=False)
    def exact(x, y):
        return torch.mm(x, y)

    @torch.jit.script
    def fn(a, b):
        return exact(a, b), torch.mm(a, b)

    a, b = mats(torch)
    with torch.cpu.amp.autocast():
        return fn(a, b)


# ---- Autocast argument must be a compile-time constant -----------------------------------------------

@program
def const_runtime_enabled(torch):
    """Seed: `with autocast(enabled=use_amp)` where use_amp is an argument."""
    @torch.jit.script
    def fn(a, b, use_amp: bool):
        # runtime values for autocast enable argument are not supported
        with torch.cpu.amp.autocast(enabled=use_amp):
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b, True), fn(a, b, False)


@program
def const_enabled_expression(torch):
    """`enabled=True if a[0][0] > 0.5 else False`: a value computed at run time."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=True if a[0][0] > 0.5 else False):
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b), fn(a - 1.0, b)


@program
def const_runtime_dtype(torch):
    """`dtype=` given as an argument rather than a constant."""
    @torch.jit.script
    def fn(a, b, dt: torch.dtype):
        with torch.autocast("cpu", dtype=dt):
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b, torch.bfloat16)


@program
def const_enabled_from_closure_constant(torch):
    """`enabled` read from a Python bool captured by the function: a compile-time constant."""
    use_amp = False

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=use_amp):
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def const_enabled_from_final_attribute(torch):
    """`enabled` read from a module attribute annotated Final: a compile-time constant."""
    from typing import Final

    class Net(torch.nn.Module):
        use_amp: Final[bool]

        def __init__(self, use_amp):
            super().__init__()
            self.use_amp = use_amp

        def forward(self, a, b):
            with torch.cpu.amp.autocast(enabled=self.use_amp):
                return torch.mm(a, b)

    a, b = mats(torch)
    return torch.jit.script(Net(True))(a, b), torch.jit.script(Net(False))(a, b)


@program
def const_enabled_literal(torch):
    """`enabled=False` and `enabled=True` written as literals."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            x = torch.mm(a, b)
        with torch.cpu.amp.autocast(enabled=True):
            y = torch.mm(a, b)
        return x, y

    a, b = mats(torch)
    return fn(a, b)


# ---- Uncommon autocast usage patterns may not be supported ------------------------------------------

@program
def uncommon_as_binding(torch):
    """Seed: `with autocast(enabled=True) as autocast_instance:` then `with autocast_instance:`."""
    @torch.jit.script
    def fn(a, b, c, d):
        with torch.cpu.amp.autocast(enabled=True) as autocast_instance:  # not supported
            e = torch.mm(a, b)
            with torch.cpu.amp.autocast(enabled=False):
                f = torch.mm(c, d)
                with autocast_instance:
                    g = torch.mm(c, d)
        return e, f, g

    a, b, c, d = mats(torch, 4)
    return fn(a, b, c, d)


@program
def uncommon_as_binding_unused(torch):
    """`with autocast() as ac:` where `ac` is never used."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast() as ac:  # noqa: F841 (bound, never used)
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def uncommon_conditional_instance(torch):
    """`with on if cond else off:` (the instance is chosen at run time)."""
    @torch.jit.script
    def fn(a, b, cond: bool):
        on = torch.cpu.amp.autocast(enabled=True)
        off = torch.cpu.amp.autocast(enabled=False)
        with on if cond else off:
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b, True), fn(a, b, False)


@program
def uncommon_reused_instance(torch):
    """One instance entered, then entered again inside a nested region, then once more."""
    @torch.jit.script
    def fn(a, b, c, d):
        on = torch.cpu.amp.autocast()
        with on:
            e = torch.mm(a, b)
            with torch.cpu.amp.autocast(enabled=False):
                f = torch.mm(c, d)
                with on:
                    g = torch.mm(e, f)
        with on:
            h = torch.mm(c, d)
        return e, f, g, h

    a, b, c, d = mats(torch, 4)
    return fn(a, b, c, d)


@program
def uncommon_instances_entered_in_branches(torch):
    """Instances created up front and entered in different branches of an if."""
    @torch.jit.script
    def fn(a, b, cond: bool):
        on = torch.cpu.amp.autocast(enabled=True)
        off = torch.cpu.amp.autocast(enabled=False)
        if cond:
            with on:
                return torch.mm(a, b)
        else:
            with off:
                return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b, True), fn(a, b, False)


@program
def uncommon_implicitly_nested(torch):
    """`with autocast(enabled=False), autocast(enabled=True):` (one with, two regions)."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=False), torch.cpu.amp.autocast(enabled=True):
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b)


# ---- Limited support for promote autocast policy -----------------------------------------------------

@program
def promote_mul_by_scalar(torch):
    """`mm(a, b) * 2.0` in a scripted region: mul is on the JIT pass's promote list."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            return torch.mm(a, b) * 2.0

    a, b = mats(torch)
    return fn(a, b)


@program
def promote_add_of_two_reduced(torch):
    """`x + y` of two bfloat16 mm results in a scripted region."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            x = torch.mm(a, b)
            y = torch.mm(b, a)
            return x + y, x - y

    a, b = mats(torch)
    return fn(a, b)


@program
def promote_tensor_list_not_cast(torch):
    """cat of two bfloat16 results: Tensor[] arguments are not cast by the JIT pass."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            x = torch.mm(a, b)
            return torch.cat([x, x]), torch.cat([x, a])

    a, b = mats(torch)
    return fn(a, b)


@program
def promote_addcmul(torch):
    """addcmul of a bfloat16 mm result with float32 tensors (torch's test_promote_policy)."""
    @torch.jit.script
    def fn(a, b, c, d):
        with torch.cpu.amp.autocast():
            e = torch.mm(a, b)
            f = torch.addcmul(e, c, d, value=0.1)
        return e, f

    a, b, c, d = mats(torch, 4)
    return fn(a, b, c, d)


@program
def promote_fp64(torch):
    """addcmul on float64 inputs in a region (torch's test_promote_policy_fp64)."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            return torch.addcmul(a, a, b, value=0.1)

    a, b = mats(torch)
    return fn(a.double(), b.double())


# ---- Missing autocast policies -----------------------------------------------------------------------

@program
def missing_fp32_append_dtype(torch):
    """norm under the fp32_append_dtype policy (set for CPU with ampjit's per-op override, since
    PyTorch 1.13 gives norm no CPU rule): eager appends dtype=float32, the JIT pass has no such
    policy."""
    torch.amp.set_op_policy("cpu", "aten::norm", "fp32_append_dtype")
    try:
        @torch.jit.script
        def fn(a, b):
            with torch.cpu.amp.autocast():
                x = torch.mm(a, b)
                return x, torch.norm(x)

        a, b = mats(torch)
        return fn(a, b)
    finally:
        torch.amp.reset_op_policy("cpu", "aten::norm")


@program
def missing_jit_lists_are_not_the_cpu_lists(torch):
    """The JIT pass's op lists are PyTorch 1.x's CUDA lists applied to every device: sum, log and
    mv in a scripted CPU region."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            x = torch.mm(a, b)
            return torch.sum(x), torch.log(x), torch.mv(a, b[0])

    a, b = mats(torch)
    return fn(a, b)


@program
def missing_set_opt_dtype_with_none_argument(torch):
    """sum(x) vs sum(x, dtype=dtype) with an Optional dtype argument holding None: the JIT pass
    sees an explicit dtype in the second (torch's test_fp32_set_opt_dtype_policy)."""
    @torch.jit.script
    def fn(a, b, dtype: Optional[int]):
        with torch.cpu.amp.autocast():
            x = torch.mm(a, b)
            return torch.sum(x), torch.sum(x, dtype=dtype)

    a, b = mats(torch)
    return fn(a, b, None)


# ---- Mixing eager mode and scripting autocast --------------------------------------------------------

@program
def mix_specialized_on_eager_state(torch):
    """A scripted function without autocast, called alternately inside and outside eager autocast."""
    @torch.jit.script
    def fn(a, b):
        return torch.mm(a, b)

    a, b = mats(torch)
    out = []
    for i in range(4):
        with torch.cpu.amp.autocast(enabled=i % 2 == 0):
            out.append(fn(a, b))
    return tuple(out)


@program
def mix_is_autocast_enabled_in_script(torch):
    """`torch.is_autocast_cpu_enabled()` read in script, under eager autocast and without."""
    @torch.jit.script
    def fn(a):
        if torch.is_autocast_cpu_enabled():
            return torch.relu(a)
        return torch.sin(a)

    a, = mats(torch, 1)
    with torch.cpu.amp.autocast():
        on = fn(a)
    return on, fn(a)


@program
def mix_is_autocast_enabled_inside_scripted_region(torch):
    """`torch.is_autocast_cpu_enabled()` inside a scripted `with autocast()` (PyTorch 1.13 crashes)."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            return torch.mm(a, b), torch.is_autocast_cpu_enabled()

    a, b = mats(torch)
    return fn(a, b)


@program
def mix_eager_region_inside_scripted_disable(torch):
    """A scripted region enabled while eager autocast is off, and a script without regions inside
    an eager region: both autocast."""
    @torch.jit.script
    def inner(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return torch.mm(a, b)

    @torch.jit.script
    def plain(a, b):
        return torch.mm(a, b)

    a, b = mats(torch)
    with torch.cpu.amp.autocast(enabled=False):
        x = inner(a, b)
    with torch.cpu.amp.autocast():
        y = plain(a, b)
    return x, y


# ---- Mixing tracing and scripting autocast (script calling traced) -----------------------------------

@program
def traced_autocast_disable_region(torch):
    """A trace of a helper whose mm runs under `autocast(enabled=False)`, called under autocast."""
    def helper(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    a, b = mats(torch)
    traced = torch.jit.trace(helper, (a, b))
    with torch.cpu.amp.autocast():
        out = traced(a, b)
    graph = getattr(traced, "graph", None)
    return out, Facts(regions=None if graph is None else str(graph).count("prim::AutocastRegion"))


@program
def trace_taken_under_autocast(torch):
    """A trace of relu(mm(a, b)) taken under autocast, called later without autocast."""
    def f(a, b):
        return torch.relu(torch.mm(a, b))

    a, b = mats(torch)
    with torch.cpu.amp.autocast(cache_enabled=False):
        traced = torch.jit.trace(f, (a, b))
    out = traced(a, b)
    graph = getattr(traced, "graph", None)
    return out, Facts(casts=None if graph is None else str(graph).count("aten::to("))


@program
def sct_seed_example(torch):
    """Seed: a traced helper with `autocast(enabled=False)` (mm * 2.0) called from a scripted
    autocast region."""
    def helper(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b) * 2.0

    x, y = mats(torch)
    traced = torch.jit.trace(helper, (x, y))

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return traced(a, b)

    return fn(x, y)


@program
def sct_traced_disable_is_lost(torch):
    """A traced helper whose mm runs under `autocast(enabled=False)`, called from a scripted
    autocast region."""
    def helper(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    x, y = mats(torch)
    traced = torch.jit.trace(helper, (x, y))

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return traced(a, b)

    return fn(x, y)


@program
def sct_traced_without_regions(torch):
    """A traced plain mm called from a scripted autocast region (torch's test_script_and_tracing)."""
    def helper(a, b):
        return torch.mm(a, b)

    x, y = mats(torch)
    traced = torch.jit.trace(helper, (x, y))

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return traced(a, b)

    return fn(x, y)


@program
def sct_caller_without_autocast(torch):
    """The traced `autocast(enabled=False)` helper called from a script that does not autocast."""
    def helper(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    x, y = mats(torch)
    traced = torch.jit.trace(helper, (x, y))

    @torch.jit.script
    def fn(a, b):
        return traced(a, b) + 1.0

    return fn(x, y)


# ---- Mixing tracing and scripting autocast (traced calling script) -----------------------------------

@program
def tcs_seed_example(torch):
    """Seed: tracing a function that calls a scripted mm inside an eager `with autocast()`."""
    @torch.jit.script
    def fn(a, b):
        return torch.mm(a, b)

    def traced(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return fn(a, b)

    x, y = mats(torch)
    t = torch.jit.trace(traced, (x, y), check_trace=False)
    return t(x, y)


@program
def tcs_script_with_its_own_region(torch):
    """Tracing a function that calls a scripted function with its own `with autocast()`
    (torch's test_tracing_and_script)."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            return torch.mm(a, b)

    def traced(a, b):
        return fn(a, b)

    x, y = mats(torch)
    t = torch.jit.trace(traced, (x, y))
    return t(x, y)


@program
def tcs_no_eager_region(torch):
    """Tracing a function that calls a scripted mm with no autocast around the call."""
    @torch.jit.script
    def fn(a, b):
        return torch.mm(a, b)

    def traced(a, b):
        return fn(a, b) * 2.0

    x, y = mats(torch)
    t = torch.jit.trace(traced, (x, y))
    return t(x, y)


# ---- Disabling eager autocast with scripted autocast -------------------------------------------------

@program
def dis_seed_example(torch):
    """Seed: a scripted `autocast(enabled=False)` region called (twice) under eager autocast."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    x, y = mats(torch)
    with torch.cpu.amp.autocast(enabled=True):
        return fn(x, y), fn(x, y)


@program
def dis_without_eager_autocast(torch):
    """The same scripted `autocast(enabled=False)` region called with eager autocast off."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    x, y = mats(torch)
    return fn(x, y)


@program
def dis_in_scripted_callee(torch):
    """The disabling region is in a scripted callee; the caller is called under eager autocast."""
    def exact(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    @torch.jit.script
    def fn(a, b):
        return exact(a, b), torch.mm(a, b)

    x, y = mats(torch)
    with torch.cpu.amp.autocast():
        return fn(x, y)


# ---- PyTorch's test/test_jit_autocast.py, on CPU  -------------------------------------
# Translated from CUDA/float16 to CPU/bfloat16 (torch.cpu.amp.autocast), as the reference's CPU
# analogues; the cases a section above already shows are not repeated (test_torch_jit_autocast.py
# maps each of torch's cases to its row).

@program
def torch_minimal(torch):
    """test_minimal: `x = mm(a, b); y = sum(x)` in a region."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            x = torch.mm(a, b)
            y = torch.sum(x)
            return x, y

    a, b = mats(torch)
    return fn(a, b)


@program
def torch_minimal_other_device(torch):
    """test_minimal_cpu, mirrored: a CUDA autocast region does not cast CPU tensors."""
    @torch.jit.script
    def fn(a, b):
        with torch.cuda.amp.autocast():
            return torch.mm(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def torch_explicit_casts(torch):
    """test_explicit_casts: explicit .double()/.float() inside and after a region."""
    @torch.jit.script
    def fn(a, b, c, d):
        with torch.cpu.amp.autocast():
            e = torch.mm(a.double(), b.double()).float()
            f = torch.mm(c, d).double()
        g = torch.mm(c.double(), f)
        return e, f, g

    a, b, c, d = mats(torch, 4)
    return fn(a, b, c, d)


@program
def torch_duplicate_inputs(torch):
    """test_duplicate_inputs: mm(a, a) then mm(e, e)."""
    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            e = torch.mm(a, a)
            f = torch.mm(e, e)
        return e, f

    a, b = mats(torch)
    return fn(a, b)


@program
def torch_fp32_policy(torch):
    """test_fp32_policy: log of a bfloat16 tensor in a region."""
    @torch.jit.script
    def fn(a):
        with torch.cpu.amp.autocast():
            return torch.log(a)

    a, = mats(torch, 1)
    return fn(a.abs().bfloat16())


@program
def torch_fp32_policy_with_fp64(torch):
    """test_fp32_policy_with_fp64: log of a float64 tensor in a region."""
    @torch.jit.script
    def fn(a):
        with torch.cpu.amp.autocast():
            return torch.log(a)

    a, = mats(torch, 1)
    return fn(a.abs().double())


@program
def torch_fp32_set_opt_dtype_policy(torch):
    """test_fp32_set_opt_dtype_policy on CPU: softmax with no dtype, None, float64 and an
    Optional[int] argument holding None."""
    @torch.jit.script
    def fn(a, b, c, d, dtype: Optional[int]):
        with torch.cpu.amp.autocast():
            x = torch.softmax(a, 0)
            y = torch.softmax(b, 0, None)
            z = torch.softmax(c, 0, torch.float64)
            w = torch.softmax(d, 0, dtype)
        return x, y, z, w

    a, b, c, d = (t.bfloat16() for t in mats(torch, 4))
    return fn(a, b, c, d, None)


@program
def torch_fp32_set_opt_dtype_policy_fp64(torch):
    """test_fp32_set_opt_dtype_policy_fp64 on CPU: the same softmax calls on float64 inputs."""
    @torch.jit.script
    def fn(a, b, c, d):
        with torch.cpu.amp.autocast():
            x = torch.softmax(a, 0)
            y = torch.softmax(b, 0, None)
            z = torch.softmax(c, 0, torch.float64)
            w = torch.log_softmax(d, 0)
        return x, y, z, w

    a, b, c, d = (t.double() for t in mats(torch, 4))
    return fn(a, b, c, d)


@program
def torch_divergent_types(torch):
    """test_divergent_types: the branches of an if give values of different dtypes."""
    @torch.jit.script
    def fn(a, b, c, d, cond: bool):
        with torch.cpu.amp.autocast():
            if cond:
                e = torch.mm(a, b)
                f = torch.mm(a, b).float()
            else:
                e = torch.mm(c, d).float()
                f = torch.mm(a, b)
        return torch.mm(e.float(), f.float())

    a, b, c, d = mats(torch, 4)
    return fn(a, b, c, d, True), fn(a, b, c, d, False)


@program
def torch_callees(torch):
    """test_callees: a plain Python helper (mm) called five times in a region."""
    def helper(a, b):
        return torch.mm(a, b)

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast():
            tmp = helper(a, b)
            tmp = helper(tmp, tmp)
            tmp = helper(tmp, tmp)
            tmp = helper(tmp, tmp)
            return helper(tmp, b)

    a, b = mats(torch)
    return fn(a * 0.5, b * 0.5)


@program
def torch_callees_with_autocast_on(torch):
    """test_callees_with_autocast_on: the helper enables autocast, the caller disables it."""
    def helper(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return torch.mm(a, b)

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return helper(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def torch_callees_with_autocast_off(torch):
    """test_callees_with_autocast_off: the helper disables autocast, the caller enables it."""
    def helper(a, b):
        with torch.cpu.amp.autocast(enabled=False):
            return torch.mm(a, b)

    @torch.jit.script
    def fn(a, b):
        with torch.cpu.amp.autocast(enabled=True):
            return helper(a, b)

    a, b = mats(torch)
    return fn(a, b)


@program
def torch_script_module(torch):
    """test_script_module: a scripted module's forward does weight.mv(input) then a Linear in a
    region."""
    class TestModule(torch.nn.Module):
        def __init__(self, n, m):
            super().__init__()
            w, = mats(torch, 1, n, m)
            self.weight = torch.nn.Parameter(w)
            self.linear = torch.nn.Linear(n, m)

        def forward(self, input):
            with torch.cpu.amp.autocast(enabled=True):
                output = self.weight.mv(input)
                output = self.linear(output)
                return output

    with torch.no_grad():
        module = TestModule(4, 4)
        w, b = mats(torch, 2)
        module.linear.weight.copy_(w)
        module.linear.bias.copy_(b[0])
    scripted = torch.jit.script(module)
    x, = mats(torch, 1, 1, 4)
    with torch.no_grad():
        return scripted(x[0])


@program
def torch_inplace(torch):
    """test_inplace: addmm, addmm with out= and addmm_ in a region (out= and in-place are never
    autocast)."""
    @torch.jit.script
    def fn(a, b, c):
        with torch.cpu.amp.autocast():
            e = torch.addmm(a, b, c)
            f = torch.addmm(a, b, c, out=a)
            g = a.addmm_(b, c)
            return e, f, g

    a, b, c = mats(torch, 3)
    return fn(a, b, c)


@program
def torch_jit_executor_under_autocast(torch):
    """test_jit_executor_under_autocast on CPU: a plain scripted mm run under eager autocast and
    without; the graph run under autocast has the cast op, the other not."""
    @torch.jit.script
    def fn(a, b):
        return torch.mm(a, b)

    a, b = mats(torch)
    with torch.cpu.amp.autocast():
        on = fn(a, b)
        casts_on = graph_count(fn, (a, b), "aten::_autocast_to_reduced_precision")
    off = fn(a, b)
    casts_off = graph_count(fn, (a, b), "aten::_autocast_to_reduced_precision")
    return on, off, Facts(casts_on=casts_on, casts_off=casts_off)


@program
def torch_autocast_softmax_cpu(torch):
    """test_jit_autocast_softmax_cpu: F.softmax of a bfloat16 tensor in a CPU region."""
    @torch.jit.script
    def fn(x):
        with torch.cpu.amp.autocast():
            return torch.nn.functional.softmax(x, dim=0)

    x, = mats(torch, 1)
    return fn(x.bfloat16())


@program
def torch_ignore_amp(torch):
    """test_ignore_amp: fn._set_ignore_amp(True), then run under eager autocast: the graph has no
    cast (the eager dispatcher still autocasts the mm)."""
    @torch.jit.script
    def foo(x):
        return torch.mm(x, x)

    if hasattr(foo, "_set_ignore_amp"):
        foo._set_ignore_amp(True)
    x, = mats(torch, 1)
    with torch.cpu.amp.autocast():
        foo(x)
        out = foo(x)
        casts = graph_count(foo, (x,), "aten::_autocast_to_reduced_precision")
    return out, Facts(casts=casts)


@program
def torch_cat_promote(torch):
    """TestJitTraceAutocast.test_cat_promote: trace cat([float32, bfloat16]) under CPU autocast
    (the JIT pass off, as that test class does)."""
    def fn(a, b):
        return torch.cat([a, b], 0)

    old = torch._C._jit_set_autocast_mode(False)
    try:
        a, b = mats(torch)
        b = b.bfloat16()
        with torch.cpu.amp.autocast(cache_enabled=False):
            traced = torch.jit.trace(fn, (a, b))
            out = traced(a, b)
        graph = getattr(traced, "graph", None)
        to_nodes = None if graph is None else str(graph).count("aten::to(")
        return out, Facts(to_nodes=to_nodes)
    finally:
        torch._C._jit_set_autocast_mode(old)


@program
def torch_script_autocast_enable_and_check(torch):
    """test_script_autocast_enable_and_check: (mm, is_autocast_cpu_enabled()) outside, in an
    enabled region and in a nested disabled one, called without and under eager autocast."""
    @torch.jit.script
    def fn(x, y):
        b1 = torch.is_autocast_cpu_enabled()
        v1 = torch.mm(x, y)
        with torch.cpu.amp.autocast(enabled=True):
            b2 = torch.is_autocast_cpu_enabled()
            v2 = torch.mm(x, y)
            with torch.cpu.amp.autocast(enabled=False):
                b3 = torch.is_autocast_cpu_enabled()
                v3 = torch.mm(x, y)
        return v1, b1, v2, b2, v3, b3

    x, y = mats(torch)
    off = fn(x, y)
    with torch.cpu.amp.autocast():
        on = fn(x, y)
    return off, on
